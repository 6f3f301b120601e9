#!/usr/bin/env bash
# check-retry-report.sh SRC_DIR - deploy/ctest-retry.sh (how test-all.sh
# runs the end-to-end suites) on a small CTest project of three tests:
# `solid` passes, `flaky` fails its first run and passes its second,
# `broken` always fails.
#   1. with all three: exit 1; `flaky` is in .retried, `broken` in .failed,
#      `solid` in neither; the summary names `flaky` as passed only when run
#      again, with the FAIL line of its first run; .first-failures.txt holds
#      that run's output;
#   2. without `broken`: exit 0, and `flaky` is still named and counted.
# Last line: "check-retry-report: <n> passed, <m> failed".
set -euo pipefail
src="${1:?usage: check-retry-report.sh SRC_DIR}"
passed=0
failed=0
ok() { echo "check-retry-report: PASS $*"; passed=$((passed + 1)); }
bad() { echo "check-retry-report: FAIL $*"; failed=$((failed + 1)); }
tmp=$(mktemp -d /tmp/sluice-check-retry.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/proj" "$tmp/build"
cat >"$tmp/proj/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(retrycheck NONE)
enable_testing()
add_test(NAME solid COMMAND sh -c "echo solid: PASS")
add_test(NAME flaky COMMAND sh -c "if [ -e '$tmp/flaky.ran' ]; then echo 'flaky: PASS second run'; else touch '$tmp/flaky.ran'; echo 'flaky: some line'; echo 'flaky: FAIL first run lost its node'; exit 1; fi")
add_test(NAME broken COMMAND sh -c "echo 'broken: FAIL every time'; exit 1")
CM
cmake -S "$tmp/proj" -B "$tmp/build" >"$tmp/cmake.log" 2>&1 || {
    cat "$tmp/cmake.log"
    exit 1
}

# 1. all three
rc=0
bash "$src/deploy/ctest-retry.sh" "$tmp/build" "$tmp/build/e2e" >"$tmp/run1.out" 2>&1 || rc=$?
if [ "$rc" -eq 1 ] && [ "$(cat "$tmp/build/e2e.retried")" = flaky ] &&
    [ "$(cat "$tmp/build/e2e.failed")" = broken ] &&
    grep -q '1 test(s) passed ONLY WHEN RUN AGAIN' "$tmp/run1.out" &&
    grep -q '  flaky: first failure in' "$tmp/run1.out" &&
    grep -q '    | flaky: FAIL first run lost its node' "$tmp/run1.out" &&
    grep -q 'flaky: FAIL first run lost its node' "$tmp/build/e2e.first-failures.txt" &&
    ! grep -q '^===== solid' "$tmp/build/e2e.first-failures.txt"; then
    ok "flaky + broken: exit 1, flaky named as retried with its first FAIL line, broken as failed"
else
    bad "flaky + broken: exit $rc, retried '$(cat "$tmp/build/e2e.retried" 2>/dev/null)', failed '$(cat "$tmp/build/e2e.failed" 2>/dev/null)'"
    sed 's/^/    | /' "$tmp/run1.out"
fi

# 2. without broken: a pass that still names the retry
rm -f "$tmp/flaky.ran"
rc=0
bash "$src/deploy/ctest-retry.sh" "$tmp/build" "$tmp/build/e2e" -E broken >"$tmp/run2.out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && [ "$(cat "$tmp/build/e2e.retried")" = flaky ] && [ ! -s "$tmp/build/e2e.failed" ] &&
    bash "$src/deploy/ctest-retry.sh" --summary "$tmp/build/e2e" | grep -q 'flaky: FAIL first run'; then
    ok "flaky only: exit 0, and the summary still names flaky with its first failure"
else
    bad "flaky only: exit $rc (want 0), retried '$(cat "$tmp/build/e2e.retried" 2>/dev/null)'"
    sed 's/^/    | /' "$tmp/run2.out"
fi

echo "check-retry-report: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
