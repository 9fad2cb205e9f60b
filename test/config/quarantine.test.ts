import { describe, expect, it } from "vitest";
import type { WireIndexRow } from "../../src/bundle/wire.js";
import { parseQuarantine, pullRequestQuarantine } from "../../src/config/quarantine.js";
import { ConfigError } from "../../src/errors.js";
import { applyQuarantine } from "../../src/pipeline/quarantine.js";

const TODAY = new Date("2026-11-25T12:00:00Z");

function row(testId: string, target: string, verdict: "pass" | "fail", passed: number, counted: number) {
  return {
    eval_path: "evals/demo.eval.yaml",
    test_id: testId,
    target,
    suite: "demo",
    verdict,
    attempts: { counted, passed },
  } as unknown as WireIndexRow;
}

function problems(text: string): string {
  try {
    parseQuarantine(text, ".evalgate/quarantine.yaml", TODAY);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("no error");
}

describe("the quarantine file", () => {
  const file = `
- case: demo/fare*
  target: claude*
  reason: flaky since the model update
  owner: "@alice"
  expires: 2026-12-01
- case: demo/greet
  reason: fixed upstream soon
  owner: "@bob"
  expires: 2026-11-24
`;

  it("matches suite/test globs and targets; an entry past its expiry no longer applies", () => {
    const q = parseQuarantine(file, "q.yaml", TODAY);
    expect(q.entries.map((e) => [e.line, e.expired])).toEqual([
      [2, false],
      [7, true],
    ]);
    const rows = [
      row("farewell", "claude-sonnet", "fail", 0, 3),
      row("farewell", "codex", "fail", 0, 3),
      row("greet", "claude-sonnet", "fail", 1, 3),
    ];
    const o = applyQuarantine(q, rows);
    expect(o.quarantined.map((c) => `${c.row.test_id}/${c.row.target}`)).toEqual(["farewell/claude-sonnet"]);
    expect(o.expired.map((c) => [c.row.test_id, c.entry.owner])).toEqual([["greet", "@bob"]]);
  });

  it("an entry expiring today still applies; one 90 days ahead is allowed, 91 is not", () => {
    const entry = (d: string) => `- { case: demo/x, reason: r, owner: o, expires: ${d} }\n`;
    expect(parseQuarantine(entry("2026-11-25"), "q", TODAY).entries[0]!.expired).toBe(false);
    expect(parseQuarantine(entry("2027-02-23"), "q", TODAY).entries).toHaveLength(1);
    expect(problems(entry("2027-02-24"))).toContain(
      ".evalgate/quarantine.yaml:1: [0].expires: 2027-02-24 is more than 90 days ahead: a quarantine is temporary\n    hint: set expires: 2027-02-23 or earlier",
    );
  });

  it("names file, line and key for every mistake at once", () => {
    const msg = problems(`- case: demo/x
  reason: r
  expires: 2026-13-01
- case: nosuite
  reason: r
  owner: o
  expires: 2026-12-01
  extra: 1
`);
    expect(msg).toMatch(/quarantine\.yaml:1: \[0\]\.owner: /);
    expect(msg).toMatch(/quarantine\.yaml:3: \[0\]\.expires: not a real date/);
    expect(msg).toMatch(/quarantine\.yaml:8: \[1\]\.extra: /);
    expect(problems("case: demo/x\n")).toContain("the quarantine file is a list of entries");
  });

  it("flags a quarantined case that passed every attempt here and in the baseline as stable", () => {
    const q = parseQuarantine("- { case: demo/*, reason: r, owner: o, expires: 2026-12-01 }\n", "q", TODAY);
    const now = [row("a", "t", "pass", 3, 3), row("b", "t", "pass", 3, 3), row("c", "t", "pass", 2, 3)];
    const base = [row("a", "t", "pass", 3, 3), row("b", "t", "fail", 1, 3), row("c", "t", "pass", 3, 3)];
    expect(applyQuarantine(q, now, base).quarantined.map((c) => [c.row.test_id, c.stable])).toEqual([
      ["a", true],
      ["b", false],
      ["c", false],
    ]);
  });

  it("read leniently (a file already on the base branch), bad entries are ignored one by one and the good ones apply", () => {
    // before: one bad entry made the whole file an error, so every run of main and of every PR exited 2
    const text = `- { case: demo/a, reason: r, owner: o, expires: 2026-12-01 }
- { case: demo/b, reason: r, owner: o, expires: 2027-06-01 }
- { case: nosuite, reason: r, owner: o, expires: 2026-12-01 }
`;
    const q = parseQuarantine(text, "q.yaml", TODAY, "lenient");
    expect(q.entries.map((e) => e.case)).toEqual(["demo/a"]);
    expect(q.ignored.map((p) => [p.line, p.key])).toEqual([
      [2, "[1].expires"],
      [3, "[2].case"],
    ]);
    expect(parseQuarantine("- [unclosed\n", "q.yaml", TODAY, "lenient")).toMatchObject({
      entries: [],
      ignored: [expect.objectContaining({ message: expect.stringContaining("malformed YAML") })],
    });
  });
});

describe("the quarantine of a pull request", () => {
  const good = "- { case: demo/a, reason: r, owner: o, expires: 2026-12-01 }\n";
  const far = "- { case: demo/b, reason: r, owner: o, expires: 2027-06-01 }\n";
  const base = (text: string) => ({ text, display: "q.yaml at the base commit abc1234" });
  const head = (text: string) => ({ text, display: "q.yaml" });

  it("an entry the PR adds that is not valid is the PR's problem, with its file and line", () => {
    // before: the PR passed, its comment only noted the change; once merged, main locked everyone out
    const r = pullRequestQuarantine(base(good), head(good + far), TODAY, "base");
    expect(r.introduced.map((p) => [p.file, p.line, p.key])).toEqual([["q.yaml", 2, "[1].expires"]]);
    expect(r.changes).toEqual([]);
  });

  it("a bad entry the base already has is not the PR's fault: ignored, and the PR that fixes it passes", () => {
    const broken = good + far;
    const same = pullRequestQuarantine(base(broken), head(broken), TODAY, "base");
    expect(same.introduced).toEqual([]);
    expect(same.quarantine!.entries.map((e) => e.case)).toEqual(["demo/a"]);
    expect(same.quarantine!.ignored).toHaveLength(1);
    const untouched = pullRequestQuarantine(
      base(broken),
      head(`${broken}- { case: demo/c, reason: r, owner: o, expires: 2026-12-02 }\n`),
      TODAY,
      "base",
    );
    expect(untouched.introduced).toEqual([]);
    expect(untouched.changes).toEqual(["adds demo/c"]);
    const fixed = pullRequestQuarantine(base(broken), head(good), TODAY, "base");
    expect(fixed.introduced).toEqual([]);
    // The base's file applies until the fix is merged.
    expect(fixed.quarantine!.file).toBe("q.yaml at the base commit abc1234");
  });

  it("a file the PR breaks as a whole fails it; with the PR's rules trusted, the head's file applies", () => {
    expect(pullRequestQuarantine(base(good), head("- [\n"), TODAY, "base").introduced).toHaveLength(1);
    const trusted = pullRequestQuarantine(
      base(good),
      head("- { case: demo/z, reason: r, owner: o, expires: 2026-12-01 }\n"),
      TODAY,
      "head",
    );
    expect(trusted.quarantine!.entries.map((e) => e.case)).toEqual(["demo/z"]);
  });
});
