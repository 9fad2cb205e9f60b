import assert from "node:assert/strict";
import { test } from "node:test";
import { formatPrice } from "../src/index.js";

test("formats cents as dollars", () => {
  assert.equal(formatPrice(1205), "$12.05");
});
