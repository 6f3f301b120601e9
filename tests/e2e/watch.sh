#!/usr/bin/env bash
# watch.sh - list, then watch, on a real `sluice serve` over the testbed
# while launches change state (issue 15):
# e2e-releases: 24.11
# (what it proves is sluice's own surface, the same on every release; the
# REST paths it crosses run in the suites registered on all three.)
#
#   1. six short launches (two waves, more than the testbed's nodes, so
#      some wait PENDING) all end DONE SUCCEEDED;
#   2. at five moments while they change, GET /v1/launches (its
#      resource_version) then GET /v1/events?after=<rv>: per launch, the
#      listed state is its log's state at rv, and the watched events are
#      exactly its events after rv (none missed, none repeated) and fold to
#      DONE;
#   3. per-launch streams GET /v1/launches/{id}/events?after=<GET's
#      resource_version> (= its ETag), dropped after the first events and
#      resumed with Last-Event-ID: exactly the events after the GET up to
#      DONE, then the service ends the stream;
#   4. a filtered ?since=now&state=DONE&launch_id= watch, If-None-Match ->
#      304, Location on 201, 400 naming bad or unknown parameters, 404 for
#      an unknown launch's stream.
#
# The checks live in lib/watch_check.py (Python standard library).  Runs
# against the testbed's slurmrestd on 127.0.0.1 only; the service listens on
# 127.0.0.1 (a port the kernel chooses).  A missing testbed is a failure,
# never a skip.  About 30 s.  Last line: "watch: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=4
NAME=watch
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup watch
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
e2e_serve_start alice

out=$(timeout 150 python3 "$HERE/lib/watch_check.py" "http://127.0.0.1:$port" "$tok" \
    "$SLUICE_TB_CLUSTER" "$run" 2>&1) || true
printf '%s\n' "$out" | grep -v '^RESULT ' >&2 || true
check() { # NAME: the RESULT line of that check as pass/fail
    local line
    line=$(grep "^RESULT [a-z]* $1 " <<<"$out" | head -1)
    case "$line" in
        "RESULT ok $1 "*) pass "$1: ${line#RESULT ok $1 }" ;;
        "RESULT bad $1 "*) fail "$1: ${line#RESULT bad $1 }" ;;
        *) fail "$1: no result (the checker stopped early)" ;;
    esac
}
check launches
check list-then-watch
check launch-stream
check http
[ "$failed" -eq 0 ] || tail -20 "$work/serve.log" >&2
finish
