#!/usr/bin/env bash
# install-deps.sh - install the Debian packages sluice needs, by what the host
# is for.  Idempotent: re-running it changes nothing once the packages are
# present.  Must run as root.
#
#   --runtime   what `sluice` and libsluice need to run, and nothing else:
#               the host that runs the service (no compiler, no Slurm daemon,
#               no database server, no browser)
#   --build     (the default) compile sluice and run its unit, golden, lint
#               and contract suites: compilers, the -dev packages, Criterion,
#               the lint tools, Node.js for the OpenAPI checks
#   --testbed   the local Slurm testbed, PostgreSQL and Chromium that the
#               end-to-end suites start, and what the 24.11 / 26.05 roots need
#   --all       --build and --testbed (deploy/demo.sh and deploy/test-all.sh)
#   --list      print the packages the other options select, install nothing
# Options combine: `--build --testbed` is `--all`.
set -euo pipefail

runtime=(
    # the libraries of the sluice command and libsluice (ldd of both)
    libcurl4 libjansson4 libjwt0 libyaml-0-2 libssl3 libsqlite3-0 libmicrohttpd12 libpq5
    ca-certificates
)
build=(
    build-essential cmake pkg-config clang clang-format libclang-rt-14-dev
    libcurl4-openssl-dev libjansson-dev libjwt-dev libyaml-dev libssl-dev
    libsqlite3-dev libmicrohttpd-dev libcriterion-dev
    # the store's PostgreSQL backend (libpq)
    libpq-dev
    # tools the tests and scripts use
    curl jq ca-certificates iproute2 procps
    # lint.clidocs: the generated man pages and shell completions
    groff-base man-db zsh
    # lint of deploy/ (systemd-analyze, YAML parsing, ldd/dpkg checks); serve_api.sh parses SSE with python3
    systemd python3 python3-yaml
    # tests/e2e/python_client.sh: a venv to pip-install clients/python into, offline
    python3-venv
)
testbed=(
    # the PostgreSQL server the store's tests start (deploy/testbed/postgres.sh)
    postgresql-15
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

want_runtime=0 want_build=0 want_testbed=0 list=0
for a in "$@"; do
    case "$a" in
    --runtime) want_runtime=1 ;;
    --build) want_build=1 ;;
    --testbed) want_testbed=1 ;;
    --all) want_build=1 want_testbed=1 ;;
    --list) list=1 ;;
    -h | --help)
        sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "install-deps.sh: unknown option '$a' (--runtime, --build, --testbed, --all, --list; see --help)" >&2
        exit 64
        ;;
    esac
done
[ $((want_runtime + want_build + want_testbed)) -gt 0 ] || want_build=1

packages=()
[ "$want_runtime" -eq 1 ] && packages+=("${runtime[@]}")
[ "$want_build" -eq 1 ] && packages+=("${build[@]}")
[ "$want_testbed" -eq 1 ] && packages+=("${testbed[@]}")
# one of each, in order
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | awk '!seen[$0]++')

# Node.js (for the OpenAPI linter and schema checks) may come from Debian or
# from the machine image, whose npm conflicts with Debian's; only ask Debian
# for it when no node is on PATH at all.
if [ "$want_build" -eq 1 ] && ! command -v node >/dev/null 2>&1; then
    packages+=(nodejs npm)
fi

if [ "$list" -eq 1 ]; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi

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
