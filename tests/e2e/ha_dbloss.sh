#!/usr/bin/env bash
# ha_dbloss.sh - a replica that loses the database, and a follower's event
# stream (issue 17, "Replicas with one leader"):
# e2e-releases: 26.05
# (what it proves is sluice's own surface, the same on every release; the
# REST paths it crosses run in the suites registered on all three.)
#
#   Two `sluice serve` replicas on one PostgreSQL schema; replica b reaches
#   the database through a TCP relay of the driver's own
#   (tests/e2e/lib/ha_dbloss.py), so that b alone can lose it.
#   1. b leads, a follows: GET /v1/events on the follower sees every event
#      of the leader's launches within 1 s of its commit;
#   2. the relay is cut: b stops leading, /v1/readyz says 503 and the log
#      says why;
#   3. a POST to b is 503 and nothing is stored;
#   4. a leads and runs a new launch to its end;
#   5. the relay is back: b is ready again, as a follower (the log says the
#      database answers again);
#   6. b serves the stdout of the launch a ran and archived meanwhile, from
#      the store, byte for byte (issue 30).
#
# The store is a schema of its own in the testbed's PostgreSQL
# (deploy/testbed/postgres.sh), dropped at the end; the database itself is
# never stopped.  Runs against the testbed's slurmrestd on loopback.  Last
# line: "ha_dbloss: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=6
NAME=ha_dbloss
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

e2e_launch_setup ha_dbloss
schema=""
cleanup() {
    e2e_pg_drop
    rm -rf "$work"
}
trap cleanup EXIT
e2e_pg_schema ha_dbloss
pgport=$(printf '%s' "$SLUICE_TEST_PG_URL" | sed -n 's|.*://[^/]*:\([0-9]*\)/.*|\1|p')
[ -n "$pgport" ] || abort "no port in $SLUICE_TEST_PG_URL"
# The relay has a port of its own: a password line for any port.
awk -F: -v OFS=: '{ $2 = "*"; print }' "$PGPASSFILE" >"$work/pgpass"
chmod 0600 "$work/pgpass"
export PGPASSFILE="$work/pgpass"
export SLUICE_STORE_URL_DIRECT="$store_url"

tok="tok-dbloss-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf 'dbloss %s\n' "$tok" >"$work/tokens"
chmod 0600 "$work/tokens"

rc=0
python3 "$REPO/tests/e2e/lib/ha_dbloss.py" "$SLUICE" "$site" "$work" "$tok" "$pgport" \
    >"$work/dbloss.out" 2>&1 || rc=$?
grep '^ha_dbloss:' "$work/dbloss.out" | sed 's/^/    | /' || true
e2e_driver_results "$work/dbloss.out" "$rc" 'leadership|fenced|database|ERROR|error'
finish
