/**
 * The publish mode (input `bundle`): a bundle made elsewhere, published by this step. It is a
 * folder, or the artifact of the run that triggered this workflow_run (the fork recipe: a
 * pull_request run without secrets makes the bundle, this run with a write token posts it).
 */
import path from "node:path";
import { type Bundle, readBundleAs } from "../../bundle/read.js";
import { UsageError } from "../../errors.js";
import { tempRoot } from "../../workspace/temp.js";
import { newestAttempt } from "../artifact.js";
import type { EventContext } from "../context.js";
import { actionsApi, downloadArtifact, listRunArtifacts, scratchDir } from "../download.js";
import type { ActionInputs, PublishMode } from "../inputs.js";
import { type GitHubRecord, readRecord } from "../record.js";
import type { ModeDeps, Produced } from "./produced.js";

/** A bundle made elsewhere, to be published: with the baseline note its run recorded. */
function publishedFrom(bundle: Bundle, record: Partial<GitHubRecord>): Produced {
  return {
    dir: bundle.dir,
    summary: bundle.summary,
    ...(typeof record.baseline_note === "string" ? { baselineNote: record.baseline_note } : {}),
    made: false,
  };
}

export async function publishMode(
  mode: PublishMode,
  inputs: ActionInputs,
  ctx: EventContext,
  deps: ModeDeps,
): Promise<Produced> {
  if (mode.from !== "workflow-run") {
    // Only rendered (its fields are checked one by one for the view): read leniently, seal checked.
    const bundle = await readBundleAs(path.resolve(inputs.cwd, mode.from), "input bundle", {
      check: "lenient",
    });
    return publishedFrom(bundle, await readRecord(bundle.dir));
  }
  const wr = ctx.workflowRun;
  if (!wr)
    throw new UsageError("input bundle: workflow-run works only in a workflow triggered by workflow_run");
  const client = deps.client;
  if (!client) throw new UsageError("input bundle: workflow-run needs the github-token input");
  // The newest attempt's bundle: a re-run of the triggering run uploads NAME-attempt-N.
  const artifact = await actionsApi(`listing the artifacts of run ${wr.id}`, async () =>
    newestAttempt(
      (await listRunArtifacts(client, ctx, wr.id)).filter((a) => !a.expired),
      inputs.artifactName,
    ),
  );
  if (!artifact) {
    throw new UsageError(
      `input bundle: run ${wr.id} has no artifact named ${inputs.artifactName} (did its evalgate step run, with the same artifact-name?)`,
    );
  }
  const dest = await scratchDir(deps.env, "evalgate-bundle-");
  await actionsApi(`downloading artifact ${artifact.name} of run ${wr.id}`, () =>
    downloadArtifact(client, ctx, artifact, dest, tempRoot(deps.env)),
  );
  const bundle = await readBundleAs(dest, `artifact ${artifact.name} of run ${wr.id}`, { check: "lenient" });
  // The artifact was written by the triggering run, which may be a fork's code: its record is a
  // claim, checked against GitHub before anything is posted (github/destination.ts).
  const record = await readRecord(dest);
  const pr = wr.pullRequests[0] ?? (typeof record.pull_request === "number" ? record.pull_request : null);
  return { ...publishedFrom(bundle, record), from: { pr, sha: wr.headSha } };
}
