#!/usr/bin/env bash
# demo.sh - from a new Debian 12 machine to a first launch on a real local
# Slurm: install packages, build sluice, start the loopback testbed
# (slurmctld, slurmdbd on MariaDB, three slurmd with GPU-series features,
# slurmrestd with JWT), then submit through slurmrestd a single job and a
# two-component hetjob pinned to two GPU series, and show where they ran.
#
# Until the launcher lands, the launch is the testbed's smoke launch
# (tests/e2e/smoke_testbed.sh): REST + JWT only, no sbatch.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/.." && pwd)"
build="${SLUICE_BUILD_DIR:-$src/build}"

bash "$here/install-deps.sh"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_BUILD_TESTS=OFF
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)"
"$build/sluice" version

SLUICE_TB_FIX_HOSTS="${SLUICE_TB_FIX_HOSTS:-1}" bash "$here/testbed/start.sh"
SLUICE_SMOKE_VERBOSE=1 bash "$src/tests/e2e/smoke_testbed.sh"

echo
echo "The testbed keeps running.  Try:"
echo "  eval \"\$(deploy/testbed/env.sh)\"; sinfo -N -o '%N %f %T'"
echo "  deploy/testbed/status.sh"
echo "  deploy/testbed/stop.sh --purge     # stop it and remove all its state"
