/** The JSON Schema of eval files, for editors (schema/eval.schema.json), made from the zod schema. */
import { z } from "zod";
import { evalFileSchema } from "./schema/eval-file.js";

export function evalJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(evalFileSchema, {
    target: "draft-2020-12",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    $id: "https://evalgate.dev/schema/eval.schema.json",
    title: "evalgate eval file",
    ...schema,
  };
}

export function evalJsonSchemaText(): string {
  return `${JSON.stringify(evalJsonSchema(), null, 2)}\n`;
}
