#!/usr/bin/env bash
# fleet.sh - several clusters from one service: one `sluice serve` whose site
# file names two clusters, the suite's release's testbed ($SLUICE_TB_RELEASE,
# 26.05 by default) first and a second release's (22.05, or 26.05 when the
# suite's is 22.05) second.
#
#   1. a hetjob launch on each cluster (the request's `cluster`) runs to
#      COMPLETED there: SUCCEEDED, and GET names the cluster;
#   2. the list filters by cluster (?cluster=), a POST naming an unknown
#      cluster is 422 listing the known ones, the same launch_id with
#      another cluster is 409, and /v1/metrics carries the cluster label;
#   3. with the second cluster's slurmrestd stopped, a launch on the first
#      is still submitted and completes while a launch on the second waits
#      for its slurmrestd;
#   4. once that slurmrestd is back, the second cluster's launch completes
#      (one job).
#
# Steps 3-4 stop the second testbed's slurmrestd: CTest registers this suite
# with both testbeds' locks (like check_clusters), and the suite restarts it
# with that testbed's start.sh (which starts only what is not running) on
# every exit.  Outside CTest, set SLUICE_E2E_FLEET_OUTAGE=0 to skip the
# outage (steps 3-4 then fail).  Loopback only.  A missing testbed is a
# failure, never a skip.  Last line: "fleet@<R1>: <n> passed, <m> failed".
set -euo pipefail
SLUICE_TB_RELEASE=${SLUICE_TB_RELEASE:-26.05}
R1=$SLUICE_TB_RELEASE
if [ "$R1" = 22.05 ]; then R2=26.05; else R2=22.05; fi

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
TESTS=4
NAME=fleet
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
command -v curl >/dev/null || abort "curl is missing"
command -v jq >/dev/null || abort "jq is missing"

work=$(mktemp -d /tmp/sluice-e2e-fleet.XXXXXX)
serve_pid=
restd_stopped=0
cleanup() {
    if [ -n "$serve_pid" ]; then
        kill -TERM "$serve_pid" 2>/dev/null || true
        wait "$serve_pid" 2>/dev/null || true
    fi
    if [ "$restd_stopped" = 1 ]; then # the second testbed as it was
        bash "$REPO/deploy/testbed/start.sh" --release "$R2" >"$work/restore.log" 2>&1 ||
            { say "could not restart the $R2 slurmrestd:"; tail -n 5 "$work/restore.log" >&2; }
    fi
    rm -rf "$work"
}
trap cleanup EXIT

e2e_tb_env "$R1"
e2e_tb_env "$R2"
for r in "$R1" "$R2"; do
    case "$(e2e_tb_var "$r" SLUICE_TB_REST_URL)" in
        http://127.*) ;;
        *) abort "only loopback may be contacted: $(e2e_tb_var "$r" SLUICE_TB_REST_URL)" ;;
    esac
    (eval "$(cat "$work/env.$r")" && bash "$REPO/deploy/testbed/status.sh" >/dev/null 2>&1) ||
        abort "the $r testbed is not running: deploy/testbed/start.sh --release $r"
