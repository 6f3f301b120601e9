#!/usr/bin/env bash
# studies.sh - issue 13 on a real cluster: the study runtime file of a
# running `sluice serve`, the policy refusals of the real service, and the
# hetjob keep_going switch:
#
#   1. the study file is rewritten while `sluice serve` runs: the next launch
#      that names the study runs with the new version (the job prints the
#      study's variable: v1, then v2);
#   2. an unknown study is 422 from the service, naming the study in the
#      detail and the field; nothing is stored (GET is 404);
#   3. the study file becomes invalid: a study launch is 422 naming the file,
#      a launch that names no study is accepted and SUCCEEDS; the file is
#      fixed and the study launch is accepted again;
#   4. more refusals of the real service, each 422 naming its field: a job
#      image the site does not authorise (BYOC), a GPU pool without a series
#      (no policy.default_gpu_series), a mount source inside the storage root;
#   5. the CLI: `sluice launch --wait` of an unknown study exits 65 with the
#      same message;
#   6. keep_going: a hetjob whose pool "rollout" fails at once while
#      "trainer" sleeps: by default the script stops trainer (its line never
#      appears); with keep_going (the site allows the request to choose it)
#      trainer finishes its work.  Both end EXECUTION_ERROR naming rollout.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only; the
# service listens on 127.0.0.1 (port chosen by the kernel).  A missing
# testbed is a failure, never a skip.  Last line:
# "studies@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=6
NAME=studies
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

command -v curl >/dev/null || abort "curl is missing"
e2e_launch_setup studies
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# The site lets a request choose keep_going, and authorises the job images
# of $work/images/ (BYOC).
mkdir -p "$work/images"
: >"$work/images/ok.sif"
printf '  allow_keep_going: true\n  allowed_images: [%s/images/]\n' "$work" >>"$site"
grep -q '^policy:$' "$site" || abort "the testbed site has no policy block"
study="$work/study_runtime.yaml"
write_study() { # VALUE: the study "s13" with STUDY_MARK=VALUE
    printf 'format_version: 2\nstudies:\n  s13:\n    env:\n      STUDY_MARK: %s\n' "$1" >"$study.tmp"
    mv "$study.tmp" "$study"
}
write_study v1
tok="tok-studies-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf 'alice %s\n' "$tok" >"$work/tokens"
chmod 0600 "$work/tokens"

e2e_serve_run --study-runtime "$study"
base="http://127.0.0.1:$port"
AUTH="Authorization: Bearer $tok"

# req METHOD PATH [curl args...]: body in $work/body, status in $code
req() {
    local m=$1 p=$2
    shift 2
    code=$(curl -s -o "$work/body" -w '%{http_code}' -X "$m" "$@" "$base$p") || code=000
}
post() { # BODY
    req POST /v1/launches -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$1"
}
jq_() { python3 -c "import json,sys; d=json.load(open('$work/body')); print($1)" 2>/dev/null || echo "?"; }
state_of() {
    req GET "/v1/launches/$1" -H "$AUTH"
    [ "$code" = 200 ] && jq_ "d['state'], d.get('result_code')" | tr -d "(),'" || echo "? ?"
}
# wait_done ID SECONDS: the launch ended; its "STATE RESULT" in $final
wait_done() {
    local i
    final="? ?"
    for i in $(seq 1 "$2"); do
        final=$(state_of "$1")
        [ "${final%% *}" = DONE ] && return 0
        sleep 1
    done
    return 1
}
stdout_of() {
    req GET "/v1/launches/$1/logs/stdout" -H "$AUTH"
    cat "$work/body"
}
pool='{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}'
# body ID EXTRA ARGS: a one-pool launch on profile none; EXTRA (", ...")
# before the pools.
body() {
    printf '{"launch_id": "%s", "site": "%s", "profile": "none", "command": "/bin/bash", "time_limit": 5, "args": ["-c", "%s"]%s, "pools": [%s]}' \
        "$1" "$SLUICE_TB_CLUSTER" "$3" "$2" "$pool"
}

# ------------------------------------------- 1. the study file is re-read
post "$(body "st1-$run" ', "study": "s13"' 'echo mark=$STUDY_MARK')"
c1=$code
write_study v2 # while the service runs
post "$(body "st2-$run" ', "study": "s13"' 'echo mark=$STUDY_MARK')"
c2=$code
wait_done "st1-$run" 120 || true
f1=$final
o1=$(stdout_of "st1-$run")
wait_done "st2-$run" 120 || true
f2=$final
o2=$(stdout_of "st2-$run")
if [ "$c1" = 201 ] && [ "$c2" = 201 ] && [ "$f1" = "DONE 0" ] && [ "$f2" = "DONE 0" ] &&
    grep -qx 'mark=v1' <<<"$o1" && grep -qx 'mark=v2' <<<"$o2"; then
    pass "the study file rewritten under a running service: the next launch ran with the new version (mark=v1, then mark=v2)"
else
    fail "study reload (POST $c1/$c2, $f1 / $f2, stdout '$o1' / '$o2')"
fi

# ---------------------------------------------------- 2. unknown study: 422
post "$(body "st-typo-$run" ', "study": "s31"' 'echo should-not-run')"
c=$code
detail=$(jq_ "d.get('detail')")
field=$(jq_ "d.get('field')")
req GET "/v1/launches/st-typo-$run" -H "$AUTH"
if [ "$c" = 422 ] && [ "$detail" = 'study: unknown study "s31" (not in the study runtime file); refused' ] &&
    [ "$field" = study ] && [ "$code" = 404 ]; then
    pass "an unknown study is 422 naming it (field study), nothing stored: $detail"
else
    fail "unknown study (POST $c, detail '$detail', field '$field', GET $code)"
