#!/bin/sh
# A scripted stand-in for a coding agent, for the quickstart: it reads the task from the prompt
# file evalgate gives it and edits the workspace (its current folder) with shell commands.
# It knows how to fix two of the quickstart's three bugs; for the third it makes a plausible but
# wrong change, so the demo shows a passing and a failing case side by side.
set -eu
prompt_file="$1"
echo "scripted-agent: task is $(head -n 1 "$prompt_file")"

if grep -qi "empty" "$prompt_file"; then
  echo "scripted-agent: giving reduce() a starting value in src/cart.js"
  sed -i 's/reduce((sum, line) => sum + line);/reduce((sum, line) => sum + line, 0);/' src/cart.js
elif grep -qi "discount" "$prompt_file"; then
  echo "scripted-agent: scaling the percentage in src/cart.js"
  sed -i 's/totalCents \* percent)/totalCents * (percent \/ 10))/' src/cart.js
elif grep -qi "cents" "$prompt_file"; then
  echo "scripted-agent: formatting with toFixed(2) in src/format.js"
  cat > src/format.js <<'JS'
/** "$12.05" for 1205 cents. */
export function formatPrice(cents) {
  return `$${(cents / 100).toFixed(2)}`;
}
JS
else
  echo "scripted-agent: I do not know this task" >&2
  exit 1
fi
echo "scripted-agent: done"
