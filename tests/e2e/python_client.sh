#!/usr/bin/env bash
# python_client.sh - the Python client (clients/python, package
# sluice_client) end to end against a real `sluice serve` on the local
# testbed, from a venv it was installed into with no package index:
# e2e-releases: 26.05
# (what it proves is sluice's own surface, the same on every release; the
# REST paths it crosses run in the suites registered on all three.)
#
#   1. `python3 -m venv` + `pip install --no-index clients/python` (the
#      in-tree standard-library build backend: no setuptools, no network);
#      the installed package imports from the venv and its unit tests pass
#      against it;
#   2. a two-pool hetjob created from Python over TCP with a bearer token
#      file (dry run, idempotent create, 409 for another body) reaches DONE
#      SUCCEEDED (0), with Location and ETag/If-None-Match;
#   3. a launch cancelled over the Unix socket reaches DONE ABORTED (9);
#   4. follow_logs returns the hetjob's output as it is written, and an
#      offset read the rest;
#   5. the global event stream, its socket shut down after the first event,
#      reconnects with Last-Event-ID and gives every event of the launch once,
#      in order, the same list GET holds, up to DONE;
#   6. the same for the per-launch stream (GET /v1/launches/{id}/events),
#      which ends by itself after DONE;
#   7. problems become typed exceptions (401, 404, 400 naming limit, 422
#      with errors[]);
#   8. examples/nvflare_launcher.py: a job exiting 0 gives NVFlare return
#      code 0, one exiting 3 gives 1 (EXECUTION_ERROR), one exiting 102 keeps
#      102 -- as the process's exit status;
#   9. examples/flower_deployment.py: SuperNode + SuperExec as one hetjob
#      (the Flower stand-ins of flower_patterns.sh on the job's PATH): the
#      partner address the example reads from the launch is where the
#      SuperExec found the SuperNode, and the hetjob SUCCEEDED.
#
# Checks 2-7 run side by side in one Python process
# (clients/python/tests/live_service.py), 8 and 9 beside them.  The service
# and the client come from the same commit, so every feature either uses is
# required: a check that cannot run is a failure, never a skip.  Runs as root
# against the testbed's slurmrestd on 127.0.0.1 only; the service listens on
# 127.0.0.1 (port chosen by the kernel) and a Unix socket.  A missing testbed
# is a failure, never a skip.  Last line: "python_client@<release>: <n>
# passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=9
NAME=python_client
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

PY=${SLUICE_E2E_PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3) || abort "python3 is missing"
e2e_launch_setup pyclient
CLIENT=$REPO/clients/python
host_store=$SLUICE_TB_STORAGE_ROOT
clu_store=${SLUICE_TB_CLUSTER_STORAGE_ROOT:-$SLUICE_TB_STORAGE_ROOT}
base="$host_store/e2e-pyclient-$run"
cbase="$clu_store/e2e-pyclient-$run"
sock="$work/api.sock"
pids=()
cleanup() {
    local p
    # every launch of this run that is still live is cancelled
    if [ -S "$sock" ] && [ -x "$work/venv/bin/python" ]; then
        "$work/venv/bin/python" - "$sock" "$run" <<'EOF' >/dev/null 2>&1 || true
import sys, time
import sluice_client as sc
c = sc.Client("unix:" + sys.argv[1])
live = [l.launch_id for l in c.iter_launches() if sys.argv[2] in l.launch_id and not l.terminal]
for lid in live:
    c.cancel(lid)
for lid in live:
    try:
        c.wait(lid, timeout=30)
    except sc.SluiceError:
        pass
EOF
    fi
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work" "$base"
}
trap cleanup EXIT

# ------------------------------------------ the site, with Flower stand-ins
install -d -m 0755 "$base" "$base/bin"
install -m 0755 "$HERE/lib/flower-standin/flower-supernode" "$HERE/lib/flower-standin/flower-superexec" \
    "$base/bin/"
bash "$REPO/deploy/testbed/site-config.sh" |
    awk -v bin="$cbase/bin" '
        { print }
        /^  sandbox: / {
            print "  setup: |"
            print "    export PATH=\"" bin ":$PATH\""
            print "    export FLOWER_STANDIN_WAIT=120"
        }' >"$site"
grep -q "export PATH=\"$cbase/bin:" "$site" || abort "could not add the setup line to $site"

e2e_serve_start pyalice --socket "$sock"

# ------------------------------------------------ 1. venv, offline install
venv="$work/venv"
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
if ! "$PY" -m venv "$venv" >"$work/venv.log" 2>&1; then
    cat "$work/venv.log" >&2
    abort "python3 -m venv failed (Debian: install python3-venv, deploy/install-deps.sh)"
fi
# a copy of the client: pip builds in place, and the checkout stays clean
cp -r "$CLIENT" "$work/client-src"
rm -rf "$work/client-src/tests/__pycache__" "$work/client-src/src/sluice_client/__pycache__"
why=""
"$venv/bin/pip" install --no-index "$work/client-src" >"$work/pip.log" 2>&1 ||
    why+=" pip install failed: $(tail -n 3 "$work/pip.log" | tr '\n' ' ')"
where=$(cd "$work" && "$venv/bin/python" -c 'import sluice_client as s; print(s.__file__, s.__version__)' 2>&1) ||
    why+=" import: $where"
