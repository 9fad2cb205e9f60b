/**
 * JUnit XML reports → one result per `<testcase>`. Pure: text in, results out.
 *
 * The dialects disagree on almost everything (see test/fixtures/junit/README.md), so the reader
 * trusts only the testcases themselves: it walks every `<testcase>` at any depth (also directly
 * under `<testsuites>`), never reads the counters on `<testsuite>`, keeps duplicates as separate
 * results, and decides a testcase's outcome from its direct `<failure>`, `<error>` and `<skipped>`
 * children with the precedence failure > error > skipped. Surefire's `flakyFailure`/`flakyError`
 * (passed on a retry) and `rerunFailure`/`rerunError` (retries of a test that failed anyway) are
 * retries, not results.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";

import type { TestCaseResult, TestOutcome } from "./test-case.js";

// Also here for the modules that read a report's results with the parser.
export {
  countOutcomes,
  displayName,
  type OutcomeCounts,
  type TestCaseResult,
  type TestOutcome,
} from "./test-case.js";

/** A report that cannot be read: not XML, or not JUnit. */
export class JUnitError extends Error {
  override name = "JUnitError";
}

/** One element of fast-xml-parser's ordered output: `{ tag: children, ":@": attributes }`. */
type OrderedNode = Record<string, unknown> & { ":@"?: Record<string, string> };

const MESSAGE_CAP = 300;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Character references (`&#10;`, `&#x41;`) are XML, and every pytest failure message has them;
  // fast-xml-parser decodes them only with its HTML entity table switched on.
  htmlEntities: true,
  // Node's reporter nests subtests as suites; 100 levels is far beyond any real report.
  maxNestedTags: 200,
});

function tagOf(node: OrderedNode): string | undefined {
  return Object.keys(node).find((k) => k !== ":@");
}

function childrenOf(node: OrderedNode, tag: string): OrderedNode[] {
  const c = node[tag];
  return Array.isArray(c) ? (c as OrderedNode[]) : [];
}

function textOf(nodes: OrderedNode[]): string {
  let out = "";
  for (const n of nodes) {
    const tag = tagOf(n);
    if (tag === "#text") out += String(n["#text"] ?? "");
    else if (tag === "#cdata") out += textOf(childrenOf(n, tag));
  }
  return out;
}

function attr(node: OrderedNode, name: string): string | null {
  const v = node[":@"]?.[name];
  return v === undefined ? null : String(v);
}

function cap(text: string): string {
  const chars = [...text];
  return chars.length > MESSAGE_CAP ? `${chars.slice(0, MESSAGE_CAP - 1).join("")}…` : text;
}

/** The `message` attribute, or the first non-empty line of the element's text. */
function messageOf(node: OrderedNode, tag: string): string | null {
  const m = attr(node, "message")?.trim();
  if (m) return cap(m.split(/\r?\n/)[0]!.trim());
  const line = textOf(childrenOf(node, tag))
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find(Boolean);
  return line ? cap(line) : null;
}

const PRECEDENCE: [tag: string, outcome: TestOutcome][] = [
  ["failure", "failed"],
  ["error", "errored"],
  ["skipped", "skipped"],
];

function readTestcase(node: OrderedNode, suite: string | null): TestCaseResult {
  const kids = childrenOf(node, "testcase");
  let outcome: TestOutcome = "passed";
  let message: string | null = null;
  for (const [tag, result] of PRECEDENCE) {
    const hit = kids.find((k) => tagOf(k) === tag);
    if (hit) {
      outcome = result;
      message = messageOf(hit, tag);
      break;
    }
  }
  const flaky =
    outcome === "passed" && kids.some((k) => ["flakyFailure", "flakyError"].includes(tagOf(k) ?? ""));
  const t = Number(attr(node, "time") ?? Number.NaN);
  return {
    suite,
    classname: attr(node, "classname") || null,
    name: attr(node, "name"),
    file: attr(node, "file") || null,
    outcome,
    message,
    time: Number.isFinite(t) ? t : null,
    flaky,
  };
}

function walk(nodes: OrderedNode[], suite: string | null, out: TestCaseResult[]): void {
  for (const node of nodes) {
    const tag = tagOf(node);
    if (tag === "testcase") out.push(readTestcase(node, suite));
    else if (tag === "testsuite" || tag === "testsuites") {
      walk(childrenOf(node, tag), tag === "testsuite" ? (attr(node, "name") ?? suite) : suite, out);
    }
  }
}

/** Reads a JUnit XML report. Throws JUnitError when it is not well-formed XML or not JUnit. */
export function parseJUnit(xml: string): TestCaseResult[] {
  const text = xml.replace(/^\uFEFF/, "");
  if (!text.trim()) throw new JUnitError("the report is empty");
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    throw new JUnitError(`the report is not well-formed XML (line ${valid.err.line}: ${valid.err.msg})`);
  }
  let doc: OrderedNode[];
  try {
    doc = parser.parse(text) as OrderedNode[];
  } catch (error) {
    throw new JUnitError(`the report cannot be read: ${(error as Error).message}`);
  }
  const root = doc.find((n) => {
    const t = tagOf(n);
    return t !== undefined && !t.startsWith("#") && !t.startsWith("?");
  });
  const rootTag = root ? tagOf(root) : undefined;
  if (!root || (rootTag !== "testsuites" && rootTag !== "testsuite")) {
    throw new JUnitError(
      `not a JUnit report: the root element is <${rootTag ?? "none"}>, not <testsuites> or <testsuite>`,
    );
  }
  const out: TestCaseResult[] = [];
  walk([root], null, out);
  return out;
}
