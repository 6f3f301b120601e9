#!/usr/bin/env bash
# smoke_testbed.sh - end-to-end smoke test of the local Slurm testbed
# (deploy/testbed) through slurmrestd's REST API, with curl and jq only, in
# the testbed release's newest version (SLUICE_TB_REST_VERSION: v0.0.38 on
# 22.05, v0.0.42 on 24.11, v0.0.45 on 26.05; the bodies and answers of
# v0.0.40+ differ from v0.0.38's, see shared/reference/slurmrestd-api.md):
#
#   1. single job: POST /slurm/vX/job/submit, wait for COMPLETED through
#      GET /slurm/vX/job/{id}, check the job's output file;
#   2. hetjob: two components pinned to two different GPU-series features,
#      wait for COMPLETED, check through GET /slurm/vX/node/{name} that
#      each component ran on a node carrying its feature (different nodes);
#   3. accounting: GET /slurmdb/vX/job/{id} shows both jobs (the hetjob
#      with both components) as COMPLETED for the job user.
#
# Every request goes to the testbed's slurmrestd on 127.0.0.1 (checked).  A
# testbed that is not running is a failure, never a skip.  Run as root (the
# token file and the job directory setup need it).  Exit 0 only if all pass;
# the last line is "smoke@<release>: <n> passed, <m> failed".
#
# Knobs: SMOKE_JOB_TIMEOUT (seconds per job, default 60),
#        SMOKE_ACCT_TIMEOUT (seconds for accounting to catch up, default 30).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
JOB_TIMEOUT=${SMOKE_JOB_TIMEOUT:-60}
ACCT_TIMEOUT=${SMOKE_ACCT_TIMEOUT:-30}
TESTS=3

passed=0
failed=0
say() { printf 'smoke@%s: %s\n' "${SLUICE_TB_RELEASE:-22.05}" "$*"; }
pass() { say "PASS $*"; passed=$((passed + 1)); }
fail() { say "FAIL $*"; failed=$((failed + 1)); }
finish() {
    say "$passed passed, $failed failed"
    if [ "$failed" -eq 0 ] && [ "$passed" -eq "$TESTS" ]; then
        exit 0
    fi
    exit 1
}
# abort REASON: the tests cannot run at all; each one counts as failed.
abort() {
    say "ERROR $*"
    failed=$((failed + TESTS - passed))
    finish
}

for tool in curl jq; do
    command -v "$tool" >/dev/null 2>&1 || abort "$tool is not installed"
done

# ---------------------------------------------------------------- environment
env_out=$("$REPO/deploy/testbed/env.sh") || abort "deploy/testbed/env.sh failed"
eval "$env_out"
: "${SLUICE_TB_REST_URL:?}" "${SLUICE_TB_TOKEN_FILE:?}" "${SLUICE_TB_USER:?}"
: "${SLUICE_TB_FEATURES:?}" "${SLUICE_TB_PARTITION:?}" "${SLUICE_TB_STORAGE_ROOT:?}"
API=${SLUICE_TB_REST_VERSION:-v0.0.38}

# Only loopback may be the target of any request.
case "$SLUICE_TB_REST_URL" in
    http://127.*) ;;
    *) abort "SLUICE_TB_REST_URL=$SLUICE_TB_REST_URL is not a 127.0.0.0/8 address; refusing to send anything" ;;
esac

if [ ! -r "$SLUICE_TB_TOKEN_FILE" ] || [ ! -s "$SLUICE_TB_TOKEN_FILE" ]; then
    abort "no readable token in $SLUICE_TB_TOKEN_FILE: is the testbed running (deploy/testbed/start.sh) and are you root?"
fi
TOKEN=$(cat "$SLUICE_TB_TOKEN_FILE")

