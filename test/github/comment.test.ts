import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WireSummary } from "../../src/bundle/wire.js";
import { createClient, explainApiError } from "../../src/github/client.js";
import {
  changedFromBaseline,
  commentWanted,
  findStickyComment,
  hasMarker,
  upsertStickyComment,
} from "../../src/github/comment.js";
import type { CommentMode } from "../../src/github/inputs.js";
import { MemoryLogger } from "../../src/log.js";
import { FakeGitHub } from "./server.js";

const MARKER = "<!-- evalgate:comment key=default -->";

describe("comment modes", () => {
  const f = (gateFailed: boolean, hasBaseline: boolean, changed: boolean) => ({
    gateFailed,
    hasBaseline,
    changed,
  });
  it.each<[CommentMode, ReturnType<typeof f>, boolean, boolean]>([
    ["off", f(true, true, true), true, false],
    ["always", f(false, true, false), false, true],
    ["failures", f(true, true, false), false, true],
    ["failures", f(false, true, true), false, false],
    ["failures", f(false, true, false), true, true], // keeps an earlier failure's comment current
    ["changes", f(false, true, true), false, true],
    ["changes", f(false, true, false), false, false],
    ["changes", f(false, true, false), true, true],
    ["changes", f(true, false, false), false, true], // no baseline: only a failing gate is news
    ["changes", f(false, false, false), false, false],
  ])("%s with %j, existing %s → post %s", (mode, facts, existing, post) => {
    expect(commentWanted(mode, facts, existing).post).toBe(post);
  });

  it("finds the marker only as a line of its own, not in a quote", () => {
    expect(hasMarker(`${MARKER}\n## result`, MARKER)).toBe(true);
    expect(hasMarker(`> ${MARKER}\n> ## result`, MARKER)).toBe(false);
    expect(hasMarker("<!-- evalgate:comment key=other -->", MARKER)).toBe(false);
  });

  it("counts a changed case or a changed verdict as a change", () => {
    const s = (
      verdict: "pass" | "fail",
      changes: Partial<Record<"regressed" | "improved" | "new" | "removed", number>>,
    ) =>
      ({
        gate: { verdict },
        comparison: { regressed: 0, improved: 0, new: 0, removed: 0, ...changes },
      }) as unknown as WireSummary;
    expect(changedFromBaseline(s("pass", {}), s("pass", {}))).toBe(false);
    expect(changedFromBaseline(s("pass", { improved: 1 }), s("pass", {}))).toBe(true);
    expect(changedFromBaseline(s("fail", {}), s("pass", {}))).toBe(true);
    expect(changedFromBaseline({ comparison: null } as unknown as WireSummary, undefined)).toBe(false);
  });
});

