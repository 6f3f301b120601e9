#!/usr/bin/env bash
# bench_failover.sh - issue 17: how long two `sluice serve` replicas on one
# PostgreSQL store go without a leader when the leader dies.  Runs the
# driver of tests/e2e/ha_chaos.sh (tests/e2e/lib/ha_chaos.py) with a small
# stream of launches and KILLS leader kills (SIGKILL, the replica started
# again at once), and prints each failover (kill -> a replica's /v1/readyz
# says "leader" with a higher epoch), their median and worst, and the
# target verdict (a new leader within 10 s: met / MISSED).
#   bench/bench_failover.sh [KILLS] [LAUNCHES]
# Needs the release's testbed (SLUICE_TB_RELEASE) and the testbed's
# PostgreSQL (deploy/testbed/postgres.sh start); SLUICE_BIN names sluice.
# Exits 0 whenever it ran.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
kills=${1:-10}
launches=${2:-40}
SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
eval "$("$REPO/deploy/testbed/env.sh")" || { echo "bench_failover: NOT RUN: no testbed"; exit 0; }
pg=$(bash "$REPO/deploy/testbed/postgres.sh" env) || { echo "bench_failover: NOT RUN: no PostgreSQL (deploy/testbed/postgres.sh start)"; exit 0; }
eval "$pg"
work=$(mktemp -d /tmp/sluice-bench-failover.XXXXXX)
schema="bench_failover_$$"
trap 'psql -q "$SLUICE_TEST_PG_URL" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1; rm -rf "$work"' EXIT
psql -q -v ON_ERROR_STOP=1 "$SLUICE_TEST_PG_URL" -c "CREATE SCHEMA $schema" >/dev/null ||
    { echo "bench_failover: NOT RUN: cannot create schema $schema"; exit 0; }
export SLUICE_STORE_URL="$SLUICE_TEST_PG_URL?options=-csearch_path%3D$schema"
bash "$REPO/deploy/testbed/site-config.sh" >"$work/site.yaml"
tok="tok-bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf 'bench %s\n' "$tok" >"$work/tokens"
chmod 0600 "$work/tokens"
python3 "$REPO/tests/e2e/lib/ha_chaos.py" "$SLUICE" "$work/site.yaml" "$work" "$tok" "$launches" "$kills" \
    "${SLUICE_CHAOS_SEED:-1}" >"$work/out" 2>&1
grep -E '^(RESULT|ha_chaos:)' "$work/out" | sed 's/^/  /'
awk -v kills="$kills" '
    /^FAILOVER / { t[n++] = $2; printf "  failover %d: %.2f s (%s, epoch %s)\n", n, $2, $3, $5 }
    END {
        if (n == 0) { print "bench_failover: no failover measured"; exit }
        for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
        med = n % 2 ? t[int(n / 2)] : (t[n / 2 - 1] + t[n / 2]) / 2
        printf "failover (%d of %d kills): median %.2f s, worst %.2f s\n", n, kills, med, t[n - 1]
        printf "target: a new leader within 10 s of the old one'"'"'s death (worst): %s\n", (t[n - 1] <= 10 && n == kills) ? "met" : "MISSED"
    }' "$work/out"
exit 0
