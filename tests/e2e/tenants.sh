#!/usr/bin/env bash
# tenants.sh - the Slurm side of tenants (docs/tenants.md) on the local
# testbed: its two tenant users, each acting through its own token file, as
# a site of one identity per tenant user runs today (rest.user and
# rest.jwt_file of that user).  What the API adds (404 across tenants,
# limits) is not here yet.
#
#   1. each tenant user has its own account as default association
#      (sacctmgr), and env.sh names its uid and token file;
#   2. `sluice launch` with tenant A's token runs A's job as A (`user_name`
#      of the live job); its staging directory is owned by A's uid, mode 0700;
#   3. a launch of tenant B whose workload tries A's staging (while A's job
#      runs) gets "Permission denied" for ls, cat and mv;
#   4. B's token cannot cancel A's running job through slurmrestd (22.05:
#      HTTP 500, error 2002; later: HTTP 200 with status[].error 2002), and
#      the job keeps running;
#   5. B's token with X-SLURM-USER-NAME: A is refused (22.05: HTTP 500; later:
#      HTTP 511, error 1007), and no job of that name exists;
#   6. SlurmUser's token with X-SLURM-USER-NAME: A (the proxy) submits a job
#      that Slurm records as A's;
#   7. A's launch ends SUCCEEDED; its `id` and its accounting record name A
#      (user, uid, account).
#
# The suite's own storage root (a root-owned 0755 directory under the
# testbed's, with its <site> directory made by the suite the same way): no
# tenant may write a parent of another tenant's staging.
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only.  A missing
# testbed is a failure, never a skip.  Last line: "tenants: <n> passed, <m>
# failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=7
NAME=tenants
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup tenants
A=${SLUICE_TB_TENANT_A_USER:-}
B=${SLUICE_TB_TENANT_B_USER:-}
if [ -z "$A" ] || [ -z "$B" ]; then
    abort "env.sh names no tenant users: restart the testbed with this tree's deploy/testbed/start.sh"
fi
for f in "$SLUICE_TB_TENANT_A_TOKEN_FILE" "$SLUICE_TB_TENANT_B_TOKEN_FILE" "$SLUICE_TB_SLURMUSER_TOKEN_FILE"; do
    [ -s "$f" ] || abort "no token in $f: restart the testbed with deploy/testbed/start.sh"
done
API=$SLUICE_TB_REST_VERSION
ROOT=$SLUICE_TB_STORAGE_ROOT/tenants-$run
CROOT=$SLUICE_TB_CLUSTER_STORAGE_ROOT/tenants-$run
bg=
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
    if [ -n "$bg" ]; then
        kill "$bg" 2>/dev/null || true
        wait "$bg" 2>/dev/null || true
    fi
    rm -rf "$work" "${ROOT:?}"
}
trap cleanup EXIT
install -d -o root -g root -m 0755 "$ROOT" "$ROOT/$SLUICE_TB_CLUSTER"

# site_of T: the testbed's site file acting as tenant T's user (A or B).
site_of() {
    local u=SLUICE_TB_TENANT_$1_USER f=SLUICE_TB_TENANT_$1_TOKEN_FILE a=SLUICE_TB_TENANT_$1_ACCOUNT
    sed -e "s|^  user: .*|  user: ${!u}|" -e "s|^  jwt_file: .*|  jwt_file: ${!f}|" \
        -e "s|^  root: .*|  root: $ROOT|" -e "s|^  cluster_root: .*|  cluster_root: $CROOT|" \
        -e "s|^    account: .*|    account: ${!a}|" \
        -e "s|^  allowed_accounts: .*|  allowed_accounts: [${!a}]|" "$site" >"$work/site-$1.yaml"
    if ! grep -q "^  user: ${!u}\$" "$work/site-$1.yaml" || ! grep -q "^  root: $ROOT\$" "$work/site-$1.yaml"; then
        abort "cannot make tenant $1's site file from $site"
    fi
}
site_of A
site_of B
show() { sed 's/^/    | /' "$1" >&2; }

