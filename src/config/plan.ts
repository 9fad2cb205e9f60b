/**
 * Eval files → the resolved Plan. Every problem of every file is collected and reported together,
 * before anything runs.
 */
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import picomatch from "picomatch";
import { glob } from "tinyglobby";
import { CLI_NAMING } from "../cli/args.js";
import { type ConfigProblem, didYouMean, ProblemList, UsageError } from "../errors.js";
import { undetectableAdvice } from "../gate/adaptive.js";
import { isWithin } from "../paths.js";
import type { SandboxSpec } from "../sandbox/bwrap.js";
import {
  AGENT_PLACEHOLDERS,
  type Command,
  evalDirProgram,
  programOf,
  programProblem,
  resolveAgentCommand,
  resolveBin,
  toCommand,
  UNQUOTABLE_HINT,
  unknownPlaceholders,
  unquotablePlaceholders,
  usesPlaceholder,
  WORKSPACE_PLACEHOLDERS,
} from "../sandbox/commands.js";
import { deniedVariable, EVALGATE_VARIABLES } from "../sandbox/env.js";
import { scorerFor } from "../scorers/index.js";
import { discoverEvalFiles } from "./discover.js";
import { parseDuration } from "./duration.js";
import type { OptionNaming } from "./options.js";
import {
  caseFileSchema,
  type EvalFileInput,
  evalFileSchema,
  type IncludeInput,
  type TestInput,
} from "./schema/eval-file.js";
import type { GateInput } from "./schema/gate.js";
import type { ScorerInput } from "./schema/scorers.js";
import { PRESETS, type TargetInput } from "./schema/targets.js";
import type { WorkspaceInput } from "./schema/workspace.js";
import { parseSize } from "./size.js";
import {
  type Budget,
  type CaseGate,
  type CaseSpec,
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  type EvalRoot,
  identityKey,
  type Limits,
  type Plan,
  type RepeatSetting,
  type ScorerSpec,
  type ScoringGuards,
  type SeedSpec,
  type TargetSpec,
  type Timeouts,
  type VerifierSpec,
} from "./types.js";
import { validateSalvaged } from "./validate.js";
import { resolveWorkspace } from "./workspace.js";
import {
  filePath,
  keyPath,
  lineOf,
  mayFollowFromPruned,
  type PathKey,
  prunedUnder,
  readYaml,
  type YamlSource,
} from "./yaml.js";

export interface PlanOptions {
  cwd: string;
  /** Identities use paths relative to this folder (the repository root). Default: cwd. */
  projectRoot?: string;
  paths: readonly string[];
  /** --target: run only these targets. */
  targets?: readonly string[];
  /** --test: run only tests whose id (or `suite/id`) matches one of these globs. */
  tests?: readonly string[];
  /** --tag: run only tests carrying one of these tags. */
  tags?: readonly string[];
  repeat?: RepeatSetting;
  concurrency?: number;
  /** Check that agent commands exist (default true; `validate --solvable` runs no agent). */
  checkAgentPrograms?: boolean;
  /**
   * Check that the variables evalgate itself reads (a judge's api_key_env) are set: a run checks,
   * `validate` does not (files are often linted where the secrets are not).
   */
  checkSecrets?: boolean;
  /** How the user spelled the options, for messages (default: the CLI's flags). */
  naming?: OptionNaming;
  /**
   * The `gate:` block to use instead of the file's own, by evalPath (the base commit's, on a pull
   * request: github/trusted.ts). A key mapped to undefined means "no gate block": the defaults.
   */
  gateOverride?: ReadonlyMap<string, GateInput | undefined>;
  /** Root eval files (evalPath) not to run: a pull request touched none of their `paths:`. */
  skipEvals?: ReadonlySet<string>;
}

interface LoadedEval {
  src: YamlSource;
  file: EvalFileInput;
  dir: string;
  evalPath: string;
  name: string;
}

/** Runtime policy: bound by the root eval file, falling back to a suite's own values. */
interface Policy {
  repeat?: RepeatSetting;
  gate?: GateInput;
  timeouts?: EvalFileInput["timeouts"];
  limits?: EvalFileInput["limits"];
}

interface Owner {
  loaded: LoadedEval;
  targets: TargetSpec[];
  policy: Policy;
}

interface TestRecord {
  test: TestInput;
  src: YamlSource;
  at: PathKey[];
  /** Folder of the file the test is written in (its relative paths resolve here). */
  dir: string;
  owner: Owner;
  root: LoadedEval;
}

class Planner {
  readonly problems = new ProblemList();
  /** Warnings that do not stop a run (an old spelling), shown by validate and run as notes. */
  readonly notes = new Set<string>();
  private readonly cache = new Map<string, Promise<LoadedEval | undefined>>();
  readonly suiteFiles = new Set<string>();
  private readonly targetCache = new Map<LoadedEval, TargetSpec[]>();
  readonly targetOrigins = new WeakMap<TargetSpec, { src: YamlSource; at: PathKey[] }>();
  readonly scorerOrigins = new WeakMap<ScorerSpec, { src: YamlSource; at: PathKey[] }>();

  constructor(
    readonly cwd: string,
    readonly projectRoot: string,
    readonly gateOverride?: ReadonlyMap<string, GateInput | undefined>,
  ) {}

