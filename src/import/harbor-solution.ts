/**
 * A Harbor task's `solution/` written out of its reference script: evalgate masks the reference
 * script from every agent, but not a folder beside it, so a solution copied next to the script
 * would lie in the eval file's folder, which agents read. Text files only; anything else (a binary
 * file, a link, a large folder) keeps the copied folder, and the import says so.
 */
import { createHash } from "node:crypto";
import { lstat, readdir, readFile } from "node:fs/promises";
import path from "node:path";

/** Past this, a solution is copied rather than written out of the script. */
const MAX_EMBEDDED_BYTES = 1024 * 1024;

/** A quoted shell word. */
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

async function filesOf(dir: string, rel = ""): Promise<{ rel: string; abs: string }[] | string> {
  const out: { rel: string; abs: string }[] = [];
  for (const d of (await readdir(path.join(dir, rel), { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const r = path.posix.join(rel, d.name);
    if (d.isDirectory()) {
      const inner = await filesOf(dir, r);
      if (typeof inner === "string") return inner;
      out.push(...inner);
    } else if (d.isFile()) out.push({ rel: r, abs: path.join(dir, r) });
    else return `${r} is not a regular file`;
  }
  return out;
}

/**
 * Shell lines that write the solution folder `dir` into the folder named by "$sol", or why it
 * cannot be written that way.
 */
export async function solutionWriter(dir: string): Promise<{ lines: string } | { why: string }> {
  const files = await filesOf(dir);
  if (typeof files === "string") return { why: files };
  const contents = await Promise.all(files.map((f) => readFile(f.abs)));
  const total = contents.reduce((n, b) => n + b.length, 0);
  if (total > MAX_EMBEDDED_BYTES) return { why: `${Math.ceil(total / 1024)} KiB, more than 1 MiB` };
  const delimiter = `EVALGATE_SOLUTION_${createHash("sha256")
    .update(Buffer.concat(contents))
    .digest("hex")
    .slice(0, 12)}`;
  const lines: string[] = [];
  const folders = new Set(files.map((f) => path.posix.dirname(f.rel)).filter((d) => d !== "."));
  for (const d of [...folders].sort()) lines.push(`mkdir -p "$sol"/${q(d)}`);
  for (const [i, f] of files.entries()) {
    const bytes = contents[i]!;
    const text = bytes.toString("utf8");
    if (bytes.includes(0) || !Buffer.from(text, "utf8").equals(bytes))
      return { why: `${f.rel} is not a text file` };
    if (text.split("\n").includes(delimiter)) return { why: `${f.rel} holds the line ${delimiter}` };
    const target = `"$sol"/${q(f.rel)}`;
    // A here-document ends every file with a newline: one without its own is cut back to its size.
    const exact = text.endsWith("\n") || text.length === 0;
    lines.push(`cat > ${exact ? target : `${target}.part`} <<'${delimiter}'`);
    if (text.length > 0) lines.push(exact ? text.slice(0, -1) : text);
    lines.push(delimiter);
    if (!exact) lines.push(`head -c ${bytes.length} ${target}.part > ${target} && rm -f ${target}.part`);
    if (((await lstat(f.abs)).mode & 0o111) !== 0) lines.push(`chmod +x ${target}`);
  }
  return { lines: lines.join("\n") };
}
