// Copies ast-grep's native parts next to a bundle, where src/scorers/ast-grep-native.ts looks for
// them: <out>/native/ast-grep-napi.<triple>.node and <out>/native/lang-<x>/<prebuild>/parser.so.
// A bundler cannot follow @ast-grep/napi's per-platform require, so the bundle loads these files
// directly. Usage: node scripts/ship-native.mjs dist [--all-prebuilds]
//   default: the napi binary installed here (linux-x64-gnu on an ubuntu runner or this machine) and
//   the parsers for this platform; --all-prebuilds also copies the parsers of every platform the
//   lang packages ship.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const out = args.find((a) => !a.startsWith("--"));
if (!out) {
  console.error("usage: node scripts/ship-native.mjs <bundle-dir> [--all-prebuilds]");
  process.exit(2);
}
const allPrebuilds = args.includes("--all-prebuilds");
const LANG_PACKAGES = ["lang-python", "lang-go", "lang-rust", "lang-java"];

function triple() {
  const { platform, arch } = process;
  if (platform === "linux")
    return `linux-${arch}-${process.report.getReport().header.glibcVersionRuntime ? "gnu" : "musl"}`;
  if (platform === "win32") return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}
function prebuild() {
  const os = { darwin: "macOS", linux: "Linux", win32: "Windows" }[process.platform];
  const arch = { x64: "X64", arm64: "ARM64" }[process.arch];
  return `prebuild-${os}-${arch}`;
}

const native = path.join(out, "native");
rmSync(native, { recursive: true, force: true });
mkdirSync(native, { recursive: true });
const t = triple();
const binaryName = `ast-grep-napi.${t}.node`;
const pkgDir = path.dirname(require.resolve(`@ast-grep/napi-${t}/package.json`));
copyFileSync(path.join(pkgDir, binaryName), path.join(native, binaryName));
const copied = [binaryName];
for (const pkg of LANG_PACKAGES) {
  const dir = path.dirname(require.resolve(`@ast-grep/${pkg}/package.json`));
  const builds = allPrebuilds ? readdirSync(path.join(dir, "prebuilds")) : [prebuild()];
  for (const b of builds) {
    const from = path.join(dir, "prebuilds", b, "parser.so");
    if (!existsSync(from)) {
      console.error(`@ast-grep/${pkg} has no ${b} parser`);
      process.exit(1);
    }
    mkdirSync(path.join(native, pkg, b), { recursive: true });
    copyFileSync(from, path.join(native, pkg, b, "parser.so"));
    copied.push(`${pkg}/${b}/parser.so`);
  }
}
console.log(`copied into ${native}: ${copied.join(", ")}`);
