#!/usr/bin/env bash
# hostile.sh - the attacker of issue 27 against `sluice serve` on the real
# testbed: a caller (mallory) with its own API token, whose jobs run as the
# testbed's job user and so own their staging directories, beside another
# caller (alice) who only wants her launch to finish.
#
#   1. mallory's job swaps its stdout.log for a symlink to the service's API
#      tokens file: the log route (plain and follow=true, read by alice's
#      token too) refuses it (409 log-refused, never an empty 200) and
#      `sluice logs` exits 74, neither with a byte of it, and the archive
#      holds none of it (410 log-gone naming the rule once archived);
#   2. a job swaps its stderr.log for a FIFO: the log route answers 409 at
#      once, a followed stream neither hangs the service nor blocks health,
#      and the launch is archived and ends;
#   3. a hetjob writes 999 into exit/a, makes it read-only and cancels its
#      own job (scancel $SLURM_JOB_ID): the launch ends, and the launcher
#      does not fail every cycle;
#   4. a hetjob pool writes text into its exit file and exits 0: the launch
#      ends EXECUTION_ERROR naming the pool's unknown status and the text;
#   5. option-shaped commands (--jobid=, --container-image=,
#      --container-mounts=) under every profile are refused (422 naming the
#      field), and option-shaped args reach the program, not srun;
#   6. secret_env asks for the service's PGPASSWORD, HOME and a variable that
#      does not exist: one refusal for all three (422), no value in it;
#   7. a webhook URL that leaves the site's prefix by dot segments (plain and
#      percent-encoded) is refused (422 naming webhook.url);
#   8. unauthenticated connections that trickle their request head hold no
#      slot for long: while they are open the Unix socket and a TCP request
#      with a token are answered, and the server closes the slow ones;
#   9. alice's launch, submitted while the hostile ones run, ends SUCCEEDED,
#      every hostile launch reaches a terminal state, and no response of the
#      whole run holds a token, the JWT or the service's PGPASSWORD.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only; the
# service listens on 127.0.0.1 and a Unix socket.  A missing testbed is a
# failure, never a skip.  Last line: "hostile: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=9
NAME=hostile
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
command -v curl >/dev/null || abort "curl is missing"
command -v python3 >/dev/null || abort "python3 is missing"
e2e_testbed_env
e2e_require_loopback
e2e_require_running

work=$(mktemp -d /tmp/sluice-e2e-hostile.XXXXXX)
chmod 0711 "$work"
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
run="h$(date +%s)$$"
site="$work/site.yaml"
state="$work/state"
sock="$work/api.sock"
tok_alice="tok-alice-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
tok_mallory="tok-mallory-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
pg_secret="pg-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
printf 'alice %s\nmallory %s\n' "$tok_alice" "$tok_mallory" >"$work/tokens"
chmod 0600 "$work/tokens"
# The site: the testbed's, with a webhook prefix a request may name and one
# variable a request may ask for.
bash "$REPO/deploy/testbed/site-config.sh" >"$site"
od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$work/hook.key"
chmod 0600 "$work/hook.key"
cat >>"$site" <<YAML
webhooks:
  secret_file: $work/hook.key
  allow_request_urls: true
  request_url_prefixes: ["http://127.0.0.1:9/allowed/"]
YAML
sed -i 's/^policy:$/policy:\n  allowed_secret_env: [E2E_HOSTILE_OK]/' "$site"
grep -q 'allowed_secret_env' "$site" || abort "could not add allowed_secret_env to $site"

# The service's own environment holds a database password and one variable
# the site lets a request name.
export PGPASSWORD="$pg_secret" E2E_HOSTILE_OK="ok-$run"
e2e_serve_run --socket "$sock"
unset PGPASSWORD E2E_HOSTILE_OK
base="http://127.0.0.1:$port"
MAL="Authorization: Bearer $tok_mallory"
ALICE="Authorization: Bearer $tok_alice"

