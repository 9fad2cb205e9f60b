/**
 * A container registry on loopback for the pull tests: Debian's `docker-registry` (the reference
 * registry, distribution 2.8) serving a temporary folder on a free port.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { findProgram } from "../../src/sandbox/commands.js";
import { tempDir } from "../helpers.js";

export interface Registry {
  /** `127.0.0.1:PORT` */
  address: string;
  stop(): void;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

export function registryProgram(): string | undefined {
  return findProgram("docker-registry", `${process.env.PATH}:/usr/bin:/usr/sbin`);
}

/** Starts a registry; resolves when it answers /v2/. */
export async function startRegistry(): Promise<Registry> {
  const program = registryProgram();
  if (!program) throw new Error("docker-registry is not installed (apt-get install docker-registry)");
  const dir = tempDir("evalgate-registry-");
  const port = await freePort();
  const config = path.join(dir, "config.yml");
  writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${port}\n`,
  );
  const child: ChildProcess = spawn(program, ["serve", config], { stdio: "ignore" });
  const address = `127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(`http://${address}/v2/`);
      if (r.ok) return { address, stop: () => child.kill("SIGTERM") };
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`docker-registry did not answer on ${address}`);
}
