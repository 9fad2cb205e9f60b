/**
 * Tests × targets → cases: each test's task, reference, workspace, guards, scorers and gate, then
 * one case per target it runs on, with its identity, attempts, timeouts and limits.
 */
import { stat } from "node:fs/promises";
import { didYouMean } from "../../errors.js";
import { usesPlaceholder } from "../../sandbox/commands.js";
import { parseDuration } from "../duration.js";
import { parseSize } from "../size.js";
import { MAX_TASK_FILE_BYTES, readTextFile, TextFileRefused } from "../text-file.js";
import {
  type CaseSpec,
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  identityKey,
  type Limits,
  type RepeatSetting,
  type TargetSpec,
  type Timeouts,
} from "../types.js";
import { lineOf, type PathKey, prunedUnder } from "../yaml.js";
import type { PlanContext } from "./context.js";
import { resolveEnvironment, resolveResources } from "./environment.js";
import { caseGate } from "./gate.js";
import { answerKeyInSeed, resolveGuards } from "./guards.js";
import { lockfileOutsideSeed } from "./lockfile.js";
import type { Policy, TestRecord } from "./records.js";
import { resolveScorers, type ScorerItem } from "./scorers.js";
import { resolveWorkspace, type WorkspaceSource } from "./workspace.js";

/** Linux's limit on one command-line argument (MAX_ARG_STRLEN); a shell command is one argument. */
const MAX_ARG_BYTES = 128 * 1024;

export interface Expansion {
  cases: CaseSpec[];
  /** Every target name of the eval files read, for an unknown `--target`. */
  targetNames: Set<string>;
  /** Targets of tests that gave no case (an unusable seed): their programs are checked all the same. */
  unplanned: Set<TargetSpec>;
  /** The test each case comes of, as written (the exam's comparison reads its raw timeouts). */
  recordOf: Map<CaseSpec, TestRecord>;
}

export interface ExpandOptions {
  /** The run's `--repeat`, over every file's and test's own. */
  repeat?: RepeatSetting;
  /** The run's `--target`s, when given. */
  targetFilter?: ReadonlySet<string>;
}

/** Test ids are unique within an eval file and the raw cases it includes. */
export function checkDuplicateIds(ctx: PlanContext, records: readonly TestRecord[]): void {
  const byOwner = new Map<string, TestRecord[]>();
  for (const r of records) {
    const key = `${r.root.evalPath}\u0000${r.owner.loaded.evalPath}\u0000${r.test.id}`;
    const list = byOwner.get(key) ?? [];
    list.push(r);
    byOwner.set(key, list);
  }
  for (const list of byOwner.values()) {
    if (list.length < 2) continue;
    const first = list[0]!;
    for (const dup of list.slice(1)) {
      ctx.problem(
        dup.src,
        [...dup.at, "id"],
        `duplicate test id "${dup.test.id}" (first defined at ${first.src.display}:${lineOf(first.src, [...first.at, "id"]) ?? "?"})`,
        "test ids must be unique within an eval file and the raw cases it includes",
      );
    }
  }
}

export async function expandCases(
  ctx: PlanContext,
  records: readonly TestRecord[],
  opts: ExpandOptions,
): Promise<Expansion> {
  const out: Expansion = { cases: [], targetNames: new Set(), unplanned: new Set(), recordOf: new Map() };
  const seenIdentity = new Map<string, TestRecord>();
  for (const rec of records) {
    for (const t of rec.owner.targets) out.targetNames.add(t.name);
    await expandTest(ctx, rec, opts, seenIdentity, out);
  }
  return out;
}

async function expandTest(
  ctx: PlanContext,
  rec: TestRecord,
  opts: ExpandOptions,
  seenIdentity: Map<string, TestRecord>,
  out: Expansion,
): Promise<void> {
  const parts = await resolveTest(ctx, rec);
  const targets = targetsOf(ctx, rec);
  if (!targets) return;
  const { ws } = parts;
  if (!ws) {
    // No case comes of this test, but its agents' programs are still checked with the rest.
    for (const t of targets) if (!opts.targetFilter || opts.targetFilter.has(t.name)) out.unplanned.add(t);
    return;
  }
  for (const target of targets) {
    const spec = caseOf(ctx, rec, { ...parts, ws }, target, opts, seenIdentity);
    if (!spec) continue;
    out.cases.push(spec);
    out.recordOf.set(spec, rec);
  }
}

