/**
 * Test configuration, protected by default (`workspace: { test_config: writable }` opts out): the
 * files through which a scorer's test run can be told to pass without the code changing — a
 * `package.json` `"test": "exit 0"`, an `.npmrc` `script-shell=`, a `conftest.py` that passes every
 * test, a runner's config file. At any depth, a change, an addition or a removal is put back before
 * scoring and reported as tampering, as for `protected:` paths; the diff keeps what the agent did.
 * In a file shared with other settings only the test part counts (config-parts.ts), so adding a
 * dependency to `package.json` stays possible (docs/decisions/0191).
 */
import { lstat, readFile, rm, writeFile } from "node:fs/promises";
import { type ConfigPart, packageJsonPart, pyprojectPart, setupCfgPart } from "./config-parts.js";
import { gitBytes, nulParts, under } from "./git.js";
import { putBackWhole } from "./put-back.js";
import type { PreparedStart } from "./start.js";

/** The protected file names (any depth): the whole file, or the part of it that configures tests. */
const WHOLE_NAMES = new Set([
  "conftest.py",
  "pytest.ini",
  ".pytest.ini",
  "pytest.toml",
  ".pytest.toml",
  "tox.ini",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
]);
const WHOLE_PREFIXES = ["jest.config.", "vitest.config.", "vitest.workspace.", ".mocharc", "ava.config."];
const PARTS: Record<string, ConfigPart> = {
  "package.json": packageJsonPart,
  "pyproject.toml": pyprojectPart,
  "setup.cfg": setupCfgPart,
};

/** How a file is protected, by its name: "whole", a part, or not at all. */
export function protectionOf(rel: string): "whole" | ConfigPart | undefined {
  const parts = rel.split("/");
  // Installed packages carry configuration files of their own; setup-built trees are checked whole.
  if (parts.some((p) => p === "node_modules" || p === "site-packages" || p === "dist-packages")) {
    return undefined;
  }
  const base = parts.at(-1)!;
  if (WHOLE_NAMES.has(base) || WHOLE_PREFIXES.some((p) => base.startsWith(p))) return "whole";
  return PARTS[base];
}

type StartTree = Pick<PreparedStart, "dir">;

/** A name as a lossless key (one character per byte): names need not be UTF-8. */
const key = (name: Buffer) => name.toString("latin1");
const bytes = (k: string) => Buffer.from(k, "latin1");

/** The start tree's test configuration files (committed in the start commit), listed once per start. */
const startConfigs = new WeakMap<StartTree, Promise<string[]>>();

function configsOf(start: StartTree): Promise<string[]> {
  let p = startConfigs.get(start);
  if (!p) {
    p = gitBytes(["ls-files", "-z"], { cwd: start.dir }).then((out) =>
      nulParts(out)
        .map(key)
        .filter((k) => protectionOf(k) !== undefined),
    );
    startConfigs.set(start, p);
    p.catch(() => startConfigs.delete(start));
  }
  return p;
}

/** A file's text, or undefined when it is not a regular file (gone, a link, a FIFO) or too large. */
async function textOf(file: Buffer): Promise<string | undefined> {
  const s = await lstat(file).catch(() => undefined);
  if (!s?.isFile() || s.size > 4 * 1024 * 1024) return undefined;
  return readFile(file, "utf8");
}

/** Whether every folder on the way to key `k` in `root` is a real folder (not a link out of it). */
async function realAncestors(root: string, k: string): Promise<boolean> {
  for (let i = k.indexOf("/"); i > 0; i = k.indexOf("/", i + 1)) {
    const s = await lstat(under(root, bytes(k.slice(0, i)))).catch(() => undefined);
    if (!s?.isDirectory()) return false;
  }
  return true;
}

async function sameFile(a: Buffer, b: Buffer): Promise<boolean> {
  const [x, y] = await Promise.all([lstat(a).catch(() => undefined), lstat(b)]);
  if (!x?.isFile() || !y.isFile() || x.mode !== y.mode || x.size !== y.size) return false;
  const [p, q] = await Promise.all([readFile(a), readFile(b)]);
  return p.equals(q);
}

