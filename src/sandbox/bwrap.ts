/**
 * `sandbox: bwrap`: the agent runs under bubblewrap in new namespaces. It sees the system folders
 * and the folders on its PATH read-only, its own program's folder read-only, its attempt folder
 * (workspace, HOME, TMPDIR, prompt) writable, a private /tmp, and nothing else of the machine: not
 * the repository (hidden verifiers stay hidden), not the runner's home, not other attempts. The
 * network is a new, empty namespace unless the target sets `network: true`. Verifiers, reference
 * patches and the bundle are masked even inside a folder it sees (its program's, `read_only`).
 */
import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import path from "node:path";
import { execa } from "execa";
import { type Command, findProgram, programOf } from "./commands.js";
import { sandboxExplanation } from "./explain.js";
import { type OverlayMount, overlaidArgv } from "./overlay.js";
import { type ProcessRunner, type ProcessSpec, willStart } from "./process.js";
import { shimRoots } from "./shims.js";

/**
 * A target's `sandbox:`: `bwrap`, the agent runs under bubblewrap (this file); `auto` (the default),
 * under the strongest isolation the run's probe found (isolation.ts).
 */
export interface SandboxSpec {
  kind: "bwrap" | "auto";
  /** The agent may reach the network (default: a new, empty network namespace). */
  network: boolean;
  /** Extra folders mounted read-only (absolute). */
  readOnly: string[];
}

/** Read-only system folders, mounted when they exist (symlinks such as /bin → usr/bin are mirrored). */
const SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

function isUnder(child: string, parents: readonly string[]): boolean {
  return parents.some((p) => child === p || child.startsWith(`${p}/`));
}

/**
 * The folder whose packages a PATH folder's programs link into: `node_modules` for
 * `node_modules/.bin`, the tool's folder for a GitHub tool-cache `bin` (setup-node's global
 * packages). Other `bin` folders are not widened: their parent may be the repository itself.
 */
export function packageRoot(dir: string): string | undefined {
  if (path.basename(dir) === ".bin" && path.basename(path.dirname(dir)) === "node_modules") {
    return path.dirname(dir);
  }
  if (/\/hostedtoolcache\/[^/]+\/[^/]+\/[^/]+\/bin$/.test(dir)) return path.dirname(dir);
  return undefined;
}

/** One mount of a folder or file the process sees (besides the system's). */
interface Mount {
  flag: "--ro-bind" | "--bind" | "--tmpfs";
  src?: string;
  dest: string;
}

/** Folders never shown at the top of a folder the process sees: the repository, evalgate's state. */
const ALWAYS_HIDDEN = [".git", ".evalgate"];

/**
 * Absolute paths a shell line names (its words, and `--flag=/path` values), for `auto` to show.
 * A word behind a placeholder or a variable is not known before the line runs.
 */
