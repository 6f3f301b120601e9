#!/usr/bin/env bash
# launch_cli.sh - `sluice launch --wait` end to end on the local testbed:
# render once, submit exactly once through slurmrestd, supervise, map the
# result, archive the logs.  Each case checks the exit code (the result
# code) and what the workload reported:
#
#   1. a two-pool hetjob (a100 + h100 series) succeeds, each pool learns the
#      other's host, and re-running the same request resumes (no 2nd job)
#      and prints the launch's final line again;
#   2. a hetjob whose rollout pool exits 3 ends EXECUTION_ERROR (1) and the
#      reason names the pool;
#   3. a workload exit of 102 is kept as the result code; with -o json every
#      line is an object, result_code null until DONE (then 102) and
#      elapsed_s to the millisecond;
#   4. `sluice cancel ID --state-dir D` (the operand first) from another
#      process while the job runs ends ABORTED (9);
#   5. a 2-node pool: every rank gets its rank, the node count and the
#      master address and port;
#   6. a per-launch secret reaches the workload, and its value is found
#      nowhere: not in the script, the store, the testbed's state, logs and
#      accounting database;
#   7. `sluice logs -f` follows a running job's output from the shared
#      storage and returns once the launch has ended.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only.  A
# missing testbed is a failure, never a skip.  Last line:
# "launch_cli: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=7
NAME=launch_cli
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup launch
trap 'rm -rf "$work"' EXIT

# launch NAME [ARG...]: run `sluice launch --wait` on $work/NAME.json; sets
# $rc and leaves the output in $work/NAME.out (stderr in $work/NAME.err).
launch() {
    local name=$1
    shift
    rc=0
    timeout 300 "$SLUICE" launch "$work/$name.json" --wait --config "$site" --state-dir "$state" \
        "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
}
artifacts() { cat "$state/artifacts/$1/stdout.log" 2>/dev/null || true; }
show() { sed 's/^/    | /' "$work/$1.out" "$work/$1.err" >&2; }

# ---------------------------------------------------------------- 1. hetjob
cat >"$work/het.json" <<JSON
{"launch_id": "het-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "time_limit": 5,
 "pools": [
  {"name": "trainer", "gpu_series": "a100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200,
   "args": ["-c", "echo trainer=\$SLURMD_NODENAME sees rollout=\$SLUICE_POOL_ROLLOUT_HOST"]},
  {"name": "rollout", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200,
   "args": ["-c", "echo rollout=\$SLURMD_NODENAME sees trainer=\$SLUICE_POOL_TRAINER_HOST"]}]}
JSON
launch het
out=$(artifacts "het-$run")
if [ "$rc" -eq 0 ] && grep -q '^trainer=tb1 sees rollout=tb[23]$' <<<"$out" &&
    grep -q '^rollout=tb[23] sees trainer=tb1$' <<<"$out"; then
    launch het
    jobs_before=$("$SLUICE" status "het-$run" --output=json --state-dir="$state" | grep -c '"submitted"' || true)
    if [ "$rc" -eq 0 ] && grep -q 'already known' "$work/het.out" && [ "$jobs_before" -eq 1 ] &&
        grep -q '\] DONE .*result=SUCCEEDED(0)' "$work/het.out"; then
        pass "hetjob succeeded on both series; re-run resumed without a second job and printed its final line"
    else
        fail "hetjob re-run (exit $rc, submitted events $jobs_before)"; show het
    fi
else
    fail "hetjob (exit $rc): $out"; show het
fi

