/**
 * The eval run's options as the core sees them: their bounds, shared by the eval file, the CLI and
 * the action, and how the edge that started the run spells them, for the core's messages. The
 * spellings themselves live with the edges (`cli/args.ts`, `github/inputs.ts`).
 */

/** The options whose values reach messages of the shared core (the plan, the bundle writer, merge). */
export type NamedOption = "out" | "target" | "shard";

/**
 * How the user spelled the options, for the core's messages: the CLI's `--out DIR`, the action's
 * `out` input. An action user never typed a flag, so an error naming one sends them looking for it.
 */
export interface OptionNaming {
  /** The option with the value given: `--out dir` / `input out: dir`. */
  given(option: NamedOption, value: string): string;
  /** The filters together: `the --target / --test / --tag filters`. */
  filters: string;
}

/**
 * The most attempts per (test, target): the eval file's `repeat:`, `--repeat` and the action's
 * `repeat` input share it. Far more than any gate needs, and small enough that the attempts of a
 * case fit in memory (`--repeat 99999999999` used to end in an out-of-memory crash).
 */
export const MAX_REPEAT = 1000;
/** The most attempts at once: the eval file's `concurrency:`, `--concurrency` and the action input. */
export const MAX_CONCURRENCY = 256;

/** Why `n` attempts per case are not allowed, or undefined when they are. Shared by every repeat check. */
export function repeatProblem(n: number): string | undefined {
  if (!Number.isInteger(n) || n < 1) return "must be a whole number of at least 1";
  if (n > MAX_REPEAT) return `must be at most ${MAX_REPEAT} attempts per case`;
  return undefined;
}
