#!/usr/bin/env bash
# root.sh - the debootstrap root that holds a newer Slurm release for the
# testbed (24.11 from Debian trixie, 26.05 from Debian forky, 26.11 built
# in a forky root from SLUICE_TB_SLURM_SRC, a checkout of SchedMD's slurm).  start.sh and
# stop.sh call it; by hand it is useful to see or rebuild a root.
#
# Usage: deploy/testbed/root.sh --release 24.11|26.05|26.11 COMMAND      (as root)
#   prepare   make the root once (debootstrap of the release's Slurm, MariaDB
#             and munge, then Debian sid's apptainer .deb, checked against
#             sid's signed index) and keep it: a later prepare with the same
#             package list does nothing.  Roots live in SLUICE_TB_ROOTS
#             (/var/tmp/sluice-roots/<release>).
#   mount     mount /proc, bind /dev and the host's /tmp (the shared /tmp is
#             where the host's tests keep scripts and work directories the
#             jobs must see), copy /etc/hosts, and install the testbed
#             scripts in <root>/opt/sluice-testbed.  These mounts serve the
#             commands run with chroot (the Slurm clients); the daemons run
#             in a mount namespace of their own (lib.sh tb_enter).
#   umount    undo mount (after the daemons are stopped).
#   status    print whether the root is made and mounted.
# Knobs: SLUICE_TB_MIRROR (Debian mirror, default http://deb.debian.org/debian),
#   SLUICE_TB_APPTAINER_VERSION (the version of sid's apptainer, 1.4.5-2).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cmd=${1:-}
[ "$#" -le 1 ] || { echo "usage: root.sh --release R prepare|mount|umount|status" >&2; exit 64; }
case "$cmd" in
    prepare | mount | umount | status) ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: root.sh --release R prepare|mount|umount|status" >&2; exit 64 ;;
esac
if [ "$TB_SUITE" = host ]; then
    tb_err "release $TB_RELEASE uses the host's own packages: it has no root"
    exit 64
fi
if [ "${SLUICE_TB_IN_ROOT:-0}" = 1 ]; then
    tb_err "root.sh runs on the host, not inside a root"
    exit 64
fi
if [ "$(id -u)" -ne 0 ]; then
    tb_err "root.sh must run as root (debootstrap, mount, chroot)"
    exit 77
fi

