import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { evalJsonSchemaText } from "../../src/config/json-schema.js";
import { VERSION } from "../../src/version.js";
import { ROOT } from "../helpers.js";

describe("published files", () => {
  it("schema/eval.schema.json is generated from the zod schema (run npm run schema)", () => {
    expect(readFileSync(path.join(ROOT, "schema/eval.schema.json"), "utf8")).toBe(evalJsonSchemaText());
  });

  it("the schema lists the keys users type", () => {
    const schema = JSON.parse(evalJsonSchemaText());
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(["targets", "tests", "gate", "workspace", "repeat"]),
    );
    expect(schema.additionalProperties).toBe(false);
  });

  it("VERSION matches package.json", () => {
    expect(VERSION).toBe(JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).version);
  });
});
