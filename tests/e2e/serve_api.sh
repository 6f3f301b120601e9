#!/usr/bin/env bash
# serve_api.sh - every route of `sluice serve` end to end on the local
# testbed, over loopback TCP with bearer tokens and over the Unix socket, and
# the CLI's --server path against it:
#
#   1. health, readiness (real slurmrestd) and metrics answer;
#   2. every route refuses a missing and a wrong token (401), over TCP;
#   3. POST: 201, the same again 200, a different body 409, dry_run renders
#      and stores nothing;
#   4. SSE: a client connected before the POST sees every event of a hetjob
#      launch, in order, the same list GET /v1/launches/{id} holds; a client
#      that resumes with Last-Event-ID gets exactly the rest;
#   5. logs: follow=true streams a job printing lines over time and ends with
#      the launch; offset reads from the middle;
#   6. GET one (job ids per component, nodes) and the list with filters and
#      pagination; the Unix socket needs no token;
#   7. DELETE of a running job ends ABORTED (9), a second DELETE is 202 too,
#      and the event names the caller;
#   8. CLI: `sluice launch --wait --server` prints the transitions and exits
#      0; status, ls and logs through --server (TCP and unix:);
#   9. CLI: `sluice cancel --server` of a launch another `launch --wait
#      --server` follows: that one exits 9.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only; the
# service listens on 127.0.0.1 (port chosen by the kernel) and a Unix socket.
# A missing testbed is a failure, never a skip.  Last line:
# "serve_api: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=9
NAME=serve_api
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
command -v curl >/dev/null || abort "curl is missing"
e2e_testbed_env
e2e_require_loopback
e2e_require_running

work=$(mktemp -d /tmp/sluice-e2e-serve.XXXXXX)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
run="s$(date +%s)$$"
site="$work/site.yaml"
state="$work/state"
sock="$work/api.sock"
bash "$REPO/deploy/testbed/site-config.sh" >"$site"
tok_alice="tok-alice-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
tok_bob="tok-bob-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf 'alice %s\nbob %s\n' "$tok_alice" "$tok_bob" >"$work/tokens"
printf '%s\n' "$tok_alice" >"$work/alice.token"
chmod 0600 "$work/tokens" "$work/alice.token"

e2e_serve_run --socket "$sock"
base="http://127.0.0.1:$port"
AUTH="Authorization: Bearer $tok_alice"

# req METHOD PATH [curl args...]: body in $work/body, status in $code
req() {
    local m=$1 p=$2
    shift 2
    code=$(curl -s -o "$work/body" -w '%{http_code}' -X "$m" "$@" "$base$p") || code=000
}
jq_() { python3 -c "import json,sys; d=json.load(open('$work/body')); print($1)" 2>/dev/null || echo "?"; }
state_of() {
    req GET "/v1/launches/$1" -H "$AUTH"
    [ "$code" = 200 ] && jq_ "d['state'], d.get('result_code')" | tr -d '(),' || echo "? ?"
}
# wait_state ID STATE SECONDS
wait_state() {
    local i
    for i in $(seq 1 "$3"); do
        [ "$(state_of "$1" | cut -d' ' -f1)" = "$2" ] && return 0
        sleep 1
    done
    return 1
}
json_pool() { # NAME SERIES ARGS
    printf '{"name": "%s", "gpu_series": "%s", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200, "args": ["-c", "%s"]}' "$1" "$2" "$3"
}

# ------------------------------------------------- 1. health, ready, metrics
req GET /v1/healthz
h=$code
req GET /v1/readyz -H "$AUTH"
r=$code
rbody=$(cat "$work/body")
req GET /v1/metrics -H "$AUTH"
if [ "$h" = 200 ] && [ "$r" = 200 ] && grep -q '"slurmrestd": *{"state": *"ok"' <<<"$rbody" &&
    [ "$code" = 200 ] && grep -q '^sluice_launches{state="RUNNING"} 0$' "$work/body"; then
    pass "healthz, readyz (slurmrestd checked) and metrics answer"
