/**
 * Checks of rendered markdown as GitHub would read it: fences and <details> balanced, and, after
 * rendering with a real markdown parser (markdown-it, raw HTML allowed as GitHub allows it) and
 * parsing the HTML (parse5), no element an agent could have injected and no pingable mention.
 */
import MarkdownIt from "markdown-it";
import { type DefaultTreeAdapterMap, parseFragment } from "parse5";

/** The fence still open at the end of the document (CommonMark rules for backtick fences), or null. */
export function openFence(markdown: string): string | null {
  let open: string | null = null;
  for (const line of markdown.split("\n")) {
    if (open === null) {
      const m = /^ {0,3}(`{3,})([^`]*)$/.exec(line);
      if (m) open = m[1]!;
    } else {
      const m = /^ {0,3}(`{3,})\s*$/.exec(line);
      if (m && m[1]!.length >= open.length) open = null;
    }
  }
  return open;
}

/** Lines outside fences. */
export function outsideFences(markdown: string): string[] {
  const out: string[] = [];
  let open: string | null = null;
  for (const line of markdown.split("\n")) {
    if (open === null) {
      const m = /^ {0,3}(`{3,})([^`]*)$/.exec(line);
      if (m) open = m[1]!;
      else out.push(line);
    } else {
      const m = /^ {0,3}(`{3,})\s*$/.exec(line);
      if (m && m[1]!.length >= open.length) open = null;
    }
  }
  return out;
}

/** Every <details> closed, never closed before it opened. */
export function detailsBalanced(markdown: string): boolean {
  let depth = 0;
  for (const line of outsideFences(markdown)) {
    depth += (line.match(/<details>/g) ?? []).length;
    depth -= (line.match(/<\/details>/g) ?? []).length;
    if (depth < 0) return false;
  }
  return depth === 0;
}

const md = new MarkdownIt({ html: true, linkify: true });

export function renderMarkdown(markdown: string): string {
  return md.render(markdown);
}

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];

/** The elements evalgate itself writes; anything else came from an agent. */
const OURS = new Set([
  "h2",
  "p",
  "strong",
  "em",
  "code",
  "pre",
  "ul",
  "li",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
  "details",
  "summary",
  "b",
  "sub",
  "a",
  "br",
]);

export interface HtmlFacts {
  /** Elements that evalgate never writes (img, script, …). */
  foreign: string[];
  /** Text outside code that GitHub would turn into a mention. */
  mentions: string[];
  /** Text outside code that GitHub would turn into an issue reference. */
  issueRefs: string[];
  /** Link targets. */
  hrefs: string[];
  /** All text outside code and pre. */
  text: string;
}

export function htmlFacts(html: string): HtmlFacts {
  const facts: HtmlFacts = { foreign: [], mentions: [], issueRefs: [], hrefs: [], text: "" };
  const walk = (n: Node, inCode: boolean): void => {
    if (n.nodeName === "#text") {
      const value = (n as DefaultTreeAdapterMap["textNode"]).value;
      if (!inCode) {
        facts.text += value;
        facts.mentions.push(...(value.match(/(?<![\w`])@[A-Za-z0-9][\w-]*/g) ?? []));
        facts.issueRefs.push(...(value.match(/(?<![\w&])#\d+/g) ?? []));
      }
      return;
    }
    const el = n as Element;
    if (el.tagName && !OURS.has(el.tagName)) facts.foreign.push(el.tagName);
    if (el.tagName === "a") facts.hrefs.push(el.attrs.find((a) => a.name === "href")?.value ?? "");
    const code = inCode || el.tagName === "code" || el.tagName === "pre";
    for (const c of (el as { childNodes?: Node[] }).childNodes ?? []) walk(c, code);
  };
  for (const c of parseFragment(html).childNodes) walk(c, false);
  return facts;
}

/** Every check at once: what a test of any rendered comment asserts. */
export function checkComment(
  markdown: string,
): HtmlFacts & { openFence: string | null; detailsBalanced: boolean } {
  return {
    ...htmlFacts(renderMarkdown(markdown)),
    openFence: openFence(markdown),
    detailsBalanced: detailsBalanced(markdown),
  };
}

/** Every element of a parsed HTML document or fragment, depth first. */
export function htmlElements(node: DefaultTreeAdapterMap["parentNode"], out: Element[] = []): Element[] {
  for (const c of node.childNodes) {
    if ("tagName" in c) {
      out.push(c);
      htmlElements(c, out);
    }
  }
  return out;
}
