import { describe, expect, it } from "vitest";
import { parseScriptOutput } from "../../src/scorers/script.js";

describe("script scorer output", () => {
  it.each([
    ["score=0.7\n", { score: 0.7 }],
    ["checking...\nscore: 1\n", { score: 1 }],
    ['noise\n{"score": 0.5, "pass": false, "reason": "half"}\n', { score: 0.5, pass: false, reason: "half" }],
    ['{"score": 1}\nscore=0\n', { score: 0 }],
  ])("reads %j", (stdout, expected) => {
    expect(parseScriptOutput(stdout)).toEqual(expected);
  });

  it.each([
    ["all good\n", /printed no score/],
    ["score=1.5\n", /outside \[0, 1\]/],
    ['{"score": "high"}\n', /JSON verdict is invalid/],
    ["", /printed no score/],
  ])("refuses %j", (stdout, problem) => {
    const v = parseScriptOutput(stdout);
    expect("problem" in v && v.problem).toMatch(problem);
  });
});
