#!/usr/bin/env bash
# deb_package.sh - the Debian package, built, installed and used as an
# operator would:
# e2e-releases: 24.11
# (what it proves is sluice's own surface, the same on every release; the
# REST paths it crosses run in the suites registered on all three.)
#
#   1. `cpack -G DEB` of a RelWithDebInfo build (prefix /usr, no
#      sanitizers) gives sluice_<version>_amd64.deb whose Depends list the
#      runtime libraries;
#   2. `apt-get install ./sluice_*.deb` installs it: /usr/bin/sluice reports
#      the project's version, the systemd unit starts /usr/bin/sluice and its
#      Documentation= file exists, the docs and examples are there, and the
#      postinst made the sluice account and /etc/sluice;
#   3. the demo hetjob (deploy/testbed/requests/demo-hetjob.json) runs from
#      the installed binary to SUCCEEDED on this release's testbed;
#   4. a C++ program links the installed libsluice through pkg-config and
#      the system's default paths, and uses the version macros.
#
# The package is built once per source tree in SLUICE_DEB_BUILD (default
# <repo>/build-deb) and the whole suite holds a lock, so the suites of two
# releases never run dpkg at once.  The package is removed at the end.
# Runs as root (apt-get, dpkg).  Last line: "deb_package: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=4
NAME=deb_package
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

[ "$(id -u)" -eq 0 ] || abort "needs root (apt-get install)"
# shellcheck source=lib/deb.sh
. "$HERE/lib/deb.sh"
e2e_launch_setup deb
e2e_deb_lock
cleanup() {
    if dpkg -s sluice >/dev/null 2>&1; then
        apt-get remove -y --purge sluice >/dev/null 2>&1 || dpkg --purge sluice >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

version=$(sed -n 's/^project(sluice VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")

# ------------------------------------------------------------- 1. the package
e2e_build_deb "$work/cmake.log"
depends=""
contents=""
if [ -n "$deb" ]; then
    depends=$(dpkg-deb -f "$deb" Depends)
    contents=$(dpkg-deb -c "$deb")
fi
if [ -n "$deb" ] && grep -q 'libcurl4' <<<"$depends" && grep -q 'libjwt0' <<<"$depends" &&
    grep -q '\./usr/bin/sluice$' <<<"$contents"; then
    pass "package: $(basename "$deb"), Depends: ${depends:0:80}..."
else
    tail -n 30 "$work/cmake.log" | sed 's/^/    | /' >&2
    fail "package: cpack did not give a sluice_${version}_*.deb with the runtime Depends"
fi

# ---------------------------------------------------------- 2. apt-get install
installed=0
if [ -n "$deb" ] && apt-get install -y "$deb" >"$work/apt.log" 2>&1; then
    installed=1
fi
unit=/usr/lib/systemd/system/sluice.service
[ -f "$unit" ] || unit=/lib/systemd/system/sluice.service
doc=$(sed -n 's|^Documentation=file://||p' "$unit" 2>/dev/null || true)
if [ "$installed" -eq 1 ] && [ "$(/usr/bin/sluice version 2>/dev/null | head -n1)" != "" ] &&
    /usr/bin/sluice version | grep -q "$version" &&
    grep -q '^ExecStart=/usr/bin/sluice serve ' "$unit" &&
    [ -n "$doc" ] && [ -f "$doc" ] &&
    [ -f /usr/share/doc/sluice/README.md ] &&
    [ -f /usr/share/doc/sluice/examples/site.yaml ] &&
    ls /usr/share/man/man1/sluice.1* /usr/share/man/man5/sluice.yaml.5* >/dev/null 2>&1 &&
    getent passwd sluice >/dev/null && [ -d /etc/sluice ]; then
    pass "install: /usr/bin/sluice $version, unit runs /usr/bin/sluice, Documentation=$doc exists, sluice(1) and sluice.yaml(5) installed, account and /etc/sluice made"
else
    sed 's/^/    | /' "$work/apt.log" 2>/dev/null | tail -n 20 >&2 || true
    fail "install: installed=$installed unit=$unit doc=$doc version=$(/usr/bin/sluice version 2>&1 | head -n1)"
fi

# ------------------------------------------------- 3. the demo, installed binary
request="$work/demo.json"
sed "s/\"launch_id\": \"demo-hetjob\"/\"launch_id\": \"deb-demo-$run\"/" \
    "$REPO/deploy/testbed/requests/demo-hetjob.json" >"$request"
rc=0
if [ "$installed" -eq 1 ]; then
    timeout 300 /usr/bin/sluice launch "$request" --wait --config "$site" --state-dir "$state" \
        >"$work/demo.out" 2>&1 || rc=$?
else
    rc=127
fi
out=$(cat "$state/artifacts/deb-demo-$run/stdout.log" 2>/dev/null || true)
if [ "$rc" -eq 0 ] && grep -q '^trainer on ' <<<"$out" && grep -q '^rollout on ' <<<"$out"; then
    pass "demo: the two-pool hetjob ran to SUCCEEDED from /usr/bin/sluice"
else
    sed 's/^/    | /' "$work/demo.out" >&2 2>/dev/null || true
    fail "demo: exit $rc, output: $out"
fi

# ------------------------------------------------------ 4. a C++ consumer
cat >"$work/consumer.cpp" <<'CPP'
#include <sluice/sluice.h>
#include <cstdio>
#include <cstring>
int main()
{
    static_assert(SLUICE_VERSION_NUMBER >= SLUICE_VERSION_AT(0, 1, 0), "version macros");
    std::printf("%s\n", sluice_version());
    return std::strcmp(sluice_version(), SLUICE_VERSION_STRING) == 0 ? 0 : 3;
}
CPP
crc=0
if [ "$installed" -eq 1 ]; then
    # shellcheck disable=SC2046
    c++ -std=c++17 -Wall -Werror -o "$work/consumer" "$work/consumer.cpp" \
        $(pkg-config --cflags --libs sluice) >"$work/cxx.log" 2>&1 && "$work/consumer" >>"$work/cxx.log" 2>&1 || crc=$?
else
    crc=127
fi
if [ "$crc" -eq 0 ] && grep -qx "$version" "$work/cxx.log"; then
    pass "c++: a C++17 program links the installed libsluice through pkg-config"
else
    sed 's/^/    | /' "$work/cxx.log" >&2 2>/dev/null || true
    fail "c++: exit $crc"
fi

finish
