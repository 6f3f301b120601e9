#!/usr/bin/env bash
# flower_patterns.sh - the four Flower SuperNode deployment patterns of
# shared/seeds/flower-supernode-slurm.md, end to end on the local testbed,
# run from the example requests themselves (deploy/examples/requests/
# flower-*.json: launch ids, site, partition, sizes and port rewritten) with
# stand-ins for the Flower binaries (tests/e2e/lib/flower-standin/: a
# SuperNode that listens and reports who found it, a SuperExec that connects
# and reports what it found), put on the job's PATH by the site's `setup`
# line, nothing installed on the nodes.  Each case checks that every process
# met its partner at the address sluice gave it, and that the address is
# Slurm's NodeAddr of the partner's node (read here through slurmrestd) -- on
# the testbed node names do not resolve, so a name would not do:
#
#   1. subprocess isolation, one job: the SuperNode's ClientApp subprocess
#      finds its ClientAppIo API on 127.0.0.1;
#   2. process isolation, one hetjob: the SuperNode binds
#      SLUICE_POOL_SUPERNODE_ADDR (its node's NodeAddr, never 0.0.0.0), the
#      SuperExec, after the guide's readiness loop, connects to that value;
#   3. the same with a GPU SuperExec (gpu_series a100, 1 GPU): it runs on the
#      a100 node, with CUDA_VISIBLE_DEVICES set by Slurm (the testbed's GPUs
#      are device-less stand-ins in gres.conf, which Slurm still hands out);
#   4. a process-isolated SuperNode launch and a SuperExec launch that
#      depends on it (`after`): sluice writes the SuperNode's job, node and
#      NodeAddr to the SuperExec's peers.env; it connects to
#      SLUICE_PEER_HOST, and `peers-written` records the address;
#   5. the dependency rules: an unknown partner is refused (422 naming
#      depends_on.launch_id and the id); an `afterok` dependent of a partner
#      that fails ends INFRASTRUCTURE_ERROR "dependency never satisfied", and
#      an `after` dependent of a partner that has ended is refused (422).
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only, through a
# `sluice serve` on a Unix socket of its own.  A missing testbed is a failure,
# never a skip.  Last line: "flower_patterns@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=5
NAME=flower_patterns
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup flower
EXAMPLES=$REPO/deploy/examples/requests
WAIT_S=${SLUICE_E2E_FLOWER_WAIT:-240}
host_store=$SLUICE_TB_STORAGE_ROOT
clu_store=${SLUICE_TB_CLUSTER_STORAGE_ROOT:-$SLUICE_TB_STORAGE_ROOT}
base="$host_store/e2e-flower-$run"
cbase="$clu_store/e2e-flower-$run"
sock="$work/api.sock"
pids=()
ids=() # every launch this suite sent: cancelled at the end if still live
cleanup() {
    local p id live
    if [ -S "$sock" ] && [ "${#ids[@]}" -gt 0 ]; then
        for id in "${ids[@]}"; do api DELETE "/v1/launches/$id"; done
        for _ in $(seq 1 30); do
            live=0
            for id in "${ids[@]}"; do
                api GET "/v1/launches/$id"
                [ "$code" != 200 ] || [ "$(jq -r .terminal "$work/body" 2>/dev/null)" = true ] ||
                    live=1
            done
            [ "$live" = 0 ] && break
            sleep 1
        done
    fi
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work" "$base"
}
trap cleanup EXIT

# ------------------------------------------------ stand-ins and the site
install -d -m 0755 "$base" "$base/bin"
install -m 0755 "$HERE/lib/flower-standin/flower-supernode" "$HERE/lib/flower-standin/flower-superexec" \
    "$base/bin/"
bash "$REPO/deploy/testbed/site-config.sh" |
    awk -v bin="$cbase/bin" '
        { print }
        /^  sandbox: / {
            print "  setup: |"
            print "    export PATH=\"" bin ":$PATH\""
            print "    export FLOWER_STANDIN_WAIT=240"
        }' >"$site"
grep -q "export PATH=\"$cbase/bin:" "$site" || abort "could not add the setup line to $site"

"$SLUICE" serve --config "$site" --state-dir "$state" --socket "$sock" >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
    [ -S "$sock" ] && break
    sleep 0.1
done
[ -S "$sock" ] || { cat "$work/serve.log" >&2; abort "sluice serve did not start"; }

