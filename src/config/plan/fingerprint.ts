/**
 * A test's exam, part by part, as content: the instruction, the reference and verifiers (their
 * files' bytes), the seed (a folder's files, an archive's bytes), setup, protected paths, each
 * scorer (its options and the files it names under {EVAL_DIR}), the gate, repeat, timeouts and
 * limits. Two sides' parts are compared to say what a pull request changes in a case's exam; paths
 * are compared relative to each side's repository root, so the same content in two places is equal.
 */
import { createReadStream } from "node:fs";
import { lstat, readdir, readlink } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../../paths.js";
import type { Command } from "../../sandbox/commands.js";
import type { CaseSpec, ScorerSpec, SeedSpec, SetupSpec } from "../types.js";
import type { TestRecord } from "./records.js";

/** Folders a seed never brings along (workspace/archive.ts): not part of a folder's content. */
const SKIPPED = new Set([".git", ".evalgate"]);

/** JSON with object keys sorted: the same value always gives the same text. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/**
 * node:crypto, loaded on the first digest: only a comparison of exams (`--exam-from`, a pull
 * request) makes one, and every `validate` and `run` loads this module (docs/decisions/0237).
 */
let crypto: Promise<typeof import("node:crypto")> | undefined;
async function sha256Hash() {
  crypto ??= import("node:crypto");
  return (await crypto).createHash("sha256");
}
const sha256 = async (text: string) => (await sha256Hash()).update(text).digest("hex");

