/**
 * Preparing an environment's image with a real engine, offline: a Containerfile built (cached
 * across runs), an image pulled from a registry on loopback, by tag and by digest, with the digest
 * recorded.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { containerRunner } from "../../src/environment/container.js";
import { engineExec } from "../../src/environment/engine.js";
import {
  buildTag,
  digestOf,
  isLoopbackRegistry,
  prepareImage,
  registryOf,
  repositoryOf,
} from "../../src/environment/image.js";
import { ChildProcessRunner } from "../../src/sandbox/process.js";
import { tempDir } from "../helpers.js";
import { busyboxImage, testEngine, toolContext } from "./images.js";
import { registryProgram, startRegistry } from "./registry.js";

const { engine } = await testEngine();

describe("image references", () => {
  it("finds the registry, the repository and the loopback ones", () => {
    expect(registryOf("127.0.0.1:5000/a/b:1")).toBe("127.0.0.1:5000");
    expect(registryOf("python:3.11")).toBeUndefined();
    expect(registryOf("library/python")).toBeUndefined();
    expect(isLoopbackRegistry("localhost:5000")).toBe(true);
    expect(isLoopbackRegistry("127.0.0.1:5000")).toBe(true);
    expect(isLoopbackRegistry("ghcr.io")).toBe(false);
    expect(repositoryOf("127.0.0.1:5000/a/b:1@sha256:abc")).toBe("127.0.0.1:5000/a/b");
    expect(repositoryOf("127.0.0.1:5000/a/b")).toBe("127.0.0.1:5000/a/b");
  });

  it("records the pinned digest, else the registry's for the repository, else the image id", () => {
    const d = `sha256:${"a".repeat(64)}`;
    const image = { id: "sha256:id", workdir: "", repoDigests: [`docker.io/library/python@${d}`] };
    expect(digestOf(`python:3.11@sha256:${"b".repeat(64)}`, image)).toBe(`sha256:${"b".repeat(64)}`);
    expect(digestOf("python:3.11", image)).toBe(d);
    expect(digestOf("other:1", image)).toBe("sha256:id");
  });

  it("keeps a build under one tag per Dockerfile and context", () => {
    expect(buildTag("/r/tasks/t1/environment/Dockerfile", "/r/tasks/t1/environment")).toMatch(
      /^localhost\/evalgate-env\/environment:[0-9a-f]{16}$/,
    );
    expect(buildTag("/a/Dockerfile", "/a")).not.toBe(buildTag("/b/Dockerfile", "/b"));
  });
});

describe.skipIf(!engine)("prepareImage (real engine)", () => {
  it("builds a Containerfile with its context, takes its WORKDIR, and finds its layers again", async () => {
    const base = await busyboxImage(engine!);
    const ctx = toolContext(base);
    const spec = { kind: "build" as const, dockerfile: `${ctx}/Containerfile`, context: ctx };
    const first = await prepareImage(engine!, spec);
    if ("error" in first) throw new Error(first.error);
    expect(first.source).toBe("built");
    expect(first.workdir).toBe("/app");
    expect(first.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const again = await prepareImage(engine!, spec);
    if ("error" in again) throw new Error(again.error);
    // The engine's layer cache: the same image, not a new one.
    expect(again.id).toBe(first.id);
    const ws = tempDir("evalgate-ws-");
    const r = await containerRunner(new ChildProcessRunner(), {
      engine: engine!,
      image: first,
      label: "tool",
      mounts: [{ host: ws, container: first.workdir }],
      network: false,
    }).run({
      command: { argv: ["exam-tool", "x"] },
      cwd: ws,
      env: {},
      timeoutMs: 60_000,
      captureStdout: true,
    });
    expect(r.stdout).toBe("exam-tool ran: x\n");
  });

  it("says why a build failed", async () => {
    const ctx = tempDir("evalgate-ctx-");
    const { writeFileSync } = await import("node:fs");
    const missing = `/no/such/program-${path.basename(ctx)}`;
    writeFileSync(`${ctx}/Dockerfile`, `FROM scratch\nRUN ${missing}\n`);
    const r = await prepareImage(engine!, { kind: "build", dockerfile: `${ctx}/Dockerfile`, context: ctx });
    expect("error" in r && r.error).toMatch(/^cannot build .*Dockerfile: /);
    // before (Docker without buildx, the daemon's builder): the failed step's container stayed.
    const left = await engineExec(engine!, ["ps", "-a", "--no-trunc", "--format", "{{.Command}}"]);
    expect(left.stdout).not.toContain(missing);
  });

  describe.skipIf(!registryProgram())("pulls from a registry (docker-registry on loopback)", () => {
    it("pulls by tag once, records the registry digest, and refuses a digest that does not match", async () => {
      const registry = await startRegistry();
      try {
        const base = await busyboxImage(engine!);
        const ref = `${registry.address}/evalgate/busybox:1`;
        const tls = engine!.kind === "podman" ? ["--tls-verify=false"] : [];
        expect((await engineExec(engine!, ["tag", base, ref])).exitCode).toBe(0);
        const pushed = await engineExec(engine!, ["push", ...tls, ref]);
        expect(pushed.exitCode, pushed.stderr).toBe(0);
        await engineExec(engine!, ["rmi", ref]);

        const pulled = await prepareImage(engine!, { kind: "image", image: ref });
        if ("error" in pulled) throw new Error(pulled.error);
        expect(pulled.source).toBe("pulled");
        expect(pulled.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(pulled.workdir).toBe("/workspace");
        // The digest is the registry's: a pull by it is the same image.
        const pinned = `${ref}@${pulled.digest}`;
        const byDigest = await prepareImage(engine!, { kind: "image", image: pinned });
        if ("error" in byDigest) throw new Error(byDigest.error);
        expect(byDigest.id).toBe(pulled.id);
        expect(byDigest.digest).toBe(pulled.digest);

        const wrong = await prepareImage(engine!, {
          kind: "image",
          image: `${ref}@sha256:${"0".repeat(64)}`,
        });
        expect("error" in wrong && wrong.error).toMatch(/^cannot pull /);
      } finally {
        registry.stop();
      }
    });
  });
});
