#!/usr/bin/env bash
# check_cli.sh - `sluice check` against the testbed: a generated site config
# must pass (exit 0, both GPU series satisfied, over TCP and the Unix
# socket), and a bad token must give exit 77.  A missing testbed is a
# failure, never a skip.  Last line: "$N: <n> passed, <m> failed".
set -euo pipefail
N=check_cli@${SLUICE_TB_RELEASE:-22.05}   # every line names the Slurm release

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
passed=0
failed=0
pass() { echo "$N: PASS $*"; passed=$((passed + 1)); }
fail() { echo "$N: FAIL $*"; failed=$((failed + 1)); }

if [ -z "${SLUICE_TB_REST_URL:-}" ]; then
    env_out=$("$REPO/deploy/testbed/env.sh") || {
        echo "$N: ERROR testbed not available: run deploy/testbed/start.sh and eval \"\$(deploy/testbed/env.sh)\""
        exit 1
    }
    eval "$env_out"
fi
for v in SLUICE_TB_REST_URL SLUICE_TB_REST_SOCKET SLUICE_TB_USER SLUICE_TB_TOKEN_FILE \
    SLUICE_TB_PARTITION SLUICE_TB_STORAGE_ROOT; do
    if [ -z "${!v:-}" ]; then
        echo "$N: ERROR $v is not set: run deploy/testbed/start.sh and eval \"\$(deploy/testbed/env.sh)\""
        exit 1
    fi
done
case "$SLUICE_TB_REST_URL" in
    http://127.*) ;;
    *) echo "$N: ERROR only loopback may be contacted: $SLUICE_TB_REST_URL"; exit 1 ;;
esac

work=$(mktemp -d /tmp/sluice-check-XXXXXX)
trap 'rm -rf "$work"' EXIT
cat >"$work/site.yaml" <<YAML
rest:
  url: $SLUICE_TB_REST_URL
  user: $SLUICE_TB_USER
  jwt_file: $SLUICE_TB_TOKEN_FILE
storage:
  root: $SLUICE_TB_STORAGE_ROOT
  cluster_root: ${SLUICE_TB_CLUSTER_STORAGE_ROOT:-$SLUICE_TB_STORAGE_ROOT}
job_launcher:
  sandbox: none
  sbatch_directives:
    partition: $SLUICE_TB_PARTITION
gpu_series:
  a100:
    constraint: "gpu_a100"
  h100:
    constraint: "gpu_h100&sluicetb"
YAML

run() { # run NAME EXPECTED_EXIT ARGS...
    local name=$1 want=$2 rc=0
    shift 2
    "$SLUICE" check --config "${SITE:-$work/site.yaml}" "$@" >"$work/out" 2>"$work/err" || rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "$name: exit $rc, expected $want"
        cat "$work/out" "$work/err"
        return 1
    fi
    return 0
}

if run tcp 0; then
    if grep -Eq '^gpu:a100 +ok' "$work/out" && grep -Eq '^gpu:h100 +ok' "$work/out" &&
        grep -Eq "^version +ok +${SLUICE_TB_REST_VERSION//./\\.}" "$work/out"; then
        pass "tcp: exit 0, both GPU series satisfied"
    else
        fail "tcp: table lacks the expected rows"
        cat "$work/out"
    fi
fi

if run unix-json 0 --set "rest.url=unix:$SLUICE_TB_REST_SOCKET" -o json; then
    if jq -e '.ok == true and ([.checks[] | select(.status == "FAIL")] | length == 0)' \
        "$work/out" >/dev/null; then
        pass "unix socket, json: ok"
    else
        fail "unix socket, json: unexpected output"
        cat "$work/out"
    fi
fi

printf 'SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJ4In0.bm90LXNpZ25lZA\n' >"$work/bad.jwt"
chmod 600 "$work/bad.jwt"
if run bad-token 77 --set "rest.jwt_file=$work/bad.jwt"; then
    if grep -q 'token failed' "$work/err" && ! grep -q 'bm90LXNpZ25lZA' "$work/out" "$work/err"; then
        pass "bad token: exit 77, named, token not printed"
    else
        fail "bad token: failure not named or token printed"
        cat "$work/out" "$work/err"
    fi
fi

if run missing-partition 78 --set "job_launcher.sbatch_directives.partition=nosuchpart"; then
    pass "unknown partition: exit 78"
fi

# --probe-job: a tiny job proves srun is found on the cluster and matches
# the controller.  On a release whose Slurm lives under a prefix (24.11 here:
# /opt/slurm/bin) the job's default PATH has no srun: the probe says so, and
# executables.srun fixes it.
# with_srun PATH: the site file plus job_launcher.executables.srun.
with_srun() {
    sed "s|^  sandbox: none\$|  sandbox: none\n  executables:\n    srun: $1|" "$work/site.yaml" >"$work/site-srun.yaml"
    echo "$work/site-srun.yaml"
}
probe_site=$work/site.yaml
if [ "${SLUICE_TB_SLURM_BIN:-/usr/bin}" != /usr/bin ]; then
    probe_site=$(with_srun "$SLUICE_TB_SLURM_BIN/srun")
    if run probe-no-srun 78 --probe-job; then
        if grep -Eq '^probe-job +FAIL .*srun' "$work/out"; then
            pass "probe job without executables.srun on a prefix install: srun not found (exit 78)"
        else
            fail "probe job without executables.srun: row does not say srun is missing"
            cat "$work/out"
        fi
    fi
else
    if SITE=$(with_srun /nonexistent/bin/srun) run probe-bad-srun 78 --probe-job; then
        if grep -Eq '^probe-job +FAIL .*srun' "$work/out"; then
            pass "probe job with a wrong executables.srun: srun not found (exit 78)"
        else
            fail "probe job with a wrong srun: row does not say srun is missing"
            cat "$work/out"
        fi
    fi
fi
if SITE=$probe_site run probe 0 --probe-job; then
    if grep -Eq "^probe-job +ok +srun [^ ]*srun ${SLUICE_TB_RELEASE//./\\.}\\.[0-9]+(-[0-9A-Za-z]+)? matches slurmctld" "$work/out"; then
        pass "probe job: $(grep '^probe-job' "$work/out" | tr -s ' ')"
    else
        fail "probe job: row not ok for release $SLUICE_TB_RELEASE"
        cat "$work/out"
    fi
fi

echo "$N: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -eq 6 ]