# req METHOD PATH [curl args...]: body in $work/body (and appended to
# $work/responses, which step 9 searches for secrets), status in $code.
req() {
    local m=$1 p=$2
    shift 2
    code=$(curl -s -o "$work/body" -w '%{http_code}' --max-time 10 -X "$m" "$@" "$base$p") ||
        code=${code:-000}
    cat "$work/body" >>"$work/responses" 2>/dev/null || true
}
post() { # BODY [TOKEN-HEADER]: POST /v1/launches
    req POST /v1/launches -H "${2:-$MAL}" -H 'Content-Type: application/json' --data-binary "$1"
}
jq_() { python3 -c "import json,sys; d=json.load(open('$work/body')); print($1)" 2>/dev/null || echo "?"; }
state_of() { # ID: "STATE RESULT_CODE"
    req GET "/v1/launches/$1" -H "$ALICE"
    [ "$code" = 200 ] && jq_ "d['state'], d.get('result_code')" | tr -d '(),' || echo "? ?"
}
wait_done() { # ID SECONDS
    local i
    for i in $(seq 1 "$2"); do
        [ "$(state_of "$1" | cut -d' ' -f1)" = DONE ] && return 0
        sleep 1
    done
    return 1
}
reason_of() { req GET "/v1/launches/$1" -H "$ALICE"; jq_ "d.get('reason')"; }
# The launch's attempt directory as the service sees it (render once: the
# stored render names it).
staging_of() {
    local id=$1
    printf '%s/%s/%s/attempt-1' "$SLUICE_TB_STORAGE_ROOT" "$SLUICE_TB_CLUSTER" \
        "$(printf '%s' "$id" | sha256sum | cut -c1-8)"
}
wait_file() { # PATH SECONDS
    local i
    for i in $(seq 1 $(($2 * 4))); do
        [ -e "$1" ] && return 0
        sleep 0.25
    done
    return 1
}
launch_body() { # ID PROFILE POOLS-JSON
    printf '{"launch_id": "%s", "site": "%s", "profile": "%s", "time_limit": 5, "pools": [%s]}' \
        "$1" "$SLUICE_TB_CLUSTER" "$2" "$3"
}
pool() { # NAME SCRIPT
    python3 -c 'import json,sys; print(json.dumps({"name": sys.argv[1], "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 100, "command": "/bin/bash", "args": ["-c", sys.argv[2]]}))' "$1" "$2"
}

# ------------------------------------------ 1. stdout.log -> the tokens file
sym="sym-$run"
post "$(launch_body "$sym" none "$(pool main "echo before-swap; ln -sf '$work/tokens' \"\$SLUICE_STAGING/stdout.log\"; : >\"\$SLUICE_STAGING/swapped\"; sleep 25")")"
sym_code=$code
bad=""
if [ "$sym_code" != 201 ]; then
    bad="POST $sym: $sym_code $(cat "$work/body")"
elif ! wait_file "$(staging_of "$sym")/swapped" 90; then
    bad="the job never swapped its log ($(state_of "$sym"))"
else
    for hdr in "$MAL" "$ALICE"; do
        req GET "/v1/launches/$sym/logs/stdout" -H "$hdr"
        { [ "$code" = 409 ] && grep -q 'log-refused' "$work/body"; } ||
            bad="$bad [logs: $code $(head -c 200 "$work/body")]"
        grep -q 'tok-' "$work/body" && bad="$bad [the log route served the tokens file]"
        req GET "/v1/launches/$sym/logs/stdout?follow=true" -H "$hdr" --max-time 3
        [ "$code" = 409 ] || bad="$bad [follow: $code]"
        grep -q 'tok-' "$work/body" && bad="$bad [follow served the tokens file]"
    done
    cli_rc=0
    "$SLUICE" logs "$sym" --state-dir "$state" >"$work/cli.out" 2>"$work/cli.err" || cli_rc=$?
    cat "$work/cli.out" "$work/cli.err" >>"$work/responses"
    grep -q 'tok-' "$work/cli.out" && bad="$bad [sluice logs printed the tokens file]"
    if [ "$cli_rc" != 74 ] || ! grep -q 'symbolic link' "$work/cli.err"; then
        bad="$bad [sluice logs: exit $cli_rc: $(cat "$work/cli.err")]"
    fi
fi
if [ -z "$bad" ]; then
    pass "a log swapped for a symlink to the tokens file: the log route (both callers, follow too) refuses it, 409 log-refused; sluice logs refuses it (exit 74)"
else
    fail "symlinked log:$bad"
fi