# api TOKEN_FILE NAME METHOD PATH [BODY]: one request to slurmrestd; sets
# CODE and BODY.  NAME is the X-SLURM-USER-NAME header.
api() {
    local tok=$1 name=$2 method=$3 path=$4 data=${5:-} args
    args=(-sS --max-time 20 --noproxy '*' -o "$work/body" -w '%{http_code}' -X "$method"
        -H "X-SLURM-USER-NAME: $name" -H "X-SLURM-USER-TOKEN: $(cat "$tok")")
    [ -z "$data" ] || args+=(-H 'Content-Type: application/json' --data-binary "$data")
    CODE=$(curl "${args[@]}" "$SLUICE_TB_REST_URL$path" 2>"$work/curl.err") || CODE=000
    BODY=$(cat "$work/body" 2>/dev/null || true)
    : >"$work/body"
}
# submit_body NAME: a one-line batch job in the shape of the release's API.
submit_body() {
    if [ "$API" = v0.0.38 ]; then
        jq -nc --arg n "$1" --arg p "$SLUICE_TB_PARTITION" '{script: "#!/bin/bash\ntrue\n",
            job: {name: $n, partition: $p, current_working_directory: "/tmp",
                  standard_output: "/dev/null", environment: {PATH: "/usr/bin:/bin"}}}'
    else
        jq -nc --arg n "$1" --arg p "$SLUICE_TB_PARTITION" '{job: {name: $n, partition: $p,
            current_working_directory: "/tmp", standard_output: "/dev/null",
            environment: ["PATH=/usr/bin:/bin"], script: "#!/bin/bash\ntrue\n"}}'
    fi
}
# slurm_user_of JOB: the user Slurm's live record names (as SlurmUser).
slurm_user_of() {
    api "$SLUICE_TB_SLURMUSER_TOKEN_FILE" "$SLUICE_TB_SLURMUSER" GET "/slurm/$API/job/$1"
    jq -r '[.jobs[]?.user_name] | join(",")' <<<"$BODY" 2>/dev/null || true
}
slurm_state_of() {
    api "$SLUICE_TB_SLURMUSER_TOKEN_FILE" "$SLUICE_TB_SLURMUSER" GET "/slurm/$API/job/$1"
    jq -r '[.jobs[]?.job_state | if type == "array" then join(",") else . end] | join(" ")' \
        <<<"$BODY" 2>/dev/null || true
}

# ------------------------------------------------ 1. users and associations
assoc=$(sacctmgr -n -P show association where cluster="$SLUICE_TB_CLUSTER" format=user,account 2>&1 || true)
defs=$(sacctmgr -n -P show user "$A" "$B" format=user,defaultaccount 2>&1 || true)
if grep -qx "$A|$SLUICE_TB_TENANT_A_ACCOUNT" <<<"$assoc" && grep -qx "$B|$SLUICE_TB_TENANT_B_ACCOUNT" <<<"$assoc" &&
    grep -qx "$A|$SLUICE_TB_TENANT_A_ACCOUNT" <<<"$defs" && grep -qx "$B|$SLUICE_TB_TENANT_B_ACCOUNT" <<<"$defs" &&
    [ "$(id -u "$A")" = "$SLUICE_TB_TENANT_A_UID" ] && [ "$(id -u "$B")" = "$SLUICE_TB_TENANT_B_UID" ]; then
    pass "tenant users $A ($SLUICE_TB_TENANT_A_UID) and $B ($SLUICE_TB_TENANT_B_UID), each with its own account as default"
else
    fail "tenant users or associations: assoc [$(tr '\n' ' ' <<<"$assoc")] defaults [$(tr '\n' ' ' <<<"$defs")]"
fi

