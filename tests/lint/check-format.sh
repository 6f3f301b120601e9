#!/usr/bin/env bash
# check-format.sh SRC_DIR - fail when any C file differs from .clang-format.
set -euo pipefail
src="${1:-.}"
cd "$src"
if ! command -v clang-format >/dev/null; then
    echo "check-format: clang-format is not installed (deploy/install-deps.sh installs it)" >&2
    exit 1
fi
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h' '*.h.in' 2>/dev/null ||
                     find src include tests bench -name '*.[ch]')
if [ "${#files[@]}" -eq 0 ]; then
    echo "check-format: no C files found under $src" >&2
    exit 1
fi
bad=0
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    # An untracked build tree under another name than build*/ (its
    # generated sources are not ours to format): its top has CMakeCache.txt.
    top="${f%%/*}"
    if [ "$top" != "$f" ] && [ -f "$top/CMakeCache.txt" ]; then
        continue
    fi
    if ! clang-format --dry-run -Werror --style=file "$f" >/dev/null 2>&1; then
        echo "check-format: $f is not formatted (run: clang-format -i $f)"
        bad=$((bad + 1))
    fi
done
echo "check-format: $((${#files[@]} - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
