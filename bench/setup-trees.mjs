// What a 50,000-file setup-built tree (node_modules) costs each attempt (issue 31: at most half of the
// plain floor's `cp -a` of it). Alternating rounds on one machine, in one run:
//   floor    `cp -a` of the tree alone (the plain floor copies it into every attempt)
//   shared   evalgate's workspace with the tree shared (docs/decisions/0230): the copy of the start
//            without it, the overlay's layers, two processes under bubblewrap with the overlay mounted
//            (agent and scorer), the scan with the tree pruned, the check of the upper layer; minus
//            the same steps for the start without the tree (plain bubblewrap, plain scan): what the
//            tree adds
//   copied   the same for the copy evalgate makes where it cannot share (the whole start, the scan
//            walking the tree), minus the same baseline
// Removing the copies is not timed on either side. Run: npm run build && node bench/setup-trees.mjs [rounds] [files]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { checkBwrap } from "../lib/sandbox/bwrap.js";
import { overlaidArgv } from "../lib/sandbox/overlay.js";
import { copyTree } from "../lib/workspace/copy.js";
import { removeTree } from "../lib/workspace/discard.js";
import { scanWorkspace } from "../lib/workspace/scan.js";
import { checkShared, leanStartOf, overlaysFor, shareableTrees } from "../lib/workspace/share.js";
import { runTool } from "../lib/workspace/tool.js";

const rounds = Number(process.argv[2] ?? 5);
const files = Number(process.argv[3] ?? 50_000);
const PER_DIR = 100;

const root = mkdtempSync(path.join(process.env.EVALGATE_BENCH_DIR ?? os.tmpdir(), "evalgate-bench-trees-"));
const git = (cwd, ...args) => execFileSync("git", args, { cwd, stdio: "ignore" });

/** A start tree: 200 tracked files, and with `tree` a node_modules of `files` files. */
function makeStart(name, tree) {
  const dir = path.join(root, name, "tree");
  mkdirSync(path.join(dir, "src"), { recursive: true });
  writeFileSync(path.join(dir, ".gitignore"), "node_modules/\n");
  for (let i = 0; i < 200; i++)
    writeFileSync(path.join(dir, "src", `f${i}.js`), `export const v${i} = ${i};\n`);
  git(dir, "init", "-q");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "start");
  if (tree) {
    for (let d = 0; d < files / PER_DIR; d++) {
      const pkg = path.join(dir, "node_modules", `pkg${d}`, "lib");
      mkdirSync(pkg, { recursive: true });
      for (let f = 0; f < PER_DIR; f++) {
        writeFileSync(
          path.join(pkg, `m${f}.js`),
          `module.exports = ${d * PER_DIR + f};\n${"//".padEnd(200, "x")}\n`,
        );
      }
    }
  }
  return { dir, copyMethod: "copy" };
}

const check = await checkBwrap();
if (!check.ok) {
  console.log(`setup-trees: skipped (${check.message})`);
  process.exit(0);
}
const bwrap = check.program;
const withTree = makeStart("with", true);
const without = makeStart("without", false);
const trees = await shareableTrees(withTree);
await leanStartOf(withTree, trees);

/** One process under bubblewrap seeing the workspace (with the overlays, when given). */
async function contained(ws, overlays) {
  const argv = [
    bwrap,
    "--unshare-all",
    "--die-with-parent",
    "--ro-bind",
    "/",
    "/",
    "--bind",
    ws,
    ws,
    "--",
    "true",
  ];
  const cmd = overlays.length > 0 ? overlaidArgv(argv, overlays) : argv;
  const r = await runTool(cmd[0], cmd.slice(1));
  if (r.code !== 0) throw new Error(`bubblewrap failed: ${r.stderr}`);
}

let serial = 0;
/** An attempt's workspace steps, timed (ms); `mode`: shared, copied, or none (the start without the tree). */
async function attempt(mode) {
  const at = path.join(root, "attempts", String(serial++));
  mkdirSync(at, { recursive: true });
  const ws = path.join(at, "ws");
  const t = performance.now();
  let overlays = [];
  if (mode === "shared") {
    await copyTree(path.join(root, "with", "lean"), ws, "copy");
    overlays = await overlaysFor(withTree, ws, path.join(at, "layers"), trees);
  } else await copyTree((mode === "copied" ? withTree : without).dir, ws, "copy");
  await contained(ws, overlays);
  await contained(ws, overlays);
  await scanWorkspace(ws, 1 << 20, undefined, mode === "shared" ? trees : []);
  if (mode === "shared") await checkShared(withTree, trees, overlays);
  const ms = performance.now() - t;
  await removeTree(at);
  return ms;
}

async function floor() {
  const dest = path.join(root, "floor");
  const t = performance.now();
  execFileSync("cp", ["-a", path.join(withTree.dir, "node_modules"), dest]);
  const ms = performance.now() - t;
  await removeTree(dest);
  return ms;
}

const times = { floor: [], shared: [], copied: [], none: [] };
// One warm-up round, not counted.
for (let i = 0; i <= rounds; i++) {
  const round = {
    floor: await floor(),
    shared: await attempt("shared"),
    copied: await attempt("copied"),
    none: await attempt("none"),
  };
  if (i > 0) for (const [k, v] of Object.entries(round)) times[k].push(v);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const range = (xs) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
const sharedCost = times.shared.map((s, i) => s - times.none[i]);
const copiedCost = times.copied.map((s, i) => s - times.none[i]);
const ratios = sharedCost.map((s, i) => s / times.floor[i]);
console.log(
  `setup-trees: a ${files.toLocaleString("en")}-file node_modules, ${rounds} alternating rounds, load ${os.loadavg()[0].toFixed(2)}`,
);
console.log(`  floor  cp -a of the tree           median ${m.floor.toFixed(0)} ms (${range(times.floor)})`);
console.log(
  `  shared what the tree adds per attempt median ${median(sharedCost).toFixed(0)} ms (${range(sharedCost)})`,
);
console.log(
  `  copied what the tree adds per attempt median ${median(copiedCost).toFixed(0)} ms (${range(copiedCost)})`,
);
console.log(`  (the attempt without the tree: median ${m.none.toFixed(0)} ms)`);
console.log(
  `  shared / floor: median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}); acceptance ≤ 0.5`,
);
rmSync(root, { recursive: true, force: true });
