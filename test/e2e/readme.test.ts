/**
 * The README is the user's contract: its CLI synopsis must name exactly the flags each command
 * takes, and its YAML examples, copied as they stand, must validate.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, runCli, sh, tempDir, writeFiles } from "../helpers.js";

const README = readFileSync(path.join(ROOT, "README.md"), "utf8");

/** The body of the README's section `heading` (up to the next heading of the same level or above). */
function section(heading: string): string {
  const start = README.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(-1);
  const level = heading.split(" ")[0]!;
  const rest = README.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level.length}} `));
  return end < 0 ? rest : rest.slice(0, end);
}

function fences(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, "g"))].map((m) => m[1]!);
}

const flagsIn = (text: string) => new Set([...text.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]));

describe("the README's CLI synopsis", () => {
  const synopsis = fences(section("## CLI"), "")[0]!;
  const documented = new Map<string, Set<string>>();
  for (const line of synopsis.replace(/\n\s+(?=\[)/g, " ").split("\n")) {
    const m = /^evalgate (\w+) (.*)$/.exec(line);
    if (!m) continue;
    const flags = documented.get(m[1]!) ?? new Set<string>();
    for (const f of flagsIn(m[2]!.replace(/#.*$/, ""))) flags.add(f);
    documented.set(m[1]!, flags);
  }

  it("covers every command", () => {
    const help = runCli(["--help"], ROOT).stdout;
    const commands = [...help.matchAll(/^ {2}(\w+) \[options\]/gm)].map((m) => m[1]);
    expect([...documented.keys()].sort()).toEqual(commands.sort());
  });

  it.each([
    "run",
    "validate",
    "compare",
    "report",
    "merge",
    "import",
  ])("names every flag of %s, and no other", (cmd) => {
    const help = runCli([cmd, "--help"], ROOT).stdout;
    const options = help.slice(help.indexOf("Options:"));
    const real = flagsIn(options);
    real.delete("--help");
    expect([...(documented.get(cmd) ?? [])].sort()).toEqual([...real].sort());
  });
});

describe("the README's YAML examples validate as written", () => {
  /** A folder with the files the examples name. */
  function project(): string {
    const root = tempDir();
    const dir = path.join(root, "evals");
    writeFiles(root, {
      "tools/README": "",
      "core/core.eval.yaml":
        "targets: [{ name: noop, provider: noop }]\nworkspace: { seed: { empty: true } }\ntests:\n  - { id: c, instruction: go, scorers: [{ type: command, run: 'true' }] }\n",
    });
    writeFiles(dir, {
      "fixtures/shop/package.json": "{}\n",
      "fixtures/shop.tar.gz": "",
      "agents/run.sh": "#!/bin/sh\ntrue\n",
      "fixes/empty-cart.patch": "",
      "verifiers/cart.test.js": "",
      "verifiers/e2e/a.test.js": "",
      "rubrics/cart.md": "",
      "jest.config.js": "",
      "cases/a.yaml":
        '- { id: case-a, instruction: go, reference: ../fixes/empty-cart.patch, scorers: [{ type: command, run: "true" }] }\n',
    });
    sh("chmod +x agents/run.sh", dir);
    return dir;
  }
  const validate = (dir: string, yaml: string) => {
    writeFiles(dir, { "x.eval.yaml": yaml });
    const r = runCli(["validate", "x.eval.yaml"], dir);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  };
  const TEST = `tests:
  - id: t
    instruction: go
    scorers:
`;
  const indent = (yaml: string, by: string) => yaml.replace(/^(?=.)/gm, by);

  it("the eval file of 'Eval files'", () => {
    const dir = project();
    validate(dir, fences(section("## Eval files"), "yaml")[0]!);
  });

  it.each([
    "### Test reports: the `tests` scorer",
    "### AST patterns: the `ast-grep` scorer",
    "### Model judges: the `llm-judge` scorer",
  ])("the scorers of '%s'", (heading) => {
    const scorers = fences(section(heading), "yaml")[0]!;
    validate(
      project(),
      `targets: [{ name: noop, provider: noop }]\nworkspace: { seed: { path: fixtures/shop } }\n${TEST}${indent(scorers, "      ")}`,
    );
  });

  it.each([
    "### Workspaces",
    "### Protected paths and `tampered`",
    "### Hidden verifiers",
  ])("the workspace of '%s'", (heading) => {
    let workspace = fences(section(heading), "yaml")[0]!;
    if (!/\n\s+seed:/.test(workspace))
      workspace = workspace.replace("workspace:\n", "workspace:\n  seed: { empty: true }\n");
    validate(
      project(),
      `targets: [{ name: noop, provider: noop }]\n${workspace}${TEST}      - { type: command, run: "true" }\n`,
    );
  });

  it.each([
    "## Agents",
    "### `sandbox: bwrap`",
    "## Repeated attempts and the gate",
    "### Limits",
  ])("the settings of '%s'", (heading) => {
    const dir = project();
    // The sandbox example's second target runs claude: any program on PATH stands in for it.
    const yaml = fences(section(heading), "yaml")[0]!.replace('["claude",', '["true",');
    const targets = yaml.includes("targets:") ? "" : "targets: [{ name: noop, provider: noop }]\n";
    validate(
      dir,
      `${targets}${yaml}\nworkspace: { seed: { empty: true } }\n${TEST}      - { type: command, run: "true" }\n`,
    );
  });
});
