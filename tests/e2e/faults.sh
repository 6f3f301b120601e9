#!/usr/bin/env bash
# faults.sh - fault injection on the local testbed (issue 5): nothing lost,
# nothing duplicated, checked in the live queue and in accounting by the
# launch's marker job name and the job user.
#
#   1-3. `sluice launch --wait` SIGKILLed at each named point
#        (SLUICE_KILL_AT=before-post|after-post|after-answer) exits 137; the
#        same command run again resumes the launch, ends SUCCEEDED, and
#        exactly one job carries the launch's marker;
#   4.   random kill points from a fixed seed: SLUICE_KILL_POINTS launches
#        (default 20; 100 with --full), each SIGKILLed after a pseudo-random
#        delay, then resumed: every one ends SUCCEEDED with exactly one job;
#   5.   slurmrestd stopped for 30 s while the job finishes: the launch does
#        not end during the outage and ends SUCCEEDED once slurmrestd is
#        back (start.sh restarts it);
#   6.   the token file replaced by an expired token, then by a fresh one a
#        few seconds later: the launch ends SUCCEEDED with one job.  It uses
#        a copy of the testbed's token file (rest.jwt_file), never the
#        shared one.
#
# The site config shortens the confirmed-absence rule (absence_delay_s 5,
# absence_spacing_s 2 instead of 60 and 10) so a resume after a lost POST
# takes seconds, not 80 s.
#
# Usage: faults.sh [--full]      (as root, testbed running)
# Runs against the testbed's slurmrestd on 127.0.0.1 only.  A missing testbed
# is a failure, never a skip.  Last line: "faults: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=6
NAME=faults
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

KILL_POINTS=${SLUICE_KILL_POINTS:-20}
case "${1:-}" in
    --full) KILL_POINTS=${SLUICE_KILL_POINTS:-100} ;;
    "") ;;
    *) abort "usage: faults.sh [--full]" ;;
esac
[[ "$KILL_POINTS" =~ ^[0-9]+$ ]] || abort "SLUICE_KILL_POINTS must be a number: '$KILL_POINTS'"

SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
e2e_testbed_env
e2e_require_loopback
e2e_require_running

work=$(mktemp -d /tmp/sluice-e2e-faults.XXXXXX)
restd_stopped=0
# restart_restd: bring slurmrestd back with start.sh (idempotent), using the
# knobs the testbed was started with so nothing else changes.
restart_restd() {
    local settings="$SLUICE_TESTBED_DIR/etc/testbed.settings" k v
    (
        while IFS='=' read -r k v; do
            case "$k" in
                MIN_JOB_AGE | SLURMD_TIMEOUT | BF_INTERVAL | TOKEN_LIFESPAN) export "SLUICE_TB_$k=$v" ;;
                COMM_PARAMS) [ -n "$v" ] || export SLUICE_TB_NO_INADDR_ANY=no ;;
            esac
        done <"$settings"
        bash "$REPO/deploy/testbed/start.sh"
    ) >"$work/start.log" 2>&1
}
cleanup() {
    if [ "$restd_stopped" = 1 ]; then restart_restd || say "could not restart slurmrestd"; fi
    jobs -p | xargs -r kill 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
run="r$(date +%s)$$"
site="$work/site.yaml"
bash "$REPO/deploy/testbed/site-config.sh" >"$site"
FAST=(--set submit.absence_delay_s=5 --set submit.absence_spacing_s=2)
since=$(date -d '-10 minutes' +%Y-%m-%dT%H:%M:%S)

# request ID COMMAND ARGS_JSON: write $work/ID.json for launch ID.
request() {
    cat >"$work/$1.json" <<JSON
{"launch_id": "$1", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "$2", "args": $3, "time_limit": 2,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 100}]}
JSON
}
# launch ID [ARGS...]: `sluice launch --wait` of $work/ID.json in the store
# $work/state; sets $rc, appends the output to $work/ID.out.
launch() {
    local id=$1
    shift
    rc=0
    timeout 300 "$SLUICE" launch "$work/$id.json" --wait --config "$site" --state-dir "$work/state" \
        "${FAST[@]}" "$@" >>"$work/$id.out" 2>&1 || rc=$?
}
show() { sed 's/^/    | /' "$work/$1.out" >&2 || true; }
count_jobs() { e2e_count_jobs "$1"; }
# settle ID: count_jobs once accounting has caught up (up to 10 s for 1).
settle() {
    local i n
    for i in 1 2 3 4 5 6 7 8 9 10; do
        n=$(count_jobs "$1")
        [ "$n" -ge 1 ] && break
        sleep 1
    done
    echo "$n"
}
now_ms() { date +%s%3N; }

# ------------------------------------------------- 1-3. named kill points
for point in before-post after-post after-answer; do
    id="kill-$point-$run"
    request "$id" /bin/true '[]'
    rc=0
    # (bash reports the expected SIGKILL on its own stderr: dropped here)
    {
        SLUICE_KILL_AT=$point "$SLUICE" launch "$work/$id.json" --wait --config "$site" \
            --state-dir "$work/state" "${FAST[@]}" >>"$work/$id.out" 2>&1 || rc=$?
    } 2>/dev/null
    rc_kill=$rc
    t0=$(now_ms)
    launch "$id"
    took=$(($(now_ms) - t0))
    n=$(settle "$id")
    if [ "$rc_kill" -eq 137 ] && [ "$rc" -eq 0 ] && [ "$n" -eq 1 ]; then
        pass "SIGKILL at $point: resumed to SUCCEEDED in $((took / 1000)).$((took % 1000 / 100)) s, exactly one job"
    else
        fail "SIGKILL at $point (killed run exit $rc_kill want 137, resume exit $rc want 0, jobs $n want 1)"
        show "$id"
    fi