# ---------------------------------------------------------- 2. failing pool
cat >"$work/fail.json" <<JSON
{"launch_id": "fail-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "time_limit": 5,
 "pools": [
  {"name": "trainer", "gpu_series": "a100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200, "args": ["-c", "sleep 2; echo trainer done"]},
  {"name": "rollout", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200, "args": ["-c", "exit 3"]}]}
JSON
launch fail
if [ "$rc" -eq 1 ] && grep -q 'rollout' "$work/fail.out"; then
    pass "a failing pool ends EXECUTION_ERROR (1) and is named"
else
    fail "failing pool (exit $rc, want 1 naming rollout)"; show fail
fi

# --------------------------------------------------------- 3. exit code 102
cat >"$work/code.json" <<JSON
{"launch_id": "code-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "args": ["-c", "exit 102"], "time_limit": 5,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
launch code -o json
# every line an object; no result before DONE; elapsed to the ms
bad=$(jq -c 'select((.state == "DONE" and .result_code != 102) or
                    (.state != "DONE" and .result_code != null) or has("result") or
                    (.elapsed_s | type) != "number")' "$work/code.out" 2>&1 || echo "not JSON lines")
if [ "$rc" -eq 102 ] && [ -z "$bad" ] && jq -e 'select(.state == "DONE")' "$work/code.out" >/dev/null &&
    ! grep -qE '"elapsed_s":-?[0-9]+\.[0-9]{4,}' "$work/code.out"; then
    pass "workload exit 102 is kept as the result code; JSON lines with result_code null until DONE"
else
    fail "exit 102 (got $rc; lines not as the API names them: $bad)"; show code
fi

# ------------------------------------------------------------- 4. cancel
cat >"$work/cancel.json" <<JSON
{"launch_id": "cancel-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/sleep", "args": ["300"], "time_limit": 10,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
( launch cancel; echo "$rc" >"$work/cancel.rc" ) &
bg=$!
running=0
for _ in $(seq 1 60); do
    if "$SLUICE" status "cancel-$run" --state-dir "$state" 2>/dev/null | grep -q '^state      RUNNING'; then
        running=1
        break
    fi
    sleep 1
done
if [ "$running" -eq 1 ]; then
    # a script's order: the operand first
    "$SLUICE" cancel "cancel-$run" --state-dir "$state" >/dev/null
fi
wait "$bg" || true
crc=$(cat "$work/cancel.rc" 2>/dev/null || echo none)
if [ "$running" -eq 1 ] && [ "$crc" = 9 ]; then
    pass "cancel from another process while running ends ABORTED (9)"
else
    fail "cancel (running=$running, exit $crc, want 9)"; show cancel
fi

# ---------------------------------------------------------- 5. multi-node
# Written through the service's view of the storage, run by the cluster
# from its own (they differ for a release in a root).
rank_script="$SLUICE_TB_STORAGE_ROOT/e2e-rank-$run.sh"
rank_cmd="${SLUICE_TB_CLUSTER_STORAGE_ROOT:-$SLUICE_TB_STORAGE_ROOT}/e2e-rank-$run.sh"
cat >"$rank_script" <<'SH'
#!/bin/bash
echo "rank=$SLUICE_NODE_RANK nnodes=$SLUICE_NNODES master=$SLUICE_MASTER_ADDR:$SLUICE_MASTER_PORT nvfl_rank=$NVFL_NODE_RANK"
SH
chmod 0755 "$rank_script"
cat >"$work/multi.json" <<JSON
{"launch_id": "multi-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "$rank_cmd", "time_limit": 5,
 "pools": [{"name": "workers", "gpu_series": "h100", "nodes": 2, "cpus_per_node": 1,
   "mem_per_node_mib": 200, "additional_node_command": "$rank_cmd"}]}
JSON
launch multi
out=$(artifacts "multi-$run")
rm -f "$rank_script"
if [ "$rc" -eq 0 ] &&
    grep -Eq '^rank=0 nnodes=2 master=tb2:[0-9]+ nvfl_rank=0$' <<<"$out" &&
    grep -Eq '^rank=1 nnodes=2 master=tb2:[0-9]+ nvfl_rank=1$' <<<"$out"; then
    pass "2-node pool: ranks 0 and 1 with node count, master address and port"
else
    fail "multi-node (exit $rc): $out"; show multi
fi

# -------------------------------------------------------------- 6. secret
secret="s3cr3t-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
cat >"$work/secret.json" <<JSON
{"launch_id": "secret-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "time_limit": 5,
 "args": ["-c", "if [ \"\${#E2E_SECRET}\" -eq ${#secret} ]; then echo secret-ok; fi; test ! -e \"\$SLUICE_STAGING/secrets.env\" && echo secrets-file-gone"],
 "secrets": {"E2E_SECRET": "$secret"},
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
launch secret
rm -f "$work/secret.json"
out=$(artifacts "secret-$run")
leaks=$(grep -rlsF -- "$secret" "$state" "$SLUICE_TESTBED_DIR" "$work" 2>/dev/null || true)
if [ "$rc" -eq 0 ] && grep -q '^secret-ok$' <<<"$out" && grep -q '^secrets-file-gone$' <<<"$out" &&
    [ -z "$leaks" ]; then
    pass "secret reached the workload, secrets.env was deleted, the value is stored nowhere"
else
    fail "secret (exit $rc, output: $out, found in: ${leaks:-nowhere})"; show secret
fi

# ------------------------------------------------------------ 7. logs -f
cat >"$work/logs.json" <<JSON
{"launch_id": "logs-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "args": ["-c", "echo tick-1; sleep 3; echo tick-2"], "time_limit": 5,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
( launch logs; echo "$rc" >"$work/logs.rc" ) &
bg=$!
for _ in $(seq 1 30); do
    "$SLUICE" status --state-dir "$state" "logs-$run" >/dev/null 2>&1 && break
    sleep 0.5
done
timeout 120 "$SLUICE" logs -f --state-dir "$state" "logs-$run" >"$work/logs.follow" 2>&1 || true
wait "$bg" || true
if [ "$(cat "$work/logs.rc" 2>/dev/null)" = 0 ] &&
    [ "$(tr '\n' ' ' <"$work/logs.follow")" = "tick-1 tick-2 " ]; then
    pass "logs -f followed the job's output to the end"
else
    fail "logs -f (launch exit $(cat "$work/logs.rc" 2>/dev/null), followed: $(cat "$work/logs.follow"))"
    show logs
fi

finish
