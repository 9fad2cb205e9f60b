/** Commands in eval files: shape, placeholders, and whether the program exists. */
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import { didYouMean } from "./errors.js";
import type { Command } from "./types.js";

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

export function toCommand(value: string | string[]): Command {
  return typeof value === "string" ? { shell: value } : { argv: [...value] };
}

/** Placeholders like `{PROMT}` that are not known: returned with a suggestion. */
export function unknownPlaceholders(
  command: Command,
  allowed: readonly string[],
): { name: string; suggestion?: string }[] {
  const text = "shell" in command ? command.shell : command.argv.join("\u0000");
  const out: { name: string; suggestion?: string }[] = [];
  for (const m of text.matchAll(/\{([A-Z][A-Z0-9_]*)\}/g)) {
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
  if ("argv" in command) return command.argv[0];
  const first = command.shell.trim().split(/\s+/)[0] ?? "";
  if (!/^[A-Za-z0-9_./+-]+$/.test(first) || first.includes("=") || SHELL_WORDS.has(first)) return undefined;
  return first;
}

/**
 * For agent commands: a program starting with `./` or `../` is a file beside the eval file, so it is
 * made absolute against `evalDir` (the agent runs with the workspace as its folder).
 */
export function resolveAgentCommand(command: Command, evalDir: string): Command {
  const isRelative = (p: string) => p.startsWith("./") || p.startsWith("../");
  if ("argv" in command) {
    const [program, ...rest] = command.argv;
    return program && isRelative(program) ? { argv: [path.resolve(evalDir, program), ...rest] } : command;
  }
  const trimmed = command.shell.trimStart();
  const first = trimmed.split(/\s/)[0] ?? "";
  if (!isRelative(first)) return command;
  return { shell: shellQuote(path.resolve(evalDir, first)) + trimmed.slice(first.length) };
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

/** Explains why a program cannot be run, or returns undefined when it can. */
export function programProblem(program: string): string | undefined {
  if (findProgram(program)) return undefined;
  if (program.includes("/")) {
    try {
      const s = statSync(program);
      if (s.isDirectory()) return `${program} is a folder, not a program`;
      return `${program} is not executable (chmod +x it, or run it through its interpreter)`;
    } catch {
      return `${program} does not exist`;
    }
  }
  return `"${program}" was not found on PATH`;
}

/** Quotes a value for POSIX sh. */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_./:=@%+-]+$/.test(value)) return value;
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Replaces `{NAME}` placeholders. In an argv each element gets the value as is; in a shell string
 * the value is shell-quoted, so text such as a task instruction can never inject shell syntax.
 */
export function expandPlaceholders(command: Command, values: Record<string, string>): Command {
  const replace = (text: string, quote: boolean) =>
    text.replace(/\{([A-Z][A-Z0-9_]*)\}/g, (whole, name: string) => {
      const v = values[name];
      if (v === undefined) return whole;
      return quote ? shellQuote(v) : v;
    });
  if ("argv" in command) return { argv: command.argv.map((a) => replace(a, false)) };
  return { shell: replace(command.shell, true) };
}
