import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentFilledDisk } from "../../src/environment/disk.js";
import { tempDir } from "../helpers.js";

/** Whether a full disk is the agent's doing (docs/decisions/0247): evalgate's own measure decides. */
describe("a full disk after the agent ran", () => {
  const dir = tempDir();
  mkdirSync(path.join(dir, "ws"));
  writeFileSync(path.join(dir, "ws", "fill.bin"), Buffer.alloc(1024 * 1024, 1));
  const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });

  it("is the agent's when its folders took (nearly) all that was free when it started", async () => {
    expect(await agentFilledDisk(enospc, dir, 1024 * 1024)).toMatch(/^the agent filled the disk/);
  });

  it.each<[string, unknown, number | undefined]>([
    // The control: the disk filled, but not with what the agent wrote (another process, the runner).
    ["free space far beyond what the agent wrote", enospc, 1024 ** 3],
    ["not a full disk", Object.assign(new Error("EACCES"), { code: "EACCES" }), 1024],
    ["no measure of the free space", enospc, undefined],
  ])("stays infrastructure trouble: %s", async (_, error, freeBefore) => {
    expect(await agentFilledDisk(error, dir, freeBefore)).toBeUndefined();
  });

  it("reads git's words for a full disk too", async () => {
    const git = new Error("git add -A -- . failed: error: No space left on device");
    expect(await agentFilledDisk(git, dir, 1024 * 1024)).toMatch(/^the agent filled the disk/);
  });
});
