#!/bin/sh
# A deterministic stand-in for a stochastic agent, for examples/flaky. It knows the fix for the
# quickstart's empty-cart bug but, like a real agent, does not always get there:
#   flaky   fixes the bug on odd attempt numbers only (attempts 1 and 3 of 4 pass)
#   crashy  crashes like an agent hitting an API error on attempt 2 (its own word is no evidence of
#           infrastructure trouble, so the attempt is graded and fails), and fixes the bug otherwise
# evalgate tells agents which attempt and retry they are in EVALGATE_ATTEMPT and EVALGATE_RETRY.
set -eu
mode="$1"
attempt="${EVALGATE_ATTEMPT:-1}"
retry="${EVALGATE_RETRY:-0}"
fix() { sed -i 's/reduce((sum, line) => sum + line);/reduce((sum, line) => sum + line, 0);/' src/cart.js; }

case "$mode" in
  flaky)
    if [ $((attempt % 2)) -eq 1 ]; then echo "attempt $attempt: fixing src/cart.js"; fix
    else echo "attempt $attempt: I think the bug is in the tests; leaving the code alone"; fi ;;
  crashy)
    if [ "$attempt" -eq 2 ] && [ "$retry" -eq 0 ]; then
      echo "error: 529 overloaded_error: the model API is overloaded, please retry" >&2
      exit 1
    fi
    echo "attempt $attempt (retry $retry): fixing src/cart.js"; fix ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
