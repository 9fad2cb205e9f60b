/**
 * The claude-code, codex and gemini-cli presets under `sandbox: { type: bwrap, network: true }`,
 * in a git seed with a `subdir` (the agent works in a subfolder of a monorepo), with their program
 * given by `bin:` as an npm package's `node_modules/.bin` link outside PATH. A fake agent
 * (test/fixtures/agents/replay-agent.mjs) replays each agent's recorded stream from inside the
 * sandbox: the attempt passes, its transcript and usage are recorded, the diff is the repository's.
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkBwrap } from "../../src/sandbox/bwrap.js";
import { gitRepo, ROOT, readJson, readJsonl, runCliAsync, sh, tempDir, writeFiles } from "../helpers.js";

const check = await checkBwrap();
if (!check.ok) {
  console.warn(`SKIPPED the presets-under-bwrap tests: ${check.message} (.ci/run installs bubblewrap)`);
}

const PRESETS = [
  { provider: "claude-code", program: "claude", key: "ANTHROPIC_API_KEY" },
  { provider: "codex", program: "codex", key: "OPENAI_API_KEY" },
  { provider: "gemini-cli", program: "gemini", key: "GEMINI_API_KEY" },
] as const;

interface Row {
  target: string;
  usage: Record<string, number | null> | null;
  runs: { dir: string; status: string }[];
}

describe.skipIf(!check.ok)("presets under sandbox: bwrap, in a git seed subdir", async () => {
  // A monorepo: the shop's cart lives in services/cart.
  const work = gitRepo({ "README.md": "monorepo\n" });
  cpSync(path.join(ROOT, "examples/quickstart/project"), path.join(work, "services/cart"), {
    recursive: true,
  });
  sh("git add -A && git commit -qm cart", work);
  const bare = path.join(tempDir("evalgate-remote-"), "shop.git");
  sh(`git clone -q --bare ${work} ${bare}`, "/tmp");

  const dir = tempDir("evalgate-presets-bwrap-");
  // The agent programs: an npm-style package whose node_modules/.bin links are not on PATH.
  const pkg = path.join(dir, "tools/node_modules/replay-agent");
  mkdirSync(pkg, { recursive: true });
  cpSync(path.join(ROOT, "test/fixtures/agents/replay-agent.mjs"), path.join(pkg, "cli.mjs"));
  mkdirSync(path.join(dir, "tools/node_modules/.bin"));
  for (const p of PRESETS) {
    symlinkSync("../replay-agent/cli.mjs", path.join(dir, "tools/node_modules/.bin", p.program));
  }
  // The streams and the fix, readable inside the sandbox through read_only.
  for (const p of PRESETS) {
    cpSync(
      path.join(ROOT, "test/fixtures/agents", p.provider, "success.jsonl"),
      path.join(dir, "replays", `${p.provider}.jsonl`),
    );
  }
  cpSync(
    path.join(ROOT, "examples/quickstart/fixes/empty-cart-total.patch"),
    path.join(dir, "replays/fix.patch"),
  );
  const evalFile = {
    name: "boxed",
    targets: PRESETS.map((p) => ({
      name: p.program,
      provider: p.provider,
      bin: `./tools/node_modules/.bin/${p.program}`,
      ...(p.provider === "codex" ? { model: "gpt-5-codex" } : {}),
      sandbox: { type: "bwrap", network: true, read_only: ["replays"] },
      env_passthrough: [p.key],
      env: {
        REPLAY_STREAM: path.join(dir, "replays", `${p.provider}.jsonl`),
        REPLAY_PATCH: path.join(dir, "replays/fix.patch"),
        REPLAY_RECORD: "stderr",
        REPLAY_VERSION: "9.8.7",
      },
    })),
    concurrency: 3,
    timeouts: { agent: "60s", scorer: "60s" },
    workspace: { seed: { git: { url: `file://${bare}`, subdir: "services/cart" } } },
    tests: [
      {
        id: "empty-cart-total",
        instruction: "total() throws a TypeError when the cart is empty; an empty cart should total 0.",
        scorers: [
          { name: "unit", type: "command", run: "cd services/cart && node --test test/total.test.js" },
        ],
      },
    ],
  };
  writeFiles(dir, { "boxed.eval.yaml": JSON.stringify(evalFile, null, 2) });
  const run = await runCliAsync(["run", "--out", "out"], dir, {
    ANTHROPIC_API_KEY: "sk-ant-test-0123456789",
    OPENAI_API_KEY: "sk-openai-test-0123456789",
    GEMINI_API_KEY: "gemini-test-0123456789",
  });
  const rows = readJsonl<Row>(path.join(dir, "out/index.jsonl"));
  const attempt = (name: string) => {
    const row = rows.find((r) => r.target === name)!;
    const runDir = path.join(dir, "out", row.runs[0]!.dir);
    const log = readFileSync(path.join(runDir, "agent.log"), "utf8");
    const record = JSON.parse(/^replay-record: (.*)$/m.exec(log)?.[1] ?? "null") as { cwd: string } | null;
    return {
      row,
      runDir,
      record,
      result: readJson<{ status: string; usage: Record<string, unknown> }>(path.join(runDir, "result.json")),
      transcript: readJsonl<{ type: string; complete?: boolean }>(path.join(runDir, "transcript.jsonl")),
    };
  };

  it("runs each preset in the sandbox, in the subfolder, and passes", () => {
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    for (const p of PRESETS) {
      const a = attempt(p.program);
      expect(a.result.status, p.provider).toBe("passed");
      // The sandbox's view: the attempt's workspace, entered at the seed's subdir.
      expect(a.record?.cwd, p.provider).toMatch(/\/services\/cart$/);
      const diff = readFileSync(path.join(a.runDir, "diff.patch"), "utf8");
      expect(diff).toContain("+++ b/services/cart/src/cart.js");
    }
  });

  it("records each agent's transcript and usage from inside the sandbox", () => {
    for (const p of PRESETS) {
      const a = attempt(p.program);
      expect(a.transcript.at(-1), p.provider).toMatchObject({ type: "end", complete: true });
      expect(a.transcript.filter((e) => e.type === "tool_call").length, p.provider).toBeGreaterThan(0);
      // codex and gemini learn their version from `<program> --version`, run in the sandbox too.
      expect(a.result.usage, p.provider).toMatchObject({ agent_version: expect.any(String) });
      expect(a.row.usage?.cost_usd, p.provider).toBeGreaterThan(0);
    }
    expect(attempt("claude").result.usage).toMatchObject({ cost_usd: 0.01857, agent_version: "2.0.76" });
    expect(attempt("codex").result.usage).toMatchObject({ input_tokens: 315, agent_version: "9.8.7" });
    expect(attempt("gemini").result.usage).toMatchObject({ input_tokens: 6210, agent_version: "9.8.7" });
  });
});
