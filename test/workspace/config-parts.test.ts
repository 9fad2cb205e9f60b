/**
 * The test part of shared configuration files: what counts as a change (before: nothing did, so
 * `"test": "exit 0"` steered `npm test`) and how it is put back without the rest of the file.
 */
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { packageJsonPart, pyprojectPart, setupCfgPart } from "../../src/workspace/config-parts.js";

const pkg = (o: object, indent = 2) => `${JSON.stringify(o, null, indent)}\n`;
const base = { name: "shop", scripts: { test: "node --test" }, dependencies: {} };

describe("package.json", () => {
  it.each<[string, string, string | undefined, string[] | undefined]>([
    ["the same file", pkg(base), pkg(base), []],
    ["a dependency added", pkg({ ...base, dependencies: { "left-pad": "1" } }), pkg(base), []],
    ['"test": "exit 0"', pkg({ ...base, scripts: { test: "exit 0" } }), pkg(base), ["scripts"]],
    ["a pretest hook", pkg({ ...base, scripts: { ...base.scripts, pretest: "x" } }), pkg(base), ["scripts"]],
    ["jest configuration added", pkg({ ...base, jest: { testMatch: [] } }), pkg(base), ["jest"]],
    ["mocha and vitest keys", pkg({ ...base, mocha: {}, vitest: {} }), pkg(base), ["mocha", "vitest"]],
    ["a new file with scripts", pkg(base), undefined, ["scripts"]],
    ["a new file without them", pkg({ name: "x" }), undefined, []],
    [
      "a byte order mark is read as npm reads it",
      `\uFEFF${pkg({ ...base, scripts: { test: "exit 0" } })}`,
      pkg(base),
      ["scripts"],
    ],
    ["not JSON: unreadable", "{ scripts: oops", pkg(base), undefined],
    ["not an object: unreadable", "[1]", pkg(base), undefined],
  ])("%s", (_, now, was, keys) => {
    expect(packageJsonPart.differs(now, was)).toEqual(keys);
  });

  it("puts the scripts back, keeps the agent's dependency, indentation and final newline", () => {
    const now = pkg({ ...base, scripts: { test: "exit 0" }, jest: {}, dependencies: { a: "1" } }, 4);
    const fixed = packageJsonPart.restore(now, pkg(base))!;
    expect(JSON.parse(fixed)).toEqual({ ...base, dependencies: { a: "1" } });
    expect(fixed).toMatch(/^\{\n {4}"name"/);
    expect(fixed.endsWith("}\n")).toBe(true);
  });

  it("removes the test keys of a new file", () => {
    expect(JSON.parse(packageJsonPart.restore(pkg(base), undefined)!)).toEqual({
      name: "shop",
      dependencies: {},
    });
  });
});

const PYPROJECT = `[project]
name = "calc"
dependencies = []

[tool.pytest.ini_options]
testpaths = ["tests"]

[tool.ruff]
line-length = 100
`;

describe("pyproject.toml", () => {
  it.each<[string, string, string[] | undefined]>([
    ["the same file", PYPROJECT, []],
    [
      "a dependency and a linter setting changed",
      PYPROJECT.replace("[]", '["attrs"]').replace("100", "120"),
      [],
    ],
    [
      "addopts added",
      PYPROJECT.replace('testpaths = ["tests"]', 'testpaths = ["tests"]\naddopts = "-p x"'),
      ["tool.pytest"],
    ],
    ["pytest 9's own table", `${PYPROJECT}\n[tool.pytest]\naddopts = ["-p", "x"]\n`, ["tool.pytest"]],
    [
      "a dotted key at the top",
      `tool.pytest.ini_options.addopts = "-p x"\n${PYPROJECT.replace(/\[tool.pytest.ini_options\]\ntestpaths = \["tests"\]\n/, "")}`,
      ["tool.pytest"],
    ],
    [
      "the table removed",
      PYPROJECT.replace('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n', ""),
      ["tool.pytest"],
    ],
    ["not TOML: unreadable", "[project\n", undefined],
  ])("%s", (_, now, keys) => {
    expect(pyprojectPart.differs(now, PYPROJECT)).toEqual(keys);
  });

  it("swaps the pytest tables back and keeps everything else", () => {
    const now = PYPROJECT.replace("[]", '["attrs"]').replace(
      'testpaths = ["tests"]',
      'testpaths = ["tests"]\naddopts = "-p x"',
    );
    const fixed = parse(pyprojectPart.restore(now, PYPROJECT)!) as {
      project: { dependencies: string[] };
      tool: Record<string, unknown>;
    };
    expect(fixed.tool.pytest).toEqual({ ini_options: { testpaths: ["tests"] } });
    expect(fixed.project.dependencies).toEqual(["attrs"]);
    expect(fixed.tool.ruff).toEqual({ "line-length": 100 });
  });

  it("cannot swap a dotted key alone: the whole file goes back", () => {
    const now = `tool.pytest.ini_options.addopts = "-p x"\n[project]\nname = "calc"\n`;
    expect(pyprojectPart.restore(now, PYPROJECT)).toBeUndefined();
  });
});

const SETUP_CFG =
  "[metadata]\nname = calc\n\n[tool:pytest]\ntestpaths = tests\n\n[flake8]\nmax-line-length = 100\n";

describe("setup.cfg", () => {
  it.each<[string, string, string[]]>([
    ["the same file", SETUP_CFG, []],
    ["another section changed", SETUP_CFG.replace("100", "120"), []],
    [
      "addopts added",
      SETUP_CFG.replace("testpaths = tests", "testpaths = tests\naddopts = -p x"),
      ["tool:pytest"],
    ],
    ["the section removed", SETUP_CFG.replace("[tool:pytest]\ntestpaths = tests\n", ""), ["tool:pytest"]],
  ])("%s", (_, now, keys) => {
    expect(setupCfgPart.differs(now, SETUP_CFG)).toEqual(keys);
  });

  it("puts the section back and keeps the others", () => {
    const now = SETUP_CFG.replace("testpaths = tests", "addopts = -p x").replace("100", "120");
    const fixed = setupCfgPart.restore(now, SETUP_CFG)!;
    expect(setupCfgPart.differs(fixed, SETUP_CFG)).toEqual([]);
    expect(fixed).toContain("max-line-length = 120");
    expect(fixed).not.toContain("addopts");
  });
});