# api METHOD PATH [curl args...]: the body in $work/body, the status in $code.
api() {
    local m=$1 p=$2
    shift 2
    code=$(curl -s --unix-socket "$sock" -o "$work/body" -w '%{http_code}' -X "$m" "$@" \
        "http://sluice$p") || code=000
}
post() {
    ids+=("$(jq -r .launch_id "$1")")
    api POST /v1/launches -H 'Content-Type: application/json' --data-binary "@$1"
}
view() { api GET "/v1/launches/$1" && cat "$work/body"; }
stdout_of() { api GET "/v1/launches/$1/logs/stdout" && cat "$work/body"; }
stderr_of() { api GET "/v1/launches/$1/logs/stderr" && cat "$work/body"; }
# NodeAddr of a node, as slurmrestd reports it (GET node/{name}).
node_addr() {
    curl -s --max-time 20 --noproxy '*' -H "X-SLURM-USER-NAME: $SLUICE_TB_USER" \
        -H "X-SLURM-USER-TOKEN: $(cat "$SLUICE_TB_TOKEN_FILE")" \
        "$SLUICE_TB_REST_URL/slurm/$SLUICE_TB_REST_VERSION/node/$1" |
        jq -r '.nodes[0].address // empty'
}
# port: a free-looking port for one case's Runtime API (loopback only).
port() { echo $((20000 + (RANDOM % 20000))); }

# from EXAMPLE OUT PORT: the example request made to run here.
from() {
    jq --arg run "$run" --arg site "$SLUICE_TB_CLUSTER" --arg part "$SLUICE_TB_PARTITION" \
        --arg port "$2" '
        .launch_id += "-" + $run | .site = $site | .partition = $part | .time_limit = 10
        | .pools |= map(.mem_per_node_mib = 256 | .cpus_per_node = 1)
        | (if .depends_on then .depends_on.launch_id += "-" + $run else . end)
        | walk(if type == "string" then gsub("\\b9094\\b"; $port) else . end)' \
        "$EXAMPLES/$1.json"
}

# wait_launch ID: follow it to its end through the service; sets $rc.
wait_launch() {
    ids+=("$1")
    rc=0
    timeout "$WAIT_S" "$SLUICE" launch "$work/$1.json" --server "unix:$sock" --wait \
        >"$work/$1.out" 2>&1 || rc=$?
}
show() {
    local id
    for id in "$@"; do
        sed "s/^/    $id| /" "$work/$id.out" >&2 2>/dev/null || true
        stdout_of "$id" | sed "s/^/    $id stdout| /" >&2
        stderr_of "$id" | sed "s/^/    $id stderr| /" >&2
    done
}
# field TEXT KEY: the value of the word KEY=... in TEXT (first match; a key
# is a whole word: node= is not supernode_node=).
field() { grep -oE "(^| )$2=[^ ]*" <<<"$1" | head -n 1 | sed 's/^ //' | cut -d= -f2-; }

# ------------------------------------------- 1. subprocess isolation
p1=$(port)
id1="flower-supernode-1-$run"
from flower-subprocess "$p1" | jq --arg p "$p1" '.env = {"FLOWER_STANDIN_PORT": $p}' >"$work/$id1.json"
wait_launch "$id1"
out=$(stdout_of "$id1")
if [ "$rc" -eq 0 ] &&
    grep -q "^flower-supernode: listening bound=127.0.0.1:$p1 isolation=subprocess " <<<"$out" &&
    grep -q "^flower-supernode: partner=clientapp node=[^ ]* dialled=127.0.0.1:$p1\$" <<<"$out" &&
    grep -q "^flower-clientapp: connected dialled=127.0.0.1:$p1 .* bound=127.0.0.1:$p1\$" <<<"$out"; then
    pass "1. subprocess isolation: one job, the ClientApp subprocess found the SuperNode on 127.0.0.1:$p1"
else
    fail "1. subprocess isolation (exit $rc)"
    show "$id1"
fi

# pair_check ID PORT: a hetjob SuperNode + SuperExec met at the SuperNode
# node's NodeAddr; sets $sn_node, $se_line.
pair_check() {
    local out sn bound addr want
    out=$(stdout_of "$1")
    sn=$(grep '^flower-supernode: listening ' <<<"$out" || true)
    sn_node=$(field "$sn" node)
    bound=$(field "$sn" bound)
    addr=$(field "$(grep '^flower-superexec: env SLUICE_POOL_SUPERNODE_ADDR=' <<<"$out" || true)" \
        SLUICE_POOL_SUPERNODE_ADDR)
    want=$([ -n "$sn_node" ] && node_addr "$sn_node")
    se_line=$(grep '^flower-superexec: connected ' <<<"$out" || true)
    why=""
    [ "$rc" -eq 0 ] || why+=" exit $rc"
    [ -n "$want" ] || why+=" no NodeAddr for '$sn_node'"
    [ "$addr" = "$want" ] || why+=" SLUICE_POOL_SUPERNODE_ADDR '$addr' is not NodeAddr '$want'"
    [ "$addr" != "$sn_node" ] || why+=" the address is the node name"
    [ "$bound" = "$want:$2" ] || why+=" SuperNode bound '$bound', want '$want:$2'"
    [ "$(field "$se_line" dialled)" = "$want:$2" ] || why+=" SuperExec dialled '$(field "$se_line" dialled)'"
    [ "$(field "$se_line" supernode_node)" = "$sn_node" ] || why+=" SuperExec met '$(field "$se_line" supernode_node)'"
    grep -q "^flower-supernode: partner=superexec node=[^ ]* dialled=$want:$2\$" <<<"$out" ||
        why+=" the SuperNode saw no SuperExec"
    [ -z "$why" ]
}

