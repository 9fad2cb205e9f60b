// The hidden verifier, copied to packages/cart/test/ after the agent finished.
import assert from "node:assert/strict";
import { test } from "node:test";
import { receipt } from "../src/receipt.js";

test("a line's price is price × quantity", () => {
  assert.deepEqual(receipt([{ name: "tea", price: 250, quantity: 2 }]), ["2 × tea  $5.00"]);
});

test("a single item keeps its price", () => {
  assert.deepEqual(receipt([{ name: "cake", price: 1205, quantity: 1 }]), ["1 × cake  $12.05"]);
});