export function shellPaths(line: string): string[] {
  return line
    .split(/[\s;|&()<>=]+/)
    .map((w) => w.replace(/^['"]+|['"]+$/g, ""))
    .filter((w) => w.startsWith("/") && !/[$`*?{]/.test(w));
}

/**
 * The bubblewrap arguments (before `--`) for one process. `hidden` are files and folders it must
 * not read even where a folder it sees holds them (verifiers, references, the bundle, the run's
 * work folder); every `.git` and `.evalgate` at the top of a folder it sees is hidden too
 * (docs/decisions/0187). Mounts are made shallow first, so a writable folder inside a hidden one
 * (the attempt folder inside the run's work folder) is still there.
 */
export function bwrapArgs(
  spec: ProcessSpec,
  sandbox: SandboxSpec,
  writable: readonly string[],
  hidden: readonly string[] = [],
): string[] {
  const args = ["--die-with-parent", "--unshare-all", "--hostname", "evalgate"];
  if (sandbox.network) args.push("--share-net");
  const mounted: string[] = [];
  for (const dir of SYSTEM) {
    let s: ReturnType<typeof lstatSync>;
    try {
      s = lstatSync(dir);
    } catch {
      continue;
    }
    if (s.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else if (s.isDirectory()) {
      args.push("--ro-bind", dir, dir);
      mounted.push(dir);
    }
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  const mounts: Mount[] = [];
  const readOnly = (p: string) => {
    if (!path.isAbsolute(p) || !existsSync(p)) return;
    const real = realpathSync(p);
    if (isUnder(real, mounted) || isUnder(p, mounted)) return;
    mounts.push({ flag: "--ro-bind", src: real, dest: p });
    mounted.push(p);
  };
  // DNS: /etc/resolv.conf often points into /run (systemd-resolved).
  if (sandbox.network && existsSync("/etc/resolv.conf"))
    readOnly(path.dirname(realpathSync("/etc/resolv.conf")));
  for (const dir of (spec.env.PATH ?? "").split(path.delimiter)) {
    readOnly(dir);
    // The programs in these folders are symlinks into the packages beside them.
    const root = packageRoot(dir);
    if (root) readOnly(root);
    // A version manager's shims exec the manager, which runs a version under its root.
    for (const r of shimRoots(dir)) readOnly(r);
  }
  const program = programOf(spec.command);
  if (program && path.isAbsolute(program)) {
    const dir = path.dirname(program);
    readOnly(dir);
    // A program given by path may be a link too: `bin: ./node_modules/.bin/gemini` points into its
    // package, an installer's `~/.local/bin/claude` into a versions folder. Without these the
    // sandbox would show the link but not what it runs.
    const root = packageRoot(dir);
    if (root) readOnly(root);
    if (existsSync(program)) readOnly(path.dirname(realpathSync(program)));
  }
  for (const dir of sandbox.readOnly) readOnly(dir);
  if (sandbox.kind === "auto") showNamed(spec, program, writable, readOnly);
  mounts.push(...masks(mounts, hidden, writable));
  for (const dir of writable) mounts.push({ flag: "--bind", src: dir, dest: dir });
  const depth = (m: Mount) => m.dest.split("/").length;
  for (const m of mounts.sort((a, b) => depth(a) - depth(b))) {
    args.push(m.flag, ...(m.src === undefined ? [] : [m.src]), m.dest);
  }
  // A mask is an empty folder, read-only once what lies inside it (a writable folder) is mounted.
  for (const m of mounts) if (m.flag === "--tmpfs") args.push("--remount-ro", m.dest);
  args.push("--remount-ro", "/", "--chdir", spec.cwd);
  return args;
}

/**
 * auto is the default, so what a process was given by name keeps working: the real folder of a
 * program found on PATH through a link, every folder named by an absolute path on its command line
 * (a file's folder: a script imports what lies beside it), and every file or folder named by a
 * variable of its environment: a file as that file alone (a credentials file at a checkout's root
 * must not show the checkout). Never `/`, never a folder holding a writable folder.
 */
function showNamed(
  spec: ProcessSpec,
  program: string | undefined,
  writable: readonly string[],
  readOnly: (p: string) => void,
): void {
  const found = program && !path.isAbsolute(program) ? findProgram(program, spec.env.PATH ?? "") : undefined;
  if (found) readOnly(path.dirname(realpathSync(found)));
  // The sandbox's own /dev and /proc are never replaced by the runner's (GIT_CONFIG_VALUE=/dev/null).
  const clashes = (p: string) =>
    isUnder(p, ["/dev", "/proc", "/sys"]) || writable.some((w) => isUnder(w, [p]) || isUnder(p, [w]));
  const words = "argv" in spec.command ? spec.command.argv.slice(1) : shellPaths(spec.command.shell);
  for (const value of words) {
    if (!path.isAbsolute(value) || value === "/" || !existsSync(value) || clashes(value)) continue;
    const isDir = lstatSync(value).isDirectory();
    const dir = isDir ? value : path.dirname(value);
    if (dir === "/" || writable.some((w) => isUnder(w, [dir]))) continue;
    readOnly(dir);
    if (!isDir) readOnly(path.dirname(realpathSync(value)));
  }
  for (const value of Object.values(spec.env)) {
    if (!path.isAbsolute(value) || value === "/" || !existsSync(value) || clashes(value)) continue;
    readOnly(value);
  }
}

/**
 * Masks for what must stay out of sight inside the folders shown: `hidden` (found through the path a
 * folder is shown at, or its real path) and `.git` / `.evalgate` at the top of each. Never inside a
 * writable folder: that is the process's own.
 */
function masks(shown: readonly Mount[], hidden: readonly string[], writable: readonly string[]): Mount[] {
  const wanted = new Set<string>();
  for (const m of shown) {
    const st = lstatSync(m.dest);
    if (st.isDirectory()) for (const name of ALWAYS_HIDDEN) wanted.add(path.join(m.dest, name));
    for (const h of hidden) {
      if (isUnder(h, [m.dest])) wanted.add(h);
      else if (m.src && isUnder(h, [m.src])) wanted.add(m.dest + h.slice(m.src.length));
    }
  }
  const out: Mount[] = [];
  for (const h of wanted) {
    const s = statSync(h, { throwIfNoEntry: false });
    if (!s || writable.some((w) => isUnder(h, [w]))) continue;
    out.push(
      s.isDirectory() ? { flag: "--tmpfs", dest: h } : { flag: "--ro-bind", src: "/dev/null", dest: h },
    );
  }
  return out;
}

function wrapped(
  bwrap: string,
  before: string[],
  command: Command,
  overlays: readonly OverlayMount[],
): Command {
  const inner = "argv" in command ? command.argv : ["/bin/sh", "-c", command.shell];
  const argv = [bwrap, ...before, "--", ...inner];
  // What setup built, shared with an upper layer of the attempt's own (overlay.ts).
  return { argv: overlays.length > 0 ? overlaidArgv(argv, overlays) : argv };
}

/** A runner that starts every process under bubblewrap. */
export function sandboxedRunner(
  inner: ProcessRunner,
  bwrap: string,
  sandbox: SandboxSpec,
  writable: readonly string[],
  hidden: readonly string[] = [],
  fix = TARGET_FIX,
  overlays: readonly OverlayMount[] = [],
): ProcessRunner {
  return {
    run: async (spec) => {
      // A program that will not start is started as it is, so the error stays the system's own.
      if (!willStart(spec.command, spec.cwd, spec.env.PATH ?? "")) return inner.run(spec);
      const args = bwrapArgs(spec, sandbox, writable, hidden);
      const outcome = await inner.run({
        ...spec,
        command: wrapped(bwrap, args, spec.command, overlays),
        // bubblewrap's PID namespace ends with the agent: nothing it started survives.
        contained: true,
      });
      // A failure the sandbox may have caused says so, in the message and the log.
      const why = sandboxExplanation(spec, args, outcome, fix);
      if (!why) return outcome;
      if (spec.logFile) await appendFile(spec.logFile, `\n${why}\n`).catch(() => undefined);
      return { ...outcome, tail: `${outcome.tail.replace(/\n*$/, "")}\n${why}\n` };
    },
  };
}

/** Where a folder the agent needs is shown from: its target's `sandbox:`. */
const TARGET_FIX = "add {DIR} to the target's `sandbox: { read_only: [...] }`";

/**
 * What the run contains the processes with that run the agent's code besides the agent: setup (third-
 * party install scripts) and scorers (the agent's code, its tests). Under bubblewrap when the run
 * has it; else `inner` as it is (the run's reaper).
 */
export interface Containment {
  /** The bubblewrap program, when the run has it. */
  bwrap?: string;
  /** What no contained process may read wherever it lies: the answer key, the run's state. */
  hidden: readonly string[];
}

export interface ContainedView {
  /** Network: off unless the eval says so. */
  network: boolean;
  /** Folders shown read-only (besides the system's, PATH's and what the command names). */
  readOnly: readonly string[];
  /** The only folders it may write. */
  writable: readonly string[];
  /** Replaces the run's hidden list (a scorer sees its own test's verifiers). */
  hidden?: readonly string[];
  /** The fix a sandbox-caused failure names ({DIR}: the folder to show). */
  fix?: string;
  /** Trees of the start shared with an upper layer of the attempt's own (overlay.ts). */
  overlays?: readonly OverlayMount[];
}

export function containedRunner(inner: ProcessRunner, c: Containment, view: ContainedView): ProcessRunner {
  if (!c.bwrap) return inner;
  const sandbox: SandboxSpec = { kind: "auto", network: view.network, readOnly: [...view.readOnly] };
  const hidden = view.hidden ?? c.hidden;
  return sandboxedRunner(inner, c.bwrap, sandbox, view.writable, hidden, view.fix, view.overlays);
}

/** The bubblewrap program: $EVALGATE_BWRAP, else `bwrap` on PATH. */
export function bwrapProgram(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.EVALGATE_BWRAP) return existsSync(env.EVALGATE_BWRAP) ? env.EVALGATE_BWRAP : undefined;
  return findProgram("bwrap", env.PATH ?? "");
}

const NAMESPACE_HINT =
  "On Ubuntu 23.10 and later (GitHub's ubuntu-24.04 runners) AppArmor restricts unprivileged user namespaces: " +
  "run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` in a step before evalgate. " +
  "In a container, the container must be allowed to create namespaces (for example docker run --privileged). " +
  "Or remove sandbox: bwrap from the target";

/**
 * Whether bubblewrap is installed and can create the namespaces the sandbox needs on this machine.
 * Returns the program's path, or a message that says which of the two is wrong and what to do.
 */
export async function checkBwrap(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ ok: true; program: string } | { ok: false; message: string }> {
  const program = bwrapProgram(env);
  if (!program) {
    return {
      ok: false,
      message: env.EVALGATE_BWRAP
        ? `EVALGATE_BWRAP names ${env.EVALGATE_BWRAP}, which does not exist`
        : "bubblewrap (bwrap) is not installed on this runner: install it (Debian/Ubuntu: apt-get install bubblewrap), or remove sandbox: bwrap from the target",
    };
  }
  const r = await execa(program, ["--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "true"], {
    reject: false,
    timeout: 20_000,
    env: { PATH: env.PATH ?? "/usr/bin:/bin" },
    extendEnv: false,
  });
  if (r.exitCode === 0) return { ok: true, program };
  const why = String(r.stderr || r.stdout || r.message)
    .trim()
    .split("\n")[0];
  return {
    ok: false,
    message: `bubblewrap cannot create namespaces on this runner (${program}: ${why}). ${NAMESPACE_HINT}`,
  };
}
