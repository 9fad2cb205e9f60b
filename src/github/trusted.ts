/**
 * The rules a pull request is judged by: the `gate:` blocks of its eval files and the quarantine
 * file, read from the base commit (`git show <base>:<path>`), not from the PR's head. A PR that
 * lowers its own bar or quarantines the case it breaks is judged by the base's rules; its proposed
 * change is shown and applies once it is merged. `trust-pr-gate: true` turns this off.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { LineCounter, parseDocument } from "yaml";
import { type GateInput, gateSchema } from "../config/schema/gate.js";
import { validate } from "../config/validate.js";
import type { YamlSource } from "../config/yaml.js";
import { ConfigError, ProblemList, UsageError } from "../errors.js";
import { git } from "../workspace/git.js";
import { apiStatus, explainApiError, type GitHubClient } from "./client.js";

/** Reads a file at a commit elsewhere (GitHub's contents API) when the checkout lacks the commit. */
export type FileAtCommit = (rel: string, sha: string) => Promise<string | null>;

/** Files at a commit through GitHub's contents API: null for a file that is not there. */
export function contentsApi(client: GitHubClient, repo: { owner: string; repo: string }): FileAtCommit {
  return async (rel, sha) => {
    try {
      const { data } = await client.rest.repos.getContent({
        owner: repo.owner,
        repo: repo.repo,
        path: rel,
        ref: sha,
      });
      if (Array.isArray(data) || data.type !== "file" || !("content" in data)) return null;
      return Buffer.from(data.content, "base64").toString("utf8");
    } catch (error) {
      if (apiStatus(error) === 404) return null;
      throw new UsageError(
        `${explainApiError(error, `reading ${rel} at the base commit ${sha.slice(0, 7)}`, "contents: read")}; or check out with fetch-depth: 0, or set trust-pr-gate: true if every pull request's author is trusted`,
      );
    }
  };
}

/**
 * A file's text at `sha`, or null when the commit has no such file: `git show` when the checkout
 * has the commit (or can fetch it), else `remote` (the contents API: a shallow checkout of a
 * private repository without persisted credentials can fetch nothing).
 */
export async function showAtCommit(
  root: string,
  sha: string,
  rel: string,
  remote?: FileAtCommit,
): Promise<string | null> {
  const spec = `${sha}:${rel.split(path.sep).join("/")}`;
  const has = (s: string) =>
    git(["cat-file", "-e", s], { cwd: root }).then(
      () => true,
      () => false,
    );
  if (!(await has(`${sha}^{commit}`))) {
    // A shallow checkout lacks the base commit: fetch it (works without credentials on public repositories).
    await git(["fetch", "--no-tags", "--depth=1", "origin", sha], { cwd: root }).catch(() => "");
    if (!(await has(`${sha}^{commit}`))) {
      if (remote) return remote(rel.split(path.sep).join("/"), sha);
      throw new UsageError(
        `the base commit ${sha.slice(0, 7)} is not in the checkout and could not be fetched, so the gate cannot be read from it: check out with fetch-depth: 0 (actions/checkout), or set trust-pr-gate: true if every pull request's author is trusted`,
      );
    }
  }
  if (!(await has(spec))) return null;
  return git(["show", spec], { cwd: root });
}

function yamlOf(text: string, display: string): YamlSource {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, merge: true });
  if (doc.errors.length > 0)
    throw new ConfigError({
      file: display,
      message: `malformed YAML: ${doc.errors[0]!.message.split("\n")[0]}`,
    });
  return { path: display, display, doc, lines, value: doc.toJS({ maxAliasCount: 1000 }) };
}

/** The `gate:` block of an eval file's text (undefined when it has none). */
function gateOf(text: string, display: string): GateInput | undefined {
  const src = yamlOf(text, display);
  const value = src.value as { gate?: unknown } | null;
  if (!value || typeof value !== "object" || value.gate === undefined) return undefined;
  const problems = new ProblemList();
  const gate = validate(gateSchema, src, problems, ["gate"]);
  problems.throwIfAny();
  return gate;
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

export interface TrustedRules {
  baseSha: string;
  /** evalPath → the base's gate block (undefined: none); files new in the PR are absent. */
  gates: Map<string, GateInput | undefined>;
  /** evalPath → what the PR changes in its gate ("min_case_pass_rate 1 → 0.5"). */
  gateChanges: Map<string, string[]>;
  /** Eval files the base does not have: their own gate applies. */
  newFiles: string[];
}

/** Reads the base commit's gate of each eval file (repository-relative evalPaths). */
export async function trustedGates(
  root: string,
  baseSha: string,
  evalPaths: readonly string[],
  remote?: FileAtCommit,
): Promise<TrustedRules> {
  const out: TrustedRules = { baseSha, gates: new Map(), gateChanges: new Map(), newFiles: [] };
  for (const evalPath of evalPaths) {
    const baseText = await showAtCommit(root, baseSha, evalPath, remote);
    if (baseText === null) {
      out.newFiles.push(evalPath);
      continue;
    }
    const base = gateOf(baseText, `${evalPath} at the base commit ${baseSha.slice(0, 7)}`);
    out.gates.set(evalPath, base);
    const headText = await readFile(path.join(root, evalPath), "utf8").catch(() => null);
    const head = headText === null ? undefined : gateOf(headText, evalPath);
    const changes = gateChanges(base, head);
    if (changes.length) out.gateChanges.set(evalPath, changes);
  }
  return out;
}
