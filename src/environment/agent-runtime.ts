/**
 * An agent CLI of the runner's inside a case's image (docs/decisions/0216): the program is not
 * installed into the image; its runtime is mounted read-only at /evalgate/agent and started through
 * the runtime's own dynamic loader, given explicitly:
 *
 *   /evalgate/agent/lib/ld-linux-x86-64.so.2 --library-path /evalgate/agent/lib PROGRAM ARGS…
 *
 * so the image needs no libc, and the agent's children (its tools' shell commands) use the image's
 * own libc and programs (no LD_LIBRARY_PATH is set). A static program (codex's native binary) runs
 * as it is. A node program runs with the runner's `node`, its package folder mounted beside it.
 * The libraries `ldd` names are copied once per run into the work root, keyed by the programs' digests.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync, realpathSync } from "node:fs";
import { chmod, copyFile, mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { execa } from "execa";
import type { Mount } from "./container.js";

/** Where the runtime is mounted in the image. */
export const RUNTIME_DIR = "/evalgate/agent";
const LIB = `${RUNTIME_DIR}/lib`;

export interface AgentRuntime {
  /** What the container runs in place of the program's host path. */
  head: string[];
  mounts: Mount[];
  /** Variables the program needs in the image (RUNTIME_ENV). */
  env: Record<string, string>;
}

/**
 * Under an explicit loader a program's own path (/proc/self/exe) is the loader's, so a CLI must not
 * start itself again through it: gemini-cli relaunches node with a bigger heap (off), Claude Code
 * runs its embedded ripgrep as itself (off: its Grep and Glob use the image's `rg`).
 */
const RUNTIME_ENV: Record<string, string> = { GEMINI_CLI_NO_RELAUNCH: "true", USE_BUILTIN_RIPGREP: "0" };

const ARCHITECTURES: Record<string, string> = {
  x64: "amd64",
  arm64: "arm64",
  arm: "arm",
  ia32: "386",
  ppc64: "ppc64le",
  s390x: "s390x",
};

/** The machine name of the runner, as images name their architecture. */
export function runnerArchitecture(): string {
  return ARCHITECTURES[process.arch] ?? process.arch;
}

interface Program {
  /** The executable the container starts (native, or node). */
  exe: string;
  /** A node program's script and the node_modules folder holding it. */
  script?: { file: string; modules: string };
}

