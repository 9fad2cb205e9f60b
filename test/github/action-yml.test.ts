/**
 * action.yml and the documented workflows, checked offline with @action-validator/cli (the
 * SchemaStore schemas for actions and workflows).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ROOT, tempDir } from "../helpers.js";

const VALIDATOR = path.join(ROOT, "node_modules", "@action-validator", "cli", "cli.mjs");

function validate(file: string): { code: number; errors: string } {
  const r = spawnSync(process.execPath, [VALIDATOR, file], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status ?? -1, errors: `${r.stdout}${r.stderr}` };
}

describe("action.yml", () => {
  const text = readFileSync(path.join(ROOT, "action.yml"), "utf8");
  const yml = parse(text) as {
    runs: { using: string; main: string };
    inputs: Record<string, { description?: string; default?: string }>;
    outputs: Record<string, { description?: string }>;
  };

  it("runs dist/index.js on node24", () => {
    expect(yml.runs).toEqual({ using: "node24", main: "dist/index.js" });
  });

  it("passes the validator (whose schema predates node24, so it sees node20 in a copy)", () => {
    // The validator's schema knows node12/16/20; node24 is the only difference allowed.
    const dir = path.join(tempDir("evalgate-action-yml-"), "copy");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "action.yml"), text.replace("using: node24", "using: node20"));
    const ok = validate(path.join(dir, "action.yml"));
    expect(ok.errors).toBe("");
    expect(ok.code).toBe(0);
    // …and the validator does fail on a broken action.
    writeFileSync(path.join(dir, "action.yml"), text.replace("main: dist/index.js", "mian: dist/index.js"));
    expect(validate(path.join(dir, "action.yml")).code).toBe(1);
  });

  it("describes every input and output", () => {
    for (const [name, spec] of Object.entries({ ...yml.inputs, ...yml.outputs })) {
      expect(spec.description, name).toMatch(/\w{3,}/);
    }
  });
});

describe("the example workflows in docs/workflows", () => {
  const dir = path.join(ROOT, "docs", "workflows");
  const files = readdirSync(dir).filter((f) => f.endsWith(".yml"));

  it("has the basic gate, the sharded gate, the fork recipe, the comment commands and the labelled gate", () => {
    expect(files.sort()).toEqual([
      "evals-commands.yml",
      "evals-fork-comment.yml",
      "evals-labelled.yml",
      "evals-sharded.yml",
      "evals.yml",
    ]);
  });

  it.each(files)("%s passes the validator", (file) => {
    const r = validate(path.join(dir, file));
    expect(r.errors).toBe("");
    expect(r.code).toBe(0);
  });

  it.each(files)("%s uses only inputs the action declares", (file) => {
    const inputs = Object.keys(
      (parse(readFileSync(path.join(ROOT, "action.yml"), "utf8")) as { inputs: object }).inputs,
    );
    const wf = parse(readFileSync(path.join(dir, file), "utf8")) as {
      jobs: Record<string, { steps: { uses?: string; with?: Record<string, unknown> }[] }>;
    };
    const steps = Object.values(wf.jobs).flatMap((j) =>
      j.steps.filter((s) => s.uses?.includes("/evalgate@")),
    );
    expect(steps.length).toBeGreaterThan(0);
    for (const s of steps)
      for (const k of Object.keys(s.with ?? {})) expect(inputs, `${file}: ${k}`).toContain(k);
  });
});

describe("the project's own workflow (.github/workflows/ci.yml)", () => {
  const file = path.join(ROOT, ".github", "workflows", "ci.yml");
  const wf = parse(readFileSync(file, "utf8")) as {
    jobs: Record<string, { steps: { uses?: string; run?: string; with?: Record<string, unknown> }[] }>;
  };

  it("passes the validator", () => {
    const r = validate(file);
    expect(r.errors).toBe("");
    expect(r.code).toBe(0);
  });

  it("runs what .ci/run runs: lint, the dist/ check and the tests", () => {
    const runs = Object.values(wf.jobs).flatMap((j) => j.steps.map((s) => s.run ?? ""));
    for (const command of ["npm ci", "npm run lint", "npm run bundle", "npm test"])
      expect(
        runs.some((r) => r.includes(command)),
        command,
      ).toBe(true);
    // The dist/ check sees files the build adds, as .ci/run's does (git diff would miss them).
    const check = runs.find((r) => r.includes("npm run bundle"))!;
    expect(check).toContain("git status --porcelain -- dist");
    expect(readFileSync(path.join(ROOT, ".ci", "run"), "utf8")).toContain("git status --porcelain -- dist");
  });

  it("runs the action from the checkout with inputs it declares", () => {
    const inputs = Object.keys(
      (parse(readFileSync(path.join(ROOT, "action.yml"), "utf8")) as { inputs: object }).inputs,
    );
    const steps = Object.values(wf.jobs).flatMap((j) => j.steps.filter((s) => s.uses === "./"));
    expect(steps).toHaveLength(1);
    for (const k of Object.keys(steps[0]!.with ?? {})) expect(inputs, k).toContain(k);
  });
});

describe("docs/workflows/evals-commands.yml", () => {
  const wf = parse(readFileSync(path.join(ROOT, "docs", "workflows", "evals-commands.yml"), "utf8")) as {
    on: Record<string, { types?: string[] }>;
    permissions: Record<string, string>;
    concurrency: { group: string; "cancel-in-progress": boolean };
    jobs: Record<string, { if?: string; steps: { uses?: string; with?: Record<string, unknown> }[] }>;
  };

  it("runs on new comments only, with what the bot needs and one run per PR at a time", () => {
    expect(wf.on).toEqual({ issue_comment: { types: ["created"] }, push: { branches: ["main"] } });
    expect(wf.permissions).toMatchObject({
      "pull-requests": "write",
      statuses: "write",
      actions: "read",
      contents: "read",
    });
    expect(wf.concurrency.group).toContain("github.event.issue.number");
    expect(wf.concurrency["cancel-in-progress"]).toBe(false);
    const job = Object.values(wf.jobs)[0]!;
    expect(job.if).toContain("github.event.issue.pull_request");
    expect(job.if).toContain("github.event_name == 'push'");
    const checkout = job.steps.find((s) => s.uses?.startsWith("actions/checkout@"))!;
    expect(checkout.with).toMatchObject({ "fetch-depth": 0, "persist-credentials": false });
    expect(String(checkout.with?.ref)).toContain("refs/pull/");
  });
});

describe("the release workflow (.github/workflows/release.yml)", () => {
  const file = path.join(ROOT, ".github", "workflows", "release.yml");
  const wf = parse(readFileSync(file, "utf8")) as {
    on: { push: { tags: string[] } };
    jobs: Record<string, { permissions: Record<string, string>; steps: { run?: string }[] }>;
  };
  const runs = Object.values(wf.jobs).flatMap((j) => j.steps.map((s) => s.run ?? ""));

  it("passes the validator", () => {
    const r = validate(file);
    expect(r.errors).toBe("");
    expect(r.code).toBe(0);
  });

  it("runs on version tags only, not on the major tag it moves", () => {
    const [pattern] = wf.on.push.tags;
    // GitHub's filter syntax: [0-9]+ is one or more digits.
    const re = new RegExp(`^${pattern!.replaceAll(".", "\\.")}$`);
    expect(re.test("v1.2.3")).toBe(true);
    expect(re.test("v1")).toBe(false);
  });

  it("checks the tag and dist/, publishes with provenance, then moves the major tag", () => {
    const at = (needle: string) => runs.findIndex((r) => r.includes(needle));
    expect(runs[at("GITHUB_REF_NAME")]).toContain('require("./package.json").version');
    expect(runs[at("npm run bundle")]).toContain("git status --porcelain -- dist");
    expect(at("npm publish --provenance")).toBeGreaterThan(at("npm run bundle"));
    expect(at('git push -f origin "refs/tags/$major"')).toBeGreaterThan(at("npm publish --provenance"));
    const job = Object.values(wf.jobs)[0]!;
    expect(job.permissions).toMatchObject({ "id-token": "write", contents: "write" });
  });
});

describe("docs/workflows/evals-labelled.yml", () => {
  const wf = parse(readFileSync(path.join(ROOT, "docs", "workflows", "evals-labelled.yml"), "utf8")) as {
    on: Record<string, { types?: string[] } | null>;
    permissions: Record<string, string>;
    jobs: Record<
      string,
      {
        if?: string;
        concurrency?: { group: string; "cancel-in-progress": boolean };
        steps: { uses?: string; with?: Record<string, unknown> }[];
      }
    >;
  };
  const job = Object.values(wf.jobs)[0]!;
  const step = job.steps.find((s) => s.uses?.includes("/evalgate@"))!;

  it("runs on the label and on every push while it is on, and always in the merge queue", () => {
    expect(wf.on.pull_request?.types).toEqual(["opened", "synchronize", "reopened", "labeled"]);
    expect(Object.keys(wf.on)).toContain("merge_group");
    expect(step.with).toMatchObject({ labels: "run-evals", "check-name": "evals" });
    expect(wf.permissions).toMatchObject({ checks: "write", "pull-requests": "write", actions: "read" });
  });

  it("another label neither runs the evals nor cancels a run in progress", () => {
    expect(job.if).toBe("github.event.action != 'labeled' || github.event.label.name == 'run-evals'");
    // Job-level: a job skipped by its if never joins the group, so it cancels nothing.
    expect(job.concurrency?.group).toContain("github.event.pull_request.number");
    expect((wf as { concurrency?: unknown }).concurrency).toBeUndefined();
  });
});
