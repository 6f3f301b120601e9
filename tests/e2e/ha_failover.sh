#!/usr/bin/env bash
# ha_failover.sh - replicas of `sluice serve` on one PostgreSQL store, one
# leader (issue 17, "Replicas with one leader"), on the testbed:
#
#   1. two replicas (A, B) on one schema: exactly one leads, /v1/readyz
#      says role, epoch, leader and replica on both;
#   2. launches POSTed to both (each accepted durably by either); a cancel
#      asked on the follower is carried out by the leader; a launch with
#      secret values on the follower is 503 naming the leader;
#   3. the leader is killed with SIGKILL: the other takes over within 10 s
#      (measured and printed), every launch ends DONE with result 0 and
#      exactly one Slurm job per marker;
#   4. a clean stop (SIGTERM) releases the lease: the other takes over at
#      once;
#   5. fencing: leader C stops itself (SIGSTOP, SLUICE_STOP_AT=after-post)
#      between a POST and the commit of its answer; A2 takes over; after
#      SIGCONT, C's late write is refused (the `fenced:` log line), C
#      follows, and the launch still ends with exactly one job (A2 adopts it
#      by its marker);
#   6. archived logs live in the store (issue 30): two launches that print
#      a known line to stdout and stderr are archived by whichever replica
#      led when they ended (their `archived` event names its epoch); that
#      replica's state directory is then removed (a pod replaced with its
#      emptyDir), and each replica that did not archive them serves both
#      logs byte for byte from the store (X-Sluice-Log-Source: store), as
#      does `sluice logs` through the API and on the store from a state
#      directory that never held them.
#
# PostgreSQL: deploy/testbed/postgres.sh (127.0.0.1:55432), a schema of
# this run's own, dropped at the end.  A missing testbed or PostgreSQL is a
# failure, never a skip.  About 90 s.  Last line: "ha_failover: <n> passed,
# <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=9
NAME=ha_failover
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup ha
pids=()
schema=""
cleanup() {
    local p
    for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    e2e_pg_drop
    rm -rf "$work"
}
trap cleanup EXIT

e2e_pg_schema ha
cat >>"$site" <<EOF
store:
  url: $store_url
EOF
since=$(date +%Y-%m-%dT%H:%M:%S)
tok="tok-ha-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf 'alice %s\n' "$tok" >"$work/tokens"
chmod 0600 "$work/tokens"
AUTH="Authorization: Bearer $tok"

now_ms() { date +%s%3N; }

# start R [ENV=VALUE...]: replica R (its own state directory, log, socket),
# on 127.0.0.1 and $work/R.sock; sets port_R and pid_R.
start() {
    local r=$1 p="" i pid
    shift
    env SLUICE_REPLICA_ID="replica-$r" "$@" "$SLUICE" serve --config "$site" \
        --state-dir "$work/state-$r" --listen 127.0.0.1:0 --tokens "$work/tokens" \
        --socket "$work/$r.sock" --log-level info >>"$work/$r.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    for i in $(seq 1 600); do
        p=$(sed -n 's/.*listening on http:\/\/.*(port \([0-9]*\)).*/\1/p' "$work/$r.log" | tail -1)
        [ -n "$p" ] && [ -S "$work/$r.sock" ] && break
        p=""
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$p" ] || { cat "$work/$r.log" >&2; abort "replica $r did not start"; }
    printf -v "port_$r" '%s' "$p"
    printf -v "pid_$r" '%s' "$pid"
}

# ready R: "<role> <epoch> <leader> <replica>" from R's /v1/readyz.
ready() {
    local pv="port_$1"
    curl -s --max-time 5 -H "$AUTH" "http://127.0.0.1:${!pv}/v1/readyz" 2>/dev/null |
        python3 -c 'import json,sys
d=json.load(sys.stdin); print(d.get("role"), d.get("epoch"), d.get("leader"), d.get("replica"))' \
            2>/dev/null || echo "? ? ? ?"
}
role() { ready "$1" | cut -d' ' -f1; }

# wait_role R ROLE SECONDS: until R says ROLE; prints the ms it took.
wait_role() {
    local t0 i
    t0=$(now_ms)
    for i in $(seq 1 $(($3 * 20))); do
        [ "$(role "$1")" = "$2" ] && { echo $(($(now_ms) - t0)); return 0; }
        sleep 0.05
    done
    echo -1
    return 1
}

# wait_leader R EPOCH SECONDS: until R logs `leadership: leader now (epoch
# EPOCH)` (polled every 20 ms: readyz pings slurmrestd, too slow a clock);
# prints the ms it took.
wait_leader() {
    local t0 i
    t0=$(now_ms)
    for i in $(seq 1 $(($3 * 50))); do
        grep -q "leadership: leader now (epoch $2)" "$work/$1.log" &&
            { echo $(($(now_ms) - t0)); return 0; }
        sleep 0.02
    done
    echo -1
    return 1
}