  display(abs: string): string {
    const rel = path.relative(this.cwd, abs);
    return rel && !rel.startsWith("..") ? rel : abs;
  }

  evalPathOf(abs: string): string {
    const rel = path.relative(this.projectRoot, abs);
    return (rel && !rel.startsWith("..") ? rel : abs).split(path.sep).join("/");
  }

  problem(src: YamlSource, at: readonly PathKey[], message: string, hint?: string, key?: string): void {
    const full = key ? [...at, key] : at;
    // Schema errors were reported and the bad parts dropped: a problem that may only be their echo
    // (a weight sum without the dropped scorer) waits for the next validate.
    if (mayFollowFromPruned(src, full)) return;
    const p: ConfigProblem = {
      file: src.display,
      line: lineOf(src, at, key),
      key: keyPath(filePath(src, full)) || undefined,
      message,
    };
    if (hint) p.hint = hint;
    this.problems.add(p);
  }

  loadEval(abs: string): Promise<LoadedEval | undefined> {
    let p = this.cache.get(abs);
    if (!p) {
      p = (async () => {
        const src = await readYaml(abs, this.display(abs), this.problems);
        if (!src) return undefined;
        if (src.value === null || typeof src.value !== "object" || Array.isArray(src.value)) {
          this.problems.add({
            file: src.display,
            line: 1,
            message: "an eval file must be a mapping with at least a tests: list",
            hint: "see examples/quickstart/quickstart.eval.yaml",
          });
          return undefined;
        }
        const file = validateSalvaged(evalFileSchema, src, this.problems);
        if (!file) return undefined;
        const evalPath = this.evalPathOf(abs);
        if (this.gateOverride?.has(evalPath)) {
          const gate = this.gateOverride.get(evalPath);
          if (gate) file.gate = gate;
          else delete file.gate;
        }
        const name = file.name ?? path.basename(abs).replace(/\.eval\.ya?ml$|\.ya?ml$/, "");
        return { src, file, dir: path.dirname(abs), evalPath: this.evalPathOf(abs), name };
      })();
      this.cache.set(abs, p);
    }
    return p;
  }

  /**
   * A key with an old and a new name (`threshold` → `min_rate` / `min_score`): the value under
   * either, a warning for the old one, a problem for both.
   */
  renamed(
    src: YamlSource,
    at: PathKey[],
    holder: Record<string, unknown>,
    old: string,
    now: string,
    meaning: string,
  ): number | undefined {
    const oldValue = holder[old] as number | undefined;
    const newValue = holder[now] as number | undefined;
    if (oldValue !== undefined && newValue !== undefined) {
      this.problem(src, [...at, old], `${old} and ${now} are the same setting`, `keep ${now} only`);
    } else if (oldValue !== undefined) {
      const where = `${src.display}:${lineOf(src, [...at, old]) ?? "?"}`;
      this.notes.add(
        `${where}: ${keyPath(filePath(src, [...at, old]))} is the old name of ${now} (${meaning}); it still works, rename it to ${now}`,
      );
    }
    return newValue ?? oldValue;
  }

  /** Targets declared by an eval file, resolved against its folder. */
  resolveTargets(loaded: LoadedEval): TargetSpec[] {
    let cached = this.targetCache.get(loaded);
    if (!cached) {
      cached = this.resolveTargetsOnce(loaded);
      this.targetCache.set(loaded, cached);
    }
    return cached;
  }

  private resolveTargetsOnce(loaded: LoadedEval): TargetSpec[] {
    const { src, file, dir } = loaded;
    const seen = new Map<string, number>();
    const out: TargetSpec[] = [];
    (file.targets ?? []).forEach((t: TargetInput, i) => {
      const at: PathKey[] = ["targets", i];
      if (seen.has(t.name)) {
        this.problem(
          src,
          [...at, "name"],
          `duplicate target name "${t.name}"`,
          "give each target its own name",
        );
      }
      seen.set(t.name, i);
      if (t.provider === "command" && !t.command) {
        this.problem(
          src,
          at,
          'provider "command" needs a command',
          'add command: ["node", "agent.mjs", "{PROMPT_FILE}"]',
        );
      }
      if (t.provider !== "command" && t.command) {
        this.problem(
          src,
          [...at, "command"],
          `provider "${t.provider}" takes no command`,
          "remove command, or use provider: command",
        );
      }
      const isPreset = (PRESETS as readonly string[]).includes(t.provider);
      if (t.bin !== undefined && !isPreset) {
        this.problem(
          src,
          [...at, "bin"],
          `provider "${t.provider}" takes no bin`,
          t.provider === "command"
            ? "a command target names its program in command:"
            : `bin: names the program of a preset (${PRESETS.join(", ")})`,
        );
      }
      if (t.version !== undefined && !isPreset) {
        this.problem(
          src,
          [...at, "version"],
          `provider "${t.provider}" takes no version`,
          `version: installs the agent CLI of a preset (${PRESETS.join(", ")})`,
        );
      } else if (t.version !== undefined && t.bin !== undefined) {
        this.problem(
          src,
          [...at, "version"],
          "version: and bin: both say which program runs",
          "keep version: (evalgate installs that release) or bin: (a program you installed)",
        );
      }
      this.checkPassthrough(src, [...at, "env_passthrough"], t.env_passthrough);
      this.checkFixedEnv(src, [...at, "env"], t.env);
      let command: Command | undefined;
      if (t.command) {
        command = resolveAgentCommand(toCommand(t.command), dir);
        for (const u of unknownPlaceholders(command, AGENT_PLACEHOLDERS)) {
          this.problem(
            src,
            [...at, "command"],
            `unknown placeholder {${u.name}}`,
            u.suggestion
              ? `did you mean {${u.suggestion}}?`
              : `placeholders: ${AGENT_PLACEHOLDERS.map((p) => `{${p}}`).join(" ")}`,
          );
        }
        this.checkQuotable(src, [...at, "command"], command);
      }
      const spec: TargetSpec = {
        name: t.name,
        provider: t.provider,
        args: t.args ?? [],
        env: t.env ?? {},
        envPassthrough: t.env_passthrough ?? [],
      };
      if (command) spec.command = command;
      const sandbox = this.resolveSandbox(loaded, t, at);
      if (sandbox) spec.sandbox = sandbox;
      if (t.bin !== undefined && isPreset) spec.bin = resolveBin(t.bin, dir);
      if (t.version !== undefined && isPreset) spec.version = t.version;
      if (t.price) {
        spec.price = {
          inputPerMtok: t.price.input_per_mtok,
          outputPerMtok: t.price.output_per_mtok,
          // Without a cache price, cached tokens cost what input tokens cost: never less than real.
          cachedPerMtok: t.price.cached_per_mtok ?? t.price.input_per_mtok,
        };
      }
      if (t.model) spec.model = t.model;
      if (t.timeout !== undefined) spec.timeoutMs = parseDuration(t.timeout);
      this.targetOrigins.set(spec, { src, at });
      out.push(spec);
    });
    return out;
  }

