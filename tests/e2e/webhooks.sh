#!/usr/bin/env bash
# webhooks.sh - webhooks end to end (docs/api.md, "Webhooks"): `sluice
# serve` on the testbed posts each transition of a launch, signed, to a
# receiver on 127.0.0.1 (lib/webhook_receiver.py, which checks every
# signature), and its queue in the store survives restarts:
# e2e-releases: 24.11
# (what it proves is sluice's own surface, the same on every release; the
# REST paths it crosses run in the suites registered on all three.)
#
#   1. a hetjob's transitions arrive at the site's URL and at the launch's
#      own URL (webhook.url, allowed by prefix), each once (by delivery id),
#      in order, signed, ending DONE with result 0: the same transitions as
#      the launch's event log;
#   2. a request URL outside the site's prefixes is 422 naming webhook.url;
#   3. /v1/metrics counts the deliveries, and the queue is empty;
#   4. receiver down: deliveries queue (metrics: depth and retries); the
#      service is stopped with SIGTERM and started again, the receiver
#      comes back: every transition of both launches arrives;
#   5. the same with SIGKILL: nothing lost.
#
# Runs as root against the testbed on 127.0.0.1 only; the API on a Unix
# socket.  A missing testbed is a failure, never a skip.  Last line:
# "webhooks: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=5
NAME=webhooks
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

command -v curl >/dev/null || abort "curl is missing"
command -v python3 >/dev/null || abort "python3 is missing"
e2e_launch_setup webhooks
serve_pid=""
recv_pid=""
cleanup() {
    local p
    for p in $serve_pid $recv_pid; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
sock="$work/api.sock"
got="$work/received.jsonl"
: >"$got"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/hook.key"
chmod 0600 "$work/hook.key"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >>"$site" <<YAML
webhooks:
  url: http://127.0.0.1:$port/site
  secret_file: $work/hook.key
  timeout_s: 5
  retry_initial_s: 1
  retry_max_s: 2
  allow_request_urls: true
  request_url_prefixes: ["http://127.0.0.1:$port/launch/"]
YAML

start_receiver() {
    python3 "$REPO/tests/e2e/lib/webhook_receiver.py" "$port" "$work/hook.key" "$got" \
        >>"$work/recv.log" 2>&1 &
    recv_pid=$!
    for _ in $(seq 1 50); do
        curl -s -o /dev/null -X POST "http://127.0.0.1:$port/ping" && return 0
        sleep 0.1
    done
    abort "the receiver did not start"
}
stop_receiver() {
    kill "$recv_pid" 2>/dev/null || true
    wait "$recv_pid" 2>/dev/null || true
    recv_pid=""
}
start_serve() {
    "$SLUICE" serve --config "$site" --state-dir "$state" --socket "$sock" >>"$work/serve.log" 2>&1 &
    serve_pid=$!
    # recovery reads the cluster before the socket opens: allow 60 s
    for _ in $(seq 1 600); do
        [ -S "$sock" ] && curl -s -o /dev/null --unix-socket "$sock" http://localhost/v1/healthz &&
            return 0
        sleep 0.1
    done
    tail -20 "$work/serve.log" >&2
    abort "sluice serve did not start within 60 s"
}
# stop_serve SIGNAL
stop_serve() {
    kill -s "$1" "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
    rm -f "$sock"
}
# req METHOD PATH [curl args...]: body in $work/body, status in $code
req() {
    local m=$1 p=$2
    shift 2
    code=$(curl -s --unix-socket "$sock" -o "$work/body" -w '%{http_code}' -X "$m" "$@" \
        "http://localhost$p") || code=000
}
post() { req POST /v1/launches -H 'Content-Type: application/json' --data-binary "$1"; }
launch_state() {
    req GET "/v1/launches/$1"
    python3 -c "import json; print(json.load(open('$work/body'))['state'])" 2>/dev/null || echo "?"
}
# wait_done ID SECONDS
wait_done() {
    local i
    for i in $(seq 1 "$2"); do
        [ "$(launch_state "$1")" = DONE ] && return 0
        sleep 1
    done
    return 1
}
pool() { # NAME SERIES COMMAND
    printf '{"name": "%s", "gpu_series": "%s", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200, "args": ["-c", "%s"]}' "$1" "$2" "$3"
}
body() { # ID POOLS [EXTRA]
    printf '{"launch_id": "%s", "site": "%s", "profile": "none", "command": "/bin/bash", "time_limit": 5, "pools": [%s]%s}' \
        "$1" "$SLUICE_TB_CLUSTER" "$2" "${3:-}"
}
# check ID PATH: every transition of launch ID (its event log: each event
# whose state differs from the previous one) arrived at PATH once by
# delivery id, in gseq order, signed.  Prints "ok" or what differs.
check() {
    req GET "/v1/launches/$1"
    python3 - "$work/body" "$got" "$1" "$2" <<'PY'
import json, sys
launch = json.load(open(sys.argv[1]))
want, prev = [], None
for e in launch["events"]:
    if e.get("state") is not None and e["state"] != prev:
        want.append((e["gseq"], e["state"]))
    prev = e.get("state")
recs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
recs = [r for r in recs if r.get("launch_id") == sys.argv[3] and r["path"] == sys.argv[4]]
seen, got = set(), []
for r in recs:
    if r["delivery_id"] in seen:
        continue
    seen.add(r["delivery_id"])
    got.append((r["gseq"], r["state"]))
bad = [r for r in recs if not r["sig_ok"] or r["delivery"] != r["delivery_id"] or
       r["event_header"] != r["event"]]
last = recs[-1] if recs else {}
if bad:
    print("bad signature or headers: %s" % bad[:2])
elif got != want:
    print("want %s got %s" % (want, got))
elif want[-1][1] != "DONE" or last.get("result_code") != launch.get("result_code"):
    print("no DONE with the launch's result: %s" % last)
else:
    print("ok")
PY
}
# wait_check SECONDS ID PATH...: until every check says ok
wait_check() {
    local n=$1 id=$2 i p all
    shift 2
    for i in $(seq 1 "$n"); do
        all=ok
        for p in "$@"; do
            r=$(check "$id" "$p")
            [ "$r" = ok ] || { all="$p: $r"; break; }
        done
        [ "$all" = ok ] && { echo ok; return 0; }
        sleep 1
    done
    echo "$all"
}
metric() { # NAME{LABELS}
    req GET /v1/metrics
    awk -v m="$1" '$1 == m {print $2}' "$work/body"
}

start_receiver
start_serve

# ------------------------------------------------- 1. a hetjob, two URLs
het="het-$run"
post "$(body "$het" "$(pool trainer a100 'sleep 1'), $(pool rollout h100 'sleep 1')" \
    ", \"webhook\": {\"url\": \"http://127.0.0.1:$port/launch/$het\"}")"
