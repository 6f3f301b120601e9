#!/usr/bin/env bash
# pending_reasons.sh - a pending job's state_reason on a real slurmctld, on
# every release (v0.0.38 and the v0.0.40+ jobs/state path alike):
#
#   1. a pool of 5 nodes in the testbed's 3-node partition pends with
#      PartitionNodeLimit, a reason that cannot clear by itself: the launch
#      ends at once, INFRASTRUCTURE_ERROR (104) naming the reason, its job
#      cancelled, long before pending_timeout (600 s);
#   2. with job_launcher.fail_unschedulable=false the same launch waits:
#      `sluice status` shows the reason while it is PENDING, and a cancel
#      ends it ABORTED (9).
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only.  A
# missing testbed is a failure, never a skip.  Last line:
# "pending_reasons@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=2
NAME=pending_reasons
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
e2e_testbed_env
e2e_require_loopback
e2e_require_running

work=$(mktemp -d /tmp/sluice-e2e-pending.XXXXXX)
bgpids=()
cleanup() {
    for p in "${bgpids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
run="r$(date +%s)$$"
site="$work/site.yaml"
state="$work/state"
bash "$REPO/deploy/testbed/site-config.sh" >"$site"

# request ID: one pool of 5 nodes (the partition has 3).
request() {
    cat >"$work/$1.json" <<JSON
{"launch_id": "$1", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/true", "time_limit": 5,
 "pools": [{"name": "wide", "nodes": 5, "cpus_per_node": 1, "mem_per_node_mib": 100}]}
JSON
}
jobname() { printf 'sluice-%s-%s' "$SLUICE_TB_CLUSTER" "$(printf '%s' "$1" | sha256sum | cut -c1-8)"; }
live_jobs() { squeue -h -u "$SLUICE_TB_USER" -n "$(jobname "$1").1" -o '%i %T %r' 2>/dev/null || true; }
show() { sed 's/^/    | /' "$work/$1.out" >&2 || true; }

# ------------------------------------------------ 1. ends at once
id="limit-$run"
request "$id"
t0=$(date +%s)
rc=0
timeout 120 "$SLUICE" launch "$work/$id.json" --wait --config "$site" --state-dir "$state" \
    >"$work/$id.out" 2>&1 || rc=$?
secs=$(($(date +%s) - t0))
left=""
for _ in $(seq 1 20); do
    left=$(live_jobs "$id" | grep -v CANCELLED || true)
    [ -z "$left" ] && break
    sleep 0.5
done
if [ "$rc" -eq 104 ] && grep -q 'PartitionNodeLimit' "$work/$id.out" && [ "$secs" -lt 60 ] && [ -z "$left" ]; then
    pass "PartitionNodeLimit ends the launch at once: 104 after $secs s, job cancelled"
else
    fail "never-clearing reason (exit $rc want 104 naming PartitionNodeLimit, $secs s, left in queue: '$left')"; show "$id"
fi

# ------------------------------------- 2. switched off: waits, reason shown
id="wait-$run"
request "$id"
"$SLUICE" launch "$work/$id.json" --wait --config "$site" --state-dir "$state" \
    --set job_launcher.fail_unschedulable=false >"$work/$id.out" 2>&1 &
bg=$!
bgpids+=("$bg")
seen=""
for _ in $(seq 1 60); do
    st=$("$SLUICE" status --state-dir "$state" "$id" 2>/dev/null || true)
    if grep -q '^state      PENDING' <<<"$st" && grep -q 'PartitionNodeLimit' <<<"$st"; then
        seen=$st
        break
    fi
    sleep 0.5
done
# Still pending a while later: nothing ended it.
sleep 6
still=$("$SLUICE" status --state-dir "$state" "$id" 2>/dev/null | sed -n 's/^state      //p' || true)
"$SLUICE" cancel --state-dir "$state" "$id" >/dev/null 2>&1 || true
crc=0
wait "$bg" || crc=$?
if [ -n "$seen" ] && [ "$still" = PENDING ] && [ "$crc" -eq 9 ]; then
    pass "fail_unschedulable=false: PENDING with reason PartitionNodeLimit shown, waited, cancel ends 9"
else
    fail "switched off (reason shown: ${seen:+yes}${seen:-no}, state after 6 s '$still', exit $crc want 9)"; show "$id"
    [ -z "$seen" ] || printf '%s\n' "$seen" | sed 's/^/    status| /' >&2
fi

finish
