/** Types of bench/git-env.mjs, for test/helpers.ts. */
export function gitEnv(name?: string, email?: string): Record<string, string>;
export const GIT_ENV: NodeJS.ProcessEnv;
export function sh(cmd: string, cwd: string): string;
