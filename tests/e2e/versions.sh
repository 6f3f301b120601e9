#!/usr/bin/env bash
# versions.sh - every REST adapter the release serves but does not prefer,
# live: the release's newest version is what every other suite negotiates,
# so this suite pins the older ones (`rest.api_version`) and launches through
# each.  24.11 serves v0.0.40-42 (v0.0.42 is negotiated elsewhere), 26.05
# serves v0.0.42-45 (v0.0.45 elsewhere, v0.0.42 on 24.11): here 24.11 pins
# v0.0.40 and v0.0.41, 26.05 pins v0.0.43 and v0.0.44.  v0.0.38 is 22.05's
# only version and every 22.05 suite runs on it.
# e2e-releases: 24.11 26.05
#
# For each pinned version V (every line names V):
#   1. `sluice check` negotiates V and nothing else;
#   2. a two-pool hetjob (a100 + h100) ends SUCCEEDED (0) and each pool
#      learns the other's host;
#   3. a workload exit of 3 ends EXECUTION_ERROR (1) and a workload exit of
#      102 keeps 102 as the result code;
#   4. `sluice cancel` of a running launch ends ABORTED (9);
#   5. the accounting read: the supervisor is killed while its job runs, the
#      job ends and leaves slurmctld (MinJobAge 5 on this suite's instance,
#      checked through scontrol), then the same request resumes the launch
#      and it ends SUCCEEDED from slurmdbd's record (an `observed` event
#      whose source is `accounting`);
#   6. the batched poll costs one slurmctld RPC per cycle (bench_poll pinned
#      to V, slurmctld's own diag counters around 3 cycles of 100 jobs).
#
# It brings up its own instance of the release's testbed (MinJobAge 5, its
# own ports and directory, about 30 s) and purges it at the end, so the
# main testbed keeps its settings.  Runs as root on 127.0.0.1 only.  A
# testbed that does not come up is a failure.  SLUICE_E2E_VERSIONS="V ..."
# pins other versions.  Last line: "versions@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
case "${SLUICE_TB_RELEASE:-22.05}" in
    24.11) versions="v0.0.40 v0.0.41" port_base=16930 ;;
    26.05) versions="v0.0.43 v0.0.44" port_base=16950 ;;
    *) versions="" port_base=0 ;;
