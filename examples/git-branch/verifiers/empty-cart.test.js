// The hidden verifier: copied into the workspace after the agent finished, so the agent never
// sees it and cannot edit it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { total } from "../src/cart.js";

test("an empty cart totals 0", () => {
  assert.equal(total([]), 0);
});

test("a full cart still totals price times quantity", () => {
  assert.equal(total([{ price: 250, quantity: 2 }]), 500);
});
