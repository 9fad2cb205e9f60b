/**
 * The Actions results service as @actions/artifact 6 calls it: twirp JSON (CreateArtifact,
 * FinalizeArtifact; authorised by ACTIONS_RUNTIME_TOKEN, a JWT whose scope names the run's backend
 * ids) and an Azure-style block blob store behind the signed upload and download addresses.
 */
import { randomUUID } from "node:crypto";
import type http from "node:http";
import type { Artifact, Send, WorkflowRun } from "./server.js";

export interface ResultsState {
  url: string;
  runs: WorkflowRun[];
  artifacts: Artifact[];
  newId(): number;
}

export class ResultsService {
  /** Artifacts being uploaded: blob path → staged blocks and the committed content. */
  private readonly blobs = new Map<
    string,
    { runId: number; name: string; blocks: Map<string, Buffer>; content?: Buffer; expiresAt?: string }
  >();

  constructor(private readonly gh: ResultsState) {}

  /** The Actions results service (twirp JSON), as @actions/artifact calls it. */
  twirp(pathname: string, req: http.IncomingMessage, raw: Buffer, send: Send): boolean {
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const scope = auth
      ? JSON.parse(Buffer.from(auth.split(".")[1] ?? "", "base64url").toString() || "{}")
      : {};
    const backend = /Actions\.Results:([^:]+):/.exec(String(scope.scp ?? ""))?.[1];
    const run = this.gh.runs.find((r) => r.backendId === backend);
    if (!run) return send(401, { code: "unauthenticated", msg: "invalid token" });
    const body = JSON.parse(raw.toString("utf8") || "{}") as Record<string, unknown>;
    if (body.workflow_run_backend_id !== run.backendId)
      return send(400, { code: "invalid_argument", msg: "workflow run backend id does not match the token" });
    const method = pathname.replace("/twirp/github.actions.results.api.v1.ArtifactService/", "");
    const name = String(body.name ?? "");
    if (method === "CreateArtifact") {
      if (body.version !== 7) return send(400, { code: "invalid_argument", msg: "unsupported version" });
      if (this.gh.artifacts.some((a) => a.runId === run.id && a.name === name))
        return send(409, {
          code: "already_exists",
          msg: "an artifact with this name already exists on the workflow run",
        });
      const blobPath = `/devstoreaccount1/actions-results/${randomUUID()}/${encodeURIComponent(name)}.zip`;
      const expiresAt = typeof body.expires_at === "string" ? body.expires_at : undefined;
      this.blobs.set(blobPath, { runId: run.id, name, blocks: new Map(), expiresAt });
      return send(200, {
        ok: true,
        signed_upload_url: `${this.gh.url}${blobPath}?sig=${randomUUID()}&sv=2023-11-03`,
      });
    }
    if (method === "FinalizeArtifact") {
      const entry = [...this.blobs.values()].find((b) => b.runId === run.id && b.name === name);
      if (!entry?.content)
        return send(404, { code: "not_found", msg: "no uploaded content for this artifact" });
      if (String(body.size) !== String(entry.content.length))
        return send(400, {
          code: "invalid_argument",
          msg: `size ${body.size} does not match ${entry.content.length}`,
        });
      const a: Artifact = {
        id: this.gh.newId(),
        name,
        runId: run.id,
        zip: entry.content,
        expired: false,
        created_at: new Date().toISOString(),
        ...(entry.expiresAt ? { expires_at: entry.expiresAt } : {}),
      };
      this.gh.artifacts.push(a);
      return send(200, { ok: true, artifact_id: String(a.id) });
    }
    return send(404, { code: "bad_route", msg: `no handler for ${method}` });
  }

  /** Azure block blobs: Put Block (comp=block), Put Block List (comp=blocklist), and downloads. */
  blob(method: string, url: URL, raw: Buffer, req: http.IncomingMessage, send: Send): boolean {
    if (!url.searchParams.get("sig")) return send(403, { message: "no signature" });
    if (req.headers.authorization)
      return send(400, { message: "a signed URL takes no Authorization header" });
    const down = /^\/devstoreaccount1\/downloads\/(\d+)\.zip$/.exec(url.pathname);
    if (down && method === "GET") {
      const a = this.gh.artifacts.find((x) => x.id === Number(down[1]));
      if (!a) return send(404, { message: "BlobNotFound" });
      return send(200, a.zip, { "content-type": "application/zip", "content-length": String(a.zip.length) });
    }
    const entry = this.blobs.get(url.pathname);
    if (!entry || method !== "PUT") return send(404, { message: "BlobNotFound" });
    const headers = {
      "x-ms-request-id": randomUUID(),
      "x-ms-version": "2023-11-03",
      date: new Date().toUTCString(),
      "x-ms-request-server-encrypted": "true",
    };
    const comp = url.searchParams.get("comp");
    if (comp === "block") {
      entry.blocks.set(url.searchParams.get("blockid") ?? "", raw);
      return send(201, undefined, headers);
    }
    if (comp === "blocklist") {
      const ids = [...raw.toString("utf8").matchAll(/<Latest>([^<]*)<\/Latest>/g)].map((x) => x[1]!);
      const parts = ids.map((id) => entry.blocks.get(id));
      if (parts.some((b) => !b)) return send(400, { message: "InvalidBlockList" });
      entry.content = Buffer.concat(parts as Buffer[]);
      return send(201, undefined, {
        ...headers,
        etag: `"0x${randomUUID().slice(0, 8)}"`,
        "last-modified": headers.date,
      });
    }
    return send(400, { message: "unsupported blob operation" });
  }
}