else
    fail "health (healthz $h, readyz $r: $rbody, metrics $code)"
fi

# ------------------------------------------------------------ 2. auth
bad=""
for route in "GET /v1/launches" "POST /v1/launches" "GET /v1/launches/x" "DELETE /v1/launches/x" \
    "GET /v1/launches/x/logs/stdout" "GET /v1/launches/x/logs/stderr" "GET /v1/events" \
    "GET /v1/readyz" "GET /v1/metrics"; do
    set -- $route
    req "$1" "$2" --max-time 5
    [ "$code" = 401 ] || bad="$bad [$route no token: $code]"
    req "$1" "$2" --max-time 5 -H "Authorization: Bearer ${tok_alice}x"
    [ "$code" = 401 ] || bad="$bad [$route wrong token: $code]"
    req "$1" "$2" --max-time 5 -H "Authorization: Basic $tok_alice"
    [ "$code" = 401 ] || bad="$bad [$route Basic: $code]"
done
req GET /v1/healthz
[ "$code" = 200 ] || bad="$bad [healthz: $code]"
if [ -z "$bad" ]; then
    pass "every route but healthz refuses a missing, wrong or non-bearer token (401)"
else
    fail "auth:$bad"
fi

# ---------------------------------------- 3. POST, idempotent, 409, dry run
# A hetjob printing lines over time (trainer) beside a quiet pool.
het="het-$run"
het_body=$(printf '{"launch_id": "%s", "site": "%s", "profile": "none", "command": "/bin/bash", "time_limit": 5, "pools": [%s, %s]}' \
    "$het" "$SLUICE_TB_CLUSTER" \
    "$(json_pool trainer a100 'echo line-1; sleep 2; echo line-2; sleep 2; echo line-3')" \
    "$(json_pool rollout h100 'sleep 4')")
other_body=${het_body/sleep 4/sleep 5}
# the event stream is open before the launch exists
curl -sN -H "$AUTH" "$base/v1/events" >"$work/sse.raw" 2>/dev/null &
sse_pid=$!
pids+=($sse_pid)
sleep 0.5
req POST /v1/launches -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$het_body"
c1=$code
# follow the job's output; each line is stamped with its arrival time
( curl -sN -H "$AUTH" "$base/v1/launches/$het/logs/stdout?follow=true" 2>/dev/null |
    while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done >"$work/follow.stamped" ) &