# ------------------------------------------- 2. process isolation, hetjob
p2=$(port)
id2="flower-pair-1-$run"
from flower-hetjob "$p2" >"$work/$id2.json"
wait_launch "$id2"
if pair_check "$id2" "$p2"; then
    pass "2. process isolation (hetjob): SuperNode on $sn_node bound its NodeAddr $(field "$se_line" dialled), the SuperExec on $(field "$se_line" node) found it there"
else
    fail "2. process isolation (hetjob):$why"
    show "$id2"
fi

# ------------------------------------------- 3. GPU SuperExec
p3=$(port)
id3="flower-pair-gpu-1-$run"
# The testbed has one a100 node (tb1): the SuperNode pool is kept off it
# (series h100, no GPU), as a site keeps its SuperNodes off scarce GPU
# nodes.  Left free, backfill planned the SuperNode onto tb1 and the hetjob
# stayed PENDING (Resources) for minutes (22.05, observed).
from flower-gpu "$p3" | jq '.pools[0].gpu_series = "h100"' >"$work/$id3.json"
wait_launch "$id3"
gpu_nodes=$(tr ' ' '\n' <<<"$SLUICE_TB_NODE_FEATURES" | sed -n 's/=gpu_a100$//p' | tr '\n' ' ')
if pair_check "$id3" "$p3"; then
    se_node=$(field "$se_line" node)
    cuda=$(field "$se_line" cuda)
    if [[ " $gpu_nodes " == *" $se_node "* ]] && [ -n "$cuda" ] && [ "$cuda" != unset ]; then
        pass "3. GPU SuperExec: on a100 node $se_node with CUDA_VISIBLE_DEVICES=$cuda (stand-in gres), found the SuperNode at $(field "$se_line" dialled)"
    else
        fail "3. GPU SuperExec: on '$se_node' (a100 nodes: $gpu_nodes), CUDA_VISIBLE_DEVICES '$cuda'"
        show "$id3"
    fi
else
    fail "3. GPU SuperExec:$why"
    show "$id3"
fi

# ------------------------------------------- 4. dependent SuperExec launch
p4=$(port)
sn4="flower-supernode-4-$run"
se4="flower-superexec-4-$run"
from flower-supernode-process "$p4" >"$work/$sn4.json"
from flower-superexec-dependent "$p4" >"$work/$se4.json"
post "$work/$sn4.json"
sn4_post=$code
ids+=("$se4")
(wait_launch "$se4"; echo "$rc" >"$work/$se4.rc") &
se4_pid=$!
wait_launch "$sn4"
sn4_rc=$rc
wait "$se4_pid" || true
se4_rc=$(cat "$work/$se4.rc" 2>/dev/null || echo none)
sn_out=$(stdout_of "$sn4")
se_out=$(stdout_of "$se4")
sn_line=$(grep '^flower-supernode: listening ' <<<"$sn_out" || true)
sn_node=$(field "$sn_line" node)
want=$([ -n "$sn_node" ] && node_addr "$sn_node")
peer_host=$(field "$(grep '^flower-superexec: env SLUICE_PEER_HOST=' <<<"$se_out" || true)" SLUICE_PEER_HOST)
peer_node=$(field "$(grep '^flower-superexec: env SLUICE_PEER_NODE=' <<<"$se_out" || true)" SLUICE_PEER_NODE)
peer_pool=$(field "$(grep '^flower-superexec: env SLUICE_PEER_SUPERNODE_HOST=' <<<"$se_out" || true)" \
    SLUICE_PEER_SUPERNODE_HOST)
se_line=$(grep '^flower-superexec: connected ' <<<"$se_out" || true)
view "$se4" >/dev/null
recorded=$(jq -r '[.events[] | select(.name == "peers-written") | .context.addresses // [] | join(",")] | join(";")' \
    "$work/body" 2>/dev/null || echo "?")
