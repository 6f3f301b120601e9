#!/usr/bin/env bash
# serve_tls.sh - `sluice serve` over TLS and over the Unix socket on the
# local testbed, with a CA and a server certificate for 127.0.0.1 (IP SAN)
# made here with openssl:
# e2e-releases: 26.05
# (what it proves is sluice's own surface, the same on every release; the
# REST paths it crosses run in the suites registered on all three.)
#
#   1. CLI over https (--server https://127.0.0.1:PORT --api-ca): launch
#      --wait of a two-pool hetjob (a100 + h100) exits 0 with its
#      transitions; status, ls and logs work;
#   2. a wrong CA (and no CA) is refused with exit 69 and an error naming
#      the certificate; plain http:// to the TLS port gets no HTTP answer;
#   3. a launch with a per-launch secret over TLS is accepted, the workload
#      sees the value, and the value is nowhere in the store, the service
#      log or the testbed's state directory; the same request to a plain
#      loopback listener (a second service with its own store) is 403
#      naming `secrets` and stores nothing;
#   4. the Unix socket is mode 0660 with the group asked for; a launch
#      through it (CLI --server unix:) records created_by "unix:root";
#   5. GET /v1/launches/{id} of the finished hetjob: created_by, two
#      components, each with its job id and nodes, every node's address
#      the one the live slurmrestd reports for it (NodeAddr);
#   6. ownership: another token caller's DELETE of alice's running launch
#      is 403 and changes nothing; an admin caller's DELETE ends it
#      ABORTED (9), audited with the admin's name.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only; both
# services listen on 127.0.0.1 (ports chosen by the kernel).  A missing
# testbed is a failure, never a skip.  Last line:
# "serve_tls: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=6
NAME=serve_tls
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
for tool in curl openssl python3 stat; do
    command -v "$tool" >/dev/null || abort "$tool is missing"
done
e2e_testbed_env
e2e_require_loopback
e2e_require_running

work=$(mktemp -d /tmp/sluice-e2e-tls.XXXXXX)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
run="t$(date +%s)$$"
site="$work/site.yaml"
state="$work/state"
state_plain="$work/state-plain"
sock="$work/api.sock"
bash "$REPO/deploy/testbed/site-config.sh" >"$site"

# --------------------------------------------------------- certificates
# A CA, a server certificate for 127.0.0.1 signed by it, and a second CA
# that signed nothing of ours.
pki="$work/pki"
mkdir -m 0700 "$pki"
mkca() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
        -subj "/CN=$2" -keyout "$pki/$1.key" -out "$pki/$1.pem" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
{
    mkca ca "sluice e2e CA $run" &&
        mkca wrong-ca "sluice e2e other CA $run" &&
        openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -subj "/CN=127.0.0.1" -keyout "$pki/server.key" -out "$pki/server.csr" &&
        printf '%s\n' 'subjectAltName=IP:127.0.0.1' 'basicConstraints=CA:FALSE' \
            'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' >"$pki/ext" &&
        openssl x509 -req -in "$pki/server.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" \
            -CAcreateserial -days 1 -extfile "$pki/ext" -out "$pki/server.pem"
} >"$work/openssl.log" 2>&1 || { cat "$work/openssl.log" >&2; abort "openssl could not make the certificates"; }
chmod 0600 "$pki"/*.key

# ------------------------------------------------------------- tokens
newtok() { printf 'tok-%s-%s' "$1" "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"; }
tok_alice=$(newtok alice)
tok_bob=$(newtok bob)
tok_ops=$(newtok ops)
printf 'alice %s\nbob %s\nops %s admin\n' "$tok_alice" "$tok_bob" "$tok_ops" >"$work/tokens"
printf '%s\n' "$tok_alice" >"$work/alice.token"
chmod 0600 "$work/tokens" "$work/alice.token"

# The socket's group: the testbed user's own group (root may give it).
sock_group=$(id -gn "$SLUICE_TB_USER" 2>/dev/null || echo adm)

# ----------------------------------------------------------- services
# start_serve LOG STATE ARGS...: starts a service, sets $port from its
# "listening on" line.
start_serve() {
    local log=$1 st=$2 i
    shift 2
    "$SLUICE" serve --config "$site" --state-dir "$st" --listen 127.0.0.1:0 \
        --tokens "$work/tokens" "$@" >"$log" 2>&1 &
    pids+=($!)
    port=""
    for i in $(seq 1 100); do
        port=$(sed -n 's/.*listening on https*:\/\/.*(port \([0-9]*\)).*/\1/p' "$log" | head -1)
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$log" >&2; abort "sluice serve did not start ($*)"; }
}
start_serve "$work/serve.log" "$state" --tls-cert "$pki/server.pem" --tls-key "$pki/server.key" \
    --socket "$sock" --socket-group "$sock_group"
