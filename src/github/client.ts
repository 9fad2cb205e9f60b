/**
 * The GitHub REST client: @actions/github's octokit with retries (5xx, network errors) and
 * throttling (primary and secondary rate limits), plus plain-language explanations of the errors
 * a workflow author can fix.
 */
import { getOctokit } from "@actions/github";
import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import type { Logger } from "../log.js";

export type GitHubClient = ReturnType<typeof getOctokit>;

export interface ClientOptions {
  token: string;
  /** GITHUB_API_URL, read when the client is made (not when @actions/github was imported). */
  baseUrl: string;
  logger: Logger;
  /** Retries of a request that failed with 5xx or a network error (default 3: waits 1 s, 4 s, 9 s). */
  retries?: number;
}

/** How often a rate-limited request is tried again before giving up. */
const RATE_LIMIT_RETRIES = 2;

export function createClient(opts: ClientOptions): GitHubClient {
  const onLimit =
    (kind: string) =>
    (retryAfter: number, options: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
      const again = retryCount < RATE_LIMIT_RETRIES;
      opts.logger.warn(
        `GitHub ${kind} for ${options.method} ${options.url}${again ? `: retrying in ${retryAfter} s` : ": giving up"}`,
      );
      return again;
    };
  return getOctokit(
    opts.token,
    {
      baseUrl: opts.baseUrl,
      retry: { retries: opts.retries ?? 3 },
      throttle: { onRateLimit: onLimit("rate limit"), onSecondaryRateLimit: onLimit("secondary rate limit") },
    },
    retry,
    throttling,
  );
}

interface RequestErrorLike {
  status?: number;
  message?: string;
  response?: { data?: unknown; headers?: Record<string, string | undefined> };
}

export function apiStatus(error: unknown): number | undefined {
  const s = (error as RequestErrorLike)?.status;
  return typeof s === "number" ? s : undefined;
}

/** GitHub's own message ("Resource not accessible by integration"), without octokit's decorations. */
function apiMessage(error: unknown): string {
  const e = error as RequestErrorLike;
  const data = e?.response?.data as { message?: unknown } | undefined;
  if (typeof data?.message === "string") return data.message;
  return (e?.message ?? String(error)).split(" - ")[0]!;
}

/** A token that cannot write here: a fork's read-only token, or missing `permissions:`. */
export function isForbidden(error: unknown): boolean {
  return apiStatus(error) === 403 && !/rate limit/i.test(apiMessage(error));
}

/**
 * One sentence saying what failed and what to do: `what` is the action ("posting the PR comment"),
 * `permission` the scope it needs ("pull-requests: write").
 */
export function explainApiError(error: unknown, what: string, permission?: string): string {
  const status = apiStatus(error);
  const message = apiMessage(error);
  if (status === 403 && /rate limit/i.test(message))
    return `${what} failed: GitHub's API rate limit was exceeded (${message})`;
  if (status === 403 || (status === 404 && permission)) {
    return `${what} failed (${status} ${message}): the token needs ${permission ?? "more permissions"}; add it to the workflow's or job's \`permissions:\`${
      status === 403
        ? ". A pull request from a fork gets a read-only token: see docs/fork-pull-requests.md"
        : " (GitHub answers 404 instead of 403 for some missing scopes)"
    }`;
  }
  if (status === 401) return `${what} failed (401 ${message}): the github-token input was rejected`;
  if (status === 422) {
    const errors = ((error as RequestErrorLike).response?.data as { errors?: { message?: string }[] })
      ?.errors;
    const details = (errors ?? []).map((e) => e.message).filter(Boolean);
    return `${what} failed (422 ${message}${details.length ? `: ${details.join("; ")}` : ""})`;
  }
  if (status !== undefined && status >= 500)
    return `${what} failed: GitHub answered ${status} (${message}) and kept failing after retries`;
  return `${what} failed: ${message}`;
}

/** A call whose failure is a warning saying what failed and the permission it needs; undefined then. */
export async function bestEffort<T>(
  logger: Logger,
  what: string,
  permission: string,
  call: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    logger.warn(explainApiError(error, what, permission));
    return undefined;
  }
}
