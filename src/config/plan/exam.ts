/**
 * The exam from another commit (docs/exam.md): everything that grades is read from that commit's
 * files (the base of a pull request, materialized outside the checkout by pipeline/exam.ts), and
 * only each eval file's `targets:` — the thing under test — from the checkout. Both sides are
 * read in full: a test only the checkout has is proposed (it runs from its own definition and
 * never gates); one the checkout changes or removes runs as the exam has it, and what the checkout
 * changes is said, part by part.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { isWithin } from "../../paths.js";
import { answerKeyOf } from "../answer-key.js";
import { type Discovered, discoverEach, evalFilesOf } from "../discover.js";
import type { GateInput } from "../schema/gate.js";
import type { CaseExam, CaseSpec, EvalRoot, ExamFileChange, PlanExam } from "../types.js";
import { checkDuplicateIds, type ExpandOptions, type Expansion, expandCases } from "./cases.js";
import type { PlanContext } from "./context.js";
import { changedParts, examParts, SideContent, stableJson } from "./fingerprint.js";
import { EvalFiles } from "./includes.js";
import type { LoadedEval } from "./records.js";
import { loadSide, type Side } from "./sides.js";
import type { TargetResolver } from "./targets.js";

/** Where the exam is read from: another commit's files, in a folder of their own. */
export interface ExamSource {
  /** The commit's files: the repository root as of that commit (outside the checkout). */
  root: string;
  sha: string;
  /** The ref as given (`--exam-from`, or the pull request's base commit). */
  ref: string;
  /** How messages name the commit: "the base commit abc1234". */
  label: string;
  /**
   * The checkout's files that count when a folder is compared (git's: tracked, or untracked and
   * not ignored), repository-relative; absent: every file.
   */
  checkoutFiles?: ReadonlySet<string>;
}

export interface ExamLoad {
  roots: EvalRoot[];
  expansion: Expansion;
  notes: string[];
  exam: PlanExam;
  answerKeys: string[];
}

/** `a.b 1 → 0.5` for every leaf that differs between two gate blocks. */
export function gateChanges(base: GateInput | undefined, head: GateInput | undefined): string[] {
  const flat = (v: unknown, prefix: string, out: Map<string, string>) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) flat(x, prefix ? `${prefix}.${k}` : k, out);
    } else if (v !== undefined) out.set(prefix, JSON.stringify(v));
    return out;
  };
  const b = flat(base ?? {}, "", new Map());
  const h = flat(head ?? {}, "", new Map());
  const keys = [...new Set([...b.keys(), ...h.keys()])].sort();
  return keys
    .filter((k) => b.get(k) !== h.get(k))
    .map((k) => `${k} ${b.get(k) ?? "(default)"} → ${h.get(k) ?? "(default)"}`);
}

/** The eval files each path names on either side; a path must name some on one side at least. */
async function discoverBoth(ctx: PlanContext, exam: PlanContext, paths: readonly string[]) {
  // An absolute path into the checkout names the same place in the exam's files.
  const examPaths = paths.map((p) =>
    path.isAbsolute(p) && isWithin(ctx.projectRoot, p) ? path.relative(ctx.cwd, p) || "." : p,
  );
  const mine = await discoverEach(paths, ctx.cwd, ctx.projectRoot);
  const theirs = await discoverEach(examPaths, exam.cwd, exam.projectRoot);
  const inExam = (d: Discovered) => d.matches.filter((m) => isWithin(exam.projectRoot, m));
  evalFilesOf(
    mine.map((d, i) => (d.problem && inExam(theirs[i]!).length > 0 ? { input: d.input, matches: [] } : d)),
  );
  return {
    mine: [...new Set(mine.flatMap((d) => d.matches))].sort(),
    exam: [...new Set(theirs.flatMap(inExam))].sort(),
  };
}

/** The tests of both sides, the exam's as they are and the checkout's new ones as proposed. */
export async function loadWithExam(
  ctx: PlanContext,
  targets: TargetResolver,
  source: ExamSource,
  paths: readonly string[],
  expand: ExpandOptions,
  skipEvals?: ReadonlySet<string>,
): Promise<ExamLoad> {
  const examCtx = ctx.examSide(source.root, { label: ` at ${source.label}`, headRoot: ctx.projectRoot });
  const found = await discoverBoth(ctx, examCtx, paths);
  const myFiles = new EvalFiles(ctx, targets);
  const mine = await loadSide(ctx, myFiles, found.mine, skipEvals);
  // The targets of an exam file are the checkout's version's; when the checkout removed the file,
  // its own targets, resolved in the checkout's folder (the agents there are still the PR's).
  const examFiles = new EvalFiles(examCtx, targets, async (l) => {
    const abs = path.join(ctx.projectRoot, l.evalPath);
    const own = existsSync(abs) ? await myFiles.load(abs) : undefined;
    return own ?? { ...l, dir: examCtx.inCheckout(l.dir) };
  });
  const exam = await loadSide(examCtx, examFiles, found.exam, skipEvals);
  checkDuplicateIds(ctx, mine.records);
  checkDuplicateIds(examCtx, exam.records);
  const myCases = await expandCases(ctx, mine.records, expand);
  const examCases = await expandCases(examCtx, exam.records, expand);
  const proposed = await compareCases(
    source,
    ctx,
    { side: mine, cases: myCases },
    { side: exam, cases: examCases },
  );

  const examRoots = new Set(exam.roots.map((r) => r.evalPath));
  return {
    roots: [...exam.roots, ...mine.roots.filter((r) => !examRoots.has(r.evalPath))],
    expansion: {
      cases: [...examCases.cases, ...proposed],
      targetNames: new Set([...examCases.targetNames, ...myCases.targetNames]),
      unplanned: new Set([...examCases.unplanned, ...myCases.unplanned]),
      recordOf: new Map([...examCases.recordOf, ...myCases.recordOf]),
    },
    notes: [...new Set([...exam.notes, ...mine.notes])],
    exam: {
      sha: source.sha,
      ref: source.ref,
      files: await fileChanges(await exam.files.files(), await myFiles.files()),
    },
    answerKeys: answerKeysOf(examCtx, examCases.cases, myCases.cases),
  };
}