why=""
[ "$sn4_post" = 201 ] || why+=" SuperNode POST $sn4_post"
[ "$sn4_rc" = 0 ] || why+=" SuperNode exit $sn4_rc"
[ "$se4_rc" = 0 ] || why+=" SuperExec exit $se4_rc"
[ -n "$want" ] || why+=" no NodeAddr for '$sn_node'"
[ "$peer_node" = "$sn_node" ] || why+=" SLUICE_PEER_NODE '$peer_node', the SuperNode ran on '$sn_node'"
[ "$peer_host" = "$want" ] || why+=" SLUICE_PEER_HOST '$peer_host' is not NodeAddr '$want'"
[ "$peer_pool" = "$want" ] || why+=" SLUICE_PEER_SUPERNODE_HOST '$peer_pool'"
[ "$peer_host" != "$peer_node" ] || why+=" the address is the node name"
[ "$(field "$sn_line" bound)" = "$want:$p4" ] || why+=" SuperNode bound '$(field "$sn_line" bound)'"
[ "$(field "$se_line" dialled)" = "$want:$p4" ] || why+=" SuperExec dialled '$(field "$se_line" dialled)'"
grep -q "^flower-supernode: partner=superexec node=[^ ]* dialled=$want:$p4\$" <<<"$sn_out" ||
    why+=" the SuperNode saw no SuperExec"
[ "$recorded" = "$want" ] || why+=" peers-written recorded addresses '$recorded'"
if [ -z "$why" ]; then
    pass "4. dependent SuperExec launch: peers.env gave SLUICE_PEER_HOST=$peer_host (NodeAddr of $peer_node), the SuperExec on $(field "$se_line" node) found the SuperNode there"
else
    fail "4. dependent SuperExec launch:$why"
    show "$sn4" "$se4"
fi

# ------------------------------------------- 5. dependency rules
why=""
cat >"$work/orphan.json" <<JSON
{"launch_id": "orphan-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none", "command": "/bin/true",
 "time_limit": 5, "depends_on": {"launch_id": "nobody-$run", "condition": "after"},
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 64}]}
JSON
post "$work/orphan.json"
[ "$code" = 422 ] || why+=" unknown partner: HTTP $code"
[ "$(jq -r '.field // empty' "$work/body" 2>/dev/null)" = depends_on.launch_id ] ||
    why+=" unknown partner: field '$(jq -r '.field // empty' "$work/body" 2>/dev/null)'"
grep -q "nobody-$run" "$work/body" || why+=" unknown partner: the id is not named"
api GET "/v1/launches/orphan-$run"
[ "$code" = 404 ] || why+=" the refused launch was stored ($code)"
fid="failing-$run"
cat >"$work/$fid.json" <<JSON
{"launch_id": "$fid", "site": "$SLUICE_TB_CLUSTER", "profile": "none", "command": "/bin/bash",
 "args": ["-c", "sleep 4; exit 3"], "time_limit": 5,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 64}]}
JSON
did="needs-ok-$run"
cat >"$work/$did.json" <<JSON
{"launch_id": "$did", "site": "$SLUICE_TB_CLUSTER", "profile": "none", "command": "/bin/true",
 "time_limit": 5, "depends_on": {"launch_id": "$fid", "condition": "afterok"},
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 64}]}
JSON
post "$work/$fid.json"
post "$work/$did.json"
[ "$code" = 201 ] || why+=" afterok dependent POST $code"
wait_launch "$did"
view "$did" >/dev/null
reason=$(jq -r '.reason // empty' "$work/body" 2>/dev/null)
[ "$rc" = 104 ] || why+=" afterok dependent exit $rc, want 104"
[[ "$reason" == *"dependency never satisfied: launch $fid ended EXECUTION_ERROR; afterok needs it to succeed"* ]] ||
    why+=" afterok reason '$reason'"
sed "s/\"$did\"/\"late-$run\"/; s/\"afterok\"/\"after\"/" "$work/$did.json" >"$work/late.json"
post "$work/late.json"
[ "$code" = 422 ] && grep -q "ended EXECUTION_ERROR" "$work/body" ||
    why+=" after on an ended partner: HTTP $code $(head -c 200 "$work/body")"
if [ -z "$why" ]; then
    pass "5. dependency rules: unknown partner 422 (depends_on.launch_id), afterok on a failed partner ends 104 'dependency never satisfied', after on an ended partner 422"
else
    fail "5. dependency rules:$why"
    show "$did"
fi

finish