done
C1=tb-${R1//./-}
C2=tb-${R2//./-}
run="r$(date +%s)$$"
site="$work/site.yaml"
(eval "$(cat "$work/env.$R1")" && bash "$REPO/deploy/testbed/site-config.sh") >"$site"
cat >>"$site" <<YAML
clusters:
  - name: $C1
  - name: $C2
    rest:
      url: "$(e2e_tb_var "$R2" SLUICE_TB_REST_URL)"
      api_version: $(e2e_tb_var "$R2" SLUICE_TB_REST_VERSION)
      user: $(e2e_tb_var "$R2" SLUICE_TB_USER)
      jwt_file: $(e2e_tb_var "$R2" SLUICE_TB_TOKEN_FILE)
    storage:
      root: $(e2e_tb_var "$R2" SLUICE_TB_STORAGE_ROOT)
      cluster_root: $(e2e_tb_var "$R2" SLUICE_TB_CLUSTER_STORAGE_ROOT)
    job_launcher:
      executables:
        srun: $(e2e_tb_var "$R2" SLUICE_TB_SLURM_BIN)/srun
YAML

sock="$work/sluice.sock"
env -u SLUICE_CONFIG -u SLURM_JWT "$SLUICE" serve --config "$site" --state-dir "$work/state" \
    --socket "$sock" >"$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 600); do
    [ -S "$sock" ] && break
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.1
done
[ -S "$sock" ] || { sed 's/^/    | /' "$work/serve.log" >&2; abort "sluice serve did not start"; }

# api METHOD PATH [curl args]: the body in $work/body, the status in $code.
api() {
    local m=$1 p=$2
    shift 2
    code=$(curl -s -o "$work/body" -w '%{http_code}' --unix-socket "$sock" -X "$m" "$@" \
        "http://localhost$p") || code=000
}
# post ID CLUSTER: a hetjob (two pools, one node each) on CLUSTER.
post() {
    cat >"$work/$1.json" <<JSON
{"launch_id": "$1", "site": "$(e2e_tb_var "$R1" SLUICE_TB_CLUSTER)", "cluster": "$2", "profile": "none",
 "command": "/bin/sh", "time_limit": 5,
 "pools": [
  {"name": "a", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 100,
   "args": ["-c", "echo a on $2"]},
  {"name": "b", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 100,
   "args": ["-c", "echo b on $2"]}]}
JSON
    api POST /v1/launches -H 'Content-Type: application/json' --data-binary "@$work/$1.json"
}
field() { api GET "/v1/launches/$1" && jq -r ".$2 // empty" "$work/body" 2>/dev/null; }
# wait_done ID SECONDS: the launch's result_code once DONE, "" on time-out.
wait_done() {
    local i
    for ((i = 0; i < $2 * 2; i++)); do
        if [ "$(field "$1" state)" = DONE ]; then
            field "$1" result_code
            return 0
        fi
        sleep 0.5
    done
    return 0
}

# ------------------------------------------------ 1. a hetjob on each cluster
a1="fleet-a-$run"
a2="fleet-b-$run"
post "$a1" "$C1"
c1=$code
post "$a2" "$C2"
c2=$code
r1=$(wait_done "$a1" 240)
r2=$(wait_done "$a2" 240)
n1=$(api GET "/v1/launches/$a1" && jq '.job_ids | length' "$work/body")
n2=$(api GET "/v1/launches/$a2" && jq '.job_ids | length' "$work/body")
if [ "$c1" = 201 ] && [ "$c2" = 201 ] && [ "$r1" = 0 ] && [ "$r2" = 0 ] &&
    [ "$(field "$a1" cluster)" = "$C1" ] && [ "$(field "$a2" cluster)" = "$C2" ] &&
    [ "${n1:-0}" -ge 1 ] && [ "${n2:-0}" -ge 1 ]; then
    pass "a hetjob on $C1 and one on $C2: both SUCCEEDED, each GET names its cluster"
else
    fail "hetjobs (POST $c1/$c2, results '$r1'/'$r2', jobs $n1/$n2)"
    sed 's/^/    | /' "$work/serve.log" >&2
fi

# ------------------------------------------- 2. list filter and metrics label
api GET "/v1/launches?cluster=$C2"
ids=$(jq -r '[.items[].launch_id] | join(" ")' "$work/body" 2>/dev/null || true)
api GET "/v1/launches?cluster=nowhere"
bad=$code
post "fleet-x-$run" nowhere
unknown=$code
known=$(jq -r '[.errors[]? | select(.path == "cluster") | .reason] | join(" ")' "$work/body" 2>/dev/null || true)
post "$a1" "$C2" # the same launch_id with another cluster: another request
again=$code
api GET /v1/metrics
if [ "$ids" = "$a2" ] && [ "$bad" = 400 ] && [ "$unknown" = 422 ] && [ "$again" = 409 ] &&
    [[ "$known" == *"(known: $C1, $C2)"* ]] &&
    grep -q "sluice_launches_tracked{cluster=\"$C1\"}" "$work/body" &&
    grep -q "sluice_slurmrestd_requests_total{cluster=\"$C2\",kind=\"submit\"}" "$work/body"; then
    pass "?cluster=$C2 lists only its launch (unknown: 400); POST of an unknown cluster 422 naming the known ones, another cluster for a launch_id 409; metrics carry the cluster"
else
    fail "list ?cluster=$C2 gave '$ids' (unknown: $bad), POST unknown $unknown ('$known'), again $again, or metrics lack the cluster label"
fi

# ----------------------- 3. the second cluster's slurmrestd down: the first goes on
restd_pidfile="$(e2e_tb_var "$R2" SLUICE_TESTBED_DIR)/run/rest/slurmrestd.pid"
stop_restd() {
    local p
    p=$(cat "$restd_pidfile" 2>/dev/null) || return 1
    restd_stopped=1
    kill -TERM "$p" || return 1
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
    return 1
}
b1="fleet-c-$run"
b2="fleet-d-$run"
if [ "${SLUICE_E2E_FLEET_OUTAGE:-1}" = 1 ] && stop_restd; then
    t0=$(date +%s)
    post "$b2" "$C2"
    p2=$code
    post "$b1" "$C1"
    p1=$code
    r1=$(wait_done "$b1" 120)
    t1=$(date +%s)
    s2=$(field "$b2" state)
    j2=$(api GET "/v1/launches/$b2" && jq '.job_ids | length' "$work/body")
    if [ "$p1" = 201 ] && [ "$p2" = 201 ] && [ "$r1" = 0 ] && [ "$s2" != DONE ] && [ "$j2" = 0 ]; then
        pass "$C2's slurmrestd down: a launch on $C1 SUCCEEDED in $((t1 - t0)) s; $C2's waits ($s2, no job)"
    else
        fail "outage of $C2 (POST $p1/$p2, $C1 result '$r1', $C2 state '$s2' jobs '$j2')"
        sed 's/^/    | /' "$work/serve.log" >&2
    fi
    # ------------------------------- 4. slurmrestd back: the second completes
    bash "$REPO/deploy/testbed/start.sh" --release "$R2" >"$work/start.log" 2>&1 &&
        restd_stopped=0
    r2=$(wait_done "$b2" 240)
    j2=$(api GET "/v1/launches/$b2" && jq '.job_ids | length' "$work/body")
    if [ "$restd_stopped" = 0 ] && [ "$r2" = 0 ] && [ "${j2:-0}" -ge 1 ]; then
        pass "$C2's slurmrestd back: its launch SUCCEEDED ($j2 job ids)"
    else
        fail "after the outage: $C2's launch result '$r2' jobs '$j2' (restarted: $((1 - restd_stopped)))"
        tail -n 5 "$work/start.log" >&2 || true
    fi
else
    fail "could not stop the $R2 slurmrestd (or SLUICE_E2E_FLEET_OUTAGE=0)"
    fail "no outage, no recovery"
fi
finish
