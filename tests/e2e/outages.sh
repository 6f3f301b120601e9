#!/usr/bin/env bash
# outages.sh - daemon outages that need testbed knobs other than the
# defaults, on a separate testbed instance this test brings up and purges
# itself (SLUICE_E2E_OUTAGE_DIR, default /var/tmp/sluice-tb-outages, and
# SLUICE_E2E_OUTAGE_PORT_BASE, default 16870 + 20 per
# release; MinJobAge 5, SlurmdTimeout 10):
#
#   1. NODE_FAIL: the slurmd of the node running a job is killed; slurmctld
#      declares the node down after SlurmdTimeout and the launch ends
#      INFRASTRUCTURE_ERROR (104) with reason NODE_FAIL;
#   2. a launch whose job left slurmctld (MinJobAge 5) while the launch
#      was paused, resumed with slurmdbd down (process gone, port refused):
#      its accounting read goes unanswered and it does not end on missing
#      accounting; once slurmdbd is back it ends SUCCEEDED with exactly one
#      job, its end observed by the accounting read (the event's source);
#   3. slurmrestd down when the launch is submitted: the refused connect is
#      a proven non-submission, retried at once with backoff; once
#      slurmrestd is back (8 s later) the launch gets its job on attempt 1,
#      long before the absence rule (60 s) could have allowed a 2nd attempt,
#      and exactly one job exists;
#   4. slurmrestd started without its slurmdbd plugin: `sluice check` says
#      there is no accounting (FAIL, exit 69), not "ok (HTTP 404)";
#   5. (run before 4) slurmrestd stopped for 30 s while a launch runs: the
#      log has exactly one warning line for the outage and one for the
#      recovery, each with its timestamp, and the launch ends SUCCEEDED.
#
# Adds a cold testbed start (about 25 s) and a purge to its cases.  Runs as
# root on 127.0.0.1 only.  A testbed that does not come up is a failure.
# Last line: "outages: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=5
NAME=outages
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
# This instance only: its own port block per release, clear of every
# release's main testbed (16810, 16830, 16850).
case "${SLUICE_TB_RELEASE:-22.05}" in
    24.11) outage_port_base=16890 ;;
    26.05) outage_port_base=16910 ;;
    *) outage_port_base=16870 ;;
esac
export SLUICE_TB_MIN_JOB_AGE=5 SLUICE_TB_SLURMD_TIMEOUT=10
stopped_pid=""
# a launch paused by case 2 is resumed, so that it can be stopped
e2e_cleanup_hook() { [ -z "$stopped_pid" ] || kill -CONT "$stopped_pid" 2>/dev/null || true; }
e2e_own_testbed outages "${SLUICE_E2E_OUTAGE_DIR:-/var/tmp/sluice-tb-outages}" \
    "${SLUICE_E2E_OUTAGE_PORT_BASE:-$outage_port_base}"

# request ID COMMAND ARGS_JSON: one h100 pool.
request() {
    cat >"$work/$1.json" <<JSON
{"launch_id": "$1", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "$2", "args": $3, "time_limit": 5,
 "pools": [{"name": "main", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 100}]}
JSON
}
launch() {
    local rc=0
    timeout 300 "$SLUICE" launch "$work/$1.json" --wait --config "$site" \
        --state-dir "$work/state-$1" >"$work/$1.out" 2>&1 || rc=$?
    echo "$rc" >"$work/$1.rc"
}
rc_of() { cat "$work/$1.rc" 2>/dev/null || echo none; }
show() { sed 's/^/    | /' "$work/$1.out" >&2 || true; }
state_of() {
    "$SLUICE" status --state-dir "$work/state-$1" "$1" 2>/dev/null | sed -n 's/^state      //p'
}
wait_running() {
    local i
    for ((i = 0; i < 120; i++)); do
        [ "$(state_of "$1")" = RUNNING ] && return 0
        sleep 0.5
    done
    return 1
}
count_jobs() { e2e_count_jobs "$1"; }
pidfile() { echo "$SLUICE_TESTBED_DIR/run/$1"; }

# ------------------------------------------------------------- 1. NODE_FAIL
id="nodefail-$run"
request "$id" /bin/sleep '["120"]'
t1=$(date +%s)
launch "$id" &
bg=$!
node=""
if wait_running "$id"; then
    node=$(squeue -h -u "$SLUICE_TB_USER" -t RUNNING -o '%N' | head -n 1)
fi
if [[ "$node" =~ ^tb[0-9]$ ]] && kill -KILL "$(cat "$(pidfile "slurmd-$node.pid")")"; then
    wait "$bg" || true
    if [ "$(rc_of "$id")" = 104 ] && grep -q 'NODE_FAIL' "$work/$id.out"; then
        pass "slurmd of $node killed: NODE_FAIL ends 104 ($(($(date +%s) - t1)) s)"
    else
        fail "NODE_FAIL (exit $(rc_of "$id"), want 104 naming NODE_FAIL)"; show "$id"
    fi
