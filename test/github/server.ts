/**
 * A local stand-in for github.com on 127.0.0.1: the REST endpoints the action calls and the Actions
 * results service that @actions/artifact uploads through (twirp + an Azure-style block blob store).
 * It keeps state (comments, runs, artifacts, check runs), records every request, and answers like
 * GitHub does where it matters: pagination with Link headers and per_page (max 100), the
 * 65,536-character comment limit (422), read-only tokens (403 "Resource not accessible by
 * integration"), expired artifacts (410), and 5xx or rate limits on demand. A commit's tarball is
 * served as GitHub does: a 302 to a codeload URL with a short-lived token, answering git archive's
 * gzipped tar under one `owner-repo-sha7/` folder.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ResultsService } from "./results-service.js";

type Level = "read" | "write";
export interface TokenGrant {
  "pull-requests"?: Level;
  actions?: Level;
  checks?: Level;
  statuses?: Level;
  contents?: Level;
}

/** A collaborator's role, as GitHub's collaborator-permission API reports it. */
export type Role = "admin" | "maintain" | "write" | "triage" | "read" | "none";

export interface Reaction {
  id: number;
  commentId: number;
  content: string;
}

export interface CommitStatus {
  id: number;
  sha: string;
  state: string;
  context: string;
  description: string | null;
  target_url: string | null;
}

export interface Fault {
  method?: string;
  path: RegExp;
  status: number;
  /** How many matching requests fail (then the fault is used up). */
  times: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  auth: string | undefined;
  body: string;
  status: number;
}

export interface Comment {
  id: number;
  body: string;
  issue: number;
  user: string;
  /** The author's relation to the repository, as GitHub reports it (OWNER, MEMBER, COLLABORATOR, NONE, …). */
  association: string;
  created_at: string;
  updated_at: string;
}

export interface PullRequest {
  number: number;
  headSha: string;
  headRef: string;
  headRepo: string;
  baseRef: string;
  /** The base branch's commit (pulls.get base.sha). */
  baseSha?: string;
}

export interface WorkflowRun {
  id: number;
  run_number: number;
  workflowPath: string;
  head_branch: string;
  head_sha: string;
  event: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: "success" | "failure" | null;
  headRepo: string;
  /** The results service's id for the run (inside ACTIONS_RUNTIME_TOKEN). */
  backendId: string;
}

export interface Artifact {
  id: number;
  name: string;
  runId: number;
  zip: Buffer;
  expired: boolean;
  created_at: string;
  /** The expiry the uploader asked for (retention-days), when it asked. */
  expires_at?: string;
}

export interface CheckRun {
  id: number;
  name: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  output: { title?: string; summary?: string };
}

const DOCS = "https://docs.github.com/rest";

export type Send = (status: number, body?: unknown, headers?: Record<string, string>) => true;
const NOT_ACCESSIBLE = "Resource not accessible by integration";

