import { describe, expect, it } from "vitest";
import { matchLabel } from "../../src/github/bot-triggers.js";
import { parseCommand } from "../../src/github/commands.js";

describe("parseCommand", () => {
  it.each([
    ["/evalgate run", { kind: "run", tests: [], targets: [], tags: [] }],
    ["Please:\n/evalgate run --repeat 2", { kind: "run", repeat: 2 }],
    [
      "/evalgate run --test 'checkout/*' --target=claude --tag smoke --tag slow",
      { kind: "run", tests: ["checkout/*"], targets: ["claude"], tags: ["smoke", "slow"] },
    ],
    ["  /evalgate help  ", { kind: "help" }],
    [
      "/evalgate run --repeat 0",
      { kind: "invalid", error: expect.stringContaining("--repeat must be a whole number") },
    ],
    ["/evalgate run --repeat 3..10", { kind: "run", repeat: { min: 3, max: 10 } }],
    ["/evalgate run --repeat=2..4", { kind: "run", repeat: { min: 2, max: 4 } }],
    [
      "/evalgate run --repeat 5..2",
      { kind: "invalid", error: expect.stringContaining("--repeat MIN..MAX needs 1 <= MIN <= MAX") },
    ],
    [
      "/evalgate run --repeat 99999999999",
      { kind: "invalid", error: expect.stringContaining("--repeat must be at most") },
    ],
    ["/evalgate run --repet 3", { kind: "invalid", error: 'unknown option "--repet"' }],
    ["/evalgate run --test", { kind: "invalid", error: "--test needs a value" }],
    ["/evalgate deploy", { kind: "invalid", error: 'unknown command "deploy"' }],
  ])("%j", (body, want) => {
    expect(parseCommand(body)).toMatchObject(want);
  });

  it.each([
    ["no command", "LGTM, thanks"],
    ["a quote", "> /evalgate run\nno"],
    ["a fenced block", "```\n/evalgate run\n```"],
    ["a tilde fence", "~~~sh\n/evalgate run\n~~~"],
    ["indented code", "example:\n\n    /evalgate run"],
    ["mid-line", "you could say /evalgate run"],
    ["another word", "/evalgates run"],
  ])("ignores %s", (_what, body) => {
    expect(parseCommand(body)).toBeNull();
  });

  it("takes a command after a closed fence", () => {
    expect(parseCommand("```\n/evalgate help\n```\n/evalgate run")).toMatchObject({ kind: "run" });
  });
});

describe("matchLabel", () => {
  it.each([
    [["run-evals"], "run-evals", { tags: [] }],
    [["run-evals", "run-evals:full"], "run-evals:full", { tags: ["full"] }],
    [["run-evals"], "run-evals:full", null],
    [["run-evals"], "bug", null],
  ])("%j %s", (labels, name, want) => {
    expect(matchLabel(labels, name)).toEqual(want);
  });
});
