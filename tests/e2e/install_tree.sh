#!/usr/bin/env bash
# install_tree.sh - what the container's runtime stage gets, tested without
# a container engine (deploy/container/Containerfile):
# e2e-releases: 22.05
# (what it proves is sluice's own surface, the same on every release; the
# REST paths it crosses run in the suites registered on all three.)
#
#   1. `cmake --install` into an empty root (DESTDIR) yields the files the
#      runtime stage copies: /usr/local/bin/sluice and libsluice.so*;
#   2. ldd of the installed binary and library resolves every library, none
#      from the build or source tree, and each one (dpkg -S) belongs to a
#      package of the Containerfile's runtime list or to what those depend
#      on; every listed library package is really needed (no drift either
#      way);
#   3. a two-pool hetjob (a100 + h100 series) launched with `sluice launch
#      --wait` from the installed binary, LD_LIBRARY_PATH = the installed
#      lib only, succeeds on the testbed and each pool sees the other;
#   4. the installed `sluice serve --socket` answers `sluice probe` (the
#      container's HEALTHCHECK) and `probe --ready` against the testbed, and
#      exits 0 on SIGTERM; afterwards probe exits 69.
#
# A sanitizer build links libasan/libubsan (and through them libstdc++):
# those are allowed, and named, only when the build directory was
# configured with SLUICE_SANITIZE=ON.
# A missing testbed is a failure, never a skip.  Last line:
# "install_tree: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=4
NAME=install_tree
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

BUILD=${SLUICE_BUILD_DIR:-$REPO/build}
CONTAINERFILE=${SLUICE_CONTAINERFILE:-$REPO/deploy/container/Containerfile}
[ -f "$BUILD/CMakeCache.txt" ] || abort "no build directory at $BUILD (set SLUICE_BUILD_DIR)"
for tool in ldd dpkg dpkg-query python3; do
    command -v "$tool" >/dev/null || abort "$tool is not installed (deploy/install-deps.sh)"
done
e2e_testbed_env
e2e_require_loopback
e2e_require_running

