#!/usr/bin/env bash
# check-guards.sh SRC_DIR GOLDEN_RENDER GOLDEN_BODIES CONTRACT - the guards
# that keep a test from passing without what it checks (issue 29), each
# shown to fail when it should:
#   1. a golden test with CI=true and UPDATE_GOLDEN=1 fails, names both
#      variables, and rewrites nothing (it runs on a copy of tests/golden);
#      the same binary on the same copy passes with CI=true alone, so the
#      failure is the guard's;
#   2. the contract check with CI=true and SLUICE_SHARED_DIR missing fails
#      and names the variable; without CI it is a skip that says so (CTest
#      reports it as skipped through SKIP_REGULAR_EXPRESSION, not passed);
#   3. deploy/test-all.sh refuses to start while UPDATE_GOLDEN is set (exit
#      64 and a message naming it), before it installs or builds anything.
# Last line: "check-guards: <n> passed, <m> failed"; exit 1 on any failure.
set -euo pipefail
src="${1:?usage: check-guards.sh SRC_DIR GOLDEN_RENDER GOLDEN_BODIES CONTRACT}"
render="${2:?}"
bodies="${3:?}"
contract="${4:?}"
passed=0
failed=0
ok() { echo "check-guards: PASS $*"; passed=$((passed + 1)); }
bad() { echo "check-guards: FAIL $*"; failed=$((failed + 1)); }
tmp=$(mktemp -d /tmp/sluice-check-guards.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# A copy of the golden files: a guard that did not hold would rewrite these,
# never the checkout's.
mkdir -p "$tmp/src/tests"
cp -r "$src/tests/golden" "$tmp/src/tests/golden"
cp -r "$tmp/src/tests/golden" "$tmp/golden.orig"

# run NAME BINARY ENV...: the binary's exit status into $tmp/NAME.rc, its
# output into $tmp/NAME.out.
run() {
    local name=$1 bin=$2 rc=0
    shift 2
    env -u CI -u UPDATE_GOLDEN "$@" "$bin" --jobs=1 --short-filename >"$tmp/$name.out" 2>&1 || rc=$?
    echo "$rc" >"$tmp/$name.rc"
}
show() { sed 's/^/    | /' "$tmp/$1.out" | tail -n 15; }

# 1. golden: CI=true + UPDATE_GOLDEN=1 fails and writes nothing.
for g in render bodies; do
    bin=$render
    [ "$g" = bodies ] && bin=$bodies
    # a rewrite of identical text shows in the files' times
    touch "$tmp/mark"
    sleep 0.01
    run "golden-$g-ci-update" "$bin" CI=true UPDATE_GOLDEN=1 SLUICE_SOURCE_DIR="$tmp/src"
    run "golden-$g-ci" "$bin" CI=true SLUICE_SOURCE_DIR="$tmp/src"
    written=$(find "$tmp/src/tests/golden" -type f -newer "$tmp/mark" | head -n 3)
    if [ "$(cat "$tmp/golden-$g-ci-update.rc")" -ne 0 ] &&
        grep -q 'UPDATE_GOLDEN=1 is set while CI=true' "$tmp/golden-$g-ci-update.out" &&
        diff -r "$tmp/golden.orig" "$tmp/src/tests/golden" >/dev/null &&
        [ -z "$written" ] &&
        [ "$(cat "$tmp/golden-$g-ci.rc")" -eq 0 ]; then
        ok "golden_$g: CI=true UPDATE_GOLDEN=1 fails naming both, nothing rewritten; CI=true alone passes"
    else
        bad "golden_$g: CI=true UPDATE_GOLDEN=1 exit $(cat "$tmp/golden-$g-ci-update.rc") (want non-zero, message, no rewrite); CI=true alone exit $(cat "$tmp/golden-$g-ci.rc") (want 0)"
        show "golden-$g-ci-update"
        diff -r "$tmp/golden.orig" "$tmp/src/tests/golden" | head -n 5 || true
        [ -z "$written" ] || echo "    rewritten: $written"
    fi
done

# 2. contract: a missing shared folder fails under CI, is a named skip without.
run contract-ci "$contract" CI=true SLUICE_SHARED_DIR="$tmp/no-shared" SLUICE_SOURCE_DIR="$src"
run contract-local "$contract" SLUICE_SHARED_DIR="$tmp/no-shared" SLUICE_SOURCE_DIR="$src"
if [ "$(cat "$tmp/contract-ci.rc")" -ne 0 ] &&
    grep -q "SLUICE_SHARED_DIR: $tmp/no-shared is not a directory" "$tmp/contract-ci.out" &&
    grep -q 'CI=true is set, where a missing prerequisite is a failure' "$tmp/contract-ci.out"; then
    ok "contract: CI=true with SLUICE_SHARED_DIR missing fails and names the variable"
else
    bad "contract: CI=true with SLUICE_SHARED_DIR missing exit $(cat "$tmp/contract-ci.rc") (want non-zero naming SLUICE_SHARED_DIR)"
    show contract-ci
fi
if grep -q 'skipped outside CI; with CI=true this fails' "$tmp/contract-local.out"; then
    ok "contract: without CI a missing SLUICE_SHARED_DIR is a skip that says so"
else
    bad "contract: without CI, no skip message (exit $(cat "$tmp/contract-local.rc"))"
    show contract-local
fi

# 3. test-all.sh refuses UPDATE_GOLDEN before doing anything.
rc=0
env CI=true UPDATE_GOLDEN=1 SLUICE_BUILD_DIR="$tmp/never" timeout 20 bash "$src/deploy/test-all.sh" \
    >"$tmp/test-all.out" 2>&1 || rc=$?
if [ "$rc" -eq 64 ] && grep -q 'UPDATE_GOLDEN=1 is set' "$tmp/test-all.out" && [ ! -e "$tmp/never" ]; then
    ok "test-all.sh: CI=true UPDATE_GOLDEN=1 refused (exit 64) before installing or building"
else
    bad "test-all.sh with CI=true UPDATE_GOLDEN=1: exit $rc (want 64, a message naming UPDATE_GOLDEN, nothing built)"
    sed 's/^/    | /' "$tmp/test-all.out" | head -n 10
fi

echo "check-guards: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
