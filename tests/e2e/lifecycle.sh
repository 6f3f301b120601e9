#!/usr/bin/env bash
# lifecycle.sh - how launches end on the local testbed, driven through
# `sluice launch --wait` (issue 5, end-to-end part):
#
#   1. walltime: time_limit 1 with a `sleep 300` workload ends
#      INFRASTRUCTURE_ERROR (104) and the reason names TIMEOUT;
#   2. a workload killed by a signal ends EXECUTION_ERROR (1) and the reason
#      names the signal;
#   3. `sluice cancel` of a launch whose job is PENDING (reason Resources:
#      tb1, the only a100 node, is held by a blocker launch) ends ABORTED (9);
#   4. pending timeout: the same kind of launch with pending_timeout 10 is
#      cancelled by sluice and ends 104 with reason "pending timeout";
#   5. the blocker, cancelled in turn, ends ABORTED (9).
#
# Case 1 takes 60-100 s (MinJobAge and the default OverTimeLimit/KillWait of
# the testbed's slurm.conf); it runs in the background, on an h100 node,
# while the others run on tb1.  Each launch uses its own store, since a
# store has one supervisor at a time.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only.  A
# missing testbed is a failure, never a skip.  Last line:
# "lifecycle: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=5
NAME=lifecycle
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
e2e_testbed_env
e2e_require_loopback
e2e_require_running