/** What a test resolves to whatever target it runs on. */
interface TestParts {
  instruction: string;
  reference: Awaited<ReturnType<typeof referenceOf>>;
  /** Undefined when the workspace is unusable (its problem reported): the test gives no case. */
  ws: Awaited<ReturnType<typeof resolveWorkspace>>;
  environment: Awaited<ReturnType<typeof resolveEnvironment>>;
  resources: ReturnType<typeof resolveResources>;
  guards: ReturnType<typeof resolveGuards>;
  timeouts: Timeouts;
  scorers: ReturnType<typeof resolveScorers>;
  gate: ReturnType<typeof caseGate>;
}

/** The test's task, reference, workspace and its guards, environment, scorers and gate, checked. */
async function resolveTest(ctx: PlanContext, rec: TestRecord): Promise<TestParts> {
  const { test, owner } = rec;
  const label = `"${test.id}"`;
  const ownerFile = owner.loaded;
  const instruction = await instructionOf(ctx, rec);
  const reference = await referenceOf(ctx, rec);
  const wsDefault: WorkspaceSource = {
    input: ownerFile.file.workspace,
    src: ownerFile.src,
    at: ["workspace"],
    dir: ownerFile.dir,
  };
  const wsOverride: WorkspaceSource = {
    input: test.workspace,
    src: rec.src,
    at: [...rec.at, "workspace"],
    dir: rec.dir,
  };
  const ws = await resolveWorkspace(ctx, wsDefault, wsOverride, label);
  const environment = await resolveEnvironment(
    ctx,
    { input: ownerFile.file.environment, src: ownerFile.src, at: ["environment"], dir: ownerFile.dir },
    { input: test.environment, src: rec.src, at: [...rec.at, "environment"], dir: rec.dir },
  );
  const resources = resolveResources(ownerFile.file.resources, test.resources);
  const guards = resolveGuards(ctx, wsDefault, wsOverride);
  const seedFrom = test.workspace?.seed ? wsOverride : wsDefault;
  answerKeyInSeed(ctx, ws?.seed, seedFrom.src, [...seedFrom.at, "seed"], {
    evalFiles: [...new Set([rec.src.path, ownerFile.src.path])],
    ...(reference ? { reference: reference.path } : {}),
    verifiers: guards.verifiers.map((v) => v.from),
  });
  lockfileOutsideSeed(ctx, ws?.seed, ws?.setup.command !== undefined, seedFrom.src, [...seedFrom.at, "seed"]);
  const timeouts = timeoutsOf(owner.policy.timeouts);
  const scorers = resolveScorers(ctx, scorerItemsOf(rec), timeouts, rec);
  const gate = caseGate(ctx, owner.policy, rec.root === ownerFile ? ownerFile.src : rec.root.src);
  return { instruction, reference, ws, environment, resources, guards, timeouts, scorers, gate };
}

/** The test's own scorers, then its file's. */
function scorerItemsOf(rec: TestRecord): ScorerItem[] {
  const { test } = rec;
  const ownerFile = rec.owner.loaded;
  return [
    ...(test.scorers ?? []).map((scorer, i) => ({
      scorer,
      src: rec.src,
      at: [...rec.at, "scorers", i],
      dir: rec.dir,
    })),
    ...(ownerFile.file.scorers ?? []).map((scorer, i) => ({
      scorer,
      src: ownerFile.src,
      at: ["scorers", i] as PathKey[],
      dir: ownerFile.dir,
    })),
  ];
}