follow_pid=$!
pids+=($follow_pid)
req POST /v1/launches -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$het_body"
c2=$code
req POST /v1/launches -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$other_body"
c3=$code
dry_body=${het_body/\"$het\"/\"dry-$run\"}
req POST "/v1/launches?dry_run=true" -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$dry_body"
c4=$code
dry_script=$(jq_ "'#!/bin/bash' in d['render']['script'] and len(d['render']['jobs'])" 2>/dev/null || echo no)
req GET "/v1/launches/dry-$run" -H "$AUTH"
c5=$code
if [ "$c1" = 201 ] && [ "$c2" = 200 ] && [ "$c3" = 409 ] && [ "$c4" = 200 ] &&
    [ "$dry_script" = 2 ] && [ "$c5" = 404 ]; then
    pass "POST 201, same again 200, other body 409, dry_run renders 2 jobs and stores nothing"
else
    fail "POST (201? $c1, 200? $c2, 409? $c3, dry 200? $c4 jobs $dry_script, dry stored 404? $c5)"
fi

# A long job to cancel, beside the hetjob (the testbed has three nodes).
long="long-$run"
req POST /v1/launches -H "$AUTH" -H 'Content-Type: application/json' --data-binary \
    "{\"launch_id\": \"$long\", \"site\": \"$SLUICE_TB_CLUSTER\", \"profile\": \"none\", \"command\": \"/bin/sleep\", \"args\": [\"300\"], \"time_limit\": 10, \"pools\": [{\"name\": \"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 200}]}"
long_post=$code

wait_state "$het" DONE 90 || true
het_final=$(state_of "$het")
req GET "/v1/launches/$het" -H "$AUTH"
cp "$work/body" "$work/het.json"
sleep 1
kill "$sse_pid" 2>/dev/null || true

# ------------------------------------------------------------ 4. SSE
sse_check=$(python3 - "$work/sse.raw" "$work/het.json" "$het" <<'PY'
import json, sys
raw, launch, lid = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
events, cur = [], {}
for line in raw.split("\n"):
    if line.startswith("id: "): cur["id"] = int(line[4:])
    elif line.startswith("event: "): cur["event"] = line[7:]
    elif line.startswith("data: "): cur["data"] = json.loads(line[6:])
    elif line == "" and cur:
        events.append(cur); cur = {}
ids = [e["id"] for e in events]
ours = [e for e in events if e["data"].get("launch_id") == lid]
want = [(e["seq"], e["name"]) for e in launch["events"]]
got = [(e["data"]["seq"], e["event"]) for e in ours]
ok = ids == sorted(ids) and len(set(ids)) == len(ids) and got == want and len(want) >= 5
ok = ok and all(e["data"]["name"] == e["event"] and e["data"]["gseq"] == e["id"] for e in ours)
print("ok" if ok else "bad got=%s want=%s" % (got, want))
# the id after which to resume: the third event of the launch
print(ours[2]["id"] if len(ours) > 2 else 0)
PY
) || sse_check="python failed"
resume_after=$(sed -n 2p <<<"$sse_check")
curl -sN --max-time 3 -H "$AUTH" -H "Last-Event-ID: $resume_after" "$base/v1/events" \
    >"$work/sse2.raw" 2>/dev/null || true
resume_check=$(python3 - "$work/sse2.raw" "$work/het.json" "$het" "$resume_after" <<'PY'
import json, sys
raw, launch, lid, after = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3], int(sys.argv[4])
ids = [int(l[4:]) for l in raw.split("\n") if l.startswith("id: ")]
datas = [json.loads(l[6:]) for l in raw.split("\n") if l.startswith("data: ")]
ours = [(d["seq"], d["name"]) for d in datas if d.get("launch_id") == lid]
want = [(e["seq"], e["name"]) for e in launch["events"]][3:]
print("ok" if ids and ids[0] > after and ours == want else "bad first=%s got=%s want=%s" % (ids[:1], ours, want))
PY
) || resume_check="python failed"
if [ "$(head -1 <<<"$sse_check")" = ok ] && [ "$resume_check" = ok ]; then
    pass "SSE: every event of the hetjob launch in order (= its event log); Last-Event-ID resumes with exactly the rest"
else
    fail "SSE (stream: $(head -1 <<<"$sse_check"); resume after $resume_after: $resume_check)"
fi

# ------------------------------------------------------------ 5. logs
for _ in $(seq 1 30); do kill -0 "$follow_pid" 2>/dev/null || break; sleep 0.5; done
follow_open=0
kill -0 "$follow_pid" 2>/dev/null && follow_open=1
cut -d' ' -f2- "$work/follow.stamped" >"$work/follow.out"
# streamed as printed: line-3 came at least 3 s after line-1 (the job sleeps 4 s between)
spread=$(awk 'NR == 1 { a = $1 } END { printf "%.1f", $1 - a }' "$work/follow.stamped")
req GET "/v1/launches/$het/logs/stdout?offset=7" -H "$AUTH"
off_code=$code
off_body=$(tr '\n' ' ' <"$work/body")
req GET "/v1/launches/$het/logs/stdout?offset=x" -H "$AUTH"
bad_off=$code
if [ "$het_final" = "DONE 0" ] && [ "$follow_open" = 0 ] &&
    [ "$(tr '\n' ' ' <"$work/follow.out")" = "line-1 line-2 line-3 " ] &&
    awk -v s="$spread" 'BEGIN { exit !(s >= 3.0) }' &&
    [ "$off_code" = 200 ] && [ "$off_body" = "line-2 line-3 " ] && [ "$bad_off" = 400 ]; then
    pass "logs: follow=true streamed the lines as printed (${spread} s from first to last) and ended with the launch; offset=7 and a bad offset"