tls_port=$port
for _ in $(seq 1 50); do [ -S "$sock" ] && break; sleep 0.1; done
grep -q "listening on https://127.0.0.1:0 (port $tls_port)" "$work/serve.log" ||
    abort "the TLS service does not say https: $(cat "$work/serve.log")"
# The plain loopback listener needs a store of its own (one supervisor per store).
start_serve "$work/serve-plain.log" "$state_plain"
plain_port=$port
tls="https://127.0.0.1:$tls_port"
plain="http://127.0.0.1:$plain_port"

# req METHOD URL [curl args...]: body in $work/body, status in $code;
# https URLs are verified with our CA.
req() {
    local m=$1 u=$2
    shift 2
    code=$(curl -s --cacert "$pki/ca.pem" --max-time 20 -o "$work/body" -w '%{http_code}' \
        -X "$m" "$@" "$u") || code=000
}
jq_() { python3 -c "import json,sys; d=json.load(open('$work/body')); print($1)" 2>/dev/null || echo "?"; }
A_ALICE="Authorization: Bearer $tok_alice"
state_of() {
    req GET "$tls/v1/launches/$1" -H "$A_ALICE"
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
pool() { # NAME SERIES ARGS
    printf '{"name": "%s", "gpu_series": "%s", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200, "args": ["-c", "%s"]}' "$1" "$2" "$3"
}
TLS_CLI=(--server "$tls" --api-ca "$pki/ca.pem" --api-token-file "$work/alice.token")

# The long launch for the ownership case runs beside everything else (the
# testbed's nodes are shared: 4 CPUs each, 1 per job).
long="long-$run"
req POST "$tls/v1/launches" -H "$A_ALICE" -H 'Content-Type: application/json' --data-binary \
    "{\"launch_id\": \"$long\", \"site\": \"$SLUICE_TB_CLUSTER\", \"profile\": \"none\", \"command\": \"/bin/sleep\", \"args\": [\"300\"], \"time_limit\": 10, \"pools\": [{\"name\": \"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 200}]}"
long_post=$code

# The secret launch, over TLS (the value is only in this shell's memory
# and curl's argument list, never in a file).
secret="s3cr3t-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
# The workload compares the value's SHA-256 (the script never holds the value).
secret_sum=$(printf '%s' "$secret" | sha256sum | cut -d' ' -f1)
secret_body() { # LAUNCH_ID
    printf '{"launch_id": "%s", "site": "%s", "profile": "none", "command": "/bin/bash", "time_limit": 5, "args": ["-c", "if [ \\"$(printf %%s \\"$E2E_SECRET\\" | sha256sum | cut -c1-64)\\" = %s ]; then echo secret-ok; fi; test ! -e \\"$SLUICE_STAGING/secrets.env\\" && echo secrets-file-gone"], "secrets": {"E2E_SECRET": "%s"}, "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}' \
        "$1" "$SLUICE_TB_CLUSTER" "$secret_sum" "$secret"
}
sec="sec-$run"
req POST "$tls/v1/launches" -H "$A_ALICE" -H 'Content-Type: application/json' \
    --data-binary "$(secret_body "$sec")"
sec_post=$code

# ------------------------------------------- 1. CLI over https: hetjob
het="het-$run"
printf '{"launch_id": "%s", "site": "%s", "profile": "none", "command": "/bin/bash", "time_limit": 5, "pools": [%s, %s]}\n' \
    "$het" "$SLUICE_TB_CLUSTER" "$(pool trainer a100 'sleep 2; echo trainer-ok')" \
    "$(pool rollout h100 'sleep 6')" >"$work/het.json"
crc=0
timeout 150 "$SLUICE" launch "$work/het.json" --wait "${TLS_CLI[@]}" >"$work/het.out" 2>&1 || crc=$?
st=$("$SLUICE" status "${TLS_CLI[@]}" "$het" 2>&1 | sed -n 's/^state *//p')
ls_ok=0
"$SLUICE" ls "${TLS_CLI[@]}" --state DONE 2>&1 | grep -q "^$het " && ls_ok=1
lg=$(timeout 30 "$SLUICE" logs "${TLS_CLI[@]}" "$het" 2>&1 || true)
if [ "$crc" = 0 ] &&
    grep -q "^launch $het accepted (site $SLUICE_TB_CLUSTER, 2 pools, one hetjob)$" "$work/het.out" &&
    grep -q '] RUNNING' "$work/het.out" && grep -q '] DONE .*result=SUCCEEDED(0)' "$work/het.out" &&
    [ "$st" = DONE ] && [ "$ls_ok" = 1 ] && [ "$lg" = trainer-ok ]; then
    pass "CLI over https (--api-ca): hetjob launch --wait exit 0 with transitions; status, ls, logs"
else
    fail "CLI over https (exit $crc, status '$st', ls $ls_ok, logs '$lg')"
    sed 's/^/    | /' "$work/het.out" >&2
fi
sed 's/^/    cli | /' "$work/het.out"

# ------------------------------------- 2. wrong CA, no CA, plain http
wrc=0
"$SLUICE" status --server "$tls" --api-ca "$pki/wrong-ca.pem" --api-token-file "$work/alice.token" \
    "$het" >"$work/wrong.out" 2>&1 || wrc=$?
nrc=0
"$SLUICE" status --server "$tls" --api-token-file "$work/alice.token" "$het" \
    >"$work/noca.out" 2>&1 || nrc=$?
hrc=0
"$SLUICE" status --server "http://127.0.0.1:$tls_port" --api-token-file "$work/alice.token" "$het" \
    >"$work/http.out" 2>&1 || hrc=$?
hcode=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' -H "$A_ALICE" \
    "http://127.0.0.1:$tls_port/v1/launches/$het" 2>/dev/null) || true
req GET "$tls/v1/healthz"
after=$code
if [ "$wrc" = 69 ] && grep -qi "cannot reach the service at $tls: .*certificate" "$work/wrong.out" &&
    [ "$nrc" = 69 ] && grep -qi 'certificate' "$work/noca.out" &&
    [ "$hrc" = 69 ] && grep -q "cannot reach the service at http://127.0.0.1:$tls_port" "$work/http.out" &&
    [ "$hcode" = 000 ] && [ "$after" = 200 ]; then
    pass "wrong CA and no CA refused (exit 69, '$(head -1 "$work/wrong.out")'); plain http to the TLS port gets no answer (exit 69)"
else
    fail "refusals (wrong CA exit $wrc, no CA exit $nrc, http exit $hrc, curl http $hcode, healthz after $after)"
    cat "$work/wrong.out" "$work/noca.out" "$work/http.out" | sed 's/^/    | /' >&2
fi

# -------------------------------------------- 3. secret over TLS only
wait_state "$sec" DONE 60 || true
sec_final=$(state_of "$sec")
req GET "$tls/v1/launches/$sec/logs/stdout" -H "$A_ALICE"
sec_out=$(tr '\n' ' ' <"$work/body")
req POST "$plain/v1/launches" -H "$A_ALICE" -H 'Content-Type: application/json' \
    --data-binary "$(secret_body "plain-$run")"
p_code=$code
p_field=$(jq_ "d.get('field'), d.get('status')" | tr -d '(),')
req GET "$plain/v1/launches/plain-$run" -H "$A_ALICE"
p_stored=$code
leaks=$(grep -rlsF -- "$secret" "$state" "$state_plain" "$work/serve.log" "$work/serve-plain.log" \
    "$SLUICE_TESTBED_DIR" 2>/dev/null || true)
if [ "$sec_post" = 201 ] && [ "$sec_final" = "DONE 0" ] &&
    [ "$sec_out" = "secret-ok secrets-file-gone " ] && [ -z "$leaks" ] &&
    [ "$p_code" = 403 ] && [ "$p_field" = "secrets 403" ] && [ "$p_stored" = 404 ]; then
    pass "secret over TLS: accepted, the workload saw it, stored nowhere; over plain TCP 403 (field secrets), not stored"
else
    fail "secret (POST $sec_post, final '$sec_final', output '$sec_out', found in: ${leaks:-nowhere}; plain $p_code '$p_field', stored $p_stored)"
fi

# ------------------------------------------------------ 4. Unix socket
mode=$(stat -c '%a %G' "$sock" 2>/dev/null || echo none)
ux="ux-$run"
cat >"$work/ux.json" <<JSON
{"launch_id": "$ux", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "args": ["-c", "echo ux-ok"], "time_limit": 5,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
urc=0
timeout 120 "$SLUICE" launch "$work/ux.json" --wait --server "unix:$sock" >"$work/ux.out" 2>&1 || urc=$?
ucode=$(curl -s -o "$work/body" -w '%{http_code}' --max-time 20 --unix-socket "$sock" \
    "http://localhost/v1/launches/$ux") || ucode=000
ux_by=$(jq_ "d['created_by']")
if [ "$mode" = "660 $sock_group" ] && [ "$urc" = 0 ] && [ "$ucode" = 200 ] &&
    [ "$ux_by" = "unix:$(id -un)" ] && [ "$ux_by" = unix:root ]; then
    pass "Unix socket: mode and group '$mode'; launch --wait through it exit 0, created_by $ux_by"
else
    fail "Unix socket (mode/group '$mode', want '660 $sock_group'; launch exit $urc; GET $ucode; created_by '$ux_by')"
    sed 's/^/    | /' "$work/ux.out" >&2
fi

# ------------------------------------- 5. components, nodes, addresses
req GET "$tls/v1/launches/$het" -H "$A_ALICE"
cp "$work/body" "$work/het-view.json"
g_code=$code
# the live slurmrestd's own answer for every node's address
tb_token=$(sed -n 's/^\(export \)*SLURM_JWT=//p; /=/!p' "$SLUICE_TB_TOKEN_FILE" | head -1 | tr -d "\"'")
curl -s --max-time 20 -H "X-SLURM-USER-NAME: $SLUICE_TB_USER" -H "X-SLURM-USER-TOKEN: $tb_token" \
    "$SLUICE_TB_REST_URL/slurm/$SLUICE_TB_REST_VERSION/nodes" >"$work/nodes.json" || true
view_check=$(python3 - "$work/het-view.json" "$work/nodes.json" "$SLUICE_TB_NODE_FEATURES" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
live = {n["name"]: n.get("address") for n in json.load(open(sys.argv[2]))["nodes"]}
feat = dict(p.split("=", 1) for p in sys.argv[3].split())
comps = v.get("components") or []
bad = []
if v.get("created_by") != "alice":
    bad.append("created_by %r" % v.get("created_by"))
if len(comps) != 2:
    bad.append("%d components" % len(comps))
ids = set()
for k, c in enumerate(comps):
    if c.get("component") != k or not isinstance(c.get("job_id"), int):
        bad.append("component %d: %r" % (k, c))
        continue
    ids.add(c["job_id"])
    names = [n["name"] for n in c.get("nodes", [])]
    want = "gpu_a100" if k == 0 else "gpu_h100"
    if len(names) != 1 or feat.get(names[0]) != want:
        bad.append("component %d nodes %r (want one %s node)" % (k, names, want))
    for n in c.get("nodes", []):
        if not live.get(n["name"]) or n.get("address") != live[n["name"]]:
            bad.append("node %s address %r, slurmrestd says %r" % (n["name"], n.get("address"), live.get(n["name"])))
if len(ids) != 2:
    bad.append("job ids %r" % sorted(ids))
print("ok " + " ".join("%s:%s@%s" % (c["job_id"], n["name"], n["address"]) for c in comps for n in c["nodes"]) if not bad else "bad " + "; ".join(bad))
PY
) || view_check="bad python failed"
if [ "$g_code" = 200 ] && [[ "$view_check" == ok* ]]; then
    pass "GET the hetjob: created_by alice, 2 components with job ids and nodes, addresses as slurmrestd gives them (${view_check#ok })"
else
    fail "GET the hetjob ($g_code): $view_check"
fi

# --------------------------------------------------------- 6. ownership
running=0
wait_state "$long" RUNNING 60 && running=1
req DELETE "$tls/v1/launches/$long" -H "Authorization: Bearer $tok_bob"
b_code=$code
b_type=$(jq_ "d.get('type')")
sleep 1
b_state=$(state_of "$long")
b_events=$(jq_ "sum(1 for e in d['events'] if e['name'] == 'cancel-requested')")
req DELETE "$tls/v1/launches/$long" -H "Authorization: Bearer $tok_ops"
o_code=$code
wait_state "$long" DONE 60 || true
long_final=$(state_of "$long")
by=$(jq_ "','.join(e['caller'] or '' for e in d['events'] if e['name'] == 'cancel-requested')")
reason=$(jq_ "d.get('result')")
if [ "$long_post" = 201 ] && [ "$running" = 1 ] && [ "$b_code" = 403 ] &&
    [ "$b_type" = urn:sluice:problem:forbidden ] && [ "$b_state" = "RUNNING None" ] &&
    [ "$b_events" = 0 ] && [ "$o_code" = 202 ] && [ "$long_final" = "DONE 9" ] && [ "$by" = ops ] &&
    grep -q "cancel of launch $long by bob refused (created by alice)" "$work/serve.log"; then
    pass "ownership: bob's DELETE of alice's running launch 403 (nothing recorded), admin ops' DELETE ends it ABORTED (9), audited ($by)"
else
    fail "ownership (post $long_post, running $running, bob $b_code '$b_type' state '$b_state' events $b_events, ops $o_code, final '$long_final', by '$by', result '$reason')"
fi

if [ "$failed" -gt 0 ]; then
    say "service log:"
    sed 's/^/    | /' "$work/serve.log" >&2
    say "plain service log:"
    sed 's/^/    | /' "$work/serve-plain.log" >&2
fi
finish
