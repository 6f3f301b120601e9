#!/usr/bin/env bash
# jwt_command.sh - rest.jwt_command end to end on the local testbed: the
# testbed's site file with its token file replaced by a command (a script,
# run without a shell by sluice, that prints the token `scontrol token`
# minted for the job user).
#
#   1. `sluice check` reports the command as the token source, that it ran,
#      the user its token names and its expiry, and authenticates with it;
#   2. `sluice launch --wait` of a tiny job runs to SUCCEEDED (0) with it;
#   3. a command that fails is reported by `sluice check` with its stderr
#      line, never the token (exit 77).
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only.  A
# missing testbed is a failure, never a skip.  Last line:
# "jwt_command: <n> passed, <m> failed".
# e2e-releases: 22.05
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=3
NAME=jwt_command
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup jwtcmd
trap 'rm -rf "$work"' EXIT

grep -q "jwt_file: $SLUICE_TB_TOKEN_FILE" "$site" || abort "site file has no rest.jwt_file"
cat >"$work/print-token" <<EOF
#!/bin/sh
echo ran >>'$work/runs'
exec cat '$SLUICE_TB_TOKEN_FILE'
EOF
cat >"$work/fail-token" <<EOF
#!/bin/sh
echo "token service: no token for you" >&2
cat '$SLUICE_TB_TOKEN_FILE'
exit 2
EOF
chmod 0700 "$work/print-token" "$work/fail-token"
sed "s|^  jwt_file: .*|  jwt_command: ['$work/print-token']|" "$site" >"$work/site-cmd.yaml"
sed "s|^  jwt_file: .*|  jwt_command: ['$work/fail-token']|" "$site" >"$work/site-fail.yaml"
grep -q "jwt_command" "$work/site-cmd.yaml" || abort "no rest.jwt_command in the site file"
show() { sed 's/^/    | /' "$work/$1.out" >&2; }

# --------------------------------------------------------------- 1. check
rc=0
"$SLUICE" check --config "$work/site-cmd.yaml" >"$work/check.out" 2>&1 || rc=$?
if grep -Eq "^token-source +ok +command $work/print-token \(rest\.jwt_command\) ran [0-9]+ time\(s\); its token names user $SLUICE_TB_USER and expires in [0-9]+ s" \
    "$work/check.out" &&
    grep -Eq "^token +ok +authenticated as $SLUICE_TB_USER" "$work/check.out"; then
    pass "check names the command, its token's user and expiry, and authenticates (exit $rc)"
else
    fail "check with rest.jwt_command (exit $rc)"; show check
fi

# ------------------------------------------------------- 2. a job succeeds
cat >"$work/ok.json" <<JSON
{"launch_id": "jwtcmd-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/bash", "args": ["-c", "echo ran-as=\$(id -un)"], "time_limit": 5,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
rc=0
timeout 300 "$SLUICE" launch "$work/ok.json" --wait --config "$work/site-cmd.yaml" \
    --state-dir "$state" >"$work/ok.out" 2>&1 || rc=$?
out=$(cat "$state/artifacts/jwtcmd-$run/stdout.log" 2>/dev/null || true)
if [ "$rc" -eq 0 ] && grep -qx "ran-as=$SLUICE_TB_USER" <<<"$out"; then
    pass "a launch with the command's token ran to SUCCEEDED as $SLUICE_TB_USER"
else
    fail "launch with rest.jwt_command (exit $rc, output: $out)"; show ok
fi

# ---------------------------------------------------- 3. a failing command
rc=0
"$SLUICE" check --config "$work/site-fail.yaml" >"$work/fail.out" 2>&1 || rc=$?
tok=$(sed 's/^SLURM_JWT=//' "$SLUICE_TB_TOKEN_FILE" | tr -d '\n')
if [ "$rc" -ne 0 ] && grep -q "exited with status 2: token service: no token for you" \
    "$work/fail.out" && ! grep -qF -- "${tok##*.}" "$work/fail.out"; then
    pass "a failing command is reported with its stderr, never its token (exit $rc)"
else
    fail "failing command (exit $rc)"; show fail
fi

finish
