/** `evalgate init`: a starter eval suite and workflow, written beside what is there (never over it). */
import { EXIT } from "../errors.js";
import { type InitAgent, initRepository, renderInit } from "../init.js";
import { repositoryRoot } from "../workspace/git.js";
import type { CommandIO } from "./io.js";

export interface InitFlags {
  agent: InitAgent;
  dir: string;
}

export async function initCommand(o: InitFlags, io: CommandIO): Promise<number> {
  const root = await repositoryRoot(io.cwd);
  io.stdout.write(renderInit(await initRepository({ root, cwd: io.cwd, agent: o.agent, dir: o.dir })));
  return EXIT.pass;
}
