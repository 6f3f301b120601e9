#!/usr/bin/env bash
# ha_chaos.sh - two `sluice serve` replicas on one PostgreSQL store under
# fire (issue 17, "Must show"):
#
#   200 launches are POSTed alternately to both replicas; at 10 random
#   points of the run the leader (the replica whose /v1/readyz says
#   "leader") is killed with SIGKILL and started again at once.  Then:
#   1. every launch was accepted by one replica or the other;
#   2. each kill was followed by a new leader (a higher epoch) within 15 s
#      (target 10 s; the times are printed, docs/benchmarks.md has them);
#   3. every accepted launch ends (DONE);
#   4. Slurm holds exactly one job per launch marker (squeue + sacct): no
#      launch was submitted twice, none was lost;
#   5. each launch's result is the one accounting implies (COMPLETED:
#      result 0; any other end: non-zero), and names that job;
#   6. each completed launch's stdout (a line of its own), archived by
#      whichever replica led when it ended, is served by the other replica
#      from the store, byte for byte (issue 30); one whose leader was killed
#      in the cycle that ended it has no `archived` event (its logs stored
#      before the kill, or left in its staging), and both replicas serve it.
#
# The store is a schema of its own in the testbed's PostgreSQL
# (deploy/testbed/postgres.sh, 127.0.0.1:55432), dropped at the end.  Runs
# against the testbed's slurmrestd on loopback; never stops a testbed
# daemon.  SLUICE_CHAOS_LAUNCHES / SLUICE_CHAOS_KILLS / SLUICE_CHAOS_SEED
# change the run.  Last line: "ha_chaos: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=6
NAME=ha_chaos
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup ha_chaos
schema=""
cleanup() {
    e2e_pg_drop
    rm -rf "$work"
}
trap cleanup EXIT
e2e_pg_schema ha_chaos
export SLUICE_STORE_URL="$store_url"

tok="tok-chaos-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf 'chaos %s\n' "$tok" >"$work/tokens"
chmod 0600 "$work/tokens"

n=${SLUICE_CHAOS_LAUNCHES:-200}
kills=${SLUICE_CHAOS_KILLS:-10}
seed=${SLUICE_CHAOS_SEED:-$RANDOM}
say "seed $seed, $n launches, $kills kills"
rc=0
python3 "$REPO/tests/e2e/lib/ha_chaos.py" "$SLUICE" "$site" "$work" "$tok" "$n" "$kills" "$seed" \
    >"$work/chaos.out" 2>&1 || rc=$?
grep -E '^(FAILOVER|ha_chaos:)' "$work/chaos.out" | sed 's/^/    | /' || true
e2e_driver_results "$work/chaos.out" "$rc" 'leadership|fenced|ERROR|error'
finish
