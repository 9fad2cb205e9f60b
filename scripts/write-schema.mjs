// Writes schema/eval.schema.json and the bundle files' schemas from the zod schemas (run `npm run build` first).
import { writeFileSync } from "node:fs";
import { bundleJsonSchemaTexts } from "../lib/bundle/json-schema.js";
import { evalJsonSchemaText } from "../lib/config/json-schema.js";

writeFileSync(new URL("../schema/eval.schema.json", import.meta.url), evalJsonSchemaText());
console.log("wrote schema/eval.schema.json");
for (const [file, text] of Object.entries(bundleJsonSchemaTexts())) {
  writeFileSync(new URL(`../schema/${file}`, import.meta.url), text);
  console.log(`wrote schema/${file}`);
}
