#!/usr/bin/env bash
# enter.sh - run a command inside a release's root the way its daemons run:
# a private mount namespace entered with pivot_root (lib.sh tb_enter), where
# a real apptainer works (under chroot it refuses to).  By hand:
#
#     deploy/testbed/enter.sh --release 26.05                    (a root shell)
#     deploy/testbed/enter.sh --release 26.05 apptainer version
#     deploy/testbed/enter.sh --release 24.11 runuser -u sluiceuser -- apptainer exec ...
#
# As root, after root.sh prepare (start.sh does it).  The environment passes
# through as it is; HOME=/root and the root's PATH are set.  The exit status
# is the command's.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
    tb_err "enter.sh must run as root (unshare, mount, pivot_root)"
    exit 77
fi
if ! tb_in_root; then
    tb_err "release $TB_RELEASE runs on the host: there is no root to enter"
    exit 64
fi
if [ ! -d "$TB_ROOT/.oldroot" ]; then
    tb_err "no prepared root in $TB_ROOT (deploy/testbed/root.sh --release $TB_RELEASE prepare)"
    exit 69
fi
[ "$#" -gt 0 ] || set -- /bin/bash -l
HOME=/root PATH="$TB_SLURM_BIN:/usr/sbin:/usr/bin:/sbin:/bin" SLURM_CONF="$TB_IN_DIR/etc/slurm.conf" \
    tb_enter "$@"
