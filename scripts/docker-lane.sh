#!/usr/bin/env bash
# The Docker lane of the test suite (docs/environments.md, decision 0231): a focused set of the
# container tests run again with Docker as the engine, against a rootful daemon, including one run
# of the CLI as a normal user in the daemon's group (chownAfter).
#
#   - a daemon answering (DOCKER_HOST's, or the default socket's as on GitHub-hosted runners, where
#     the tests then run as the normal user `runner`): that daemon is used as it is.
#   - else, as root with dockerd installed: evalgate's own daemon is started (scripts/dockerd.sh, its
#     own socket and data root, never the machine's default socket) and stopped afterwards.
#   - else: "Docker lane skipped: <why>", exit 0; with EVALGATE_REQUIRE_DOCKER=1 the skip fails.
#
# Extra arguments go to vitest (a test file of the lane, -t NAME).
set -uo pipefail
cd "$(dirname "$0")/.."

FILES=(
  test/environment/container.test.ts
  test/environment/image.test.ts
  test/environment/cleanup.test.ts
  test/e2e/environment-run.test.ts
  test/e2e/environment-docker-user.test.ts
)

skip() {
  echo "Docker lane skipped: $1" >&2
  [ "${EVALGATE_REQUIRE_DOCKER:-}" = 1 ] && { echo "EVALGATE_REQUIRE_DOCKER=1: failing" >&2; exit 1; }
  exit 0
}

started=""
# The lane's images are made offline from busybox-static (test/environment/images.ts).
[ -x /bin/busybox ] || [ -x /usr/bin/busybox ] || skip "busybox-static is not installed (apt-get install busybox-static)"
if command -v docker >/dev/null 2>&1 && timeout 10 docker version >/dev/null 2>&1; then
  # A daemon that answers already (DOCKER_HOST's, or the default socket's, as on GitHub's runners).
  echo "Docker lane: the daemon at ${DOCKER_HOST:-the default socket}"
else
  command -v docker >/dev/null 2>&1 || skip "no docker client (apt-get install docker.io)"
  command -v dockerd >/dev/null 2>&1 || skip "no dockerd (apt-get install docker.io)"
  [ "$(id -u)" = 0 ] || skip "starting a Docker daemon needs root (or set DOCKER_HOST to a running one)"
  out=$(scripts/dockerd.sh start 2>/tmp/evalgate-dockerd-start.err) ||
    skip "dockerd did not start: $(tail -1 /tmp/evalgate-dockerd-start.err)"
  export "${out?}"
  started=1
  trap 'scripts/dockerd.sh stop' EXIT
  echo "Docker lane: evalgate's own dockerd at $DOCKER_HOST"
fi
echo "Docker lane: $(docker version --format 'client {{.Client.Version}}, daemon {{.Server.Version}}' 2>&1)"

export EVALGATE_CONTAINER=docker
# In the lane the engine must answer: a container test that skips would be a silent pass.
export EVALGATE_REQUIRE_CONTAINERS=1
if [ $# -gt 0 ]; then
  npx vitest run "$@"
else
  npx vitest run "${FILES[@]}"
fi
status=$?
[ -n "$started" ] && echo "Docker lane: stopping evalgate's dockerd"
exit $status