  /**
   * A target's `sandbox:` (a string or an object, default `auto`), with its read-only folders checked.
   * Undefined for `none` and for providers that run no agent program.
   */
  private resolveSandbox(loaded: LoadedEval, t: TargetInput, at: PathKey[]): SandboxSpec | undefined {
    const input = t.sandbox ?? "auto";
    const o = typeof input === "string" ? { type: input } : input;
    const sat = [...at, "sandbox"];
    if (o.type === "none") {
      if (typeof input !== "string" && (input.network !== undefined || input.read_only !== undefined)) {
        this.problem(
          loaded.src,
          sat,
          "network and read_only apply with type: auto or bwrap",
          "use type: auto or bwrap, or remove them",
        );
      }
      return undefined;
    }
    if (t.provider === "reference" || t.provider === "noop") {
      // auto means nothing here: there is no agent process to isolate.
      if (o.type === "bwrap") {
        this.problem(
          loaded.src,
          sat,
          `provider "${t.provider}" runs no agent program, so there is nothing to sandbox`,
          "remove sandbox from this target",
        );
      }
      return undefined;
    }
    const readOnly: string[] = [];
    (typeof input === "string" ? [] : (input.read_only ?? [])).forEach((p, i) => {
      const abs = path.resolve(loaded.dir, p);
      if (!existsSync(abs)) {
        this.problem(
          loaded.src,
          [...sat, "read_only", i],
          `folder ${this.display(abs)} does not exist`,
          `paths are relative to ${this.display(loaded.dir) || "."}/`,
        );
      } else readOnly.push(abs);
    });
    // auto keeps what worked without a sandbox working: the network (presets call their model's API)
    // and the eval file's folder, read-only, for an agent that runs {EVAL_DIR}/agent.py.
    const auto = o.type === "auto";
    const network = typeof input === "string" ? auto : (input.network ?? auto);
    if (auto) readOnly.unshift(loaded.dir);
    if (!network && (PRESETS as readonly string[]).includes(t.provider)) {
      // Without the network the agent cannot reach its model: every attempt would end in the agent's
      // own "Connection error", which says nothing about the sandbox.
      this.problem(
        loaded.src,
        sat,
        `provider "${t.provider}" calls its model's API over the network, which sandbox: ${o.type} cuts off unless network: true`,
        typeof input === "string" ? "use sandbox: { type: bwrap, network: true }" : "set network: true",
      );
    }
    return { kind: o.type, network, readOnly };
  }

  checkPassthrough(src: YamlSource, at: PathKey[], names: readonly string[] | undefined): void {
    (names ?? []).forEach((name, i) => {
      const why = deniedVariable(name);
      if (why) {
        this.problem(
          src,
          [...at, i],
          `${name} ${why}; it is never passed to agents, setup or scorers`,
          "pass a dedicated secret with its own name instead (for example MY_AGENT_API_KEY)",
        );
      }
    });
  }

  /** A shell command whose placeholder evalgate could not quote (see unquotablePlaceholders). */
  checkQuotable(src: YamlSource, at: PathKey[], command: Command): void {
    for (const name of unquotablePlaceholders(command)) {
      this.problem(
        src,
        at,
        `{${name}} stands in a here-document or in a command substitution inside double quotes, where its value cannot be quoted and could run as shell code`,
        UNQUOTABLE_HINT,
      );
    }
  }

