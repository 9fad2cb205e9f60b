/**
 * bench/environments: what running a command in an environment costs next to a plain
 * `podman run` (or `docker run`) of the same image, workspace and command, in alternating rounds.
 *
 *   plain      ENGINE run --rm -v WS:/app -w /app --network none IMAGE sh -c CMD
 *              (with the flags this machine needs for any container to start: bench/README below)
 *   evalgate   the environment's process runner (src/environment/container.ts): a named, tracked
 *              container with an init, no engine log, Podman's own timeout, env by name
 *   +limits    the same with memory and pids limits and the cgroup evalgate reads them from
 *
 * Figures, not pass/fail. The image is a busybox root filesystem imported offline. Rounds:
 * BENCH_ENV_ROUNDS (default 10). Needs a container engine (EVALGATE_CONTAINER to pick one).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { probeCgroups } from "../lib/environment/cgroup.js";
import { containerRunner } from "../lib/environment/container.js";
import { engineExec, probeEngine } from "../lib/environment/engine.js";
import { prepareImage } from "../lib/environment/image.js";
import { ChildProcessRunner } from "../lib/sandbox/process.js";

const ROUNDS = Number(process.env.BENCH_ENV_ROUNDS ?? 10);
const CMD = "echo attempt > out.txt && cat out.txt >/dev/null && ls >/dev/null";

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
const ms = (x) => `${Math.round(x)} ms`;
const spread = (xs) => `${ms(median(xs))} (${ms(Math.min(...xs))} – ${ms(Math.max(...xs))})`;

/** A busybox image imported from a root filesystem (the tests' image: test/environment/images.ts). */
async function busybox(engine) {
  const bin = ["/bin/busybox", "/usr/bin/busybox"].find((p) => {
    try {
      readFileSync(p);
      return true;
    } catch {
      return false;
    }
  });
  if (!bin) throw new Error("busybox-static is not installed");
  const binary = readFileSync(bin);
  const tag = createHash("sha256").update(binary).update("rootfs-v2").digest("hex").slice(0, 12);
  const ref = `localhost/evalgate-test/busybox:${tag}`;
  if ((await engineExec(engine, ["image", "inspect", ref])).exitCode === 0) return ref;
  const root = mkdtempSync(path.join(os.tmpdir(), "evalgate-bench-rootfs-"));
  for (const d of ["bin", "etc", "tmp", "root", "usr/local/bin", "workspace"])
    mkdirSync(path.join(root, d), { recursive: true });
  writeFileSync(path.join(root, "bin", "busybox"), binary, { mode: 0o755 });
  for (const a of execFileSync(bin, ["--list"], { encoding: "utf8" }).split("\n").filter(Boolean)) {
    if (a !== "busybox") symlinkSync("busybox", path.join(root, "bin", a));
  }
  writeFileSync(path.join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
  writeFileSync(path.join(root, "etc", "group"), "root:x:0:\n");
  const tar = `${root}.tar`;
  execFileSync("tar", ["-C", root, "-cf", tar, "."]);
  const r = await engineExec(engine, ["import", "--change", "ENV PATH=/usr/local/bin:/bin", tar, ref]);
  if (r.exitCode !== 0) throw new Error(`import failed: ${r.stderr}`);
  rmSync(root, { recursive: true, force: true });
  rmSync(tar, { force: true });
  return ref;
}

export async function environments() {
  const engine = await probeEngine();
  if (typeof engine === "string") {
    console.log(`environments: skipped (${engine})`);
    return;
  }
  const ref = await busybox(engine);
  const image = await prepareImage(engine, { kind: "image", image: ref });
  if ("error" in image) throw new Error(image.error);
  const root = mkdtempSync(path.join(os.tmpdir(), "evalgate-bench-env-"));
  const ws = path.join(root, "ws");
  mkdirSync(ws);
  writeFileSync(path.join(ws, "README"), "bench\n");
  const cgroups = probeCgroups();
  const base = new ChildProcessRunner();
  const setup = { engine, image, label: "bench", mounts: [{ host: ws, container: "/app" }], network: false };
  const plainArgs = [
    ...engine.globalArgs,
    "run",
    "--rm",
    ...engine.runArgs,
    "--network",
    "none",
    "-v",
    `${ws}:/app`,
    "-w",
    "/app",
    image.id,
    "sh",
    "-c",
    CMD,
  ];
  const spec = { command: { shell: CMD }, cwd: ws, env: { HOME: ws, TMPDIR: ws }, timeoutMs: 120_000 };
  const sides = {
    plain: async () => {
      const r = await engineExec(engine, plainArgs);
      if (r.exitCode !== 0) throw new Error(`plain run failed: ${r.stderr}`);
    },
    evalgate: async () => {
      const r = await containerRunner(base, setup).run(spec);
      if (r.exitCode !== 0) throw new Error(`evalgate run failed: ${r.tail}`);
    },
    "+limits": async () => {
      const r = await containerRunner(base, {
        ...setup,
        resources: { memoryBytes: 256 * 2 ** 20, pids: 256 },
        ...(typeof cgroups === "string" ? {} : { cgroups }),
      }).run(spec);
      if (r.exitCode !== 0) throw new Error(`evalgate run with limits failed: ${r.tail}`);
    },
  };
  const names = Object.keys(sides);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  // One warm-up of each, then rounds in a rotated order so no side always runs first.
  for (const n of names) await sides[n]();
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const n = names[(round + i) % names.length];
      const t = performance.now();
      await sides[n]();
      times[n].push(performance.now() - t);
    }
  }
  rmSync(root, { recursive: true, force: true });
  const plain = median(times.plain);
  console.log(`environments: one process in a container, ${engine.kind}, ${ROUNDS} rounds (median, range)`);
  console.log(
    `  flags this machine needs for any container: ${[...engine.globalArgs, ...engine.runArgs].join(" ") || "none"}`,
  );
  for (const n of names) {
    const m = median(times[n]);
    console.log(`  ${n.padEnd(9)} ${spread(times[n]).padEnd(28)} ${(m / plain).toFixed(2)}x plain`);
  }
}
