/**
 * When a process under bubblewrap fails in a way the sandbox can cause (exit 126 or 127, "not
 * found", ENOENT or EACCES on a path), a line that says so: which path exists on this machine but
 * is not shown inside the sandbox, and the fix. Without it the failure reads as the program's own
 * (issue 29: every attempt `agent_exit` 127, found only by turning isolation off).
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { findProgram } from "./commands.js";
import type { ProcessOutcome, ProcessSpec } from "./process.js";
import { shimTargets } from "./shims.js";

/** What a bubblewrap command line shows: each mount point, and whether it shows the host's path. */
export type SandboxView = Map<string, boolean>;

const under = (p: string, d: string) => p === d || p.startsWith(d === "/" ? "/" : `${d}/`);

/** The view of bubblewrap arguments (those before `--`): binds show, tmpfs and /dev/null mask. */
export function viewOf(args: readonly string[]): SandboxView {
  const view: SandboxView = new Map();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--ro-bind" || a === "--bind" || a === "--symlink") {
      view.set(args[i + 2]!, args[i + 1] !== "/dev/null");
      i += 2;
    } else if (a === "--tmpfs" || a === "--proc" || a === "--dev") {
      view.set(args[i + 1]!, a !== "--tmpfs");
      i += 1;
    }
  }
  return view;
}

/** Whether the host's `p` is seen inside: the deepest mount holding it shows the host's files. */
function visible(view: SandboxView, p: string): boolean {
  let best = "";
  let shows = false;
  for (const [dest, show] of view) {
    if (under(p, dest) && dest.length >= best.length) {
      best = dest;
      shows = show;
    }
  }
  return shows;
}

/** Hidden on purpose (the answer key, the run's state): not a cause to explain. */
function masked(view: SandboxView, p: string): boolean {
  for (const [dest, show] of view) if (!show && dest !== "/tmp" && under(p, dest)) return true;
  return false;
}

/** Whether the failure looks like one the sandbox can cause. */
function suspicious(o: ProcessOutcome): boolean {
  if (o.timedOut || o.exitCode === 0) return false;
  return (
    o.exitCode === 126 ||
    o.exitCode === 127 ||
    /No such file or directory|Permission denied|not found|ENOENT|EACCES/.test(o.tail)
  );
}

/** Absolute paths in a text, and programs a shell could not find ("sh: 1: x: not found"). */
function named(text: string, envPath: string): string[] {
  const out = [...text.matchAll(/(?<![\w.~-])\/[\w.@+-]+(?:\/[\w.@+-]+)*/g)].map((m) => m[0]);
  for (const m of text.matchAll(/(?:^|[\s:'"])([\w.+-]+)'?: (?:command )?not found/gm)) {
    const found = findProgram(m[1]!, envPath);
    if (found) out.push(found);
  }
  return [...new Set(out)];
}

interface Cause {
  path: string;
  /** How the process reached it: a link, or a script that execs it. */
  via?: string;
}

/** The first path the failure names that exists here but is not in view (through links and shims). */
function hiddenCause(view: SandboxView, candidates: readonly string[]): Cause | undefined {
  for (const p of candidates) {
    if (!existsSync(p) || masked(view, p)) continue;
    if (!visible(view, p)) return { path: p };
    const real = realpathSync(p);
    if (!visible(view, real)) return { path: real, via: `${p} is a link to it` };
    if (!statSync(real).isFile() || statSync(real).size > 64 * 1024) continue;
    let text = "";
    try {
      text = readFileSync(real, "utf8").slice(0, 4096);
    } catch {
      continue;
    }
    if (!text.startsWith("#!")) continue;
    for (const t of shimTargets(text)) {
      if (!visible(view, t)) return { path: t, via: `${p} runs it` };
    }
  }
  return undefined;
}

/**
 * A line explaining a failure the sandbox may have caused, or undefined. `fix` says where a
 * `read_only:` entry goes for this process (the target's `sandbox:`, the scorer).
 */
export function sandboxExplanation(
  spec: ProcessSpec,
  args: readonly string[],
  outcome: ProcessOutcome,
  fix: string,
): string | undefined {
  if (!suspicious(outcome)) return undefined;
  const view = viewOf(args);
  const words = "argv" in spec.command ? spec.command.argv : [spec.command.shell];
  const candidates = named(
    `${outcome.spawnError ?? ""}\n${outcome.tail}\n${words.join("\n")}`,
    spec.env.PATH ?? "",
  );
  const cause = hiddenCause(view, candidates);
  if (!cause) return undefined;
  const dir = statSync(cause.path).isDirectory() ? cause.path : path.dirname(cause.path);
  const via = cause.via ? ` (${cause.via})` : "";
  return `evalgate: the sandbox may have caused this: ${cause.path}${via} exists on this machine but is not shown inside the sandbox; fix: ${fix.replace("{DIR}", dir)}, or run the program by a path the sandbox shows`;
}
