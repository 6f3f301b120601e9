#!/usr/bin/env bash
# container_rootfs.sh - the container image's runtime stage, made from
# Debian packages (deploy/container/rootfs.sh: debootstrap of bookworm with
# the Containerfile's runtime package list, plus the sluice .deb), runs the
# demo hetjob against this release's testbed from inside, as the container
# would:
#
#   1. the root is made and holds no Slurm binary and no munge;
#   2. inside it (chroot, the service account's uid = rest.user's uid on the
#      cluster, the storage root bound at the same path, the Slurm JWT
#      copied in as a secret file), `sluice check` passes;
#   3. the demo hetjob runs to SUCCEEDED and both pools' output is archived
#      into the store inside the root;
#   4. the uid contract: with rest.user given an account in the image, `sluice
#      check` as that uid says ok, and as the Containerfile's default uid 10001
#      it fails (exit 77) naming both uids, before any launch could fail on
#      the cluster.
#
# Runs as root (debootstrap, chroot, mount).  The root is cached in
# /var/tmp/sluice-roots/runtime-bookworm.  Last line:
# "container_rootfs: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=4
NAME=container_rootfs
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"
# shellcheck source=lib/deb.sh
. "$HERE/lib/deb.sh"

[ "$(id -u)" -eq 0 ] || abort "needs root (debootstrap, chroot, mount)"
e2e_launch_setup rootfs
e2e_deb_lock
root=${SLUICE_RUNTIME_ROOT:-/var/tmp/sluice-roots/runtime-bookworm}
mounted=()
cleanup() {
    local m
    for m in "${mounted[@]}"; do
        umount -l "$m" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

job_uid=$(id -u "$SLUICE_TB_USER")
job_gid=$(id -g "$SLUICE_TB_USER")
storage=$(sed -n 's/^  root: //p' "$site" | head -n1)

# ------------------------------------------------------------------ 1. the root
e2e_build_deb "$work/cmake.log"
made=0
if [ -n "$deb" ] && bash "$REPO/deploy/container/rootfs.sh" --deb "$deb" --dir "$root" \
    --uid "$job_uid" --gid "$job_gid" >"$work/rootfs.log" 2>&1; then
    made=1
fi
if [ "$made" -eq 1 ] && [ -x "$root/usr/bin/sluice" ] && [ ! -e "$root/usr/bin/sbatch" ] &&
    [ ! -e "$root/usr/sbin/munged" ]; then
    pass "root: bookworm + runtime packages + $(basename "$deb"), no Slurm binary, no munge"
else
    tail -n 20 "$work/cmake.log" "$work/rootfs.log" 2>/dev/null | sed 's/^/    | /' >&2
    fail "root: not made (deb=$deb)"
fi

# The container's view: the storage root at the same path, the Slurm JWT as
# a mounted secret, /etc/hosts for loopback names, /dev for /dev/null and
# /dev/urandom; the site file names the secret's path inside.
inside() {
    local uid=$1 gid=$2
    shift 2
    chroot --userspec="$uid:$gid" "$root" env -i PATH=/usr/bin:/bin HOME=/var/lib/sluice \
        SLUICE_STATE_DIR=/var/lib/sluice/state "$@"
}
if [ "$made" -eq 1 ]; then
    for d in dev proc "${storage#/}"; do
        mkdir -p "$root/$d"
        mount --bind "/$d" "$root/$d"
        mounted=("$root/$d" "${mounted[@]}")
    done
    cp /etc/hosts "$root/etc/hosts"
    install -d -m 0750 -o root -g "$job_gid" "$root/run/secrets"
    install -m 0440 -o root -g "$job_gid" "$SLUICE_TB_TOKEN_FILE" "$root/run/secrets/slurm-jwt"
    sed "s|^  jwt_file: .*|  jwt_file: /run/secrets/slurm-jwt|" "$site" >"$root/etc/sluice/site.yaml"
    chmod 0644 "$root/etc/sluice/site.yaml"
    rm -rf "$root/var/lib/sluice/state"
    install -d -m 0700 -o "$job_uid" -g "$job_gid" "$root/var/lib/sluice" "$root/var/lib/sluice/state"
    sed "s/\"launch_id\": \"demo-hetjob\"/\"launch_id\": \"rootfs-demo-$run\"/" \
        "$REPO/deploy/testbed/requests/demo-hetjob.json" >"$root/tmp/demo-$run.json"
    chmod 0644 "$root/tmp/demo-$run.json"
fi

# ------------------------------------------------------------------ 2. check
crc=0
if [ "$made" -eq 1 ]; then
    inside "$job_uid" "$job_gid" /usr/bin/sluice check --config /etc/sluice/site.yaml \
        >"$work/check.out" 2>&1 || crc=$?
else
    crc=127
fi
if [ "$crc" -eq 0 ]; then
    pass "check: sluice check passes inside the root as uid $job_uid ($SLUICE_TB_USER on the cluster)"
else
    sed 's/^/    | /' "$work/check.out" >&2 2>/dev/null || true
    fail "check: exit $crc"
fi

# ------------------------------------------------------------------ 3. demo
rc=0
if [ "$made" -eq 1 ]; then
    timeout 300 chroot --userspec="$job_uid:$job_gid" "$root" env -i PATH=/usr/bin:/bin \
        HOME=/var/lib/sluice /usr/bin/sluice launch "/tmp/demo-$run.json" --wait \
        --config /etc/sluice/site.yaml --state-dir /var/lib/sluice/state >"$work/demo.out" 2>&1 || rc=$?
else
    rc=127
fi
out=$(cat "$root/var/lib/sluice/state/artifacts/rootfs-demo-$run/stdout.log" 2>/dev/null || true)
if [ "$rc" -eq 0 ] && grep -q '^trainer on ' <<<"$out" && grep -q '^rollout on ' <<<"$out"; then
    pass "demo: the two-pool hetjob ran to SUCCEEDED from inside the root (no Slurm binaries, no munge)"
else
    sed 's/^/    | /' "$work/demo.out" >&2 2>/dev/null || true
    fail "demo: exit $rc, output: $out"
fi

# ------------------------------------------------------- 4. the uid contract
urc=0
okrc=0
if [ "$made" -eq 1 ]; then
    chroot "$root" useradd --non-unique --uid "$job_uid" --gid "$job_gid" --no-create-home \
        --shell /usr/sbin/nologin "$SLUICE_TB_USER" 2>/dev/null || true
    chmod 0755 "$root/run/secrets"
    install -m 0444 "$SLUICE_TB_TOKEN_FILE" "$root/run/secrets/slurm-jwt"
    inside "$job_uid" "$job_gid" /usr/bin/sluice check --config /etc/sluice/site.yaml \
        >"$work/uid-ok.out" 2>&1 || okrc=$?
    # /etc/sluice is the service group's (0750): uid 10001 reads a copy.
    install -m 0644 "$root/etc/sluice/site.yaml" "$root/tmp/site-10001.yaml"
    inside 10001 10001 /usr/bin/sluice check --config /tmp/site-10001.yaml \
        >"$work/uid.out" 2>&1 || urc=$?
    chroot "$root" userdel "$SLUICE_TB_USER" >/dev/null 2>&1 || true
else
    urc=127
fi
if [ "$okrc" -eq 0 ] && grep -Eq '^uid-contract +ok ' "$work/uid-ok.out" && [ "$urc" -eq 77 ] &&
    grep -Eq "^uid-contract +FAIL +sluice runs as uid 10001 but the jobs run as $SLUICE_TB_USER \(uid $job_uid\)" "$work/uid.out"; then
    pass "uid contract: ok as uid $job_uid; as uid 10001 check fails (exit 77) naming both uids"
else
    sed 's/^/    | /' "$work/uid-ok.out" "$work/uid.out" >&2 2>/dev/null || true
    fail "uid contract: exit $okrc / $urc (want 0 / 77)"
fi

finish
