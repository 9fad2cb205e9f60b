/**
 * The action's inputs (action.yml), parsed once. A run becomes the same RunOptions the CLI builds
 * from its flags; the rest says what to publish and where. A wrong value is a UsageError naming the
 * input, before anything runs.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import {
  type OptionNaming,
  parseConcurrency,
  parsePositiveInt,
  parseRepeat,
  parseShard,
  splitList,
} from "../config/options.js";
import { DEFAULT_QUARANTINE_FILE } from "../config/quarantine.js";
import { UsageError } from "../errors.js";
import type { RunOptions } from "../pipeline/run.js";

/** How the action spells the options in the core's messages: an action user never typed a flag. */
export const ACTION_NAMING: OptionNaming = {
  given: (option, value) => `input ${option}: ${value}`,
  option: (option) => `input ${option}`,
  filters: "the target / test / tag inputs",
  // The action's workspaces are under RUNNER_TEMP and its bundle under the checkout (input out).
  roomOnDisk: "give an out input on a disk with room, or a runner with more disk",
};

export const COMMENT_MODES = ["always", "changes", "failures", "off"] as const;
export type CommentMode = (typeof COMMENT_MODES)[number];

export type BaselineInput = { kind: "auto" } | { kind: "off" } | { kind: "path"; path: string };

/**
 * What the step does (github/modes/): run evals (maybe one shard), merge shard bundles, or publish
 * a bundle made elsewhere (input `bundle`).
 */
export type ActionMode =
  | { kind: "run"; options: RunOptions }
  | { kind: "merge"; from: "artifacts" | string[]; out?: string }
  | { kind: "publish"; from: "workflow-run" | string };
export type RunMode = Extract<ActionMode, { kind: "run" }>;
export type MergeMode = Extract<ActionMode, { kind: "merge" }>;
export type PublishMode = Extract<ActionMode, { kind: "publish" }>;

export interface ActionInputs {
  mode: ActionMode;
  /** The folder the step works in (working-directory against GITHUB_WORKSPACE). */
  cwd: string;
  token: string;
  comment: CommentMode;
  commentKey: string;
  baseline: BaselineInput;
  artifactName: string;
  retentionDays?: number;
  checkName?: string;
  allowPullRequestTarget: boolean;
  /** Labels that start a run on pull_request (labeled); `NAME:TAG` runs the tests tagged TAG. */
  labels: string[];
  removeLabel: boolean;
  /** Judge a PR by its own gate and quarantine file instead of the base commit's. */
  trustPrGate: boolean;
  /** The quarantine file, relative to working-directory. */
  quarantineFile: string;
}

/** Reads one input as GitHub passes it (`INPUT_<NAME>`, trimmed); "" when not given. */
export type InputReader = (name: string) => string;

export function envInputReader(env: NodeJS.ProcessEnv): InputReader {
  // The runner upper-cases the name and keeps hyphens: github-token → INPUT_GITHUB-TOKEN.
  return (name) => (env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] ?? "").trim();
}

function bool(get: InputReader, name: string): boolean {
  const v = get(name);
  if (v === "") return false;
  if (/^(true|yes|on)$/i.test(v)) return true;
  if (/^(false|no|off)$/i.test(v)) return false;
  throw new UsageError(`input ${name}: expected true or false, got ${JSON.stringify(v)}`);
}

function list(get: InputReader, name: string): string[] | undefined {
  const items = splitList(get(name));
  return items.length > 0 ? items : undefined;
}

function optionalInt<T = number>(
  get: InputReader,
  name: string,
  parse: (value: string, name: string) => T = parsePositiveInt as (value: string, name: string) => T,
): T | undefined {
  const v = get(name);
  return v === "" ? undefined : parse(v, `input ${name}`);
}

/**
 * Runs each input's check and keeps going after a bad one, so that every bad input is reported in
 * one UsageError before the step does any work (downloads a baseline, runs an agent).
 */
class InputChecks {
  private readonly messages: string[] = [];

  check<T>(parse: () => T): T | undefined {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      this.messages.push(error.message);
      return undefined;
    }
  }

  throwIfAny(): void {
    if (this.messages.length === 1) throw new UsageError(this.messages[0]!);
    if (this.messages.length > 1) {
      throw new UsageError(
        `${this.messages.length} inputs are wrong:\n${this.messages.map((m) => `  ${m}`).join("\n")}`,
      );
    }
  }
}

/**
 * Inputs a step would ignore in its mode, with the value they have when not given. A step that
 * merges or publishes runs no evals, and a published bundle is neither written, uploaded nor
 * compared again: silently dropping `repeat: 5` or `baseline: off` there would let the user believe
 * it took effect.
 */
const RUN_ONLY: Record<string, string> = {
  evals: ".",
  target: "",
  test: "",
  tag: "",
  repeat: "",
  concurrency: "",
};
const NOT_WITH_BUNDLE: Record<string, string> = { out: "", baseline: "auto", "retention-days": "" };

