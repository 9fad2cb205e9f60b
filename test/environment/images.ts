/**
 * Container images for the environment tests, made offline: a busybox root filesystem imported
 * (`podman import` or `docker import`), and images built from it by Containerfiles. The engine keeps
 * them across test runs under a tag that is a hash of what they are made of. The engine is the one
 * evalgate would take (`EVALGATE_CONTAINER`, `DOCKER_HOST`): scripts/docker-lane.sh runs test files
 * with Docker.
 *
 * Tests that need an engine skip with a message where none can run containers, unless
 * EVALGATE_REQUIRE_CONTAINERS=1 (set by .ci/run): then the missing engine fails the run instead.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type Engine, engineExec, firstLine, probeEngine } from "../../src/environment/engine.js";
import { tempDir } from "../helpers.js";

const BUSYBOX = ["/bin/busybox", "/usr/bin/busybox"].find((p) => {
  try {
    readFileSync(p);
    return true;
  } catch {
    return false;
  }
});

/** The engine, or why the container tests cannot run here. */
export async function testEngine(): Promise<{ engine?: Engine; why?: string }> {
  const engine = await probeEngine();
  let why = typeof engine === "string" ? engine : undefined;
  if (!why && !BUSYBOX) why = "busybox-static is not installed (apt-get install busybox-static)";
  if (why && process.env.EVALGATE_REQUIRE_CONTAINERS === "1") {
    throw new Error(`EVALGATE_REQUIRE_CONTAINERS=1 but the container tests cannot run: ${why}`);
  }
  if (why) {
    console.warn(`skipping the container tests: ${why}`);
    return { why };
  }
  return { engine: engine as Engine };
}

async function exists(engine: Engine, ref: string): Promise<boolean> {
  return (await engineExec(engine, ["image", "inspect", ref])).exitCode === 0;
}

/** A busybox image: every applet linked in /bin, root's passwd entry, /tmp. */
export async function busyboxImage(engine: Engine): Promise<string> {
  const binary = readFileSync(BUSYBOX!);
  const hash = createHash("sha256").update(binary).update("rootfs-v2").digest("hex").slice(0, 12);
  const ref = `localhost/evalgate-test/busybox:${hash}`;
  if (await exists(engine, ref)) return ref;
  const root = tempDir("evalgate-rootfs-");
  for (const d of ["bin", "etc", "tmp", "root", "usr/local/bin", "workspace"]) {
    mkdirSync(path.join(root, d), { recursive: true });
  }
  chmodSync(path.join(root, "tmp"), 0o1777);
  writeFileSync(path.join(root, "bin", "busybox"), binary, { mode: 0o755 });
  const applets = execFileSync(BUSYBOX!, ["--list"], { encoding: "utf8" }).split("\n").filter(Boolean);
  for (const a of applets) if (a !== "busybox") symlinkSync("busybox", path.join(root, "bin", a));
  writeFileSync(path.join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
  writeFileSync(path.join(root, "etc", "group"), "root:x:0:\n");
  const tar = path.join(path.dirname(root), `${path.basename(root)}.tar`);
  execFileSync("tar", ["-C", root, "-cf", tar, "."]);
  const r = await engineExec(engine, ["import", "--change", "ENV PATH=/usr/local/bin:/bin", tar, ref]);
  if (r.exitCode !== 0) throw new Error(`cannot import the busybox image: ${firstLine(r)}`);
  return ref;
}

/**
 * A build context whose Containerfile adds `exam-tool` (a program the host does not have) to the
 * busybox image and sets WORKDIR /app.
 */
export function toolContext(base: string, dir = tempDir("evalgate-ctx-")): string {
  writeFileSync(
    path.join(dir, "Containerfile"),
    `FROM ${base}\nCOPY exam-tool /usr/local/bin/exam-tool\nRUN chmod 755 /usr/local/bin/exam-tool\nWORKDIR /app\n`,
  );
  writeFileSync(path.join(dir, "exam-tool"), '#!/bin/sh\necho "exam-tool ran: $*"\n');
  return dir;
}

/**
 * The busybox image re-imported under another architecture than the runner's (arm64 on an amd64
 * runner, else amd64): its programs still run here, but the image says it is for another machine.
 * Podman: `import --arch`. Docker's `import --platform` keeps the runner's architecture (20.10), so
 * there the exported root filesystem is built `FROM scratch` with `--platform` (legacy builder: no
 * buildx needed, nothing runs).
 */
export async function foreignArchImage(engine: Engine): Promise<{ ref: string; arch: string } | undefined> {
  const arch = process.arch === "arm64" ? "amd64" : "arm64";
  const base = await busyboxImage(engine);
  const ref = `${base.replace("/busybox:", "/busybox-foreign:")}-${arch}`;
  if (await exists(engine, ref)) return { ref, arch };
  const tar = path.join(tempDir("evalgate-foreign-"), "rootfs.tar");
  const name = `evalgate-test-foreign-${process.pid}`;
  await engineExec(engine, ["create", "--name", name, base, "true"]);
  const exported = await engineExec(engine, ["export", "-o", tar, name]);
  await engineExec(engine, ["rm", "-f", name]);
  if (exported.exitCode !== 0) throw new Error(`cannot export the busybox image: ${firstLine(exported)}`);
  if (engine.kind === "docker") {
    writeFileSync(
      path.join(path.dirname(tar), "Dockerfile"),
      "FROM scratch\nADD rootfs.tar /\nENV PATH=/usr/local/bin:/bin\n",
    );
    const built = await engineExec(
      engine,
      ["build", "-q", "--platform", `linux/${arch}`, "-t", ref, path.dirname(tar)],
      { env: { DOCKER_BUILDKIT: "0" } },
    );
    if (built.exitCode !== 0) throw new Error(`cannot build the foreign image: ${firstLine(built)}`);
    return { ref, arch };
  }
  const r = await engineExec(engine, [
    "import",
    "--arch",
    arch,
    "--change",
    "ENV PATH=/usr/local/bin:/bin",
    tar,
    ref,
  ]);
  if (r.exitCode !== 0) throw new Error(`cannot import the foreign image: ${firstLine(r)}`);
  return { ref, arch };
}
