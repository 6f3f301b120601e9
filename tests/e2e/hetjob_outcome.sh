#!/usr/bin/env bash
# hetjob_outcome.sh - the result of a hetjob whose pool fails does not
# depend on the race between the batch script and slurmctld (issue: on 25.11
# and 26.05 component 0 sometimes reads CANCELLED after the script stopped
# the other pool, which was once reported INFRASTRUCTURE_ERROR 104).
#
# Each case runs SLUICE_E2E_HET_RUNS times (default 10; CI's count, 20 with
# test-all.sh --full) through `sluice launch --wait`, and every run must give
# the same answer:
#   1. pool "rollout" exits 3 while "trainer" sleeps: EXECUTION_ERROR (1),
#      the reason names rollout;
#   2. pool "rollout" exits 102 while "trainer" sleeps: result 102, the
#      reason names rollout.
# Prints what each component read (state, exit) so the race can be seen.
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only.  A
# missing testbed is a failure, never a skip.  Last line:
# "hetjob_outcome@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=2
NAME=hetjob_outcome
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

RUNS=${SLUICE_E2E_HET_RUNS:-10}
# How long the healthy pool runs before the script stops it (the race is
# between its own end and the stop).
TRAINER_SLEEP=${SLUICE_E2E_HET_TRAINER_SLEEP:-2}
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || abort "SLUICE_E2E_HET_RUNS must be a positive number: '$RUNS'"
e2e_launch_setup het
trap 'rm -rf "$work"' EXIT

# one CASE CODE I: one launch where rollout exits CODE; prints
# "<exit of sluice> <what the component reads>".
one() {
    local id="$1-$3-$run" rc=0 seen
    cat >"$work/$id.json" <<JSON
{"launch_id": "$id", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "time_limit": 5,
 "pools": [
  {"name": "trainer", "gpu_series": "a100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200, "args": ["-c", "sleep $TRAINER_SLEEP; echo trainer done"]},
  {"name": "rollout", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200, "args": ["-c", "exit $2"]}]}
JSON
    timeout 300 "$SLUICE" launch "$work/$id.json" --wait --config "$site" --state-dir "$state" \
        >"$work/$id.out" 2>&1 || rc=$?
    # The DONE line carries the final reason; the Slurm state it read is in it.
    seen=$(grep -o 'slurm=[A-Z_]*' "$work/$id.out" | tail -n 1)
    grep -q 'rollout' <(grep 'DONE' "$work/$id.out") || rc="$rc-unnamed"
    echo "$rc ${seen:-slurm=?}"
}

# repeat CASE CODE WANT: RUNS launches, each must exit WANT naming rollout.
repeat() {
    local i got wrong=0 tally=""
    for ((i = 1; i <= RUNS; i++)); do
        got=$(one "$1" "$2" "$i")
        tally+=" ${got// /:}"
        if [ "${got%% *}" != "$3" ]; then
            wrong=$((wrong + 1))
            say "run $i of case $1: exit ${got%% *}, want $3 naming rollout"
            sed 's/^/    | /' "$work/$1-$i-$run.out" >&2
        fi
    done
    if [ "$wrong" -eq 0 ]; then
        pass "$1: $RUNS of $RUNS runs ended $3 naming rollout (exit:state read${tally})"
    else
        fail "$1: $wrong of $RUNS runs wrong (exit:state read${tally})"
    fi
}

repeat exit3 3 1
repeat exit102 102 102
finish