function refuseIgnored(get: InputReader, mode: "merge" | "bundle"): void {
  const ignored = { ...RUN_ONLY, ...(mode === "bundle" ? NOT_WITH_BUNDLE : {}) };
  const given = Object.entries(ignored)
    .filter(([name, unset]) => get(name) !== "" && get(name).toLowerCase() !== unset)
    .map(([name]) => name);
  if (given.length === 0) return;
  const doing =
    mode === "merge"
      ? "merges shard bundles (input merge) and runs no evals"
      : "publishes an existing bundle (input bundle): it runs no evals and does not write, upload or compare the bundle again";
  throw new UsageError(
    `input${given.length > 1 ? "s" : ""} ${given.join(", ")} would be ignored: this step ${doing}. Remove ${given.length > 1 ? "them" : "it"}, or set ${given.length > 1 ? "them" : "it"} on the step that runs the evals`,
  );
}

/** The artifact name rules of @actions/artifact, checked before the run instead of after it. */
const BAD_ARTIFACT_CHARS = /["':<>|*?\\/\r\n]/;

export function parseInputs(get: InputReader, opts: { workspace: string }): ActionInputs {
  const checks = new InputChecks();
  const result = checks.check(() => parseEach(get, opts, checks));
  checks.throwIfAny();
  return result!;
}

function parseEach(get: InputReader, opts: { workspace: string }, checks: InputChecks): ActionInputs {
  const cwd = path.resolve(opts.workspace, get("working-directory") || ".");

  const comment = (get("comment") || "always").toLowerCase();
  checks.check(() => {
    if (!(COMMENT_MODES as readonly string[]).includes(comment)) {
      throw new UsageError(
        `input comment: ${JSON.stringify(comment)} is not a comment mode; use one of ${COMMENT_MODES.join(", ")}`,
      );
    }
  });

  const baselineText = get("baseline") || "auto";
  // The keywords in any case, as comment's are (a folder called "Off" is not worth the surprise).
  const baselineWord = baselineText.toLowerCase();
  const baseline: BaselineInput =
    baselineWord === "auto"
      ? { kind: "auto" }
      : baselineWord === "off"
        ? { kind: "off" }
        : { kind: "path", path: path.resolve(cwd, baselineText) };

  const artifactName = get("artifact-name") || "evalgate";
  checks.check(() => {
    if (BAD_ARTIFACT_CHARS.test(artifactName)) {
      throw new UsageError(
        `input artifact-name: ${JSON.stringify(artifactName)} has a character artifacts cannot use (" : < > | * ? \\ / or a new line)`,
      );
    }
  });
  const retentionDays = checks.check(() => {
    const days = optionalInt(get, "retention-days");
    if (days !== undefined && days > 90)
      throw new UsageError("input retention-days: at most 90 days (GitHub's limit for artifacts)");
    return days;
  });

  const commentKey = get("comment-key") || "default";
  checks.check(() => {
    if (!/^[A-Za-z0-9._-]+$/.test(commentKey)) {
      throw new UsageError(
        `input comment-key: ${JSON.stringify(commentKey)} may only use letters, digits, ".", "_" and "-"`,
      );
    }
  });

  const shardText = get("shard");
  const mergeText = get("merge");
  const bundleText = get("bundle");
  const modes = [shardText && "shard", mergeText && "merge", bundleText && "bundle"].filter(Boolean);
  if (modes.length > 1) {
    throw new UsageError(
      `inputs ${modes.join(" and ")} cannot be combined: a step runs one shard, merges shards, or publishes a bundle`,
    );
  }

  const out = get("out") || undefined;
  if (mergeText || bundleText) checks.check(() => refuseIgnored(get, mergeText ? "merge" : "bundle"));
  let mode: ActionMode;
  if (mergeText) {
    const from = mergeText === "artifacts" ? "artifacts" : splitList(mergeText);
    mode = { kind: "merge", from, ...(out ? { out } : {}) };
  } else if (bundleText) {
    mode = { kind: "publish", from: bundleText === "workflow-run" ? "workflow-run" : bundleText };
  } else {
    const options: RunOptions = {
      cwd,
      paths: splitList(get("evals") || "."),
      targets: list(get, "target"),
      tests: list(get, "test"),
      tags: list(get, "tag"),
      repeat: checks.check(() => optionalInt(get, "repeat", parseRepeat)),
      concurrency: checks.check(() => optionalInt(get, "concurrency", parseConcurrency)),
      out,
      shard: shardText ? checks.check(() => parseShard(shardText, "input shard")) : undefined,
      naming: ACTION_NAMING,
    };
    mode = { kind: "run", options };
  }

  const checkName = get("check-name");
  return {
    mode,
    cwd,
    token: get("github-token"),
    comment: comment as CommentMode,
    commentKey,
    baseline,
    artifactName,
    ...(retentionDays ? { retentionDays } : {}),
    ...(checkName ? { checkName } : {}),
    allowPullRequestTarget: checks.check(() => bool(get, "allow-pull-request-target")) ?? false,
    labels: splitList(get("labels")),
    removeLabel: checks.check(() => bool(get, "remove-label")) ?? false,
    trustPrGate: checks.check(() => bool(get, "trust-pr-gate")) ?? false,
    quarantineFile: get("quarantine-file") || DEFAULT_QUARANTINE_FILE,
  };
}

/** Every path input is relative to working-directory: a wrong one would otherwise surface as "no eval files". */
export async function checkWorkingDirectory(cwd: string): Promise<void> {
  const s = await stat(cwd).catch(() => undefined);
  if (!s)
    throw new UsageError(`input working-directory: ${cwd} does not exist (it is relative to the workspace)`);
  if (!s.isDirectory()) throw new UsageError(`input working-directory: ${cwd} is a file, not a folder`);
}
