/**
 * Finding the container engine and the flags this machine needs, without running one: programs on
 * a made-up PATH, and /proc/self/limits texts.
 */
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findEngines, isEngineVariable, ownLimit, podmanUlimits } from "../../src/environment/engine.js";
import { tempDir } from "../helpers.js";

function pathWith(...programs: string[]): string {
  const dir = tempDir("evalgate-path-");
  for (const p of programs) {
    writeFileSync(path.join(dir, p), "#!/bin/sh\n");
    chmodSync(path.join(dir, p), 0o755);
  }
  return dir;
}

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             96364                96364                processes
Max open files            1024                 20000                files
`;

describe("findEngines", () => {
  it("prefers docker, then podman, and takes EVALGATE_CONTAINER's word", () => {
    const both = pathWith("docker", "podman");
    expect((findEngines({ PATH: both }) as { kind: string }[]).map((e) => e.kind)).toEqual([
      "docker",
      "podman",
    ]);
    expect(findEngines({ PATH: both, EVALGATE_CONTAINER: "podman" })).toEqual([
      { kind: "podman", program: path.join(both, "podman") },
    ]);
  });

  it("says what is wrong: nothing installed, an unknown name, a chosen engine missing", () => {
    expect(findEngines({ PATH: pathWith() })).toMatch(/no container engine .*apt-get install podman runc/);
    expect(findEngines({ PATH: pathWith("docker"), EVALGATE_CONTAINER: "lxc" })).toMatch(
      /set it to docker or podman/,
    );
    expect(findEngines({ PATH: pathWith("docker"), EVALGATE_CONTAINER: "podman" })).toMatch(
      /EVALGATE_CONTAINER=podman, but podman is not installed/,
    );
  });
});

describe("the engine's own limits", () => {
  it("reads soft and hard limits", () => {
    expect(ownLimit("Max open files", LIMITS)).toEqual({ soft: 1024, hard: 20000 });
    expect(ownLimit("Max processes", LIMITS)).toEqual({ soft: 96364, hard: 96364 });
    expect(ownLimit("Max open files", "Max open files   unlimited   unlimited  files\n")).toEqual({
      soft: Number.POSITIVE_INFINITY,
      hard: Number.POSITIVE_INFINITY,
    });
  });

  it("keeps rootful podman within evalgate's limits (nproc within podman's own 32768), and says nothing where they are high", () => {
    // before: podman raised nofile to 1048576 and runc refused ("error setting rlimit type 7").
    expect(podmanUlimits(LIMITS)).toEqual(["--ulimit", "nofile=1024:20000", "--ulimit", "nproc=32768:32768"]);
    expect(
      podmanUlimits(
        "Max processes   unlimited   unlimited  processes\nMax open files  1048576 1048576 files\n",
      ),
    ).toEqual([]);
  });

  it("knows the variables the engine's program reads itself", () => {
    expect(isEngineVariable("HOME")).toBe(true);
    expect(isEngineVariable("DOCKER_HOST")).toBe(true);
    expect(isEngineVariable("ANTHROPIC_API_KEY")).toBe(false);
  });
});