# post R ID SECS: POST a launch (/bin/sleep SECS) to R; prints the status.
post() {
    local pv="port_$1"
    curl -s -o "$work/post.$2" -w '%{http_code}' --max-time 30 -X POST -H "$AUTH" \
        -H 'Content-Type: application/json' "http://127.0.0.1:${!pv}/v1/launches" \
        -d "{\"launch_id\": \"$2\", \"site\": \"$SLUICE_TB_CLUSTER\", \"profile\": \"none\",
             \"command\": \"/bin/sleep\", \"args\": [\"$3\"], \"time_limit\": 5,
             \"pools\": [{\"name\": \"main\", \"nodes\": 1, \"cpus_per_node\": 1,
                          \"mem_per_node_mib\": 100}]}" || echo 000
}

# post_out R ID: POST a launch to R that prints "stdout of ID" and "stderr of
# ID", then sleeps 6 s (so that the leader that ends it may not be R).
post_out() {
    local pv="port_$1"
    curl -s -o "$work/post.$2" -w '%{http_code}' --max-time 30 -X POST -H "$AUTH" \
        -H 'Content-Type: application/json' "http://127.0.0.1:${!pv}/v1/launches" \
        -d "{\"launch_id\": \"$2\", \"site\": \"$SLUICE_TB_CLUSTER\", \"profile\": \"none\",
             \"command\": \"/bin/bash\", \"args\": [\"-c\", \"echo 'stdout of $2'; echo 'stderr of $2' >&2; sleep 6\"],
             \"time_limit\": 5, \"pools\": [{\"name\": \"main\", \"nodes\": 1, \"cpus_per_node\": 1,
                                            \"mem_per_node_mib\": 100}]}" || echo 000
}

# final R ID: "<state> <result_code>" of launch ID as R serves it.
final() {
    local pv="port_$1"
    curl -s --max-time 5 -H "$AUTH" "http://127.0.0.1:${!pv}/v1/launches/$2" 2>/dev/null |
        python3 -c 'import json,sys
d=json.load(sys.stdin); print(d["state"], d.get("result_code"))' 2>/dev/null || echo "? ?"
}

# wait_done R SECONDS IDS...: until every launch is DONE (as R serves them).
wait_done() {
    local r=$1 s=$2 i id all
    shift 2
    for i in $(seq 1 "$s"); do
        all=1
        for id in "$@"; do
            case "$(final "$r" "$id")" in DONE*) ;; *) all=0 ;; esac
        done
        [ "$all" = 1 ] && return 0
        sleep 1
    done
    return 1
}

jobs_of() { e2e_count_jobs "$1"; }

# check_all R IDS...: every launch DONE 0 and exactly one job each.
check_all() {
    local r=$1 id bad="" n
    shift
    for id in "$@"; do
        [ "$(final "$r" "$id")" = "DONE 0" ] || bad="$bad $id=$(final "$r" "$id" | tr ' ' :)"
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            n=$(jobs_of "$id")
            [ "$n" -ge 1 ] && break
            sleep 1
        done
        [ "$n" = 1 ] || bad="$bad $id:jobs=$n"
    done
    echo "$bad"
}

# ------------------------------------------------- 1. one leader, one follower
start A
wait_role A leader 30 >/dev/null || true
start B
sleep 1
ra=$(ready A)
rb=$(ready B)
if [[ "$ra" == "leader 1 replica-A replica-A" ]] && [[ "$rb" == "follower 1 replica-A replica-B" ]] &&
    grep -q "leadership: leader now (epoch 1)" "$work/A.log" &&
    curl -s -H "$AUTH" "http://127.0.0.1:$port_A/v1/metrics" | grep -q "^sluice_leader 1$" &&
    curl -s -H "$AUTH" "http://127.0.0.1:$port_B/v1/metrics" | grep -q "^sluice_leader 0$"; then
    pass "one leader (A, epoch 1), one follower (B); readyz and metrics say so"
else
    fail "roles: A '$ra', B '$rb'"
fi

# ------------------------------------------------- 2. accepts on both replicas
ids=()
codes=""
for i in 1 2 3 4 5 6; do
    r=A
    [ $((i % 2)) = 0 ] && r=B
    id="ha-$run-$i"
    ids+=("$id")
    codes="$codes $(post "$r" "$id" 6)"
