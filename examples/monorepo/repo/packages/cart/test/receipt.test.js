import assert from "node:assert/strict";
import { test } from "node:test";
import { receipt } from "../src/receipt.js";

test("one line per item", () => {
  assert.equal(receipt([{ name: "tea", price: 250, quantity: 1 }]).length, 1);
});