fi

# ------------------------------------ 3. an invalid file refuses studies only
printf 'format_version: 2\nstudies:\n  s13:\n    colour: red\n' >"$study"
post "$(body "st-bad-$run" ', "study": "s13"' 'echo should-not-run')"
cbad=$code
dbad=$(jq_ "d.get('detail')")
post "$(body "st-plain-$run" '' 'echo plain')"
cplain=$code
wait_done "st-plain-$run" 120 || true
fplain=$final
write_study v3
post "$(body "st3-$run" ', "study": "s13"' 'echo mark=$STUDY_MARK')"
c3=$code
wait_done "st3-$run" 120 || true
o3=$(stdout_of "st3-$run")
if [ "$cbad" = 422 ] && grep -q "$study" <<<"$dbad" && grep -q 'studies.s13.colour: unknown key' <<<"$dbad" &&
    [ "$cplain" = 201 ] && [ "$fplain" = "DONE 0" ] && [ "$c3" = 201 ] &&
    grep -qx 'mark=v3' <<<"$o3" && [ "$(grep -c 'cannot be used' "$work/serve.log")" = 1 ]; then
    pass "an invalid study file: study launches 422 naming the file, others run; fixed, studies run again"
else
    fail "invalid study file (study POST $cbad '$dbad', plain POST $cplain $fplain, fixed POST $c3 '$o3', log lines $(grep -c 'cannot be used' "$work/serve.log"))"
fi

# ------------------------------------------- 4. more refusals of the service
bad=""
post '{"launch_id": "byoc-'"$run"'", "site": "'"$SLUICE_TB_CLUSTER"'", "profile": "apptainer", "image": "/var/tmp/unvetted.sif", "command": "/bin/true", "time_limit": 5, "pools": ['"$pool"']}'
[ "$code" = 422 ] && [ "$(jq_ "d.get('field')")" = image ] &&
    grep -q 'image: /var/tmp/unvetted.sif is not an authorised job image (BYOC)' "$work/body" ||
    bad="$bad [job image: $code $(cat "$work/body")]"
post '{"launch_id": "gpu-'"$run"'", "site": "'"$SLUICE_TB_CLUSTER"'", "profile": "none", "command": "/bin/true", "time_limit": 5, "pools": [{"name": "main", "gpus_per_node": 1}]}'
[ "$code" = 422 ] && [ "$(jq_ "d.get('field')")" = 'pools[0].gpus_per_node' ] &&
    grep -q 'names no gpu_series' "$work/body" || bad="$bad [gpu pool: $code $(cat "$work/body")]"
post '{"launch_id": "peek-'"$run"'", "site": "'"$SLUICE_TB_CLUSTER"'", "profile": "apptainer", "image": "'"$work"'/images/ok.sif", "command": "/bin/true", "time_limit": 5, "mounts": [{"source": "'"$SLUICE_TB_STORAGE_ROOT"'/'"$SLUICE_TB_CLUSTER"'", "target": "/peek"}], "pools": ['"$pool"']}'
[ "$code" = 422 ] && grep -q 'overlaps storage.root' "$work/body" ||
    bad="$bad [mount in storage: $code $(cat "$work/body")]"
if [ -z "$bad" ]; then
    pass "the service refuses (422, naming the field) a job image not authorised, a GPU pool without a series, a mount source in the storage root"
else
    fail "refusals:$bad"
fi

# ------------------------------------------------ 5. CLI: unknown study = 65
rc=0
printf '%s\n' "$(body "st-cli-$run" ', "study": "s31"' 'echo should-not-run')" >"$work/cli.json"
timeout 60 "$SLUICE" launch "$work/cli.json" --wait --config "$site" --state-dir "$work/cli-state" \
    --study-runtime "$study" >"$work/cli.out" 2>&1 || rc=$?
if [ "$rc" = 65 ] &&
    grep -q 'study: unknown study "s31" (not in the study runtime file); refused' "$work/cli.out"; then
    pass "sluice launch --wait: an unknown study exits 65 with the same message"
else
    fail "CLI unknown study (exit $rc): $(cat "$work/cli.out")"
fi

# ------------------------------------------------------------ 6. keep_going
het() { # ID EXTRA
    printf '{"launch_id": "%s", "site": "%s", "profile": "none", "command": "/bin/bash", "time_limit": 5%s, "pools": [{"name": "trainer", "gpu_series": "a100", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200, "args": ["-c", "sleep 8; echo trainer-finished"]}, {"name": "rollout", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200, "args": ["-c", "exit 3"]}]}' \
        "$1" "$SLUICE_TB_CLUSTER" "$2"
}
post "$(het "kg-stop-$run" '')"
cs=$code
post "$(het "kg-on-$run" ', "keep_going": true')"
ck=$code
wait_done "kg-stop-$run" 180 || true
fs=$final
os=$(stdout_of "kg-stop-$run")
wait_done "kg-on-$run" 180 || true
fk=$final
ok_=$(stdout_of "kg-on-$run")
req GET "/v1/launches/kg-on-$run" -H "$AUTH"
reason=$(jq_ "d.get('reason')")
if [ "$cs" = 201 ] && [ "$ck" = 201 ] && [ "$fs" = "DONE 1" ] &&
    [ "$fk" = "DONE 1" ] && ! grep -q 'trainer-finished' <<<"$os" &&
    grep -qx 'trainer-finished' <<<"$ok_" && grep -q rollout <<<"$reason"; then
    pass "keep_going: by default the failing rollout stopped trainer; with keep_going trainer finished (both EXECUTION_ERROR naming rollout)"
else
    fail "keep_going (POST $cs/$ck, $fs / $fk, stdout stop '$os' keep '$ok_', reason '$reason')"
fi

finish
