#!/usr/bin/env bash
# tenants_api.sh - `tenants:` through `sluice serve` on the local testbed
# (issue 32, "Must show"): two tenants mapped to the testbed's two tenant
# users, an admin caller in no tenant.
#
#   1. `sluice check` verifies both tenants' identities live;
#   2. B's workload cannot read A's staging while A's launch runs
#      (Permission denied, checked in B's log);
#   3. B's caller gets 404 (not 403) for A's launch: GET, events, logs,
#      DELETE; A's launch is not in B's list;
#   4. the admin sees both launches;
#   5. each tenant's two-pool hetjob ran under its own uid: `id` in its
#      log, `user` and `account` in accounting for every component;
#   6. B's global event stream carries none of A's launch;
#   7. B may use A's launch id: its own launch (201), A's is untouched; and
#      a limit (B's live_launches: 1) refuses with 429 and a problem that
#      names it.
# Identities: A acts through its token file on every release; B mints its
# tokens with the testbed's key on 22.05 and 26.05 and goes through the
# proxy (SlurmUser's token, X-SLURM-USER-NAME) on 24.11, so each of the three
# runs on at least one release.
#
# The mint identity's key is a root-owned 0600 copy of the testbed's (sluice
# refuses a key another user owns).  Runs as root (a site with tenants needs
# to give staging away) against the testbed on 127.0.0.1 only.  Last line:
# "tenants_api: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=7
NAME=tenants_api
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
e2e_testbed_env
e2e_require_loopback
e2e_require_running
A=${SLUICE_TB_TENANT_A_USER:-}
B=${SLUICE_TB_TENANT_B_USER:-}
if [ -z "$A" ] || [ -z "$B" ]; then
    abort "env.sh names no tenant users: restart the testbed with deploy/testbed/start.sh"
fi

work=$(mktemp -d /tmp/sluice-e2e-tenants-api.XXXXXX)
run="t$(date +%s)$$"
site="$work/site.yaml"
state="$work/state"
ROOT=$SLUICE_TB_STORAGE_ROOT/tenants-api-$run
CROOT=$SLUICE_TB_CLUSTER_STORAGE_ROOT/tenants-api-$run
pids=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work" "${ROOT:?}"
}
trap cleanup EXIT
install -d -o root -g root -m 0755 "$ROOT" "$ROOT/$SLUICE_TB_CLUSTER"

# The key sluice mints with: a copy the service's user (root here) owns.
install -o root -g root -m 0600 "$SLUICE_TB_JWT_KEY" "$work/jwt.key"
case "$SLUICE_TB_RELEASE" in
    24.11) B_ID=proxy ;;
    *) B_ID=mint ;;
esac
# The site: its own identity is SlurmUser, minted with the key (what the
# proxy identity needs); the admin caller is in no tenant.
bash "$REPO/deploy/testbed/site-config.sh" |
    sed -e "s|^  user: .*|  user: $SLUICE_TB_SLURMUSER|" -e "s|^  jwt_file: .*|  jwt_key_file: $work/jwt.key|" \
        -e "s|^  root: .*|  root: $ROOT|" -e "s|^  cluster_root: .*|  cluster_root: $CROOT|" \
        -e "s|^  allowed_accounts: .*|  allowed_accounts: [$SLUICE_TB_ACCOUNT, $SLUICE_TB_TENANT_A_ACCOUNT, $SLUICE_TB_TENANT_B_ACCOUNT]|" \
        >"$site"
cat >>"$site" <<YAML
tenants:
  - name: ta
    callers: [alice]
    slurm_user: $A
    identity: token_file
    jwt_file: $SLUICE_TB_TENANT_A_TOKEN_FILE
    account: $SLUICE_TB_TENANT_A_ACCOUNT
    policy:
      allowed_accounts: [$SLUICE_TB_TENANT_A_ACCOUNT]
  - name: tb
    callers: [bob]
    slurm_user: $B
    identity: $B_ID
    account: $SLUICE_TB_TENANT_B_ACCOUNT
    policy:
      allowed_accounts: [$SLUICE_TB_TENANT_B_ACCOUNT]
    limits:
      live_launches: 1
YAML
tok() { printf 'tok-%s-%s' "$1" "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"; }
tok_a=$(tok alice) tok_b=$(tok bob) tok_admin=$(tok carol)
printf 'alice %s\nbob %s\ncarol %s admin\n' "$tok_a" "$tok_b" "$tok_admin" >"$work/tokens"
chmod 0600 "$work/tokens"
show() { sed 's/^/    | /' "$1" >&2; }