# ------------------------------------------ 2. A's launch runs as A
sha8=$(printf '%s' "ta-$run" | sha256sum | cut -c1-8)
A_DIR=$ROOT/$SLUICE_TB_CLUSTER/$sha8            # the host's view
A_CDIR=$CROOT/$SLUICE_TB_CLUSTER/$sha8          # the job's view
# A's workload leaves a file in its staging and waits for this test to
# create "release" there (as root), so it runs while B tries to enter.
cat >"$work/a.json" <<JSON
{"launch_id": "ta-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash",
 "args": ["-c", "id; echo a-private > $A_CDIR/attempt-1/mine.txt; for i in \$(seq 240); do [ -e $A_CDIR/attempt-1/release ] && exit 0; sleep 1; done; exit 3"],
 "time_limit": 10,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
( rc=0; timeout 400 "$SLUICE" launch "$work/a.json" --wait --config "$work/site-A.yaml" \
    --state-dir "$work/stA" >"$work/a.out" 2>&1 || rc=$?; echo "$rc" >"$work/a.rc" ) &
bg=$!
running=0
for _ in $(seq 1 120); do
    if [ -s "$A_DIR/attempt-1/mine.txt" ]; then running=1; break; fi
    sleep 1
done
# Its Slurm job id, from the store (once the launch process recorded the submit).
A_JOB=
for _ in $(seq 1 30); do
    A_JOB=$("$SLUICE" status --state-dir "$work/stA" -o json "ta-$run" 2>/dev/null |
        jq -r '[.events[]? | select(.name == "submitted") | .context.job_ids[]?] | first // empty' \
            2>/dev/null || true)
    [ -z "$A_JOB" ] || break
    sleep 1
done
owner=$(stat -c '%u %a' "$A_DIR" "$A_DIR/attempt-1" 2>/dev/null | sort -u | tr '\n' ' ')
live_user=
[ -z "$A_JOB" ] || live_user=$(slurm_user_of "$A_JOB")
if [ "$running" -eq 1 ] && [ "$owner" = "$SLUICE_TB_TENANT_A_UID 700 " ] && [ "$live_user" = "$A" ]; then
    pass "A's launch runs as $A (job $A_JOB; staging owned by uid $SLUICE_TB_TENANT_A_UID, 0700)"
else
    fail "A's launch (running=$running, job ${A_JOB:-?} user '${live_user}', staging '${owner}')"
    show "$work/a.out"
fi

# ------------------------------------------ 3. B's workload cannot enter A's staging
cat >"$work/b.json" <<JSON
{"launch_id": "tb-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash",
 "args": ["-c", "echo user=\$(id -un); ls $A_CDIR/attempt-1; echo ls=\$?; cat $A_CDIR/attempt-1/mine.txt; echo cat=\$?; mv $A_CDIR $A_CDIR.x; echo mv=\$?; exit 0"],
 "time_limit": 5,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
rc=0
timeout 300 "$SLUICE" launch "$work/b.json" --wait --config "$work/site-B.yaml" \
    --state-dir "$work/stB" >"$work/b.out" 2>&1 || rc=$?
bout=$(cat "$work/stB/artifacts/tb-$run/stdout.log" 2>/dev/null || true)
berr=$(cat "$work/stB/artifacts/tb-$run/stderr.log" 2>/dev/null || true)
if [ "$rc" -eq 0 ] && grep -qx "user=$B" <<<"$bout" && grep -qx 'ls=2' <<<"$bout" &&
    grep -qx 'cat=1' <<<"$bout" && grep -qx 'mv=1' <<<"$bout" &&
    [ "$(grep -c 'Permission denied' <<<"$berr")" -eq 3 ] && ! grep -q a-private <<<"$bout" &&
    [ -d "$A_DIR" ]; then
    pass "B's workload (as $B) gets Permission denied for ls, cat and mv of A's staging"
else
    fail "B's workload and A's staging (exit $rc): stdout [$bout] stderr [$berr]"
    show "$work/b.out"
fi

# ------------------------------------------ 4. B cannot cancel A's job in Slurm
verdict=
if [ -n "$A_JOB" ]; then
    api "$SLUICE_TB_TENANT_B_TOKEN_FILE" "$B" DELETE "/slurm/$API/job/$A_JOB"
    if [ "$API" = v0.0.38 ]; then
        [ "$CODE" = 500 ] && jq -e '[.errors[]?.error_number] | index(2002)' >/dev/null 2>&1 <<<"$BODY" &&
            verdict="HTTP 500, error 2002"
    else
        [ "$CODE" = 200 ] && jq -e '[.status[]?.error.code] | index(2002)' >/dev/null 2>&1 <<<"$BODY" &&
            verdict="HTTP 200 with status[].error 2002"
    fi
    sleep 1
    jstate=$(slurm_state_of "$A_JOB")
fi
if [ -n "$verdict" ] && [ "${jstate:-}" = RUNNING ]; then
    pass "B's token cannot cancel A's job $A_JOB ($verdict); it keeps running"
else
    fail "B's DELETE of A's job ${A_JOB:-?}: HTTP ${CODE:-?} $(head -c 400 <<<"${BODY:-}"), state ${jstate:-?}"
fi
# A's workload may end now.
touch "$A_DIR/attempt-1/release" 2>/dev/null || true

# ------------------------------------------ 5. B's token naming A is refused
name=tenants-x-$run
api "$SLUICE_TB_TENANT_B_TOKEN_FILE" "$A" POST "/slurm/$API/job/submit" "$(submit_body "$name")"
case "$API" in
    v0.0.38) want=500 ;;
    *) want=511 ;;
