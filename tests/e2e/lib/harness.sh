# shellcheck shell=bash
# harness.sh - sourced by the e2e scripts in tests/e2e: the PASS/FAIL
# counting, the closing "<name>: <n> passed, <m> failed" line, and the checks
# that the testbed is there.  Not a test itself (CTest registers only
# tests/e2e/*.sh).
#
# Set before sourcing: NAME (the prefix of every line) and TESTS (how many
# PASS lines make a green run).  Exit status of finish: 0 only when every
# test passed.

# Every line names the Slurm release the suite runs on (SLUICE_TB_RELEASE,
# set per release by CTest and test-all.sh).
SLUICE_TB_RELEASE=${SLUICE_TB_RELEASE:-22.05}
export SLUICE_TB_RELEASE
NAME="$NAME@$SLUICE_TB_RELEASE"
passed=0
failed=0
say() { printf '%s: %s\n' "$NAME" "$*"; }
pass() { say "PASS $*"; passed=$((passed + 1)); }
fail() { say "FAIL $*"; failed=$((failed + 1)); }
finish() {
    say "$passed passed, $failed failed"
    [ "$failed" -eq 0 ] && [ "$passed" -eq "$TESTS" ]
    exit $?
}
# abort REASON: the tests cannot run at all; those not yet run count as failed.
abort() {
    say "ERROR $*"
    failed=$((failed + TESTS - passed - failed))
    finish
}

# The testbed's environment (deploy/testbed/env.sh) into this shell.
e2e_testbed_env() {
    local out
    out=$("$REPO/deploy/testbed/env.sh") ||
        abort "deploy/testbed/env.sh failed: start the testbed with deploy/testbed/start.sh"
    eval "$out"
}

# Test traffic goes to loopback only.
e2e_require_loopback() {
    case "${SLUICE_TB_REST_URL:-}" in
        http://127.*) ;;
        *) abort "testbed REST URL is not loopback: '${SLUICE_TB_REST_URL:-}'" ;;
    esac
}

# Every daemon of the testbed is up.
e2e_require_running() {
    bash "$REPO/deploy/testbed/status.sh" >/dev/null 2>&1 ||
        abort "the testbed is not running: deploy/testbed/start.sh"
}

# e2e_tb_env R: the testbed variables of release R (deploy/testbed/env.sh
# --release R) into $work/env.R, for a suite that reads two testbeds; abort
# when that testbed is not up.
e2e_tb_env() {
    "$REPO/deploy/testbed/env.sh" --release "$1" >"$work/env.$1" 2>"$work/env.$1.err" || {
        cat "$work/env.$1.err"
        abort "testbed $1 not available: run deploy/testbed/start.sh --release $1"
    }
}
# e2e_tb_var R NAME: variable NAME of release R's testbed (after e2e_tb_env R).
e2e_tb_var() { (eval "$(cat "$work/env.$1")" && printf '%s' "${!2:-}"); }

# e2e_count_jobs ID: distinct Slurm jobs (a hetjob's components, J+0 J+1,
# are one), live or in accounting since $since, whose name is launch ID's marker (<prefix>-<site>-<sha8(ID)>.<attempt>,
# any attempt) for the job user.
e2e_count_jobs() {
    local base
    base="sluice-$SLUICE_TB_CLUSTER-$(printf '%s' "$1" | sha256sum | cut -c1-8)"
    {
        squeue -h -u "$SLUICE_TB_USER" -o '%i %j' 2>/dev/null
        sacct -n -X -u "$SLUICE_TB_USER" -S "$since" -o JobID%20,JobName%80 2>/dev/null
    } | awk -v b="$base" '{ n = $2; sub(/\.[0-9]+$/, "", n); j = $1; sub(/\+[0-9]+$/, "", j); if (n == b) print j }' |
        sort -u | wc -l
}

# e2e_pg_schema PREFIX: a new schema PREFIX_$run in the testbed's
# PostgreSQL (deploy/testbed/postgres.sh, whose env it exports:
# SLUICE_TEST_PG_URL, PGPASSFILE); sets $schema and $store_url (the store
# in that schema).  The suite's EXIT trap calls e2e_pg_drop.
e2e_pg_schema() {
    local env_out
    command -v psql >/dev/null || abort "psql is missing (postgresql-client)"
    env_out=$(bash "$REPO/deploy/testbed/postgres.sh" env) &&
        bash "$REPO/deploy/testbed/postgres.sh" status >/dev/null 2>&1 ||
        abort "the testbed's PostgreSQL is not running: bash deploy/testbed/postgres.sh start"
    eval "$env_out"
    schema="${1}_$run"
    psql -q -v ON_ERROR_STOP=1 "$SLUICE_TEST_PG_URL" -c "CREATE SCHEMA $schema" >/dev/null ||
        abort "cannot create schema $schema"
    store_url="$SLUICE_TEST_PG_URL?options=-csearch_path%3D$schema"
}
# e2e_pg_drop: drop the schema of e2e_pg_schema (none made: nothing).
e2e_pg_drop() {
    [ -n "${schema:-}" ] || return 0
    psql -q "$SLUICE_TEST_PG_URL" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
}

