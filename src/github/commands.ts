/**
 * `/evalgate run|help` in a pull request comment, parsed. Only a line of the comment's own text
 * counts: lines in quotes (`> …`), fenced or indented code blocks are someone else's words or an
 * example, not a request.
 */
import { parseRepeat } from "../config/options.js";
import type { RepeatSetting } from "../config/types.js";
import { UsageError } from "../errors.js";

export interface RunCommand {
  kind: "run";
  /** The command line as written (for "who asked for what"). */
  text: string;
  /** N attempts per case, or MIN..MAX adaptive attempts, as `run --repeat` takes them. */
  repeat?: RepeatSetting;
  tests: string[];
  targets: string[];
  tags: string[];
}

export type Command =
  | RunCommand
  | { kind: "help"; text: string }
  | { kind: "invalid"; text: string; error: string };

/** The comment's own lines: without quotes, fenced code blocks and indented code. */
function ownLines(body: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const raw of body.replace(/\r\n?/g, "\n").split("\n")) {
    const line = raw.replace(/\s+$/, "");
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (f && f[1]!.startsWith(fence)) fence = null;
      continue;
    }
    if (f) {
      fence = f[1]!;
      continue;
    }
    if (/^ {0,3}>/.test(line) || /^( {4}|\t)/.test(line)) continue;
    out.push(line.trim());
  }
  return out;
}

/** Splits words, keeping "quoted words" together. */
function words(s: string): string[] {
  return [...s.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** The first `/evalgate` command of the comment, or null when it has none. */
export function parseCommand(body: string): Command | null {
  const line = ownLines(body).find((l) => /^\/evalgate(\s|$)/.test(l));
  if (line === undefined) return null;
  const text = line.slice(0, 300);
  const [, verb, ...rest] = words(line);
  if (verb === "help") return { kind: "help", text };
  if (verb !== "run") {
    return {
      kind: "invalid",
      text,
      error: verb ? `unknown command "${verb}"` : "the command is missing",
    };
  }
  const cmd: RunCommand = { kind: "run", text, tests: [], targets: [], tags: [] };
  try {
    for (let i = 0; i < rest.length; i++) {
      const flag = rest[i]!;
      const eq = flag.indexOf("=");
      const name = eq > 0 ? flag.slice(0, eq) : flag;
      const value = eq > 0 ? flag.slice(eq + 1) : rest[++i];
      if (!["--repeat", "--test", "--target", "--tag"].includes(name))
        throw new UsageError(`unknown option "${name}"`);
      if (value === undefined || value === "") throw new UsageError(`${name} needs a value`);
      if (name === "--repeat") {
        cmd.repeat = parseRepeat(value, "--repeat");
      } else if (name === "--test") cmd.tests.push(value);
      else if (name === "--target") cmd.targets.push(value);
      else cmd.tags.push(value);
    }
  } catch (error) {
    return { kind: "invalid", text, error: (error as Error).message };
  }
  return cmd;
}
