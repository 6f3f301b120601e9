#!/usr/bin/env bash
# apptainer_real.sh - does a REAL `apptainer exec` work on this machine?
# apptainer_profile.sh runs profile `apptainer` through a stand-in; this
# probe says whether the real binary could take its place, and when it can,
# runs apptainer_profile.sh again with it.
#
#   - no apptainer (SLUICE_E2E_APPTAINER, else `apptainer` in PATH), no test
#     image, or a failing `apptainer exec IMAGE true`: one PASS whose line
#     says "real apptainer: not usable here: <reason>" (never a CI failure;
#     a second or so when apptainer is absent, no testbed needed);
#   - a working apptainer: apptainer_profile.sh with
#     SLUICE_E2E_APPTAINER=<its path> and SLUICE_E2E_APPTAINER_IMAGE=<a tiny
#     SIF with bash, cat and grep>, and this test passes only when that run
#     passes.  For a release in a root the same path must exist in the root.
#
# The tiny SIF is SLUICE_E2E_APPTAINER_IMAGE when set, else built here with
# `apptainer build` from a directory holding the host's bash, cat, grep,
# true and their libraries.  Nothing is installed.  Last line:
# "apptainer_real@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=1
NAME=apptainer_real
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

not_usable() {
    pass "real apptainer: not usable here: $*"
    finish
}

apptainer=${SLUICE_E2E_APPTAINER:-$(command -v apptainer || true)}
if [ -z "$apptainer" ]; then
    not_usable "apptainer is not installed (none in PATH, SLUICE_E2E_APPTAINER unset)"
fi
[ -x "$apptainer" ] || not_usable "$apptainer is not an executable file"

work=$(mktemp -d /tmp/sluice-e2e-apptainer-real.XXXXXX)
trap 'rm -rf "$work"' EXIT
# first_error LOG: the first error line of LOG (else its first line).
first_error() {
    local line
    line=$(grep -m1 -E 'FATAL|ERROR|[Ee]rror' "$1" || head -n1 "$1")
    printf '%s\n' "${line:-exit status only, no output}"
}

# ------------------------------------------------------ a tiny test image
image=${SLUICE_E2E_APPTAINER_IMAGE:-}
if [ -z "$image" ]; then
    rootfs="$work/rootfs"
    mkdir -p "$rootfs/tmp" "$rootfs/etc" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/home"
    for tool in bash cat grep true; do
        p=$(type -P "$tool") || not_usable "cannot build a test image: no $tool on the host"
        for f in "$p" $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*' || true); do
            mkdir -p "$rootfs$(dirname "$f")"
            cp -L "$f" "$rootfs$f"
        done
        mkdir -p "$rootfs/bin"
        [ -e "$rootfs/bin/$tool" ] || ln -s "$p" "$rootfs/bin/$tool"
    done
    image="$work/tiny.sif"
    if ! timeout 120 "$apptainer" build "$image" "$rootfs" >"$work/build.log" 2>&1; then
        not_usable "cannot build a test image with $apptainer build: $(first_error "$work/build.log")"
    fi
fi
[ -f "$image" ] || not_usable "test image $image is not a file"

# --------------------------------------------------------- the probe
if ! timeout 60 "$apptainer" exec --containall "$image" true >"$work/exec.log" 2>&1; then
    not_usable "$apptainer exec $image true failed: $(first_error "$work/exec.log")"
fi
say "real apptainer works here: $apptainer ($("$apptainer" --version 2>/dev/null || echo '?'))"

# The jobs run in the release's world: for a release in a root, the same
# path must exist there.
e2e_testbed_env
clu_store=${SLUICE_TB_CLUSTER_STORAGE_ROOT:-$SLUICE_TB_STORAGE_ROOT}
node_root=
if [ "$SLUICE_TB_STORAGE_ROOT" != "$clu_store" ]; then
    node_root=${SLUICE_TB_STORAGE_ROOT%"$clu_store"}
fi
if [ -n "$node_root" ] && [ ! -x "$node_root$apptainer" ]; then
    not_usable "$apptainer works on the host but is not installed in the $SLUICE_TB_RELEASE root ($node_root)"
fi

# --------------------------------------- apptainer_profile.sh, for real
rc=0
SLUICE_E2E_APPTAINER=$apptainer SLUICE_E2E_APPTAINER_IMAGE=$image \
    bash "$HERE/apptainer_profile.sh" >"$work/profile.out" 2>&1 || rc=$?
sed 's/^/    | /' "$work/profile.out"
if [ "$rc" -eq 0 ]; then
    pass "real apptainer: apptainer_profile passed with $apptainer ($(tail -n1 "$work/profile.out"))"
else
    fail "real apptainer: apptainer_profile failed with $apptainer (exit $rc): $(tail -n1 "$work/profile.out")"
fi
finish
