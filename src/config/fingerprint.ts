/**
 * Fingerprints of what makes a case's attempts comparable across runs (docs/decisions/0196): its
 * exam (instruction, scorers and their judges, verifiers, reference, seed, setup, protected paths,
 * timeouts) and the agent under test (provider, model, CLI version, command). A run of the base
 * branch whose key differs from the head's is a different history: its attempts are not pooled.
 * Files the exam names (verifiers, references, archive and folder seeds) count by their content.
 */
import { createHash, type Hash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import path from "node:path";
import type { CaseSpec, SeedSpec } from "./types.js";

/** Content of a file or folder, hashed: names, executable bits, contents, link targets. */
function hashPath(hash: Hash, abs: string, rel = ""): void {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(abs);
  } catch {
    hash.update(`missing ${rel}\n`);
    return;
  }
  if (st.isSymbolicLink()) hash.update(`link ${rel} ${readlinkSync(abs)}\n`);
  else if (st.isDirectory()) {
    hash.update(`dir ${rel}\n`);
    for (const name of readdirSync(abs).sort()) {
      // What evalgate leaves out of a folder seed (workspace/seed.ts): its own bundles and git's.
      if (name === ".git" || name === ".evalgate") continue;
      hashPath(hash, path.join(abs, name), rel ? `${rel}/${name}` : name);
    }
  } else if (st.isFile()) {
    hash.update(`file ${rel} ${st.mode & 0o111 ? "x" : "-"} ${st.size}\n`);
    hash.update(readFileSync(abs));
  }
}

const contentCache = new Map<string, string>();

function contentOf(abs: string): string {
  let h = contentCache.get(abs);
  if (!h) {
    const hash = createHash("sha256");
    hashPath(hash, abs);
    h = hash.digest("hex");
    contentCache.set(abs, h);
  }
  return h;
}

function seedPart(seed: SeedSpec): unknown {
  switch (seed.kind) {
    case "path":
      return { kind: "path", content: contentOf(seed.path) };
    case "archive":
      return { kind: "archive", content: contentOf(seed.path) };
    case "git":
      return { kind: "git", url: seed.url, ref: seed.ref ?? null, subdir: seed.subdir ?? null };
    case "empty":
      return { kind: "empty" };
  }
}

/** JSON with the checkout's absolute paths made relative: the same exam in another clone is the same. */
function portable(value: unknown, spec: CaseSpec, projectRoot: string | undefined): string {
  let text = JSON.stringify(value);
  for (const [dir, name] of [
    [spec.evalDir, "{EVAL_DIR}"],
    [projectRoot, "{ROOT}"],
  ] as const) {
    if (dir && dir.length > 1) text = text.replaceAll(JSON.stringify(dir).slice(1, -1), name);
  }
  return text;
}

/**
 * The exam of a case: everything that grades its attempts, with the files it names by content and
 * its paths relative to its eval file's folder (or `projectRoot`).
 */
export function examFingerprint(spec: CaseSpec, projectRoot?: string): string {
  const t = spec.test;
  const ws = t.workspace;
  const exam = {
    instruction: t.instruction,
    min_score: t.threshold,
    verify_repeats: t.verifyRepeats ?? null,
    reference: t.reference ? { kind: t.referenceKind ?? "patch", content: contentOf(t.reference) } : null,
    scorers: t.scorers.map((s) => ({
      name: s.name,
      type: s.type,
      weight: s.weight,
      required: s.required,
      timeout_ms: s.timeoutMs,
      verify_repeats: s.verifyRepeats ?? null,
      options: s.options,
    })),
    protected: ws.protected,
    verifiers: ws.verifiers.map((v) => ({ to: v.to, content: contentOf(v.from) })),
    seed: seedPart(ws.seed),
    setup: { command: ws.setup.command ?? null, instructions: ws.setup.instructions ?? null },
    timeouts: spec.timeouts,
  };
  return `sha256:${createHash("sha256")
    .update(portable(exam, spec, projectRoot))
    .digest("hex")}`;
}

/**
 * The history key of a case: its exam and its agent (provider, model, pinned CLI version, command
 * and arguments, timeout). The judge's model is an option of its llm-judge scorer, so in the exam.
 * Environment values are left out: they hold secrets, and a changed key is not a changed agent.
 */
export function historyKey(spec: CaseSpec, projectRoot?: string): string {
  const a = spec.target;
  const agent = {
    provider: a.provider,
    model: a.model ?? null,
    version: a.version ?? null,
    command: a.command ?? null,
    args: a.args,
    timeout_ms: a.timeoutMs ?? null,
  };
  const text = portable({ exam: examFingerprint(spec, projectRoot), agent }, spec, projectRoot);
  return `sha256:${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;
}
