#!/usr/bin/env bash
# ctest-retry.sh BUILD_DIR PREFIX [CTEST_ARGS...] - run CTest once, run the
# tests that failed once more (ctest --rerun-failed), and never hide a test
# that passed only the second time.  deploy/test-all.sh runs its end-to-end
# suites through it: they drive real clusters, so a flaky one gets one more
# run, but it is named in the summary with its first failure.
#
# Writes, next to PREFIX (a path in the build directory):
#   PREFIX.first.log / PREFIX.retry.log  what each CTest run printed
#   PREFIX.first.xml / PREFIX.retry.xml  each run's JUnit report
#   PREFIX.first-failures.txt  the output of every test that failed the first
#                              time, as CTest recorded it
#   PREFIX.retried   names of the tests that failed, then passed (one a line)
#   PREFIX.failed    names of the tests that failed both times
# and prints, after the runs, a section for each retried test: its name, the
# key lines of its first failure (the suites' FAIL lines, else the last
# lines) and where the whole output is.  Exit 0 when every test passed, on
# the first or the second run; 1 otherwise.
#
# ctest-retry.sh --summary PREFIX prints that section again (test-all.sh
# does, at its end).
set -uo pipefail

# summary PREFIX: one paragraph per test named in PREFIX.retried and
# PREFIX.failed, with the key lines of its first failure.
summary() {
    local p=$1 t kind key
    for kind in retried failed; do
        [ -s "$p.$kind" ] || continue
        if [ "$kind" = retried ]; then
            echo "==> $(wc -l <"$p.$kind") test(s) passed ONLY WHEN RUN AGAIN (flaky: chase them, see docs/operations.md):"
        else
            echo "==> $(wc -l <"$p.$kind") test(s) FAILED twice:"
        fi
        while IFS= read -r t; do
            echo "  $t: first failure in $p.first-failures.txt (whole run: $p.first.log); key lines:"
            key=$(sed -n "/^===== $t: first run/,/^===== end of $t\$/p" "$p.first-failures.txt" |
                sed '1d;$d' | grep -E '(^|[: ])(FAIL|FAILED|ERROR|Error|error:|Assertion|abort)' | head -n 8)
            [ -n "$key" ] || key=$(sed -n "/^===== $t: first run/,/^===== end of $t\$/p" \
                "$p.first-failures.txt" | sed '1d;$d' | tail -n 8)
            printf '%s\n' "$key" | sed 's/^/    | /'
        done <"$p.$kind"
    done
}

if [ "${1:-}" = --summary ]; then
    summary "${2:?usage: ctest-retry.sh --summary PREFIX}"
    exit 0
fi
build=${1:?usage: ctest-retry.sh BUILD_DIR PREFIX [CTEST_ARGS...]}
prefix=${2:?usage: ctest-retry.sh BUILD_DIR PREFIX [CTEST_ARGS...]}
shift 2
# CTest resolves a relative --output-junit path from the build directory;
# every path here is absolute.
prefix=$(realpath -m -- "$prefix")
rm -f "$prefix".first.* "$prefix".retry.* "$prefix".first-failures.txt "$prefix".retried "$prefix".failed
: >"$prefix.retried"
: >"$prefix.failed"

# junit_fails XML: the names of the failed tests in a JUnit report.
junit_fails() {
    python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
for tc in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    if tc.get("status") not in ("run", "disabled", "notrun") and tc.find("skipped") is None:
        print(tc.get("name"))
PY
}
# junit_output XML NAME...: each named test's recorded output.
junit_output() {
    python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
want = set(sys.argv[2:])
for tc in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    if tc.get("name") in want:
        out = tc.find("system-out")
        print("===== %s: first run, %s after %s s" % (tc.get("name"), tc.get("status"), tc.get("time")))
        print((out.text if out is not None and out.text else "(no output recorded)").rstrip("\n"))
        print("===== end of %s" % tc.get("name"))
PY
}

rc=0
(cd "$build" && ctest "$@" --output-on-failure --output-junit "$prefix.first.xml") 2>&1 |
    tee "$prefix.first.log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && exit 0
if [ ! -s "$prefix.first.xml" ]; then
    echo "ctest-retry.sh: CTest failed (exit $rc) and wrote no JUnit report; nothing to run again" >&2
    exit 1
fi
mapfile -t first < <(junit_fails "$prefix.first.xml")
if [ "${#first[@]}" -eq 0 ]; then
    echo "ctest-retry.sh: CTest failed (exit $rc) with no failed test in its report" >&2
    exit 1
fi
junit_output "$prefix.first.xml" "${first[@]}" >"$prefix.first-failures.txt"
echo
echo "==> ${#first[@]} test(s) failed; each runs once more: ${first[*]}"
(cd "$build" && ctest --rerun-failed --output-on-failure --output-junit "$prefix.retry.xml") 2>&1 |
    tee "$prefix.retry.log"
mapfile -t again < <([ -s "$prefix.retry.xml" ] && junit_fails "$prefix.retry.xml")
for t in "${first[@]}"; do
    if [ ! -s "$prefix.retry.xml" ] || printf '%s\n' "${again[@]}" | grep -qxF -- "$t"; then
        echo "$t" >>"$prefix.failed"
    else
        echo "$t" >>"$prefix.retried"
    fi
done
echo
summary "$prefix"
[ -s "$prefix.failed" ] && exit 1
exit 0