describe("the sticky comment against a GitHub that enforces its limits", () => {
  let gh: FakeGitHub;
  beforeAll(async () => {
    gh = await new FakeGitHub("acme/shop").start();
    gh.pulls.set(9, {
      number: 9,
      headSha: "1".repeat(40),
      headRef: "f",
      headRepo: "acme/shop",
      baseRef: "main",
    });
  });
  afterAll(() => gh.close());
  const client = (grant: Parameters<FakeGitHub["token"]>[0]) =>
    createClient({ token: gh.token(grant), baseUrl: gh.url, logger: new MemoryLogger(), retries: 1 });
  const ref = { owner: "acme", repo: "shop", number: 9 };

  it("creates one comment, then finds it on a later page and updates it", async () => {
    const c = client({ "pull-requests": "write" });
    const first = await upsertStickyComment(c, ref, MARKER, `${MARKER}\none`);
    expect(first.created).toBe(true);
    for (let i = 0; i < 120; i++) gh.addComment(9, `noise ${i}`);
    // Comments list oldest first: ours is on page 1 of 100; make it the 121st instead.
    const ours = gh.comments.find((x) => x.id === first.comment.id)!;
    gh.comments.splice(gh.comments.indexOf(ours), 1);
    gh.comments.push({ ...ours, id: 99_999 });
    const found = await findStickyComment(c, ref, MARKER);
    expect(found?.id).toBe(99_999);
    const second = await upsertStickyComment(c, ref, MARKER, `${MARKER}\ntwo`);
    expect(second).toMatchObject({ created: false, comment: { id: 99_999 } });
    expect(gh.comments.filter((x) => hasMarker(x.body, MARKER)).map((x) => x.body)).toEqual([
      `${MARKER}\ntwo`,
    ]);
  });

  it("ignores the marker in a comment by someone without write access, who could edit it later", async () => {
    const c = client({ "pull-requests": "write" });
    gh.pulls.set(10, {
      number: 10,
      headSha: "2".repeat(40),
      headRef: "g",
      headRepo: "x/shop",
      baseRef: "main",
    });
    const fake = gh.addComment(10, `${MARKER}\n## ✅ evalgate — gate passed`, "mallory", "CONTRIBUTOR");
    expect(await findStickyComment(c, { ...ref, number: 10 }, MARKER)).toBeUndefined();
    const r = await upsertStickyComment(c, { ...ref, number: 10 }, MARKER, `${MARKER}\nreal`);
    expect(r.created).toBe(true);
    expect(fake.body).toContain("gate passed");
  });

  it("the sticky comment is the token's own: a marker in a member's comment is ignored, a personal token finds its own", async () => {
    // before: any OWNER, MEMBER or COLLABORATOR comment with the marker was taken as evalgate's, so a
    // read-only organisation member who posted it first had every later report written into a
    // comment they can edit
    gh.pulls.set(11, {
      number: 11,
      headSha: "3".repeat(40),
      headRef: "h",
      headRepo: "acme/shop",
      baseRef: "main",
    });
    const member = gh.addComment(11, `${MARKER}\n## ✅ evalgate — gate passed`, "reader-member", "MEMBER");
    const workflowToken = client({ "pull-requests": "write" });
    expect(await findStickyComment(workflowToken, { ...ref, number: 11 }, MARKER)).toBeUndefined();
    const r = await upsertStickyComment(workflowToken, { ...ref, number: 11 }, MARKER, `${MARKER}\nreal`);
    expect(r.created).toBe(true);
    expect(member.body).toContain("gate passed");
    expect(gh.comments.find((x) => x.id === r.comment.id)!.user).toBe("github-actions[bot]");
    // A maintainer's personal token posts as the maintainer: its own earlier comment is found.
    const pat = createClient({
      token: gh.token(
        { "pull-requests": "write" },
        { login: "maintainer", type: "User", association: "MEMBER" },
      ),
      baseUrl: gh.url,
      logger: new MemoryLogger(),
      retries: 1,
    });
    const mine = await upsertStickyComment(
      pat,
      { ...ref, number: 11 },
      MARKER,
      `${MARKER}\nby a personal token`,
    );
    expect(mine.created).toBe(true);
    expect((await findStickyComment(pat, { ...ref, number: 11 }, MARKER))?.id).toBe(mine.comment.id);
    // …and the workflow token's comment is not the maintainer's.
    expect((await findStickyComment(workflowToken, { ...ref, number: 11 }, MARKER))?.id).toBe(r.comment.id);
  });

  it("posts a new comment when the old one was deleted meanwhile", async () => {
    const c = client({ "pull-requests": "write" });
    const r = await upsertStickyComment(c, ref, MARKER, `${MARKER}\nthree`, { id: 1, url: "" });
    expect(r.created).toBe(true);
  });

  it("a body over 65,536 characters is answered with a 422, and explained", async () => {
    const c = client({ "pull-requests": "write" });
    const error = await upsertStickyComment(c, { ...ref, number: 9 }, "<!-- x -->", "x".repeat(65_537)).catch(
      (e) => e,
    );
    expect(error.status).toBe(422);
    expect(explainApiError(error, "posting the comment")).toBe(
      "posting the comment failed (422 Validation Failed: body is too long (maximum is 65536 characters))",
    );
    expect(gh.requests.at(-1)!.status).toBe(422);
  });

  it("a read-only token is answered with a 403, explained with the permission it needs", async () => {
    const c = client({ "pull-requests": "read" });
    const error = await upsertStickyComment(c, ref, "<!-- y -->", "hi").catch((e) => e);
    expect(explainApiError(error, "posting the comment", "pull-requests: write")).toBe(
      "posting the comment failed (403 Resource not accessible by integration): the token needs pull-requests: write; add it to the workflow's or job's `permissions:`. A pull request from a fork gets a read-only token: see docs/fork-pull-requests.md",
    );
  });

  it("a rejected token is a 401, and says so", async () => {
    const c = createClient({ token: "nope", baseUrl: gh.url, logger: new MemoryLogger() });
    const error = await findStickyComment(c, ref, MARKER).catch((e) => e);
    expect(explainApiError(error, "reading the comments")).toBe(
      "reading the comments failed (401 Bad credentials): the github-token input was rejected",
    );
  });
});
