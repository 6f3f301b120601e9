#!/usr/bin/env bash
# postgres.sh - a private PostgreSQL 15 cluster for sluice's store tests (and
# the store.url of a local run): Debian's postgresql-15 binaries, data under
# /var/tmp/sluice-pg, listening on 127.0.0.1:55432 only (and a unix socket in
# the same directory), a role `sluice` with a random password kept in a 0600
# passfile (libpq's PGPASSFILE format) and a database `sluice` it owns.
#
# Usage: deploy/testbed/postgres.sh {start|stop|status|env}
#   start   initdb once, start the server unless it is up (idempotent, fast
#           when already running)
#   stop    stop the server (the data directory stays)
#   status  exit 0 when the server answers, 1 otherwise
#   env     print the exports a test run needs:
#             export SLUICE_TEST_PG_URL=postgresql://sluice@127.0.0.1:55432/sluice
#             export PGPASSFILE=/var/tmp/sluice-pg/pgpass
# Environment: SLUICE_PG_DIR (default /var/tmp/sluice-pg), SLUICE_PG_PORT
# (default 55432).  As root (CI), initdb and postgres run as the `postgres`
# user (runuser); as another user, as that user.
set -euo pipefail

base="${SLUICE_PG_DIR:-/var/tmp/sluice-pg}"
port="${SLUICE_PG_PORT:-55432}"
bin=/usr/lib/postgresql/15/bin
data="$base/data"
passfile="$base/pgpass"
log="$base/server.log"
url="postgresql://sluice@127.0.0.1:$port/sluice"

die() {
    echo "postgres.sh: $*" >&2
    exit 1
}

# Run a command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

up() {
    [ -f "$data/PG_VERSION" ] || return 1
    as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1 || return 1
    as_owner "$bin/psql" -h "$base" -p "$port" -d postgres -Atqc 'SELECT 1' >/dev/null 2>&1
}

# Superuser SQL over the unix socket (peer/trust for the owner only).
su_sql() {
    as_owner "$bin/psql" -h "$base" -p "$port" -d postgres -v ON_ERROR_STOP=1 -Atq "$@"
}

init_cluster() {
    local owner
    [ -x "$bin/initdb" ] || die "$bin/initdb missing: install postgresql-15 (deploy/install-deps.sh)"
    mkdir -p "$base"
    chmod 0755 "$base"
    owner=$(id -un)
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || die "no postgres user (install postgresql-15)"
        owner=postgres
        chown postgres: "$base"
    fi
    # Only the owner may connect over the socket without a password; every
    # TCP connection needs one (scram).
    as_owner "$bin/initdb" -D "$data" -U "$owner" --auth-local=trust --auth-host=scram-sha-256 \
        -E UTF8 --locale=C.UTF-8 >"$base/initdb.log" 2>&1 ||
        { cat "$base/initdb.log" >&2; die "initdb failed"; }
}

start_server() {
    as_owner "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $base -c unix_socket_permissions=0700" \
        start >/dev/null || { tail -n 20 "$log" >&2; die "server did not start (log $log)"; }
}

# The role, its password and the database, made once; the passfile is root's
# (or the caller's), 0600.
make_role() {
    local pw
    if [ -s "$passfile" ] && [ "$(su_sql -c "SELECT 1 FROM pg_roles WHERE rolname = 'sluice'")" = 1 ]; then
        return 0
    fi
    pw=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
    umask 077
    printf '127.0.0.1:%s:*:sluice:%s\nlocalhost:%s:*:sluice:%s\n' "$port" "$pw" "$port" "$pw" \
        >"$passfile.new"
    chmod 0600 "$passfile.new"
    # The password goes in on stdin, never on a command line.
    if [ "$(su_sql -c "SELECT 1 FROM pg_roles WHERE rolname = 'sluice'")" = 1 ]; then
        printf "ALTER ROLE sluice LOGIN PASSWORD '%s';\n" "$pw" | su_sql -f - >/dev/null
    else
        printf "CREATE ROLE sluice LOGIN PASSWORD '%s';\n" "$pw" | su_sql -f - >/dev/null
    fi
    if [ "$(su_sql -c "SELECT 1 FROM pg_database WHERE datname = 'sluice'")" != 1 ]; then
        su_sql -c "CREATE DATABASE sluice OWNER sluice" >/dev/null
    fi
    mv "$passfile.new" "$passfile"
}

case "${1:-}" in
start)
    if ! up; then
        [ -f "$data/PG_VERSION" ] || init_cluster
        start_server
    fi
    make_role
    echo "postgres.sh: up on 127.0.0.1:$port (data $data)"
    ;;
stop)
    if [ -f "$data/PG_VERSION" ] && as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
        echo "postgres.sh: stopped"
    fi
    ;;
status)
    if up; then
        echo "postgres.sh: up on 127.0.0.1:$port"
        exit 0
    fi
    echo "postgres.sh: down"
    exit 1
    ;;
env)
    echo "export SLUICE_TEST_PG_URL=$url"
    echo "export PGPASSFILE=$passfile"
    ;;
*)
    echo "usage: postgres.sh {start|stop|status|env}" >&2
    exit 64
    ;;
esac
