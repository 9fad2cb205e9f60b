import assert from "node:assert/strict";
import { test } from "node:test";
import { formatPrice } from "../src/format.js";

test("formats whole dollars", () => {
  assert.equal(formatPrice(1200), "$12.00");
});

test("pads cents below ten", () => {
  assert.equal(formatPrice(1205), "$12.05");
});
