/**
 * Issue 28, "the CLI and the action disagree on the same files": before, `evalgate run` ignored
 * `.evalgate/quarantine.yaml` (a quarantined case failed locally and passed in CI) and `validate`
 * did not check the file.
 */
import { describe, expect, it } from "vitest";
import { BROKEN_AGENT, EVAL } from "../github/fixture.js";
import { gitRepo, runCli } from "../helpers.js";

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const quarantine = (expires: string) =>
  `- case: demo/farewell\n  reason: bye.txt is flaky on CI\n  owner: "@alice"\n  expires: ${expires}\n`;

describe("the quarantine file on the command line", () => {
  it("evalgate run applies it as the action does; --no-quarantine gates every case", () => {
    const repo = gitRepo({
      "evals/demo.eval.yaml": EVAL,
      "evals/agent.sh": BROKEN_AGENT,
      ".evalgate/quarantine.yaml": quarantine(day(30)),
    });
    const r = runCli(["run", "evals", "--out", "out"], repo);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("Quarantined (1, .evalgate/quarantine.yaml)");
    expect(r.stdout).toMatch(/demo\/farewell on agent: fail · owner @alice/);
    const all = runCli(["run", "evals", "--out", "out2", "--no-quarantine"], repo);
    expect(all.code).toBe(1);
  }, 180_000);

  it("validate checks it: an entry 200 days ahead is exit 2 naming file, line and key", () => {
    const repo = gitRepo({
      "evals/demo.eval.yaml": EVAL,
      "evals/agent.sh": BROKEN_AGENT,
      ".evalgate/quarantine.yaml": quarantine(day(200)),
    });
    const r = runCli(["validate", "evals"], repo);
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toMatch(
      /\.evalgate\/quarantine\.yaml:4: \[0\]\.expires: \S+ is more than 90 days ahead/,
    );
    expect(runCli(["validate", "evals", "--no-quarantine"], repo).code).toBe(0);
  }, 180_000);
});
