#!/bin/sh
# A scripted stand-in for a coding agent (it calls no model): it fixes the receipt's line price in
# packages/cart, working from the repository root like an agent given the whole monorepo.
set -eu
echo "agent: task is $(head -n 1 "$1")"
sed -i 's/formatPrice(item.price)}/formatPrice(item.price * item.quantity)}/' packages/cart/src/receipt.js
