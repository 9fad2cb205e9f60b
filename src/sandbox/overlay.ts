/**
 * Overlays of what setup built (workspace/share.ts): a process under bubblewrap sees a tree of the
 * start (`lower`, read-only) at `target`, with every change it makes written to `upper`, a folder
 * of its attempt's own. bubblewrap before 0.10 has no overlay options (Debian's is 0.8, GitHub's
 * runners' 0.9), so the kernel's overlayfs is mounted in a user and mount namespace of its own
 * (`unshare`), around bubblewrap, which sees the mount in the workspace it binds (its binds are
 * recursive). Unprivileged overlayfs in a user namespace needs Linux 5.11 (docs/decisions/0230).
 *
 * Inside that namespace bubblewrap runs as its root: it is told the caller's real user and group
 * and to drop every capability, so the process inside is what it would be without the overlay (no
 * capability to unmount a mask or remount a folder writable).
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Command } from "./commands.js";

export interface OverlayMount {
  /** The start tree's folder, never written. */
  lower: string;
  /** The attempt's changes to it: new and changed entries, whiteouts for removed ones. */
  upper: string;
  /** overlayfs's scratch folder, on the filesystem of `upper`. */
  work: string;
  /** Where the process sees the merged tree: an empty folder in its workspace. */
  target: string;
}

/**
 * The mounts, then the command. overlayfs reads its options split at `,` and `:`; names with those
 * are never shared (workspace/share.ts), so the options need no escaping.
 */
const SCRIPT = [
  'n="$1"; shift',
  'while [ "$n" -gt 0 ]; do',
  '  mount -t overlay overlay -o "userxattr,lowerdir=$1,upperdir=$2,workdir=$3" "$4" || exit 125',
  "  shift 4; n=$((n - 1))",
  "done",
  'exec "$@"',
].join("\n");

/** `unshare` running SCRIPT: the overlays mounted in a new user and mount namespace, then `argv`. */
function withOverlays(argv: readonly string[], mounts: readonly OverlayMount[]): string[] {
  const list = mounts.flatMap((m) => [m.lower, m.upper, m.work, m.target]);
  return [
    "unshare",
    "--user",
    "--map-root-user",
    "--mount",
    "--",
    "/bin/sh",
    "-c",
    SCRIPT,
    "evalgate-overlay",
    String(mounts.length),
    ...list,
    ...argv,
  ];
}

/** `argv` run with the overlays mounted: a bubblewrap command (its program first) or any other. */
export function overlaidArgv(argv: readonly string[], mounts: readonly OverlayMount[]): string[] {
  const ids =
    typeof process.getuid === "function"
      ? ["--uid", String(process.getuid()), "--gid", String(process.getgid!()), "--cap-drop", "ALL"]
      : [];
  return withOverlays([argv[0]!, ...ids, ...argv.slice(1)], mounts);
}

/** A plain command (not under bubblewrap) run with the overlays mounted: for evalgate's own looks. */
export function overlaidCommand(command: Command, mounts: readonly OverlayMount[]): Command {
  const argv = "argv" in command ? command.argv : ["/bin/sh", "-c", command.shell];
  return { argv: withOverlays(argv, mounts) };
}

/** Characters overlayfs's options cannot carry unescaped. */
export const OVERLAY_UNSAFE = /[,:\\\n]/;

/**
 * Whether overlays work here, under bubblewrap `bwrap`: a file of the lower layer is seen, a write
 * goes to the upper layer, the lower one is unchanged. Returns undefined when they do, else why not.
 * `scratch` is an empty folder of evalgate's on the filesystem attempts are made on.
 */
export async function probeOverlay(
  bwrap: string,
  scratch: string,
  run: (argv: string[]) => Promise<{ code: number | null; stderr: string }>,
): Promise<string | undefined> {
  if (OVERLAY_UNSAFE.test(scratch)) return `the work folder's path (${scratch}) holds , or :`;
  const m: OverlayMount = {
    lower: path.join(scratch, "lower"),
    upper: path.join(scratch, "upper"),
    work: path.join(scratch, "work"),
    target: path.join(scratch, "ws"),
  };
  try {
    for (const d of Object.values(m)) await mkdir(d, { recursive: true });
    await writeFile(path.join(m.lower, "f"), "lower\n");
    const check = `[ "$(cat ${m.target}/f)" = lower ] && echo upper > ${m.target}/f`;
    const argv = [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/"];
    argv.push("--bind", m.target, m.target, "--", "/bin/sh", "-c", check);
    const r = await run(overlaidArgv(argv, [m]));
    if (r.code !== 0) return firstLine(r.stderr) || `the probe exited ${r.code}`;
    const lower = await readFile(path.join(m.lower, "f"), "utf8");
    const upper = await readFile(path.join(m.upper, "f"), "utf8").catch(() => "");
    if (lower !== "lower\n" || upper !== "upper\n") return "a write did not land in the upper layer";
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    // overlayfs leaves its work folder without permissions.
    await run(["chmod", "-R", "u+rwX", scratch]).catch(() => undefined);
    await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}

const firstLine = (s: string) => s.trim().split("\n")[0] ?? "";
