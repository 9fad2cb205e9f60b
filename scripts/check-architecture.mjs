#!/usr/bin/env node
/**
 * The shape docs/architecture.md promises, checked on the source: no file over 400 lines, no
 * import cycle between the top-level parts of src/, the pure stages (gate/, report/) free of the
 * file system, child processes and GitHub, and the edges' spellings (CLI flags, action inputs)
 * known only to cli/ and github/, and no function over 100 lines (`functionsOver`). Prints each
 * breach; exits 1 when there is one. test/architecture.test.ts runs it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

export const MAX_LINES = 400;
export const MAX_FUNCTION_LINES = 100;
const PURE = ["gate", "report"];
const IMPURE = /^(node:)?(fs|fs\/promises|child_process)$|^@actions\/|^@octokit\//;
const EDGES = ["cli", "github", "index"];

/** The top-level part of src/ a file belongs to: its folder, or its own name for a file at the top. */
export function partOf(root, file) {
  const [first, ...rest] = path.relative(path.join(root, "src"), file).split(path.sep);
  return rest.length ? first : first.replace(/\.ts$/, "");
}

/** Every import specifier of a TypeScript source, static, re-export and dynamic. */
export function importsOf(text) {
  const specs = [];
  const re =
    /(?:^|[\s;])(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^import\s+["']([^"']+)["']/gm;
  for (const m of text.matchAll(re)) specs.push(m[1] ?? m[2] ?? m[3]);
  return specs;
}

export function checkArchitecture(root) {
  const src = path.join(root, "src");
  const files = readdirSync(src, { recursive: true })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.join(src, f));
  const breaches = [];
  const graph = new Map();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const rel = path.relative(root, file);
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    if (lines > MAX_LINES)
      breaches.push(`${rel}: ${lines} lines (at most ${MAX_LINES}); split it by concern`);
    const part = partOf(root, file);
    if (!graph.has(part)) graph.set(part, new Map());
    for (const spec of importsOf(text)) {
      if (!spec.startsWith(".")) {
        if (PURE.includes(part) && IMPURE.test(spec))
          breaches.push(`${rel}: imports ${spec}; ${part}/ is pure (no file system, processes or GitHub)`);
        continue;
      }
      const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, ".ts");
      const to = partOf(root, target);
      if (to === part) continue;
      if (EDGES.includes(to) && !EDGES.includes(part))
        breaches.push(
          `${rel}: imports ${path.relative(root, target)}; only the edges (cli/, github/) know their own options`,
        );
      const edges = graph.get(part);
      if (!edges.has(to)) edges.set(to, rel);
    }
    if (!EDGES.includes(part) && /\b(CLI_NAMING|ACTION_NAMING)\b/.test(text))
      breaches.push(`${rel}: names an edge's spelling of its options; pass an OptionNaming in instead`);
  }
  breaches.push(...functionsOver(root));
  for (const { members, route } of cyclesOf(graph)) {
    const inside = [...members].flatMap((from) =>
      [...graph.get(from)].filter(([to]) => members.has(to)).map(([to, file]) => `${from} → ${to} (${file})`),
    );
    breaches.push(
      `import cycle between top-level parts: ${route.join(" → ")}; every import inside the cycle:\n  ${inside.sort().join("\n  ")}`,
    );
  }
  return breaches;
}

/**
 * Every function in a .ts file under src/ (declaration, method, accessor, constructor, function expression,
 * arrow) longer than `max` lines, first line (its modifiers, not its doc comment) to last. A nested
 * function counts inside its parent too: the parent scrolls as much.
 */
export function functionsOver(root, max = MAX_FUNCTION_LINES) {
  // Loaded on demand: the compiler takes a while to load, and the other checks do without it.
  const ts = createRequire(import.meta.url)("typescript");
  const src = path.join(root, "src");
  const files = readdirSync(src, { recursive: true })
    .filter((f) => f.endsWith(".ts"))
    .sort()
    .map((f) => path.join(src, f));
  const breaches = [];
  for (const file of files) {
    const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (ts.isFunctionLike(node) && node.body) {
        const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const lines = sf.getLineAndCharacterOfPosition(node.end).line - first + 1;
        if (lines > max)
          breaches.push(
            `${path.relative(root, file)}:${first + 1} ${functionName(ts, node, sf)}: ${lines} lines (at most ${max}); give each step its name`,
          );
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return breaches;
}

/** A function's name, or the name of what holds it: a variable, a property, or the function it is in. */
function functionName(ts, node, sf) {
  const text = (n) => n.getText(sf);
  const parent = node.parent;
  // A class member by its class: `Box.open`.
  const member = (n, name) =>
    ts.isClassLike(n.parent) && n.parent.name ? `${text(n.parent.name)}.${name}` : name;
  if (ts.isConstructorDeclaration(node)) return member(node, "constructor");
  if (node.name) return member(node, text(node.name));
  if (ts.isPropertyDeclaration(parent)) return member(parent, text(parent.name));
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isParameter(parent))
    return text(parent.name);
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken)
    return text(parent.left);
  if (ts.isExportAssignment(parent)) return "default";
  const kind = ts.isArrowFunction(node) ? "arrow" : "function";
  for (let up = parent; up; up = up.parent)
    if (ts.isFunctionLike(up) && up.body) return `<${kind} in ${functionName(ts, up, sf)}>`;
  return `<${kind} at the top level>`;
}

/** Each strongly connected part of the folder graph (Tarjan), with one cycle through it as a path. */
function cyclesOf(graph) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push({ members: new Set(scc), route: pathWithin(graph, new Set(scc), v) });
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return out;
}

/** A shortest cycle through `start` inside one strongly connected part. */
function pathWithin(graph, members, start) {
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const route = [start];
        for (let u = v; u !== start; u = prev.get(u)) route.splice(1, 0, u);
        return [...route, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const breaches = checkArchitecture(process.cwd());
  for (const b of breaches) console.log(b);
  console.log(
    breaches.length ? `${breaches.length} breaches of docs/architecture.md` : "architecture: no breaches",
  );
  process.exit(breaches.length ? 1 : 0);
}