MIRROR=${SLUICE_TB_MIRROR:-http://deb.debian.org/debian}
# What every root holds.  The list is written into the root's stamp: a root
# made from another list is made again.
BASE=munge,mariadb-server,mariadb-client,curl,jq,procps,passwd,iproute2,ca-certificates
SRC_COMMIT=
APPTAINER_VERSION=
if [ "$TB_FROM_SOURCE" = 1 ]; then
    PACKAGES=$BASE
    # Slurm from a checkout of SchedMD's repository, built in the root with
    # what its configure looks for (JWT, JSON, YAML, llhttp, munge, MariaDB).
    # No apptainer: no CI suite runs on this release.
    PACKAGES+=,gcc,make,libc6-dev,pkgconf,perl,python3,libjwt-dev,libjson-c-dev,libyaml-dev
    PACKAGES+=,libhttp-parser-dev,libllhttp-dev,libmunge-dev,libmariadb-dev,liblz4-dev
    PACKAGES+=,libcurl4-openssl-dev,libpam0g-dev
    SRC=${SLUICE_TB_SLURM_SRC:-}
    if [ -n "$SRC" ]; then
        SRC_COMMIT=$(git -C "$SRC" rev-parse --verify 'HEAD^{commit}' 2>/dev/null) || {
            tb_err "SLUICE_TB_SLURM_SRC=$SRC is not a git checkout (or bare repository) of SchedMD's slurm"
            exit 69
        }
    fi
else
    PACKAGES=slurmctld,slurmd,slurmdbd,slurmrestd,slurm-client,slurm-wlm-jwt-plugin
    PACKAGES+=,slurm-wlm-mysql-plugin,$BASE
    # Apptainer is in Debian sid only: its dependencies (all in trixie and forky)
    # come with debootstrap; busybox-static gives a test image its tools.  Not
    # squashfuse: with it an unprivileged `apptainer exec` mounts the SIF through
    # /dev/fuse, which is 0600 on this machine ("fuse: failed to open /dev/fuse:
    # Permission denied"), and apptainer does not fall back; without it the SIF
    # is unpacked to a temporary sandbox at each exec.
    PACKAGES+=,containernetworking-plugins,squashfs-tools,uidmap,libseccomp2,libsqlite3-0
    PACKAGES+=,busybox-static
    APPTAINER_VERSION=${SLUICE_TB_APPTAINER_VERSION:-1.4.5-2}
    if [[ ! "$APPTAINER_VERSION" =~ ^[0-9][0-9A-Za-z.+~-]*$ ]]; then
        tb_err "SLUICE_TB_APPTAINER_VERSION is not a Debian version: '$APPTAINER_VERSION'"
        exit 78
    fi
fi
STAMP=$TB_ROOT/.sluice-root
WANT="suite=$TB_SUITE packages=$PACKAGES"
[ -z "$APPTAINER_VERSION" ] || WANT+=" apptainer=sid:$APPTAINER_VERSION"
WANT+=" prefix=$TB_SLURM_PREFIX"
[ -z "$SRC_COMMIT" ] || WANT+=" source=$SRC_COMMIT"

mounts_under() {   # mount points at or below $1, deepest first
    awk -v p="$1" '$2 == p || index($2, p "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

umount_all() {   # umount_all DIR: unmount everything at or below DIR
    local m
    for m in $(mounts_under "$1"); do
        umount "$m" 2>/dev/null || umount -l "$m" || { tb_err "cannot unmount $m"; return 1; }
    done
}

root_ok() {
    [ -f "$STAMP" ] || return 1
    # A source build is kept whatever the checkout holds now, unless prepare
    # is asked for another commit.
    if [ "$TB_FROM_SOURCE" = 1 ] && [ -z "$SRC_COMMIT" ]; then
        grep -q "^suite=$TB_SUITE packages=$PACKAGES prefix=$TB_SLURM_PREFIX source=" "$STAMP"
        return
    fi
    [ "$(cat "$STAMP")" = "$WANT" ]
}

# build_slurm DIR: Slurm from $SRC at $SRC_COMMIT, configured for /usr as
# Debian lays it out (plugins also reachable as .../slurm-wlm), installed in
# the root DIR, with the SlurmUser Debian's packages would have made.
build_slurm() {
    local dir=$1 log=$TB_ROOTS/build-$TB_RELEASE.log t0
    t0=$(tb_now)
    tb_say "building Slurm $TB_RELEASE from $SRC at ${SRC_COMMIT:0:12} in the root (several minutes; log $log)"
    rm -rf "$dir/usr/src/slurm"
    install -d -m 0755 "$dir/usr/src/slurm"
    git -C "$SRC" archive "$SRC_COMMIT" | tar -x -C "$dir/usr/src/slurm"
    mount -t proc proc "$dir/proc"
    mount --bind /dev "$dir/dev"
    if ! chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        sh -c 'cd /usr/src/slurm &&
            ./configure --prefix=/usr --sysconfdir=/etc/slurm --libdir=/usr/lib/x86_64-linux-gnu \
                --enable-multiple-slurmd --with-jwt --with-json --with-yaml --with-munge \
                --disable-debug && make -j"$1" && make install' sh "$(nproc)" >"$log" 2>&1; then
        umount "$dir/dev" "$dir/proc" || true
        tb_show_log "$log" 20
        tb_err "could not build Slurm $TB_RELEASE (log $log)"
        exit 69
    fi
    umount "$dir/dev" "$dir/proc"
    rm -rf "$dir/usr/src/slurm"
    ln -sfn slurm "$dir/usr/lib/x86_64-linux-gnu/slurm-wlm"
    chroot "$dir" getent passwd slurm >/dev/null ||
        chroot "$dir" useradd --system --user-group --home-dir /nonexistent --shell /usr/sbin/nologin slurm
    tb_say "Slurm $TB_RELEASE ($(chroot "$dir" slurmctld -V)) built in $(tb_elapsed "$t0") s"
}

# busy_pids: the processes that run in the root: their root directory IS the
# root's directory (same device and inode), true under chroot and in
# tb_enter's namespace alike, where /proc/PID/root reads "/" (the bind of
# the root onto itself keeps the device and inode).
busy_pids() {
    local p busy=
    [ -d "$TB_ROOT" ] || return 0
    for p in /proc/[0-9]*; do
        if [ "$p/root" -ef "$TB_ROOT" ] 2>/dev/null; then
            busy+="${p#/proc/} "
        fi
    done
    printf '%s' "$busy"
}

# install_apptainer DIR: sid's apptainer .deb into the root DIR.  The chain of
# trust is apt's: sid's InRelease must carry a good signature of a key in the
# root's own debian-archive-keyring; it gives the SHA256 of the Packages
# index, which gives the .deb's file name and SHA256.  Every download is
# checked before it is used.
install_apptainer() {
    local dir=$1 dl=$1/var/cache/sluice-apptainer arch sum stanza file want_sum
    arch=$(chroot "$dir" dpkg --print-architecture)
    install -d -m 0755 "$dl"
    curl -sSf --max-time 120 -o "$dl/InRelease" "$MIRROR/dists/sid/InRelease" ||
        { tb_err "cannot fetch $MIRROR/dists/sid/InRelease"; return 1; }
    gpgv --keyring "$dir/usr/share/keyrings/debian-archive-keyring.gpg" \
        --output "$dl/Release" "$dl/InRelease" 2>"$dl/gpgv.log" ||
        { tb_err "sid's InRelease has no good signature: $(tail -n 1 "$dl/gpgv.log")"; return 1; }
    read -r sum _ < <(awk -v f="main/binary-$arch/Packages.xz" '
        /^SHA256:/ { in256 = 1; next } /^[^ ]/ { in256 = 0 }
        in256 && $3 == f { print $1, $2; exit }' "$dl/Release")
    [ -n "${sum:-}" ] || { tb_err "sid's Release names no main/binary-$arch/Packages.xz"; return 1; }
    curl -sSf --max-time 300 -o "$dl/Packages.xz" "$MIRROR/dists/sid/main/binary-$arch/Packages.xz" ||
        { tb_err "cannot fetch sid's Packages index"; return 1; }
    [ "$(sha256sum <"$dl/Packages.xz" | cut -d' ' -f1)" = "$sum" ] ||
        { tb_err "sid's Packages.xz does not match the SHA256 of its signed Release"; return 1; }
    # The apptainer stanza of the wanted version: "Filename SHA256".
    stanza=$(xz -dc "$dl/Packages.xz" | awk -v v="$APPTAINER_VERSION" '
        /^$/ { if (p == "apptainer" && ver == v) { print fn, sh; exit } p = ver = fn = sh = ""; next }
        /^Package: / { p = $2 } /^Version: / { ver = $2 }
        /^Filename: / { fn = $2 } /^SHA256: / { sh = $2 }')
    read -r file want_sum <<<"$stanza"
    if [ -z "${file:-}" ] || [ -z "${want_sum:-}" ]; then
        tb_err "sid has no apptainer $APPTAINER_VERSION for $arch (it has: $(xz -dc "$dl/Packages.xz" |
            awk '/^Package: apptainer$/ { p = 1; next } p && /^Version: / { print $2; p = 0 }' | tr '\n' ' '))"
        return 1
    fi
    [[ "$file" =~ ^pool/[A-Za-z0-9._/+~-]+\.deb$ ]] || { tb_err "odd Filename in sid's index: $file"; return 1; }
    curl -sSf --max-time 300 -o "$dl/apptainer.deb" "$MIRROR/$file" ||
        { tb_err "cannot fetch $MIRROR/$file"; return 1; }
    [ "$(sha256sum <"$dl/apptainer.deb" | cut -d' ' -f1)" = "$want_sum" ] ||
        { tb_err "$file does not match the SHA256 of sid's index"; return 1; }
    chroot "$dir" dpkg -i /var/cache/sluice-apptainer/apptainer.deb >"$TB_ROOTS/apptainer-$TB_RELEASE.log" 2>&1 ||
        { tb_err "dpkg -i $file failed in the root (log $TB_ROOTS/apptainer-$TB_RELEASE.log)"; return 1; }
    rm -rf -- "$dl"
    tb_say "installed apptainer $APPTAINER_VERSION from sid ($file, SHA256 checked)"
}

do_prepare() {
    local tmp=$TB_ROOT.new t0 script try busy
    if root_ok; then
        tb_say "root for Slurm $TB_RELEASE is ready in $TB_ROOT (cached)"
        return 0
    fi
    if [ "$TB_FROM_SOURCE" = 1 ] && [ -z "$SRC_COMMIT" ]; then
        tb_err "Slurm $TB_RELEASE is built from source and its root is not made: set SLUICE_TB_SLURM_SRC to a git checkout (or bare repository) of SchedMD's slurm (docs/testbed.md)"
        exit 69
    fi
    busy=$(busy_pids)
    if [ -n "$busy" ]; then
        tb_err "the root $TB_ROOT must be made again (its package list changed), but processes run in it (pids $busy): stop.sh --release $TB_RELEASE first"
        exit 75
    fi
    command -v debootstrap >/dev/null 2>&1 || {
        tb_err "debootstrap is missing (deploy/install-deps.sh installs it)"
        exit 69
    }
    install -d -m 0755 "$TB_ROOTS"
    t0=$(tb_now)
    # debootstrap knows trixie; forky is built with sid's script (the same
    # steps), named on the command line.
    script=
    [ -e "/usr/share/debootstrap/scripts/$TB_SUITE" ] || script=/usr/share/debootstrap/scripts/sid
    for try in 1 2; do
        umount_all "$tmp"
        rm -rf --one-file-system -- "$tmp"
        tb_say "debootstrap $TB_SUITE (Slurm $TB_RELEASE) into $tmp, try $try (a few minutes)"
        if debootstrap --variant=minbase --include="$PACKAGES" "$TB_SUITE" "$tmp" "$MIRROR" \
            ${script:+"$script"} >"$TB_ROOTS/debootstrap-$TB_RELEASE.log" 2>&1; then
            break
        fi
        tb_warn "debootstrap failed (log $TB_ROOTS/debootstrap-$TB_RELEASE.log)"
        tb_show_log "$TB_ROOTS/debootstrap-$TB_RELEASE.log" 15
        [ "$try" -lt 2 ] || { tb_err "could not make the root for Slurm $TB_RELEASE"; exit 69; }
    done
    # Daemons are started by the testbed, never by package scripts.
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
    chmod 0755 "$tmp/usr/sbin/policy-rc.d"
    [ "$TB_FROM_SOURCE" = 0 ] || build_slurm "$tmp"
    if [ -n "$TB_SLURM_PREFIX" ]; then
        # The site installs Slurm's client commands under a prefix that is not
        # on the default PATH: move slurm-client's commands there.
        local f
        install -d -m 0755 "$tmp$TB_SLURM_PREFIX/bin"
        for f in $(chroot "$tmp" dpkg -L slurm-client | grep -E '^/usr/bin/[^/]+$'); do
            mv -f "$tmp$f" "$tmp$TB_SLURM_PREFIX/bin/"
        done
    fi
    [ -z "$APPTAINER_VERSION" ] || install_apptainer "$tmp" || { tb_err "could not install apptainer into the root for Slurm $TB_RELEASE"; exit 69; }
    # pivot_root's put_old (lib.sh tb_enter).
    install -d -m 0700 "$tmp/.oldroot"
    rm -f "$tmp"/var/cache/apt/archives/*.deb
    printf '%s' "$WANT" >"$tmp/.sluice-root"
    if [ -e "$TB_ROOT" ]; then
        umount_all "$TB_ROOT"
        rm -rf --one-file-system -- "$TB_ROOT"
    fi
    mv "$tmp" "$TB_ROOT"
    tb_say "root for Slurm $TB_RELEASE made in $(tb_elapsed "$t0") s: $TB_ROOT"
}

do_mount() {
    root_ok || { tb_err "no root for Slurm $TB_RELEASE in $TB_ROOT (root.sh prepare)"; exit 69; }
    mountpoint -q "$TB_ROOT/proc" || mount -t proc proc "$TB_ROOT/proc"
    if ! mountpoint -q "$TB_ROOT/dev"; then
        mount --rbind /dev "$TB_ROOT/dev"
        mount --make-rslave "$TB_ROOT/dev"
    fi
    if ! mountpoint -q "$TB_ROOT/tmp"; then
        mount --bind /tmp "$TB_ROOT/tmp"
    fi
    # The short host name must resolve inside as it does outside.
    cp -f /etc/hosts "$TB_ROOT/etc/hosts"
    install -d -m 0700 "$TB_ROOT/.oldroot"   # pivot_root's put_old (lib.sh tb_enter)
    install -d -m 0755 "$TB_ROOT/opt/sluice-testbed"
    cp -f "$TB_LIB_DIR"/*.sh "$TB_ROOT/opt/sluice-testbed/"
}

case "$cmd" in
    prepare) do_prepare ;;
    mount) do_mount ;;
    umount)
        # Not while anything still runs in the root (another testbed in the
        # same root, a job step): its /proc and /dev would go away.
        busy=$(busy_pids)
        if [ -n "$busy" ]; then
            tb_say "root $TB_ROOT stays mounted: processes still run in it (pids $busy)"
            exit 0
        fi
        umount_all "$TB_ROOT" ;;
    status)
        if root_ok; then echo "root $TB_ROOT: made ($WANT)"; else echo "root $TB_ROOT: not made"; fi
        mounts_under "$TB_ROOT" | sed 's/^/  mounted: /'
        ;;
esac
