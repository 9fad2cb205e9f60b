/**
 * `workspace:`: the seed, the setup, protected paths and hidden verifiers.
 */
import { z } from "zod";
import { envNames, size, stringOrArgv } from "./values.js";

export const gitSeedSchema = z
  .strictObject({
    url: z.string().min(1).describe("A local path, file:// URL or https URL (never with credentials in it)"),
    ref: z
      .string()
      .min(1)
      .optional()
      .describe("Branch, tag, or full or short commit sha; a ref that does not exist is an error"),
    subdir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A folder of the repository: setup and the agent run there; the diff and scorers see the whole repository",
      ),
    token_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")
      .optional()
      .describe("The environment variable holding a token for an https URL; used for the fetch only"),
  })
  .describe("A git repository at a ref");

export const archiveSeedSchema = z
  .union([
    z.string().min(1),
    z.strictObject({
      path: z
        .string()
        .min(1)
        .describe("The archive (.zip, .tar, .tar.gz or .tgz), relative to the eval file"),
      max_size: size.optional().describe("Largest archive file accepted (default 100MB)"),
      max_unpacked_size: size
        .optional()
        .describe("Largest total of unpacked file data accepted (default 500MB)"),
      max_entries: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe("Most entries (files and folders) accepted (default 100000)"),
    }),
  ])
  .describe("A .zip, .tar, .tar.gz or .tgz file of this repository, checked before it is unpacked");

export const seedSchema = z
  .strictObject({
    path: z.string().min(1).optional().describe("A folder of this repository, copied"),
    git: gitSeedSchema.optional(),
    archive: archiveSeedSchema.optional(),
    empty: z.literal(true).optional().describe("Start from an empty repository"),
    exclude: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "With path: files or folders of the seed folder (relative to it) left out of the copy, such as the folder of the eval files: the agent never sees them",
      ),
  })
  .describe("Where the workspace comes from: exactly one of path, git, archive, empty");

export const setupSchema = z.strictObject({
  command: stringOrArgv
    .optional()
    .describe("Platform setup: runs before the start commit, never part of the graded diff"),
  instructions: z
    .string()
    .optional()
    .describe("Agent setup: given to the agent with the task; part of the diff"),
  env_passthrough: envNames.optional(),
  network: z
    .boolean()
    .optional()
    .describe(
      "Whether the setup command may reach the network where it runs under bubblewrap (default true: it installs dependencies)",
    ),
});

export const verifierSchema = z
  .strictObject({
    from: z
      .string()
      .min(1)
      .describe("A file or folder of this repository, relative to the eval file; the agent never sees it"),
    to: z
      .string()
      .min(1)
      .describe(
        "Where it goes in the workspace, relative to the repository root (also with a git seed's subdir), after the agent finished",
      ),
  })
  .describe("A hidden verifier: copied into the workspace only for the scorers");

export const workspaceSchema = z.strictObject({
  seed: seedSchema.optional(),
  setup: setupSchema.optional(),
  protected: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "Globs relative to the repository root, also with a git seed's subdir (\"test/**\"): restored from the start commit before scoring; a change by the agent marks the attempt tampered. A test's list replaces the file's",
    ),
  verifiers: z
    .array(verifierSchema)
    .optional()
    .describe(
      "Files copied into the workspace after the agent finished and protected paths were restored, fresh for every attempt. A test's list replaces the file's",
    ),
  setup_trees: z
    .enum(["protected", "writable"])
    .optional()
    .describe(
      "What setup built and git ignores (node_modules, .venv, build output): protected (default) puts back any change the agent made before scoring and marks the attempt tampered; writable lets the agent change it (it installs packages). A test's value replaces the file's",
    ),
  test_config: z
    .enum(["protected", "writable"])
    .optional()
    .describe(
      "Test configuration at any depth (package.json scripts and test-runner keys, .npmrc, conftest.py, pytest/jest/vitest/mocha/ava config files, tox.ini, setup.cfg [tool:pytest], pyproject.toml [tool.pytest]): protected (default) puts back any change before scoring and marks the attempt tampered; writable lets the agent change it. A test's value replaces the file's",
    ),
});

export type WorkspaceInput = z.infer<typeof workspaceSchema>;
export type SeedInput = z.infer<typeof seedSchema>;