else
    kill "$bg" 2>/dev/null || true
    wait "$bg" || true
    fail "NODE_FAIL: the job never ran on a node (node '$node')"; show "$id"
fi
# slurmd back, node resumed (start.sh does both).
bash "$TB/start.sh" >"$work/start2.log" 2>&1 || abort "start.sh could not bring slurmd back"

# -------------------------------------------------- 2. slurmdbd outage
# The launch must take the accounting path: its job gone from slurmctld
# before the launch sees it end.  With slurmdbd down, 22.05's slurmctld
# keeps an ended job until slurmdbd has its record (seen: still there 60 s
# later), and the launch reads its end live.  So the launch is paused
# (SIGSTOP) while its job ends and is purged (MinJobAge 5, slurmdbd up);
# slurmdbd is stopped, shown down (process gone, port refused), and the
# launch resumed.  Then, shown and not assumed: the job is unknown to
# slurmctld, the launch reads accounting and gets no answer (an `observed`
# event, source accounting, lookup other than FOUND) and stays live; once
# slurmdbd is back, the observation that ends it is an accounting read
# (source accounting, the job COMPLETED).
id="dbd-$run"
request "$id" /bin/sleep '["5"]'
t1=$(date +%s)
launch "$id" &
bg=$!
dbd_port=$((SLUICE_TB_PORT_BASE + 1))
port_refused() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# events_of ID JQ_FILTER: the launch's events (sluice status -o json) through jq.
events_of() {
    "$SLUICE" status --state-dir "$work/state-$1" "$1" -o json 2>/dev/null | jq -c "[.events[] | $2]"
}
job_gone() { # (not a pipe: under pipefail scontrol's exit 1 would hide grep's match)
    local out
    out=$(scontrol show job "$1" 2>&1) || true
    [[ "$out" == *"Invalid job id"* ]]
}
acct_miss='select(.name == "observed" and .context.source == "accounting" and .context.lookup != "FOUND")'
ended_by='select(.name == "observed" and .context.lookup == "FOUND" and ([.context.jobs[]?.state] | index("COMPLETED")))'
why=""
jid="" missed="[]"
if wait_running "$id"; then
    jid=$("$SLUICE" status --state-dir "$work/state-$id" "$id" -o json | jq -r '.components[0].job_id // empty')
    # the launch's sluice: the child of the `timeout` that launch() runs
    tpid=$(pgrep -P "$bg" -x timeout || true)
    stopped_pid=$([ -n "$tpid" ] && pgrep -P "$tpid" || true)
    if [ -z "$stopped_pid" ] || ! kill -STOP "$stopped_pid"; then
        why+=" could not pause the launch (timeout pid '$tpid', sluice pid '$stopped_pid');"
        stopped_pid=""
    fi
    # slurmctld purges ended jobs older than MinJobAge in a periodic pass
    for _ in $(seq 1 150); do
        job_gone "$jid" && break
        sleep 1
    done
    job_gone "$jid" || why+=" job $jid still known to slurmctld 150 s after it ended;"
    dbd_pid=$(cat "$(pidfile slurm/slurmdbd.pid)")
    kill -TERM "$dbd_pid"
    for _ in $(seq 1 100); do
        kill -0 "$dbd_pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$dbd_pid" 2>/dev/null; then
        why+=" slurmdbd (pid $dbd_pid) still runs 10 s after SIGTERM;"
    elif ! port_refused "$dbd_port"; then
        why+=" slurmdbd's port $dbd_port still accepts connections;"
    fi
    [ -z "$stopped_pid" ] || kill -CONT "$stopped_pid"
    stopped_pid=""
    # The launch, resumed, asks accounting and gets no answer.
    for _ in $(seq 1 60); do
        missed=$(events_of "$id" "$acct_miss")
        [ "$missed" != "[]" ] && break
        sleep 1
    done
    [ "$missed" != "[]" ] || why+=" no unanswered accounting read recorded while slurmdbd was down;"
    kill -0 "$bg" 2>/dev/null || why+=" the launch ended while slurmdbd was down;"
    # still down, still gone, after those reads
    port_refused "$dbd_port" || why+=" slurmdbd's port answered during the outage;"
    job_gone "$jid" || why+=" job $jid known to slurmctld again during the outage;"
    bash "$TB/start.sh" >"$work/start3.log" 2>&1 || why+=" start.sh could not bring slurmdbd back;"
else
    why+=" the job never ran;"
fi
wait "$bg" || true
for _ in $(seq 1 15); do
    n=$(count_jobs "$id")
    [ "$n" -ge 1 ] && break
    sleep 1
