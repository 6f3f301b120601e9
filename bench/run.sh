#!/usr/bin/env bash
# run.sh - run every benchmark against the local testbed, side by side, and
# print numbers, ratios and target verdicts (met / MISSED).  Benchmarks
# never fail a build: this script exits 0 whenever it ran.
#   bench/run.sh [--release 22.05|24.11|26.05] [BUILD_DIR]
# The release's testbed must run (deploy/testbed/start.sh --release R);
# every number is printed under a header naming the release and its REST
# version (docs/benchmarks.md keeps one table per release).
# Environment: the testbed's (SLUICE_TESTBED_DIR, SLUICE_TB_PORT_BASE for a
# non-default instance); BENCH_SIZES (10,100,1000,10000), BENCH_CYCLES (20),
# BENCH_BASELINE_CYCLES (3,2,1,0: none at 10,000), BENCH_POLL_CYCLE_JOBS (10000),
# BENCH_POLL_CYCLE_CYCLES (5), BENCH_SUBMIT_JOBS (200), BENCH_LIVE
# (10000), BENCH_FINISHED (100000), BENCH_LATENCY_RUNS (3), BENCH_SERVE_LAUNCHES
# (100), BENCH_SERVE_RATE (500), BENCH_SERVE_SECONDS (30), BENCH_SERVE_SUBMIT (100),
# BENCH_SERVE_SUBMIT_ROUNDS (5: issue 16 reports the median and minimum of 5 rounds);
# issue 16: BENCH_SERVE16_LAUNCHES (1000), BENCH_SERVE16_RATE (1000),
# BENCH_FANOUT_WATCHERS (200); issue 17: BENCH_FAILOVER_KILLS (10).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
release=${SLUICE_TB_RELEASE:-22.05}
while [ "$#" -gt 0 ]; do
    case "$1" in
        --release) release=${2:-}; shift ;;
        --release=*) release=${1#--release=} ;;
        *) break ;;
    esac
    shift
done
export SLUICE_TB_RELEASE=$release
BUILD=${1:-$REPO/build}
env_out=$("$REPO/deploy/testbed/env.sh" 2>/dev/null) || { echo "run.sh: NOT RUN: Slurm $release testbed not available (deploy/testbed/start.sh --release $release)"; exit 0; }
eval "$env_out"
echo "== release: Slurm $release (testbed REST $SLUICE_TB_REST_VERSION)"
export SLUICE_BIN=${SLUICE_BIN:-$BUILD/sluice}
echo "== machine: $(nproc) cores, $(. /etc/os-release && echo "$PRETTY_NAME"), $(sinfo -V), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== git: $(git -C "$REPO" rev-parse --short HEAD)  date: $(date -u +%FT%TZ)"
# Latency first: the other benchmarks leave thousands of cancelled jobs in
# slurmctld's table for MinJobAge (300 s), and every v0.0.38 poll reads the
# whole table.
echo "== 4. detection latency (on the idle queue)"
bash "$HERE/bench_latency.sh" "${BENCH_LATENCY_RUNS:-3}" 2
bash "$HERE/bench_latency.sh" 1 default
echo "== 1. poll cost"
"$BUILD/bench/bench_poll" --sizes "${BENCH_SIZES:-10,100,1000,10000}" --cycles "${BENCH_CYCLES:-20}" \
    --baseline-cycles "${BENCH_BASELINE_CYCLES:-3,2,1,0}"
echo "== 1b. RPCs per poll cycle of a real launcher tracking ${BENCH_POLL_CYCLE_JOBS:-10000} held jobs"
site=$(mktemp /tmp/sluice-bench-site.XXXXXX)
bash "$REPO/deploy/testbed/site-config.sh" >"$site"
"$BUILD/bench/bench_poll_cycle" --config "$site" --jobs "${BENCH_POLL_CYCLE_JOBS:-10000}" \
    --cycles "${BENCH_POLL_CYCLE_CYCLES:-5}"
rm -f "$site"
echo "== 2. submit throughput"
"$BUILD/bench/bench_submit" --jobs "${BENCH_SUBMIT_JOBS:-200}"
echo "== 2b. submit throughput through the launcher (accept + staging + store + REST)"
site=$(mktemp /tmp/sluice-bench-site.XXXXXX)
bash "$REPO/deploy/testbed/site-config.sh" >"$site"
"$BUILD/bench/bench_launch" --config "$site" --jobs "${BENCH_LAUNCH_JOBS:-100}"
rm -f "$site"
echo "== 2c. sluice serve under read load (100 live held launches, GET at 500/s for 30 s)"
site=$(mktemp /tmp/sluice-bench-site.XXXXXX)
bash "$REPO/deploy/testbed/site-config.sh" >"$site"
"$BUILD/bench/bench_serve" --config "$site" --launches "${BENCH_SERVE_LAUNCHES:-100}" \
    --rate "${BENCH_SERVE_RATE:-500}" --seconds "${BENCH_SERVE_SECONDS:-30}"
rm -f "$site"
echo "== 2e. issue 16: GET /v1/launches/{id} at 1,000/s with 1,000 live launches (p99 <= 2 ms)"
site=$(mktemp /tmp/sluice-bench-site.XXXXXX)
bash "$REPO/deploy/testbed/site-config.sh" >"$site"
"$BUILD/bench/bench_serve" --config "$site" --launches "${BENCH_SERVE16_LAUNCHES:-1000}" \
    --rate "${BENCH_SERVE16_RATE:-1000}" --seconds "${BENCH_SERVE_SECONDS:-30}" --p99-ms 2
echo "== 2f. issue 16: SSE fan-out, 200 per-launch watchers (every event within 50 ms)"
"$BUILD/bench/bench_fanout" --config "$site" --watchers "${BENCH_FANOUT_WATCHERS:-200}"
echo "== 2g. issue 16: sluice serve startup with 100,000 finished + 1,000 live launches (<= 1 s)"
"$BUILD/bench/bench_startup" --config "$site" --finished "${BENCH_FINISHED:-100000}" --live 1000
rm -f "$site"
echo "== 2d. submit throughput through sluice serve (HTTP POSTs; jobs pending on a future reservation), the raw client in the same rounds, the breakdown per launch"
site=$(mktemp /tmp/sluice-bench-site.XXXXXX)
bash "$REPO/deploy/testbed/site-config.sh" >"$site"
"$BUILD/bench/bench_serve_submit" --config "$site" --submit "${BENCH_SERVE_SUBMIT:-100}" \
    --rounds "${BENCH_SERVE_SUBMIT_ROUNDS:-5}"
rm -f "$site"
echo "== 2h. issue 17: failover of two sluice serve replicas on PostgreSQL (10 leader kills)"
bash "$HERE/bench_failover.sh" "${BENCH_FAILOVER_KILLS:-10}"
echo "== 3. memory"
"$BUILD/bench/bench_mem" --live "${BENCH_LIVE:-10000}" --finished "${BENCH_FINISHED:-100000}"
echo "== summary"
echo "(every 'target' line above: met or MISSED)"
exit 0
