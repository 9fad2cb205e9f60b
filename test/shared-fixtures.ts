/**
 * Fixtures that several tests only read, built once instead of once per test file: a folder made by
 * a build function (a bundle of a run, a built CLI) and the JSON value it returned. Two lifetimes:
 * - per test run, in the folder test/global-setup.ts makes (product runs: what they produce is only
 *   trusted for the code and machine of this run);
 * - across runs, keyed by a hash of every input (build outputs such as an ncc bundle, under
 *   node_modules/.cache/evalgate-test/, which `npm ci` clears with the dependencies it keys on).
 * Test files run in parallel processes: the first to ask builds under a lock, the others wait. A
 * fixture is read-only: its files' fingerprint is recorded when built and checked when reused (a
 * changed cached build is rebuilt) and at the end of the run (a test that wrote into a per-run
 * fixture fails the run), so no test can depend on what another left behind.
 * Imported by the global setup (in vitest's main process): nothing here may use vitest's test API.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";

export interface Fixture<T> {
  /** The built folder: read it, never write into it. */
  dir: string;
  /** What the build function returned. */
  value: T;
}

const VALUE = "value.json";
const FINGERPRINT = "fingerprint.txt";
const BUILT = "dir";
/** How long a test file waits for another that is building the same fixture. */
const WAIT_MS = 15 * 60_000;

/** sha256 (hex, 16 characters) of the files under `paths` (relative names and bytes) and `extra`. */
export function contentKey(paths: string[], extra: string[] = []): string {
  const hash = createHash("sha256");
  for (const p of paths) {
    const walk = (abs: string, rel: string) => {
      const st = lstatSync(abs);
      if (st.isDirectory()) {
        for (const name of readdirSync(abs).sort()) walk(path.join(abs, name), `${rel}/${name}`);
      } else {
        hash.update(`${rel}\0${st.mode}\0`);
        hash.update(st.isSymbolicLink() ? "symlink" : readFileSync(abs));
        hash.update("\0");
      }
    };
    walk(p, path.basename(p));
  }
  for (const e of extra) hash.update(`${e}\0`);
  return hash.digest("hex").slice(0, 16);
}

/** Every entry under `dir` with its size, mode and modification time, one line each. */
export function fingerprint(dir: string): string {
  const lines: string[] = [];
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      const p = path.join(abs, name);
      const st = lstatSync(p);
      lines.push(`${rel}${name} ${st.isDirectory() ? "-" : st.size} ${st.mode} ${st.mtimeMs}`);
      if (st.isDirectory()) walk(p, `${rel}${name}/`);
    }
  };
  walk(dir, "");
  return lines.join("\n");
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The fixture at `home` if it is complete and unchanged; undefined if it is missing, half built, or
 * (when `changed` is "rebuild") changed since it was built.
 */
function ready<T>(home: string, changed: "rebuild" | "fail"): Fixture<T> | undefined {
  const valueFile = path.join(home, VALUE);
  if (!existsSync(valueFile)) return undefined;
  const dir = path.join(home, BUILT);
  if (fingerprint(dir) !== readFileSync(path.join(home, FINGERPRINT), "utf8")) {
    if (changed === "rebuild") return undefined;
    throw new Error(`a test wrote into the shared fixture ${dir}: copy it first (copyFixture)`);
  }
  return { dir, value: JSON.parse(readFileSync(valueFile, "utf8")) as T };
}

/**
 * The fixture `id` under `root`, built by `build(dir)` into the folder it will be read from (a run's
 * output names its own folder) unless a complete one is there. `build` returns a JSON value. A
 * fixture changed since it was built is rebuilt (a cache left by an earlier run) or is an error (one
 * of this run: some test wrote into it).
 */
export function acquireFixture<T>(
  root: string,
  id: string,
  build: (dir: string) => T,
  changed: "rebuild" | "fail",
): Fixture<T> {
  const home = path.join(root, id);
  const lock = `${home}.lock`;
  const deadline = Date.now() + WAIT_MS;
  mkdirSync(root, { recursive: true });
  for (;;) {
    const done = ready<T>(home, changed);
    if (done) return done;
    try {
      mkdirSync(lock);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      // Another test file is building it; its pid is in the lock once written.
      let owner = Number.NaN;
      try {
        owner = Number(readFileSync(path.join(lock, "pid"), "utf8"));
      } catch {
        // not written yet
      }
      if (Number.isInteger(owner) && !alive(owner)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`waited too long for the shared fixture ${home}`);
      else sleep(200);
      continue;
    }
    try {
      writeFileSync(path.join(lock, "pid"), String(process.pid));
      // A complete one was made while we looked, or a crashed build or a changed cache is left.
      const done = ready<T>(home, changed);
      if (done) return done;
      rmSync(home, { recursive: true, force: true });
      mkdirSync(home);
      const dir = path.join(home, BUILT);
      const value = build(dir);
      if (!existsSync(dir)) mkdirSync(dir);
      writeFileSync(path.join(home, FINGERPRINT), fingerprint(dir));
      // The value is written last, by a rename: a fixture with a value is complete.
      writeFileSync(path.join(home, `${VALUE}.tmp`), JSON.stringify(value));
      renameSync(path.join(home, `${VALUE}.tmp`), path.join(home, VALUE));
      return { dir, value };
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** The fixtures under `root` (those named in `ids`, or all) whose files changed after they were built. */
export function changedFixtures(root: string, ids?: string[]): string[] {
  if (!existsSync(root)) return [];
  return (ids ?? readdirSync(root))
    .filter((id) => existsSync(path.join(root, id, VALUE)))
    .filter(
      (id) =>
        fingerprint(path.join(root, id, BUILT)) !== readFileSync(path.join(root, id, FINGERPRINT), "utf8"),
    );
}