done
ended=$(events_of "$id" "$ended_by | {source: .context.source, lookup: .context.lookup}")
first_src=$(jq -r '.[0].source // "none"' <<<"$ended")
[ "$(rc_of "$id")" = 0 ] || why+=" exit $(rc_of "$id"), want 0;"
[ "$n" -eq 1 ] || why+=" $n jobs, want 1;"
[ "$first_src" = accounting ] || why+=" the job's end was first observed from '$first_src', want accounting ($ended);"
if [ -z "$why" ]; then
    pass "job $jid purged from slurmctld while the launch was paused, slurmdbd down (pid gone, port $dbd_port refused): $(jq length <<<"$missed") accounting read(s) unanswered ($(jq -r '.[0].context.lookup' <<<"$missed")), launch live; SUCCEEDED from the accounting read once slurmdbd was back, one job ($(($(date +%s) - t1)) s)"
else
    fail "slurmdbd outage:$why"
    show "$id"
    "$SLUICE" status --state-dir "$work/state-$id" "$id" -o json 2>/dev/null |
        jq -c '.events[] | {name, state, context: (.context | del(.jobs))}' | sed 's/^/    events| /' >&2 || true
fi

# ------------------------------------ 3. slurmrestd down at submit time
restd_pid() { cat "$(pidfile rest/slurmrestd.pid)" 2>/dev/null; }
stop_restd() {
    local p
    p=$(restd_pid) || return 1
    kill -TERM "$p" || return 1
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
    return 1
}
id="refused-$run"
request "$id" /bin/true '[]'
if stop_restd; then
    t1=$(date +%s)
    launch "$id" &
    bg=$!
    sleep 8
    tb=$(date +%s)
    bash "$TB/start.sh" >"$work/start4.log" 2>&1 || say "start.sh could not bring slurmrestd back"
    wait "$bg" || true
    t2=$(date +%s)
    # The job may have left the live queue (MinJobAge 5) before accounting has it.
    for _ in $(seq 1 15); do
        n=$(count_jobs "$id")
        [ "$n" -ge 1 ] && break
        sleep 1
    done
    if [ "$(rc_of "$id")" = 0 ] && [ "$n" -eq 1 ] && grep -q 'attempt 1' "$work/$id.out" &&
        ! grep -q 'attempt 2' "$work/$id.out" && [ $((t2 - tb)) -lt 40 ]; then
        pass "slurmrestd down at submit: attempt 1 got its job $((t2 - tb)) s after slurmrestd was back (down $((tb - t1)) s), one job"
    else
        fail "refused submit (exit $(rc_of "$id") want 0, jobs $n want 1, $((t2 - tb)) s after restart)"; show "$id"
    fi
else
    fail "refused submit: could not stop slurmrestd"
fi

# ------------- 5. slurmrestd down 30 s: one log line when it goes, one when it is back
id="outlog-$run"
request "$id" /bin/sleep '["45"]'
launch "$id" &
bg=$!
if wait_running "$id" && stop_restd; then
    t1=$(date +%s)
    sleep 30
    bash "$TB/start.sh" >"$work/start6.log" 2>&1 || say "start.sh could not bring slurmrestd back"
    tb=$(date +%s)
    wait "$bg" || true
    down=$(grep -c 'slurmrestd unreachable at ' "$work/$id.out" || true)
    up=$(grep -c 'slurmrestd reachable again at ' "$work/$id.out" || true)
    ts='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z warning [a-z_]+: '
    stamped=$(grep -cE "${ts}slurmrestd (unreachable|reachable again) at " "$work/$id.out" || true)
    warnings=$(grep -cE "${ts}" "$work/$id.out" || true)
    if [ "$(rc_of "$id")" = 0 ] && [ "$down" -eq 1 ] && [ "$up" -eq 1 ] && [ "$stamped" -eq 2 ]; then
        pass "slurmrestd down $((tb - t1)) s: one timestamped warning for the outage, one for the recovery ($warnings warning lines in all), SUCCEEDED"
        grep -E "${ts}" "$work/$id.out" | sed 's/^/    | /' >&2
    else
        fail "outage log (exit $(rc_of "$id") want 0; unreachable $down, back $up, stamped $stamped: want 1, 1, 2)"
        show "$id"
    fi
else
    fail "outage log: the launch did not run or slurmrestd could not be stopped"
    kill "$bg" 2>/dev/null || true
    show "$id"
fi

# ------------------------------- 4. a slurmrestd that serves no accounting
rc=0
if stop_restd && SLUICE_TB_ACCOUNTING=no bash "$TB/start.sh" >"$work/start5.log" 2>&1; then
    "$SLUICE" check --config "$site" >"$work/check.out" 2>&1 || rc=$?
    if [ "$rc" -eq 69 ] && grep -Eq '^accounting +FAIL +no accounting' "$work/check.out"; then
        pass "slurmrestd without its slurmdbd plugin: check says no accounting (exit 69)"
    else
        fail "no-accounting check (exit $rc want 69)"; show check
    fi
else
    fail "could not restart slurmrestd without its slurmdbd plugin"
    tail -n 5 "$work/start5.log" >&2 || true
fi

finish
