/**
 * Evidence of infrastructure trouble in what an agent CLI printed: the model API answered 429 (a
 * rate limit or quota), a 5xx (a server error, an overload) or refused the credential (401, 403, or
 * Gemini's 400 "API key not valid"). Only such evidence turns a failed or timed-out run into an
 * error that `on_error` may retry or exclude; anything else is the agent's failure, scored on what
 * it left (docs/decisions/0192).
 *
 * Each preset's parser feeds it the error channels of its stream (error events, the CLI's own
 * made-up messages, the final result, stderr), never the model's text. Trouble counts only when
 * nothing the model answered came after it: a rate limit the CLI retried through is no excuse for
 * how the run ended.
 */

/** The phrase for an HTTP status of the model API, or null when that status is not infrastructure. */
export function troubleOfStatus(status: number): string | null {
  if (status === 429) return "the model API answered 429 (rate limit)";
  if (status === 401 || status === 403) return `the model API refused the credential (${status})`;
  if (status >= 500 && status <= 599) return `the model API answered ${status} (server error)`;
  return null;
}

/** Where error texts of the three CLIs carry the HTTP status. */
const STATUS_PATTERNS = [
  /API Error:\s*(\d{3})\b/, // Claude Code: "API Error: 429 {...}"
  /Request rejected \((\d{3})\)/, // Claude Code 2.1: "API Error: Request rejected (429)"
  /\b(?:unexpected|last) status:?\s*(\d{3})\b/, // Codex: "unexpected status 401 Unauthorized"
  /\bfailed with status (\d{3})\b/, // Gemini CLI on stderr: "Attempt 3 failed with status 429."
  /"code"\s*:\s*(\d{3})\b/, // Gemini CLI: "[API Error: {"error":{"code":500,...}}]"
];

/** Texts that name the trouble without a status. */
const TEXT_PATTERNS: [RegExp, string][] = [
  [/API key not valid|invalid x-api-key|Invalid API key|Incorrect API key/i, troubleOfStatus(401)!],
  [/experiencing high demand/i, "the model API was overloaded (server error)"],
  [/exceeded your current quota|RESOURCE_EXHAUSTED/, troubleOfStatus(429)!],
];

/** The trouble an error text of an agent CLI reports, or null. */
export function troubleOfText(text: string): string | null {
  for (const [re, phrase] of TEXT_PATTERNS) if (re.test(text)) return phrase;
  for (const re of STATUS_PATTERNS) {
    const m = re.exec(text);
    const trouble = m ? troubleOfStatus(Number(m[1])) : null;
    if (trouble) return trouble;
  }
  return null;
}

/** API trouble seen in one run: the last one that no answer of the model followed. */
export class ApiTrouble {
  private pending: string | null = null;

  /** An HTTP status the CLI reported for a model request. */
  status(status: number | null): void {
    const t = status === null ? null : troubleOfStatus(status);
    if (t) this.pending = t;
  }

  /** An error text of the CLI (not the model's words). */
  text(text: string | null): void {
    const t = text ? troubleOfText(text) : null;
    if (t) this.pending = t;
  }

  /** A phrase the parser classified itself. */
  saw(phrase: string): void {
    this.pending = phrase;
  }

  /** The model answered (text, a tool call, a completed turn): earlier trouble was overcome. */
  answered(): void {
    this.pending = null;
  }

  get evidence(): string | null {
    return this.pending;
  }
}
