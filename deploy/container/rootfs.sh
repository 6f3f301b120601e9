#!/usr/bin/env bash
# rootfs.sh - the runtime stage of deploy/container/Containerfile as a root
# file system made from Debian packages alone, without a container engine:
# debootstrap of bookworm (minbase) with the runtime package list of the
# Containerfile's runtime stage, the sluice .deb installed into it, and the
# same account and directories the Containerfile makes.  It proves that
# the image's contents are enough to run sluice, and it is a root file
# system an operator can pack into an image (`tar -C DIR -c .`).
#
# Usage: deploy/container/rootfs.sh --deb FILE [--dir DIR] [--uid UID --gid GID]   (as root)
#   --deb FILE  the package (cpack -G DEB, see README.md)
#   --dir DIR   where the root goes (default /var/tmp/sluice-roots/runtime-bookworm);
#               the debootstrap part is made once and kept while the package
#               list is the same (a stamp in the root records it)
#   --uid/--gid the service account's ids (default 10001, as in the
#               Containerfile); use the uid that rest.user has on the cluster
#               (docs/deployment.md, "the uid contract")
# Knobs: SLUICE_TB_MIRROR (Debian mirror, default http://deb.debian.org/debian).
# Prints the root's path last.  Checks that no Slurm binary and no munge is
# in it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deb=""
dir=/var/tmp/sluice-roots/runtime-bookworm
uid=10001
gid=10001
while [ "$#" -gt 0 ]; do
    case "$1" in
        --deb) deb=${2:-}; shift ;;
        --dir) dir=${2:-}; shift ;;
        --uid) uid=${2:-}; shift ;;
        --gid) gid=${2:-}; shift ;;
        -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "rootfs.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
    esac
    shift
done
[ -n "$deb" ] && [ -f "$deb" ] || { echo "rootfs.sh: --deb FILE is required (a sluice .deb)" >&2; exit 64; }
[ "$(id -u)" -eq 0 ] || { echo "rootfs.sh: must run as root (debootstrap, chroot)" >&2; exit 77; }
case "$uid$gid" in *[!0-9]*) echo "rootfs.sh: --uid and --gid must be numbers" >&2; exit 64 ;; esac

# The runtime package list, read from the Containerfile itself, so the two
# cannot drift apart: the `apt-get install` line of the runtime stage.
pkgs=$(awk '/^FROM .* AS runtime/{rt=1} rt && /apt-get install/{grab=1; next}
            grab && /^[ \t]*&&/ { grab = 0 }
            grab { for (i = 1; i <= NF; i++) if ($i ~ /^[a-z0-9][a-z0-9.+-]*$/) print $i;
                   if ($0 !~ /\\$/) grab = 0 }' "$here/Containerfile" | tr '\n' ',' | sed 's/,$//')
[ -n "$pkgs" ] || { echo "rootfs.sh: no runtime package list found in the Containerfile" >&2; exit 70; }
case ",$pkgs," in *,slurm*|*,munge*) echo "rootfs.sh: the runtime list names Slurm or munge: $pkgs" >&2; exit 70 ;; esac

stamp="bookworm minbase $pkgs"
if [ ! -f "$dir/.sluice-rootfs-stamp" ] || [ "$(cat "$dir/.sluice-rootfs-stamp")" != "$stamp" ]; then
    rm -rf "$dir.new"
    mkdir -p "$(dirname "$dir")"
    echo "rootfs: debootstrap bookworm (minbase + $pkgs) into $dir (a minute or two)" >&2
    debootstrap --variant=minbase --include="$pkgs" bookworm "$dir.new" \
        "${SLUICE_TB_MIRROR:-http://deb.debian.org/debian}" >"$dir.new.log" 2>&1 || {
        tail -n 20 "$dir.new.log" >&2
        echo "rootfs.sh: debootstrap failed (log: $dir.new.log)" >&2
        exit 69
    }
    printf '%s' "$stamp" >"$dir.new/.sluice-rootfs-stamp"
    rm -rf "$dir"
    mv "$dir.new" "$dir"
    rm -f "$dir.new.log"
fi

# The package, then what the Containerfile's runtime stage does: the
# account, its directories, and nothing else.
cp "$deb" "$dir/tmp/sluice.deb"
chroot "$dir" dpkg --purge sluice >/dev/null 2>&1 || true
chroot "$dir" userdel sluice >/dev/null 2>&1 || true
chroot "$dir" groupdel sluice >/dev/null 2>&1 || true
chroot "$dir" groupadd --system --gid "$gid" sluice
chroot "$dir" useradd --system --uid "$uid" --gid "$gid" --home-dir /var/lib/sluice 2>/dev/null \
    --shell /usr/sbin/nologin sluice
chroot "$dir" dpkg -i /tmp/sluice.deb >/dev/null
rm -f "$dir/tmp/sluice.deb"
install -d -m 0700 -o "$uid" -g "$gid" "$dir/var/lib/sluice"
install -d -m 0755 -o "$uid" -g "$gid" "$dir/run/sluice"
install -d -m 0750 -o root -g "$gid" "$dir/etc/sluice"
chroot "$dir" /usr/bin/sluice version >/dev/null

# No Slurm binary and no munge: sluice needs neither.
for cmd in sbatch srun squeue sacct scancel scontrol munge munged; do
    if chroot "$dir" sh -c "command -v $cmd" >/dev/null 2>&1; then
        echo "rootfs.sh: $cmd is in the root; the image must not need it" >&2
        exit 70
    fi
done
echo "$dir"
