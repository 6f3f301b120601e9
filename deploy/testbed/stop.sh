#!/usr/bin/env bash
# stop.sh - stop the sluice Slurm testbed: every daemon is signalled through
# its own pid file under the base directory (never by process name), in the
# reverse of the start order, and waited for.
#
# Usage: deploy/testbed/stop.sh [--release 22.05|24.11|26.05] [--purge]   (as root)
#   --purge  also cancel all jobs first and then delete the whole base
#            directory (state, accounting database, logs, keys, token).
# Jobs still running when a daemon is stopped without --purge keep running
# (their slurmstepd is not a testbed daemon); slurmd picks them up again on
# the next start, as on a real cluster.  For a release in a root (24.11,
# 26.05) the root's mounts are undone once no process runs in it any more;
# the root itself is kept (root.sh makes it once).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

purge=0
case "${1:-}" in
    --purge) purge=1 ;;
    "") ;;
    *) echo "usage: stop.sh [--purge]" >&2; exit 64 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
    tb_err "stop.sh must run as root"
    exit 77
fi
export SLURM_CONF=$TB_SLURM_CONF

# Seconds a daemon gets after SIGTERM before it is sent SIGKILL.
grace() {
    case "$1" in
        mariadbd) echo 60 ;;
        slurmctld | slurmdbd) echo 30 ;;
        *) echo 15 ;;
    esac
}

gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# With --purge, cancel every job while slurmctld still runs, so no job step
# keeps using the directory that is about to be removed.
if [ "$purge" -eq 1 ] && tb_pid slurmctld >/dev/null; then
    jobs=$(tb_slurm -t 15 squeue --noheader --format=%A 2>/dev/null | sort -u | tr '\n' ' ' || true)
    if [ -n "${jobs// /}" ]; then
        tb_say "cancelling jobs: $jobs"
        # shellcheck disable=SC2086
        tb_slurm -t 15 scancel --quiet $jobs 2>/dev/null || true
        jobs_gone() {
            [ -z "$(tb_slurm -t 10 squeue --noheader --format=%A \
                --states=PENDING,RUNNING,COMPLETING,CONFIGURING,SUSPENDED 2>/dev/null)" ]
        }
        tb_wait 30 jobs_gone || tb_warn "jobs still active after 30 s"
    fi
fi

failed=0
for ((i = ${#TB_DAEMONS[@]} - 1; i >= 0; i--)); do
    d=${TB_DAEMONS[$i]}
    pidfile=$(tb_pidfile "$d")
    if ! pid=$(tb_pid "$d"); then
        # Nothing (or something else) behind the pid file: drop a stale file.
        [ ! -e "$pidfile" ] || rm -f "$pidfile"
        continue
    fi
    kill -TERM "$pid" 2>/dev/null || true
    t=$(grace "$d")
    if tb_wait "$t" gone "$pid"; then
        tb_say "stopped $d (pid $pid)"
    else
        tb_warn "$d (pid $pid) still running $t s after SIGTERM: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        if ! tb_wait 10 gone "$pid"; then
            tb_err "$d (pid $pid) does not exit; see $(tb_logfile "$d")"
            failed=1
            continue
        fi
    fi
    rm -f "$pidfile"
done

# Unix sockets left by daemons that did not clean up after themselves.
if [ "$failed" -eq 0 ] && [ -d "$TB_RUN" ]; then
    rm -f "$TB_REST_SOCKET" "$TB_MUNGE_SOCKET" "$TB_MUNGE_SOCKET.lock" "$TB_MYSQL_SOCKET"
fi

if [ "$failed" -ne 0 ]; then
    tb_err "some daemons did not stop; nothing purged"
    exit 1
fi

if [ "$purge" -eq 1 ] && [ -e "$TB_DIR" ]; then
    if [ ! -e "$TB_MARKER" ]; then
        tb_err "$TB_DIR has no $TB_MARKER: not a testbed directory, refusing to delete it"
        exit 1
    fi
    rm -rf --one-file-system -- "$TB_DIR"
    tb_say "purged $TB_DIR"
fi
if tb_in_root && ! bash "$TB_LIB_DIR/root.sh" umount; then
    tb_err "could not undo the mounts of $TB_ROOT (see: mount | grep $TB_ROOT)"
    exit 1
fi
tb_say "stopped"
