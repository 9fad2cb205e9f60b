#!/bin/sh
# A scripted stand-in for a coding agent, for the quickstart: it reads the task from the prompt
# file evalgate gives it and edits the workspace (its current folder) with shell commands.
# It knows how to fix two of the quickstart's three bugs; for the third it makes a plausible but
# wrong change, so the demo shows a passing and a failing case side by side.
#
# It also follows evalgate's output contract for custom agents (docs/agents.md): it writes what it
# used to the file given as its second argument ({OUTPUT_FILE}). It calls no model, so its cost is
# 0; as "tokens" it reports the size of what it read and wrote in 4-byte units, the rough measure a
# model would have used, so the demo shows the usage columns filled in.
set -eu
prompt_file="$1"
output_file="${2:-${EVALGATE_OUTPUT_FILE:-/dev/null}}"
echo "scripted-agent: task is $(head -n 1 "$prompt_file")"

if grep -qi "empty" "$prompt_file"; then
  file=src/cart.js
  echo "scripted-agent: giving reduce() a starting value in $file"
  sed -i 's/reduce((sum, line) => sum + line);/reduce((sum, line) => sum + line, 0);/' "$file"
elif grep -qi "discount" "$prompt_file"; then
  file=src/cart.js
  echo "scripted-agent: scaling the percentage in $file"
  sed -i 's/totalCents \* percent)/totalCents * (percent \/ 10))/' "$file"
elif grep -qi "cents" "$prompt_file"; then
  file=src/format.js
  echo "scripted-agent: formatting with toFixed(2) in $file"
  cat > "$file" <<'JS'
/** "$12.05" for 1205 cents. */
export function formatPrice(cents) {
  return `$${(cents / 100).toFixed(2)}`;
}
JS
else
  echo "scripted-agent: I do not know this task" >&2
  printf '{"error": "scripted-agent does not know this task"}\n' > "$output_file"
  exit 1
fi

read_bytes=$(( $(wc -c < "$prompt_file") + $(wc -c < "$file") ))
written_bytes=$(wc -c < "$file")
cat > "$output_file" <<JSON
{
  "usage": {
    "input_tokens": $(( (read_bytes + 3) / 4 )),
    "output_tokens": $(( (written_bytes + 3) / 4 )),
    "cached_tokens": 0,
    "turns": 1,
    "tool_calls": 1,
    "model": "scripted"
  },
  "cost_usd": 0,
  "agent_version": "1.0.0"
}
JSON
echo "scripted-agent: done"
