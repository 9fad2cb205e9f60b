// Writes schema/eval.schema.json from the zod schema (run `npm run build` first).
import { writeFileSync } from "node:fs";
import { evalJsonSchemaText } from "../lib/config/json-schema.js";

writeFileSync(new URL("../schema/eval.schema.json", import.meta.url), evalJsonSchemaText());
console.log("wrote schema/eval.schema.json");
