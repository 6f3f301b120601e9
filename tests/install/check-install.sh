#!/usr/bin/env bash
# check-install.sh BUILD_DIR SOURCE_DIR [CFLAGS] - install the build into a temporary
# prefix, then build a small consumer as C and as C++, each through
# pkg-config and through find_package(sluice), and run all four against the
# installed libsluice.  Also runs the installed `sluice version`.
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

# One consumer source, built as C and as C++: every public header must be
# usable from both (extern "C" linkage, no C-only syntax), and the version
# macros must be numbers that agree with the library's run-time string.
cat >"$tmp/consumer.c" <<'C'
#include <sluice/sluice.h>
#include <stdio.h>
#include <string.h>
#if !defined(SLUICE_VERSION_MAJOR) || !defined(SLUICE_VERSION_NUMBER)
#error "sluice/version.h did not define the version macros"
#endif
#if SLUICE_VERSION_NUMBER < SLUICE_VERSION_AT(0, 1, 0)
#error "SLUICE_VERSION_NUMBER is not a number of at least 0.1.0"
#endif
int main(void)
{
    char want[64];
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_errorf(&err, SLUICE_ECONFIG, "x");
    if (strcmp(sluice_err_name(err.code), "ECONFIG") != 0)
        return 2;
    snprintf(want, sizeof want, "%d.%d.%d", SLUICE_VERSION_MAJOR, SLUICE_VERSION_MINOR,
             SLUICE_VERSION_PATCH);
    if (strcmp(want, SLUICE_VERSION_STRING) != 0 || strcmp(sluice_version(), SLUICE_VERSION_STRING) != 0) {
        fprintf(stderr, "version mismatch: macros %s, string %s, library %s\n", want,
                SLUICE_VERSION_STRING, sluice_version());
        return 3;
    }
    printf("%s\n", sluice_version());
    return 0;
}
C
cp "$tmp/consumer.c" "$tmp/consumer.cpp"

passed=0
# 1. pkg-config, C and C++
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046,SC2086
cc -std=c11 $extra_cflags -o "$tmp/consumer-pc" "$tmp/consumer.c" $(pkg-config --cflags --libs sluice)
LD_LIBRARY_PATH="$libdir" "$tmp/consumer-pc" >/dev/null
passed=$((passed + 1))
# shellcheck disable=SC2046,SC2086
c++ -std=c++17 -Wall -Werror $extra_cflags -o "$tmp/consumer-pc-cxx" "$tmp/consumer.cpp" \
    $(pkg-config --cflags --libs sluice)
LD_LIBRARY_PATH="$libdir" "$tmp/consumer-pc-cxx" >/dev/null
passed=$((passed + 1))

# 2. CMake package, C and C++
for lang in C CXX; do
    d="$tmp/cm-$lang"
    mkdir -p "$d"
    if [ "$lang" = C ]; then cp "$tmp/consumer.c" "$d/consumer.c"; file=consumer.c; else
        cp "$tmp/consumer.cpp" "$d/consumer.cpp"; file=consumer.cpp; fi
    cat >"$d/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.20)
project(consumer $lang)
find_package(sluice 0.1 REQUIRED)
add_executable(consumer $file)
target_link_libraries(consumer PRIVATE sluice::sluice)
CM
    cmake --no-warn-unused-cli -S "$d" -B "$d/build" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_C_FLAGS="$extra_cflags" -DCMAKE_CXX_FLAGS="$extra_cflags" \
        -DCMAKE_EXE_LINKER_FLAGS="$extra_cflags" >/dev/null
    cmake --build "$d/build" >/dev/null
    LD_LIBRARY_PATH="$libdir" "$d/build/consumer" >/dev/null
    passed=$((passed + 1))
done

"$prefix/bin/sluice" version >/dev/null
passed=$((passed + 1))
echo "check-install: $passed passed, 0 failed"
