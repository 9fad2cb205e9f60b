/**
 * Removing attempt folders off the critical path (docs/decisions/0106). A folder is renamed away at
 * once (so nothing can use it by its old name) and deleted by a child `rm -rf`, which deletes a
 * 50,000-file tree several times faster than Node's recursive `rm` and never blocks the main
 * thread; the run waits for every deletion before it removes its work folder.
 */
import { rename } from "node:fs/promises";
import { runTool } from "./tool.js";

/** Folders renamed away and waiting for the deleting child; `deleting` while one runs. */
const queued: string[] = [];
let deleting: Promise<void> | undefined;
let serial = 0;

/**
 * Deletes `dirs` (and everything in them) now, in one child process. An agent may leave folders
 * without write or search permission: those are given back to the owner and the deletion retried.
 */
async function removeTrees(dirs: string[]): Promise<void> {
  if ((await runTool("rm", ["-rf", "--", ...dirs])).code === 0) return;
  await runTool("chmod", ["-R", "u+rwX", "--", ...dirs]);
  await runTool("rm", ["-rf", "--", ...dirs]);
}

/** Deletes `dir` (and everything in it) now, in a child process; locked folders are opened first. */
export function removeTree(dir: string): Promise<void> {
  return removeTrees([dir]);
}

/**
 * Moves `dir` out of the way at once and deletes it in the background; `discardsSettled` waits for
 * every such deletion. A folder that does not exist is no error. One `rm` runs at a time and takes
 * every folder discarded while the previous one ran: short attempts discard faster than one
 * process per folder would be worth starting (docs/decisions/0171).
 */
export async function discardTree(dir: string): Promise<void> {
  const trash = `${dir}.discarded-${process.pid}-${serial++}`;
  try {
    await rename(dir, trash);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    // Cannot be renamed (e.g. the name is a mount point): delete it where it is, now.
    await removeTree(dir);
    return;
  }
  queued.push(trash);
  startDeleting();
}

function startDeleting(): void {
  if (deleting) return;
  const done = (async () => {
    while (queued.length > 0) await removeTrees(queued.splice(0, 1000));
  })();
  deleting = done;
  // A folder queued after the loop saw the queue empty is picked up by the next loop.
  void done.finally(() => {
    deleting = undefined;
    if (queued.length > 0) startDeleting();
  });
}

/** Resolves when every deletion `discardTree` started has finished. */
export async function discardsSettled(): Promise<void> {
  while (deleting) await deleting;
}