case "$where" in "$venv"/lib/python3*/site-packages/sluice_client/__init__.py*) ;; *) why+=" imported from '$where'" ;; esac
if [ -z "$why" ]; then
    (cd "$CLIENT" && SLUICE_CLIENT_INSTALLED=1 timeout 120 "$venv/bin/python" -m unittest discover -s tests -t tests \
        >"$work/unit.log" 2>&1) || why+=" unit tests against the installed package: $(tail -n 5 "$work/unit.log" | tr '\n' ' ')"
fi
if [ -z "$why" ]; then
    pass "1. pip install --no-index clients/python into a venv (no setuptools, no network); $(tail -n 3 "$work/unit.log" | grep -o 'Ran [0-9]* tests') pass against the installed package"
else
    fail "1. install:$why"
    abort "the client is not installed; nothing else can run"
fi
pyv="$venv/bin/python"

# ---------------------------------------- 8, 9: the examples, started first
nv() { # JOB EXIT: run the NVFlare-style launcher; its exit status into $work/nv-JOB.rc
    local rc=0
    (cd "$work" && timeout 200 "$pyv" "$CLIENT/examples/nvflare_launcher.py" --server "unix:$sock" \
        --site "$SLUICE_TB_CLUSTER" --job-id "$1-$run" --timeout 180 -- /bin/sh -c "echo worker $1; exit $2") \
        >"$work/nv-$1.out" 2>&1 || rc=$?
    echo "$rc" >"$work/nv-$1.rc"
}
nv ok 0 &
pids+=($!)
nv fail 3 &
pids+=($!)
nv unsafe 102 &
pids+=($!)
fport=$((20000 + (RANDOM % 20000)))
(
    rc=0
    cd "$work" && timeout 240 "$pyv" "$CLIENT/examples/flower_deployment.py" --server "http://127.0.0.1:$port" \
        --token-file "$work/token" --site "$SLUICE_TB_CLUSTER" --partition "$SLUICE_TB_PARTITION" \
        --launch-id "pyflower-$run" --port "$fport" --timeout 200 >"$work/flower.out" 2>&1 || rc=$?
    echo "$rc" >"$work/flower.rc"
) &
pids+=($!)

# ------------------------------------------------ 2-7: the live checks
(cd "$work" && timeout 300 "$pyv" "$CLIENT/tests/live_service.py" --tcp "http://127.0.0.1:$port" \
    --token-file "$work/token" --unix "unix:$sock" --site "$SLUICE_TB_CLUSTER" --run "$run") \
    >"$work/live.out" 2>"$work/live.err" || true
check() { # N NAME: the live line of check NAME
    local line
    line=$(grep -E "^(PASS|FAIL|SKIP) .*$2" "$work/live.out" | head -n 1 || true)
    case "$line" in
        PASS*) pass "$1. ${line#PASS }" ;;
        # live_service.py no longer skips; an older copy that did must not pass
        SKIP*)
            fail "$1. skipped, which is a failure against the same commit's service: ${line#SKIP }"
            sed 's/^/    live| /' "$work/live.err" >&2
            ;;
        FAIL*)
            fail "$1. ${line#FAIL }"
            sed 's/^/    live| /' "$work/live.err" >&2
            ;;
        *)
            fail "$1. $2: no result line"
            sed 's/^/    live| /' "$work/live.out" "$work/live.err" >&2
            ;;
    esac
}
check 2 "hetjob"
check 3 "cancel"
check 4 "(follow_logs|check_logs)"
check 5 "(global .*event stream|check_global_resume)"
check 6 "(per-launch event stream|check_launch_resume)"
check 7 "problems"

# ------------------------------------------------ 8. the NVFlare launcher
for p in "${pids[@]:1}"; do wait "$p" 2>/dev/null || true; done
pids=("${pids[0]}")
why=""
for spec in ok:0:SUCCESS fail:1:EXECUTION_ERROR unsafe:102:UNSAFE_COMPONENT; do
    IFS=: read -r job want wname <<<"$spec"
    got=$(cat "$work/nv-$job.rc" 2>/dev/null || echo '?')
    [ "$got" = "$want" ] && grep -q "NVFlare return code $want ($wname)" "$work/nv-$job.out" ||
        why+=" [$job: exit $got, want $want: $(tail -n 1 "$work/nv-$job.out")]"
done
if [ -z "$why" ]; then
    pass "8. examples/nvflare_launcher.py: exit 0 -> return code 0 (SUCCESS), exit 3 -> 1 (EXECUTION_ERROR), exit 102 -> 102 kept"
else
    fail "8. nvflare_launcher:$why"
fi

# ------------------------------------------------ 9. the Flower deployment
frc=$(cat "$work/flower.rc" 2>/dev/null || echo '?')
partner=$(sed -n 's/^flower: partner address \([^ ]*\) .*/\1/p' "$work/flower.out" | head -n 1)
dialled=$(sed -n 's/^flower: job| flower-superexec: connected dialled=\([^ ]*\) .*/\1/p' "$work/flower.out" | head -n 1)
if [ "$frc" = 0 ] && [ -n "$partner" ] && [ "$partner" = "$dialled" ] &&
    grep -q "^flower: pyflower-$run SUCCEEDED (0)" "$work/flower.out"; then
    pass "9. examples/flower_deployment.py: SuperNode + SuperExec hetjob SUCCEEDED; partner address $partner read from the launch is where the SuperExec found the SuperNode"
else
    fail "9. flower_deployment (exit $frc, partner '$partner', SuperExec dialled '$dialled')"
    sed 's/^/    flower| /' "$work/flower.out" >&2
fi
finish