  /** A setup or scorer command starting a program `{EVAL_DIR}/…` that does not exist or cannot run. */
  checkEvalDirProgram(src: YamlSource, at: PathKey[], command: Command, evalDir: string): void {
    const program = evalDirProgram(command, evalDir);
    const why = program ? programProblem(program) : undefined;
    if (why)
      this.problem(src, at, `the command cannot run: ${why}`, "{EVAL_DIR} is the folder of this eval file");
  }

  /** A target's fixed `env:` values may not impersonate the runner's variables or evalgate's own. */
  checkFixedEnv(src: YamlSource, at: PathKey[], values: Record<string, string> | undefined): void {
    for (const name of Object.keys(values ?? {})) {
      const why =
        deniedVariable(name) ??
        ((EVALGATE_VARIABLES as readonly string[]).includes(name)
          ? "is set by evalgate for every attempt"
          : undefined);
      if (why) {
        this.problem(src, at, `${name} ${why}; env: cannot set it`, "give the value another name", name);
      }
    }
  }

  async collect(
    entries: unknown[],
    src: YamlSource,
    base: PathKey[],
    dir: string,
    owner: Owner,
    root: LoadedEval,
    stack: string[],
    out: TestRecord[],
  ): Promise<void> {
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as TestInput | IncludeInput;
      const at = [...base, i];
      if (!("include" in entry)) {
        out.push({ test: entry, src, at, dir, owner, root });
        continue;
      }
      const matches = (await glob(entry.include, { cwd: dir, absolute: true, dot: true })).sort();
      if (matches.length === 0) {
        this.problem(
          src,
          [...at, "include"],
          `include "${entry.include}" matched no files`,
          `paths are relative to ${this.display(dir) || "."}/`,
        );
        continue;
      }
      for (const m of matches.map((x) => path.normalize(x))) {
        if (stack.includes(m)) {
          const chain = [...stack.slice(stack.indexOf(m)), m].map((f) => this.display(f)).join(" → ");
          this.problem(src, [...at, "include"], `include cycle: ${chain}`, "remove one of these includes");
          continue;
        }
        if (entry.type === "suite") {
          this.suiteFiles.add(m);
          const loaded = await this.loadEval(m);
          if (!loaded) continue;
          const targets = loaded.file.targets?.length ? this.resolveTargets(loaded) : owner.targets;
          const policy: Policy = {
            repeat: owner.policy.repeat ?? loaded.file.repeat,
            gate: owner.policy.gate ?? loaded.file.gate,
            timeouts: { ...loaded.file.timeouts, ...owner.policy.timeouts },
            limits: { ...loaded.file.limits, ...owner.policy.limits },
          };
          await this.collect(
            loaded.file.tests,
            loaded.src,
            ["tests"],
            loaded.dir,
            { loaded, targets, policy },
            root,
            [...stack, m],
            out,
          );
        } else {
          const caseSrc = await readYaml(m, this.display(m), this.problems);
          if (!caseSrc) continue;
          const value = caseSrc.value;
          if (value !== null && typeof value === "object" && !Array.isArray(value) && "tests" in value) {
            this.problems.add({
              file: caseSrc.display,
              line: 1,
              message: "this looks like an eval file, but it is included as raw cases",
              hint: "add type: suite to the include, or make this file a plain list of tests",
            });
            continue;
          }
          caseSrc.value = Array.isArray(value) ? value : [value];
          const list = validateSalvaged(caseFileSchema, caseSrc, this.problems);
          if (!list) continue;
          await this.collect(list, caseSrc, [], path.dirname(m), owner, root, [...stack, m], out);
        }
      }
    }
  }

  async fileExists(abs: string): Promise<boolean> {
    try {
      return (await stat(abs)).isFile();
    } catch {
      return false;
    }
  }

  /**
   * Protected globs and hidden verifiers: a test's list replaces the eval file's. Verifier files
   * must exist and must not be inside a folder seed (the agent would see them there).
   */
  async resolveGuards(
    def: { input?: WorkspaceInput; src: YamlSource; at: PathKey[]; dir: string },
    over: { input?: WorkspaceInput; src: YamlSource; at: PathKey[]; dir: string },
    seed: SeedSpec | undefined,
  ): Promise<ScoringGuards> {
    const protFrom = over.input?.protected ? over : def;
    const globs = protFrom.input?.protected ?? [];
    globs.forEach((g, i) => {
      const at = [...protFrom.at, "protected", i];
      const problem = workspaceRelativeProblem(g);
      if (problem) {
        this.problem(protFrom.src, at, `protected path "${g}" ${problem}`, 'for example "test/**"');
        return;
      }
      try {
        picomatch.makeRe(g, { dot: true, strictBrackets: true });
      } catch (e) {
        this.problem(protFrom.src, at, `bad glob "${g}": ${(e as Error).message}`);
      }
    });
    const verFrom = over.input?.verifiers ? over : def;
    const verifiers: VerifierSpec[] = [];
    for (const [i, v] of (verFrom.input?.verifiers ?? []).entries()) {
      const at = [...verFrom.at, "verifiers", i];
      const from = path.resolve(verFrom.dir, v.from);
      // Both ends are checked, so a user fixing one does not meet the other's problem next.
      const toProblem = workspaceRelativeProblem(v.to);
      if (toProblem) {
        this.problem(
          verFrom.src,
          [...at, "to"],
          `verifier destination "${v.to}" ${toProblem}`,
          "for example to: test/cart.test.js",
        );
      }
      if (!existsSync(from)) {
        this.problem(
          verFrom.src,
          [...at, "from"],
          `verifier ${this.display(from)} does not exist`,
          `paths are relative to ${this.display(verFrom.dir) || "."}/`,
        );
        continue;
      }
      if (seed?.kind === "path" && isWithin(seed.path, from)) {
        this.problem(
          verFrom.src,
          [...at, "from"],
          `verifier ${this.display(from)} is inside the seed folder ${this.display(seed.path)}, so the agent would see it`,
          "keep hidden verifiers outside the seed, for example in a verifiers/ folder beside the eval file",
        );
        continue;
      }
      if (toProblem) continue;
      verifiers.push({ from, to: path.posix.normalize(v.to.replaceAll("\\", "/")).replace(/\/+$/, "") });
    }
    return { protected: [...globs], verifiers };
  }

  resolveScorers(
    items: { scorer: ScorerInput; src: YamlSource; at: PathKey[]; dir: string }[],
    timeouts: Timeouts,
    rec: TestRecord,
  ): ScorerSpec[] {
    const out: ScorerSpec[] = [];
    const names = new Map<string, PathKey[]>();
    const weighted = items.filter((s) => s.scorer.weight !== undefined);
    if (items.length === 0) {
      this.problem(
        rec.src,
        rec.at,
        `test "${rec.test.id}" has no scorers`,
        "add scorers: to the test, or file-level scorers: that every test gets",
      );
    }
    if (weighted.length > 0 && weighted.length < items.length) {
      const missing = items.find((s) => s.scorer.weight === undefined)!;
      this.problem(
        missing.src,
        missing.at,
        "some scorers of this test have a weight and this one has none",
        "give every scorer a weight (summing to 1.0), or none for equal weights",
      );
    } else if (weighted.length > 0) {
      const sum = weighted.reduce((a, s) => a + (s.scorer.weight ?? 0), 0);
      if (Math.abs(sum - 1) > 1e-6) {
        this.problem(
          rec.src,
          rec.at,
          `the weights of test "${rec.test.id}" sum to ${Number(sum.toFixed(6))}, not 1.0`,
          `weights: ${weighted.map((s) => `${s.scorer.name ?? s.scorer.type}=${s.scorer.weight}`).join(", ")}`,
        );
      }
    }
    for (const item of items) {
      const s = item.scorer;
      const name = s.name ?? s.type;
      const prev = names.get(name);
      if (prev) {
        this.problem(
          item.src,
          item.at,
          `two scorers of test "${rec.test.id}" are named "${name}"`,
          s.name ? "give each scorer a unique name" : `add name: to one of the ${s.type} scorers`,
        );
      }
      names.set(name, item.at);
      if ("run" in s) {
        const cmd = toCommand(s.run);
        for (const u of unknownPlaceholders(cmd, WORKSPACE_PLACEHOLDERS)) {
          this.problem(
            item.src,
            [...item.at, "run"],
            `unknown placeholder {${u.name}}`,
            `scorer commands know ${WORKSPACE_PLACEHOLDERS.map((p) => `{${p}}`).join(" ")}`,
          );
        }
        this.checkQuotable(item.src, [...item.at, "run"], cmd);
        this.checkEvalDirProgram(item.src, [...item.at, "run"], cmd, item.dir);
        this.checkPassthrough(item.src, [...item.at, "env_passthrough"], s.env_passthrough);
      }
      if (s.type === "file" && s.matches !== undefined) {
        try {
          new RegExp(s.matches, "m");
        } catch (e) {
          this.problem(
            item.src,
            [...item.at, "matches"],
            `not a valid regular expression: ${(e as Error).message}`,
          );
        }
      }
      if (s.type === "diff") {
        for (const key of ["allow", "deny"] as const) {
          (s[key] ?? []).forEach((g, i) => {
            try {
              picomatch.makeRe(g, { dot: true, strictBrackets: true });
            } catch (e) {
              this.problem(item.src, [...item.at, key, i], `bad glob "${g}": ${(e as Error).message}`);
            }
          });
        }
      }
      for (const p of scorerFor(s.type).check?.(s, item.dir) ?? []) {
        this.problem(item.src, [...item.at, ...(p.at ?? [])], p.message, p.hint);
      }
      const spec: ScorerSpec = {
        name,
        type: s.type,
        weight: weighted.length > 0 ? (s.weight ?? 0) : 1 / items.length,
        required: s.required ?? false,
        timeoutMs: s.timeout !== undefined ? parseDuration(s.timeout) : timeouts.scorerMs,
        evalDir: item.dir,
        options: s,
      };
      if (s.verify_repeats !== undefined) spec.verifyRepeats = s.verify_repeats;
      this.scorerOrigins.set(spec, { src: item.src, at: item.at });
      out.push(spec);
    }
    return out;
  }

  caseGate(policy: Policy, src: YamlSource): CaseGate {
    const given = policy.gate ?? {};
    const minRate = this.renamed(src, ["gate"], given, "threshold", "min_rate", "the rate a case needs");
    const gate = { ...given, threshold: minRate };
    const p = gate.policy ?? "all_attempts_successful";
    const needsThreshold = p === "attempt_success_rate_at_least" || p === "mean_pass_rate_at_least";
    // A policy or threshold dropped for a schema error was reported; their pairing is checked next time.
    const unsure = prunedUnder(src, ["gate"]);
    if (!unsure && needsThreshold && gate.threshold === undefined) {
      this.problem(
        src,
        ["gate", "policy"],
        `policy ${p} needs a min_rate`,
        "add gate.min_rate: a number in [0, 1], e.g. 0.67",
      );
    }
    if (!unsure && !needsThreshold && gate.threshold !== undefined) {
      this.problem(
        src,
        ["gate", given.min_rate !== undefined ? "min_rate" : "threshold"],
        `policy ${p} takes no min_rate`,
        "remove it, or use attempt_success_rate_at_least / mean_pass_rate_at_least",
      );
    }
    const onError = gate.on_error ?? "fail";
    if (gate.retries !== undefined && onError !== "retry") {
      this.problem(
        src,
        ["gate", "retries"],
        `retries only applies with on_error: retry (on_error is ${onError})`,
        "add on_error: retry, or remove retries",
      );
    }
    const out: CaseGate = { policy: p, onError, retries: onError === "retry" ? (gate.retries ?? 1) : 0 };
    if (needsThreshold && gate.threshold !== undefined) out.threshold = gate.threshold;
    return out;
  }
}

