/**
 * `sandbox: bwrap`: the agent runs under bubblewrap in new namespaces. It sees the system folders
 * and the folders on its PATH read-only, its own program's folder read-only, its attempt folder
 * (workspace, HOME, TMPDIR, prompt) writable, a private /tmp, and nothing else of the machine: not
 * the repository (hidden verifiers stay hidden), not the runner's home, not other attempts. The
 * network is a new, empty namespace unless the target sets `network: true`. Verifiers, reference
 * patches and the bundle are masked even inside a folder it sees (its program's, `read_only`).
 */
import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { type Command, findProgram, programOf } from "./commands.js";
import { type ProcessRunner, type ProcessSpec, willStart } from "./process.js";

/**
 * `sandbox: bwrap`: the agent runs under bubblewrap (below); `auto` (the default): under
 * the strongest isolation the run's probe found (sandbox/isolation.ts).
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

/**
 * The bubblewrap arguments (before `--`) for one agent process. `hidden` are files and folders the
 * agent must not read even where a folder it sees holds them: an agent kept beside its eval file
 * has that folder mounted as its program's, with the verifiers, reference patches and the bundle.
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
  const readOnly = (dir: string) => {
    if (!path.isAbsolute(dir) || !existsSync(dir)) return;
    const real = realpathSync(dir);
    if (isUnder(real, mounted) || isUnder(dir, mounted)) return;
    args.push("--ro-bind", real, dir);
    mounted.push(dir);
  };
  // DNS: /etc/resolv.conf often points into /run (systemd-resolved).
  if (sandbox.network && existsSync("/etc/resolv.conf"))
    readOnly(path.dirname(realpathSync("/etc/resolv.conf")));
  for (const dir of (spec.env.PATH ?? "").split(path.delimiter)) {
    readOnly(dir);
    // The programs in these folders are symlinks into the packages beside them.
    const root = packageRoot(dir);
    if (root) readOnly(root);
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
  if (sandbox.kind === "auto") {
    // auto is the default, so what an agent was given by name keeps working: the real folder of a
    // program found on PATH through a link, and every file or folder named by an absolute path on
    // its command line or in its environment, read-only (never a folder holding its attempt folder).
    const found =
      program && !path.isAbsolute(program) ? findProgram(program, spec.env.PATH ?? "") : undefined;
    if (found) readOnly(path.dirname(realpathSync(found)));
    const argv = "argv" in spec.command ? spec.command.argv.slice(1) : [];
    for (const value of [...argv, ...Object.values(spec.env)]) {
      if (!path.isAbsolute(value) || value === "/" || !existsSync(value)) continue;
      if (writable.some((w) => isUnder(w, [value]) || isUnder(value, [w]))) continue;
      const dir = lstatSync(value).isDirectory() ? value : path.dirname(value);
      if (dir === "/" || writable.some((w) => isUnder(w, [dir]))) continue;
      readOnly(dir);
      if (!lstatSync(value).isDirectory()) readOnly(path.dirname(realpathSync(value)));
    }
  }
  const own = mounted.filter((dir) => !SYSTEM.includes(dir));
  for (const h of hidden) {
    if (!existsSync(h) || !isUnder(h, own) || writable.some((w) => isUnder(w, [h]))) continue;
    if (lstatSync(h).isDirectory()) args.push("--tmpfs", h);
    else args.push("--ro-bind", "/dev/null", h);
  }
  for (const dir of writable) args.push("--bind", dir, dir);
  args.push("--remount-ro", "/", "--chdir", spec.cwd);
  return args;
}

function wrapped(bwrap: string, before: string[], command: Command): Command {
  const inner = "argv" in command ? command.argv : ["/bin/sh", "-c", command.shell];
  return { argv: [bwrap, ...before, "--", ...inner] };
}

/** A runner that starts every process under bubblewrap. */
export function sandboxedRunner(
  inner: ProcessRunner,
  bwrap: string,
  sandbox: SandboxSpec,
  writable: readonly string[],
  hidden: readonly string[] = [],
): ProcessRunner {
  return {
    run: (spec) => {
      // A program that will not start is started as it is, so the error stays the system's own.
      if (!willStart(spec.command, spec.cwd, spec.env.PATH ?? "")) return inner.run(spec);
      return inner.run({
        ...spec,
        command: wrapped(bwrap, bwrapArgs(spec, sandbox, writable, hidden), spec.command),
        // bubblewrap's PID namespace ends with the agent: nothing it started survives.
        contained: true,
      });
    },
  };
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