esac
xcode=$CODE xbody=$BODY
made=$(squeue -h -n "$name" -o %i 2>/dev/null | wc -l)
if [ "$xcode" = "$want" ] && [ "$made" -eq 0 ] && ! jq -e '.job_id // empty' >/dev/null 2>&1 <<<"$xbody" &&
    { [ "$want" = 500 ] || jq -e '[.errors[]?.error_number] | index(1007)' >/dev/null 2>&1 <<<"$xbody"; }; then
    pass "B's token with X-SLURM-USER-NAME: $A is refused (HTTP $xcode), no job"
else
    fail "B's token naming $A: HTTP $xcode (want $want), jobs named $name: $made, $(head -c 400 <<<"$xbody")"
fi

# ------------------------------------------ 6. the proxy: SlurmUser's token naming A
api "$SLUICE_TB_SLURMUSER_TOKEN_FILE" "$A" POST "/slurm/$API/job/submit" "$(submit_body "tenants-p-$run")"
pjob=$(jq -r '.job_id // empty' <<<"$BODY" 2>/dev/null || true)
pcode=$CODE
puser=
[ -z "$pjob" ] || puser=$(slurm_user_of "$pjob")
if [ "$pcode" = 200 ] && [ "$puser" = "$A" ]; then
    pass "SlurmUser's token with X-SLURM-USER-NAME: $A submits job $pjob as $A"
else
    fail "proxy: HTTP $pcode job ${pjob:-none} user '${puser}' $(head -c 400 <<<"$BODY")"
fi

# ------------------------------------------ 7. A's launch ends; output and accounting name A
wait "$bg" || true
bg=
arc=$(cat "$work/a.rc" 2>/dev/null || echo none)
aout=$(cat "$work/stA/artifacts/ta-$run/stdout.log" 2>/dev/null || true)
acct=
for _ in $(seq 1 30); do
    [ -n "$A_JOB" ] || break
    acct=$(sacct -n -X -P -j "$A_JOB" -o User,Account,State 2>/dev/null | head -1 || true)
    case "$acct" in *"|COMPLETED") break ;; esac
    sleep 1
done
want_id="uid=$SLUICE_TB_TENANT_A_UID($A) gid=$SLUICE_TB_TENANT_A_UID($A)"
if [ "$arc" = 0 ] && grep -q "^$want_id" <<<"$aout" &&
    [ "$acct" = "$A|$SLUICE_TB_TENANT_A_ACCOUNT|COMPLETED" ]; then
    pass "A's launch SUCCEEDED; its id: $want_id; accounting: $acct"
else
    fail "A's launch (exit $arc): id [$(head -1 <<<"$aout")], accounting [$acct]"
    show "$work/a.out"
fi

finish