/** `{EVAL_DIR}/path` in a command: files of the exam that a setup or scorer command runs or reads. */
export function evalDirFiles(command: Command): string[] {
  const text = "shell" in command ? command.shell : command.argv.join(" ");
  return [...new Set([...text.matchAll(/\{EVAL_DIR\}\/([^\s"'`;|&<>(){}$*?\\]+)/g)].map((m) => m[1]!))];
}

/** Digests of files and folders of one side, each read once. */
export class SideContent {
  private readonly cache = new Map<string, Promise<string>>();
  /** The folders holding a file that counts: an ignored tree (node_modules) is not even listed. */
  private readonly folders?: ReadonlySet<string>;

  constructor(
    /** The side's repository root. */
    readonly root: string,
    /** Repository-relative files that count (git's: tracked, or untracked and not ignored); absent: all. */
    private readonly files?: ReadonlySet<string>,
  ) {
    if (files) {
      const folders = new Set<string>();
      for (const f of files)
        for (let i = f.indexOf("/"); i >= 0; i = f.indexOf("/", i + 1)) folders.add(f.slice(0, i));
      this.folders = folders;
    }
  }

  /** A path as the two sides can compare it: relative to the root when inside it. */
  name(abs: string): string {
    return isWithin(this.root, abs) ? path.relative(this.root, abs).split(path.sep).join("/") : abs;
  }

  /** The content of a file, a folder (its files, by name) or a link; "absent" when there is none. */
  digest(abs: string): Promise<string> {
    // Outside the repository both sides read the same path: its name is its content here.
    if (!isWithin(this.root, abs)) return Promise.resolve(`outside ${abs}`);
    let p = this.cache.get(abs);
    if (!p) {
      p = this.read(abs);
      this.cache.set(abs, p);
    }
    return p;
  }

  private counts(abs: string): boolean {
    return !this.files || this.files.has(this.name(abs));
  }

  private async read(abs: string): Promise<string> {
    const s = await lstat(abs).catch(() => null);
    if (!s) return "absent";
    if (s.isSymbolicLink()) return `link ${await readlink(abs)}`;
    if (s.isFile()) return `file ${s.mode & 0o111 ? "x" : "-"} ${await fileHash(abs)}`;
    if (!s.isDirectory()) return "other";
    const lines: string[] = [];
    await this.walk(abs, "", lines);
    return `folder ${await sha256(lines.sort().join("\n"))}`;
  }

  private async walk(dir: string, rel: string, out: string[]): Promise<void> {
    const entries = await readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (SKIPPED.has(e.name)) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      const abs = path.join(dir, r);
      if (e.isDirectory()) {
        if (!this.folders || this.folders.has(this.name(abs))) await this.walk(dir, r, out);
      } else if (this.counts(abs)) out.push(`${r}\u0000${await this.read(abs)}`);
    }
  }
}

async function fileHash(abs: string): Promise<string> {
  const hash = await sha256Hash();
  for await (const chunk of createReadStream(abs)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Digests of the `{EVAL_DIR}/…` files a command names, by their name under the folder. */
async function namedFiles(side: SideContent, command: Command | undefined, evalDir: string) {
  if (!command) return {};
  const out: Record<string, string> = {};
  for (const rel of evalDirFiles(command)) out[rel] = await side.digest(path.join(evalDir, rel));
  return out;
}

async function seedPart(side: SideContent, seed: SeedSpec): Promise<string> {
  switch (seed.kind) {
    case "path":
      return `path ${await side.digest(seed.path)}`;
    case "archive":
      return `archive ${await side.digest(seed.path)} ${stableJson(seed.limits)}`;
    case "git": {
      const local = !/^[a-z][a-z0-9+.-]*:\/\//i.test(seed.url) && path.isAbsolute(seed.url);
      return `git ${stableJson({ ...seed, url: local ? side.name(seed.url) : seed.url })}`;
    }
    case "empty":
      return "empty";
  }
}

async function setupPart(side: SideContent, setup: SetupSpec): Promise<string> {
  return stableJson({
    command: setup.command ?? null,
    instructions: setup.instructions ?? null,
    env: setup.envPassthrough,
    files: await namedFiles(side, setup.command, setup.evalDir),
  });
}

async function scorerPart(side: SideContent, s: ScorerSpec): Promise<string> {
  const o = s.options as { run?: string | string[]; rubric_file?: string };
  const command: Command | undefined =
    o.run === undefined ? undefined : typeof o.run === "string" ? { shell: o.run } : { argv: o.run };
  return stableJson({
    type: s.type,
    weight: s.weight,
    required: s.required,
    timeoutMs: s.timeoutMs,
    verifyRepeats: s.verifyRepeats ?? null,
    options: s.options,
    files: await namedFiles(side, command, s.evalDir),
    rubric: o.rubric_file === undefined ? null : await side.digest(path.resolve(s.evalDir, o.rubric_file)),
  });
}

/**
 * The parts of a test's exam, by the name a reviewer reads ("instruction", "scorer unit", ...),
 * in the order they are shown. The target's own settings (its agent timeout) are not the exam's.
 */
export async function examParts(
  side: SideContent,
  spec: CaseSpec,
  rec: TestRecord,
): Promise<Map<string, string>> {
  const t = spec.test;
  const ws = t.workspace;
  const parts = new Map<string, string>();
  parts.set("instruction", await sha256(t.instruction));
  parts.set("min_score", String(t.threshold));
  parts.set("tags", stableJson(t.tags));
  parts.set(
    "reference",
    t.reference ? `${t.referenceKind ?? "patch"} ${await side.digest(t.reference)}` : "none",
  );
  parts.set("seed", await seedPart(side, ws.seed));
  parts.set("setup", await setupPart(side, ws.setup));
  parts.set("protected", stableJson(ws.protected));
  const verifiers: [string, string][] = [];
  for (const v of ws.verifiers) verifiers.push([v.to, await side.digest(v.from)]);
  parts.set("verifiers", stableJson(verifiers));
  for (const s of t.scorers) parts.set(`scorer ${s.name}`, await scorerPart(side, s));
  parts.set("verify_repeats", String(t.verifyRepeats ?? ""));
  parts.set("gate", stableJson(spec.gate));
  parts.set("repeat", stableJson([spec.repeat, spec.repeatMax ?? null]));
  parts.set(
    "timeouts",
    stableJson([
      spec.timeouts.setupMs,
      spec.timeouts.scorerMs,
      rec.test.timeout ?? null,
      rec.owner.policy.timeouts?.agent ?? null,
    ]),
  );
  parts.set("limits", stableJson(spec.limits));
  return parts;
}

/** What differs between the exam's parts and the checkout's: part names, scorers marked added or removed. */
export function changedParts(exam: ReadonlyMap<string, string>, mine: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [name, value] of exam) {
    if (!mine.has(name)) out.push(`${name} (removed)`);
    else if (mine.get(name) !== value) out.push(name);
  }
  for (const name of mine.keys()) if (!exam.has(name)) out.push(`${name} (added)`);
  return out;
}
