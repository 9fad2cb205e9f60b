/**
 * The baseline's time per case (what balances shards) is read through the confined reader and
 * checked against the case summary's schema: a baseline is a downloaded artifact.
 */
import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { caseDurations } from "../../src/bundle/durations.js";
import { readBundle, rowKey } from "../../src/bundle/read.js";
import { copyFixture, quickstartRun, tempDir } from "../helpers.js";

describe("caseDurations", () => {
  it("sums each case's attempts, and reads nothing a case summary links to outside the bundle", async () => {
    const bundle = await readBundle(copyFixture(quickstartRun().out), { check: "lenient" });
    const all = await caseDurations(bundle);
    expect(all.size).toBe(bundle.rows.length);
    for (const ms of all.values()) expect(ms).toBeGreaterThan(0);

    const [linked, forged] = bundle.rows;
    // A case summary replaced by a link to a copy outside the bundle: not followed.
    const outside = path.join(tempDir(), "summary.json");
    const linkedFile = path.join(bundle.dir, linked!.summary_path);
    writeFileSync(outside, readFileSync(linkedFile));
    rmSync(linkedFile);
    symlinkSync(outside, linkedFile);
    // A case summary whose durations are not numbers: not a summary evalgate wrote.
    const forgedFile = path.join(bundle.dir, forged!.summary_path);
    const value = JSON.parse(readFileSync(forgedFile, "utf8"));
    value.runs[0].duration_ms = "9999999";
    writeFileSync(forgedFile, JSON.stringify(value));

    const read = await caseDurations(bundle);
    expect(read.has(rowKey(linked!))).toBe(false);
    expect(read.has(rowKey(forged!))).toBe(false);
    expect(read.size).toBe(bundle.rows.length - 2);
  });
});
