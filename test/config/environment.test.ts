/**
 * `environment:`, `resources:` and `sandbox.network: { allow }` in eval files: resolved per case,
 * overridden by a test, and every mistake named with its file, key and fix. Before: each of these
 * keys was an unknown key (a validation error), and a case ran on whatever the runner had.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_NAMING } from "../../src/cli/args.js";
import { ConfigError, type ConfigProblem } from "../../src/errors.js";
import { checkedPlan } from "../../src/pipeline/plan.js";
import { tempDir, writeFiles } from "../helpers.js";

const TARGET = `targets:
  - { name: agent, provider: command, command: ["agent-in-the-image", "{PROMPT_FILE}"] }
`;

async function load(yaml: string, files: Record<string, string> = {}, env: NodeJS.ProcessEnv = process.env) {
  const dir = tempDir();
  writeFiles(dir, { "project/a.txt": "a\n", ...files, "e.eval.yaml": yaml });
  const plan = await checkedPlan({ cwd: dir, paths: ["."], naming: CLI_NAMING }, { env });
  return { dir, plan };
}

async function problems(yaml: string, files: Record<string, string> = {}, env?: NodeJS.ProcessEnv) {
  try {
    await load(yaml, files, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

const ENGINE_PATH = { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" };

describe("environment:", () => {
  it("gives each case its environment (a test's replaces the file's) and its resources (key by key)", async () => {
    const { dir, plan } = await load(
      `${TARGET}workspace: { seed: { path: project } }
environment: { image: "python:3.11-slim@sha256:${"a".repeat(64)}" }
resources: { memory: 512MiB, cpus: 1.5, pids: 256 }
tests:
  - id: file-image
    instruction: x
    scorers: [{ type: command, run: "true" }]
  - id: own-build
    instruction: x
    environment: { build: { dockerfile: env/Containerfile }, workdir: /app/ }
    resources: { memory: 1GiB, disk: 2GB }
    scorers: [{ type: command, run: "true" }]
`,
      { "env/Containerfile": "FROM scratch\n" },
      ENGINE_PATH,
    );
    const [a, b] = plan.cases;
    expect(a!.environment).toEqual({ kind: "image", image: `python:3.11-slim@sha256:${"a".repeat(64)}` });
    expect(a!.resources).toEqual({ memoryBytes: 512 * 2 ** 20, cpus: 1.5, pids: 256 });
    expect(b!.environment).toEqual({
      kind: "build",
      dockerfile: path.join(dir, "env/Containerfile"),
      context: path.join(dir, "env"),
      workdir: "/app",
    });
    expect(b!.resources).toEqual({ memoryBytes: 2 ** 30, cpus: 1.5, pids: 256, diskBytes: 2e9 });
  });

  it("does not look for an agent's program on the runner when the agent runs in an image", async () => {
    // before: "agent-in-the-image" was not found on PATH, and the file did not validate.
    const { plan } = await load(
      `${TARGET}workspace: { seed: { path: project } }
environment: { image: busybox }
tests: [{ id: t, instruction: x, scorers: [{ type: command, run: "true" }] }]
`,
      {},
      ENGINE_PATH,
    );
    expect(plan.cases).toHaveLength(1);
  });

  it("names every mistake: neither or both of image and build, a missing Dockerfile, a relative workdir", async () => {
    const ps = await problems(
      `${TARGET}workspace: { seed: { path: project } }
tests:
  - { id: none, instruction: x, environment: { workdir: /app }, scorers: [{ type: command, run: "true" }] }
  - { id: both, instruction: x, environment: { image: a, build: { dockerfile: D } }, scorers: [{ type: command, run: "true" }] }
  - { id: missing, instruction: x, environment: { build: { dockerfile: nope/Dockerfile } }, scorers: [{ type: command, run: "true" }] }
  - { id: relative, instruction: x, environment: { image: a, workdir: app }, scorers: [{ type: command, run: "true" }] }
`,
      {},
      ENGINE_PATH,
    );
    const text = ps.map((p) => `${p.key}: ${p.message}`);
    expect(text).toContainEqual("tests[0].environment: environment needs an image or a build");
    expect(text).toContainEqual("tests[1].environment: environment has both image and build");
    expect(
      text.some((t) => t.startsWith("tests[2].environment.build.dockerfile: nope/Dockerfile does not exist")),
    ).toBe(true);
    expect(text.some((t) => t.startsWith("tests[3].environment.workdir:"))).toBe(true);
  });

  it("is a validation error naming the test where no container engine is installed", async () => {
    const ps: ConfigProblem[] = await problems(
      `${TARGET}workspace: { seed: { path: project } }
tests:
  - { id: in-image, instruction: x, environment: { image: "python:3.11" }, scorers: [{ type: command, run: "true" }] }
`,
      {},
      { PATH: tempDir("evalgate-empty-path-") },
    );
    expect(ps).toHaveLength(1);
    expect(ps[0]!.key).toBe("tests[0].environment");
    expect(ps[0]!.message).toMatch(
      /^test "in-image" runs in an environment \(image python:3\.11\), but no container engine/,
    );
    expect(ps[0]!.hint).toMatch(/EVALGATE_CONTAINER/);
  });

  it("says which EVALGATE_CONTAINER values exist", async () => {
    const ps = await problems(
      `${TARGET}workspace: { seed: { path: project } }
environment: { image: a }
tests: [{ id: t, instruction: x, scorers: [{ type: command, run: "true" }] }]
`,
      {},
      { ...ENGINE_PATH, EVALGATE_CONTAINER: "lxc" },
    );
    expect(ps[0]!.message).toMatch(/EVALGATE_CONTAINER is "lxc": set it to docker or podman/);
  });
});

describe("resources:", () => {
  it("refuses what is not a limit", async () => {
    const ps = await problems(`${TARGET}workspace: { seed: { path: project } }
resources: { memory: lots, cpus: 0, pids: 2, swap: 1GB }
tests: [{ id: t, instruction: x, scorers: [{ type: command, run: "true" }] }]
`);
    const keys = ps.map((p) => p.key);
    expect(keys).toEqual(
      expect.arrayContaining(["resources.memory", "resources.cpus", "resources.pids", "resources.swap"]),
    );
  });
});

describe("sandbox.network: { allow }", () => {
  const allowTarget = (allow: string) => `targets:
  - name: agent
    provider: command
    command: ["agent-in-the-image"]
    sandbox: { type: auto, network: { allow: ${allow} } }
`;
  it("parses the hosts of an allow-list", async () => {
    const { plan } = await load(
      `${allowTarget('["api.anthropic.com:443", "*.example.com", "[::1]:8080", "127.0.0.1"]')}workspace: { seed: { path: project } }
environment: { image: a }
tests: [{ id: t, instruction: x, scorers: [{ type: command, run: "true" }] }]
`,
      {},
      ENGINE_PATH,
    );
    expect(plan.cases[0]!.target.networkAllow).toEqual([
      { host: "api.anthropic.com", port: 443 },
      { host: "*.example.com" },
      { host: "::1", port: 8080 },
      { host: "127.0.0.1" },
    ]);
  });

  it("names an entry that is not a host, and an allow-list where there is no environment to enforce it", async () => {
    const ps = await problems(
      `${allowTarget('["https://api.example.com/v1", "host:99999"]')}workspace: { seed: { path: project } }
tests: [{ id: on-host, instruction: x, scorers: [{ type: command, run: "true" }] }]
`,
      {},
      ENGINE_PATH,
    );
    const text = ps.map((p) => `${p.key}: ${p.message}`);
    expect(text).toContainEqual(
      'targets[0].sandbox.network.allow[0]: "https://api.example.com/v1": a host and optional port, without a scheme or path',
    );
    expect(text).toContainEqual(
      'targets[0].sandbox.network.allow[1]: "host:99999": port 99999 is not between 1 and 65535',
    );
    expect(
      text.some((t) => t.startsWith('targets[0].sandbox.network: target "agent" may reach only the hosts')),
    ).toBe(true);
  });
});
