#!/usr/bin/env bash
# test-all.sh - everything a new machine needs to run every sluice test suite:
# Debian packages, Node modules for the contract checks, a sanitizer build
# with -Werror, the real local Slurm testbed, then every CTest label (unit,
# golden, contract, lint, e2e) and the libFuzzer targets in a clang build.
# The e2e suites run on every supported Slurm release: 22.05 (the host's
# packages), 24.11 and 26.05 (Debian trixie / forky in debootstrap roots,
# made once and cached by deploy/testbed/root.sh).  A release whose testbed
# does not start is a failure, never a skip.
#
# Usage: deploy/test-all.sh [--full] [--keep-testbed] [--release R]...
#   --full          full counts for the slow suites (fuzz 300 s per target,
#                   100 kill points) instead of CI's small counts
#   --keep-testbed  leave the testbeds running afterwards (default: stop
#                   those this script started)
#   --release R     run the e2e suites on release R only (repeatable;
#                   default 22.05, 24.11 and 26.05)
# Environment: SLUICE_BUILD_DIR (default build-ci), SLUICE_FUZZ_BUILD_DIR
# (default build-fuzz), SLUICE_FUZZ_SECONDS, SLUICE_SKIP_INSTALL=1 to trust
# the installed packages.  UPDATE_GOLDEN must not be set: the golden tests
# would rewrite their expected files and pass (CI=true makes them fail).
#
# The end-to-end suites run through deploy/ctest-retry.sh: a suite that
# fails runs once more, and one that passed only then is named, with its
# first failure, in the summary and in the closing line (its output is in
# <build>/e2e.first-failures.txt).
set -euo pipefail

# Before anything is installed or built: a golden test run with
# UPDATE_GOLDEN rewrites what it compares against and passes whatever the
# code renders, so no run of every suite may have it.
if [ -n "${UPDATE_GOLDEN:-}" ] && [ "${UPDATE_GOLDEN}" != 0 ]; then
    if [ -n "${CI:-}" ] && [ "${CI}" != 0 ] && [ "${CI,,}" != false ]; then
        echo "test-all.sh: UPDATE_GOLDEN=$UPDATE_GOLDEN is set while CI=$CI: CI never rewrites golden files; unset UPDATE_GOLDEN" >&2
    else
        echo "test-all.sh: UPDATE_GOLDEN=$UPDATE_GOLDEN is set: the golden suites would rewrite their expected files and pass; unset it (rewrite them with ctest -L golden alone)" >&2
    fi
    exit 64
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/.." && pwd)"
build="${SLUICE_BUILD_DIR:-$src/build-ci}"
fuzz_build="${SLUICE_FUZZ_BUILD_DIR:-$src/build-fuzz}"
full=0
keep=0
releases=()
while [ "$#" -gt 0 ]; do
    case "$1" in
    --full) full=1 ;;
    --keep-testbed) keep=1 ;;
    --release=*) releases+=("${1#--release=}") ;;
    --release)
        [ "$#" -ge 2 ] || { echo "test-all.sh: --release needs a value" >&2; exit 64; }
        releases+=("$2")
        shift
        ;;
    -h | --help)
        sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "test-all.sh: unknown argument '$1' (see --help)" >&2
        exit 64
        ;;
    esac
    shift
done
[ "${#releases[@]}" -gt 0 ] || releases=(22.05 24.11 26.05)
for r in "${releases[@]}"; do
    case "$r" in
    22.05 | 24.11 | 26.05) ;;
    *) echo "test-all.sh: unknown release '$r' (22.05, 24.11 or 26.05)" >&2; exit 64 ;;
    esac
done
if [ "$full" -eq 1 ]; then
    fuzz_seconds="${SLUICE_FUZZ_SECONDS:-300}"
    fuzz_seed=0
    export SLUICE_KILL_POINTS="${SLUICE_KILL_POINTS:-100}"
    export SLUICE_E2E_HET_RUNS="${SLUICE_E2E_HET_RUNS:-20}"
else
    fuzz_seconds="${SLUICE_FUZZ_SECONDS:-30}"
    fuzz_seed=1
    export SLUICE_KILL_POINTS="${SLUICE_KILL_POINTS:-20}"
fi
jobs="$(nproc 2>/dev/null || echo 2)"

declare -a phase_names=()
declare -a phase_secs=()
phase_start=0
phase() {
    phase_start=$(date +%s)
    echo
    echo "==> $1"
}
phase_done() {
    phase_names+=("$1")
    phase_secs+=($(($(date +%s) - phase_start)))
}
report() {
    local i
    echo
    echo "==> phase times (seconds)"
    for i in "${!phase_names[@]}"; do
        printf '    %-28s %5s\n' "${phase_names[$i]}" "${phase_secs[$i]}"
    done
}
trap report EXIT

total_start=$(date +%s)

if [ "${SLUICE_SKIP_INSTALL:-0}" != 1 ]; then
    phase "installing Debian packages"
    bash "$here/install-deps.sh" --all
    phase_done "packages"
fi

if [ -f "$src/tests/contract/package.json" ]; then
    phase "installing Node modules for the contract checks"
    npm ci --prefix "$src/tests/contract" --no-audit --no-fund --loglevel=error
    phase_done "node modules"
fi

# The roots of the newer releases are made (or found in the cache) while the
# build runs: debootstrap waits on the network more than on the CPU.
declare -A root_pid=()
for r in "${releases[@]}"; do
    [ "$r" = 22.05 ] && continue
    bash "$here/testbed/root.sh" --release "$r" prepare >"$src/root-$r.log" 2>&1 &
    root_pid[$r]=$!
