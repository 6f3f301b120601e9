#!/usr/bin/env bash
# install-deps.sh - install every Debian package that sluice's build, tests and
# local Slurm testbed need.  Idempotent: re-running it changes nothing once the
# packages are present.  Must run as root (CI and a new machine both are).
set -euo pipefail

packages=(
    # build
    build-essential cmake pkg-config clang clang-format libclang-rt-14-dev
    libcurl4-openssl-dev libjansson-dev libjwt-dev libyaml-dev libssl-dev
    libsqlite3-dev libmicrohttpd-dev libcriterion-dev
    # the store's PostgreSQL backend (libpq) and the server its tests start
    # (deploy/testbed/postgres.sh)
    libpq-dev postgresql-15
    # tools the tests and scripts use
    curl jq ca-certificates iproute2 procps
    # lint.clidocs: the generated man pages and shell completions
    groff-base man-db zsh
    # lint of deploy/ (systemd-analyze, YAML parsing, ldd/dpkg checks); serve_api.sh parses SSE with python3
    systemd python3 python3-yaml
    # tests/e2e/python_client.sh: a venv to pip-install clients/python into, offline
    python3-venv
    # e2e ui_browser.sh: the status page in headless Chromium (WebDriver), and
    # socat as the local proxy from loopback TCP to the Unix socket
    chromium chromium-driver socat
    # the local Slurm testbed
    munge mariadb-server slurmdbd slurmctld slurmd slurmrestd slurm-client
    slurm-wlm-jwt-plugin slurm-wlm-mysql-plugin
    # the 24.11 and 26.05 testbeds: Debian trixie / forky roots (deploy/testbed/root.sh);
    # sid's apptainer .deb for them is checked with gpgv and its index read with xz;
    # unshare (util-linux) enters a root with pivot_root
    debootstrap gpgv xz-utils util-linux
)

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps.sh: must run as root (apt-get install)" >&2
    exit 77
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

# Node.js (for the OpenAPI linter and schema checks) may come from Debian or
# from the machine image, whose npm conflicts with Debian's; only ask Debian
# for it when no node is on PATH at all.
if ! command -v node >/dev/null 2>&1; then
    packages+=(nodejs npm)
    missing+=(nodejs npm)
fi

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps.sh: all ${#packages[@]} packages already installed"
    exit 0
fi

echo "install-deps.sh: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# Debian's daemon packages try to start their services; there is no init
# system here, so a policy-rc.d that refuses keeps dpkg from failing or
# leaving stray daemons behind (the testbed starts its own).
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 0755 "$policy"
    created_policy=1
fi
apt-get install -y -q --no-install-recommends "${missing[@]}"
if [ "$created_policy" -eq 1 ]; then
    rm -f "$policy"
fi
echo "install-deps.sh: done"
