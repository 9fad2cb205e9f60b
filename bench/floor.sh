#!/bin/sh
# bench/floor.sh: the floor evalgate is measured against (bench/floors.mjs): the same workload as
# `evalgate run`, done by a shell script and nothing else.
#
#   floor.sh plain|isolated EVAL_DIR OUT TESTS REPEAT CONCURRENCY
#   env: FLOOR_AGENT, FLOOR_GRADER (programs, absolute), FLOOR_SETUP (a shell line, may be empty)
#
# Once: copy EVAL_DIR/project to a start tree, `git init` it, run the setup there (what git ignores
# stays, as evalgate's start does), commit the rest as the start commit.
# Per attempt, CONCURRENCY at a time: `cp -a` of the start tree, the agent (EVALGATE_TEST_ID and
# EVALGATE_ATTEMPT set, its own HOME and TMPDIR, nothing else of the environment but PATH),
# `git add -A && git diff --cached --binary` of what it changed, the grader, one result file
# OUT/results/<test>-<attempt>.json, then the attempt folder deleted.
#
# isolated: the setup, the agent and the grader each run under bubblewrap with the essentials of the
# arguments evalgate gives a contained process (src/sandbox/bwrap.ts): new namespaces of every kind
# (no network), its own hostname, the system folders and the PATH folders read-only, the eval folder
# read-only, the workspace, HOME and TMPDIR writable, a private /tmp, / read-only. Left out: the
# masks of hidden files (this eval has none) and the probing of program folders.
set -u

wrap() {
  # $1: the workspace (also the cwd), $2: HOME, $3: TMPDIR; the rest: the command.
  ws=$1 home=$2 tmp=$3
  shift 3
  if [ "$FLOOR_MODE" = plain ]; then
    (cd "$ws" && "$@")
    return
  fi
  set -- --die-with-parent --unshare-all --hostname evalgate-floor $FLOOR_BINDS \
    --ro-bind "$FLOOR_EVAL" "$FLOOR_EVAL" --bind "$ws" "$ws" --bind "$home" "$home" --bind "$tmp" "$tmp" \
    --remount-ro / --chdir "$ws" -- "$@"
  bwrap "$@"
}

# The read-only system and PATH folders, once per run (as evalgate's bwrapArgs lists them).
binds() {
  out=""
  for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc; do
    if [ -L "$d" ]; then out="$out --symlink $(readlink "$d") $d"
    elif [ -d "$d" ]; then out="$out --ro-bind $d $d"; fi
  done
  out="$out --proc /proc --dev /dev --tmpfs /tmp"
  old_ifs=$IFS
  IFS=:
  for d in $PATH; do
    case "$d" in /usr/* | /bin | /sbin | /etc/*) continue ;; esac
    [ -d "$d" ] && out="$out --ro-bind $(realpath "$d") $d"
  done
  IFS=$old_ifs
  echo "$out"
}

attempt() {
  id=$1 n=$2
  a="$FLOOR_WORK/a-$id-$n"
  mkdir -p "$a/home" "$a/tmp"
  cp -a "$FLOOR_WORK/start" "$a/ws"
  wrap "$a/ws" "$a/home" "$a/tmp" env -i PATH="$PATH" HOME="$a/home" TMPDIR="$a/tmp" \
    EVALGATE_TEST_ID="$id" EVALGATE_ATTEMPT="$n" "$FLOOR_AGENT" >"$a/agent.log" 2>&1
  agent=$?
  (cd "$a/ws" && git add -A && git diff --cached --binary HEAD) >"$a/diff.patch"
  said=$(wrap "$a/ws" "$a/home" "$a/tmp" env -i PATH="$PATH" HOME="$a/home" TMPDIR="$a/tmp" \
    "$FLOOR_GRADER" 2>"$a/grader.log")
  grader=$?
  status=failed
  [ "$agent" = 0 ] && [ "$grader" = 0 ] && status=passed
  answer=$(head -c 200 "$a/ws/answer.txt" 2>/dev/null | tr -d '"\\\n')
  said=$(printf '%s' "$said" | head -c 200 | tr -d '"\\\n')
  printf '{"test":"%s","attempt":%s,"agent_exit":%s,"grader_exit":%s,"status":"%s","answer":"%s","grader_said":"%s","diff_bytes":%s}\n' \
    "$id" "$n" "$agent" "$grader" "$status" "$answer" "$said" "$(wc -c <"$a/diff.patch")" \
    >"$FLOOR_OUT/results/$id-$n.json"
  rm -rf "$a"
}

if [ "$1" = attempt ]; then
  attempt "$2" "$3"
  exit 0
fi

FLOOR_MODE=$1 FLOOR_EVAL=$2 FLOOR_OUT=$3
tests=$4 repeat=$5 concurrency=$6
FLOOR_WORK="$FLOOR_OUT/work"
FLOOR_BINDS=""
[ "$FLOOR_MODE" = isolated ] && FLOOR_BINDS=$(binds)
export FLOOR_MODE FLOOR_EVAL FLOOR_OUT FLOOR_WORK FLOOR_BINDS
rm -rf "$FLOOR_OUT"
mkdir -p "$FLOOR_WORK/setup-home" "$FLOOR_WORK/setup-tmp" "$FLOOR_OUT/results"

start="$FLOOR_WORK/start"
cp -a "$FLOOR_EVAL/project" "$start" || exit 2
(cd "$start" && git init -q -b main .) || exit 2
if [ -n "${FLOOR_SETUP:-}" ]; then
  wrap "$start" "$FLOOR_WORK/setup-home" "$FLOOR_WORK/setup-tmp" env -i PATH="$PATH" \
    HOME="$FLOOR_WORK/setup-home" TMPDIR="$FLOOR_WORK/setup-tmp" sh -c "$FLOOR_SETUP" \
    >"$FLOOR_OUT/setup.log" 2>&1 || { echo "floor: setup failed (see $FLOOR_OUT/setup.log)" >&2; exit 2; }
fi
(cd "$start" && git add -A && git commit -qm start) || exit 2

i=0
while [ "$i" -lt "$tests" ]; do
  k=1
  while [ "$k" -le "$repeat" ]; do
    echo "t$i $k"
    k=$((k + 1))
  done
  i=$((i + 1))
done | xargs -P "$concurrency" -n 2 "$0" attempt
rm -rf "$FLOOR_WORK"