c=$code
if [ "$c" = 201 ] && wait_done "$het" 60 &&
    r=$(wait_check 20 "$het" /site "/launch/$het") && [ "$r" = ok ]; then
    pass "hetjob: every transition once, in order, signed, at the site's and the launch's URL, ending DONE"
else
    fail "hetjob (POST $c, state $(launch_state "$het")): ${r:-}; $(tail -3 "$work/serve.log")"
fi

# ------------------------------------------------- 2. a URL outside the prefixes
post "$(body "bad-$run" "$(pool main a100 'true')" ', "webhook": {"url": "http://127.0.0.1:1/other"}')"
if [ "$code" = 422 ] && grep -q 'webhook.url' "$work/body"; then
    pass "a request URL outside webhooks.request_url_prefixes: 422 naming webhook.url"
else
    fail "outside URL: $code $(cat "$work/body")"
fi

# ------------------------------------------------- 3. metrics
d=$(metric 'sluice_webhook_deliveries_total{outcome="delivered"}')
q=$(metric 'sluice_webhook_queue_depth{state="pending"}')
if [ "${d:-0}" -ge 8 ] && [ "$q" = 0 ]; then
    pass "metrics: $d delivered, queue empty"
else
    fail "metrics: delivered '$d', pending '$q'"
fi

# ------------------------------------------------- 4. restart (SIGTERM)
stop_receiver
a="rs-a-$run"
b="rs-b-$run"
post "$(body "$a" "$(pool main a100 'true')")"
ca=$code
post "$(body "$b" "$(pool main h100 'true')")"
cb=$code
ok=1
wait_done "$a" 60 && wait_done "$b" 60 || ok=0
sleep 2
qd=$(metric 'sluice_webhook_queue_depth{state="pending"}')
rt=$(metric 'sluice_webhook_retries_total')
stop_serve TERM
start_serve
start_receiver
ra=$(wait_check 30 "$a" /site)
rb=$(wait_check 30 "$b" /site)
if [ "$ca$cb" = 201201 ] && [ "$ok" = 1 ] && [ "${qd:-0}" -ge 8 ] && [ "${rt:-0}" -ge 1 ] &&
    [ "$ra" = ok ] && [ "$rb" = ok ]; then
    pass "receiver down: $qd deliveries queued ($rt retries); after SIGTERM and a restart every transition arrives"
else
    fail "SIGTERM restart (POST $ca $cb, done $ok, queued '$qd', retries '$rt'): $a: $ra; $b: $rb"
fi

# ------------------------------------------------- 5. restart (SIGKILL)
stop_receiver
k="rk-$run"
post "$(body "$k" "$(pool main a100 'true')")"
ck=$code
ok=1
wait_done "$k" 60 || ok=0
stop_serve KILL
start_serve
start_receiver
rk=$(wait_check 30 "$k" /site)
if [ "$ck" = 201 ] && [ "$ok" = 1 ] && [ "$rk" = ok ]; then
    pass "receiver down, SIGKILL, restart: every transition arrives"
else
    fail "SIGKILL restart (POST $ck, done $ok): $rk"
fi
finish