function jwt(payload: object): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${b64({ alg: "RS256", typ: "JWT" })}.${b64(payload)}.c2lnbmF0dXJl`;
}

export class FakeGitHub {
  readonly owner: string;
  readonly repo: string;
  url = "";
  readonly requests: RecordedRequest[] = [];
  readonly tokens = new Map<string, TokenGrant>();
  readonly comments: Comment[] = [];
  readonly pulls = new Map<number, PullRequest>();
  readonly runs: WorkflowRun[] = [];
  readonly artifacts: Artifact[] = [];
  readonly checkRuns: CheckRun[] = [];
  /** Users' roles (collaborator-permission API); anyone else has read on this public repository. */
  readonly roles = new Map<string, Role>();
  readonly reactions: Reaction[] = [];
  readonly statuses: CommitStatus[] = [];
  /** The files each PR changes (pulls.listFiles). */
  readonly pullFiles = new Map<number, string[]>();
  /** The labels on each issue or PR. */
  readonly labels = new Map<number, string[]>();
  /** A git repository whose commits the contents and tarball APIs serve (GitHub's copy of the repository). */
  gitDir: string | undefined;
  /** A private repository: reading its contents (a tarball) needs `contents: read`; else anyone may. */
  private = false;
  /** codeload tokens handed out with tarball redirects (each good for one download). */
  private readonly codeloadTokens = new Set<string>();
  readonly faults: Fault[] = [];
  private readonly results = new ResultsService(this);
  private nextId = 1000;

  newId(): number {
    return this.nextId++;
  }
  private server = http.createServer((req, res) => void this.handle(req, res));

  constructor(fullName: string) {
    const [owner, repo] = fullName.split("/");
    this.owner = owner!;
    this.repo = repo!;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A token with these permissions (what `permissions:` grants GITHUB_TOKEN). */
  token(grant: TokenGrant): string {
    const t = `ghs_${randomUUID().replaceAll("-", "")}`;
    this.tokens.set(t, grant);
    return t;
  }

  fail(fault: Fault): void {
    this.faults.push(fault);
  }

  addRun(run: Omit<WorkflowRun, "id" | "run_number" | "backendId" | "status" | "conclusion">): WorkflowRun {
    const r: WorkflowRun = {
      ...run,
      id: this.nextId++,
      run_number: this.runs.length + 1,
      status: "in_progress",
      conclusion: null,
      backendId: randomUUID(),
    };
    this.runs.push(r);
    return r;
  }

  /** ACTIONS_RUNTIME_TOKEN of a job of `run`: a JWT whose scope names the run's backend ids. */
  runtimeToken(run: WorkflowRun): string {
    return jwt({ scp: `Actions.ExampleScope Actions.Results:${run.backendId}:${randomUUID()}` });
  }

  addComment(issue: number, body: string, user = "someone", association = "NONE"): Comment {
    const now = new Date().toISOString();
    const c = { id: this.nextId++, body, issue, user, association, created_at: now, updated_at: now };
    this.comments.push(c);
    return c;
  }

  private fullName(): string {
    return `${this.owner}/${this.repo}`;
  }

  private commentJson(c: Comment) {
    return {
      id: c.id,
      node_id: `IC_${c.id}`,
      url: `${this.url}/repos/${this.fullName()}/issues/comments/${c.id}`,
      html_url: `https://github.com/${this.fullName()}/pull/${c.issue}#issuecomment-${c.id}`,
      issue_url: `${this.url}/repos/${this.fullName()}/issues/${c.issue}`,
      body: c.body,
      user: { login: c.user, type: c.user.endsWith("[bot]") ? "Bot" : "User" },
      created_at: c.created_at,
      updated_at: c.updated_at,
      author_association: c.association,
    };
  }

  private runJson(r: WorkflowRun) {
    return {
      id: r.id,
      run_number: r.run_number,
      name: "evals",
      path: r.workflowPath,
      head_branch: r.head_branch,
      head_sha: r.head_sha,
      event: r.event,
      status: r.status,
      conclusion: r.conclusion,
      head_repository: { full_name: r.headRepo },
      repository: { full_name: this.fullName() },
      pull_requests: [],
      html_url: `https://github.com/${this.fullName()}/actions/runs/${r.id}`,
    };
  }

  private artifactJson(a: Artifact) {
    const run = this.runs.find((r) => r.id === a.runId)!;
    return {
      id: a.id,
      node_id: `MDg6QXJ0aWZhY3Q${a.id}`,
      name: a.name,
      size_in_bytes: a.zip.length,
      url: `${this.url}/repos/${this.fullName()}/actions/artifacts/${a.id}`,
      archive_download_url: `${this.url}/repos/${this.fullName()}/actions/artifacts/${a.id}/zip`,
      expired: a.expired,
      created_at: a.created_at,
      expires_at: a.created_at,
      workflow_run: { id: run.id, head_branch: run.head_branch, head_sha: run.head_sha },
    };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? "/", this.url);
    const method = req.method ?? "GET";
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      query: url.searchParams,
      auth: req.headers.authorization,
      body: raw.toString("utf8"),
      status: 0,
    };
    this.requests.push(record);
    const send: Send = (status, body, headers = {}) => {
      record.status = status;
      const text = body === undefined ? "" : Buffer.isBuffer(body) ? body : JSON.stringify(body);
      res.writeHead(status, {
        ...(Buffer.isBuffer(body) ? {} : { "content-type": "application/json; charset=utf-8" }),
        "x-github-request-id": randomUUID(),
        ...headers,
      });
      res.end(text);
      return true;
    };

    const fault = this.faults.find(
      (f) => f.times > 0 && (!f.method || f.method === method) && f.path.test(url.pathname),
    );
    if (fault) {
      fault.times--;
      return send(
        fault.status,
        fault.body ?? { message: fault.status >= 500 ? "Server Error" : "Error", documentation_url: DOCS },
        fault.headers,
      );
    }
    try {
      if (url.pathname.startsWith("/twirp/")) return this.results.twirp(url.pathname, req, raw, send);
      if (url.pathname.startsWith("/devstoreaccount1/"))
        return this.results.blob(method, url, raw, req, send);
      if (url.pathname.startsWith("/_codeload/")) return this.codeload(url, send);
      return this.rest(method, url, raw, req, send);
    } catch (error) {
      return send(500, { message: (error as Error).message });
    }
  }

  private grant(req: http.IncomingMessage): TokenGrant | undefined {
    const m = /^(?:token|Bearer) (.+)$/.exec(req.headers.authorization ?? "");
    return m ? this.tokens.get(m[1]!) : undefined;
  }

  private paginate<T>(items: T[], url: URL): { page: T[]; headers: Record<string, string> } {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get("per_page")) || 30));
    const pageNo = Math.max(1, Number(url.searchParams.get("page")) || 1);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (p: number, rel: string) => {
      const u = new URL(url);
      u.searchParams.set("page", String(p));
      return `<${u.toString()}>; rel="${rel}"`;
    };
    const links: string[] = [];
    if (pageNo > 1) links.push(link(pageNo - 1, "prev"));
    if (pageNo < last) links.push(link(pageNo + 1, "next"));
    if (pageNo < last) links.push(link(last, "last"));
    if (pageNo > 1) links.push(link(1, "first"));
    return {
      page: items.slice((pageNo - 1) * perPage, pageNo * perPage),
      headers: links.length ? { link: links.join(", ") } : {},
    };
  }

  private rest(method: string, url: URL, raw: Buffer, req: http.IncomingMessage, send: Send): boolean {
    const grant = this.grant(req);
    if (!grant) return send(401, { message: "Bad credentials", documentation_url: DOCS, status: "401" });
    const repoPrefix = `/repos/${this.fullName()}/`;
    if (!url.pathname.startsWith(repoPrefix))
      return send(404, { message: "Not Found", documentation_url: DOCS });
    const p = url.pathname.slice(repoPrefix.length);
    const forbidden = () => send(403, { message: NOT_ACCESSIBLE, documentation_url: DOCS, status: "403" });
    const body = () => (raw.length ? (JSON.parse(raw.toString("utf8")) as Record<string, unknown>) : {});
    let m = /^issues\/(\d+)\/comments$/.exec(p);
    if (m) {
      const issue = Number(m[1]);
      if (!this.pulls.has(issue)) return send(404, { message: "Not Found", documentation_url: DOCS });
      if (method === "GET") {
        const list = this.comments.filter((c) => c.issue === issue).sort((a, b) => a.id - b.id);
        const { page, headers } = this.paginate(list, url);
        return send(
          200,
          page.map((c) => this.commentJson(c)),
          headers,
        );
      }
      if (method === "POST") {
        if (grant["pull-requests"] !== "write") return forbidden();
        const text = String(body().body ?? "");
        if (text.length > 65_536) return this.tooLong(send, "IssueComment", "body", 65_536);
        const c = this.addComment(issue, text, "github-actions[bot]");
        return send(201, this.commentJson(c));
      }
    }
    m = /^issues\/comments\/(\d+)$/.exec(p);
    if (m && method === "PATCH") {
      const id = Number(m[1]);
      const c = this.comments.find((x) => x.id === id);
      if (!c) return send(404, { message: "Not Found", documentation_url: DOCS });
      if (grant["pull-requests"] !== "write") return forbidden();
      const text = String(body().body ?? "");
      if (text.length > 65_536) return this.tooLong(send, "IssueComment", "body", 65_536);
      c.body = text;
      c.updated_at = new Date().toISOString();
      return send(200, this.commentJson(c));
    }
    m = /^issues\/comments\/(\d+)\/reactions$/.exec(p);
    if (m && method === "POST") {
      const id = Number(m[1]);
      if (!this.comments.some((x) => x.id === id))
        return send(404, { message: "Not Found", documentation_url: DOCS });
      if (grant["pull-requests"] !== "write") return forbidden();
      const content = String(body().content ?? "");
      if (!["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"].includes(content))
        return send(422, { message: "Validation Failed", documentation_url: DOCS, status: "422" });
      const r: Reaction = { id: this.nextId++, commentId: id, content };
      this.reactions.push(r);
      return send(201, { id: r.id, content, user: { login: "github-actions[bot]", type: "Bot" } });
    }
    m = /^collaborators\/([^/]+)\/permission$/.exec(p);
    if (m && method === "GET") {
      const login = decodeURIComponent(m[1]!);
      const role = this.roles.get(login) ?? "read";
      const permission =
        role === "maintain" ? "write" : role === "triage" ? "read" : role === "none" ? "none" : role;
      return send(200, { permission, role_name: role, user: { login, type: "User" } });
    }
    m = /^statuses\/([0-9a-f]{40})$/.exec(p);
    if (m && method === "POST") {
      if (grant.statuses !== "write") return forbidden();
      const b = body() as { state?: string; context?: string; description?: string; target_url?: string };
      if (!["error", "failure", "pending", "success"].includes(b.state ?? ""))
        return send(422, { message: "Validation Failed", documentation_url: DOCS, status: "422" });
      if ((b.description?.length ?? 0) > 140)
        return send(422, { message: "Validation Failed", documentation_url: DOCS, status: "422" });
      const st: CommitStatus = {
        id: this.nextId++,
        sha: m[1]!,
        state: b.state!,
        context: b.context ?? "default",
        description: b.description ?? null,
        target_url: b.target_url ?? null,
      };
      this.statuses.push(st);
      return send(201, st);
    }
    m = /^contents\/(.+)$/.exec(p);
    if (m && method === "GET") {
      const rel = decodeURIComponent(m[1]!);
      const ref = url.searchParams.get("ref") ?? "HEAD";
      const found = this.gitDir
        ? spawnSync("git", ["show", `${ref}:${rel}`], { cwd: this.gitDir, encoding: "buffer" })
        : undefined;
      if (!found || found.status !== 0)
        return send(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
      return send(200, {
        type: "file",
        encoding: "base64",
        size: found.stdout.length,
        name: rel.split("/").at(-1),
        path: rel,
        content: found.stdout.toString("base64").replace(/(.{60})/g, "$1\n"),
      });
    }
    m = /^tarball\/(.+)$/.exec(p);
    if (m && method === "GET") {
      // GitHub says 404, not 403, to a token that may not read a private repository's contents.
      if (this.private && !grant.contents)
        return send(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
      const ref = decodeURIComponent(m[1]!);
      const found = this.gitDir
        ? spawnSync("git", ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], {
            cwd: this.gitDir,
            encoding: "utf8",
          })
        : undefined;
      if (!found || found.status !== 0)
        return send(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
      const token = randomUUID();
      this.codeloadTokens.add(token);
      return send(302, undefined, {
        location: `${this.url}/_codeload/${this.fullName()}/legacy.tar.gz/${found.stdout.trim()}?token=${token}`,
      });
    }
    m = /^pulls\/(\d+)\/files$/.exec(p);
    if (m && method === "GET") {
      const n = Number(m[1]);
      if (!this.pulls.has(n)) return send(404, { message: "Not Found", documentation_url: DOCS });
      // GitHub lists at most 3000 files of a pull request.
      const files = (this.pullFiles.get(n) ?? []).slice(0, 3000).map((filename) => ({
        sha: "0".repeat(40),
        filename,
        status: "modified",
        additions: 1,
        deletions: 0,
        changes: 1,
      }));
      const { page, headers } = this.paginate(files, url);
      return send(200, page, headers);
    }
    m = /^issues\/(\d+)\/labels\/([^/]+)$/.exec(p);
    if (m && method === "DELETE") {
      const n = Number(m[1]);
      const name = decodeURIComponent(m[2]!);
      if (grant["pull-requests"] !== "write") return forbidden();
      const list = this.labels.get(n) ?? [];
      if (!list.includes(name))
        return send(404, { message: "Label does not exist", documentation_url: DOCS });
      this.labels.set(
        n,
        list.filter((l) => l !== name),
      );
      return send(
        200,
        this.labels.get(n)!.map((l) => ({ name: l })),
      );
    }
    m = /^pulls\/(\d+)$/.exec(p);
    if (m && method === "GET") {
      const pr = this.pulls.get(Number(m[1]));
      if (!pr) return send(404, { message: "Not Found", documentation_url: DOCS });
      return send(200, {
        number: pr.number,
        state: "open",
        head: { sha: pr.headSha, ref: pr.headRef, repo: { full_name: pr.headRepo } },
        base: { ref: pr.baseRef, sha: pr.baseSha ?? null, repo: { full_name: this.fullName() } },
      });
    }
    if (p === "check-runs" && method === "POST") {
      if (grant.checks !== "write") return forbidden();
      const b = body() as {
        name: string;
        head_sha: string;
        status?: string;
        conclusion?: string;
        output?: CheckRun["output"];
      };
      if ((b.output?.summary?.length ?? 0) > 65_535)
        return this.tooLong(send, "CheckRun", "output.summary", 65_535);
      const check: CheckRun = {
        id: this.nextId++,
        name: b.name,
        head_sha: b.head_sha,
        status: b.status ?? "queued",
        conclusion: b.conclusion ?? null,
        output: b.output ?? {},
      };
      this.checkRuns.push(check);
      return send(201, { ...check, html_url: `https://github.com/${this.fullName()}/runs/${check.id}` });
    }
    m = /^actions\/workflows\/([^/]+)\/runs$/.exec(p);
    if (m && method === "GET") {
      if (!grant.actions) return forbidden();
      const file = decodeURIComponent(m[1]!);
      if (!this.runs.some((r) => r.workflowPath.endsWith(`/${file}`)))
        return send(404, { message: "Not Found", documentation_url: DOCS });
      const q = url.searchParams;
      const runs = this.runs
        .filter(
          (r) =>
            r.workflowPath.endsWith(`/${file}`) &&
            (!q.get("branch") || r.head_branch === q.get("branch")) &&
            (!q.get("event") || r.event === q.get("event")) &&
            (!q.get("status") || r.status === q.get("status") || r.conclusion === q.get("status")),
        )
        .sort((a, b) => b.id - a.id);
      const { page, headers } = this.paginate(runs, url);
      return send(
        200,
        { total_count: runs.length, workflow_runs: page.map((r) => this.runJson(r)) },
        headers,
      );
    }
    m = /^actions\/runs\/(\d+)\/artifacts$/.exec(p);
    if (m && method === "GET") {
      if (!grant.actions) return forbidden();
      const runId = Number(m[1]);
      if (!this.runs.some((r) => r.id === runId))
        return send(404, { message: "Not Found", documentation_url: DOCS });
      const name = url.searchParams.get("name");
      const list = this.artifacts.filter((a) => a.runId === runId && (!name || a.name === name));
      const { page, headers } = this.paginate(list, url);
      return send(
        200,
        { total_count: list.length, artifacts: page.map((a) => this.artifactJson(a)) },
        headers,
      );
    }
    m = /^actions\/artifacts\/(\d+)\/zip$/.exec(p);
    if (m && method === "GET") {
      if (!grant.actions) return forbidden();
      const id = Number(m[1]);
      const a = this.artifacts.find((x) => x.id === id);
      if (!a) return send(404, { message: "Not Found", documentation_url: DOCS });
      if (a.expired)
        return send(410, { message: "Artifact has expired", documentation_url: DOCS, status: "410" });
      return send(302, undefined, {
        location: `${this.url}/devstoreaccount1/downloads/${a.id}.zip?sig=${randomUUID()}&se=2099-01-01`,
      });
    }
    return send(404, { message: "Not Found", documentation_url: DOCS });
  }

  /** codeload.github.com: the tarball a redirect points to, for the token it carries. */
  private codeload(url: URL, send: Send): boolean {
    const token = url.searchParams.get("token") ?? "";
    const m = /^\/_codeload\/[^/]+\/[^/]+\/legacy\.tar\.gz\/([0-9a-f]{40})$/.exec(url.pathname);
    if (!m || !this.codeloadTokens.delete(token) || !this.gitDir) return send(404, { message: "Not Found" });
    const sha = m[1]!;
    const prefix = `${this.owner}-${this.repo}-${sha.slice(0, 7)}/`;
    const tar = spawnSync("git", ["archive", "--format=tar.gz", `--prefix=${prefix}`, sha], {
      cwd: this.gitDir,
      encoding: "buffer",
      maxBuffer: 1 << 30,
    });
    if (tar.status !== 0) return send(404, { message: "Not Found" });
    return send(200, tar.stdout, {
      "content-type": "application/x-gzip",
      "content-disposition": `attachment; filename=${this.owner}-${this.repo}-${sha.slice(0, 7)}.tar.gz`,
    });
  }

  private tooLong(send: Send, resource: string, field: string, max: number): boolean {
    return send(422, {
      message: "Validation Failed",
      errors: [
        { resource, code: "custom", field, message: `${field} is too long (maximum is ${max} characters)` },
      ],
      documentation_url: DOCS,
      status: "422",
    });
  }
}
