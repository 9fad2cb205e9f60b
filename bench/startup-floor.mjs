// The least `evalgate validate` of the quickstart must do: read its eval file as YAML and check it
// against the eval-file schema (zod), nothing else (no command parser, no git, no plan). bench/startup.mjs
// bundles this file (CommonJS, one chunk) and runs it through lib/cli/code-cache.js as bin/evalgate.js
// runs the CLI on Node 20: its time is the floor that no smaller bundle or lazier loading gets under.

import { evalFileSchema } from "../lib/config/schema/eval-file.js";
import { validateSalvaged } from "../lib/config/validate.js";
import { readYaml } from "../lib/config/yaml.js";
import { ProblemList } from "../lib/errors.js";

export async function main([file]) {
  const problems = new ProblemList();
  const source = await readYaml(file, file, problems);
  const parsed = source && validateSalvaged(evalFileSchema, source, problems);
  if (!parsed || problems.items.length > 0) throw new Error(`${file} does not validate`);
  process.stdout.write(`ok: ${parsed.tests.length} tests\n`);
  return 0;
}
