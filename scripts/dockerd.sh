#!/usr/bin/env bash
# A Docker daemon of evalgate's own, for the Docker test lane (docs/environments.md, decision 0231):
# its own socket, data root and exec root, so it neither takes the machine's default Docker socket
# (where every other evalgate run would start preferring Docker over Podman) nor touches another
# daemon's state.
#
#   scripts/dockerd.sh start    starts it (or finds it running); prints DOCKER_HOST=unix://…
#   scripts/dockerd.sh stop     stops it, and the containerd it started
#   scripts/dockerd.sh status   exit 0 when it answers
#
# Needs root and dockerd (Debian: apt-get install docker.io). Where it cannot start, it says why
# on stderr and exits 1; the caller reports the lane as skipped.
#
# Docker sets the FORWARD policy to DROP when it switches IP forwarding on itself; that would cut
# off Podman's containers on the same machine. It is started with --ip-forward=false (forwarding is
# the machine's business) and the policy is checked after start: restored, and said, if it changed.
set -euo pipefail

NAME=${EVALGATE_DOCKERD_NAME:-evalgate-dockerd}
SOCK=/run/$NAME.sock
EXEC_ROOT=/run/$NAME
DATA_ROOT=${EVALGATE_DOCKERD_DATA:-/var/lib/$NAME}
PIDFILE=$EXEC_ROOT.pid
LOG=${EVALGATE_DOCKERD_LOG:-/tmp/$NAME.log}
export DOCKER_HOST=unix://$SOCK

client() {
  command -v docker >/dev/null 2>&1 || return 1
  timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

forward_policy() {
  command -v iptables >/dev/null 2>&1 || return 0
  iptables -w -S FORWARD 2>/dev/null | sed -n 's/^-P FORWARD //p'
}

start() {
  if client; then
    echo "DOCKER_HOST=$DOCKER_HOST"
    return 0
  fi
  [ "$(id -u)" = 0 ] || { echo "dockerd.sh: needs root to start dockerd" >&2; exit 1; }
  command -v dockerd >/dev/null 2>&1 || { echo "dockerd.sh: dockerd is not installed (apt-get install docker.io)" >&2; exit 1; }
  command -v docker >/dev/null 2>&1 || { echo "dockerd.sh: the docker client is not installed" >&2; exit 1; }
  local before
  before=$(forward_policy)
  mkdir -p "$DATA_ROOT" "$EXEC_ROOT"
  local driver
  for driver in overlay2 vfs; do
    rm -f "$SOCK"
    # setsid: the daemon outlives the shell that started it (a test run's hook).
    setsid dockerd \
      --host "unix://$SOCK" \
      --data-root "$DATA_ROOT" \
      --exec-root "$EXEC_ROOT" \
      --pidfile "$PIDFILE" \
      --storage-driver "$driver" \
      --ip-forward=false \
      --group docker \
      >"$LOG" 2>&1 </dev/null &
    local pid=$! i
    for i in $(seq 1 60); do
      client && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    if client; then
      local after
      after=$(forward_policy)
      if [ -n "$before" ] && [ "$after" != "$before" ]; then
        iptables -w -P FORWARD "$before"
        echo "dockerd.sh: dockerd changed the FORWARD policy to $after; restored $before" >&2
      fi
      echo "DOCKER_HOST=$DOCKER_HOST"
      return 0
    fi
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    echo "dockerd.sh: dockerd with --storage-driver $driver did not answer: $(grep -m1 -iE 'level=(fatal|error)' "$LOG" || tail -1 "$LOG")" >&2
  done
  exit 1
}

stop() {
  [ -f "$PIDFILE" ] || return 0
  local pid
  pid=$(cat "$PIDFILE")
  kill "$pid" 2>/dev/null || true
  local i
  for i in $(seq 1 40); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  rm -f "$PIDFILE" "$SOCK"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) client ;;
*)
  echo "usage: $0 start|stop|status" >&2
  exit 2
  ;;
esac
