#!/usr/bin/env bash
# ui_browser.sh - the status page (/ui) of a real `sluice serve` on the
# testbed, in Debian's headless Chromium driven through chromedriver's W3C
# WebDriver API by tests/browser/ui_check.py (standard library only):
# e2e-releases: 22.05
# (what it proves is sluice's own surface, the same on every release; the
# REST paths it crosses run in the suites registered on all three.)
#
#   1. /ui and its script carry the strict CSP, nosniff and no-referrer;
#   2. the page asks for the bearer token once (sessionStorage) and shows
#      the health: slurmrestd reachable, token expiry, poll cycle latency;
#   3. a two-pool hetjob launched through the API goes PENDING -> RUNNING ->
#      DONE live in the list (DOM changes recorded, no sleeps as checks);
#   4. opened while it runs, its stdout lines appear live, then its events,
#      components (job ids, nodes) and result;
#   5. the state, site and text filters narrow the list;
#   6. the console has no CSP violation (and an injected inline script is
#      refused and logged);
#   7. the page through socat (TCP on 127.0.0.1 -> the Unix socket) works
#      without a token.
#
# The service listens on 127.0.0.1 (port chosen by the kernel) and a Unix
# socket; the proxy on another loopback port.  UI_SCREENSHOT names where the
# screenshot goes (default: the suite's scratch directory, removed at the
# end).  Last line: "ui_browser: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=7
NAME=ui_browser
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

for tool in chromium chromedriver socat python3 curl; do
    command -v "$tool" >/dev/null || abort "$tool is missing (deploy/install-deps.sh installs it)"
done
e2e_launch_setup ui
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
sock="$work/api.sock"
e2e_serve_start ui --socket "$sock"

# The Unix socket on a loopback TCP port, as docs/ui.md tells operators to.
pport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
socat "TCP-LISTEN:$pport,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$sock" 2>"$work/socat.log" &
pids+=($!)
for _ in $(seq 1 50); do
    curl -s -o /dev/null "http://127.0.0.1:$pport/v1/healthz" && break
    sleep 0.1
done

shot=${UI_SCREENSHOT:-$work/ui-status.png}
out="$work/ui_check.out"
set +e
timeout 240 python3 "$REPO/tests/browser/ui_check.py" --base "http://127.0.0.1:$port" \
    --proxy "http://127.0.0.1:$pport" --token-file "$work/token" --cluster "$SLUICE_TB_CLUSTER" \
    --launch-id "ui-$run" --screenshot "$shot" --chromedriver-log "$work/chromedriver.log" \
    >"$out" 2>&1
rc=$?
set -e
while IFS= read -r line; do
    case "$line" in
        "ok: "*) pass "${line#ok: }" ;;
        "not ok: "*) fail "${line#not ok: }" ;;
        *) say "$line" ;;
    esac
done <"$out"
if [ "$rc" -ne 0 ] && [ "$passed" -eq "$TESTS" ]; then
    fail "ui_check.py exited $rc"
fi
if [ "$failed" -ne 0 ] || [ "$passed" -ne "$TESTS" ]; then
    tail -n 20 "$work/serve.log" | sed "s/^/$NAME: serve: /"
fi
finish
