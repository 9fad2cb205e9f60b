/**
 * docs/threat-model.md shows the table src/sandbox/threat-model.ts holds (the console, the comment
 * and summary.json say its rows; test/e2e/threat-model.test.ts checks its cells).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isolationGap } from "../../src/sandbox/isolation.js";
import { gapSentence, openRows, THREAT_MODEL } from "../../src/sandbox/threat-model.js";
import { ROOT } from "../helpers.js";

const LEVELS = ["bwrap", "pid-namespace", "subreaper", "none"] as const;

describe("the threat model", () => {
  it("docs/threat-model.md's table is the one in the code, row by row", () => {
    const doc = readFileSync(path.join(ROOT, "docs/threat-model.md"), "utf8");
    const start = doc.indexOf("<!-- threat-model-table");
    const end = doc.indexOf("<!-- /threat-model-table -->");
    const table = doc
      .slice(doc.indexOf("\n", start) + 1, end)
      .trim()
      .split("\n");
    const cell = (keeps: boolean) => (keeps ? "yes" : "**no**");
    expect(table).toEqual([
      `| promise | ${LEVELS.join(" | ")} |`,
      `|${"---|".repeat(LEVELS.length + 1)}`,
      ...THREAT_MODEL.map((r) => `| ${r.promise} | ${LEVELS.map((l) => cell(r.keeps[l])).join(" | ")} |`),
    ]);
  });

  it("says what each level leaves open, scorers by the level they ran under", () => {
    expect(isolationGap("bwrap")).toBeNull();
    expect(isolationGap("none")).toContain("leave processes running");
    expect(isolationGap("subreaper")).toContain("read evalgate's environment");
    expect(isolationGap("pid-namespace")).not.toContain("read evalgate's environment");
    // An agent under sandbox: none while the run has bubblewrap for its scorers.
    const mixed = openRows("none", "bwrap").map((r) => r.id);
    expect(mixed).toContain("answer-key-agent");
    expect(mixed).not.toContain("answer-key-scorers");
    expect(gapSentence([])).toBeNull();
    expect(gapSentence(openRows("pid-namespace"))).toMatch(/^the agent could write the run's files .* and /);
  });
});
