/**
 * The JSON Schemas of the bundle's files, made from their zod schemas (bundle/wire-schema.ts) and
 * published in schema/ beside the eval file's, for tools that read bundles.
 */
import { z } from "zod";
import { caseSummarySchema, indexRowSchema, summarySchema } from "./wire-schema.js";

const FILES = [
  { file: "summary.schema.json", title: "evalgate bundle summary.json", schema: summarySchema },
  { file: "index-row.schema.json", title: "evalgate bundle index.jsonl row", schema: indexRowSchema },
  {
    file: "case-summary.schema.json",
    title: "evalgate bundle case summary.json",
    schema: caseSummarySchema,
  },
] as const;

/** schema/ file name → its text. */
export function bundleJsonSchemaTexts(): Record<string, string> {
  return Object.fromEntries(
    FILES.map(({ file, title, schema }) => {
      const json = z.toJSONSchema(schema, { target: "draft-2020-12", unrepresentable: "any" }) as Record<
        string,
        unknown
      >;
      const text = JSON.stringify(
        { $schema: json.$schema, $id: `https://evalgate.dev/schema/${file}`, title, ...json },
        null,
        2,
      );
      return [file, `${text}\n`];
    }),
  );
}
