#!/usr/bin/env bash
# appowned_fanout.sh - application-owned fan-out (a multi-node pool without
# additional_node_command, NVFlare's `additional_node_command: null`) end
# to end on the local testbed.  sluice runs rank 0 in the batch step itself,
# as NVFlare's launcher does, so the application's own srun gets every node
# of the allocation (inside a one-node step of sluice it would get one, or
# wait for the step's CPUs):
#
#   1. a 2-node pool, profile none, NVFlare form with the null command: the
#      application's `srun --nodes=2 --ntasks=2` runs a task on each node;
#   2. a two-component hetjob whose second pool (2 nodes) owns its fan-out:
#      sluice starts its rank 0 with `srun --overlap --het-group=1` on the
#      component's first node, and the application's own
#      `srun --het-group=1 --nodes=2` (without --overlap) runs on both of the
#      component's nodes next to it.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only.  A
# missing testbed is a failure, never a skip.  Last line:
# "appowned_fanout@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=2
NAME=appowned_fanout
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup fanout
trap 'rm -rf "$work"' EXIT

launch() {
    rc=0
    timeout 300 "$SLUICE" launch "$work/$1.json" --wait --config "$site" --state-dir "$state" \
        >"$work/$1.out" 2>&1 || rc=$?
}
artifacts() { cat "$state/artifacts/$1/stdout.log" 2>/dev/null || true; }
errors() { cat "$state/artifacts/$1/stderr.log" 2>/dev/null || true; }
show() {
    sed 's/^/    | /' "$work/$1.out" >&2
    errors "$1-$run" | sed 's/^/    stderr| /' >&2
}

# -------------------------------------------------- 1. NVFlare form, null
# The application's own fan-out: one task per node, each prints its node.
cat >"$work/nvfl.json" <<JSON
{"launch_id": "nvfl-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash",
 "args": ["-c", "echo rank0=\$SLURMD_NODENAME; timeout 120 srun --nodes=2 --ntasks=2 --ntasks-per-node=1 bash -c 'echo task=\$SLURMD_NODENAME'"],
 "resource_spec": {"$SLUICE_TB_CLUSTER": {"num_of_gpus": 0}},
 "launcher_spec": {"$SLUICE_TB_CLUSTER": {"slurm": {"nodes": 2, "cpus_per_node": 1, "mem_per_node": 200,
   "time": "00:05:00", "additional_node_command": null}}}}
JSON
launch nvfl
out=$(artifacts "nvfl-$run")
tasks=$(grep -c '^task=tb[0-9]$' <<<"$out" || true)
distinct=$({ grep '^task=' <<<"$out" || true; } | sort -u | wc -l)
if [ "$rc" -eq 0 ] && grep -q '^rank0=tb[0-9]$' <<<"$out" && [ "$tasks" -eq 2 ] && [ "$distinct" -eq 2 ]; then
    pass "NVFlare null additional_node_command: rank 0 in the batch step, the application's srun ran on both nodes: $(tr '\n' ' ' <<<"$out")"
else
    fail "application-owned fan-out (exit $rc): $out"; show nvfl
fi

# ------------------------------------------------ 2. hetjob, --overlap
cat >"$work/het.json" <<JSON
{"launch_id": "het-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "time_limit": 5,
 "pools": [
  {"name": "coord", "gpu_series": "a100", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200,
   "args": ["-c", "echo coord=\$SLURMD_NODENAME"]},
  {"name": "workers", "gpu_series": "h100", "nodes": 2, "cpus_per_node": 1, "mem_per_node_mib": 200,
   "args": ["-c", "echo rank0=\$SLURMD_NODENAME; timeout 120 srun --het-group=1 --nodes=2 --ntasks=2 --ntasks-per-node=1 bash -c 'echo worker=\$SLURMD_NODENAME'"]}]}
JSON
launch het
out=$(artifacts "het-$run")
workers=$({ grep '^worker=tb[0-9]$' <<<"$out" || true; } | sort -u | wc -l)
if [ "$rc" -eq 0 ] && grep -q '^coord=tb[0-9]$' <<<"$out" && grep -q '^rank0=tb[0-9]$' <<<"$out" &&
    [ "$workers" -eq 2 ]; then
    pass "hetjob component 1 owns its fan-out: rank 0 under srun --overlap, its srun ran on both nodes: $(tr '\n' ' ' <<<"$out")"
else
    fail "hetjob application-owned fan-out (exit $rc): $out"; show het
fi

finish
