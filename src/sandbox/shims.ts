/**
 * Version managers put shims on PATH: small scripts that exec the manager, which then runs a
 * version kept under its root (pyenv, rbenv, nodenv, asdf, jenv, goenv: `<root>/shims`; volta:
 * `<root>/bin`; nvm: a version's own `bin`). Under bubblewrap a PATH folder is shown but what its
 * shims exec is not, so every attempt would end in exit 127. These are the folders to show
 * read-only with such a PATH folder: the manager's root, and what the shims name.
 */
import { closeSync, existsSync, openSync, readdirSync, readSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";

const MANAGERS = /^\.?(pyenv|rbenv|nodenv|asdf|jenv|goenv|plenv|phpenv|luaenv|tfenv|swiftenv|scalaenv)$/;
/** Bytes of a shim read to find what it execs (shims are a few lines). */
const SHIM_BYTES = 4096;
/** Shims read per folder: they are alike, one names the manager. */
const SHIMS_READ = 3;

function head(file: string): string {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(SHIM_BYTES);
    return buf.subarray(0, readSync(fd, buf, 0, SHIM_BYTES, 0)).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * Absolute paths a shim script names as its manager: `export PYENV_ROOT="/…"` (a root) and
 * `exec "/…/libexec/pyenv"` (the program it runs). Only paths that exist.
 */
export function shimTargets(script: string): string[] {
  const out: string[] = [];
  for (const m of script.matchAll(/\b[A-Z_]*(?:ROOT|DIR)=["']?(\/[^"'\s;]+)/g)) out.push(m[1]!);
  for (const m of script.matchAll(/\bexec\s+["']?(\/[^"'\s;]+)/g)) out.push(m[1]!);
  return out.filter((p) => p !== "/" && existsSync(p));
}

/** The scripts in a shim folder (a few, small, starting with `#!`). */
function shimScripts(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    if (out.length >= SHIMS_READ) break;
    const file = path.join(dir, name);
    try {
      const s = statSync(file);
      if (!s.isFile() || s.size > 64 * 1024) continue;
      const text = head(file);
      if (text.startsWith("#!")) out.push(text);
    } catch {
      // unreadable: not a shim we can follow
    }
  }
  return out;
}

/**
 * The folders to show read-only beside PATH folder `dir` so that its shims work: the version
 * manager's root when `dir` is its shim folder, and the folders of what the shims exec. Empty for
 * a folder that is not a shim folder.
 */
export function shimRoots(dir: string): string[] {
  const parent = path.dirname(dir);
  const base = path.basename(dir);
  const roots: string[] = [];
  if (base === "shims") {
    if (MANAGERS.test(path.basename(parent))) roots.push(parent);
    for (const script of shimScripts(dir)) {
      for (const p of shimTargets(script)) {
        const real = realpathSync(p);
        roots.push(statSync(real).isDirectory() ? real : path.dirname(real));
      }
    }
  } else if (base === "bin" && path.basename(parent) === ".volta") {
    roots.push(parent);
  } else if (base === "bin" && /\/\.nvm\/versions\/node\/[^/]+$/.test(parent)) {
    // Global packages' programs link into the version's lib/node_modules.
    roots.push(parent);
  }
  // Never a home folder or above: a shim naming `$HOME` must not show the runner's home.
  const home = homedir();
  return [...new Set(roots)].filter((r) => r !== "/" && !(home === r || home.startsWith(`${r}/`)));
}
