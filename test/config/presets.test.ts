import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, type ConfigProblem } from "../../src/errors.js";
import { tempDir, writeFiles } from "../helpers.js";
import { loadPlan } from "./load-plan.js";

const TESTS = `workspace: { seed: { path: project } }
tests:
  - id: one
    instruction: do it
    scorers: [{ type: command, run: "true" }]
`;

async function load(targets: string) {
  const dir = tempDir();
  writeFiles(dir, { "project/a.txt": "a\n", "e.eval.yaml": `targets:\n${targets}\n${TESTS}` });
  return { dir, plan: await loadPlan({ cwd: dir, paths: ["."] }) };
}

async function problems(targets: string): Promise<ConfigProblem[]> {
  try {
    await load(targets);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("preset targets", () => {
  it("resolves bin: beside the eval file, model, args and price", async () => {
    const { dir, plan } = await load(`  - name: claude
    provider: claude-code
    bin: ./tools/claude
    model: sonnet
    args: ["--max-turns", "30"]
    env_passthrough: [ANTHROPIC_API_KEY]
    price: { input_per_mtok: 3, output_per_mtok: 15 }
  - { name: codex, provider: codex, bin: codex }
  - { name: gemini, provider: gemini-cli }`);
    const [claude, codex, gemini] = plan.cases.map((c) => c.target);
    expect(claude).toMatchObject({
      provider: "claude-code",
      bin: path.join(dir, "tools/claude"),
      model: "sonnet",
      args: ["--max-turns", "30"],
      envPassthrough: ["ANTHROPIC_API_KEY"],
      price: { inputPerMtok: 3, outputPerMtok: 15, cachedPerMtok: 3 },
    });
    expect(codex).toMatchObject({ provider: "codex", bin: "codex" });
    expect(gemini?.bin).toBeUndefined();
  });

  it("rejects a command on a preset, bin on other providers and an unknown provider", async () => {
    const p = await problems(`  - { name: a, provider: claude-code, command: ["claude"] }
  - { name: b, provider: command, command: ["true"], bin: ./x }
  - { name: c, provider: noop, bin: ./x }`);
    const text = p.map((x) => `${x.key}: ${x.message}${x.hint ? ` (${x.hint})` : ""}`);
    expect(text).toContainEqual(
      expect.stringMatching(/^targets\[0\]\.command: provider "claude-code" takes no command/),
    );
    expect(text).toContainEqual(
      expect.stringMatching(
        /^targets\[1\]\.bin: provider "command" takes no bin \(a command target names its program in command:\)/,
      ),
    );
    expect(text).toContainEqual(expect.stringMatching(/^targets\[2\]\.bin: provider "noop" takes no bin/));
    const unknown = await problems("  - { name: d, provider: claude }");
    expect(unknown[0]).toMatchObject({ key: "targets[0].provider" });
    expect(unknown[0]!.hint).toContain("claude-code, codex, gemini-cli");
  });

  it("rejects a preset under sandbox: bwrap without the network its model API needs", async () => {
    const p = await problems(`  - { name: a, provider: claude-code, sandbox: bwrap }
  - { name: b, provider: codex, sandbox: { type: bwrap, network: false, read_only: [project] } }
  - { name: c, provider: gemini-cli, sandbox: { type: bwrap, network: true } }
  - { name: d, provider: command, command: ["true"], sandbox: bwrap }`);
    expect(p.map((x) => `${x.line} ${x.key}: ${x.message} (${x.hint})`)).toEqual([
      '2 targets[0].sandbox: provider "claude-code" calls its model\'s API over the network, which sandbox: bwrap cuts off unless network: true (use sandbox: { type: bwrap, network: true })',
      '3 targets[1].sandbox: provider "codex" calls its model\'s API over the network, which sandbox: bwrap cuts off unless network: true (set network: true)',
    ]);
  });

  it("keeps the network under the default sandbox: auto, and rejects auto without it for a preset", async () => {
    const p = await problems(`  - { name: a, provider: claude-code }
  - { name: b, provider: codex, sandbox: auto }
  - { name: c, provider: gemini-cli, sandbox: { type: auto, network: false } }`);
    expect(p.map((x) => `${x.line} ${x.key}: ${x.message} (${x.hint})`)).toEqual([
      '4 targets[2].sandbox: provider "gemini-cli" calls its model\'s API over the network, which sandbox: auto cuts off unless network: true (set network: true)',
    ]);
  });
});
