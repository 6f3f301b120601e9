#!/usr/bin/env bash
# check_clusters.sh - `sluice check` of one site file with two clusters: the
# suite's release ($SLUICE_TB_RELEASE) first, and a second release's testbed
# (26.05, or 22.05 when the suite's is 26.05).  Both must pass, each row
# named after its cluster, each version row naming its own Slurm release, the
# second cluster's own gpu_series replacing the site's; a bad token for the
# second cluster fails only its rows (exit 77).  Read-only against both
# testbeds (diag, nodes, an accounting query; no job).  A missing testbed is
# a failure, never a skip.  Last line: "check_clusters+<R2>@<R1>: <n> passed, <m> failed".
set -euo pipefail
SLUICE_TB_RELEASE=${SLUICE_TB_RELEASE:-22.05}
R1=$SLUICE_TB_RELEASE
if [ "$R1" = 26.05 ]; then R2=22.05; else R2=26.05; fi

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
TESTS=4
NAME=check_clusters+$R2
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

work=$(mktemp -d /tmp/sluice-check-clusters-XXXXXX)
trap 'rm -rf "$work"' EXIT


e2e_tb_env "$R1"
e2e_tb_env "$R2"
for r in "$R1" "$R2"; do
    for name in SLUICE_TB_REST_URL SLUICE_TB_USER SLUICE_TB_TOKEN_FILE SLUICE_TB_PARTITION \
        SLUICE_TB_STORAGE_ROOT; do
        if [ -z "$(e2e_tb_var "$r" "$name")" ]; then
            abort "$name is not set for the $r testbed"
        fi
    done
    case "$(e2e_tb_var "$r" SLUICE_TB_REST_URL)" in
        http://127.*) ;;
        *) abort "only loopback may be contacted: $(e2e_tb_var "$r" SLUICE_TB_REST_URL)" ;;
    esac
done
C1=tb-${R1//./-}
C2=tb-${R2//./-}

# site TOKEN2: the two-cluster site file, the second cluster's token file TOKEN2.
site() {
    cat <<YAML
rest:
  url: "$(e2e_tb_var "$R1" SLUICE_TB_REST_URL)"
  user: $(e2e_tb_var "$R1" SLUICE_TB_USER)
  jwt_file: $(e2e_tb_var "$R1" SLUICE_TB_TOKEN_FILE)
storage:
  root: $(e2e_tb_var "$R1" SLUICE_TB_STORAGE_ROOT)
  cluster_root: $(e2e_tb_var "$R1" SLUICE_TB_CLUSTER_STORAGE_ROOT)
job_launcher:
  sandbox: none
  sbatch_directives:
    partition: $(e2e_tb_var "$R1" SLUICE_TB_PARTITION)
gpu_series:
  a100:
    constraint: "gpu_a100"
  h100:
    constraint: "gpu_h100"
clusters:
  - name: $C1
  - name: $C2
    rest:
      url: "$(e2e_tb_var "$R2" SLUICE_TB_REST_URL)"
      user: $(e2e_tb_var "$R2" SLUICE_TB_USER)
      jwt_file: $1
    storage:
      root: $(e2e_tb_var "$R2" SLUICE_TB_STORAGE_ROOT)
      cluster_root: $(e2e_tb_var "$R2" SLUICE_TB_CLUSTER_STORAGE_ROOT)
    job_launcher:
      sbatch_directives:
        partition: $(e2e_tb_var "$R2" SLUICE_TB_PARTITION)
    gpu_series:
      h100:
        constraint: "gpu_h100"
YAML
}

run() { # run NAME EXPECTED_EXIT SITE_FILE
    local rc=0
    env -u SLURM_JWT -u SLUICE_CONFIG "$SLUICE" check --config "$3" -o json >"$work/out" \
        2>"$work/err" || rc=$?
    if [ "$rc" -ne "$2" ]; then
        fail "$1: exit $rc, expected $2"
        cat "$work/out" "$work/err"
        return 1
    fi
    return 0
}
status() { jq -r --arg c "$1" '.checks[] | select(.check == $c) | .status' "$work/out"; }

site "$(e2e_tb_var "$R2" SLUICE_TB_TOKEN_FILE)" >"$work/site.yaml"
if run both 0 "$work/site.yaml"; then
    bad=
    for c in "$C1" "$C2"; do
        for row in identity reachability version token accounting partition gpu:h100; do
            [ "$(status "$c/$row")" = ok ] || bad="$bad $c/$row=$(status "$c/$row")"
        done
    done
    if [ -z "$bad" ] && jq -e '.ok == true and ([.checks[] | select(.status == "FAIL")] | length == 0)
            and ([.checks[] | select(.check != "config") | .cluster] | unique) == ($c | split(" ") | sort)' \
            --arg c "$C1 $C2" "$work/out" >/dev/null; then
        pass "both clusters checked: exit 0, every row named after its cluster"
    else
        fail "both clusters: rows not ok:${bad:- (cluster members)}"
        cat "$work/out"
    fi
    v1=$(jq -r --arg c "$C1/version" '.checks[] | select(.check == $c) | .detail' "$work/out")
    v2=$(jq -r --arg c "$C2/version" '.checks[] | select(.check == $c) | .detail' "$work/out")
    if [[ "$v1" == *"Slurm $R1."* && "$v2" == *"Slurm $R2."* ]]; then
        pass "each cluster's version row names its release ($v1 | $v2)"
    else
        fail "version rows do not name $R1 and $R2: $v1 | $v2"
    fi
    if [ "$(status "$C1/gpu:a100")" = ok ] && [ -z "$(status "$C2/gpu:a100")" ]; then
        pass "$C2's gpu_series replaces the site's (no gpu:a100 row for it)"
    else
        fail "gpu rows: $C1/gpu:a100=$(status "$C1/gpu:a100") $C2/gpu:a100=$(status "$C2/gpu:a100")"
    fi
fi

printf 'SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJ4In0.bm90LXNpZ25lZA\n' >"$work/bad.jwt"
chmod 600 "$work/bad.jwt"
site "$work/bad.jwt" >"$work/site-bad.yaml"
if run bad-token-second 77 "$work/site-bad.yaml"; then
    if [ "$(status "$C2/token")" = FAIL ] &&
        jq -e --arg c "$C1" '[.checks[] | select(.cluster == $c and .status == "FAIL")] | length == 0' \
            "$work/out" >/dev/null &&
        grep -q "$C2/token failed" "$work/err" && ! grep -q 'bm90LXNpZ25lZA' "$work/out" "$work/err"; then
        pass "a bad token for $C2: exit 77, only $C2's token row fails, token not printed"
    else
        fail "bad token for $C2: unexpected rows"
        cat "$work/out" "$work/err"
    fi
fi

finish
