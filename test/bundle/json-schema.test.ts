import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bundleJsonSchemaTexts } from "../../src/bundle/json-schema.js";
import { ROOT } from "../helpers.js";

describe("published bundle schemas", () => {
  const texts = bundleJsonSchemaTexts();

  it.each(Object.keys(texts))("schema/%s is generated from the zod schema (run npm run schema)", (file) => {
    expect(readFileSync(path.join(ROOT, "schema", file), "utf8")).toBe(texts[file]);
  });

  it("summary.json's schema names the fields readers use", () => {
    const schema = JSON.parse(texts["summary.schema.json"]!);
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(["schema", "run", "gate", "counts", "targets", "comparison", "index"]),
    );
    expect(schema.required).toEqual(expect.arrayContaining(["schema", "run", "gate", "counts"]));
  });
});
