/**
 * Loads the bundled CLI (lib/cli-bundle/, CommonJS chunks: scripts/bundle-cli.mjs) with V8's code
 * cache, for Node versions without module.enableCompileCache (Node 20); bin/evalgate.js imports it
 * before the bundle. It imports nothing of evalgate: it runs before any of it is loaded. Each chunk
 * is compiled as a vm.Script given the cached data of an earlier run; V8 checks that data (its version, its flags,
 * the source's length) and rejects what does not match, and the chunk is then compiled from source
 * as usual. The data of a chunk that had none, or whose data was rejected, is written when the
 * process exits, after the command ran: V8 then includes the functions the command compiled, not
 * only the chunk's top level (docs/decisions/0221).
 *
 * The cache lives in lib/cli-bundle/.code-cache/, beside the code it was made from and with the same
 * write permission (whoever can write it can already change the code); a rebuild deletes it with
 * the bundle. Its files are named by the chunk's size and modification time (a chunk changed in
 * place never meets the cache of its old text) and kept apart per Node version, architecture and
 * V8 flag set. A cache that cannot be written (a read-only checkout) is silently not written.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Script } from "node:vm";

export type ChunkOutcome = "hit" | "miss" | "rejected";

/**
 * Runs `dir/main.cjs` and the chunks it requires through the code cache; returns its exports.
 * `flags` names the V8 flag set the process runs with (the cache of one set is rejected by another).
 * `stats`, when given, receives each chunk's outcome: "hit" (its cached data was accepted),
 * "miss" (none), "rejected" (V8 refused it).
 */
export function loadWithCodeCache(
  dir: string,
  flags: string,
  stats?: Record<string, ChunkOutcome>,
): Record<string, unknown> {
  const cacheDir = path.join(dir, ".code-cache", `${process.version}-${process.arch}-${flags}`);
  const loaded = new Map<string, { exports: Record<string, unknown> }>();
  const toWrite: { script: Script; cacheFile: string }[] = [];

  function load(file: string): Record<string, unknown> {
    const known = loaded.get(file);
    if (known) return known.exports;
    const source = readFileSync(file, "utf8");
    const { size, mtimeMs } = statSync(file);
    const cacheFile = path.join(cacheDir, `${path.basename(file)}-${size}-${Math.trunc(mtimeMs)}`);
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(cacheFile);
    } catch {}
    // The wrapper on the source's first line keeps the chunk's line numbers in stack traces.
    const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
      filename: file,
      cachedData,
    });
    const outcome: ChunkOutcome =
      cachedData === undefined ? "miss" : script.cachedDataRejected ? "rejected" : "hit";
    if (stats) stats[path.basename(file)] = outcome;
    if (outcome !== "hit") toWrite.push({ script, cacheFile });
    const module = { exports: {} as Record<string, unknown> };
    loaded.set(file, module);
    const outside = createRequire(file);
    // A chunk requires its sibling chunks by "./name.cjs"; everything else (node: modules, the
    // external @ast-grep packages) is Node's require.
    const require = Object.assign(
      (id: string) => (id.startsWith("./") && id.endsWith(".cjs") ? load(path.join(dir, id)) : outside(id)),
      { resolve: outside.resolve },
    );
    script.runInThisContext().call(module.exports, module.exports, require, module, file, dir);
    return module.exports;
  }

  process.once("exit", () => {
    if (toWrite.length === 0) return;
    for (const { script, cacheFile } of toWrite) {
      // Written whole, then renamed: a concurrent run reads the old file or the new one, never half.
      const partial = `${cacheFile}.${process.pid}.tmp`;
      try {
        mkdirSync(cacheDir, { recursive: true });
        writeFileSync(partial, script.createCachedData());
        renameSync(partial, cacheFile);
      } catch {
        // Not writable here (a read-only checkout): the next run compiles from source, as now.
        try {
          rmSync(partial, { force: true });
        } catch {}
        return;
      }
    }
  });

  return load(path.join(dir, "main.cjs"));
}