done

phase "configuring and building (ASan+UBSan, -Werror)"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DSLUICE_WERROR=ON \
    -DSLUICE_SANITIZE=ON -DSLUICE_E2E=ON -DSLUICE_SHARED_DIR="$src/../shared"
cmake --build "$build" -j "$jobs"
phase_done "configure + build"

failed=0
declare -A started=() tb_ok=()
for r in "${releases[@]}"; do
    phase "starting the local Slurm $r testbed"
    if [ -n "${root_pid[$r]:-}" ]; then
        if ! wait "${root_pid[$r]}"; then
            echo "test-all.sh: the root for Slurm $r could not be made:" >&2
            tail -n 20 "$src/root-$r.log" >&2
        fi
        cat "$src/root-$r.log"
        rm -f "$src/root-$r.log"
    fi
    if ! bash "$here/testbed/status.sh" --release "$r" >/dev/null 2>&1; then
        started[$r]=1
    fi
    if SLUICE_TB_FIX_HOSTS="${SLUICE_TB_FIX_HOSTS:-1}" bash "$here/testbed/start.sh" --release "$r"; then
        tb_ok[$r]=1
    else
        # Its suites still run, and fail: a release that cannot start is a
        # failure, never a skip.
        echo "test-all.sh: the Slurm $r testbed did not start" >&2
        failed=1
    fi
    phase_done "testbed start $r"
done
# The private PostgreSQL of the store tests (each store test runs on SQLite
# and, with SLUICE_TEST_PG_URL set, on PostgreSQL as well).
phase "starting the store tests' PostgreSQL"
pg_started=0
if ! bash "$here/testbed/postgres.sh" status >/dev/null 2>&1; then
    pg_started=1
fi
if bash "$here/testbed/postgres.sh" start; then
    eval "$(bash "$here/testbed/postgres.sh" env)"
else
    echo "test-all.sh: PostgreSQL did not start; the store tests on it fail" >&2
    export SLUICE_TEST_PG_URL=postgresql://sluice@127.0.0.1:55432/sluice
    failed=1
fi
phase_done "postgres start"
stop_testbeds() {
    local r
    if [ "$keep" -eq 0 ]; then
        for r in "${!started[@]}"; do
            bash "$here/testbed/stop.sh" --release "$r" || true
        done
        if [ "$pg_started" -eq 1 ]; then
            bash "$here/testbed/postgres.sh" stop || true
        fi
    fi
    report
}
trap stop_testbeds EXIT

# Two at a time (nproc): every unit test has its own temporary directory,
# store and PostgreSQL schema, and binds only port 0, so none waits on
# another; serial, unit alone took about 350 s of a CI run.
for label in unit golden contract lint; do
    phase "ctest -L $label"
    if ! (cd "$build" && ctest -L "^${label}\$" -j "$jobs" --output-on-failure --no-tests=error); then
        failed=1
    fi
    phase_done "tests: $label"
done

# The e2e suites of every release in one run, two at a time: each release
# has its own testbed and CTest lock (testbed-<release>), so two suites of
# two releases run side by side and the two cores stay busy while a suite
# waits on Slurm.  End-to-end suites drive real clusters; one that fails is
# run once more (deploy/ctest-retry.sh), and one that passed only then is a
# flake to chase (docs/operations.md): named with its first failure below
# and in the closing line, never counted as a plain pass.  Every other label
# runs exactly once.  SLUICE_E2E_JOBS=1 runs them one at a time.
e2e_re=$(IFS='|'; echo "^e2e-(${releases[*]})\$")
e2e_report="$build/e2e"
phase "ctest -L '$e2e_re' (releases ${releases[*]})"
if ! bash "$here/ctest-retry.sh" "$build" "$e2e_report" -L "$e2e_re" -j "${SLUICE_E2E_JOBS:-2}" \
    --no-tests=error; then
    failed=1
fi
phase_done "tests: e2e ${releases[*]}"

phase "fuzzing (clang libFuzzer, ${fuzz_seconds} s per target)"
CC=clang cmake -S "$src" -B "$fuzz_build" -DCMAKE_BUILD_TYPE=Debug -DSLUICE_FUZZ=ON \
    -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_BENCH=OFF -DSLUICE_FUZZ_SECONDS="$fuzz_seconds" -DSLUICE_FUZZ_SEED="$fuzz_seed" \
    -DCMAKE_C_FLAGS='-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined'
cmake --build "$fuzz_build" -j "$jobs"
# Each target is one single-threaded process with a fixed time budget: two
# at a time keep both cores busy and halve the phase (11 targets).
if ! (cd "$fuzz_build" && ctest -L '^fuzz$' -j "$jobs" --output-on-failure --no-tests=error); then
    failed=1
fi
phase_done "tests: fuzz"

echo
echo "==> total $(($(date +%s) - total_start)) s"
retried=()
if [ -s "$e2e_report.retried" ]; then
    mapfile -t retried <"$e2e_report.retried"
fi
if [ -s "$e2e_report.retried" ] || [ -s "$e2e_report.failed" ]; then
    echo
    bash "$here/ctest-retry.sh" --summary "$e2e_report"
fi
retry_note=""
if [ "${#retried[@]}" -gt 0 ]; then
    retry_note="; ${#retried[@]} needed a retry: $(IFS=,; echo "${retried[*]}" | sed 's/,/, /g') (first failures: $e2e_report.first-failures.txt)"
fi
if [ "$failed" -ne 0 ]; then
    echo "test-all.sh: some suites FAILED (see above)$retry_note" >&2
    exit 1
fi
echo "test-all.sh: every suite passed$retry_note"