read -r -a features <<<"$SLUICE_TB_FEATURES"
[ "${#features[@]}" -ge 2 ] || abort "SLUICE_TB_FEATURES needs two features, got '$SLUICE_TB_FEATURES'"
F0=${features[0]}
F1=${features[1]}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# api METHOD PATH [BODY]: one request; sets CODE (HTTP status, 000 when no
# answer) and BODY (response text).
api() {
    local method=$1 path=$2 data=${3:-}
    local args=(-sS --max-time 20 --noproxy '*' -o "$TMP/body" -w '%{http_code}'
        -X "$method" -H "X-SLURM-USER-NAME: $SLUICE_TB_USER" -H "X-SLURM-USER-TOKEN: $TOKEN")
    if [ -n "$data" ]; then
        args+=(-H 'Content-Type: application/json' --data-binary "$data")
    fi
    CODE=$(curl "${args[@]}" "$SLUICE_TB_REST_URL$path" 2>"$TMP/curl.err") || CODE=000
    BODY=$(cat "$TMP/body" 2>/dev/null || true)
    : >"$TMP/body"
}

# jq helpers that read both shapes: a state is a string (v0.0.38) or an
# array, base state first (v0.0.40+); a number is bare or {set,number}.
JQ_DEFS='def st: if type == "array" then join(",") else . end;
def num: if type == "object" then (if .set then .number else null end) else . end;
def feats: if type == "array" then join(",") else (. // "") end;'
jqx() { local f=$1; shift; jq "$@" "$JQ_DEFS $f"; }

# ---------------------------------------------------------------- reachable?
api GET "/slurm/$API/diag"
if [ "$CODE" != 200 ]; then
    abort "testbed not reachable: GET $SLUICE_TB_REST_URL/slurm/$API/diag answered HTTP $CODE $(head -c 300 "$TMP/curl.err") - start it with deploy/testbed/start.sh"
fi
say "slurmrestd at $SLUICE_TB_REST_URL answers (diag HTTP 200)"

# A job directory the job user can write to, under the shared storage root.
# RUN_DIR is where this script reads it, JOB_DIR where the job writes it
# (they differ for a release in a root).
RUN_NAME=smoke/run-$(date +%Y%m%d-%H%M%S)-$$
RUN_DIR=$SLUICE_TB_STORAGE_ROOT/$RUN_NAME
JOB_DIR=${SLUICE_TB_CLUSTER_STORAGE_ROOT:-$SLUICE_TB_STORAGE_ROOT}/$RUN_NAME
mkdir -p "$RUN_DIR" || abort "cannot create $RUN_DIR"
if [ "$(id -u)" -eq 0 ]; then
    chown "$SLUICE_TB_USER" "$RUN_DIR"
fi
say "job directory $RUN_DIR"

# submit BODY: POST the body; prints the job id, or fails with the reason
# (on stderr, since stdout is the id).
submit() {
    api POST "/slurm/$API/job/submit" "$1"
    if [ "$CODE" != 200 ]; then
        say "submit: HTTP $CODE: $(head -c 600 <<<"$BODY")" >&2
        return 1
    fi
    if ! jq -e '(.errors | length) == 0 and (.job_id | type) == "number"' >/dev/null 2>&1 <<<"$BODY"; then
        say "submit: errors or no job_id: $(jq -c '{errors, job_id}' <<<"$BODY" 2>/dev/null || head -c 600 <<<"$BODY")" >&2
        return 1
    fi
    jq -r .job_id <<<"$BODY"
}

# wait_done ID: poll GET /slurm/v0.0.38/job/ID until every entry (a hetjob
# returns all its components) is in a final state; leaves the last answer in
# JOB_BODY.  v0.0.38 reports "COMPLETING" (a flag) instead of the base state
# until the epilog is over, so that is not final.
wait_done() {
    local id=$1 deadline=$((SECONDS + JOB_TIMEOUT)) states
    while :; do
        api GET "/slurm/$API/job/$id"
        if [ "$CODE" = 200 ]; then
            JOB_BODY=$BODY
            states=$(jqx '[.jobs[].job_state | st] | join(" ")' -r <<<"$BODY")
            if [ -n "$states" ] && ! grep -qE 'PENDING|RUNNING|SUSPENDED|COMPLETING|CONFIGURING|REQUEUE|RESIZING|SIGNALING|STAGE_OUT' <<<"$states"; then
                return 0
            fi
        else
            say "GET job $id: HTTP $CODE $(jq -c '.errors' <<<"$BODY" 2>/dev/null || true)"
            # 22.05 answers 500 / error 2017 once the job left slurmctld
            # (a testbed started with a small SLUICE_TB_MIN_JOB_AGE): take
            # the final record from accounting instead.
            if jq -e '[.errors[]?.error_number] | index(2017)' >/dev/null 2>&1 <<<"$BODY"; then
                say "job $id is gone from slurmctld (MinJobAge); reading it from slurmdbd"
                acct_as_ctld "$id" && return 0
                return 1
            fi
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            say "job $id not finished after $JOB_TIMEOUT s: states '${states:-?}'"
            JOB_BODY=$BODY
            return 1
        fi
        sleep 1
    done
}

# acct_as_ctld ID: wait (ACCT_TIMEOUT) until GET /slurmdb/v0.0.38/job/ID has
# final records, and put them into JOB_BODY in the shape of the slurmctld
# answer (job_id, job_state, nodes, het_job_id, het_job_offset).
acct_as_ctld() {
    local id=$1 deadline=$((SECONDS + ACCT_TIMEOUT)) conv
    while :; do
        api GET "/slurmdb/$API/job/$id"
        if [ "$CODE" = 200 ]; then
            conv=$(jqx '{jobs: [.jobs[]? | {job_id, job_state: (.state.current | st), nodes,
                het_job_id: ((.het.job_id | num) // 0), het_job_offset: ((.het.job_offset | num) // 0)}]}' -c <<<"$BODY" 2>/dev/null || true)
            if [ -n "$conv" ] && jq -e '(.jobs | length) > 0 and all(.jobs[]; .job_state
                    | test("PENDING|RUNNING|SUSPENDED|REQUEUE") | not)' >/dev/null 2>&1 <<<"$conv"; then
                JOB_BODY=$conv
                return 0
            fi
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            JOB_BODY=${conv:-$BODY}
            return 1
        fi
        sleep 1
    done
}

ENV_JSON='{"PATH":"/usr/local/bin:/usr/bin:/bin","LANG":"C"}'
# job_body JQ_PROGRAM: build a submit body in v0.0.38's shape (top-level
# script, environment object, nodes [min,max]) and turn it into v0.0.40+'s
# (script inside the first job, environment ["K=V"], nodes "1", numbers as
# {set,number}) for the newer versions.
job_body() {
    local b
    b=$(jq -n --arg dir "$JOB_DIR" --arg part "$SLUICE_TB_PARTITION" --argjson env "$ENV_JSON" \
        --arg f0 "$F0" --arg f1 "$F1" "$1") || return 1
    if [ "$API" = v0.0.38 ]; then
        printf '%s' "$b"
        return
    fi
    jq -c 'def conv: .environment |= [to_entries[] | "\(.key)=\(.value)"]
            | .nodes |= (if type == "array" then "\(.[0])" else . end)
            | .time_limit |= {set: true, infinite: false, number: .};
        if has("job") then {job: ((.job | conv) + {script})}
        else {jobs: ([.jobs[] | conv] | .[0] += {script: $s})} end' --arg s "$(jq -r .script <<<"$b")" <<<"$b"
}

# ---------------------------------------------------------------- 1 single job
SINGLE_ID=
test_single() {
    local body id out
    # v0.0.38 shape: script at top level, "job" holds v0.0.38_job_properties
    # (environment as an object, nodes as [min,max]); unknown keys are errors.
    body=$(job_body '{
        script: "#!/bin/bash\necho \"smoke single on $SLURMD_NODENAME as $(id -un)\"\n",
        job: {
            name: "sluice-smoke-single",
            partition: $part,
            nodes: [1, 1],
            tasks: 1,
            time_limit: 5,
            comment: "sluice smoke test",
            current_working_directory: $dir,
            standard_output: ($dir + "/single-%j.out"),
            standard_error: ($dir + "/single-%j.err"),
            environment: $env
        }
    }')
    id=$(submit "$body") || { fail "single job: submit rejected"; return; }
    SINGLE_ID=$id
    say "single job $id submitted"
    if ! wait_done "$id"; then
        fail "single job $id did not complete: $(jq -c '[.jobs[]? | {job_id, job_state, state_reason}]' <<<"$JOB_BODY" 2>/dev/null)"
        return
    fi
    local state
    state=$(jqx '.jobs[0].job_state | st' -r <<<"$JOB_BODY")
    if [ "$state" != COMPLETED ]; then
        fail "single job $id ended $state (exit_code $(jq -r '.jobs[0].exit_code' <<<"$JOB_BODY"))"
        return
    fi
    out=$RUN_DIR/single-$id.out
    if ! grep -q "^smoke single on .* as $SLUICE_TB_USER\$" "$out" 2>/dev/null; then
        fail "single job $id: COMPLETED but $out does not hold the expected line: '$(head -c 200 "$out" 2>/dev/null)'"
        return
    fi
    pass "single job $id COMPLETED on $(jq -r '.jobs[0].nodes' <<<"$JOB_BODY") ($(cat "$out"))"
}

# ---------------------------------------------------------------- 2 hetjob
HET_ID=
test_hetjob() {
    local body id comp0 comp1 n0 n1 nf0 nf1
    # v0.0.38 hetjob: top-level script (it goes to component 0) + "jobs" with
    # one v0.0.38_job_properties per component; each component is parsed on
    # its own, so each gets its own partition, resources and environment.
    body=$(job_body '
        def comp($c): {
            name: "sluice-smoke-het",
            partition: $part,
            nodes: [1, 1],
            tasks: 1,
            time_limit: 5,
            constraints: $c,
            current_working_directory: $dir,
            environment: $env
        };
        {
            script: "#!/bin/bash\necho \"het group 0: $SLURM_JOB_NODELIST_HET_GROUP_0\"\necho \"het group 1: $SLURM_JOB_NODELIST_HET_GROUP_1\"\n",
            jobs: [
                comp($f0) + {standard_output: ($dir + "/het-%j.out")},
                comp($f1)
            ]
        }')
    id=$(submit "$body") || { fail "hetjob: submit rejected"; return; }
    HET_ID=$id
    say "hetjob $id submitted (component 0 constraint $F0, component 1 constraint $F1)"
    if ! wait_done "$id"; then
        fail "hetjob $id did not complete: $(jq -c '[.jobs[]? | {job_id, job_state, state_reason}]' <<<"$JOB_BODY" 2>/dev/null)"
        return
    fi
    if ! jqx '(.jobs | length) == 2 and all(.jobs[]; (.het_job_id | num) == $id)' -e --argjson id "$id" >/dev/null <<<"$JOB_BODY"; then
        fail "hetjob $id: expected 2 components with het_job_id $id, got $(jq -c '[.jobs[] | {job_id, het_job_id, het_job_offset}]' <<<"$JOB_BODY")"
        return
    fi
    if ! jqx 'all(.jobs[]; (.job_state | st) == "COMPLETED")' -e >/dev/null <<<"$JOB_BODY"; then
        fail "hetjob $id: not all components COMPLETED: $(jq -c '[.jobs[] | {job_id, job_state, exit_code}]' <<<"$JOB_BODY")"
        return
    fi
    comp0=$(jqx '.jobs[] | select((.het_job_offset | num) == 0)' -c <<<"$JOB_BODY")
    comp1=$(jqx '.jobs[] | select((.het_job_offset | num) == 1)' -c <<<"$JOB_BODY")
    n0=$(jq -r .nodes <<<"$comp0")
    n1=$(jq -r .nodes <<<"$comp1")
    if [ -z "$n0" ] || [ -z "$n1" ] || [ "$n0" = "$n1" ]; then
        fail "hetjob $id: components did not run on two different nodes: '$n0' / '$n1'"
        return
    fi
    # Features of each node, from slurmctld through REST (comma-separated).
    api GET "/slurm/$API/node/$n0"
    nf0=$(jqx '.nodes[0].active_features // .nodes[0].features | feats' -r <<<"$BODY" 2>/dev/null || true)
    api GET "/slurm/$API/node/$n1"
    nf1=$(jqx '.nodes[0].active_features // .nodes[0].features | feats' -r <<<"$BODY" 2>/dev/null || true)
    has() { case ",$1," in *",$2,"*) return 0 ;; esac; return 1; }
    if ! has "$nf0" "$F0" || has "$nf0" "$F1" || ! has "$nf1" "$F1" || has "$nf1" "$F0"; then
        fail "hetjob $id: component 0 on $n0 ($nf0), component 1 on $n1 ($nf1); wanted $F0 / $F1"
        return
    fi
    pass "hetjob $id COMPLETED: component 0 on $n0 ($nf0), component 1 on $n1 ($nf1)"
}

# ---------------------------------------------------------------- 3 accounting
test_accounting() {
    if [ -z "$SINGLE_ID" ] || [ -z "$HET_ID" ]; then
        fail "accounting: no job ids to look up (an earlier test failed to submit)"
        return
    fi
    # Accounting lags slurmctld by a few seconds: retry within ACCT_TIMEOUT.
    local deadline=$((SECONDS + ACCT_TIMEOUT)) s_ok=0 h_ok=0 s_rec="" h_rec=""
    while :; do
        if [ "$s_ok" -eq 0 ]; then
            api GET "/slurmdb/$API/job/$SINGLE_ID"
            s_rec=$(jqx '[.jobs[]? | select(.job_id == $id) | {job_id, user, state: (.state.current | st), nodes}]' -c --argjson id "$SINGLE_ID" <<<"$BODY" 2>/dev/null || echo "HTTP $CODE")
            if [ "$CODE" = 200 ] && jq -e --arg u "$SLUICE_TB_USER" 'length >= 1 and all(.[]; .state == "COMPLETED" and .user == $u)' >/dev/null 2>&1 <<<"$s_rec"; then
                s_ok=1
            fi
        fi
        if [ "$h_ok" -eq 0 ]; then
            # The leader id returns every component (each has het.job_id = leader).
            api GET "/slurmdb/$API/job/$HET_ID"
            h_rec=$(jqx '[.jobs[]? | select((.het.job_id | num) == $id) | {job_id, user, state: (.state.current | st), nodes, offset: (.het.job_offset | num)}]' -c --argjson id "$HET_ID" <<<"$BODY" 2>/dev/null || echo "HTTP $CODE")
            if [ "$CODE" = 200 ] && jq -e --arg u "$SLUICE_TB_USER" '([.[].job_id] | unique | length) == 2 and all(.[]; .state == "COMPLETED" and .user == $u)' >/dev/null 2>&1 <<<"$h_rec"; then
                h_ok=1
            fi
        fi
        if [ "$s_ok" -eq 1 ] && [ "$h_ok" -eq 1 ]; then
            pass "accounting: single job $s_rec; hetjob $h_rec"
            return
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            fail "accounting after $ACCT_TIMEOUT s: single job $SINGLE_ID -> $s_rec; hetjob $HET_ID -> $h_rec"
            return
        fi
        sleep 1
    done
}

test_single
test_hetjob
test_accounting

if [ "$failed" -eq 0 ]; then
    rm -rf "$RUN_DIR"
else
    say "job files kept in $RUN_DIR"
fi
finish