/** The test's case on `target`; undefined when the same case is already planned through another wrapper. */
function caseOf(
  ctx: PlanContext,
  rec: TestRecord,
  parts: TestParts & { ws: NonNullable<TestParts["ws"]> },
  target: TargetSpec,
  opts: ExpandOptions,
  seenIdentity: Map<string, TestRecord>,
): CaseSpec | undefined {
  const { test, owner } = rec;
  const label = `"${test.id}"`;
  const ownerFile = owner.loaded;
  const { instruction, reference, ws, guards, timeouts } = parts;
  if (target.provider === "reference" && !test.reference) {
    ctx.problem(
      rec.src,
      rec.at,
      `test ${label} has no reference patch, but target "${target.name}" (provider reference) needs one`,
      "add reference: path/to/fix.patch to the test, or limit it with targets: [...]",
    );
  }
  const identity = { evalPath: ownerFile.evalPath, testId: test.id, target: target.name };
  const key = identityKey(identity);
  const prior = seenIdentity.get(key);
  if (prior && prior.root !== rec.root) {
    ctx.problem(
      rec.src,
      rec.at,
      `case ${test.id} on ${target.name} is run twice: through ${prior.root.src.display} and ${rec.root.src.display}`,
      "include a suite from one wrapper eval only",
    );
    return undefined;
  }
  seenIdentity.set(key, rec);
  const promptBytes = Buffer.byteLength(instruction) + Buffer.byteLength(ws.setup.instructions ?? "");
  if (target.command && usesPlaceholder(target.command, "PROMPT") && promptBytes > MAX_ARG_BYTES) {
    ctx.problem(
      rec.src,
      [...rec.at, test.instruction_file !== undefined ? "instruction_file" : "instruction"],
      `the task of test ${label} is ${Math.ceil(promptBytes / 1024)} KiB, too long for the {PROMPT} of target "${target.name}": the system takes at most 128 KiB in one command-line argument`,
      "pass the task to the agent through {PROMPT_FILE} instead",
    );
  }
  const spec: CaseSpec = {
    identity,
    key,
    rootEvalPath: rec.root.evalPath,
    suite: ownerFile.name,
    // The agent's {EVAL_DIR}: the file's folder in the checkout, where its scripts are the PR's.
    evalDir: ctx.inCheckout(ownerFile.dir),
    test: {
      id: test.id,
      instruction,
      threshold:
        ctx.renamed(rec.src, rec.at, test, "threshold", "min_score", "the score an attempt needs to pass") ??
        1,
      tags: test.tags ?? [],
      workspace: { ...ws, ...guards },
      scorers: parts.scorers,
    },
    target,
    ...repeatOf(opts.repeat ?? test.repeat ?? owner.policy.repeat ?? 1),
    limits: limitsOf(owner.policy.limits),
    gate: parts.gate,
    timeouts: {
      ...timeouts,
      agentMs:
        test.timeout !== undefined ? parseDuration(test.timeout) : (target.timeoutMs ?? timeouts.agentMs),
    },
  };
  if (parts.environment) spec.environment = parts.environment;
  if (parts.resources) spec.resources = parts.resources;
  if (test.description) spec.test.description = test.description;
  if (test.verify_repeats !== undefined) spec.test.verifyRepeats = test.verify_repeats;
  if (reference) spec.test.reference = reference.path;
  if (reference?.script) spec.test.referenceKind = "script";
  return spec;
}

/** The task: exactly one of `instruction:` and `instruction_file:` (read here). */
async function instructionOf(ctx: PlanContext, rec: TestRecord): Promise<string> {
  const { test } = rec;
  if ((test.instruction === undefined) === (test.instruction_file === undefined)) {
    ctx.problem(
      rec.src,
      rec.at,
      test.instruction === undefined
        ? `test "${test.id}" has no instruction`
        : `test "${test.id}" has both instruction and instruction_file`,
      "give exactly one of instruction: or instruction_file:",
    );
  }
  let instruction = test.instruction ?? "";
  if (test.instruction_file !== undefined) {
    const abs = ctx.resolve(rec.dir, test.instruction_file);
    try {
      instruction = await readTextFile(abs, MAX_TASK_FILE_BYTES);
    } catch (error) {
      if (!(error instanceof TextFileRefused)) throw error;
      ctx.problem(
        rec.src,
        [...rec.at, "instruction_file"],
        `instruction file ${ctx.display(abs)} ${error.message}`,
        error.reason === "missing"
          ? ctx.relativeHint(rec.dir)
          : "point instruction_file at a regular text file of the repository",
      );
    }
  }
  return instruction;
}