# e2e_driver_results OUT RC PATTERN: after a replica driver
# (tests/e2e/lib/ha_*.py) wrote OUT and exited RC: abort when it stopped
# (with the tail of each replica's log, $work/serve-*.log), else turn each
# `RESULT <check> ok|fail <detail>` line into a PASS or FAIL; after a
# failure, the replicas' log lines that match PATTERN.
e2e_driver_results() {
    local out=$1 rc=$2 pattern=$3 f check verdict detail
    if [ "$rc" -ne 0 ]; then
        for f in "$work"/serve-*.log; do [ -f "$f" ] && tail -n 30 "$f" | sed "s|^|    $(basename "$f") |"; done
        abort "the driver stopped (exit $rc)"
    fi
    while read -r _ check verdict detail; do
        if [ "$verdict" = ok ]; then pass "$check: $detail"; else fail "$check: $detail"; fi
    done < <(grep '^RESULT ' "$out")
    if [ "$failed" -ne 0 ]; then
        for f in "$work"/serve-*.log; do
            grep -E "$pattern" "$f" | tail -n 20 | sed "s|^|    $(basename "$f") |" || true
        done
    fi
}

# e2e_launch_setup TAG: what a suite that runs `sluice launch` needs.  Sets
# SLUICE (the binary; abort when it is missing), the testbed's environment
# (checked: loopback, every daemon up), work (a new directory
# /tmp/sluice-e2e-TAG.*, which the suite's own EXIT trap removes), run (a
# tag for unique launch ids), site (the testbed's site file, from
# site-config.sh) and state (a store of the suite's own).
e2e_launch_setup() {
    SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
    [ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
    e2e_testbed_env
    e2e_require_loopback
    e2e_require_running
    work=$(mktemp -d "/tmp/sluice-e2e-$1.XXXXXX")
    run="r$(date +%s)$$"
    site="$work/site.yaml"
    state="$work/state"
    bash "$REPO/deploy/testbed/site-config.sh" >"$site"
}

# e2e_own_testbed TAG DIR PORT_BASE: a testbed instance of the suite's own
# (as root), for a suite that stops its daemons or needs other slurm.conf
# settings (export SLUICE_TB_* knobs such as SLUICE_TB_MIN_JOB_AGE first):
# base directory DIR, ports from PORT_BASE (clear of every main testbed).
# Sets TB, work (/tmp/sluice-e2e-TAG.*), run, site and since, starts it
# (abort when it does not come up) and loads its environment.  The EXIT trap
# runs the suite's e2e_cleanup_hook (when defined), ends background jobs,
# purges the instance and removes $work.
e2e_own_testbed() {
    local t0
    [ "$(id -u)" -eq 0 ] || abort "$1 starts its own testbed: run it as root"
    unset SLURM_CONF SLUICE_TB_REST_URL
    export SLUICE_TESTBED_DIR=$2 SLUICE_TB_PORT_BASE=$3
    TB="$REPO/deploy/testbed"
    work=$(mktemp -d "/tmp/sluice-e2e-$1.XXXXXX")
    trap e2e_own_testbed_cleanup EXIT
    t0=$(date +%s)
    bash "$TB/start.sh" >"$work/start.log" 2>&1 || {
        tail -n 20 "$work/start.log" >&2
        abort "deploy/testbed/start.sh of the $1 instance failed"
    }
    say "own testbed in $SLUICE_TESTBED_DIR ready in $(($(date +%s) - t0)) s"
    eval "$("$TB/env.sh")"
    e2e_require_loopback
    run="r$(date +%s)$$"
    site="$work/site.yaml"
    bash "$TB/site-config.sh" >"$site"
    since=$(date -d '-10 minutes' +%Y-%m-%dT%H:%M:%S)
}
e2e_own_testbed_cleanup() {
    if declare -F e2e_cleanup_hook >/dev/null; then e2e_cleanup_hook; fi
    jobs -p | xargs -r kill 2>/dev/null || true
    wait 2>/dev/null || true
    bash "$TB/stop.sh" --purge >"$work/stop.log" 2>&1 || {
        say "stop.sh --purge failed:"
        tail -n 5 "$work/stop.log" >&2
    }
    rm -rf "$work"
}

# e2e_serve_start CALLER [serve args...]: after e2e_launch_setup, a tokens
# file naming CALLER ($work/tokens; the token in $tok and in $work/token)
# and e2e_serve_run with it; the header in $AUTH.
e2e_serve_start() {
    local caller=$1
    shift
    tok="tok-$caller-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    printf '%s %s\n' "$caller" "$tok" >"$work/tokens"
    printf '%s\n' "$tok" >"$work/token"
    chmod 0600 "$work/tokens" "$work/token"
    e2e_serve_run "$@"
    AUTH="Authorization: Bearer $tok"
}

# e2e_serve_run [serve args...]: `sluice serve` of $site and $state on
# 127.0.0.1 (an ephemeral port) with the tokens file $work/tokens, logging to
# $work/serve.log; its pid is appended to the suite's `pids` and kept in
# $serve_pid, the port in $port.  With `--socket S` among the args it also
# waits for S.  Up to 60 s: a loaded machine (a sanitizer build, suites side
# by side) can be slow to start.
e2e_serve_run() {
    local sockarg="" prev="" a
    for a in "$@"; do
        [ "$prev" = --socket ] && sockarg=$a
        prev=$a
    done
    "$SLUICE" serve --config "$site" --state-dir "$state" --listen 127.0.0.1:0 \
        --tokens "$work/tokens" "$@" >"$work/serve.log" 2>&1 &
    serve_pid=$!
    pids+=("$serve_pid")
    port=""
    for _ in $(seq 1 600); do
        port=$(sed -n 's/.*listening on http:\/\/.*(port \([0-9]*\)).*/\1/p' "$work/serve.log" | head -1)
        [ -n "$port" ] && { [ -z "$sockarg" ] || [ -S "$sockarg" ]; } && break
        port=""
        kill -0 "$serve_pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$work/serve.log" >&2; abort "sluice serve did not start"; }
}