const testKey = (c: CaseSpec) => `${c.identity.evalPath}\u0000${c.identity.testId}`;

interface Loaded {
  side: Side;
  cases: Expansion;
}

/**
 * Marks each exam case the checkout changes or removes, and returns the checkout's cases of tests
 * the exam does not have, marked proposed. Tests are compared once each, on their first case.
 */
async function compareCases(
  source: ExamSource,
  ctx: PlanContext,
  mine: Loaded,
  exam: Loaded,
): Promise<CaseSpec[]> {
  const myTests = new Set(mine.side.records.map((r) => `${r.owner.loaded.evalPath}\u0000${r.test.id}`));
  const examTests = new Set(exam.side.records.map((r) => `${r.owner.loaded.evalPath}\u0000${r.test.id}`));
  const firstOf = (cases: readonly CaseSpec[]) => {
    const m = new Map<string, CaseSpec>();
    for (const c of cases) if (!m.has(testKey(c))) m.set(testKey(c), c);
    return m;
  };
  const myFirst = firstOf(mine.cases.cases);
  const theirs = new SideContent(source.root);
  const ours = new SideContent(ctx.projectRoot, source.checkoutFiles);
  const verdicts = new Map<string, CaseExam | undefined>();
  for (const [key, c] of firstOf(exam.cases.cases)) {
    if (!myTests.has(key)) {
      verdicts.set(key, { status: "removed", changes: [] });
      continue;
    }
    const m = myFirst.get(key);
    // The checkout's test gave no case: its own problem is reported, and the run stops there.
    if (!m) continue;
    const changes = changedParts(
      await examParts(theirs, c, exam.cases.recordOf.get(c)!),
      await examParts(ours, m, mine.cases.recordOf.get(m)!),
    );
    verdicts.set(key, changes.length ? { status: "changed", changes } : undefined);
  }
  for (const c of exam.cases.cases) {
    const v = verdicts.get(testKey(c));
    if (v) c.exam = { status: v.status, changes: [...v.changes] };
  }
  const proposed = mine.cases.cases.filter((c) => !examTests.has(testKey(c)));
  for (const c of proposed) c.exam = { status: "proposed", changes: [] };
  return proposed;
}

/** Eval files the checkout adds or removes, and what it changes in the gate or paths of the others. */
async function fileChanges(
  exam: readonly LoadedEval[],
  mine: readonly LoadedEval[],
): Promise<ExamFileChange[]> {
  const theirs = new Map(exam.map((l) => [l.evalPath, l]));
  const ours = new Map(mine.map((l) => [l.evalPath, l]));
  const out: ExamFileChange[] = [];
  for (const evalPath of [...new Set([...theirs.keys(), ...ours.keys()])].sort()) {
    const t = theirs.get(evalPath);
    const o = ours.get(evalPath);
    if (!t) out.push({ evalPath, change: "added", changes: [] });
    else if (!o) out.push({ evalPath, change: "removed", changes: [] });
    else {
      const changes = gateChanges(t.file.gate, o.file.gate).map((line) => `gate ${line}`);
      if (stableJson(t.file.paths ?? null) !== stableJson(o.file.paths ?? null)) changes.push("paths");
      if (changes.length) out.push({ evalPath, change: "changed", changes });
    }
  }
  return out;
}

/**
 * Answer keys the cases that run do not name: where the exam's verifiers and references lie in the
 * checkout (an agent's program folder may be that folder), and the checkout's own definitions'.
 */
function answerKeysOf(examCtx: PlanContext, exam: readonly CaseSpec[], mine: readonly CaseSpec[]): string[] {
  return [
    ...new Set([
      ...exam.flatMap((c) => answerKeyOf(c, exam)).map((k) => examCtx.inCheckout(k)),
      ...mine.flatMap((c) => answerKeyOf(c, mine)),
    ]),
  ];
}