# --------------------------------------------------- 2. stderr.log -> FIFO
fifo="fifo-$run"
post "$(launch_body "$fifo" none "$(pool main "mkfifo \"\$SLUICE_STAGING/x.fifo\" && mv -f \"\$SLUICE_STAGING/x.fifo\" \"\$SLUICE_STAGING/stderr.log\"; : >\"\$SLUICE_STAGING/swapped\"; sleep 8")")"
bad=""
if [ "$code" != 201 ]; then
    bad="POST $fifo: $code $(cat "$work/body")"
elif ! wait_file "$(staging_of "$fifo")/swapped" 90; then
    bad="the job never made its FIFO ($(state_of "$fifo"))"
else
    t0=$(date +%s%N)
    req GET "/v1/launches/$fifo/logs/stderr" -H "$ALICE"
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$code" = 409 ] && [ "$ms" -lt 5000 ] || bad="$bad [logs: $code after $ms ms]"
    # a few followed streams on the FIFO at once, then health over both doors
    followers=()
    for _ in 1 2 3 4; do
        curl -s -o /dev/null --max-time 6 -H "$ALICE" "$base/v1/launches/$fifo/logs/stderr?follow=true" &
        followers+=($!)
    done
    sleep 1
    req GET /v1/healthz
    [ "$code" = 200 ] || bad="$bad [healthz during follows: $code]"
    code=$(curl -s -o "$work/body" -w '%{http_code}' --max-time 5 --unix-socket "$sock" \
        http://localhost/v1/launches) || code=000
    [ "$code" = 200 ] || bad="$bad [socket during follows: $code]"
    for p in "${followers[@]}"; do wait "$p" || true; done
fi
if [ -z "$bad" ] && wait_done "$fifo" 120; then
    pass "a log swapped for a FIFO: the route answers 409 at once, followed streams block nobody, the launch ends ($(state_of "$fifo"))"
else
    fail "FIFO log:$bad (state $(state_of "$fifo"))"
fi

# -------------------------------- 3. exit/a = 999, read-only, scancel itself
ex="exit-$run"
post "$(launch_body "$ex" none "$(pool a "printf '999\\n' >\"\$SLUICE_STAGING/exit/a\"; chmod 0400 \"\$SLUICE_STAGING/exit/a\"; scancel \"\$SLURM_JOB_ID\"; sleep 30"), $(pool b "sleep 30")")"
ex_code=$code
# -------------------------------------- 4. text in an exit file, then exit 0
garb="garb-$run"
post "$(launch_body "$garb" none "$(pool a "printf 'not-a-status\\n' >\"\$SLUICE_STAGING/exit/a\"; chmod 0400 \"\$SLUICE_STAGING/exit/a\"; exit 0"), $(pool b "sleep 2")")"
garb_code=$code
# ------------------------------- 9 (part). alice's launch while they run
ok="alice-$run"
post "$(launch_body "$ok" none "$(pool main "echo alice-done")")" "$ALICE"
ok_code=$code

if [ "$ex_code" = 201 ] && wait_done "$ex" 180; then
    pass "a hetjob that wrote 999 into a read-only exit/a and cancelled itself ends: $(state_of "$ex") ($(reason_of "$ex"))"
else
    fail "exit garbage + scancel: POST $ex_code, state $(state_of "$ex")"
fi
if [ "$garb_code" = 201 ] && wait_done "$garb" 180; then
    st=$(state_of "$garb")
    why=$(reason_of "$garb")
    if [ "$st" = "DONE 1" ] && grep -q "pool 'a' failed (status unknown: its exit file held 'not-a-status'" <<<"$why"; then
        pass "a pool whose exit file holds text: EXECUTION_ERROR, its status unknown, the text in the reason ($why)"
    else
        fail "text in exit/a: $st ($why)"
    fi
else
    fail "text in exit/a: POST $garb_code, state $(state_of "$garb")"
fi

# ------------------------------------------- 5. option-shaped commands
bad=""
for prof in none apptainer enroot-pyxis; do
    img=""
    [ "$prof" = none ] || img=', "image": "/nonexistent/x.sif"'
    for cmd in "--jobid=1" "--container-image=/tmp/evil.sqsh" "-x"; do
        body=$(printf '{"launch_id": "opt-%s", "site": "%s", "profile": "%s"%s, "command": "%s", "pools": [{"name": "main"}]}' \
            "$run" "$SLUICE_TB_CLUSTER" "$prof" "$img" "$cmd")
        post "$body"
        [ "$code" = 422 ] && grep -q '"command"' "$work/body" ||
            bad="$bad [$prof command $cmd: $code $(head -c 200 "$work/body")]"
    done
    body=$(printf '{"launch_id": "opt-%s", "site": "%s", "profile": "%s"%s, "pools": [{"name": "main", "command": "--container-mounts=%s:/all"}]}' \
        "$run" "$SLUICE_TB_CLUSTER" "$prof" "$img" "$SLUICE_TB_STORAGE_ROOT")
    post "$body"
    [ "$code" = 422 ] && grep -q 'pools\[0\].command' "$work/body" ||
        bad="$bad [$prof pool command: $code $(head -c 200 "$work/body")]"
    body=$(printf '{"launch_id": "opt-%s", "site": "%s", "profile": "%s"%s, "command": "/bin/true", "pools": [{"name": "main", "nodes": 2, "additional_node_command": "--jobid=1 /bin/true"}]}' \
        "$run" "$SLUICE_TB_CLUSTER" "$prof" "$img")
    post "$body"
    [ "$code" = 422 ] && grep -q 'additional_node_command' "$work/body" ||
        bad="$bad [$prof additional_node_command: $code $(head -c 200 "$work/body")]"
done
# option-shaped args go to the program
argsid="args-$run"
post "$(printf '{"launch_id": "%s", "site": "%s", "profile": "none", "time_limit": 5, "command": "/bin/echo", "args": ["--jobid=1", "--container-mounts=/:/all"], "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 100}]}' \
    "$argsid" "$SLUICE_TB_CLUSTER")"