# ------------------------------------------------ 1. check
rc=0
"$SLUICE" check --config "$site" >"$work/check.out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && grep -Eq "^tenants-staging +ok " "$work/check.out" &&
    grep -Eq "^tenant:ta/token +ok .*$A" "$work/check.out" &&
    grep -Eq "^tenant:ta/uid-contract +ok .*$A" "$work/check.out" &&
    grep -Eq "^tenant:tb/token +ok .*$B" "$work/check.out" &&
    grep -Eq "^tenant:tb/uid-contract +ok .*$B" "$work/check.out"; then
    pass "sluice check verifies both tenants ($A token_file, $B $B_ID)"
else
    fail "sluice check (exit $rc)"; show "$work/check.out"
fi

e2e_serve_run
base="http://127.0.0.1:$port"
# req WHO METHOD PATH [curl args...]: body in $work/body, status in $code.
req() {
    local who=$1 m=$2 p=$3 t
    shift 3
    case "$who" in a) t=$tok_a ;; b) t=$tok_b ;; *) t=$tok_admin ;; esac
    code=$(curl -s --max-time 20 -o "$work/body" -w '%{http_code}' -X "$m" \
        -H "Authorization: Bearer $t" "$@" "$base$p") || code=000
}
post() { req "$1" POST /v1/launches -H 'Content-Type: application/json' --data-binary "$2"; }
state_of() {
    req "$1" GET "/v1/launches/$2"
    [ "$code" = 200 ] && jq -r '"\(.state) \(.result_code)"' "$work/body" || echo "? ?"
}
wait_state() {   # WHO ID STATE SECONDS
    local _
    for _ in $(seq 1 "$4"); do
        [ "$(state_of "$1" "$2" | cut -d' ' -f1)" = "$3" ] && return 0
        sleep 1
    done
    return 1
}
# het_body ID ARGS0 ARGS1: a two-pool hetjob running bash -c ARGS in each pool.
het_body() {
    jq -nc --arg id "$1" --arg site "$SLUICE_TB_CLUSTER" --arg a0 "$2" --arg a1 "$3" '{
        launch_id: $id, site: $site, profile: "none", command: "/bin/bash", time_limit: 10,
        pools: [{name: "p0", gpu_series: "a100", nodes: 1, cpus_per_node: 1, mem_per_node_mib: 200, args: ["-c", $a0]},
                {name: "p1", gpu_series: "h100", nodes: 1, cpus_per_node: 1, mem_per_node_mib: 200, args: ["-c", $a1]}]}'
}
# job_ids WHO ID: the Slurm job ids of a launch's components.
job_ids() {
    req "$1" GET "/v1/launches/$2"
    jq -r '[.components[]?.job_id] | map(tostring) | join(" ")' "$work/body" 2>/dev/null || true
}

# global event stream of B, open before anything is launched
curl -sN -H "Authorization: Bearer $tok_b" "$base/v1/events" >"$work/sse-b.raw" 2>/dev/null &
pids+=($!)
sse_b=$!

# ------------------------------------------------ 2. each tenant's hetjob as its user
ida="ha-$run" idb="hb-$run"
# A's first pool waits for "release" in its staging (made by this test, as
# root) so that B's workload runs while it is there.
# shellcheck disable=SC2016 # expanded by the job's bash
post a "$(het_body "$ida" 'id; echo a-private > mine.txt; for i in $(seq 90); do [ -e release ] && exit 0; sleep 1; done; exit 3' 'id')"
pa=$code
a_dir=
for _ in $(seq 1 60); do
    a_dir=$(find "$ROOT/$SLUICE_TB_CLUSTER" -mindepth 3 -maxdepth 3 -name mine.txt -user "$A" -printf '%h\n' 2>/dev/null | head -1)
    [ -n "$a_dir" ] && break
    sleep 1
