/**
 * Seeds end to end through `evalgate run`: git over file:// and over token-protected HTTP, subdir,
 * archives, concurrent attempts, and the two setup modes.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as tar from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  filesContaining,
  gitRepo,
  readJson,
  readJsonl,
  runCli,
  runCliAsync,
  sh,
  tempDir,
  writeFiles,
} from "../helpers.js";
import { zipBytes } from "../workspace/archive-builders.js";
import { type GitHttpServer, startGitHttpServer } from "../workspace/git-http-server.js";

interface Row {
  test_id: string;
  verdict: string;
  runs: {
    status: string;
    failure_kind: string | null;
    result_path: string;
    diff_path: string | null;
    dir: string;
  }[];
}

function rows(bundle: string): Row[] {
  return readJsonl<Row>(path.join(bundle, "index.jsonl"));
}

/** `evalgate run` on `evals`, which must exit 0 with one case whose first attempt passed. */
function runPassing(evals: string): { out: string; row: Row } {
  const out = path.join(tempDir(), "bundle");
  const r = runCli(["run", ".", "--out", out], evals);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const [row] = rows(out);
  expect(row!.runs[0]!.status).toBe("passed");
  return { out, row: row! };
}

function diffOf(bundle: string, row: Row, i = 0): string {
  return readFileSync(path.join(bundle, row.runs[i]!.diff_path!), "utf8");
}

/** A bare repository: main has README "v2", tag v1 has README "v1"; both have services/cart/. */
function bareRepo(): { root: string; bare: string } {
  const work = gitRepo({ "README.md": "v1\n", "services/cart/cart.js": "export const total = 0;\n" });
  sh("git tag v1 && echo v2 > README.md && git commit -qam v2", work);
  const root = tempDir("evalgate-remote-");
  const bare = path.join(root, "shop.git");
  sh(`git clone -q --bare ${work} ${bare}`, root);
  return { root, bare };
}

const TOKEN = "ghs_e2eSeedToken_5a4b3c2d1e";
const ENCODED = Buffer.from(`x-access-token:${TOKEN}`).toString("base64");

