// `evalgate validate` on one eval file of N tests (issue 28.5: at least 300,000 validate or fail with
// a clear limit, never a stack overflow): the exit, the time and the peak memory (GNU time's maximum
// resident set size). Run: npm run build && node bench/large-eval-file.mjs [tests]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const n = Number(process.argv[2] ?? 300_000);
const bin = fileURLToPath(new URL("../bin/evalgate.js", import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), "evalgate-large-bench-"));
const file = path.join(dir, "big.eval.yaml");
const tests = Array.from(
  { length: n },
  (_, i) => `  - { id: t${i}, instruction: x, scorers: [{ type: file, path: a.txt }] }\n`,
).join("");
writeFileSync(
  file,
  `name: big\ntargets: [{ name: a, provider: noop }]\nworkspace: { seed: { empty: true } }\ntests:\n${tests}`,
);
const t = process.hrtime.bigint();
const r = spawnSync("/usr/bin/time", ["-v", process.execPath, bin, "validate", file], {
  cwd: dir,
  encoding: "utf8",
  maxBuffer: 64 * 2 ** 20,
});
const seconds = Number(process.hrtime.bigint() - t) / 1e9;
const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1];
const out = `${r.stdout}${r.stderr}`.split("\n").find((l) => /^ok:|error/.test(l)) ?? "";
console.log(
  `${n.toLocaleString("en-US")} tests (${(statSync(file).size / 2 ** 20).toFixed(1)} MiB): exit ${r.status} in ${seconds.toFixed(1)} s, peak RSS ${rss ? `${Math.round(Number(rss) / 1024)} MiB` : "?"} · ${out.trim()}`,
);
rmSync(dir, { recursive: true, force: true });
