/** Attempt folders leave their name at once and are deleted in the background by `rm -rf`. */
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { discardsSettled, discardTree, removeTree } from "../../src/workspace/discard.js";
import { tempDir } from "../helpers.js";

function lockedTree(root: string): string {
  const dir = path.join(root, "run-1");
  for (let i = 0; i < 200; i++) {
    mkdirSync(path.join(dir, "ws", `d${i % 10}`), { recursive: true });
    writeFileSync(path.join(dir, "ws", `d${i % 10}`, `f${i}`), "x");
  }
  // What an agent may leave: a folder without any permission, and one without write permission.
  chmodSync(path.join(dir, "ws", "d1"), 0o000);
  chmodSync(path.join(dir, "ws", "d2"), 0o500);
  return dir;
}

describe("discardTree", () => {
  it("frees the name at once and deletes everything, locked folders included, by the time discards settle", async () => {
    const root = tempDir();
    const dir = lockedTree(root);
    await discardTree(dir);
    expect(existsSync(dir)).toBe(false);
    // The same name can be used again right away.
    mkdirSync(dir);
    await discardsSettled();
    expect(readdirSync(root)).toEqual(["run-1"]);
  });

  it("is no error for a folder that does not exist", async () => {
    await discardTree(path.join(tempDir(), "missing"));
    await discardsSettled();
  });

  it("removeTree deletes a locked tree now", async () => {
    const root = tempDir();
    await removeTree(lockedTree(root));
    expect(readdirSync(root)).toEqual([]);
  });
});
