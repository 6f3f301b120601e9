#!/usr/bin/env bash
# demo.sh - from a new Debian 12 machine to a first launch on a real local
# Slurm: install packages, build sluice, start the loopback testbed
# (slurmctld, slurmdbd on MariaDB, three slurmd with GPU-series features,
# slurmrestd with JWT), then submit through slurmrestd a single job and a
# two-component hetjob pinned to two GPU series, and show where they ran.
#
# Usage: deploy/demo.sh [--release 22.05|24.11|26.05]
#   22.05 (default) is the host's Debian 12 Slurm; 24.11 and 26.05 are Debian
#   trixie's and forky's, in a debootstrap root made on first use (a few
#   minutes, then cached; see docs/testbed.md).
set -euo pipefail

release=${SLUICE_TB_RELEASE:-22.05}
while [ "$#" -gt 0 ]; do
    case "$1" in
        --release) release=${2:-}; shift ;;
        --release=*) release=${1#--release=} ;;
        -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "demo.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
    esac
    shift
done
case "$release" in
    22.05 | 24.11 | 26.05) ;;
    *) echo "demo.sh: unknown release '$release' (22.05, 24.11 or 26.05)" >&2; exit 64 ;;
esac
export SLUICE_TB_RELEASE=$release

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/.." && pwd)"
build="${SLUICE_BUILD_DIR:-$src/build}"

bash "$here/install-deps.sh" --all
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_BUILD_TESTS=OFF \
    -DSLUICE_BUILD_BENCH=OFF
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)"
"$build/sluice" version

SLUICE_TB_FIX_HOSTS="${SLUICE_TB_FIX_HOSTS:-1}" bash "$here/testbed/start.sh" --release "$release"

# The site configuration for the testbed, and a store of our own.
demo_dir="${SLUICE_DEMO_DIR:-/var/tmp/sluice-demo-$release}"
mkdir -p "$demo_dir"
bash "$here/testbed/site-config.sh" >"$demo_dir/site.yaml"
# A fresh launch id per run: the same id would resume the finished launch.
request="$demo_dir/demo-hetjob.json"
sed "s/\"launch_id\": \"demo-hetjob\"/\"launch_id\": \"demo-hetjob-$(date +%Y%m%d%H%M%S)\"/" \
    "$here/testbed/requests/demo-hetjob.json" >"$request"
launch_id=$(sed -n 's/.*"launch_id": "\([^"]*\)".*/\1/p' "$request")

echo
echo "==> sluice launch $request --wait"
rc=0
"$build/sluice" launch "$request" --wait --config "$demo_dir/site.yaml" \
    --state-dir "$demo_dir/state" || rc=$?
echo
echo "==> what the two pools printed (archived from the shared storage)"
cat "$demo_dir/state/artifacts/$launch_id/stdout.log" || true
echo
echo "==> sluice status $launch_id"
"$build/sluice" status --state-dir "$demo_dir/state" "$launch_id"
if [ "$rc" -ne 0 ]; then
    echo "demo: the launch ended with result code $rc" >&2
    exit "$rc"
fi

echo
echo "The testbed keeps running.  Try:"
echo "  build/sluice ls --state-dir $demo_dir/state"
echo "  build/sluice check --config $demo_dir/site.yaml"
echo "  eval \"\$(deploy/testbed/env.sh --release $release)\"; sinfo -N -o '%N %f %T'"
echo "  deploy/testbed/status.sh --release $release"
echo "  deploy/testbed/stop.sh --release $release --purge     # stop it and remove all its state"