if [ "$code" != 201 ]; then
    bad="$bad [args launch: $code $(cat "$work/body")]"
elif ! wait_done "$argsid" 120; then
    bad="$bad [args launch did not end: $(state_of "$argsid")]"
else
    req GET "/v1/launches/$argsid/logs/stdout" -H "$MAL"
    grep -qx -- '--jobid=1 --container-mounts=/:/all' "$work/body" ||
        bad="$bad [the args did not reach echo: $(head -c 200 "$work/body"), $(state_of "$argsid")]"
fi
if [ -z "$bad" ]; then
    pass "option-shaped commands under none, apptainer and enroot-pyxis: 422 naming the field; option-shaped args reach the program"
else
    fail "option injection:$bad"
fi

# ------------------------------------------------ 6. service variables
bad=""
reasons=""
for var in PGPASSWORD HOME "E2E_NOT_SET_$run"; do
    post "$(printf '{"launch_id": "env-%s", "site": "%s", "profile": "none", "command": "/bin/true", "secret_env": ["%s"], "pools": [{"name": "main"}]}' \
        "$run" "$SLUICE_TB_CLUSTER" "$var")"
    [ "$code" = 422 ] || bad="$bad [$var: $code]"
    grep -q "$pg_secret" "$work/body" && bad="$bad [$var: the value was in the answer]"
    reasons="$reasons$(jq_ "[e['reason'] for e in d.get('errors', [])]" | sed "s/$var/NAME/g")"$'\n'
done
[ "$(sort -u <<<"$reasons" | grep -c .)" = 1 ] || bad="$bad [the answers differ: $reasons]"
grep -q 'policy.allowed_secret_env' <<<"$reasons" || bad="$bad [no reason naming the policy: $reasons]"
if [ -z "$bad" ]; then
    pass "secret_env of PGPASSWORD, HOME and an unset variable: one 422 for all three, no value"
else
    fail "secret_env:$bad"
fi

# ------------------------------------------------ 7. webhook dot segments
bad=""
for url in "http://127.0.0.1:9/allowed/../secret" "http://127.0.0.1:9/allowed/%2e%2e/admin" \
    "http://127.0.0.1:9/allowed/%2E%2E/admin" "http://127.0.0.1:9/allowed/./../x" \
    "http://127.0.0.1:9/allowed/a/..%2f..%2fadmin"; do
    post "$(printf '{"launch_id": "wh-%s", "site": "%s", "profile": "none", "command": "/bin/true", "webhook": {"url": "%s"}, "pools": [{"name": "main"}]}' \
        "$run" "$SLUICE_TB_CLUSTER" "$url")"
    [ "$code" = 422 ] && grep -q 'webhook.url' "$work/body" || bad="$bad [$url: $code $(head -c 200 "$work/body")]"