else
    fail "logs (het $het_final, follow still open $follow_open: '$(tr '\n' ' ' <"$work/follow.out")' over ${spread} s, offset $off_code '$off_body', bad offset $bad_off)"
fi

# ------------------------------------------------ 6. GET one, list, socket
one=$(python3 -c "
import json; d = json.load(open('$work/het.json'))
print(len(d['job_ids']), d['state'], d['result_code'], d['terminal'], 'render' in d)")
# two launches so far (the hetjob, DONE, and the long one): two pages of one
req GET "/v1/launches?site=$SLUICE_TB_CLUSTER&limit=1" -H "$AUTH"
p1=$code
cursor=$(jq_ "d['next_cursor'] or ''")
n1=$(jq_ "len(d['items'])")
req GET "/v1/launches?site=$SLUICE_TB_CLUSTER&limit=1&cursor=$(python3 -c "import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=''))" "$cursor")" -H "$AUTH"
p2=$code
first2=$(jq_ "d['items'][0]['launch_id'] if d['items'] else ''")
req GET "/v1/launches?state=DONE" -H "$AUTH"
n_done=$(jq_ "[i['launch_id'] for i in d['items']] == ['$het']")
req GET "/v1/launches?state=RUNNING&study=nobody" -H "$AUTH"
n3=$(jq_ "len(d['items'])")
ucode=$(curl -s -o "$work/ubody" -w '%{http_code}' --unix-socket "$sock" "http://localhost/v1/launches/$het") || ucode=000
# job_ids: Slurm's hetjob leader id (1), or one per component (2)
if [[ "$one" =~ ^[12]\ DONE\ 0\ True\ False$ ]] && [ "$p1" = 200 ] && [ "$n1" = 1 ] &&
    [ -n "$cursor" ]; then
    if [ "$p2" = 200 ] && [ "$first2" = "$long" ] && [ "$n_done" = True ] && [ "$n3" = 0 ] &&
        [ "$ucode" = 200 ]; then
        pass "GET one ($one), list filtered and paged (cursor), Unix socket without a token"
    else
        fail "list page 2 ($p2 '$first2'), state=DONE only the hetjob ($n_done), filter ($n3), unix socket ($ucode)"
    fi
else
    fail "GET one ($one) or list page 1 ($p1, $n1 items, cursor '$cursor')"
fi

# ------------------------------------------------------------ 7. DELETE
running=0
wait_state "$long" RUNNING 60 && running=1
req DELETE "/v1/launches/$long" -H "$AUTH"
d1=$code
req DELETE "/v1/launches/$long" -H "Authorization: Bearer $tok_bob"
d2=$code
req DELETE "/v1/launches/nope-$run" -H "$AUTH"
d3=$code
wait_state "$long" DONE 60 || true
long_final=$(state_of "$long")
by=$(jq_ "','.join(e['caller'] or '' for e in d['events'] if e['name'] == 'cancel-requested')")
req DELETE "/v1/launches/$long" -H "$AUTH"
d4=$code
if [ "$long_post" = 201 ] && [ "$running" = 1 ] && [ "$d1" = 202 ] && [ "$d2" = 403 ] &&
    [ "$d3" = 404 ] && [ "$long_final" = "DONE 9" ] && [[ "$by" == alice* ]] && [ "$d4" = 202 ]; then
    pass "DELETE of a running job: 202, ABORTED (9), another caller 403, again 202 (also after the end), audited ($by)"
else
    fail "DELETE (post $long_post, running $running, 202? $d1 $d4, 403? $d2, 404? $d3, final '$long_final', by '$by')"
