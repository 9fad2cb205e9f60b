/**
 * Reading eval files and following their `include:`s: raw cases take the including file's defaults,
 * a `type: suite` keeps its own targets and defaults and runs under the root's policy. Each file is
 * read and validated once; include cycles are refused.
 */
import path from "node:path";
import { glob } from "tinyglobby";
import {
  caseFileSchema,
  type EvalFileInput,
  evalFileSchema,
  type IncludeInput,
  type TestInput,
} from "../schema/eval-file.js";
import { validateSalvaged } from "../validate.js";
import { type PathKey, readYaml, type YamlSource } from "../yaml.js";
import type { PlanContext } from "./context.js";
import type { LoadedEval, Owner, Policy, TestRecord } from "./records.js";
import type { TargetResolver } from "./targets.js";

export class EvalFiles {
  private readonly cache = new Map<string, Promise<LoadedEval | undefined>>();
  /** Eval files included as suites: they run through the files that include them, not on their own. */
  readonly suiteFiles = new Set<string>();

  constructor(
    private readonly ctx: PlanContext,
    private readonly targets: TargetResolver,
    /**
     * On the exam side: the file whose `targets:` a file's tests run on (the checkout's version of
     * it: the thing under test), set as each file is read.
     */
    private readonly targetsFrom?: (loaded: LoadedEval) => Promise<LoadedEval>,
  ) {}

  /** Every eval file read so far (roots and suites) that could be used. */
  async files(): Promise<LoadedEval[]> {
    return (await Promise.all(this.cache.values())).filter((l): l is LoadedEval => !!l);
  }

  /** An eval file, read and validated (its schema problems reported); undefined when unusable. */
  load(abs: string): Promise<LoadedEval | undefined> {
    let p = this.cache.get(abs);
    if (!p) {
      p = this.read(abs);
      this.cache.set(abs, p);
    }
    return p;
  }

  private async read(abs: string): Promise<LoadedEval | undefined> {
    const src = await readYaml(abs, this.ctx.display(abs), this.ctx.problems);
    if (!src) return undefined;
    if (src.value === null || typeof src.value !== "object" || Array.isArray(src.value)) {
      this.ctx.problems.add({
        file: src.display,
        line: 1,
        message: "an eval file must be a mapping with at least a tests: list",
        hint: "see examples/quickstart/quickstart.eval.yaml",
      });
      return undefined;
    }
    const file: EvalFileInput | undefined = validateSalvaged(evalFileSchema, src, this.ctx.problems);
    if (!file) return undefined;
    const evalPath = this.ctx.evalPathOf(abs);
    const name = file.name ?? path.basename(abs).replace(/\.eval\.ya?ml$|\.ya?ml$/, "");
    const loaded: LoadedEval = { src, file, dir: path.dirname(abs), evalPath, name };
    if (this.targetsFrom) loaded.targetsFrom = await this.targetsFrom(loaded);
    return loaded;
  }

  /** The tests a root eval file runs: its own, and those of every file it includes. */
  async testsOf(loaded: LoadedEval): Promise<TestRecord[]> {
    const owner: Owner = {
      loaded,
      targets: this.targets.of(loaded.targetsFrom ?? loaded),
      policy: {
        repeat: loaded.file.repeat,
        gate: loaded.file.gate,
        timeouts: loaded.file.timeouts,
        limits: loaded.file.limits,
      },
    };
    const out: TestRecord[] = [];
    await this.collect(
      loaded.file.tests,
      loaded.src,
      ["tests"],
      loaded.dir,
      owner,
      loaded,
      [path.resolve(loaded.src.path)],
      out,
    );
    return out;
  }

  private async collect(
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
        this.ctx.problem(
          src,
          [...at, "include"],
          `include "${entry.include}" matched no files`,
          this.ctx.relativeHint(dir),
        );
        continue;
      }
      for (const m of matches.map((x) => path.normalize(x))) {
        if (stack.includes(m)) {
          const chain = [...stack.slice(stack.indexOf(m)), m].map((f) => this.ctx.display(f)).join(" → ");
          this.ctx.problem(
            src,
            [...at, "include"],
            `include cycle: ${chain}`,
            "remove one of these includes",
          );
          continue;
        }
        if (entry.type === "suite") await this.suite(m, owner, root, [...stack, m], out);
        else await this.rawCases(m, owner, root, [...stack, m], out);
      }
    }
  }

  /** A suite keeps its own targets (else the includer's); the includer's policy binds, then its own. */
  private async suite(m: string, owner: Owner, root: LoadedEval, stack: string[], out: TestRecord[]) {
    this.suiteFiles.add(m);
    const loaded = await this.load(m);
    if (!loaded) return;
    const own = loaded.targetsFrom ?? loaded;
    const targets = own.file.targets?.length ? this.targets.of(own) : owner.targets;
    const policy: Policy = {
      repeat: owner.policy.repeat ?? loaded.file.repeat,
      gate: owner.policy.gate ?? loaded.file.gate,
      timeouts: { ...loaded.file.timeouts, ...owner.policy.timeouts },
      limits: { ...loaded.file.limits, ...owner.policy.limits },
    };
    const suiteOwner = { loaded, targets, policy };
    await this.collect(loaded.file.tests, loaded.src, ["tests"], loaded.dir, suiteOwner, root, stack, out);
  }

  /** A file of raw cases: a list of tests (or one test), taking the includer's defaults. */
  private async rawCases(m: string, owner: Owner, root: LoadedEval, stack: string[], out: TestRecord[]) {
    const caseSrc = await readYaml(m, this.ctx.display(m), this.ctx.problems);
    if (!caseSrc) return;
    const value = caseSrc.value;
    if (value !== null && typeof value === "object" && !Array.isArray(value) && "tests" in value) {
      this.ctx.problems.add({
        file: caseSrc.display,
        line: 1,
        message: "this looks like an eval file, but it is included as raw cases",
        hint: "add type: suite to the include, or make this file a plain list of tests",
      });
      return;
    }
    caseSrc.value = Array.isArray(value) ? value : [value];
    const list = validateSalvaged(caseFileSchema, caseSrc, this.ctx.problems);
    if (!list) return;
    await this.collect(list, caseSrc, [], path.dirname(m), owner, root, stack, out);
  }
}
