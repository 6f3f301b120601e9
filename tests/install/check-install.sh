#!/usr/bin/env bash
# check-install.sh BUILD_DIR SOURCE_DIR [CFLAGS] - install the build into a temporary
# prefix, then build a small consumer twice, once through pkg-config and
# once through find_package(sluice), and run both against the installed
# libsluice.  Also runs the installed `sluice version`.
set -euo pipefail
build="$1"
src="$2"
# A sanitizer build of libsluice needs its consumers linked the same way.
extra_cflags="${3:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir="$(find "$prefix" -name 'libsluice.so.*' -printf '%h\n' | head -n1)"
if [ -z "$libdir" ]; then
    echo "check-install: libsluice.so was not installed" >&2
    exit 1
fi
for f in include/sluice/sluice.h include/sluice/version.h bin/sluice; do
    [ -e "$prefix/$f" ] || { echo "check-install: missing $f" >&2; exit 1; }
done

cat >"$tmp/consumer.c" <<'C'
#include <sluice/sluice.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_errorf(&err, SLUICE_ECONFIG, "x");
    if (strcmp(sluice_err_name(err.code), "ECONFIG") != 0)
        return 2;
    printf("%s\n", sluice_version());
    return 0;
}
C

# 1. pkg-config
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046,SC2086
cc -std=c11 $extra_cflags -o "$tmp/consumer-pc" "$tmp/consumer.c" $(pkg-config --cflags --libs sluice)
LD_LIBRARY_PATH="$libdir" "$tmp/consumer-pc" >/dev/null

# 2. CMake package
mkdir -p "$tmp/cm"
cp "$tmp/consumer.c" "$tmp/cm/"
cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(sluice 0.1 REQUIRED)
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE sluice::sluice)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_FLAGS="$extra_cflags" -DCMAKE_EXE_LINKER_FLAGS="$extra_cflags" >/dev/null
cmake --build "$tmp/cm/build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/cm/build/consumer" >/dev/null

"$prefix/bin/sluice" version >/dev/null
echo "check-install: 3 passed, 0 failed"