done
post "$(printf '{"launch_id": "wh-%s", "site": "%s", "profile": "none", "command": "/bin/true", "webhook": {"url": "http://127.0.0.1:9/allowed/hook"}, "pools": [{"name": "main"}]}' \
    "$run" "$SLUICE_TB_CLUSTER")" 
[ "$code" = 201 ] || bad="$bad [an allowed URL: $code $(head -c 200 "$work/body")]"
if [ -z "$bad" ]; then
    pass "webhook URLs that leave the prefix by dot segments (plain and encoded): 422 naming webhook.url; an allowed one is accepted"
else
    fail "webhook prefix:$bad"
fi

# --------------------------------------------------- 8. slow request heads
slow=$(python3 - "$port" "$sock" "$tok_alice" <<'PY'
import socket, sys, time
port, sock_path, tok = int(sys.argv[1]), sys.argv[2], sys.argv[3]
conns = []
for _ in range(300):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(b"GET /v1/launches HTTP/1.1\r\nHost: x\r\n")  # never finished
        conns.append(s)
    except OSError:
        break
def ask(unix):
    s = socket.socket(socket.AF_UNIX if unix else socket.AF_INET)
    s.settimeout(5)
    try:
        s.connect(sock_path if unix else ("127.0.0.1", port))
        hdr = "" if unix else "Authorization: Bearer %s\r\n" % tok
        s.sendall(("GET /v1/healthz HTTP/1.1\r\nHost: x\r\n%sConnection: close\r\n\r\n" % hdr).encode())
        return s.recv(64).split(b" ")[1].decode()
    except OSError as e:
        return "error:%s" % e.__class__.__name__
    finally:
        s.close()
sock_ans, tcp_ans = ask(True), ask(False)
# the server closes heads that never complete
deadline, closed = time.time() + 60, 0
while time.time() < deadline and closed < len(conns):
    closed = 0
    for s in conns:
        s.settimeout(0.01)
        try:
            closed += s.recv(1) == b""
        except socket.timeout:
            pass
        except OSError:
            closed += 1
    time.sleep(0.5)
print(len(conns), sock_ans, tcp_ans, closed)
PY
) || slow="? ? ? ?"
read -r n_slow sock_ans tcp_ans n_closed <<<"$slow"
if [ "$sock_ans" = 200 ] && [ "$tcp_ans" = 200 ] && [ "$n_closed" = "$n_slow" ]; then
    pass "$n_slow trickled request heads: the Unix socket and a TCP request with a token are answered meanwhile, and the server closed all $n_closed"
else
    fail "slow heads: $n_slow open, socket $sock_ans, TCP $tcp_ans, closed $n_closed"
fi

# ----------------------------- 9. every launch ends; nothing secret leaked
bad=""
if [ "$ok_code" != 201 ] || ! wait_done "$ok" 180 || [ "$(state_of "$ok")" != "DONE 0" ]; then
    bad="$bad [alice's launch: POST $ok_code, $(state_of "$ok")]"
fi
for id in "$sym" "$fifo" "$ex" "$garb" "$argsid"; do
    wait_done "$id" 120 || bad="$bad [$id never ended: $(state_of "$id")]"
done
for _ in $(seq 1 20); do # DONE first, archived at the same or the next cycle
    req GET "/v1/launches/$sym/logs/stdout" -H "$ALICE"
    [ "$code" = 410 ] && break
    sleep 0.5
done
grep -q 'tok-' "$work/body" && bad="$bad [the archived log holds the tokens file]"
{ [ "$code" = 410 ] && grep -q 'symbolic link' "$work/body"; } ||
    bad="$bad [the archived symlinked log: $code $(head -c 200 "$work/body"), not 410 naming the rule]"
jwt=$(tr -d ' \n' <"$SLUICE_TB_TOKEN_FILE" 2>/dev/null | sed 's/^SLURM_JWT=//')
for secret in "$tok_alice" "$tok_mallory" "$pg_secret" "${jwt:-no-jwt-file}"; do
    grep -qF -- "$secret" "$work/responses" && bad="$bad [a response held a secret (${secret:0:8}...)]"
done
grep -qF -- "$pg_secret" "$work/serve.log" && bad="$bad [the service log holds PGPASSWORD]"
if [ -z "$bad" ]; then
    pass "alice's launch SUCCEEDED among the hostile ones, every launch ended, and no response held a token, the JWT or PGPASSWORD"
else
    fail "ends and secrets:$bad"
fi

finish