done

# ------------------------------------------------ 4. random kill points
RANDOM=42
bad=0
t0=$(now_ms)
for ((i = 0; i < KILL_POINTS; i++)); do
    id="rand$i-$run"
    request "$id" /bin/true '[]'
    delay_ms=$((RANDOM % 2500))
    "$SLUICE" launch "$work/$id.json" --wait --config "$site" --state-dir "$work/state" \
        "${FAST[@]}" >>"$work/$id.out" 2>&1 &
    pid=$!
    sleep "$((delay_ms / 1000)).$(printf '%03d' $((delay_ms % 1000)))"
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    launch "$id"
    n=$(settle "$id")
    if [ "$rc" -ne 0 ] || [ "$n" -ne 1 ]; then
        say "  $id (killed after $delay_ms ms): resume exit $rc, jobs $n"
        show "$id"
        bad=$((bad + 1))
    fi
done
took=$(($(now_ms) - t0))
if [ "$bad" -eq 0 ]; then
    pass "$KILL_POINTS random SIGKILLs (seed 42, 0-2.5 s): every launch SUCCEEDED with one job ($((took / 1000)) s)"
else
    fail "random SIGKILLs: $bad of $KILL_POINTS launches lost or duplicated"
fi

# ------------------------------------------------ 5. slurmrestd outage
id="restd-$run"
request "$id" /bin/sleep '["4"]'
launch "$id" &
bg=$!
running=0
for _ in $(seq 1 60); do
    if "$SLUICE" status --state-dir "$work/state" "$id" 2>/dev/null | grep -q '^state      RUNNING'; then
        running=1
        break
    fi
    sleep 0.5
done
restd_pidfile="$SLUICE_TESTBED_DIR/run/rest/slurmrestd.pid"
alive_during=0
if [ "$running" -eq 1 ] && restd_pid=$(cat "$restd_pidfile") && kill -TERM "$restd_pid"; then
    restd_stopped=1
    t0=$(now_ms)
    for _ in $(seq 1 50); do kill -0 "$restd_pid" 2>/dev/null || break; sleep 0.1; done
    sleep 30
    if kill -0 "$bg" 2>/dev/null && ! "$SLUICE" status --state-dir "$work/state" "$id" |
        grep -q '^state      DONE'; then
        alive_during=1
    fi
    restart_restd || say "start.sh failed: $(tail -n 5 "$work/start.log")"
    restd_stopped=0
fi
wait "$bg" || true
rc=$(grep -c 'result=SUCCEEDED' "$work/$id.out" || true)
n=$(settle "$id")
if [ "$running" -eq 1 ] && [ "$alive_during" -eq 1 ] && [ "$rc" -eq 1 ] && [ "$n" -eq 1 ]; then
    pass "slurmrestd down 30 s while the job finished: no end during the outage, SUCCEEDED after ($((($(now_ms) - t0) / 1000)) s)"
else
    fail "slurmrestd outage (running=$running, alive during outage=$alive_during, succeeded=$rc, jobs $n)"
    show "$id"
fi

# ------------------------------------------------ 6. expired token
id="token-$run"
request "$id" /bin/true '[]'
token="$work/token.jwt"
install -m 0600 /dev/null "$token"
# A token that lives 1 s, minted by slurmctld (scontrol token), then left to
# expire.  (`sluice token mint` refuses the testbed's key file: it belongs to
# SlurmUser, not to root.)
expired_ok=0
if "$REPO/deploy/testbed/env.sh" --token 1 | tr -d '\n' >"$token" && [ -s "$token" ]; then
    expired_ok=1
fi
sleep 2
left=$("$SLUICE" token show "$token" -o json 2>/dev/null | jq -r '.expires_in' 2>/dev/null || echo none)
if ! [[ "$left" =~ ^-[0-9]+$ ]]; then
    expired_ok=0 # not expired: the case would prove nothing
fi
t0=$(now_ms)
launch "$id" --set "rest.jwt_file=$token" &
bg=$!
sleep 5
alive_during=0
kill -0 "$bg" 2>/dev/null && alive_during=1
"$REPO/deploy/testbed/env.sh" --token 3600 | tr -d '\n' >"$token.new" || true
chmod 0600 "$token.new"
mv -f "$token.new" "$token"
wait "$bg" || true
took=$(($(now_ms) - t0))
ok=$(grep -c 'result=SUCCEEDED' "$work/$id.out" || true)
n=$(settle "$id")
if [ "$expired_ok" -eq 1 ] && [ "$alive_during" -eq 1 ] && [ "$ok" -eq 1 ] && [ "$n" -eq 1 ]; then
    pass "expired token, fresh one 5 s later: SUCCEEDED with one job ($((took / 1000)) s)"
else
    fail "expired token (expired token made=$expired_ok, alive with it=$alive_during, succeeded=$ok, jobs $n)"
    show "$id"
fi

finish
