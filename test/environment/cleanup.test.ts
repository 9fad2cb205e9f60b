/**
 * No container outlives evalgate: an interrupted evalgate removes its containers on the way out,
 * and one killed outright (SIGKILL, no chance to clean up) has its containers removed by the next
 * run's sweep. Before: a container runs under the engine's monitor, so neither the client's death
 * nor evalgate's took it down; it ran on after the attempt.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { machineTag, ownedName, ownerOf, sweepOrphans } from "../../src/environment/cleanup.js";
import { engineExec } from "../../src/environment/engine.js";
import { tempDir } from "../helpers.js";
import { busyboxImage, testEngine } from "./images.js";

const { engine } = await testEngine();
const holder = path.join(path.dirname(fileURLToPath(import.meta.url)), "holder.mjs");

describe("container names", () => {
  it("carry this machine and this process, so a sweep knows whose they are", () => {
    const name = ownedName("Case 1/run-2");
    expect(name).toMatch(new RegExp(`^evalgate-${machineTag()}-${process.pid}-\\d+-case-1-run-2$`));
    expect(ownerOf(name)).toBe(process.pid);
    expect(ownerOf(name.replace(machineTag(), "000000"))).toBeUndefined();
    expect(ownerOf("someone-else")).toBeUndefined();
  });
});

describe.skipIf(!engine)("cleanup (real engine)", () => {
  async function start(label: string): Promise<ReturnType<typeof spawn>> {
    const image = await busyboxImage(engine!);
    const child = spawn(process.execPath, [holder, image, tempDir("evalgate-holder-"), label], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (d: Buffer) => d.toString().includes("started") && resolve());
      child.once("exit", (code) => reject(new Error(`holder exited early (${code})`)));
    });
    return child;
  }
  const names = async (label: string) =>
    (await engineExec(engine!, ["ps", "-a", "--format", "{{.Names}}"])).stdout
      .split("\n")
      .filter((n) => n.includes(label));

  it("removes its containers when it is interrupted", async () => {
    const label = `sigterm-${Date.now()}`;
    const child = await start(label);
    expect(await names(label)).toHaveLength(1);
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
    expect(await names(label)).toEqual([]);
  });

  it("leaves nothing after a SIGKILL once the next run has swept", async () => {
    const label = `sigkill-${Date.now()}`;
    const child = await start(label);
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    // The engine still runs it: nothing of evalgate's was left to stop it.
    expect(await names(label)).toHaveLength(1);
    expect(await sweepOrphans(engine!)).toBeGreaterThanOrEqual(1);
    expect(await names(label)).toEqual([]);
  });
});
