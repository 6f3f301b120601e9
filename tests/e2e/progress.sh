#!/usr/bin/env bash
# progress.sh - what `sluice launch --wait` shows while a launch waits or
# runs, on the local testbed:
#
#   1. off a terminal, with --heartbeat 1: heartbeat lines on stdout between
#      the transitions, each with the state, the elapsed time, the nodes once
#      RUNNING and the Slurm job id; none with -o json (those lines are the
#      API's transitions only);
#   2. on a terminal (script(1) gives the command a pty): one status line on
#      stderr, redrawn in place ("\r" + erase), that shows the nodes while
#      RUNNING and is erased before the final line;
#   3. with --server (a `sluice serve` on a Unix socket): heartbeat lines at
#      the stream's keep-alives (about every 10 s of silence) too.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only.  Last
# line: "progress: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=3
NAME=progress
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup progress
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
command -v script >/dev/null || abort "script(1) (util-linux) is missing"

request() {
    cat >"$work/$1.json" <<JSON
{"launch_id": "$1-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/sleep", "args": ["${2:-6}"], "time_limit": 5,
 "pools": [{"name": "main", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 100}]}
JSON
}

# ------------------------------------------------------- 1. heartbeat lines
request beat
rc=0
timeout 300 "$SLUICE" launch "$work/beat.json" --wait --heartbeat 1 --config "$site" \
    --state-dir "$state" >"$work/beat.out" 2>"$work/beat.err" || rc=$?
running=$(grep -cE '^\[ *[0-9.]+s\] still +RUNNING +[0-9.]+s  on tb[0-9]+ \(job [0-9]+\)$' \
    "$work/beat.out" || true)
request json
jrc=0
timeout 300 "$SLUICE" launch "$work/json.json" --wait --heartbeat 1 -o json --config "$site" \
    --state-dir "$state" >"$work/json.out" 2>&1 || jrc=$?
if [ "$rc" -eq 0 ] && [ "$running" -ge 2 ] && [ "$jrc" -eq 0 ] && ! grep -q 'still' "$work/json.out" &&
    tail -n 1 "$work/beat.out" | grep -q 'DONE'; then
    pass "heartbeat: $running 'still RUNNING on <node> (job <id>)' lines at 1 s, none with -o json"
else
    fail "heartbeat (exit $rc/$jrc, running lines $running)"
    sed 's/^/    | /' "$work/beat.out" "$work/json.out" >&2
fi

# ----------------------------------------------------- 2. the status line
request tty
trc=0
SLUICE_CMD="$SLUICE launch $work/tty.json --wait --config $site --state-dir $state" \
    timeout 300 script -qefc 'eval "$SLUICE_CMD"' "$work/tty.typescript" >"$work/tty.out" 2>&1 || trc=$?
# The pty merges stdout and stderr: the status line is drawn with "\r\e[K".
draws=$(grep -ao $'\r\e\\[KRUNNING *[0-9.]*s  on tb[0-9]* (job [0-9]*)' "$work/tty.out" | wc -l || true)
if [ "$trc" -eq 0 ] && [ "$draws" -ge 2 ] && grep -aq 'DONE' "$work/tty.out" &&
    ! grep -aq 'still' "$work/tty.out"; then
    pass "status line: redrawn $draws times with the node while RUNNING, erased before DONE"
else
    fail "status line (exit $trc, draws $draws)"
    sed 's/^/    | /' "$work/tty.out" | cat -v >&2
fi

# ------------------------------------------------------ 3. with --server
sock="$work/api.sock"
"$SLUICE" serve --config "$site" --state-dir "$work/served" --socket "$sock" \
    >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
    [ -S "$sock" ] && break
    sleep 0.1
done
request remote 25
src=0
timeout 300 "$SLUICE" launch "$work/remote.json" --wait --heartbeat 1 --server "unix:$sock" \
    >"$work/remote.out" 2>&1 || src=$?
beats=$(grep -cE '^\[ *[0-9.]+s\] still +RUNNING +[0-9.]+s  on tb[0-9]+ \(job [0-9]+\)$' \
    "$work/remote.out" || true)
if [ "$src" -eq 0 ] && [ "$beats" -ge 1 ] && tail -n 1 "$work/remote.out" | grep -q 'DONE'; then
    pass "with --server: $beats heartbeat line(s) at the stream's keep-alives, then DONE"
else
    fail "with --server (exit $src, heartbeats $beats)"
    sed 's/^/    | /' "$work/remote.out" "$work/serve.log" >&2
fi

finish
