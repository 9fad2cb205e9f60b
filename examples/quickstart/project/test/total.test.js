import assert from "node:assert/strict";
import { test } from "node:test";
import { total } from "../src/cart.js";

test("total adds price times quantity", () => {
  assert.equal(
    total([
      { price: 250, quantity: 2 },
      { price: 100, quantity: 1 },
    ]),
    600,
  );
});

test("total of an empty cart is 0", () => {
  assert.equal(total([]), 0);
});
