#!/usr/bin/env bash
# launch_hand_over.sh - `sluice launch REQUEST` without --wait or --server
# (issue 31) on the testbed:
#
#   1. with no supervisor on the store: exit 69, a message that says so and
#      how to run it, and nothing stored (no store is created);
#   2. with `sluice serve` running on the store: exit 0, the launch is
#      handed to it (the message names its pid) and that service submits it
#      and supervises it to DONE SUCCEEDED; the same command again is the
#      same launch (-o json: existed true), never a second job;
#   3. a request with secret values is refused (exit 69, "secrets:"), its
#      value in no output, and nothing is stored.
#
# The path is the same on every release (the service does the REST work):
# it runs on one.  A missing testbed is a failure, never a skip.  About 15 s.
# Last line: "launch_hand_over: <n> passed, <m> failed".
# e2e-releases: 22.05
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=3
NAME=launch_hand_over
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup hand_over
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

request() { # ID [EXTRA]: a one-pool request of /bin/true
    printf '{"launch_id": "%s", "site": "%s", "profile": "none", "command": "/bin/true", "time_limit": 5, "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 100}]%s}\n' \
        "$1" "$SLUICE_TB_CLUSTER" "${2:-}"
}
id="ho-$run"
request "$id" >"$work/req.json"

# 1. no supervisor, no store
rc=0
"$SLUICE" launch "$work/req.json" --config "$site" --state-dir "$state" >"$work/out1" 2>&1 || rc=$?
if [ "$rc" -eq 69 ] && grep -q 'no supervisor runs on the store' "$work/out1" &&
    grep -q -- '--wait' "$work/out1" && [ ! -e "$state/sluice.db" ]; then
    pass "no supervisor: exit 69, said plainly, nothing stored"
else
    fail "no supervisor: exit $rc, store $(ls "$state" 2>&1 | head -1): $(cat "$work/out1")"
fi

# 2. handed to a running service, which runs it to the end
e2e_serve_start alice
rc=0
"$SLUICE" launch "$work/req.json" --config "$site" --state-dir "$state" >"$work/out2" 2>&1 || rc=$?
state_now=""
for _ in $(seq 1 300); do
    state_now=$("$SLUICE" status "$id" --state-dir "$state" -o json 2>/dev/null |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["state"], d.get("result_code"))' 2>/dev/null || true)
    [ "$state_now" = "DONE 0" ] && break
    sleep 0.2
done
again=$("$SLUICE" launch "$work/req.json" --config "$site" --state-dir "$state" -o json 2>&1 || true)
jobs=$("$SLUICE" status "$id" --state-dir "$state" -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["job_ids"]))')
if [ "$rc" -eq 0 ] && grep -q "handed to the supervisor running on this store (pid $serve_pid)" "$work/out2" &&
    [ "$state_now" = "DONE 0" ] && grep -q '"existed":true' <<<"$again" && [ "$jobs" = 1 ]; then
    pass "handed to serve (pid $serve_pid): DONE SUCCEEDED, one job, the repeat is the same launch"
else
    fail "hand over: exit $rc, state '$state_now', jobs $jobs, repeat '$again': $(cat "$work/out2")"
fi

# 3. secret values stay with a process that supervises: refused
secret="hand-over-secret-$run"
request "$id-s" ", \"secrets\": {\"API_KEY\": \"$secret\"}" >"$work/req-s.json"
rc=0
"$SLUICE" launch "$work/req-s.json" --config "$site" --state-dir "$state" >"$work/out3" 2>&1 || rc=$?
stored=$("$SLUICE" status "$id-s" --state-dir "$state" >/dev/null 2>&1 && echo yes || echo no)
if [ "$rc" -eq 69 ] && grep -q 'secrets:' "$work/out3" && ! grep -q "$secret" "$work/out3" &&
    [ "$stored" = no ]; then
    pass "secret values: refused (exit 69), no value shown, nothing stored"
else
    fail "secrets: exit $rc, stored $stored: $(cat "$work/out3")"
fi
[ "$failed" -eq 0 ] || tail -20 "$work/serve.log" >&2
finish
