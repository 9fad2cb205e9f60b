/**
 * A test's scorers (its own, then the eval file's) → ScorerSpecs: weights all given and summing to
 * 1.0 or all omitted, unique names, commands' placeholders and variables, and each scorer's own
 * check of its options (asked of the run's preflight, which knows the scorers).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import {
  type Command,
  REPORT_PLACEHOLDERS,
  toCommand,
  WORKSPACE_PLACEHOLDERS,
} from "../../sandbox/commands.js";
import { parseDuration } from "../duration.js";
import type { ScorerInput } from "../schema/scorers.js";
import type { ScorerSpec, Timeouts } from "../types.js";
import { lineOf, type PathKey, type YamlSource } from "../yaml.js";
import { checkEvalDirProgram, checkPassthrough, checkPlaceholders, checkQuotable } from "./commands.js";
import type { PlanContext } from "./context.js";
import type { TestRecord } from "./records.js";
import { testRunnerTip } from "./runner-tips.js";

/** One scorer as written: in the test, or in its eval file's `scorers:` (then `dir` is that file's). */
export interface ScorerItem {
  scorer: ScorerInput;
  src: YamlSource;
  at: PathKey[];
  dir: string;
}

export function resolveScorers(
  ctx: PlanContext,
  items: readonly ScorerItem[],
  timeouts: Timeouts,
  rec: TestRecord,
): ScorerSpec[] {
  const weighted = checkWeights(ctx, items, rec);
  const out: ScorerSpec[] = [];
  const names = new Map<string, PathKey[]>();
  for (const item of items) {
    const s = item.scorer;
    const name = s.name ?? s.type;
    if (names.has(name)) {
      ctx.problem(
        item.src,
        item.at,
        `two scorers of test "${rec.test.id}" are named "${name}"`,
        s.name ? "give each scorer a unique name" : `add name: to one of the ${s.type} scorers`,
      );
    }
    names.set(name, item.at);
    if ("run" in s) {
      const cmd = toCommand(s.run);
      const at = [...item.at, "run"];
      const known =
        s.type === "tests" ? [...WORKSPACE_PLACEHOLDERS, ...REPORT_PLACEHOLDERS] : WORKSPACE_PLACEHOLDERS;
      checkPlaceholders(
        ctx,
        item.src,
        at,
        cmd,
        known,
        () => `${s.type} scorer commands know ${known.map((p) => `{${p}}`).join(" ")}`,
      );
      checkQuotable(ctx, item.src, at, cmd);
      checkEvalDirProgram(ctx, item.src, at, cmd, item.dir);
      checkPassthrough(ctx, item.src, [...item.at, "env_passthrough"], s.env_passthrough);
      if (s.type === "command") tipTestsScorer(ctx, item, cmd);
      (s.read_only ?? []).forEach((p, i) => {
        const abs = path.resolve(item.dir, p);
        if (!existsSync(abs)) {
          ctx.problem(
            item.src,
            [...item.at, "read_only", i],
            `folder ${ctx.display(abs)} does not exist`,
            ctx.relativeHint(item.dir),
          );
        }
      });
    }
    for (const p of ctx.checks.scorer?.(s, item.dir) ?? []) {
      ctx.problem(item.src, [...item.at, ...(p.at ?? [])], p.message, p.hint);
    }
    const spec: ScorerSpec = {
      name,
      type: s.type,
      weight: weighted ? (s.weight ?? 0) : 1 / items.length,
      required: s.required ?? false,
      timeoutMs: s.timeout !== undefined ? parseDuration(s.timeout) : timeouts.scorerMs,
      evalDir: item.dir,
      options: s,
    };
    if (s.verify_repeats !== undefined) spec.verifyRepeats = s.verify_repeats;
    ctx.scorerOrigins.set(spec, { src: item.src, at: item.at });
    out.push(spec);
  }
  return out;
}

/** Once per eval file and runner: the `tests` scorer that would name each failing test. */
function tipTestsScorer(ctx: PlanContext, item: ScorerItem, cmd: Command): void {
  const tip = testRunnerTip(cmd);
  if (!tip) return;
  const key = `${item.src.path}\u0000${tip.runner}`;
  if (ctx.tips.has(key)) return;
  const where = `${item.src.display}:${lineOf(item.src, [...item.at, "run"]) ?? "?"}`;
  ctx.tips.set(
    key,
    `${where}: this command scorer runs ${tip.runner} and is graded by its exit status alone; a tests scorer reads its report, names each failing test and supports fail_to_pass: type: tests, ${tip.tests}`,
  );
}

/** A test has scorers, and their weights are all given and sum to 1.0, or all omitted. True: given. */
function checkWeights(ctx: PlanContext, items: readonly ScorerItem[], rec: TestRecord): boolean {
  const weighted = items.filter((s) => s.scorer.weight !== undefined);
  if (items.length === 0) {
    ctx.problem(
      rec.src,
      rec.at,
      `test "${rec.test.id}" has no scorers`,
      "add scorers: to the test, or file-level scorers: that every test gets",
    );
  }
  if (weighted.length > 0 && weighted.length < items.length) {
    const missing = items.find((s) => s.scorer.weight === undefined)!;
    ctx.problem(
      missing.src,
      missing.at,
      "some scorers of this test have a weight and this one has none",
      "give every scorer a weight (summing to 1.0), or none for equal weights",
    );
  } else if (weighted.length > 0) {
    const sum = weighted.reduce((a, s) => a + (s.scorer.weight ?? 0), 0);
    if (Math.abs(sum - 1) > 1e-6) {
      ctx.problem(
        rec.src,
        rec.at,
        `the weights of test "${rec.test.id}" sum to ${Number(sum.toFixed(6))}, not 1.0`,
        `weights: ${weighted.map((s) => `${s.scorer.name ?? s.scorer.type}=${s.scorer.weight}`).join(", ")}`,
      );
    }
  }
  return weighted.length > 0;
}