/**
 * Puts back one protected file `k` (present in the start tree or not) when the agent changed its
 * protected part; returns the report line, or undefined when nothing changed.
 */
async function checkOne(
  start: StartTree,
  ws: string,
  k: string,
  inStart: boolean,
): Promise<string | undefined> {
  const now = under(ws, bytes(k));
  const was = under(start.dir, bytes(k));
  const shown = bytes(k).toString("utf8");
  const how = protectionOf(k)!;
  // A folder above it swapped for a link: nothing is read or written through it.
  if (!(await realAncestors(ws, k))) {
    await putBackWhole(start.dir, ws, bytes(k));
    return shown;
  }
  if (how === "whole") {
    if (inStart ? await sameFile(now, was) : (await lstat(now).catch(() => undefined)) === undefined) return;
    await putBackWhole(start.dir, ws, bytes(k));
    return shown;
  }
  const nowText = await textOf(now);
  const wasText = inStart ? await readFile(was, "utf8") : undefined;
  const keys = nowText === undefined ? undefined : how.differs(nowText, wasText);
  if (keys?.length === 0) return;
  const fixed = nowText === undefined ? undefined : how.restore(nowText, wasText);
  if (keys !== undefined && fixed !== undefined) {
    await rm(now, { force: true });
    await writeFile(now, fixed);
    return `${shown} ${how.describe(keys)}`;
  }
  // Unreadable, or its test part written so that it cannot be swapped alone: the whole file.
  await putBackWhole(start.dir, ws, bytes(k));
  return shown;
}

/** Whether key `k` or one of the folders above it is in `set` (the root, the empty key, too). */
function selfOrAbove(set: ReadonlySet<string>, k: string): boolean {
  if (set.has(k) || set.has("")) return true;
  for (let i = k.lastIndexOf("/"); i > 0; i = k.lastIndexOf("/", i - 1)) {
    if (set.has(k.slice(0, i))) return true;
  }
  return false;
}

/**
 * Compares the workspace's test configuration with the start tree's and puts back what the agent
 * changed, added or removed; returns what it put back (sorted). `changed` lists the entries whose
 * status changed after the copy (the root as the empty name): a file is read when it, or a folder
 * above it, changed (a folder swapped for a link to files of the same names elsewhere changes only
 * the folder), and new files are found among them. Without it every file of the start tree is
 * compared, and new ones are not looked for (`complete: false`).
 */
export async function restoreTestConfig(
  start: StartTree,
  ws: string,
  changed: readonly Buffer[] | undefined,
  /** Setup-built trees (setup-trees.ts), which are not looked into here. */
  setupTrees: ReadonlySet<string> = new Set(),
): Promise<{ tampered: string[]; complete: boolean }> {
  const configs = await configsOf(start);
  const touched = changed ? new Set(changed.map(key)) : undefined;
  const found: string[] = [];
  for (const k of configs) {
    const gone = (await lstat(under(ws, bytes(k))).catch(() => undefined)) === undefined;
    if (!gone && touched && !selfOrAbove(touched, k)) continue;
    const line = await checkOne(start, ws, k, true);
    if (line) found.push(line);
  }
  const known = new Set(configs);
  // Setup-built trees hold no root key: "" never stands for "anywhere" here.
  const trees = new Set([...setupTrees].filter((t) => t !== ""));
  for (const k of touched ?? []) {
    if (k === "" || known.has(k) || protectionOf(k) === undefined) continue;
    if (selfOrAbove(trees, k)) continue;
    const s = await lstat(under(ws, bytes(k))).catch(() => undefined);
    if (!s || s.isDirectory()) continue;
    const line = await checkOne(start, ws, k, false);
    if (line) found.push(line);
  }
  return { tampered: found.sort(), complete: touched !== undefined };
}