work=$(mktemp -d /tmp/sluice-e2e-install.XXXXXX)
serve_pid=
cleanup() {
    if [ -n "$serve_pid" ]; then kill -TERM "$serve_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
root="$work/root"
run="i$(date +%s)$$"

# ------------------------------------------------------------ 1. the tree
DESTDIR="$root" cmake --install "$BUILD" --prefix /usr/local >"$work/install.log" 2>&1 ||
    abort "cmake --install failed: $(tail -3 "$work/install.log")"
BIN="$root/usr/local/bin/sluice"
LIBDIR="$root/usr/local/lib"
mapfile -t libs < <(find "$LIBDIR" -maxdepth 1 -name 'libsluice.so*' -type f)
if [ -x "$BIN" ] && [ "${#libs[@]}" -ge 1 ] &&
    grep -q 'COPY --from=build /stage/usr/local/bin/sluice /usr/local/bin/sluice' "$CONTAINERFILE" &&
    grep -q 'COPY --from=build /stage/usr/local/lib/libsluice.so\* /usr/local/lib/' "$CONTAINERFILE"; then
    pass "install tree holds what the runtime stage copies (bin/sluice, ${libs[*]##*/})"
else
    fail "install tree or Containerfile COPY lines differ (bin: $BIN, libs: ${libs[*]:-none})"
fi

# ------------------------------------------------------ 2. ldd vs packages
# The runtime stage's package list, read from the Containerfile itself.
runtime_pkgs=$(python3 - "$CONTAINERFILE" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
stage = text.split(" AS runtime", 1)[1]
m = re.search(r"apt-get install -y --no-install-recommends ([^&]*)&&", stage)
print(" ".join(m.group(1).split()) if m else "")
PY
)
[ -n "$runtime_pkgs" ] || abort "no runtime package list found in $CONTAINERFILE"
sanitize=$(sed -n 's/^SLUICE_SANITIZE:BOOL=//p' "$BUILD/CMakeCache.txt")
# A sanitizer build also needs the sanitizer runtimes (and what they pull
# in, libstdc++); a Release build, like the container's, must not.
extra_pkgs=
if [ "$sanitize" = ON ]; then
    extra_pkgs="libasan8 libubsan1"
fi

# What the listed packages pull in (Depends and Pre-Depends, recursively,
# as installed here), plus libc6, which every Debian image has.
closure=$(python3 - $runtime_pkgs $extra_pkgs <<'PY'
import subprocess, sys, re
seen, todo = set(), list(sys.argv[1:]) + ["libc6"]
while todo:
    p = todo.pop()
    if p in seen:
        continue
    seen.add(p)
    r = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", p],
                       capture_output=True, text=True)
    for alt in r.stdout.split(","):
        for name in alt.split("|"):
            name = re.sub(r"\(.*?\)|:any|\s", "", name)
            if name:
                todo.append(name)
print("\n".join(sorted(seen)))
PY
)
pkg_of() { # the Debian package that owns a library path (merged /usr aware)
    local f p
    f=$(readlink -f "$1")
    for p in "$f" "${f#/usr}" "/usr$f" "$1"; do
        dpkg -S "$p" 2>/dev/null | head -n1 | cut -d: -f1 && return 0
    done
    return 1
}
ldd_bad=()
declare -A used=()
for obj in "$BIN" "${libs[@]}"; do
    while read -r line; do
        case "$line" in
            *"not found"*) ldd_bad+=("$(basename "$obj"): $line"); continue ;;
            *linux-vdso* | *ld-linux*) continue ;;
        esac
        path=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) { print $i; exit } }' <<<"$line")
        [ -n "$path" ] || continue
        case "$path" in
            "$BUILD"/* | "$REPO"/*) ldd_bad+=("$(basename "$obj") uses the build tree: $path"); continue ;;
            "$LIBDIR"/*) continue ;;
        esac
        pkg=$(pkg_of "$path") || { ldd_bad+=("$path: no package owns it"); continue; }
        used[$pkg]=1
        grep -qxF "$pkg" <<<"$closure" ||
            ldd_bad+=("$path from $pkg, outside the runtime list and its dependencies")
    done < <(LD_LIBRARY_PATH="$LIBDIR" ldd "$obj")
done
for p in $runtime_pkgs; do
    [ "$p" = ca-certificates ] && continue
    [ -n "${used[$p]:-}" ] || ldd_bad+=("runtime list names $p but no installed object links it")
done
if [ "${#ldd_bad[@]}" -eq 0 ]; then
    pass "ldd: ${#used[@]} packages, all within the runtime list [$runtime_pkgs]${extra_pkgs:+ + sanitizers [$extra_pkgs]} and their dependencies"
else
    fail "ldd vs runtime list: $(printf '%s; ' "${ldd_bad[@]}")"
fi

# ---------------------------------------------- 3. hetjob from the tree
# Only the installed lib on the library path, and a scrubbed environment.
sl() {
    env -i PATH=/usr/bin:/bin HOME="$work" LD_LIBRARY_PATH="$LIBDIR" \
        ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" "$BIN" "$@"
}
site="$work/site.yaml"
state="$work/state"
bash "$REPO/deploy/testbed/site-config.sh" >"$site"
cat >"$work/het.json" <<JSON
{"launch_id": "inst-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "time_limit": 5,
 "pools": [
  {"name": "trainer", "gpu_series": "a100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200,
   "args": ["-c", "echo trainer=\$SLURMD_NODENAME sees rollout=\$SLUICE_POOL_ROLLOUT_HOST"]},
  {"name": "rollout", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200,
   "args": ["-c", "echo rollout=\$SLURMD_NODENAME sees trainer=\$SLUICE_POOL_TRAINER_HOST"]}]}
JSON
rc=0
timeout 300 env -i PATH=/usr/bin:/bin HOME="$work" LD_LIBRARY_PATH="$LIBDIR" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
    "$BIN" launch "$work/het.json" --wait --config "$site" --state-dir "$state" \
    >"$work/het.out" 2>&1 || rc=$?
out=$(cat "$state/artifacts/inst-$run/stdout.log" 2>/dev/null || true)
if [ "$rc" -eq 0 ] && grep -q '^trainer=tb1 sees rollout=tb[23]$' <<<"$out" &&
    grep -q '^rollout=tb[23] sees trainer=tb1$' <<<"$out"; then
    pass "hetjob from the installed binary SUCCEEDED on both series"
else
    fail "hetjob from the installed binary (exit $rc): $out"
    sed 's/^/    | /' "$work/het.out" >&2
fi

# ----------------------------------------------- 4. serve + probe (HEALTHCHECK)
sock="$work/sluice.sock"
env -i PATH=/usr/bin:/bin HOME="$work" LD_LIBRARY_PATH="$LIBDIR" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
    "$BIN" serve --config "$site" --state-dir "$state" --socket "$sock" \
    >"$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 100); do
    [ -S "$sock" ] && break
    sleep 0.1
done
alive=0 ready=0 serve_rc=-1 after=0
sl probe --server "unix:$sock" >"$work/probe.out" 2>&1 || alive=$?
sl probe --ready --server "unix:$sock" >>"$work/probe.out" 2>&1 || ready=$?
kill -TERM "$serve_pid"
wait "$serve_pid" && serve_rc=0 || serve_rc=$?
serve_pid=
sl probe --server "unix:$sock" --timeout 2 >>"$work/probe.out" 2>&1 || after=$?
if [ "$alive" -eq 0 ] && [ "$ready" -eq 0 ] && [ "$serve_rc" -eq 0 ] && [ "$after" -eq 69 ]; then
    pass "installed serve: probe 0, probe --ready 0, SIGTERM exit 0, probe after stop 69"
else
    fail "serve/probe: healthz $alive, readyz $ready, serve exit $serve_rc, probe after stop $after"
    sed 's/^/    | /' "$work/probe.out" "$work/serve.log" >&2
fi

finish