done
# two launches with output (step 6): one accepted by each replica
outs=("ha-$run-out1" "ha-$run-out2")
ids+=("${outs[@]}")
codes="$codes $(post_out A "${outs[0]}") $(post_out B "${outs[1]}")"
sec=$(curl -s -o "$work/sec.body" -w '%{http_code}' --max-time 10 --unix-socket "$work/B.sock" \
    -X POST -H 'Content-Type: application/json' http://localhost/v1/launches \
    -d "{\"launch_id\": \"ha-$run-sec\", \"site\": \"$SLUICE_TB_CLUSTER\", \"profile\": \"none\",
         \"command\": \"/bin/true\", \"secrets\": {\"TOKEN\": \"s3cr3t-value\"},
         \"pools\": [{\"name\": \"main\", \"nodes\": 1, \"cpus_per_node\": 1}]}") || sec=000
# a long one on the leader, cancelled through the follower (cancel-asked,
# carried out by whichever replica leads)
cid="ha-$run-cancel"
ccode=$(post A "$cid" 120)
sleep 1
dcode=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X DELETE -H "$AUTH" \
    "http://127.0.0.1:$port_B/v1/launches/$cid") || dcode=000
if [ "$codes" = " 201 201 201 201 201 201 201 201" ] && [ "$sec" = 503 ] && [ "$ccode" = 201 ] &&
    [ "$dcode" = 202 ] &&
    grep -q '"leader": *"replica-A"' "$work/sec.body" && ! grep -q s3cr3t "$work/B.log"; then
    pass "8 launches accepted on both replicas, a cancel asked on the follower (202); secrets on the follower: 503 naming the leader"
else
    fail "accepts: codes$codes, cancel POST $ccode DELETE $dcode, secrets on the follower $sec: $(head -c 300 "$work/sec.body")"
fi

# ------------------------------------------------- 3. SIGKILL of the leader
sleep 2 # some launches submitted, some maybe not yet
left=$(psql "$SLUICE_TEST_PG_URL" -Atqc "SELECT lease_until_ms - CAST(extract(epoch FROM \
    clock_timestamp()) * 1000 AS BIGINT) FROM $schema.leadership" 2>/dev/null || echo '?')
kill -9 "$pid_A"
wait "$pid_A" 2>/dev/null || true
took=$(wait_leader B 2 30) || true
say "failover after SIGKILL: $took ms (lease 8000 ms, $left ms of it left at the kill)"
rb=$(ready B)
# The lease is taken before the recovery that follows it is logged: a
# loaded machine (suites side by side) can put a second between the two.
for _ in $(seq 1 100); do
    grep -q "leadership: recovered at epoch 2" "$work/B.log" && break
    sleep 0.1
done
if [ "$took" -ge 0 ] && [ "$took" -le 10000 ] && [[ "$rb" == "leader 2 replica-B replica-B" ]] &&
    grep -q "leadership: recovered at epoch 2" "$work/B.log"; then
    pass "B leads at epoch 2, $took ms after the SIGKILL of A (at most 10000)"
else
    fail "takeover: $took ms, B '$rb', recovered at epoch 2 logged: $(grep -c 'recovered at epoch 2' "$work/B.log")"
fi
for i in 7 8; do ids+=("ha-$run-$i"); post B "ha-$run-$i" 2 >/dev/null; done
wait_done B 180 "${ids[@]}" || true
bad=$(check_all B "${ids[@]}")
wait_done B 60 "$cid" || true
cfinal=$(final B "$cid")
cjobs=$(jobs_of "$cid")
[ "$cfinal" = "DONE 9" ] && [ "$cjobs" -le 1 ] || bad="$bad $cid=$cfinal:jobs=$cjobs"
if [ -z "$bad" ]; then
    pass "all ${#ids[@]} launches DONE with result 0, exactly one Slurm job each; the cancelled one DONE 9"
else
    fail "launches:$bad"
fi

# ------------------------------------------------- 4. a clean stop releases the lease
start C SLUICE_STOP_AT=after-post
sleep 1
t0=$(now_ms)
kill -TERM "$pid_B"
wait "$pid_B" 2>/dev/null || true
took=$(wait_leader C 3 10) || true
if [ "$took" -ge 0 ] && [ "$took" -le 2000 ] && [ "$(role C)" = leader ] &&
    grep -q "leadership: released (epoch 2)" "$work/B.log"; then
    pass "SIGTERM of B releases the lease: C leads $(($(now_ms) - t0)) ms after the signal"
else
    fail "release: C after $took ms; B log: $(grep leadership "$work/B.log" | tail -3 | tr '\n' ' ')"
fi

# ------------------------------------------------- 5. SIGSTOP: fencing
start A2
sleep 1
fid="ha-$run-fence"
code=$(post C "$fid" 2)
stopped=0
for _ in $(seq 1 300); do
    [ "$(awk '{print $3}' "/proc/$pid_C/stat" 2>/dev/null)" = T ] && { stopped=1; break; }
    sleep 0.1
