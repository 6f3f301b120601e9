#!/usr/bin/env bash
# bench_serve_submit.sh - the service submit benchmark works end to end on
# the testbed (a small run, not a measurement): every launch POSTed over
# HTTP gets a Slurm job id, every job is held (PENDING on the benchmark's
# future reservation), both target lines are printed (sbatch loop and raw client),
# the breakdown per launch is printed, every job is cancelled
# and the reservation is deleted.  A missing testbed or benchmark binary is a
# failure, never a skip.  Last line: "$N: <n> passed, <m> failed".
set -euo pipefail
N=bench_serve_submit@${SLUICE_TB_RELEASE:-22.05}   # every line names the Slurm release

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${SLUICE_BUILD_DIR:-$REPO/build}
BENCH=$BUILD/bench/bench_serve_submit
export SLUICE_BIN=${SLUICE_BIN:-$BUILD/sluice}
passed=0
failed=0
pass() { echo "$N: PASS $*"; passed=$((passed + 1)); }
fail() { echo "$N: FAIL $*"; failed=$((failed + 1)); }

env_out=$("$REPO/deploy/testbed/env.sh") || {
    echo "$N: ERROR testbed not available: run deploy/testbed/start.sh"
    exit 1
}
eval "$env_out"
case "${SLUICE_TB_REST_URL:-}" in
    http://127.*) ;;
    *) echo "$N: ERROR only loopback may be contacted: ${SLUICE_TB_REST_URL:-unset}"; exit 1 ;;
esac
if [ ! -x "$BENCH" ] || [ ! -x "$SLUICE_BIN" ]; then
    echo "$N: ERROR $BENCH or $SLUICE_BIN not built (SLUICE_BUILD_BENCH=ON)"
    exit 1
fi

work=$(mktemp -d /tmp/sluice-bss-XXXXXX)
trap 'rm -rf "$work"' EXIT
bash "$REPO/deploy/testbed/site-config.sh" >"$work/site.yaml"

n=8
rc=0
"$BENCH" --config "$work/site.yaml" --submit "$n" --in-flight 1,2 >"$work/out" 2>"$work/err" || rc=$?
sed 's/^/  | /' "$work/out"

if [ "$rc" -eq 0 ]; then pass "exit 0"; else fail "exit $rc"; fi
if grep -q "NOT RUN" "$work/out"; then fail "benchmark did not run: $(grep 'NOT RUN' "$work/out")"; fi
for k in 1 2; do
    if grep -q "^serve-submit in_flight=$k clients=$k: $n/$n launches with a Slurm job id" "$work/out"; then
        pass "in_flight $k: $n/$n launches got a job id"
    else
        fail "in_flight $k: not every launch got a job id"
    fi
done
c=$(grep -c "squeue after the measure: $n of $n jobs PENDING (Reservation), 0 in another state" "$work/out" || true)
if [ "$c" -eq 2 ]; then pass "every job held on the reservation in both runs"; else fail "held check: $c of 2 runs"; fi
c=$(grep -c "non-201 answers or none 0$" "$work/out" || true)
if [ "$c" -eq 2 ]; then pass "every POST answered 201"; else fail "201 check: $c of 2 runs"; fi
c=$(grep -c "cancelled $n of $n jobs (REST DELETE)" "$work/out" || true)
if [ "$c" -eq 2 ]; then pass "every service job cancelled"; else fail "cancel check: $c of 2 runs"; fi
if grep -q "^sbatch --hold loop before  jobs=$n/$n" "$work/out" &&
    grep -q "^sbatch --hold loop after   jobs=$n/$n" "$work/out"; then
    pass "sbatch loops ran before and after"
else
    fail "sbatch loops"
fi
if grep -q "^target serve submit sequential vs sbatch loop .* -> \(met\|MISSED\)$" "$work/out"; then
    pass "sequential target line"
else
    fail "no sequential target line"
fi
# jobs: two sbatch loops, two service runs, and before each the raw client
# twice (held jobs, then the service's own job description)
if grep -q "^cleanup: $((8 * n)) jobs made in this run; 0 of them still in squeue$" "$work/out"; then
    pass "squeue holds none of the $((8 * n)) jobs"
else
    fail "jobs left in squeue"
fi
c=$(grep -c "^raw client (sluice_client_submit, held job) [12] in flight: jobs=$n/$n" "$work/out" || true)
if [ "$c" -eq 2 ]; then pass "raw client ran in the same round"; else fail "raw client: $c of 2 runs"; fi
c=$(grep -c "^raw client (sluice_client_submit, the service's job) [12] in flight: jobs=$n/$n" \
    "$work/out" || true)
if [ "$c" -eq 2 ]; then
    pass "raw client with the service's job description ran in the same round"
else
    fail "raw client with the service's job: $c of 2 runs"
fi
c=$(grep -c "^  the service's CPU (user + system, all threads): [0-9.]* ms per launch$" "$work/out" || true)
if [ "$c" -eq 2 ]; then pass "the service's CPU per launch printed"; else fail "CPU: $c of 2 runs"; fi
if grep -q "^target serve submit sequential vs raw client .* -> \(met\|MISSED\)$" "$work/out"; then
    pass "raw-client target line"
else
    fail "no raw-client target line"
fi
# the breakdown from the service's /v1/metrics: every phase, with a value
c=$(grep -c "^  breakdown (the service's counters.* accept_commit [0-9.]* .* post [0-9.]* answer_commit [0-9.]*" "$work/out" || true)
if [ "$c" -eq 2 ]; then pass "breakdown per launch printed"; else fail "breakdown: $c of 2 runs"; fi
if scontrol show reservation 2>/dev/null | grep -q "ReservationName=sluice-bench-hold-"; then
    fail "a sluice-bench-hold reservation is left"
else
    pass "reservation deleted"
fi
if [ -s "$work/err" ]; then
    echo "$N: stderr:"
    sed 's/^/  | /' "$work/err"
fi

echo "$N: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
