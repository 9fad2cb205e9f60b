/**
 * Which folder of a reference script is masked whole (config/answer-key.ts): its own folder, unless
 * that folder is, or holds, an eval file's folder, or something that runs names a path inside it.
 * Masking such a folder would hide the eval file's other files or the agent's own program.
 */
import { describe, expect, it } from "vitest";
import { answerKeyOf, referenceFolder } from "../../src/config/answer-key.js";
import type { CaseSpec } from "../../src/config/types.js";

function caseOf(o: {
  evalDir?: string;
  reference?: string;
  script?: boolean;
  command?: string[];
  run?: string;
}) {
  return {
    evalDir: o.evalDir ?? "/r/evals",
    target: { name: "a", provider: "command", command: { argv: o.command ?? ["/usr/bin/agent"] } },
    test: {
      reference: o.reference,
      ...(o.script ? { referenceKind: "script" } : {}),
      workspace: {
        seed: { kind: "path", path: "/r/project" },
        verifiers: [{ from: "/r/evals/checks/one", to: "t" }],
      },
      scorers: [{ evalDir: o.evalDir ?? "/r/evals", options: { type: "command", run: o.run ?? "true" } }],
    },
  } as unknown as CaseSpec;
}

describe("the answer key of a case", () => {
  const table: [string, Parameters<typeof caseOf>[0], string | undefined][] = [
    [
      "a script in a folder of its own",
      { reference: "/r/evals/solution/solve.sh", script: true },
      "/r/evals/solution",
    ],
    ["a patch: only the file", { reference: "/r/evals/fixes/one.patch" }, undefined],
    ["a script beside the eval file", { reference: "/r/evals/solve.sh", script: true }, undefined],
    [
      "a script in a folder above the eval file",
      { evalDir: "/r/evals/sub", reference: "/r/evals/solve.sh", script: true },
      undefined,
    ],
    [
      "the agent's program in the script's folder",
      { reference: "/r/evals/bin/solve.sh", script: true, command: ["/r/evals/bin/agent.sh"] },
      undefined,
    ],
    [
      "a scorer's file in the script's folder, through {EVAL_DIR}",
      { reference: "/r/evals/bin/solve.sh", script: true, run: "{EVAL_DIR}/bin/grade.sh" },
      undefined,
    ],
    [
      "a folder whose name only starts like the script's",
      { reference: "/r/evals/bin/solve.sh", script: true, command: ["/r/evals/bin2/agent.sh"] },
      "/r/evals/bin",
    ],
  ];
  for (const [name, o, folder] of table) {
    it(name, () => {
      const c = caseOf(o);
      expect(referenceFolder(c, [c])).toBe(folder);
      expect(answerKeyOf(c, [c])).toEqual([
        "/r/evals/checks/one",
        ...(o.reference ? [o.reference] : []),
        ...(folder ? [folder] : []),
      ]);
    });
  }

  it("another case's eval file inside the folder keeps it unmasked", () => {
    const c = caseOf({ reference: "/r/evals/solution/solve.sh", script: true });
    const other = caseOf({ evalDir: "/r/evals/solution/more" });
    expect(referenceFolder(c, [c, other])).toBeUndefined();
  });
});
