#!/usr/bin/env bash
# check-runtime-deps.sh SOURCE_DIR SLUICE LIBSLUICE - the packages that
# `deploy/install-deps.sh --runtime` installs are the ones the built `sluice`
# command and libsluice need: every shared library either names directly
# (ELF NEEDED) comes from one of those packages or from the C runtime every
# Debian host has (libc6, libgcc-s1).  Also checks that the option groups
# list what they say: --runtime names no compiler, -dev package or daemon,
# and --all is --build plus --testbed.
set -euo pipefail
src=$1
shift
deps="$src/deploy/install-deps.sh"
fail=0

mapfile -t runtime < <(bash "$deps" --list --runtime)
[ "${#runtime[@]}" -gt 0 ] || { echo "runtime-deps: --runtime lists no package"; exit 1; }
for p in "${runtime[@]}"; do
    case "$p" in
    *-dev | build-essential | cmake | clang* | gcc* | slurm* | mariadb* | postgresql* | chromium* | munge | nodejs | npm)
        echo "runtime-deps: --runtime lists $p, which a host that only runs sluice does not need"
        fail=1
        ;;
    esac
done
in_runtime() {
    local x
    for x in "${runtime[@]}" libc6 libgcc-s1; do
        [ "$x" = "$1" ] && return 0
    done
    return 1
}
for bin in "$@"; do
    [ -e "$bin" ] || { echo "runtime-deps: $bin is missing (build first)"; exit 1; }
    mapfile -t needed < <(objdump -p "$bin" | awk '$1 == "NEEDED" { print $2 }')
    [ "${#needed[@]}" -gt 0 ] || { echo "runtime-deps: $bin names no shared library"; exit 1; }
    for so in "${needed[@]}"; do
        # libsluice is ours; a sanitizer's runtime comes with a test build
        # (SLUICE_SANITIZE), which is never the one installed
        case "$so" in libsluice.so* | libasan.so* | libubsan.so* | libtsan.so* | liblsan.so*) continue ;; esac
        path=$(ldd "$bin" | awk -v so="$so" '$1 == so { print $3 }')
        if [ -z "$path" ]; then
            echo "runtime-deps: $(basename "$bin"): $so does not resolve"
            fail=1
            continue
        fi
        real=$(readlink -f "$path")
        pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$real" 2>/dev/null || true)
        pkg=${pkg%%:*}
        if [ -z "$pkg" ]; then
            echo "runtime-deps: $(basename "$bin"): $so ($path) belongs to no Debian package"
            fail=1
        elif ! in_runtime "$pkg"; then
            echo "runtime-deps: $(basename "$bin") needs $so from $pkg, which install-deps.sh --runtime does not install"
            fail=1
        fi
    done
done

all=$(bash "$deps" --list --all | sort -u)
both=$(
    bash "$deps" --list --build
    bash "$deps" --list --testbed
)
both=$(sort -u <<<"$both")
if [ "$all" != "$both" ]; then
    echo "runtime-deps: --all is not --build plus --testbed"
    diff <(echo "$all") <(echo "$both") || true
    fail=1
fi
[ "$fail" -eq 0 ] && echo "runtime-deps: ${#runtime[@]} runtime packages cover $# binaries"
exit "$fail"
