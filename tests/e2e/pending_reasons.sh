#!/usr/bin/env bash
# pending_reasons.sh - a pending job's state_reason on a real slurmctld, on
# every release (v0.0.38 and the v0.0.40+ jobs/state path alike):
#
#   1. a pool of 5 nodes in the testbed's 3-node partition can never run.
#      22.05 and 26.05 leave it PENDING with PartitionNodeLimit, a reason
#      that cannot clear by itself: sluice cancels it and the launch ends at
#      once, INFRASTRUCTURE_ERROR (104) naming the reason, long before
#      pending_timeout (600 s).  24.11 fails such a job itself (FAILED,
#      BadConstraints, never started): that is 104 naming the reason too,
#      not the workload's EXECUTION_ERROR;
#   2. with job_launcher.fail_unschedulable=false the same launch waits
#      where Slurm leaves it pending: `sluice status` shows the reason while
#      it is PENDING, and a cancel ends it ABORTED (9).  Where Slurm fails
#      the job itself (24.11) it still ends 104: the switch only says
#      whether sluice cancels.
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

e2e_launch_setup pending
bgpids=()
cleanup() {
    for p in "${bgpids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

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
# What this release does with such a job: pend (PartitionNodeLimit) or fail
# it at once (BadConstraints).
reason=$(grep -Eo 'PartitionNodeLimit|BadConstraints' "$work/$id.out" | head -n 1 || true)
if [ "$rc" -eq 104 ] && [ -n "$reason" ] && [ "$secs" -lt 60 ] && [ -z "$left" ]; then
    pass "$reason ends the launch at once: 104 after $secs s, no job left in the queue"
else
    fail "never-clearing reason (exit $rc want 104 naming PartitionNodeLimit or BadConstraints, $secs s, left in queue: '$left')"; show "$id"
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
if [ "$reason" = BadConstraints ]; then
    # Slurm ended the job itself: nothing waits, whatever the switch says.
    if [ "$crc" -eq 104 ] && grep -q 'BadConstraints' "$work/$id.out"; then
        pass "fail_unschedulable=false: slurmctld failed the job itself (BadConstraints), 104 all the same"
    else
        fail "switched off on a release that fails the job (exit $crc want 104 naming BadConstraints)"; show "$id"
    fi
elif [ -n "$seen" ] && [ "$still" = PENDING ] && [ "$crc" -eq 9 ]; then
    pass "fail_unschedulable=false: PENDING with reason PartitionNodeLimit shown, waited, cancel ends 9"
else
    fail "switched off (reason shown: ${seen:+yes}${seen:-no}, state after 6 s '$still', exit $crc want 9)"; show "$id"
    [ -z "$seen" ] || printf '%s\n' "$seen" | sed 's/^/    status| /' >&2
fi

finish
