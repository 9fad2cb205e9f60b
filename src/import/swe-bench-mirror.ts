/**
 * SWE-bench's `--repos`: a local mirror of each repository. The instance's base commit and both
 * of its patches are checked against the mirror at import, and the seed points at the mirror.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { execa } from "execa";
import { InstanceError } from "./write.js";

/** Whether `patch` applies to `commit` of the local repository, without a work tree. */
async function patchApplies(repo: string, commit: string, patch: string): Promise<string | null> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), "evalgate-import-"));
  try {
    const env = { ...process.env, GIT_INDEX_FILE: path.join(tmp, "index") };
    await execa("git", ["-C", repo, "read-tree", commit], { env });
    const r = await execa("git", ["-C", repo, "apply", "--cached", "--check", "-"], {
      env,
      input: patch,
      reject: false,
      all: true,
    });
    return r.exitCode === 0
      ? null
      : String(r.all ?? "")
          .trim()
          .split("\n")
          .slice(-2)
          .join(" / ");
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

function mirrorOf(reposDir: string, repo: string): string | undefined {
  const [owner, name] = repo.split("/");
  const candidates = [
    path.join(reposDir, repo),
    path.join(reposDir, `${owner}__${name}`),
    path.join(reposDir, name ?? repo),
  ];
  return candidates.find((c) => existsSync(c));
}

/**
 * The seed's url for `repo` from its mirror under `reposDir`, once the mirror has `base` and both
 * patches apply there; relative to the output folder `outDir`.
 */
export async function mirrorSeedUrl(
  reposDir: string,
  outDir: string,
  repo: string,
  base: string,
  patches: { patch: string; test_patch: string },
): Promise<string> {
  const mirror = mirrorOf(reposDir, repo);
  if (!mirror)
    throw new InstanceError(
      `no mirror of ${repo} under ${reposDir}`,
      `clone it to ${path.join(reposDir, repo)}`,
    );
  const has = await execa("git", ["-C", mirror, "cat-file", "-e", `${base}^{commit}`], {
    reject: false,
  });
  if (has.exitCode !== 0)
    throw new InstanceError(
      `base_commit ${base} is not in ${mirror}`,
      `fetch it into the mirror (git -C ${mirror} fetch origin ${base})`,
    );
  for (const [name, p] of Object.entries(patches)) {
    const why = await patchApplies(mirror, base, p);
    if (why)
      throw new InstanceError(
        `${name} does not apply at base_commit ${base.slice(0, 12)}: ${why}`,
        `regenerate ${name} against ${base.slice(0, 12)}, or correct base_commit`,
      );
  }
  // Relative to the eval file, so the suite can be committed beside its mirrors as it is.
  const rel = path.relative(outDir, mirror).split(path.sep).join("/");
  return rel.startsWith(".") ? rel : `./${rel}`;
}