done
t0=$(now_ms)
took=$(wait_leader A2 4 30) || true
say "failover after SIGSTOP: $took ms after the stop was seen"
if [ "$code" = 201 ] && [ "$stopped" = 1 ] && [ "$took" -ge 0 ] && [ "$took" -le 10000 ] &&
    [ "$(role A2)" = leader ]; then
    pass "C stopped itself after its POST; A2 leads $took ms later"
else
    fail "stop: POST $code, stopped $stopped, A2 after $took ms"
fi
kill -CONT "$pid_C"
for _ in $(seq 1 100); do
    grep -q "fenced: epoch" "$work/C.log" && [ "$(role C)" = follower ] && break
    sleep 0.1
done
fl=$(grep -m1 "fenced: epoch" "$work/C.log" || true)
if [[ "$fl" =~ fenced:\ epoch\ (3|-1),\ now\ 4:\ .*refused ]] && [ "$(role C)" = follower ] &&
    grep -q "leadership: lost" "$work/C.log" &&
    curl -s -H "$AUTH" "http://127.0.0.1:$port_C/v1/metrics" |
    grep -q "^sluice_fenced_writes_total [1-9]"; then
    pass "after SIGCONT C's late write is refused (${fl#*fenced: }) and C follows"
else
    fail "fencing: '$fl', C is $(role C)"
fi
wait_done A2 180 "$fid" || true
bad=$(check_all A2 "$fid")
if [ -z "$bad" ]; then
    pass "the fenced leader's launch ends DONE 0 with exactly one Slurm job (adopted by marker)"
else
    fail "fenced launch:$bad"
fi
# ------------------------------------------------- 6. logs from a replica that did not archive
# archiver ID: the replica that archived the launch: its `archived` event
# carries the leader's epoch, and each replica logs the epochs it led at
# ("-" before it is archived).
archiver() {
    local e r
    e=$(curl -s --max-time 5 -H "$AUTH" "http://127.0.0.1:$port_A2/v1/launches/$1" 2>/dev/null |
        python3 -c 'import json,sys
d = json.load(sys.stdin)
c = [e.get("context") or {} for e in d.get("events", []) if e.get("name") == "archived"]
print(c[0].get("epoch", "?") if c else "-")' 2>/dev/null) || e="-"
    case "$e" in "" | "-" | "?") echo "${e:--}" && return ;; esac
    for r in A B C A2; do
        grep -q "leadership: leader now (epoch $e)" "$work/$r.log" && { echo "$r"; return; }
    done
    echo "?"
}
bad=""
served=0
for id in "${outs[@]}"; do
    a="-"
    for _ in $(seq 1 30); do
        a=$(archiver "$id")
        [ "$a" != "-" ] && break
        sleep 1
    done
    case "$a" in A | B | C | A2) ;; *) bad="$bad [$id: archived by '$a']" && continue ;; esac
    # A and B are gone: their state directories go with them, as a
    # replaced pod's emptyDir does
    case "$a" in A | B) rm -rf "$work/state-$a" ;; esac
    for r in C A2; do
        [ "$r" = "$a" ] && continue
        pv="port_$r"
        for s in stdout stderr; do
            code=$(curl -s -D "$work/log.h" -o "$work/log.body" -w '%{http_code}' --max-time 10 \
                -H "$AUTH" "http://127.0.0.1:${!pv}/v1/launches/$id/logs/$s") || code=000
            if [ "$code" = 200 ] && [ "$(cat "$work/log.body")" = "$s of $id" ] &&
                grep -qi '^x-sluice-log-source: store' "$work/log.h"; then
                served=$((served + 1))
            else
                bad="$bad [$id $s on $r (archived by $a): $code '$(head -c 100 "$work/log.body")']"
            fi
        done
    done
done
# the CLI: through the API of a replica, and on the store itself from a
# state directory that never held the launch
cli_api=$("$SLUICE" logs "${outs[0]}" --server "http://127.0.0.1:$port_C" \
    --api-token-file "$work/tokens" 2>&1) || true
cli_store=$(SLUICE_STORE_URL="$store_url" "$SLUICE" logs --stderr "${outs[1]}" \
    --state-dir "$work/state-C" 2>&1) || true
[ "$cli_api" = "stdout of ${outs[0]}" ] || bad="$bad [sluice logs --server: '$cli_api']"
[ "$cli_store" = "stderr of ${outs[1]}" ] || bad="$bad [sluice logs on the store: '$cli_store']"
if [ -z "$bad" ] && [ "$served" -ge 4 ]; then
    pass "archived logs come from the store: $served reads on replicas that did not archive them (the archiver's state directory removed) match byte for byte; sluice logs too"
else
    fail "logs from the store ($served served):$bad"
fi
[ "$failed" -eq 0 ] || for r in A B C A2; do
    echo "---- $r.log (tail)" >&2
    tail -25 "$work/$r.log" >&2
done
finish
