// Starts one container that sleeps, prints "started" once the container runs, and waits to be
// killed: the cleanup tests kill this process and look for the container it leaves.
import { containerRunner } from "../../lib/environment/container.js";
import { engineExec, probeEngine } from "../../lib/environment/engine.js";
import { prepareImage } from "../../lib/environment/image.js";
import { ChildProcessRunner } from "../../lib/sandbox/process.js";

const [image, ws, label] = process.argv.slice(2);
const engine = await probeEngine();
const prepared = await prepareImage(engine, { kind: "image", image });
const run = containerRunner(new ChildProcessRunner(), {
  engine,
  image: prepared,
  label,
  mounts: [{ host: ws, container: "/app" }],
  network: false,
}).run({ command: { argv: ["sleep", "300"] }, cwd: ws, env: {}, timeoutMs: 600_000 });
for (let i = 0; i < 200; i++) {
  const ps = await engineExec(engine, ["ps", "--format", "{{.Names}}"]);
  if (ps.stdout.includes(label)) break;
  await new Promise((r) => setTimeout(r, 100));
}
console.log("started");
await run;
