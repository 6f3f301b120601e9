#!/usr/bin/env bash
# status.sh - show each testbed daemon as running/not running with its pid
# and log file.  Exit status 0 only when every daemon is running.
#
# Usage: deploy/testbed/status.sh
# Liveness is read from the pid files under the base directory (a pid file
# whose process is gone or is another program counts as not running); no
# request is sent to the daemons.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

echo "testbed: base directory $TB_DIR"
if [ ! -d "$TB_DIR" ]; then
    echo "testbed: not set up (no base directory); start it with deploy/testbed/start.sh"
    exit 1
fi

down=0
for d in "${TB_DAEMONS[@]}"; do
    if pid=$(tb_pid "$d"); then
        printf '  %-16s running      pid %-7s log %s\n' "$d" "$pid" "$(tb_logfile "$d")"
    else
        printf '  %-16s NOT RUNNING  pid %-7s log %s\n' "$d" "-" "$(tb_logfile "$d")"
        down=$((down + 1))
    fi
done
echo "  ports: mariadb 127.0.0.1:$TB_PORT_MARIADB, slurmdbd $TB_PORT_SLURMDBD, slurmctld $TB_PORT_SLURMCTLD," \
    "slurmd ${TB_PORT_SLURMD[tb1]}-${TB_PORT_SLURMD[tb3]}, slurmrestd $TB_REST_URL + unix:$TB_REST_SOCKET"
if [ "$down" -eq 0 ]; then
    echo "testbed: all ${#TB_DAEMONS[@]} daemons running"
    exit 0
fi
echo "testbed: $down of ${#TB_DAEMONS[@]} daemons not running"
exit 1