fi

# ----------------------------------------------------- 8. CLI --server
# (the job runs 6 s: long enough for a poll to see it RUNNING on a loaded
# machine, where a cycle over the v0.0.38 table can take a second)
cli="cli-$run"
cat >"$work/cli.json" <<JSON
{"launch_id": "$cli", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "args": ["-c", "sleep 6; echo cli-out"], "time_limit": 5,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
REMOTE=(--server "$base" --api-token-file "$work/alice.token")
crc=0
timeout 120 "$SLUICE" launch "$work/cli.json" --wait "${REMOTE[@]}" >"$work/cli.out" 2>&1 || crc=$?
st=$("$SLUICE" status "${REMOTE[@]}" "$cli" 2>&1 | sed -n 's/^state *//p')
ls_ok=0
"$SLUICE" ls "${REMOTE[@]}" --state DONE 2>&1 | grep -q "^$cli " && ls_ok=1
lg=$(timeout 30 "$SLUICE" logs -f "${REMOTE[@]}" "$cli" 2>&1 || true)
ust=$("$SLUICE" status --server "unix:$sock" "$cli" 2>&1 | sed -n 's/^state *//p')
if [ "$crc" = 0 ] && grep -q "^launch $cli accepted (site $SLUICE_TB_CLUSTER, 1 pool)$" "$work/cli.out" &&
    grep -q '] RUNNING' "$work/cli.out" && grep -q '] DONE .*result=SUCCEEDED(0)' "$work/cli.out" &&
    [ "$(grep -c '^\[ *[0-9.]*s\] ' "$work/cli.out")" -ge 3 ] &&
    [ "$st" = DONE ] && [ "$ls_ok" = 1 ] && [ "$lg" = cli-out ] && [ "$ust" = DONE ]; then
    pass "CLI --server: launch --wait (exit 0, transitions), status, ls, logs -f, unix: socket"
else
    fail "CLI --server (exit $crc, status '$st', ls $ls_ok, logs '$lg', unix status '$ust')"
    sed 's/^/    | /' "$work/cli.out" >&2
fi

# --------------------------------------------------- 9. CLI cancel
cc="cc-$run"
sed "s/\"$cli\"/\"$cc\"/; s/echo cli-out/sleep 300/" "$work/cli.json" >"$work/cc.json"
( rc=0; timeout 120 "$SLUICE" launch "$work/cc.json" --wait "${REMOTE[@]}" >"$work/cc.out" 2>&1 || rc=$?
  echo "$rc" >"$work/cc.rc" ) &
bg=$!
running=0
for _ in $(seq 1 60); do
    if "$SLUICE" status "${REMOTE[@]}" "$cc" 2>/dev/null | grep -q '^state      RUNNING'; then
        running=1
        break
    fi
    sleep 1
done
cout=$("$SLUICE" cancel "${REMOTE[@]}" "$cc" 2>&1 || true)
wait "$bg" || true
ccrc=$(cat "$work/cc.rc" 2>/dev/null || echo none)
again=$("$SLUICE" cancel "${REMOTE[@]}" "$cc" 2>&1 || true)
if [ "$running" = 1 ] && [ "$cout" = "cancel of $cc requested; the supervisor carries it out on its next cycle" ] &&
    [ "$ccrc" = 9 ] && grep -q 'result=ABORTED(9)' "$work/cc.out" &&
    [ "$again" = "launch $cc already ended (DONE); nothing to cancel" ]; then
    pass "CLI cancel --server: the following launch --wait --server exits 9; a second cancel says it ended"
else
    fail "CLI cancel (running $running, cancel '$cout', exit $ccrc, again '$again')"
    sed 's/^/    | /' "$work/cc.out" >&2
fi

sed 's/^/    cli | /' "$work/cli.out"
if [ "$failed" -gt 0 ]; then
    say "service log:"
    sed 's/^/    | /' "$work/serve.log" >&2
fi
finish
