#!/usr/bin/env bash
# identity.sh - the Slurm identity taken from the token, end to end on the
# local testbed: a site file without rest.user, whose token file is the one
# `scontrol token` minted for the job user (its `sun` claim names the user).
#
#   1. `sluice config show` and `sluice check` name the token's user and
#      where it came from;
#   2. `sluice launch --wait` runs a job to SUCCEEDED (0) under that identity;
#   3. `sluice cancel` of a running launch ends it ABORTED (9): the cancel's
#      ownership check (job name, comment marker, user) sees the job as ours,
#      the DELETE goes (no cancel-refused), and Slurm records it CANCELLED;
#   4. a site whose token names no user and that sets no rest.user is
#      refused before any request (exit 78, naming rest.user).
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only.  A
# missing testbed is a failure, never a skip.  Last line:
# "identity: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=4
NAME=identity
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup identity
trap 'rm -rf "$work"' EXIT

# The testbed's site file without rest.user: the identity is the token's.
grep -v '^  user:' "$site" >"$work/site-nouser.yaml"
site="$work/site-nouser.yaml"
grep -q "jwt_file: $SLUICE_TB_TOKEN_FILE" "$site" || abort "site file has no rest.jwt_file"
! grep -q '^  user:' "$site" || abort "rest.user still set in $site"

launch() {
    rc=0
    timeout 300 "$SLUICE" launch "$work/$1.json" --wait --config "$site" --state-dir "$state" \
        >"$work/$1.out" 2>&1 || rc=$?
}
show() { sed 's/^/    | /' "$work/$1.out" >&2; }

# ------------------------------------------------- 1. config show and check
"$SLUICE" config show --config "$site" >"$work/show.out" 2>&1 || true
"$SLUICE" check --config "$site" >"$work/check.out" 2>&1 || true
if grep -Eq "^identity\.user +$SLUICE_TB_USER +\(the \`sun\` claim of the token of rest\.jwt_file\)$" \
    "$work/show.out" &&
    grep -Eq "^identity +ok +user $SLUICE_TB_USER from the \`sun\` claim" "$work/check.out" &&
    grep -Eq "^token +ok +authenticated as $SLUICE_TB_USER" "$work/check.out"; then
    pass "config show and check name $SLUICE_TB_USER, taken from the token's sun claim"
else
    fail "identity not shown"; show show; show check
fi

# ------------------------------------------------------- 2. a job succeeds
cat >"$work/ok.json" <<JSON
{"launch_id": "idok-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "args": ["-c", "echo ran-as=\$(id -un)"], "time_limit": 5,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
launch ok
out=$(cat "$state/artifacts/idok-$run/stdout.log" 2>/dev/null || true)
if [ "$rc" -eq 0 ] && grep -qx "ran-as=$SLUICE_TB_USER" <<<"$out"; then
    pass "without rest.user a launch ran to SUCCEEDED as $SLUICE_TB_USER"
else
    fail "launch without rest.user (exit $rc, output: $out)"; show ok
fi

# -------------------------------------------------- 3. cancelled by sluice
cat >"$work/cancel.json" <<JSON
{"launch_id": "idcancel-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/sleep", "args": ["300"], "time_limit": 10,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
( launch cancel; echo "$rc" >"$work/cancel.rc" ) &
bg=$!
running=0
for _ in $(seq 1 90); do
    if "$SLUICE" status --state-dir "$state" "idcancel-$run" 2>/dev/null |
        grep -q '^state      RUNNING'; then
        running=1
        break
    fi
    sleep 1
done
if [ "$running" -eq 1 ]; then
    "$SLUICE" cancel --state-dir "$state" "idcancel-$run" >/dev/null
fi
wait "$bg" || true
crc=$(cat "$work/cancel.rc" 2>/dev/null || echo none)
"$SLUICE" status --state-dir "$state" -o json "idcancel-$run" >"$work/cancel.status" 2>&1 || true
job=$(grep -o '"job_id": *[0-9][0-9]*' "$work/cancel.status" | grep -o '[0-9]*$' | head -1 || true)
refused=$(grep -c '"cancel-refused"' "$work/cancel.status" || true)
sent=$(grep -c '"cancel-sent"' "$work/cancel.status" || true)
slurm_state=""
for _ in $(seq 1 30); do
    [ -n "$job" ] || break
    slurm_state=$(sacct -n -X -P -j "$job" -o State 2>/dev/null | head -1 || true)
    case "$slurm_state" in CANCELLED*) break ;; esac
    sleep 1
done
if [ "$running" -eq 1 ] && [ "$crc" = 9 ] && [ "$refused" -eq 0 ] && [ "$sent" -ge 1 ] &&
    [[ "$slurm_state" == CANCELLED* ]]; then
    pass "sluice cancelled its own job (ABORTED, DELETE sent, Slurm: $slurm_state)"
else
    fail "cancel without rest.user (running=$running, exit $crc, cancel-sent $sent," \
        "cancel-refused $refused, job ${job:-?} $slurm_state)"
    show cancel
fi

# ------------------------------------------ 4. neither rest.user nor claim
b64url() { printf '%s' "$1" | base64 -w0 | tr '+/' '-_' | tr -d '='; }
exp=$(($(date +%s) + 3600))
nouser_tok="$(b64url '{"alg":"HS256","typ":"JWT"}').$(b64url "{\"exp\":$exp,\"iat\":$(date +%s)}").c2ln"
(umask 077 && printf 'SLURM_JWT=%s\n' "$nouser_tok" >"$work/nouser.jwt")
sed "s|jwt_file: .*|jwt_file: $work/nouser.jwt|" "$site" >"$work/site-nobody.yaml"
rc=0
timeout 60 "$SLUICE" launch "$work/ok.json" --wait --config "$work/site-nobody.yaml" \
    --state-dir "$work/state-nobody" >"$work/nobody.out" 2>&1 || rc=$?
if [ "$rc" -eq 78 ] && grep -q 'rest.user: not set' "$work/nobody.out" &&
    ! grep -qF "$nouser_tok" "$work/nobody.out"; then
    pass "a site with neither rest.user nor a user in its token is refused (78, names rest.user)"
else
    fail "no identity (exit $rc, want 78 naming rest.user)"; show nobody
fi

finish
