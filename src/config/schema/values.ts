/**
 * The values eval files share: durations, sizes, commands, rates, names (slugs) and variable names.
 */
import { z } from "zod";
import { DURATION_PATTERN, DURATION_RANGE, durationInRange } from "../duration.js";
import { SIZE_PATTERN } from "../size.js";

export const duration = z
  .union([
    z.string().regex(DURATION_PATTERN, 'a duration such as "90s", "20m" or "1h"'),
    z.number().positive(),
  ])
  .refine(durationInRange, DURATION_RANGE)
  .describe('A duration between 1s and 24h: "90s", "20m", "1h", "1h30m", "1500ms", or a number of seconds');

export const size = z
  .union([
    z.string().regex(SIZE_PATTERN, 'a size such as "10MiB", "100MB" or "512KB"'),
    z.number().int().positive(),
  ])
  .describe('A size: "10MiB", "100MB", "1.5GiB", "512KB", "100B", or a number of bytes');

export const stringOrArgv = z
  .union([z.string().min(1), z.array(z.string()).min(1)])
  .describe("A shell command (run with sh -c) or an argv array (run without a shell)");

export const rate = z.number().min(0).max(1);

/** How many more times the scorers run on an attempt's final workspace (a test's or a scorer's). */
export const verifyRepeats = z.number().int().min(0).max(20);

export const SLUG_RULE = "ASCII letters, digits, '.', '_' and '-', starting with a letter or digit";

/**
 * The longest test id, target or scorer name: each becomes a file name (`scorers/<name>.log`, a
 * result folder, a workspace), and file systems take at most 255 bytes per name.
 */
export const MAX_NAME_LENGTH = 100;

/** A name that is safe as a file name in the bundle and readable in a comment. */
export const slug = z
  .string()
  .max(MAX_NAME_LENGTH)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, SLUG_RULE);

/** The nearest name that follows SLUG_RULE, for the hint: "Café au lait/2" → "Cafe-au-lait-2". */
export function suggestSlug(text: string): string | undefined {
  const out = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .replace(/-+$/, "");
  return out || undefined;
}

/** Names of environment variables: never the runner's own secrets (checked again by the planner). */
export const envNames = z
  .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name"))
  .describe("Environment variables passed through from evalgate's environment");
