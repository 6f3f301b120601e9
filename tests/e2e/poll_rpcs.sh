#!/usr/bin/env bash
# poll_rpcs.sh - one slurmctld RPC per poll cycle, whatever the number of
# tracked jobs, on a real slurmctld (the issue: on v0.0.44 a cycle over 1,000
# jobs cost 2).  Runs the poll benchmark small (bench/bench_poll, no CLI
# baseline) with 100 and 6,000 held jobs (100 and 300 on v0.0.38) and reads
# the RPC count per cycle it takes from slurmctld's own diag counters: a
# count, not a timing.
#   - v0.0.40+ (24.11, 26.05): one jobs/state request; at 6,000 jobs the id
#     list would pass slurmrestd's 65,535-byte query limit, so it is the one
#     unfiltered read (REQUEST_JOB_STATE either way);
#   - v0.0.38 (22.05): one job-table read (REQUEST_JOB_INFO).  Fewer jobs
#     there: every cancelled job stays in slurmctld's table for MinJobAge
#     (300 s), and every later suite's v0.0.38 poll reads the whole table.
# A missing testbed or benchmark binary is a failure, never a skip.  Last
# line: "poll_rpcs@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=2
NAME=poll_rpcs
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

BUILD=${SLUICE_BUILD_DIR:-$REPO/build}
BENCH=$BUILD/bench/bench_poll
[ -x "$BENCH" ] || abort "no $BENCH (build with SLUICE_BUILD_BENCH=ON)"
e2e_testbed_env
e2e_require_loopback
e2e_require_running

work=$(mktemp -d /tmp/sluice-e2e-poll.XXXXXX)
trap 'rm -rf "$work"' EXIT
big=6000
[ "$SLUICE_TB_REST_VERSION" != v0.0.38 ] || big=300
rc=0
timeout 500 "$BENCH" --sizes "100,$big" --cycles 3 --no-baseline >"$work/out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { sed 's/^/    | /' "$work/out" >&2; abort "bench_poll exited $rc"; }
case "$SLUICE_TB_REST_VERSION" in
    v0.0.38) rpc=REQUEST_JOB_INFO ;;
    *) rpc=REQUEST_JOB_STATE ;;
esac
for n in 100 "$big"; do
    line=$(grep -E "^poll n=$n +sluice " "$work/out" || true)
    # The deltas line printed before the measure of this size.
    deltas=$(grep -B1 -E "^poll n=$n +sluice " "$work/out" | head -n 1)
    if grep -Eq 'rpcs/cycle= +1\.00 ' <<<"$line" && grep -q "$rpc=3" <<<"$deltas"; then
        pass "$n tracked jobs: 1 slurmctld RPC per cycle ($rpc, ${SLUICE_TB_REST_VERSION})"
    else
        fail "$n tracked jobs: '${line:-no measure}' / '${deltas}'"
        sed 's/^/    | /' "$work/out" >&2
    fi
done
finish
