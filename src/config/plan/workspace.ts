/**
 * The `workspace:` of an eval file or test → a WorkspaceSpec: which seed (path, git, archive,
 * empty), checked as far as it can be without fetching or unpacking anything, and which setup.
 */
import { stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { toCommand, WORKSPACE_PLACEHOLDERS } from "../../sandbox/commands.js";
import type { WorkspaceInput } from "../schema/workspace.js";
import { parseSize } from "../size.js";
import {
  type ArchiveLimits,
  DEFAULT_ARCHIVE_LIMITS,
  type ScoringGuards,
  type SeedOrigin,
  type SeedSpec,
  type SetupSpec,
  type WorkspaceSpec,
} from "../types.js";
import { keyPath, lineOf, type PathKey, type YamlSource } from "../yaml.js";
import { checkEvalDirProgram, checkPassthrough, checkPlaceholders, checkQuotable } from "./commands.js";
import type { PlanContext } from "./context.js";

export interface WorkspaceSource {
  input?: WorkspaceInput;
  src: YamlSource;
  at: PathKey[];
  /** Folder of the file the workspace is written in (its relative paths resolve here). */
  dir: string;
}

const SEED_KINDS = ["path", "git", "archive", "empty"] as const;
export const ARCHIVE_EXTENSIONS = [".zip", ".tar", ".tar.gz", ".tgz"] as const;

/** A URL rather than a local path: `scheme://...` or scp-like `user@host:path`. */
export function isRemoteUrl(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[^/]+@[^/]+:/.test(url);
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

async function isDirectory(abs: string): Promise<boolean> {
  try {
    return (await stat(abs)).isDirectory();
  } catch {
    return false;
  }
}

async function exists(abs: string): Promise<boolean> {
  try {
    await stat(abs);
    return true;
  } catch {
    return false;
  }
}

/** The path of a `file://` URL, else undefined. */
function localFileUrl(url: string): string | undefined {
  if (!/^file:\/\//i.test(url)) return undefined;
  try {
    return fileURLToPath(url);
  } catch {
    return undefined;
  }
}

async function isFile(abs: string): Promise<boolean> {
  try {
    return (await stat(abs)).isFile();
  } catch {
    return false;
  }
}

/**
 * `subdir` as a clean relative path (`a/b`), or why it is not one. It must stay inside the
 * repository, so absolute paths and `..` are refused.
 */
export function normalizeSubdir(value: string): { subdir?: string; problem?: string } {
  if (value.startsWith("/") || /^[A-Za-z]:[\\/]/.test(value)) return { problem: "is an absolute path" };
  const parts = value.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) return { problem: "leaves the repository (..)" };
  if (parts.length === 0) return {};
  return { subdir: parts.join("/") };
}

class WorkspaceResolver {
  constructor(
    private readonly ctx: PlanContext,
    private readonly from: WorkspaceSource,
  ) {}

  private get seedAt(): PathKey[] {
    return [...this.from.at, "seed"];
  }

  private problem(at: PathKey[], message: string, hint?: string): void {
    this.ctx.problem(this.from.src, [...this.seedAt, ...at], message, hint);
  }

  private relativeHint(): string {
    return this.ctx.relativeHint(this.from.dir);
  }

  async seed(): Promise<SeedSpec | undefined> {
    const input = this.from.input!.seed!;
    const kinds = SEED_KINDS.filter((k) => input[k] !== undefined);
    if (input.exclude !== undefined && input.path === undefined) {
      this.problem(
        ["exclude"],
        "exclude applies to a path seed only",
        "remove exclude, or seed from a folder",
      );
    }
    if (kinds.length !== 1) {
      this.problem(
        [],
        kinds.length === 0
          ? "a seed needs one of path, git, archive, empty"
          : `a seed has exactly one of path, git, archive, empty (found ${kinds.join(" and ")})`,
        "for example seed: { path: fixtures/app }",
      );
      return undefined;
    }
    if (input.path !== undefined) {
      const abs = this.ctx.resolve(this.from.dir, input.path);
      if (!(await isDirectory(abs))) {
        this.problem(["path"], `seed folder ${this.ctx.display(abs)} does not exist`, this.relativeHint());
        return undefined;
      }
      const exclude = this.excludes(input.exclude ?? []);
      return { kind: "path", path: abs, ...(exclude.length > 0 ? { exclude } : {}) };
    }
    if (input.git) return this.git(input.git);
    if (input.archive !== undefined) return this.archive(input.archive);
    return { kind: "empty" };
  }

  /** `exclude:` as clean relative paths of the seed folder (`a/b`); a path that leaves it is refused. */
  private excludes(list: readonly string[]): string[] {
    const out: string[] = [];
    list.forEach((p, i) => {
      const { subdir, problem } = normalizeSubdir(p);
      if (problem || !subdir) {
        this.problem(
          ["exclude", i],
          `exclude "${p}" ${problem ?? "is the whole seed"}`,
          "for example exclude: [evals]",
        );
      } else out.push(subdir);
    });
    return out;
  }

  private async git(
    g: NonNullable<NonNullable<WorkspaceInput["seed"]>["git"]>,
  ): Promise<SeedSpec | undefined> {
    let ok = true;
    const remote = isRemoteUrl(g.url);
    // A local repository that is not there fails every attempt as a workspace error: say it now,
    // as for a folder seed or a ref that does not exist.
    const local = remote ? localFileUrl(g.url) : this.ctx.resolve(this.from.dir, g.url);
    if (local !== undefined && !(await exists(local))) {
      this.problem(
        ["git", "url"],
        `git repository ${this.ctx.display(local)} does not exist`,
        this.relativeHint(),
      );
      ok = false;
    }
    let parsed: URL | undefined;
    if (/^https?:\/\//i.test(g.url)) {
      try {
        parsed = new URL(g.url);
      } catch {
        this.problem(["git", "url"], `"${g.url}" is not a valid URL`);
        return undefined;
      }
      if (parsed.username || parsed.password) {
        // Never echo the URL here: it holds a credential.
        this.problem(
          ["git", "url"],
          "the URL carries credentials, which would end up in logs and in the run bundle",
          "remove them from the URL and set token_env: to the name of a variable that holds the token",
        );
        ok = false;
      }
    }
    if (g.token_env !== undefined) {
      if (!parsed) {
        this.problem(
          ["git", "token_env"],
          "token_env applies to https URLs only",
          remote
            ? "for ssh URLs evalgate uses the runner's ssh setup; remove token_env"
            : "a local repository needs no token; remove token_env",
        );
        ok = false;
      } else if (parsed.protocol === "http:" && !LOOPBACK.has(parsed.hostname)) {
        this.problem(
          ["git", "token_env"],
          `the token would be sent unencrypted to ${parsed.host} over http://`,
          "use the https:// URL of the repository",
        );
        ok = false;
      }
    }
    let subdir: string | undefined;
    if (g.subdir !== undefined) {
      const n = normalizeSubdir(g.subdir);
      if (n.problem) {
        this.problem(
          ["git", "subdir"],
          `subdir "${g.subdir}" ${n.problem}`,
          "give a folder inside the repository, relative to its root (e.g. services/cart)",
        );
        ok = false;
      }
      subdir = n.subdir;
    }
    if (!ok) return undefined;
    const seed: SeedSpec = { kind: "git", url: remote ? g.url : this.ctx.resolve(this.from.dir, g.url) };
    if (g.ref) seed.ref = g.ref;
    if (subdir) seed.subdir = subdir;
    if (g.token_env) seed.tokenEnv = g.token_env;
    return seed;
  }

  private async archive(
    a: NonNullable<NonNullable<WorkspaceInput["seed"]>["archive"]>,
  ): Promise<SeedSpec | undefined> {
    const spec = typeof a === "string" ? { path: a } : a;
    const at: PathKey[] = typeof a === "string" ? ["archive"] : ["archive", "path"];
    const abs = this.ctx.resolve(this.from.dir, spec.path);
    if (!ARCHIVE_EXTENSIONS.some((ext) => abs.toLowerCase().endsWith(ext))) {
      this.problem(
        at,
        `${this.ctx.display(abs)} is not a .zip, .tar, .tar.gz or .tgz file`,
        "seed archives are zip or tar files (optionally gzipped); for a folder use seed: { path: ... }",
      );
      return undefined;
    }
    if (!(await isFile(abs))) {
      this.problem(at, `seed archive ${this.ctx.display(abs)} does not exist`, this.relativeHint());
      return undefined;
    }
    const limits: ArchiveLimits = { ...DEFAULT_ARCHIVE_LIMITS };
    if (typeof a !== "string") {
      if (a.max_size !== undefined) limits.maxSize = parseSize(a.max_size);
      if (a.max_unpacked_size !== undefined) limits.maxUnpackedSize = parseSize(a.max_unpacked_size);
      if (a.max_entries !== undefined) limits.maxEntries = a.max_entries;
    }
    return { kind: "archive", path: abs, limits };
  }

  setup(setupFrom: WorkspaceSource): SetupSpec {
    const input = setupFrom.input?.setup;
    const setup: SetupSpec = { envPassthrough: input?.env_passthrough ?? [], evalDir: setupFrom.dir };
    if (!input) return setup;
    const at = [...setupFrom.at, "setup"];
    checkPassthrough(this.ctx, setupFrom.src, [...at, "env_passthrough"], input.env_passthrough);
    if (input.command) {
      setup.command = toCommand(input.command);
      checkPlaceholders(
        this.ctx,
        setupFrom.src,
        [...at, "command"],
        setup.command,
        WORKSPACE_PLACEHOLDERS,
        () => `setup commands know ${WORKSPACE_PLACEHOLDERS.map((p) => `{${p}}`).join(" ")}`,
      );
      checkQuotable(this.ctx, setupFrom.src, [...at, "command"], setup.command);
      checkEvalDirProgram(this.ctx, setupFrom.src, [...at, "command"], setup.command, setupFrom.dir);
    }
    if (input.instructions) setup.instructions = input.instructions;
    if (input.network !== undefined) setup.network = input.network;
    return setup;
  }

  origin(): SeedOrigin {
    const at = this.seedAt;
    const origin: SeedOrigin = { file: this.from.src.display, key: keyPath(at), lines: {} };
    const line = lineOf(this.from.src, at);
    if (line !== undefined) origin.line = line;
    for (const sub of ORIGIN_KEYS) {
      const l = lineOf(this.from.src, [...at, ...sub]);
      if (l !== undefined) origin.lines[sub.join(".")] = l;
    }
    return origin;
  }
}

/** Keys under a seed that errors found while preparing it can point at. */
const ORIGIN_KEYS: PathKey[][] = [
  ["git", "url"],
  ["git", "ref"],
  ["git", "subdir"],
  ["git", "token_env"],
  ["archive"],
];

/**
 * Resolves the workspace of one test: the test's own seed and setup override the file's default
 * (each as a whole). Problems are reported through `ctx`; undefined when the seed is unusable.
 */
export async function resolveWorkspace(
  ctx: PlanContext,
  def: WorkspaceSource,
  over: WorkspaceSource,
  testLabel: string,
): Promise<Omit<WorkspaceSpec, keyof ScoringGuards> | undefined> {
  const seedFrom = over.input?.seed ? over : def.input?.seed ? def : undefined;
  const setupFrom = over.input?.setup ? over : def;
  if (!seedFrom) {
    ctx.problem(
      over.src,
      over.at,
      `test ${testLabel} has no workspace seed`,
      "add workspace: { seed: { path: fixtures/app } } (or git:, archive: or empty: true) to the eval file or the test",
    );
    return undefined;
  }
  const resolver = new WorkspaceResolver(ctx, seedFrom);
  const seed = await resolver.seed();
  const setup = resolver.setup(setupFrom);
  if (!seed) return undefined;
  const ws: Omit<WorkspaceSpec, keyof ScoringGuards> = { seed, setup };
  ws.seedOrigin = resolver.origin();
  return ws;
}
