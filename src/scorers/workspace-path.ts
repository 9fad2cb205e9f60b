/**
 * Paths a scorer reads or runs in, checked against the workspace. The agent is untrusted and its
 * workspace may hold links it planted (to a file of the runner, to /proc/self/environ, which is
 * evalgate's own environment when evalgate opens it, to another attempt's folder); scorers run
 * outside the sandbox, so they never follow such a link. See docs/decisions/0072.
 */
import { realpath } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../paths.js";

/**
 * A path a scorer will not use: it leads out of the workspace or is not a regular file. The attempt
 * lifecycle turns it into a failing check (score 0) with this message, never an error that
 * `on_error` could retry or exclude.
 */
export class RefusedPath extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RefusedPath";
  }
}

/**
 * A test of whether a path, with every link on its way resolved, is inside the workspace `ws`; a
 * path that does not exist counts as inside when its nearest existing folder is. The workspace's
 * own real path is resolved once, on the first test, for all the paths of a search.
 */
export function insideOf(ws: string): (p: string) => Promise<boolean> {
  let realWs: Promise<string> | undefined;
  return async (p) => {
    realWs ??= realpath(ws);
    const root = await realWs;
    let at = p;
    for (;;) {
      try {
        return isWithin(root, await realpath(at));
      } catch {
        const up = path.dirname(at);
        if (up === at) return false;
        at = up;
      }
    }
  };
}

/** Throws RefusedPath when `p` (shown as `shown`) resolves to a place outside the workspace. */
export async function mustResolveInside(ws: string, p: string, shown: string): Promise<void> {
  if (!(await insideOf(ws)(p))) {
    throw new RefusedPath(`${shown} is a link to a place outside the workspace`);
  }
}