done
a_cdir=$CROOT${a_dir#"$ROOT"}

# ------------------------------------------------ 3. B's workload and A's staging (while A runs)
post b "$(het_body "$idb" "id; ls $a_cdir; echo ls=\$?; cat $a_cdir/mine.txt; echo cat=\$?" 'id')"
pb=$code
wait_state b "$idb" DONE 240 || true
req b GET "/v1/launches/$idb/logs/stdout"
b_log=$(cat "$work/body")
req b GET "/v1/launches/$idb/logs/stderr"
b_err=$(cat "$work/body")
if [ -n "$a_dir" ] && grep -qx 'ls=2' <<<"$b_log" && grep -qx 'cat=1' <<<"$b_log" &&
    [ "$(grep -c 'Permission denied' <<<"$b_err")" -ge 2 ] && ! grep -q a-private <<<"$b_log"; then
    pass "B's workload gets Permission denied on A's staging ($a_dir)"
else
    fail "B's workload and A's staging '${a_dir:-not found}': stdout [$b_log] stderr [$b_err]"
fi

# ------------------------------------------------ 4. B cannot see or touch A's launch
declare -A c=()
req b GET "/v1/launches/$ida"; c[get]=$code
req b GET "/v1/launches/$ida/events" --max-time 5; c[events]=$code   # a stream when it answers
req b GET "/v1/launches/$ida/logs/stdout"; c[stdout]=$code
req b GET "/v1/launches/$ida/logs/stderr"; c[stderr]=$code
req b DELETE "/v1/launches/$ida"; c[delete]=$code
req b GET "/v1/launches?limit=500"; c[list]=$code
in_list=$(jq -r --arg id "$ida" '[.. | objects | select(.launch_id? == $id)] | length' "$work/body" 2>/dev/null || echo "?")
still=$(state_of admin "ta~$ida" | cut -d' ' -f1)   # an admin names it by its key
ok=1
for k in get events stdout stderr delete; do [ "${c[$k]}" = 404 ] || ok=0; done
if [ "$ok" = 1 ] && [ "${c[list]}" = 200 ] && [ "$in_list" = 0 ] && [ "$still" = RUNNING ]; then
    pass "B gets 404 for A's launch (GET, events, logs, DELETE), A's is not in B's list, and still RUNNING"
else
    fail "B on A's launch: $(for k in "${!c[@]}"; do printf '%s=%s ' "$k" "${c[$k]}"; done)in B's list: $in_list, A's state $still"
fi

# ------------------------------------------------ 5. the admin sees both
req admin GET "/v1/launches?limit=500"
both=$(jq -r --arg a "$ida" --arg b "$idb" '[.. | objects | select(.launch_id? == $a or .launch_id? == $b) | .launch_id] | unique | length' "$work/body" 2>/dev/null || echo "?")
req admin GET "/v1/launches/ta~$ida"; ca=$code
if [ "$both" = 2 ] && [ "$ca" = 200 ]; then
    pass "the admin lists and reads both tenants' launches"
else
    fail "admin: both in list $both, GET A's $ca"
fi

# A may end now; then check both tenants' jobs in Slurm.
touch "$a_dir/release" 2>/dev/null || true
wait_state a "$ida" DONE 240 || true
ok=1 detail=
for t in a b; do
    if [ "$t" = a ]; then id=$ida u=$A acct=$SLUICE_TB_TENANT_A_ACCOUNT uid=$SLUICE_TB_TENANT_A_UID
    else id=$idb u=$B acct=$SLUICE_TB_TENANT_B_ACCOUNT uid=$SLUICE_TB_TENANT_B_UID; fi
    st=$(state_of "$t" "$id")
    jobs=$(job_ids "$t" "$id")
    req "$t" GET "/v1/launches/$id/logs/stdout"
    ids_seen=$(grep -c "^uid=$uid($u) " "$work/body" || true)
    rows=
    for j in $jobs; do rows+="$(sacct -n -P -X -j "$j" -o User,Account 2>/dev/null | sort -u | tr '\n' ' ')"; done
    detail+="$t: $st jobs [$jobs] id lines $ids_seen sacct [$rows]; "
    [ "$st" = "DONE 0" ] && [ -n "$jobs" ] && [ "$ids_seen" -ge 1 ] || ok=0
    for r in $rows; do [ "$r" = "$u|$acct" ] || ok=0; done
done
if [ "$pa" = 201 ] && [ "$pb" = 201 ] && [ "$ok" = 1 ]; then
    pass "each tenant's hetjob ran as its own user (id, accounting user and account): $detail"
else
    fail "hetjobs per tenant (POST A $pa, B $pb): $detail"
fi

# B's global stream never carried A's launch.
kill "$sse_b" 2>/dev/null || true
if grep -q "$idb" "$work/sse-b.raw" && ! grep -q "$ida" "$work/sse-b.raw"; then
    pass "B's global event stream carries B's launch and none of A's"
else
    fail "B's global event stream: B's $(grep -c "$idb" "$work/sse-b.raw" || true) lines, A's $(grep -c "$ida" "$work/sse-b.raw" || true)"
fi

# ------------------------------------------------ 6. the same id in B
post b "$(het_body "$ida" 'sleep 20' 'sleep 20')"
cb=$code
req a GET "/v1/launches/$ida"
a_state=$(jq -r .state "$work/body" 2>/dev/null || echo "?")
# ------------------------------------------------ 7. B's limit: one live launch
post b "$(het_body "lim-$run" 'true' 'true')"
cl=$code
problem=$(cat "$work/body")
if [ "$cb" = 201 ] && [ "$a_state" = DONE ] && [ "$cl" = 429 ] && grep -q live_launches <<<"$problem"; then
    pass "B may reuse A's id (201, A's untouched); B's second live launch is refused 429 naming live_launches"
else
    fail "same id in B: $cb (A's state $a_state); second live launch: $cl $(head -c 300 <<<"$problem")"
fi
# B's launch ends before the service and the storage root go away.
req b DELETE "/v1/launches/$ida"
wait_state b "$ida" DONE 60 || true

finish