describe("a git seed behind a token-protected HTTP server", () => {
  let server: GitHttpServer;
  const { root } = bareRepo();
  const evals = tempDir("evalgate-evals-");
  beforeAll(async () => {
    server = await startGitHttpServer(root, TOKEN);
    writeFiles(evals, {
      "shop.eval.yaml": `targets:
  - name: agent
    provider: command
    command: "env > agent-env.txt; echo fixed > README.md"
workspace:
  seed:
    git:
      url: ${server.url}/shop.git
      ref: v1
      token_env: SEED_TOKEN
tests:
  - id: fix-readme
    instruction: Fix the readme.
    scorers:
      - { name: readme, type: command, run: "grep -q fixed README.md" }
`,
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it("works with the token, and the token is in no file of the bundle, the workspaces or the console", async () => {
    const out = path.join(tempDir(), "bundle");
    const work = path.join(tempDir(), "work");
    const r = await runCliAsync(["run", ".", "--out", out, "--work-dir", work, "--keep-workspaces"], evals, {
      SEED_TOKEN: TOKEN,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [row] = rows(out);
    expect(row!.runs[0]!.status).toBe("passed");
    // The agent printed its whole environment into the diff: the token was never given to it.
    const diff = diffOf(out, row!);
    expect(diff).toContain("+++ b/agent-env.txt");
    expect(diff).not.toContain("SEED_TOKEN");
    expect(server.requests.filter((q) => q.authorized).length).toBeGreaterThan(0);
    // The search works (it finds what is there), and finds neither the token nor its header.
    expect(filesContaining(out, "fix-readme").length).toBeGreaterThan(0);
    for (const needle of [TOKEN, ENCODED]) {
      expect(filesContaining(out, needle)).toEqual([]);
      expect(filesContaining(work, needle)).toEqual([]);
      expect(r.stdout).not.toContain(needle);
    }
  });

  it("fails clearly, before any agent runs, when the token variable is not set", async () => {
    const out = path.join(tempDir(), "bundle");
    const r = await runCliAsync(["run", ".", "--out", out], evals, { SEED_TOKEN: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "shop.eval.yaml:10: workspace.seed.git.token_env: token_env SEED_TOKEN is not set, so",
    );
    expect(r.stderr).toContain("hint: set SEED_TOKEN in evalgate's environment");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("fails clearly when the server refuses the token, without printing it", async () => {
    const wrong = "ghs_notTheRightToken_777";
    const r = await runCliAsync(["run", ".", "--out", path.join(tempDir(), "b")], evals, {
      SEED_TOKEN: wrong,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `shop.eval.yaml:10: workspace.seed.git.token_env: cannot fetch ${server.url}/shop.git: the server did not accept the token in SEED_TOKEN`,
    );
    expect(`${r.stdout}${r.stderr}`).not.toContain(wrong);
  });
});

describe("a git seed over file:// with a subdir", () => {
  const { bare } = bareRepo();
  const evals = tempDir("evalgate-evals-");
  writeFiles(evals, {
    "cart.eval.yaml": `targets:
  - name: agent
    provider: command
    command: "pwd > agent-cwd.txt; echo {WORKSPACE} > agent-ws.txt; echo cart > cart-note.txt; echo outside > ../../ROOT.md"
workspace:
  seed:
    git: { url: "file://${bare}", ref: v1, subdir: services/cart }
  setup:
    command: "pwd > .setup-cwd"
tests:
  - id: cart
    instruction: Change the cart.
    scorers:
      - { name: whole-repo, type: command, run: "test -f ROOT.md && test -f services/cart/cart-note.txt" }
`,
  });
  const out = path.join(tempDir(), "bundle");
  const work = path.join(tempDir(), "work");
  const r = runCli(["run", ".", "--out", out, "--work-dir", work, "--keep-workspaces"], evals);

  it("runs setup and the agent in the subfolder; the scorers see the whole repository", () => {
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [row] = rows(out);
    expect(row!.runs[0]!.status).toBe("passed");
    const diff = diffOf(out, row!);
    expect(diff).toMatch(/\+\+\+ b\/services\/cart\/agent-cwd\.txt\n@@ .* @@\n\+\S*\/ws\/services\/cart\n/);
    expect(diff).toMatch(/\+\+\+ b\/services\/cart\/agent-ws\.txt\n@@ .* @@\n\+\S*\/ws\/services\/cart\n/);
    // Setup ran in the subfolder of the baseline, and its output is not in the graded diff.
    const [key] = readdirSync(path.join(work, "baselines"));
    const setupCwd = readFileSync(
      path.join(work, "baselines", key!, "tree/services/cart/.setup-cwd"),
      "utf8",
    );
    expect(setupCwd.trim()).toBe(path.join(work, "baselines", key!, "tree/services/cart"));
    expect(diff).not.toContain(".setup-cwd");
  });

  it("captures writes outside the subfolder in diff.patch", () => {
    const diff = diffOf(out, rows(out)[0]!);
    expect(diff).toContain("+++ b/ROOT.md");
    expect(diff).toContain("+++ b/services/cart/cart-note.txt");
    // The patch is of the whole repository: it applies at the root of a checkout of the baseline.
    const check = path.join(tempDir(), "check");
    sh(`git clone -q ${bare} ${check} && git -C ${check} checkout -q v1`, "/tmp");
    const patch = path.join(tempDir(), "p.patch");
    writeFileSync(patch, diff);
    sh(`git apply --check ${patch}`, check);
  });
});

describe("two attempts of one case at the same time", () => {
  it("do not see each other's files", () => {
    const evals = tempDir("evalgate-evals-");
    const sync = tempDir("evalgate-sync-");
    writeFiles(evals, {
      "app/README.md": "app\n",
      "agent.sh": `set -e
a=$EVALGATE_ATTEMPT
echo "attempt $a" > "mine-$a.txt"
touch "$SYNC_DIR/wrote-$a"
# Both attempts must be running at once: wait (up to 60 s) until the other one has written too.
i=0
while [ ! -f "$SYNC_DIR/wrote-1" ] || [ ! -f "$SYNC_DIR/wrote-2" ]; do
  i=$((i+1)); [ $i -gt 600 ] && { echo "the other attempt never ran alongside"; exit 7; }
  sleep 0.1
done
ls mine-* > seen.txt
`,
      "apart.eval.yaml": `repeat: 2
concurrency: 2
targets:
  - name: agent
    provider: command
    command: ["sh", "{EVAL_DIR}/agent.sh"]
    env: { SYNC_DIR: "${sync}" }
    # Both attempts write the shared sync folder, which the default sandbox forbids.
    sandbox: none
workspace:
  seed: { path: app }
tests:
  - id: apart
    instruction: Leave a mark.
    scorers:
      - { name: alone, type: command, run: "test \\"$(cat seen.txt)\\" = \\"$(ls mine-*)\\" && test $(ls mine-* | wc -l) -eq 1" }
`,
    });
    const out = path.join(tempDir(), "bundle");
    const r = runCli(["run", ".", "--out", out], evals);
    expect(r.stderr.trim()).toMatch(/^warning: isolation: none for agent: [^\n]*$/);
    expect(r.code).toBe(0);
    const [row] = rows(out);
    expect(row!.runs.map((x) => x.status)).toEqual(["passed", "passed"]);
    for (const [i, attempt] of [1, 2].entries()) {
      const diff = diffOf(out, row!, i);
      expect(diff).toContain(`+++ b/mine-${attempt}.txt`);
      expect(diff).not.toContain(`mine-${3 - attempt}.txt`);
    }
  });
});

describe("archive seeds through evalgate run", () => {
  it("runs a case on a good tar.gz", async () => {
    const evals = tempDir("evalgate-evals-");
    const src = tempDir();
    writeFiles(src, { "app.txt": "broken\n", "lib/util.sh": "echo util\n" });
    writeFiles(evals, {
      "app.eval.yaml": `targets:
  - { name: agent, provider: command, command: "echo fixed > app.txt" }
workspace:
  seed: { archive: fixtures/app.tar.gz }
tests:
  - id: fix
    instruction: Fix app.txt.
    scorers:
      - { name: fixed, type: command, run: "grep -q fixed app.txt && test -f lib/util.sh" }
`,
    });
    sh("mkdir -p fixtures", evals);
    await tar.create({ gzip: true, file: path.join(evals, "fixtures/app.tar.gz"), cwd: src }, ["."]);
    const { out, row } = runPassing(evals);
    expect(diffOf(out, row)).toContain("-broken\n+fixed\n");
  });

  it("refuses a zip-slip archive before any agent runs, naming the file, the key and the entry", () => {
    const evals = tempDir("evalgate-evals-");
    const marker = path.join(tempDir(), "agent-ran");
    writeFiles(evals, {
      "app.eval.yaml": `targets:
  - { name: agent, provider: command, command: "touch ${marker}" }
workspace:
  seed:
    archive: { path: evil.zip, max_entries: 10 }
tests:
  - id: fix
    instruction: Fix it.
    scorers:
      - { type: command, run: "true" }
`,
    });
    writeFileSync(
      path.join(evals, "evil.zip"),
      zipBytes([
        { name: "ok.txt", data: "fine\n" },
        { name: "../../evalgate-zip-slip.txt", data: "pwned" },
      ]),
    );
    const work = path.join(tempDir(), "work");
    const r = runCli(["run", ".", "--out", path.join(tempDir(), "b"), "--work-dir", work], evals);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `app.eval.yaml:5: workspace.seed.archive: archive ${path.join(evals, "evil.zip")} refused: entry "../../evalgate-zip-slip.txt" leaves the archive's folder (..)`,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(path.join(work, "evalgate-zip-slip.txt"))).toBe(false);
    expect(existsSync(path.join(path.dirname(work), "evalgate-zip-slip.txt"))).toBe(false);
  });
});

describe("setup modes", () => {
  it("a failing setup.command is setup_error (infrastructure), and the agent never runs", () => {
    const evals = tempDir("evalgate-evals-");
    const marker = path.join(tempDir(), "agent-ran");
    writeFiles(evals, {
      "app/app.txt": "v1\n",
      "setup.eval.yaml": `targets:
  - { name: agent, provider: command, command: "touch ${marker}" }
workspace:
  seed: { path: app }
  setup: { command: "echo installing dependencies; exit 4" }
tests:
  - id: t
    instruction: Do it.
    scorers:
      - { type: command, run: "true" }
`,
    });
    const out = path.join(tempDir(), "bundle");
    const r = runCli(["run", ".", "--out", out], evals);
    expect(r.code).toBe(1);
    const [row] = rows(out);
    expect(row!.verdict).toBe("error");
    const result = readJson<{ status: string; failure_stage: string; failure_kind: string; message: string }>(
      path.join(out, row!.runs[0]!.result_path),
    );
    expect(result).toMatchObject({ status: "error", failure_stage: "setup", failure_kind: "setup_error" });
    expect(result.message).toContain("setup command exited with 4: installing dependencies");
    expect(readFileSync(path.join(out, row!.runs[0]!.dir, "setup.log"), "utf8")).toContain(
      "installing dependencies",
    );
    expect(existsSync(marker)).toBe(false);
  });

  it("setup.command output is in the baseline, not the diff; setup.instructions go to the agent and its setup work is graded", () => {
    const evals = tempDir("evalgate-evals-");
    writeFiles(evals, {
      "app/app.txt": "v1\n",
      "agent.sh": `# A scripted agent that follows the setup instructions it finds in the prompt.
if grep -q "create SETUP_DONE" "$1"; then echo ok > SETUP_DONE; fi
echo v2 > app.txt
`,
      "modes.eval.yaml": `targets:
  - { name: agent, provider: command, command: ["sh", "{EVAL_DIR}/agent.sh", "{PROMPT_FILE}"] }
workspace:
  seed: { path: app }
  setup:
    command: "echo installed > deps.txt"
    instructions: "Before the task, create SETUP_DONE."
tests:
  - id: t
    instruction: Bump app.txt to v2.
    scorers:
      - { name: deps, type: command, run: "grep -q installed deps.txt" }
      - { name: setup-done, type: command, run: "grep -q ok SETUP_DONE" }
`,
    });
    const { out, row } = runPassing(evals);
    const prompt = readFileSync(path.join(out, row.runs[0]!.dir, "prompt.md"), "utf8");
    expect(prompt).toBe("Before the task, create SETUP_DONE.\n\nBump app.txt to v2.");
    const diff = diffOf(out, row);
    expect(diff).toContain("+++ b/SETUP_DONE");
    expect(diff).toContain("+++ b/app.txt");
    expect(diff).not.toContain("deps.txt");
  });
});

describe("validation of seed keys", () => {
  /** Five lines before the tests, so that line numbers below are those of the test entries. */
  const VALIDATION_HEAD = `targets:
  - { name: agent, provider: noop }
scorers:
  - { type: command, run: "true" }
tests:
`;

  /** `evalgate validate` on one eval file (beside an empty app.tar.gz and app.rar): its stderr. */
  function validateFile(name: string, tests: string): string {
    const evals = tempDir("evalgate-evals-");
    writeFiles(evals, { "app.tar.gz": "", "app.rar": "", [name]: `${VALIDATION_HEAD}${tests}` });
    const r = runCli(["validate", "."], evals);
    expect(r.code).toBe(2);
    return r.stderr;
  }

  it("names file, line, key and fix for unknown or malformed seed keys", () => {
    const stderr = validateFile(
      "keys.eval.yaml",
      `  - id: t1
    instruction: x
    workspace: { seed: { git: { url: "https://github.com/acme/shop", tokenenv: SHOP_TOKEN } } }
  - id: t2
    instruction: x
    workspace: { seed: { archive: { path: app.tar.gz, max_size: "100 parsecs", max_entries: 0 } } }
  - id: t3
    instruction: x
    workspace: { seed: { archive: { path: app.tar.gz, max_unpacked_sise: 1GB } } }
`,
    );
    const lines = [
      'keys.eval.yaml:8: tests[0].workspace.seed.git.tokenenv: unknown key "tokenenv"\n      hint: did you mean "token_env"?',
      'keys.eval.yaml:11: tests[1].workspace.seed.archive.max_size: the text "100 parsecs" is not a size such as "10MiB", "100MB" or "512KB"',
      "keys.eval.yaml:11: tests[1].workspace.seed.archive.max_entries: number 0 is out of range: must be at least 1",
      'keys.eval.yaml:14: tests[2].workspace.seed.archive.max_unpacked_sise: unknown key "max_unpacked_sise"\n      hint: did you mean "max_unpacked_size"?',
    ];
    for (const line of lines) expect(stderr).toContain(line);
  });

  it("names file, line, key and fix for seeds that cannot work", () => {
    const stderr = validateFile(
      "seeds.eval.yaml",
      `  - id: t1
    instruction: x
    workspace: { seed: { git: { url: "../repo", subdir: "../outside" } } }
  - id: t2
    instruction: x
    workspace: { seed: { archive: { path: fixtures/missing.tar.gz } } }
  - id: t3
    instruction: x
    workspace: { seed: { archive: app.rar } }
  - id: t4
    instruction: x
    workspace:
      seed:
        git: { url: "https://user:s3cr3t-value@github.com/acme/shop" }
  - id: t5
    instruction: x
    workspace: { seed: { git: { url: "http://example.com/shop.git", token_env: SHOP_TOKEN } } }
  - id: t6
    instruction: x
    workspace: { seed: { git: { url: "../repo" }, archive: app.tar.gz } }
  - id: t7
    instruction: x
    workspace: { seed: { git: { url: "../repo", token_env: SHOP_TOKEN } } }
`,
    );
    const expected = [
      'seeds.eval.yaml:8: tests[0].workspace.seed.git.subdir: subdir "../outside" leaves the repository (..)\n      hint: give a folder inside the repository',
      "seeds.eval.yaml:11: tests[1].workspace.seed.archive.path: seed archive fixtures/missing.tar.gz does not exist\n      hint: paths are relative to",
      "seeds.eval.yaml:14: tests[2].workspace.seed.archive: app.rar is not a .zip, .tar, .tar.gz or .tgz file\n      hint:",
      "seeds.eval.yaml:19: tests[3].workspace.seed.git.url: the URL carries credentials, which would end up in logs and in the run bundle\n      hint: remove them from the URL and set token_env:",
      "seeds.eval.yaml:22: tests[4].workspace.seed.git.token_env: the token would be sent unencrypted to example.com over http://\n      hint: use the https:// URL",
      "seeds.eval.yaml:25: tests[5].workspace.seed: a seed has exactly one of path, git, archive, empty (found git and archive)\n      hint:",
      "seeds.eval.yaml:28: tests[6].workspace.seed.git.token_env: token_env applies to https URLs only\n      hint: a local repository needs no token",
    ];
    for (const line of expected) expect(stderr).toContain(line);
    // "../repo" is not there either (t1 and t7; t6 has two kinds, so its url is not looked at).
    expect(stderr).toContain("seeds.eval.yaml:8: tests[0].workspace.seed.git.url: git repository");
    expect(stderr).toContain("seeds.eval.yaml:28: tests[6].workspace.seed.git.url: git repository");
    expect(stderr).toContain("9 problems");
    // A credential written into a URL is never repeated back.
    expect(stderr).not.toContain("s3cr3t-value");
  });
});
