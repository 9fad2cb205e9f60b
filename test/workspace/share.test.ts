/**
 * Setup-built trees shared through an overlay (workspace/share.ts, docs/decisions/0230): which trees
 * can be shared, the lean start without them, the scan that prunes them, and the check of an upper
 * layer written through a real kernel overlay (in a user namespace, as under bubblewrap).
 * Before: every tree was copied and walked per attempt; there was no upper layer to read.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { overlaidCommand } from "../../src/sandbox/overlay.js";
import { scanWorkspace } from "../../src/workspace/scan.js";
import { checkShared, leanStartOf, overlaysFor, shareableTrees } from "../../src/workspace/share.js";
import { gitRepo, tempDir, writeFiles } from "../helpers.js";

function start() {
  const root = tempDir("evalgate-share-");
  const dir = path.join(root, "tree");
  execFileSync("cp", [
    "-a",
    gitRepo({ ".gitignore": ".venv/\nnode_modules/\n*.log\n*.pyc\n", "src/app.py": "x = 1\n" }),
    dir,
  ]);
  writeFiles(dir, {
    ".venv/lib/pkg/__init__.py": "ok = True\n",
    "node_modules/lib/index.js": "module.exports = 1;\n",
    "node_modules/lib/package.json": '{"name":"lib"}\n',
    "node_modules/gone/a.js": "a\n",
    "node_modules/.gitignore": "*\n",
    "setup.log": "installed\n",
    // Only ignored files: not ignored as a folder, so a new source file there is the agent's work.
    "gen/m.pyc": "bytecode\n",
  });
  return { dir, copyMethod: "copy" as const };
}

describe("shared setup-built trees", () => {
  it("shares only folders the start ignores as a whole, and copies the rest into the lean start", async () => {
    const s = start();
    const trees = await shareableTrees(s);
    expect(trees).toEqual([".venv", "node_modules"]);
    const lean = await leanStartOf(s, trees);
    expect(readdirSync(path.join(lean, "node_modules"))).toEqual([]);
    expect(readdirSync(path.join(lean, ".venv"))).toEqual([]);
    expect(readFileSync(path.join(lean, "gen/m.pyc"), "utf8")).toBe("bytecode\n");
    expect(readFileSync(path.join(lean, "setup.log"), "utf8")).toBe("installed\n");
    expect(existsSync(path.join(lean, ".git/HEAD"))).toBe(true);
  });

  it("prunes the shared trees from the scan (their ignore files too)", async () => {
    const s = start();
    const full = await scanWorkspace(s.dir, undefined, 0n);
    const pruned = await scanWorkspace(s.dir, undefined, 0n, ["node_modules", ".venv"]);
    const names = (b: Buffer[] | undefined) => (b ?? []).map((n) => n.toString());
    expect(names(full.changed)).toContain("node_modules/lib/index.js");
    expect(names(full.ignoreFiles)).toContain("node_modules/.gitignore");
    expect(
      names(pruned.changed).filter((n) => n.startsWith("node_modules/") || n.startsWith(".venv/")),
    ).toEqual([]);
    expect(names(pruned.ignoreFiles)).toEqual([".gitignore"]);
    expect(pruned.pruned).toEqual(["node_modules", ".venv"]);
  });

  it("reads what changed from the upper layer, through a real overlay, and empties it", async () => {
    const s = start();
    const trees = await shareableTrees(s);
    const attempt = tempDir("evalgate-share-attempt-");
    const ws = path.join(attempt, "ws");
    execFileSync("cp", ["-a", await leanStartOf(s, trees), ws]);
    const overlays = await overlaysFor(s, ws, path.join(attempt, "layers"), trees);
    const inside = (script: string) => {
      const c = overlaidCommand({ argv: ["/bin/sh", "-c", script] }, overlays);
      const argv = "argv" in c ? c.argv : [];
      return execFileSync(argv[0]!, argv.slice(1), { cwd: ws }).toString();
    };
    inside(
      [
        "echo 'module.exports = 2;' > node_modules/lib/index.js",
        "rm node_modules/lib/package.json",
        "touch .venv/lib/pkg/__init__.py",
        "rm -rf node_modules/gone && mkdir node_modules/gone",
        "echo import evil > .venv/lib/evil.pth",
        "mkdir -p node_modules/.cache && echo c > node_modules/.cache/x",
      ].join("; "),
    );
    // The start tree is untouched.
    expect(readFileSync(path.join(s.dir, "node_modules/lib/index.js"), "utf8")).toBe("module.exports = 1;\n");
    const check = await checkShared(s, trees, overlays);
    expect(check).toEqual({
      tampered: [
        ".venv/lib/evil.pth",
        "node_modules/gone/a.js",
        "node_modules/lib/index.js",
        "node_modules/lib/package.json",
      ],
      caches: 1,
    });
    for (const m of overlays) expect(readdirSync(m.upper)).toEqual([]);
    expect(inside("cat node_modules/lib/index.js; ls node_modules/gone")).toBe("module.exports = 1;\na.js\n");
  });

  it("finds nothing when the agent only touched a file (control)", async () => {
    const s = start();
    const trees = await shareableTrees(s);
    const attempt = tempDir("evalgate-share-attempt-");
    const ws = path.join(attempt, "ws");
    mkdirSync(ws);
    for (const t of trees) mkdirSync(path.join(ws, t), { recursive: true });
    const overlays = await overlaysFor(s, ws, path.join(attempt, "layers"), trees);
    const c = overlaidCommand(
      { argv: ["/bin/sh", "-c", "touch node_modules/lib/index.js && : >> node_modules/lib/package.json"] },
      overlays,
    );
    const argv = "argv" in c ? c.argv : [];
    execFileSync(argv[0]!, argv.slice(1), { cwd: ws });
    expect(readdirSync(path.join(overlays[1]!.upper, "lib"))).toContain("index.js");
    expect(await checkShared(s, trees, overlays)).toEqual({ tampered: [], caches: 0 });
  });
});