/** Why `p` is not a plain path inside the workspace, or undefined when it is. */
function workspaceRelativeProblem(p: string): string | undefined {
  const posix = p.replaceAll("\\", "/");
  if (posix.startsWith("/") || /^[A-Za-z]:/.test(posix)) return "must be relative to the workspace";
  const norm = path.posix.normalize(posix);
  if (norm === ".." || norm.startsWith("../")) return "leaves the workspace";
  if (norm === "." || norm === "./") return "is the whole workspace";
  if (norm === ".git" || norm.startsWith(".git/")) return "is inside .git, which evalgate manages";
  return undefined;
}

function budgetOf(b: GateInput["budget"]): Budget {
  const out: Budget = {};
  if (b?.cost_usd !== undefined) out.costUsd = b.cost_usd;
  if (b?.tokens !== undefined) out.tokens = b.tokens;
  if (b?.duration !== undefined) out.durationMs = parseDuration(b.duration);
  return out;
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

/** Loads, validates and resolves the eval files under `opts.paths` into a Plan. Throws ConfigError. */
/** Linux's limit on one command-line argument (MAX_ARG_STRLEN); a shell command is one argument. */
const MAX_ARG_BYTES = 128 * 1024;

export async function loadPlan(opts: PlanOptions): Promise<Plan> {
  const cwd = path.resolve(opts.cwd);
  const planner = new Planner(cwd, path.resolve(opts.projectRoot ?? cwd), opts.gateOverride);
  const files = await discoverEvalFiles(opts.paths, cwd);
  const loadedRoots = (await Promise.all(files.map((f) => planner.loadEval(f)))).filter(
    (l): l is LoadedEval => !!l,
  );

  const records: TestRecord[] = [];
  const rootRecords = new Map<string, TestRecord[]>();
  for (const loaded of loadedRoots) {
    const owner: Owner = {
      loaded,
      targets: planner.resolveTargets(loaded),
      policy: {
        repeat: loaded.file.repeat,
        gate: loaded.file.gate,
        timeouts: loaded.file.timeouts,
        limits: loaded.file.limits,
      },
    };
    const mine: TestRecord[] = [];
    await planner.collect(
      loaded.file.tests,
      loaded.src,
      ["tests"],
      loaded.dir,
      owner,
      loaded,
      [path.resolve(loaded.src.path)],
      mine,
    );
    rootRecords.set(loaded.src.path, mine);
  }
  const notes: string[] = [];
  const roots: EvalRoot[] = [];
  for (const loaded of loadedRoots) {
    if (planner.suiteFiles.has(path.resolve(loaded.src.path))) {
      notes.push(`${loaded.src.display} runs as a suite of the eval files that include it, not on its own`);
      continue;
    }
    if (opts.skipEvals?.has(loaded.evalPath)) continue;
    records.push(...(rootRecords.get(loaded.src.path) ?? []));
    const root: EvalRoot = {
      path: loaded.src.path,
      evalPath: loaded.evalPath,
      name: loaded.name,
      tags: loaded.file.tags ?? {},
      minCasePassRate: loaded.file.gate?.min_case_pass_rate ?? 1,
      ...regressionRule(loaded.file.gate?.regressions),
      onInconclusive: loaded.file.gate?.on_inconclusive ?? "warn",
      budget: budgetOf(loaded.file.gate?.budget),
    };
    if (loaded.file.description) root.description = loaded.file.description;
    if (loaded.file.concurrency) root.concurrency = loaded.file.concurrency;
    if (loaded.file.paths) root.paths = loaded.file.paths;
    roots.push(root);
  }

  // Duplicate test ids within one eval file.
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
      planner.problem(
        dup.src,
        [...dup.at, "id"],
        `duplicate test id "${dup.test.id}" (first defined at ${first.src.display}:${lineOf(first.src, [...first.at, "id"]) ?? "?"})`,
        "test ids must be unique within an eval file and the raw cases it includes",
      );
    }
  }

  const cases: CaseSpec[] = [];
  const seenIdentity = new Map<string, TestRecord>();
  const targetFilter = opts.targets && opts.targets.length > 0 ? new Set(opts.targets) : undefined;
  const allTargetNames = new Set<string>();
  const unplanned = new Set<TargetSpec>();
  for (const rec of records) {
    const { test, owner } = rec;
    const label = `"${test.id}"`;
    const ownerFile = owner.loaded;
    for (const t of owner.targets) allTargetNames.add(t.name);

    if ((test.instruction === undefined) === (test.instruction_file === undefined)) {
      planner.problem(
        rec.src,
        rec.at,
        test.instruction === undefined
          ? `test ${label} has no instruction`
          : `test ${label} has both instruction and instruction_file`,
        "give exactly one of instruction: or instruction_file:",
      );
    }
    let instruction = test.instruction ?? "";
    if (test.instruction_file !== undefined) {
      const abs = path.resolve(rec.dir, test.instruction_file);
      try {
        instruction = await readFile(abs, "utf8");
      } catch {
        planner.problem(
          rec.src,
          [...rec.at, "instruction_file"],
          `instruction file ${planner.display(abs)} does not exist`,
          `paths are relative to ${planner.display(rec.dir) || "."}/`,
        );
      }
    }
    let reference: string | undefined;
    const referenceScript = typeof test.reference === "object";
    if (test.reference !== undefined) {
      const given = typeof test.reference === "object" ? test.reference.script : test.reference;
      reference = path.resolve(rec.dir, given);
      if (!(await planner.fileExists(reference))) {
        planner.problem(
          rec.src,
          [...rec.at, "reference", ...(referenceScript ? ["script"] : [])],
          `reference ${referenceScript ? "script" : "patch"} ${planner.display(reference)} does not exist`,
          `paths are relative to ${planner.display(rec.dir) || "."}/`,
        );
      }
    }
    const wsDefault = {
      input: ownerFile.file.workspace,
      src: ownerFile.src,
      at: ["workspace"] as PathKey[],
      dir: ownerFile.dir,
    };
    const wsOverride = { input: test.workspace, src: rec.src, at: [...rec.at, "workspace"], dir: rec.dir };
    const ws = await resolveWorkspace(planner, wsDefault, wsOverride, label);
    const guards = await planner.resolveGuards(wsDefault, wsOverride, ws?.seed);
    const timeouts = timeoutsOf(owner.policy.timeouts);
    const scorerItems = [
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
    const scorers = planner.resolveScorers(scorerItems, timeouts, rec);
    const gate = planner.caseGate(owner.policy, rec.root === ownerFile ? ownerFile.src : rec.root.src);

    if (owner.targets.length === 0) {
      planner.problem(
        ownerFile.src,
        [],
        `${ownerFile.src.display} declares no targets`,
        'add targets: [{ name: my-agent, provider: command, command: ["./agent.sh", "{PROMPT_FILE}"] }]',
      );
      continue;
    }
    let targets = owner.targets;
    if (test.targets) {
      const known = owner.targets.map((t) => t.name);
      test.targets.forEach((name, i) => {
        if (!known.includes(name) && !prunedUnder(ownerFile.src, ["targets"])) {
          const guess = didYouMean(name, known);
          planner.problem(
            rec.src,
            [...rec.at, "targets", i],
            `unknown target "${name}"`,
            `${guess ? `did you mean "${guess}"? ` : ""}targets of this file: ${known.join(", ")}`,
          );
        }
      });
      targets = owner.targets.filter((t) => test.targets!.includes(t.name));
    }
    if (!ws) {
      // No case comes of this test, but its agents' programs are still checked with the rest.
      for (const t of targets) if (!targetFilter || targetFilter.has(t.name)) unplanned.add(t);
      continue;
    }
    for (const target of targets) {
      if (target.provider === "reference" && !test.reference) {
        planner.problem(
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
        planner.problem(
          rec.src,
          rec.at,
          `case ${test.id} on ${target.name} is run twice: through ${prior.root.src.display} and ${rec.root.src.display}`,
          "include a suite from one wrapper eval only",
        );
        continue;
      }
      seenIdentity.set(key, rec);
      const promptBytes = Buffer.byteLength(instruction) + Buffer.byteLength(ws.setup.instructions ?? "");
      if (target.command && usesPlaceholder(target.command, "PROMPT") && promptBytes > MAX_ARG_BYTES) {
        planner.problem(
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
        evalDir: ownerFile.dir,
        test: {
          id: test.id,
          instruction,
          threshold:
            planner.renamed(
              rec.src,
              rec.at,
              test,
              "threshold",
              "min_score",
              "the score an attempt needs to pass",
            ) ?? 1,
          tags: test.tags ?? [],
          workspace: { ...ws, ...guards },
          scorers,
        },
        target,
        ...repeatOf(opts.repeat ?? test.repeat ?? owner.policy.repeat ?? 1),
        limits: limitsOf(owner.policy.limits),
        gate,
        timeouts: {
          ...timeouts,
          agentMs:
            test.timeout !== undefined ? parseDuration(test.timeout) : (target.timeoutMs ?? timeouts.agentMs),
        },
      };
      if (test.description) spec.test.description = test.description;
      if (test.verify_repeats !== undefined) spec.test.verifyRepeats = test.verify_repeats;
      if (reference) spec.test.reference = reference;
      if (reference && referenceScript) spec.test.referenceKind = "script";
      cases.push(spec);
    }
  }

  if (targetFilter) {
    const unknown = [...targetFilter].filter((t) => !allTargetNames.has(t));
    if (unknown.length > 0 && planner.problems.empty) {
      const known = [...allTargetNames];
      throw new UsageError(
        `${(opts.naming ?? CLI_NAMING).given("target", unknown.join(", "))}: no such target${unknown.length > 1 ? "s" : ""} (targets: ${known.join(", ")})`,
      );
    }
  }
  const selected = cases.filter((c) => {
    if (targetFilter && !targetFilter.has(c.target.name)) return false;
    if (opts.tests?.length) {
      const names = [c.identity.testId, `${c.suite}/${c.identity.testId}`];
      if (!opts.tests.some((g) => names.some((n) => picomatch.isMatch(n, g)))) return false;
    }
    if (opts.tags?.length && !opts.tags.some((t) => c.test.tags.includes(t))) return false;
    return true;
  });

  // Programs of the selected agents must exist (presets' binaries are checked at run time).
  const toCheck = new Set([...selected.map((c) => c.target), ...unplanned]);
  for (const target of opts.checkAgentPrograms === false ? [] : toCheck) {
    const cmd = target.command;
    if (!cmd) continue;
    const program = programOf(cmd);
    const why = program ? programProblem(program) : undefined;
    const origin = planner.targetOrigins.get(target);
    if (why && origin) {
      planner.problem(
        origin.src,
        [...origin.at, "command"],
        `the agent command of target "${target.name}" cannot run: ${why}`,
        "a command starting with ./ is relative to the eval file's folder; other programs are looked up on PATH",
      );
    }
  }

  // A judge's key is read by evalgate: without it every attempt would run its agent, then error.
  for (const c of opts.checkSecrets ? selected : []) {
    for (const scorer of c.test.scorers) {
      const name = scorer.options.type === "llm-judge" ? scorer.options.api_key_env : undefined;
      const origin = planner.scorerOrigins.get(scorer);
      if (!name || process.env[name] || !origin) continue;
      planner.problem(
        origin.src,
        [...origin.at, "api_key_env"],
        `${name} is not set, so the judge "${scorer.name}" cannot call its model`,
        `set ${name} in evalgate's environment (in a workflow: env: { ${name}: \${{ secrets.${name} }} })`,
      );
    }
  }

  planner.problems.throwIfAny();
  if (selected.length === 0) {
    throw new UsageError(
      cases.length === 0
        ? "the eval files define no cases"
        : `no case matches ${(opts.naming ?? CLI_NAMING).filters}`,
    );
  }
  const concurrencies = roots.map((r) => r.concurrency).filter((c): c is number => c !== undefined);
  const concurrency =
    opts.concurrency ?? (concurrencies.length > 0 ? Math.min(...concurrencies) : os.availableParallelism());
  notes.push(...undetectableNotes(roots, selected));
  return {
    projectRoot: planner.projectRoot,
    roots,
    cases: selected,
    concurrency,
    notes: [...planner.notes, ...notes],
  };
}

/** The plain `regressions: fail` or `{on, evidence, alpha}`; a new file's default needs evidence. */
function regressionRule(
  r: GateInput["regressions"],
): Pick<EvalRoot, "regressions" | "regressionEvidence" | "regressionAlpha"> {
  const rule = typeof r === "object" ? r : { on: r };
  return {
    regressions: rule.on ?? "fail",
    regressionEvidence: (typeof r === "object" ? r.evidence : undefined) ?? "significant",
    regressionAlpha: (typeof r === "object" ? r.alpha : undefined) ?? 0.05,
  };
}

/** A case's attempts: fixed (`repeat`), or adaptive from `min` up to `max`. */
function repeatOf(r: RepeatSetting): Pick<CaseSpec, "repeat" | "repeatMax"> {
  if (typeof r === "number") return { repeat: r };
  return r.max > r.min ? { repeat: r.min, repeatMax: r.max } : { repeat: r.min };
}

/** Eval files whose attempts cannot make any regression significant (gate.regressions.evidence). */
function undetectableNotes(roots: readonly EvalRoot[], cases: readonly CaseSpec[]): string[] {
  const notes: string[] = [];
  for (const root of roots) {
    if (root.regressions === "ignore" || root.regressionEvidence !== "significant") continue;
    const mine = cases.filter((c) => c.rootEvalPath === root.evalPath);
    if (mine.length === 0) continue;
    const best = mine.reduce((a, c) => ((c.repeatMax ?? c.repeat) > (a.repeatMax ?? a.repeat) ? c : a));
    // A single attempt is the quickstart's default: no one expects statistics from it.
    if ((best.repeatMax ?? best.repeat) < 2) continue;
    const advice = undetectableAdvice(
      { min: best.repeat, max: best.repeatMax ?? best.repeat },
      mine.length,
      root.regressionAlpha ?? 0.05,
    );
    if (advice) notes.push(`${root.evalPath}: gate.regressions: ${advice}`);
  }
  return notes;
}
