#!/usr/bin/env bash
# api_errors.sh - issue 15's error answers and OpenAPI routes from a real
# `sluice serve` over the testbed's site:
#
#   1. a request with three bad fields (two pools and the time limit, the
#      time limit after the pools) is one 422 whose errors[] names all three
#      in request order, field/detail the first; nothing is stored (404);
#   2. the same request corrected is accepted (201) and ends DONE 0 on the
#      cluster: the errors were the request's, nothing else;
#   3. a malformed body is 400 malformed-json with line and column (members
#      and detail), never the body's text;
#   4. GET /v1/openapi.json and /v1/openapi.yaml need no token, and both
#      carry the binary's version (`sluice version -o json`); the JSON has
#      the two routes and no reference to another file.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only; the
# service listens on 127.0.0.1 (port chosen by the kernel).  A missing
# testbed is a failure, never a skip.  Last line:
# "api_errors@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=4
NAME=api_errors
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

command -v curl >/dev/null || abort "curl is missing"
e2e_launch_setup api_errors
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

e2e_serve_start apierr
base="http://127.0.0.1:$port"

# req METHOD PATH [curl args...]: body in $work/body, status in $code,
# Content-Type in $ctype
req() {
    local m=$1 p=$2
    shift 2
    code=$(curl -s -o "$work/body" -D "$work/headers" -w '%{http_code}' -X "$m" "$@" "$base$p") ||
        code=000
    ctype=$(sed -n 's/^[Cc]ontent-[Tt]ype: *\([^;[:space:]]*\).*/\1/p' "$work/headers" | head -1)
}
post() { # BODY
    req POST /v1/launches -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$1"
}
jq_() { python3 -c "import json,sys; d=json.load(open('$work/body')); print($1)" 2>/dev/null || echo "?"; }

id="ae-$run"
pool() { # NAME NODES CPUS
    printf '{"name": "%s", "nodes": %s, "cpus_per_node": %s, "mem_per_node_mib": 200}' "$1" "$2" "$3"
}
request() { # NODES_A CPUS_C TIME
    printf '{"launch_id": "%s", "site": "%s", "profile": "none", "command": "/bin/echo", "args": ["hello"], "pools": [%s, %s, %s], "time_limit": %s}' \
        "$id" "$SLUICE_TB_CLUSTER" "$(pool a "$1" 1)" "$(pool b 1 1)" "$(pool c 1 "$2")" "$3"
}

# ------------------------------------------------ 1. every field error: 422
post "$(request 0 0 '"soon"')"
paths=$(jq_ "' '.join(e['path'] for e in d['errors'])")
first=$(jq_ "d['field'] + '|' + str(d['detail'].startswith(d['errors'][0]['path'] + ': ' + d['errors'][0]['reason']))")
c1=$code
req GET "/v1/launches/$id" -H "$AUTH"
if [ "$c1" = 422 ] && [ "$paths" = "pools[0].nodes pools[2].cpus_per_node time_limit" ] &&
    [ "$first" = "pools[0].nodes|True" ] && [ "$code" = 404 ]; then
    pass "one 422 names the three bad fields in request order ($paths); field/detail the first; nothing stored"
else
    fail "422 errors[] (POST $c1, paths '$paths', first '$first', GET $code)"
fi

# ------------------------------------- 2. corrected: accepted and succeeds
post "$(request 1 1 5)"
c2=$code
final="? ?"
for _ in $(seq 1 120); do
    req GET "/v1/launches/$id" -H "$AUTH"
    final=$(jq_ "str(d['state']) + ' ' + str(d.get('result_code'))")
    [ "${final%% *}" = DONE ] && break
    sleep 1
done
if [ "$c2" = 201 ] && [ "$final" = "DONE 0" ]; then
    pass "the corrected request is accepted and its three-pool hetjob ends DONE 0"
else
    fail "corrected request (POST $c2, final '$final')"
fi

# ---------------------------------------------- 3. malformed JSON: 400 l/c
post $'{\n  "launch_id": "x",\n  "secrets": {"K": "s3cr3t-value" ]\n}'
mj=$(jq_ "d['type'] + ' ' + str(d['line']) + ' ' + str(d['column'])")
detail=$(jq_ "d['detail']")
if [ "$code" = 400 ] && [ "$mj" = "urn:sluice:problem:malformed-json 3 35" ] &&
    grep -q 'line 3, column 35' <<<"$detail" && ! grep -q 's3cr3t' "$work/body"; then
    pass "malformed JSON is 400 with line 3, column 35 and the reason ($detail), never the body"
else
    fail "malformed JSON (HTTP $code, '$mj', '$detail')"
fi

# ------------------------------------------- 4. the OpenAPI document, public
want=$("$SLUICE" version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
req GET /v1/openapi.json
cj=$code tj=$ctype
vj=$(jq_ "d['info']['version'] + ' ' + str('/v1/openapi.yaml' in d['paths']) + ' ' + str('\"./' in json.dumps(d))")
req GET /v1/openapi.yaml
cy=$code ty=$ctype
vy=$(awk '/^info:/{i=1;next} i&&/^  version:/{print $2;exit} /^[^ ]/{i=0}' "$work/body")
if [ "$cj" = 200 ] && [ "$tj" = application/json ] && [ "$vj" = "$want True False" ] &&
    [ "$cy" = 200 ] && [ "$ty" = application/yaml ] && [ "$vy" = "$want" ]; then
    pass "GET /v1/openapi.json and .yaml without a token: version $want, the binary's"
else
    fail "OpenAPI routes (json $cj $tj '$vj', yaml $cy $ty '$vy', want $want)"
fi

finish
