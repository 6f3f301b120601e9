#!/usr/bin/env bash
# smoke_testbed.sh - end-to-end smoke test of the local Slurm testbed
# (deploy/testbed) through slurmrestd's v0.0.38 REST API, with curl and jq only.
#
#   1. single job: POST /slurm/v0.0.38/job/submit, wait for COMPLETED through
#      GET /slurm/v0.0.38/job/{id}, check the job's output file;
#   2. hetjob: two components pinned to two different GPU-series features,
#      wait for COMPLETED, check through GET /slurm/v0.0.38/node/{name} that
#      each component ran on a node carrying its feature (different nodes);
#   3. accounting: GET /slurmdb/v0.0.38/job/{id} shows both jobs (the hetjob
#      with both components) as COMPLETED for the job user.
#
# Every request goes to the testbed's slurmrestd on 127.0.0.1 (checked).  A
# testbed that is not running is a failure, never a skip.  Run as root (the
# token file and the job directory setup need it).  Exit 0 only if all pass;
# the last line is "smoke: <n> passed, <m> failed".
#
# Knobs: SMOKE_JOB_TIMEOUT (seconds per job, default 60),
#        SMOKE_ACCT_TIMEOUT (seconds for accounting to catch up, default 30).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
API=v0.0.38
JOB_TIMEOUT=${SMOKE_JOB_TIMEOUT:-60}
ACCT_TIMEOUT=${SMOKE_ACCT_TIMEOUT:-30}
TESTS=3

passed=0
failed=0
say() { printf 'smoke: %s\n' "$*"; }
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

# ---------------------------------------------------------------- reachable?
api GET "/slurm/$API/diag"
if [ "$CODE" != 200 ]; then
    abort "testbed not reachable: GET $SLUICE_TB_REST_URL/slurm/$API/diag answered HTTP $CODE $(head -c 300 "$TMP/curl.err") - start it with deploy/testbed/start.sh"
fi
say "slurmrestd at $SLUICE_TB_REST_URL answers (diag HTTP 200)"

# A job directory the job user can write to, under the shared storage root.
RUN_DIR=$SLUICE_TB_STORAGE_ROOT/smoke/run-$(date +%Y%m%d-%H%M%S)-$$
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
            states=$(jq -r '[.jobs[].job_state] | join(" ")' <<<"$BODY")
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
            conv=$(jq -c '{jobs: [.jobs[]? | {job_id, job_state: .state.current, nodes,
                het_job_id: (.het.job_id // 0), het_job_offset: (.het.job_offset // 0)}]}' <<<"$BODY" 2>/dev/null || true)
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

# ---------------------------------------------------------------- 1 single job
SINGLE_ID=
test_single() {
    local body id out
    # v0.0.38 shape: script at top level, "job" holds v0.0.38_job_properties
    # (environment as an object, nodes as [min,max]); unknown keys are errors.
    body=$(jq -n --arg dir "$RUN_DIR" --arg part "$SLUICE_TB_PARTITION" --argjson env "$ENV_JSON" '{
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
    state=$(jq -r '.jobs[0].job_state' <<<"$JOB_BODY")
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
    body=$(jq -n --arg dir "$RUN_DIR" --arg part "$SLUICE_TB_PARTITION" --argjson env "$ENV_JSON" \
        --arg f0 "$F0" --arg f1 "$F1" '
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
    if ! jq -e --argjson id "$id" '(.jobs | length) == 2 and all(.jobs[]; .het_job_id == $id)' >/dev/null <<<"$JOB_BODY"; then
        fail "hetjob $id: expected 2 components with het_job_id $id, got $(jq -c '[.jobs[] | {job_id, het_job_id, het_job_offset}]' <<<"$JOB_BODY")"
        return
    fi
    if ! jq -e 'all(.jobs[]; .job_state == "COMPLETED")' >/dev/null <<<"$JOB_BODY"; then
        fail "hetjob $id: not all components COMPLETED: $(jq -c '[.jobs[] | {job_id, job_state, exit_code}]' <<<"$JOB_BODY")"
        return
    fi
    comp0=$(jq -c '.jobs[] | select(.het_job_offset == 0)' <<<"$JOB_BODY")
    comp1=$(jq -c '.jobs[] | select(.het_job_offset == 1)' <<<"$JOB_BODY")
    n0=$(jq -r .nodes <<<"$comp0")
    n1=$(jq -r .nodes <<<"$comp1")
    if [ -z "$n0" ] || [ -z "$n1" ] || [ "$n0" = "$n1" ]; then
        fail "hetjob $id: components did not run on two different nodes: '$n0' / '$n1'"
        return
    fi
    # Features of each node, from slurmctld through REST (comma-separated).
    api GET "/slurm/$API/node/$n0"
    nf0=$(jq -r '.nodes[0].active_features // .nodes[0].features // ""' <<<"$BODY" 2>/dev/null || true)
    api GET "/slurm/$API/node/$n1"
    nf1=$(jq -r '.nodes[0].active_features // .nodes[0].features // ""' <<<"$BODY" 2>/dev/null || true)
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
            s_rec=$(jq -c --argjson id "$SINGLE_ID" '[.jobs[]? | select(.job_id == $id) | {job_id, user, state: .state.current, nodes}]' <<<"$BODY" 2>/dev/null || echo "HTTP $CODE")
            if [ "$CODE" = 200 ] && jq -e --arg u "$SLUICE_TB_USER" 'length >= 1 and all(.[]; .state == "COMPLETED" and .user == $u)' >/dev/null 2>&1 <<<"$s_rec"; then
                s_ok=1
            fi
        fi
        if [ "$h_ok" -eq 0 ]; then
            # The leader id returns every component (each has het.job_id = leader).
            api GET "/slurmdb/$API/job/$HET_ID"
            h_rec=$(jq -c --argjson id "$HET_ID" '[.jobs[]? | select(.het.job_id == $id) | {job_id, user, state: .state.current, nodes, offset: .het.job_offset}]' <<<"$BODY" 2>/dev/null || echo "HTTP $CODE")
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
