/** Commands in eval files: shape, placeholders, quoting, and where a program would be found. */
import { accessSync, closeSync, constants, openSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { didYouMean } from "../errors.js";

/** A command as configured: a shell string (run by sh -c) or an argv array (run without a shell). */
export type Command = { shell: string } | { argv: string[] };

export const AGENT_PLACEHOLDERS = [
  "PROMPT",
  "PROMPT_FILE",
  "WORKSPACE",
  "OUTPUT_FILE",
  "ATTEMPT",
  "TEST_ID",
  "EVAL_DIR",
] as const;
export const WORKSPACE_PLACEHOLDERS = ["WORKSPACE", "EVAL_DIR"] as const;
/** A tests scorer's report: a fresh file (and its folder) outside the workspace, per grading. */
export const REPORT_PLACEHOLDERS = ["REPORT_FILE", "REPORT_DIR"] as const;

export function toCommand(value: string | string[]): Command {
  return typeof value === "string" ? { shell: value } : { argv: [...value] };
}

/** `{NAME}`: one pattern for finding (global) and for scanning a shell line (sticky). */
const PLACEHOLDERS = /\{([A-Z][A-Z0-9_]*)\}/g;
const PLACEHOLDER = new RegExp(PLACEHOLDERS.source, "y");

export function usesPlaceholder(command: Command, name: string): boolean {
  return ("shell" in command ? [command.shell] : command.argv).some((a) => a.includes(`{${name}}`));
}

/** Placeholders like `{PROMT}` that are not known: returned with a suggestion. */
export function unknownPlaceholders(
  command: Command,
  allowed: readonly string[],
): { name: string; suggestion?: string }[] {
  const text = "shell" in command ? command.shell : command.argv.join("\u0000");
  const out: { name: string; suggestion?: string }[] = [];
  for (const m of text.matchAll(PLACEHOLDERS)) {
    const name = m[1]!;
    if (!allowed.includes(name) && !out.some((o) => o.name === name)) {
      out.push({ name, suggestion: didYouMean(name, allowed) });
    }
  }
  return out;
}

const SHELL_WORDS = new Set([
  "cd",
  "export",
  "exec",
  "set",
  "unset",
  "true",
  "false",
  "test",
  "[",
  "echo",
  "printf",
  "if",
  "for",
  "while",
  "case",
  "source",
  ".",
  "eval",
  "env",
  "exit",
  "read",
  "{",
  "(",
  "!",
  "time",
  "command",
]);

/** The program a command starts, when it can be known without running a shell. */
export function programOf(command: Command): string | undefined {
  if ("argv" in command) {
    const program = command.argv[0];
    // A program inside {WORKSPACE} (or behind any other placeholder) exists only at run time.
    return program?.includes("{") ? undefined : program;
  }
  const first = command.shell.trim().split(/\s+/)[0] ?? "";
  if (!/^[A-Za-z0-9_./+-]+$/.test(first) || first.includes("=") || SHELL_WORDS.has(first)) return undefined;
  return first;
}

/**
 * For agent commands: a program starting with `./`, `../` or `{EVAL_DIR}/` is a file beside the eval
 * file, so it is made absolute against `evalDir` (the agent runs with the workspace as its folder).
 */
export function resolveAgentCommand(command: Command, evalDir: string): Command {
  if ("argv" in command) {
    const [program, ...rest] = command.argv;
    const resolved = program === undefined ? undefined : besideEvalFile(program, evalDir);
    return resolved ? { argv: [resolved, ...rest] } : command;
  }
  const trimmed = command.shell.trimStart();
  const first = trimmed.split(/\s/)[0] ?? "";
  const resolved = besideEvalFile(first, evalDir);
  return resolved ? { shell: shellQuote(resolved) + trimmed.slice(first.length) } : command;
}

/** The absolute path of a program named relative to the eval file's folder, else undefined. */
function besideEvalFile(program: string, evalDir: string): string | undefined {
  if (program.startsWith("./") || program.startsWith("../")) return path.resolve(evalDir, program);
  if (program === "{EVAL_DIR}" || program.startsWith("{EVAL_DIR}/")) {
    return path.join(evalDir, program.slice("{EVAL_DIR}".length));
  }
  return undefined;
}

/**
 * For setup and scorer commands, which run in the workspace: the absolute path of a program named
 * `{EVAL_DIR}/…` (a file beside the eval file, known before the run), else undefined.
 */
export function evalDirProgram(command: Command, evalDir: string): string | undefined {
  const first = "argv" in command ? command.argv[0] : command.shell.trimStart().split(/\s/)[0];
  return first?.startsWith("{EVAL_DIR}/") && !first.slice(1).includes("{")
    ? besideEvalFile(first, evalDir)
    : undefined;
}

/** A preset's `bin:`: `./` and `../` are relative to the eval file's folder, like agent commands. */
export function resolveBin(bin: string, evalDir: string): string {
  return bin.startsWith("./") || bin.startsWith("../") ? path.resolve(evalDir, bin) : bin;
}

/** Where `program` would be found, or undefined when it would not. */
export function findProgram(program: string, envPath = process.env.PATH ?? ""): string | undefined {
  const candidates = program.includes("/")
    ? [program]
    : envPath
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, program));
  for (const c of candidates) {
    try {
      if (!statSync(c).isFile()) continue;
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * A script saved with Windows line endings names its interpreter as `/bin/sh\r`, which the system
 * reports as the script itself being "not found": say what is really wrong.
 */
export function crlfShebang(file: string): string | undefined {
  const head = Buffer.alloc(256);
  let n = 0;
  try {
    const fd = openSync(file, "r");
    try {
      n = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const text = head.subarray(0, n).toString("latin1");
  const eol = text.indexOf("\n");
  if (!text.startsWith("#!") || eol < 0 || text[eol - 1] !== "\r") return undefined;
  const interpreter = text.slice(2, eol - 1).trim();
  return `${file} has Windows line endings (CRLF), so its first line asks for the interpreter "${interpreter}\\r", which does not exist (convert the file with dos2unix or sed -i 's/\\r$//')`;
}

/** Quotes a value for POSIX sh. */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_./:=@%+-]+$/.test(value)) return value;
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Where a placeholder stands in a `sh -c` command line: a word of its own (`plain`), inside '...'
 * (`single`) or "..." (`double`), or somewhere its value cannot be quoted (`lost`): a here-document
 * body after `<<`, or a command substitution inside double quotes, whose quoting this scan does not
 * follow. Once lost, every later placeholder is lost too.
 */
type ShellContext = "plain" | "single" | "double" | "lost";

interface PlaceholderAt {
  start: number;
  end: number;
  name: string;
  context: ShellContext;
}

/** Every `{NAME}` of a shell command line, with the quoting context it stands in. */
function shellPlaceholders(text: string): PlaceholderAt[] {
  const out: PlaceholderAt[] = [];
  let quote: "plain" | "single" | "double" = "plain";
  let lost = false;
  for (let i = 0; i < text.length; i++) {
    PLACEHOLDER.lastIndex = i;
    const m = PLACEHOLDER.exec(text);
    if (m) {
      out.push({ start: i, end: i + m[0].length, name: m[1]!, context: lost ? "lost" : quote });
      i += m[0].length - 1;
      continue;
    }
    const c = text[i];
    if (quote === "single") {
      if (c === "'") quote = "plain";
    } else if (c === "\\") {
      i++; // the next character is escaped (outside single quotes)
    } else if (quote === "double") {
      if (c === '"') quote = "plain";
      else if (c === "`" || (c === "$" && text[i + 1] === "(")) lost = true;
    } else if (c === "'") quote = "single";
    else if (c === '"') quote = "double";
    else if (c === "<" && text[i + 1] === "<") lost = true;
  }
  return out;
}

/** A value quoted for the context it is put in, so that the shell reads back exactly the value. */
function quoteFor(context: ShellContext, value: string): string {
  if (context === "single") return value.replaceAll("'", `'\\''`);
  if (context === "double") return value.replace(/[\\"$`]/g, "\\$&");
  return shellQuote(value);
}

/**
 * Placeholders of a shell command line whose value evalgate cannot quote (in a here-document, or
 * in a command substitution inside double quotes): a validation error, since task text or a path
 * put there could be read as shell syntax.
 */
export function unquotablePlaceholders(command: Command): string[] {
  if (!("shell" in command)) return [];
  const names = shellPlaceholders(command.shell)
    .filter((p) => p.context === "lost")
    .map((p) => p.name);
  return [...new Set(names)];
}

export const UNQUOTABLE_HINT =
  "write the placeholder as a word of its own or inside '...' or \"...\" (evalgate quotes its value to fit), or use an argv array; for a here-document, read {PROMPT_FILE} instead";

/**
 * Replaces `{NAME}` placeholders. In an argv each element gets the value as is; in a shell string
 * the value is quoted for where it stands (a word of its own, or inside '...' or "..."), so text
 * such as a task instruction is passed as data and can never inject shell syntax.
 */
export function expandPlaceholders(command: Command, values: Record<string, string>): Command {
  if ("argv" in command) {
    return {
      argv: command.argv.map((a) => a.replace(PLACEHOLDERS, (whole, name: string) => values[name] ?? whole)),
    };
  }
  const text = command.shell;
  let out = "";
  let from = 0;
  for (const p of shellPlaceholders(text)) {
    const v = values[p.name];
    if (v === undefined) continue;
    out += text.slice(from, p.start) + quoteFor(p.context, v);
    from = p.end;
  }
  return { shell: out + text.slice(from) };
}

const PLAIN_CHAR = /[A-Za-z0-9_./:=@%+,-]/;

/**
 * The words of a shell line that needs no shell: plain characters (letters, digits, `_./:=@%+,-`)
 * and '...' parts, words separated by spaces, naming a program that is not a shell word; else
 * undefined. Such a line runs the same as an argv, without a `/bin/sh -c` process in front.
 */
export function plainArgv(line: string): string[] | undefined {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === " ") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (PLAIN_CHAR.test(c)) word = (word ?? "") + c;
    else return undefined;
  }
  if (word !== undefined) words.push(word);
  const first = words[0];
  if (first === undefined || first.includes("=") || SHELL_WORDS.has(first)) return undefined;
  return words;
}
