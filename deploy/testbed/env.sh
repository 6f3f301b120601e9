#!/usr/bin/env bash
# env.sh - print the sluice testbed's environment as shell `export` lines:
#     eval "$(deploy/testbed/env.sh [--release 22.05|24.11|26.05])"
# For a release in a root (24.11, 26.05) the paths are the host's view of the
# root's files, SLUICE_TB_CLUSTER_STORAGE_ROOT is the storage root as the
# jobs see it, and PATH starts with wrappers that run the release's own
# Slurm commands (squeue, sacct, scontrol, ...) inside the root.
# Run as root with the testbed up, it first renews the stored tokens
# ($SLUICE_TB_TOKEN_FILE, the tenants' and SlurmUser's) when missing or
# expiring within 10 minutes.
#
#     deploy/testbed/env.sh --token [LIFESPAN [USER]]
# mints a fresh token for USER (default the job user; root only, slurmctld
# must run) and prints it raw on stdout; LIFESPAN in seconds (default 3600).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    echo "usage: env.sh [--token [LIFESPAN_SECONDS [USER]]]" >&2
    exit 64
}

case "${1:-}" in
    --token)
        lifespan=${2:-3600}
        user=${3:-$TB_JOB_USER}
        [[ "$lifespan" =~ ^[0-9]+$ ]] || usage
        [[ "$user" =~ ^[a-z_][a-z0-9_-]*$ ]] || usage
        if [ "$(id -u)" -ne 0 ]; then
            tb_err "--token needs root (scontrol token username=... is for root/SlurmUser)"
            exit 77
        fi
        tb_mint_token "$lifespan" "$user" || exit 69
        exit 0
        ;;
    "") ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
esac

# Keep the stored tokens usable (quietly skipped when not root or slurmctld is down).
stale=0
while read -r _user file; do tb_token_fresh "$file" || stale=1; done < <(tb_token_files)
if [ "$(id -u)" -eq 0 ] && [ -d "$TB_KEYS" ] && [ "$stale" = 1 ]; then
    lifespan=$(tb_setting TOKEN_LIFESPAN)
    if tb_pid slurmctld >/dev/null; then
        tb_renew_tokens "${lifespan:-86400}" >/dev/null 2>&1 ||
            tb_warn "could not renew the tokens in $TB_KEYS"
    else
        tb_warn "testbed is not running (no slurmctld); tokens in $TB_KEYS not renewed - start it with deploy/testbed/start.sh"
    fi
fi

features=()
for n in "${TB_NODES[@]}"; do
    f=$(tb_series_feature "${TB_NODE_SERIES[$n]}")
    case " ${features[*]} " in *" $f "*) ;; *) features+=("$f") ;; esac
done
node_features=()
for n in "${TB_NODES[@]}"; do
    node_features+=("$n=$(tb_series_feature "${TB_NODE_SERIES[$n]}")")
done

# emit NAME VALUE: one export line, the value in single quotes (any ' in it
# written as '\'') so that eval gives back exactly VALUE.
emit() { printf "export %s='%s'\n" "$1" "${2//\'/\'\\\'\'}"; }
emit SLUICE_TB_RELEASE "$TB_RELEASE"
emit SLURM_CONF "$TB_IN_DIR/etc/slurm.conf"
emit SLUICE_TESTBED_DIR "$TB_DIR"
emit SLUICE_TB_CLUSTER "$TB_CLUSTER"
emit SLUICE_TB_PARTITION "$TB_PARTITION"
emit SLUICE_TB_ACCOUNT "$TB_ACCOUNT"
emit SLUICE_TB_USER "$TB_JOB_USER"
emit SLUICE_TB_REST_URL "$TB_REST_URL"
emit SLUICE_TB_REST_SOCKET "$TB_REST_SOCKET"
emit SLUICE_TB_REST_VERSION "$TB_API"
emit SLUICE_TB_JWT_KEY "$TB_JWT_KEY"
emit SLUICE_TB_TOKEN_FILE "$TB_TOKEN_FILE"
emit SLUICE_TB_SLURMUSER "$TB_SLURM_USER"
emit SLUICE_TB_SLURMUSER_TOKEN_FILE "$TB_SLURMUSER_TOKEN_FILE"
# The tenants: SLUICE_TB_TENANT_<T>_{USER,UID,ACCOUNT,TOKEN_FILE} for T in A B.
emit SLUICE_TB_TENANTS "${TB_TENANTS[*]}"
for t in "${TB_TENANTS[@]}"; do
    u=${TB_TENANT_USER[$t]}
    T=${t^^}
    emit "SLUICE_TB_TENANT_${T}_USER" "$u"
    emit "SLUICE_TB_TENANT_${T}_UID" "$(id -u "$u" 2>/dev/null || echo "${TB_TENANT_UID_WANTED[$t]}")"
    emit "SLUICE_TB_TENANT_${T}_ACCOUNT" "${TB_TENANT_ACCOUNT[$t]}"
    emit "SLUICE_TB_TENANT_${T}_TOKEN_FILE" "$(tb_token_file_of "$u")"
done
emit SLUICE_TB_FEATURES "${features[*]}"
emit SLUICE_TB_SITE_FEATURE "$TB_SITE_FEATURE"
emit SLUICE_TB_NODES "${TB_NODES[*]}"
emit SLUICE_TB_NODE_FEATURES "${node_features[*]}"
emit SLUICE_TB_GRES "$TB_GRES_NAME"
emit SLUICE_TB_STORAGE_ROOT "$TB_STORAGE"
emit SLUICE_TB_CLUSTER_STORAGE_ROOT "$TB_IN_DIR/storage"
emit SLUICE_TB_SLURM_BIN "$TB_SLURM_BIN"
if tb_in_root; then
    emit SLUICE_TB_ROOT "$TB_ROOT"
    case ":$PATH:" in
        *":$TB_DIR/bin:"*) ;;
        *) emit PATH "$TB_DIR/bin:$PATH" ;;
    esac
elif [ -n "$TB_SLURM_PREFIX" ]; then
    case ":$PATH:" in
        *":$TB_SLURM_BIN:"*) ;;
        *) emit PATH "$TB_SLURM_BIN:$PATH" ;;
    esac
fi