async function firstBytes(file: string, n: number): Promise<Buffer> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** The package folder (nearest package.json) of a file, and its name. */
async function packageOf(file: string): Promise<{ dir: string; name: string } | undefined> {
  for (let d = path.dirname(file); d !== path.dirname(d); d = path.dirname(d)) {
    const pj = path.join(d, "package.json");
    if (existsSync(pj)) {
      try {
        return { dir: d, name: String(JSON.parse(await readFile(pj, "utf8")).name ?? "") };
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The node_modules folder the package is installed in (its hoisted dependencies), else the package. */
function modulesOf(pkgDir: string): string {
  let d = path.dirname(pkgDir);
  if (path.basename(d).startsWith("@")) d = path.dirname(d);
  return path.basename(d) === "node_modules" ? d : pkgDir;
}

const CODEX_TRIPLES: Record<string, string> = {
  x64: "x86_64-unknown-linux-musl",
  arm64: "aarch64-unknown-linux-musl",
};

/** What to start for a program path of the runner's; a string says why it cannot run in an image. */
async function programOf(program: string): Promise<Program | string> {
  const real = realpathSync(program);
  const head = await firstBytes(real, 256);
  if (head.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) return { exe: real };
  const line = head.toString("utf8").split("\n")[0] ?? "";
  if (!line.startsWith("#!") || !/\bnode\b/.test(line))
    return `${program} is neither a native program nor a node script (it starts ${JSON.stringify(line.slice(0, 60))})`;
  const pkg = await packageOf(real);
  // codex.js only finds and execs its platform package's native (static) binary: run that directly.
  if (pkg?.name === "@openai/codex") {
    const triple = CODEX_TRIPLES[process.arch];
    try {
      const platform = path.dirname(
        createRequire(real).resolve(`@openai/codex-linux-${process.arch}/package.json`),
      );
      const native = path.join(platform, "vendor", triple ?? "?", "bin", "codex");
      if (triple && existsSync(native)) return { exe: realpathSync(native) };
    } catch {
      // Reported below.
    }
    return `codex's native binary (@openai/codex-linux-${process.arch}) is not installed beside ${real}`;
  }
  return {
    exe: process.execPath,
    script: { file: real, modules: modulesOf(pkg?.dir ?? path.dirname(real)) },
  };
}

/** The loader and the libraries `ldd` names for a native program; undefined for a static one. */
async function librariesOf(exe: string): Promise<{ loader: string; libs: string[] } | undefined | string> {
  const r = await execa("ldd", [exe], { reject: false, timeout: 60_000 });
  const text = `${r.stdout}\n${r.stderr}`;
  if (/statically linked|not a dynamic executable/.test(text)) return undefined;
  if (r.exitCode !== 0) return `ldd ${exe} failed: ${text.trim().split("\n")[0]}`;
  let loader: string | undefined;
  const libs: string[] = [];
  for (const l of String(r.stdout).split("\n")) {
    const linked = /^\s*\S+ => (\/\S+) \(0x/.exec(l);
    if (linked) libs.push(linked[1]!);
    else if (/^\s*(\/\S*ld-\S+) \(0x/.test(l)) loader = /^\s*(\/\S+)/.exec(l)![1]!;
    else if (/=> not found/.test(l)) return `${exe} needs a library the runner lacks: ${l.trim()}`;
  }
  return loader ? { loader, libs } : `ldd named no dynamic loader for ${exe}`;
}

async function digestOf(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** The runtimes of a run: each program's assembled once, its libraries in `root`. */
export class AgentRuntimes {
  private readonly made = new Map<string, Promise<AgentRuntime | string>>();

  constructor(private readonly root: string) {}

  /** Library folders by the native program's path: node serves every node CLI. */
  private readonly folders = new Map<string, Promise<string>>();

  /** The runtime of a program (a host path), or why it cannot run in an image. */
  of(program: string): Promise<AgentRuntime | string> {
    let p = this.made.get(program);
    if (!p) {
      p = this.assemble(program).catch((e: Error) => `cannot assemble its runtime: ${e.message}`);
      this.made.set(program, p);
    }
    return p;
  }

  private async assemble(program: string): Promise<AgentRuntime | string> {
    const found = await programOf(program);
    if (typeof found === "string") return found;
    const exeName = path.basename(found.exe);
    const exeIn = `${RUNTIME_DIR}/bin/${exeName}`;
    const mounts: Mount[] = [{ host: found.exe, container: exeIn, readOnly: true }];
    const env: Record<string, string> = { ...RUNTIME_ENV };
    const args: string[] = [];
    if (found.script) {
      const { file, modules } = found.script;
      mounts.push({ host: modules, container: `${RUNTIME_DIR}/node_modules`, readOnly: true });
      args.push(`${RUNTIME_DIR}/node_modules${file.slice(modules.length)}`);
    }
    const libs = await librariesOf(found.exe);
    if (typeof libs === "string") return libs;
    if (!libs) return { head: [exeIn, ...args], mounts, env };
    let folder = this.folders.get(found.exe);
    if (!folder) {
      folder = this.libraryFolder(found.exe, libs);
      this.folders.set(found.exe, folder);
    }
    const dir = await folder;
    mounts.push({ host: dir, container: LIB, readOnly: true });
    const loaderIn = `${LIB}/${path.basename(libs.loader)}`;
    return { head: [loaderIn, "--library-path", LIB, exeIn, ...args], mounts, env };
  }

  /** The program's libraries and loader, copied once into a folder named by its digest. */
  private async libraryFolder(exe: string, libs: { loader: string; libs: string[] }): Promise<string> {
    const key = (await digestOf(exe)).slice(0, 16);
    const dir = path.join(this.root, "agent-runtime", key, "lib");
    if (existsSync(path.join(dir, ".complete"))) return dir;
    const staging = `${dir}.partial-${process.pid}`;
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    for (const f of [libs.loader, ...libs.libs]) {
      const to = path.join(staging, path.basename(f));
      await copyFile(realpathSync(f), to);
      // The loader is the program the container starts.
      await chmod(to, 0o755);
    }
    await writeFile(path.join(staging, ".complete"), `${exe}\n`);
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
    return dir;
  }
}