esac
versions=${SLUICE_E2E_VERSIONS:-$versions}
read -r -a pinned <<<"$versions"
TESTS=$((7 * ${#pinned[@]}))
[ "$TESTS" -gt 0 ] || TESTS=1
NAME=versions
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

[ "${#pinned[@]}" -gt 0 ] || abort "release $SLUICE_TB_RELEASE has no older REST version to pin"
SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
BUILD=${SLUICE_BUILD_DIR:-$REPO/build}
BENCH=$BUILD/bench/bench_poll
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
[ -x "$BENCH" ] || abort "no $BENCH (build with SLUICE_BUILD_BENCH=ON)"
export SLUICE_TB_MIN_JOB_AGE=5
e2e_own_testbed versions "${SLUICE_E2E_VERSIONS_DIR:-/var/tmp/sluice-tb-versions}" \
    "${SLUICE_E2E_VERSIONS_PORT_BASE:-$port_base}"

# request V ID COMMAND ARGS_JSON: one h100 pool.
request() {
    cat >"$work/$1-$2.json" <<JSON
{"launch_id": "$2", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "$3", "args": $4, "time_limit": 5,
 "pools": [{"name": "main", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 100}]}
JSON
}
# launch V ID: `sluice launch --wait` pinned to V; the exit code in $work/V-ID.rc.
launch() {
    local rc=0
    timeout 300 "$SLUICE" launch "$work/$1-$2.json" --wait --config "$site" \
        --set "rest.api_version=$1" --state-dir "$work/state-$1-$2" \
        >"$work/$1-$2.out" 2>&1 || rc=$?
    echo "$rc" >"$work/$1-$2.rc"
}
rc_of() { cat "$work/$1-$2.rc" 2>/dev/null || echo none; }
show() { sed 's/^/    | /' "$work/$1-$2.out" >&2 || true; }
state_of() {
    "$SLUICE" status --state-dir "$work/state-$1-$2" "$2" 2>/dev/null | sed -n 's/^state  *//p'
}
wait_state() {   # wait_state V ID STATE: up to 60 s
    local i
    for ((i = 0; i < 120; i++)); do
        [ "$(state_of "$1" "$2")" = "$3" ] && return 0
        sleep 0.5
    done
    return 1
}
job_of() {   # job_of V ID: the launch's Slurm job id
    "$SLUICE" status --state-dir "$work/state-$1-$2" "$2" -o json 2>/dev/null |
        jq -r '[.. | objects | .job_ids? // empty | .[]] | first // empty'
}
in_slurmctld() { scontrol -o show job "$1" >/dev/null 2>&1; }

for v in "${pinned[@]}"; do
    vrun="$run-${v//./}"
    # ------------------------------------------------------------ 1. check
    rc=0
    "$SLUICE" check --config "$site" --set "rest.api_version=$v" >"$work/$v-check.out" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ] && grep -Eq "^version +ok +${v//./\\.}, Slurm $SLUICE_TB_RELEASE" "$work/$v-check.out"; then
        pass "$v: sluice check negotiates it"
    else
        fail "$v: sluice check (exit $rc)"; sed 's/^/    | /' "$work/$v-check.out" >&2
    fi

    # -------------------------- 2-5. every launch of V at once, in the background
    cat >"$work/$v-het-$vrun.json" <<JSON
{"launch_id": "het-$vrun", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "time_limit": 5,
 "pools": [
  {"name": "trainer", "gpu_series": "a100", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 100,
   "args": ["-c", "echo trainer=\$SLURMD_NODENAME sees rollout=\$SLUICE_POOL_ROLLOUT_HOST"]},
  {"name": "rollout", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 100,
   "args": ["-c", "echo rollout=\$SLURMD_NODENAME sees trainer=\$SLUICE_POOL_TRAINER_HOST"]}]}
JSON
    request "$v" "exit3-$vrun" /bin/sh '["-c", "exit 3"]'
    request "$v" "exit102-$vrun" /bin/sh '["-c", "exit 102"]'
    request "$v" "cancel-$vrun" /bin/sleep '["120"]'
    request "$v" "acct-$vrun" /bin/sleep '["4"]'
    bg=()
    for id in "het-$vrun" "exit3-$vrun" "exit102-$vrun" "cancel-$vrun" "acct-$vrun"; do
        launch "$v" "$id" &
        bg+=($!)
    done

    # 5 (first half): kill the supervisor once its job runs.
    acct_job=""
    if wait_state "$v" "acct-$vrun" RUNNING; then
        acct_job=$(job_of "$v" "acct-$vrun")
        say "$v: killing the supervisor of acct-$vrun (job $acct_job) on purpose"
        # sluice itself and the timeout above it (both name the request).
        pkill -KILL -f -- "launch $work/$v-acct-$vrun.json" 2>/dev/null || true
    fi
    # 4: cancel from another process once running.
    if wait_state "$v" "cancel-$vrun" RUNNING; then
        "$SLUICE" cancel "cancel-$vrun" --state-dir "$work/state-$v-cancel-$vrun" >"$work/$v-cancel.out" 2>&1 || true
    fi
    for p in "${bg[@]}"; do wait "$p" 2>/dev/null || true; done

    out=$(cat "$work/state-$v-het-$vrun/artifacts/het-$vrun/stdout.log" 2>/dev/null || true)
    if [ "$(rc_of "$v" "het-$vrun")" = 0 ] && grep -q "^trainer=tb1 sees rollout=tb[23]$" <<<"$out" &&
        grep -q "^rollout=tb[23] sees trainer=tb1$" <<<"$out"; then
        pass "$v: two-pool hetjob SUCCEEDED, each pool learned the other's host"
    else
        fail "$v: hetjob (exit $(rc_of "$v" "het-$vrun"), output '$out')"; show "$v" "het-$vrun"
    fi
    if [ "$(rc_of "$v" "exit3-$vrun")" = 1 ] && grep -q 'EXECUTION_ERROR' "$work/$v-exit3-$vrun.out" &&
        [ "$(rc_of "$v" "exit102-$vrun")" = 102 ]; then
        pass "$v: exit 3 ends EXECUTION_ERROR (1), exit 102 keeps 102"
    else
        fail "$v: exit codes (3 gave $(rc_of "$v" "exit3-$vrun") want 1, 102 gave $(rc_of "$v" "exit102-$vrun"))"
        show "$v" "exit3-$vrun"; show "$v" "exit102-$vrun"
    fi
    if [ "$(rc_of "$v" "cancel-$vrun")" = 9 ] && grep -q 'ABORTED' "$work/$v-cancel-$vrun.out"; then
        pass "$v: sluice cancel of a running launch ends ABORTED (9)"
    else
        fail "$v: cancel (exit $(rc_of "$v" "cancel-$vrun") want 9)"; show "$v" "cancel-$vrun"
        sed 's/^/    cancel| /' "$work/$v-cancel.out" >&2 || true
    fi

    # 5 (second half): the job leaves slurmctld, then the launch resumes.
    left=0
    if [[ "$acct_job" =~ ^[0-9]+$ ]]; then
        for ((i = 0; i < 90; i++)); do
            in_slurmctld "$acct_job" || { left=1; break; }
            sleep 1
        done
    fi
    if [ "$left" -eq 1 ]; then
        launch "$v" "acct-$vrun"
        src=$("$SLUICE" status --state-dir "$work/state-$v-acct-$vrun" "acct-$vrun" -o json 2>/dev/null |
            jq -r '[.. | objects | select(.name? == "observed") | .context.source? // empty] | join(",")' || true)
        if [ "$(rc_of "$v" "acct-$vrun")" = 0 ] && grep -q accounting <<<"$src" &&
            grep -q 'SUCCEEDED' "$work/$v-acct-$vrun.out"; then
            pass "$v: job $acct_job left slurmctld while unsupervised; resumed from accounting, SUCCEEDED"
        else
            fail "$v: accounting resume (exit $(rc_of "$v" "acct-$vrun") want 0, observed sources '$src')"
            show "$v" "acct-$vrun"
        fi
    else
        fail "$v: the accounting case never had its job leave slurmctld (job '$acct_job')"
        show "$v" "acct-$vrun"
    fi
    if [ "$(e2e_count_jobs "acct-$vrun")" = 1 ] && [ "$(e2e_count_jobs "het-$vrun")" = 1 ]; then
        pass "$v: exactly one Slurm job per launch (resumed launch included)"
    else
        fail "$v: job counts (acct $(e2e_count_jobs "acct-$vrun"), het $(e2e_count_jobs "het-$vrun"), want 1 each)"
    fi

    # ------------------------------------------------------ 6. batched poll
    rc=0
    SLUICE_BENCH_API_VERSION=$v timeout 300 "$BENCH" --sizes 100 --cycles 3 --no-baseline \
        >"$work/$v-poll.out" 2>&1 || rc=$?
    line=$(grep -E '^poll n=100 +sluice ' "$work/$v-poll.out" || true)
    deltas=$(grep -B1 -E '^poll n=100 +sluice ' "$work/$v-poll.out" | head -n 1)
    if [ "$rc" -eq 0 ] && grep -Eq 'rpcs/cycle= +1\.00 ' <<<"$line" &&
        grep -q 'REQUEST_JOB_STATE=3' <<<"$deltas"; then
        pass "$v: 100 tracked jobs, 1 slurmctld RPC per poll cycle (REQUEST_JOB_STATE)"
    else
        fail "$v: batched poll (exit $rc): '${line:-no measure}' / '$deltas'"
        sed 's/^/    | /' "$work/$v-poll.out" >&2
    fi
done
finish
