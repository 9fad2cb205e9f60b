import assert from "node:assert/strict";
import { test } from "node:test";
import { applyDiscount } from "../src/cart.js";

test("a 10% discount takes a tenth off", () => {
  assert.equal(applyDiscount(1000, 10), 900);
});

test("a 0% discount changes nothing", () => {
  assert.equal(applyDiscount(1234, 0), 1234);
});

test("discounts round to whole cents", () => {
  assert.equal(applyDiscount(999, 15), 849);
});