work=$(mktemp -d /tmp/sluice-e2e-lifecycle.XXXXXX)
bgpids=()
declare -A bgpid=()
cleanup() {
    local p
    for p in "${bgpids[@]}"; do kill "$p" 2>/dev/null || true; done
    # Never leave a job holding tb1 behind for the next test.
    for s in "$work"/state-*; do
        [ -d "$s" ] || continue
        "$SLUICE" ls --state-dir "$s" 2>/dev/null | awk 'NR > 1 && $2 != "DONE" {print $1}' |
            while read -r id; do "$SLUICE" cancel --state-dir "$s" "$id" >/dev/null 2>&1 || true; done
    done
    for p in "${bgpids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
run="r$(date +%s)$$"
site="$work/site.yaml"
bash "$REPO/deploy/testbed/site-config.sh" >"$site"

# request NAME SERIES COMMAND ARGS_JSON TIME_LIMIT [EXTRA_JSON]: write
# $work/NAME.json, launch id NAME-$run, one pool of SERIES.  An a100 pool
# takes both GPUs of tb1, so a second one cannot start beside it.
request() {
    local gpus=""
    [ "$2" = a100 ] && gpus=', "gpus_per_node": 2'
    cat >"$work/$1.json" <<JSON
{"launch_id": "$1-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "$3", "args": $4, "time_limit": $5 ${6:+, $6},
 "pools": [{"name": "main", "gpu_series": "$2", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200 $gpus}]}
JSON
}
# launch NAME: `sluice launch --wait` of $work/NAME.json in the store
# $work/state-NAME; the exit code goes to $work/NAME.rc, the output to
# $work/NAME.out.
launch() {
    local rc=0
    timeout 300 "$SLUICE" launch "$work/$1.json" --wait --config "$site" \
        --state-dir "$work/state-$1" >"$work/$1.out" 2>&1 || rc=$?
    echo "$rc" >"$work/$1.rc"
}
launch_bg() {
    launch "$1" &
    bgpids+=($!)
    bgpid[$1]=$!
}
rc_of() { cat "$work/$1.rc" 2>/dev/null || echo none; }
# show NAME: the launch's output and its stored event log, for a failure.
show() {
    sed 's/^/    | /' "$work/$1.out" >&2 || true
    "$SLUICE" status --state-dir "$work/state-$1" "$1-$run" 2>&1 | sed 's/^/    # /' >&2 || true
}
# slurm_state NAME: the Slurm state of the launch's job ("STATE REASON"),
# read from the live queue by its marker job name (verification only).
slurm_state() {
    local jobname
    jobname=$("$SLUICE" status --state-dir "$work/state-$1" -o json "$1-$run" 2>/dev/null |
        jq -r '[.. | objects | .job_name? // empty] | first // empty' 2>/dev/null || true)
    [ -n "$jobname" ] || return 0
    squeue -h --name "$jobname" -u "$SLUICE_TB_USER" -o '%T %r' 2>/dev/null | head -n 1
}
# wait_state NAME REGEX SECONDS: wait until slurm_state matches.
wait_state() {
    local i st
    for ((i = 0; i < $3; i++)); do
        st=$(slurm_state "$1")
        if [[ "$st" =~ $2 ]]; then return 0; fi
        sleep 1
    done
    say "  $1: Slurm state '$st' never matched '$2' in $3 s"
    return 1
}
secs() { echo $(($(date +%s) - $1)); }

# ------------------------------------------------ 1. walltime (background)
request timeout h100 /bin/sleep '["300"]' 1
t_timeout=$(date +%s)
launch_bg timeout

# ---------------------------------------------------------------- 2. signal
request signal h100 /bin/bash '["-c", "echo about to die; kill -KILL $$"]' 5
t0=$(date +%s)
launch signal
if [ "$(rc_of signal)" = 1 ] && grep -q 'SIGKILL' "$work/signal.out"; then
    pass "a workload killed by SIGKILL ends EXECUTION_ERROR (1) naming the signal ($(secs "$t0") s)"
else
    fail "signal (exit $(rc_of signal), want 1 naming signal 9)"; show signal
fi

# ------------------------------------------- 3. cancel while PENDING (tb1)
request blocker a100 /bin/sleep '["120"]' 5
launch_bg blocker
if ! wait_state blocker '^RUNNING' 60; then
    show blocker
    abort "the blocker never ran on tb1"
fi
request pending a100 /bin/true '[]' 5
t0=$(date +%s)
launch_bg pending
if wait_state pending '^PENDING (Resources|Priority)' 60; then
    "$SLUICE" cancel --state-dir "$work/state-pending" "pending-$run" >/dev/null
    wait "${bgpid[pending]}" || true
    if [ "$(rc_of pending)" = 9 ]; then
        pass "cancel while PENDING (Resources) ends ABORTED (9) ($(secs "$t0") s)"
    else
        fail "cancel while pending (exit $(rc_of pending), want 9)"; show pending
    fi
else
    fail "the second a100 launch never pended behind the blocker"; show pending
fi

# ---------------------------------------------------- 4. pending timeout
request ptimeout a100 /bin/true '[]' 5 '"pending_timeout": 10'
t0=$(date +%s)
launch ptimeout
if [ "$(rc_of ptimeout)" = 104 ] && grep -q 'pending timeout' "$work/ptimeout.out"; then
    pass "pending_timeout 10 behind the blocker ends 104 'pending timeout' ($(secs "$t0") s)"
else
    fail "pending timeout (exit $(rc_of ptimeout), want 104 'pending timeout')"; show ptimeout
fi

# ---------------------------------------------------------- 5. blocker
"$SLUICE" cancel --state-dir "$work/state-blocker" "blocker-$run" >/dev/null || true
wait "${bgpid[blocker]}" || true
if [ "$(rc_of blocker)" = 9 ]; then
    pass "the running blocker, cancelled, ends ABORTED (9)"
else
    fail "blocker cancel (exit $(rc_of blocker), want 9)"; show blocker
fi

# ----------------------------------------------- 1. walltime (collected)
wait "${bgpid[timeout]}" || true
if [ "$(rc_of timeout)" = 104 ] && grep -q 'TIMEOUT' "$work/timeout.out"; then
    pass "time_limit 1 min with sleep 300 ends 104 with reason TIMEOUT ($(secs "$t_timeout") s)"
else
    fail "walltime (exit $(rc_of timeout), want 104 naming TIMEOUT)"; show timeout
fi

finish
