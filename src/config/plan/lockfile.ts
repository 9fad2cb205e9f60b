/**
 * A folder seed's npm lockfile that installs a package from a file outside the seed
 * (`"resolved": "file:../evalgate-0.1.0.tgz"`): the start tree is a copy of the seed, so `npm ci` in
 * setup fails in every attempt with npm's generic ENOENT (issue 29). Found at validation instead,
 * naming the lockfile, the entry and the fix.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { SeedSpec } from "../types.js";
import type { PathKey, YamlSource } from "../yaml.js";
import type { PlanContext } from "./context.js";
import { inSeed } from "./guards.js";

const LOCKFILES = ["package-lock.json", "npm-shrinkwrap.json"];
/** Lockfiles already reported in this validation (many tests share one seed). */
const reported = new WeakMap<PlanContext, Set<string>>();

interface LockEntry {
  key: string;
  spec: string;
}

/** The `file:` specs of a lockfile (v2/v3 `packages`, v1 `dependencies`), with the key naming each. */
export function fileEntries(lock: unknown): LockEntry[] {
  const out: LockEntry[] = [];
  if (!lock || typeof lock !== "object") return out;
  const { packages, dependencies } = lock as { packages?: unknown; dependencies?: unknown };
  const visit = (group: unknown, name: string, fields: readonly string[]) => {
    if (!group || typeof group !== "object") return;
    for (const [pkg, entry] of Object.entries(group as Record<string, unknown>)) {
      if (!entry || typeof entry !== "object") continue;
      for (const field of fields) {
        const v = (entry as Record<string, unknown>)[field];
        if (typeof v === "string" && v.startsWith("file:"))
          out.push({ key: `${name}["${pkg}"].${field}`, spec: v });
      }
    }
  };
  visit(packages, "packages", ["resolved"]);
  visit(dependencies, "dependencies", ["version", "resolved"]);
  return out;
}

/**
 * Refuses a folder seed with setup whose lockfile (at the seed's root) installs a
 * file that the copy of the seed will not hold. `at` is where the seed is written.
 */
export function lockfileOutsideSeed(
  ctx: PlanContext,
  seed: SeedSpec | undefined,
  hasSetup: boolean,
  src: YamlSource,
  at: PathKey[],
): void {
  if (seed?.kind !== "path" || !hasSetup) return;
  const done = reported.get(ctx) ?? new Set<string>();
  reported.set(ctx, done);
  for (const folder of [seed.path]) {
    for (const name of LOCKFILES) {
      const file = path.join(folder, name);
      if (done.has(file) || !existsSync(file)) continue;
      done.add(file);
      let lock: unknown;
      try {
        lock = JSON.parse(readFileSync(file, "utf8"));
      } catch {
        continue; // npm reports a broken lockfile itself
      }
      for (const e of fileEntries(lock)) {
        const target = path.resolve(folder, e.spec.slice("file:".length));
        if (inSeed(seed, target)) continue;
        ctx.problem(
          src,
          at,
          `${ctx.display(file)}: ${e.key} is ${e.spec}, which is outside the seed folder ${ctx.display(seed.path)}: the start tree is a copy of the seed, so setup's install cannot find it in any attempt`,
          `install that package from the registry or a git URL, or move ${path.basename(target)} into the seed (for example vendor/) and run npm install ./vendor/${path.basename(target)} so that the lockfile points inside it`,
        );
      }
    }
  }
}