/** The test's reference patch, or `{ script }` run instead: an absolute path that must exist. */
async function referenceOf(
  ctx: PlanContext,
  rec: TestRecord,
): Promise<{ path: string; script: boolean } | undefined> {
  const given = rec.test.reference;
  if (given === undefined) return undefined;
  const script = typeof given === "object";
  const abs = ctx.resolve(rec.dir, script ? given.script : given);
  if (!(await isFile(abs))) {
    ctx.problem(
      rec.src,
      [...rec.at, "reference", ...(script ? ["script"] : [])],
      `reference ${script ? "script" : "patch"} ${ctx.display(abs)} does not exist`,
      ctx.relativeHint(rec.dir),
    );
  }
  return { path: abs, script };
}

/**
 * The targets a test runs on: its eval file's, or those it names in `targets:`. Undefined when the
 * file declares none (a problem: no case can come of it).
 */
function targetsOf(ctx: PlanContext, rec: TestRecord): TargetSpec[] | undefined {
  const { test, owner } = rec;
  const ownerFile = owner.loaded;
  if (owner.targets.length === 0) {
    const declaring = (ownerFile.targetsFrom ?? ownerFile).src;
    ctx.problem(
      declaring,
      [],
      `${declaring.display} declares no targets`,
      'add targets: [{ name: my-agent, provider: command, command: ["./agent.sh", "{PROMPT_FILE}"] }]',
    );
    return undefined;
  }
  if (!test.targets) return owner.targets;
  const known = owner.targets.map((t) => t.name);
  test.targets.forEach((name, i) => {
    if (!known.includes(name) && !prunedUnder((ownerFile.targetsFrom ?? ownerFile).src, ["targets"])) {
      const guess = didYouMean(name, known);
      const declaring = ownerFile.targetsFrom;
      ctx.problem(
        rec.src,
        [...rec.at, "targets", i],
        declaring
          ? `unknown target "${name}": the test is the exam's, and ${declaring.src.display} no longer declares that target`
          : `unknown target "${name}"`,
        declaring
          ? `keep the target's name (targets: ${known.join(", ")}), or change the test's targets: in a pull request of its own first (the exam comes from the base: docs/exam.md)`
          : `${guess ? `did you mean "${guess}"? ` : ""}targets of this file: ${known.join(", ")}`,
      );
    }
  });
  return owner.targets.filter((t) => test.targets!.includes(t.name));
}

async function isFile(abs: string): Promise<boolean> {
  try {
    return (await stat(abs)).isFile();
  } catch {
    return false;
  }
}

/** A case's attempts: fixed (`repeat`), or adaptive from `min` up to `max`. */
function repeatOf(r: RepeatSetting): Pick<CaseSpec, "repeat" | "repeatMax"> {
  if (typeof r === "number") return { repeat: r };
  return r.max > r.min ? { repeat: r.min, repeatMax: r.max } : { repeat: r.min };
}

function limitsOf(l: Policy["limits"]): Limits {
  return {
    diffBytes: l?.diff !== undefined ? parseSize(l.diff) : DEFAULT_LIMITS.diffBytes,
    logBytes: l?.log !== undefined ? parseSize(l.log) : DEFAULT_LIMITS.logBytes,
  };
}

function timeoutsOf(t: Policy["timeouts"]): Timeouts {
  return {
    setupMs: t?.setup !== undefined ? parseDuration(t.setup) : DEFAULT_TIMEOUTS.setupMs,
    agentMs: t?.agent !== undefined ? parseDuration(t.agent) : DEFAULT_TIMEOUTS.agentMs,
    scorerMs: t?.scorer !== undefined ? parseDuration(t.scorer) : DEFAULT_TIMEOUTS.scorerMs,
  };
}
