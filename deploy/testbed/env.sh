#!/usr/bin/env bash
# env.sh - print the sluice testbed's environment as shell `export` lines:
#     eval "$(deploy/testbed/env.sh [--release 22.05|24.11|26.05])"
# For a release in a root (24.11, 26.05) the paths are the host's view of the
# root's files, SLUICE_TB_CLUSTER_STORAGE_ROOT is the storage root as the
# jobs see it, and PATH starts with wrappers that run the release's own
# Slurm commands (squeue, sacct, scontrol, ...) inside the root.
# Run as root with the testbed up, it first renews the stored token
# ($SLUICE_TB_TOKEN_FILE) when it is missing or expires within 10 minutes.
#
#     deploy/testbed/env.sh --token [LIFESPAN]
# mints a fresh token for the job user (root only, slurmctld must run) and
# prints it raw on stdout; LIFESPAN in seconds (default 3600).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    echo "usage: env.sh [--token [LIFESPAN_SECONDS]]" >&2
    exit 64
}

case "${1:-}" in
    --token)
        lifespan=${2:-3600}
        [[ "$lifespan" =~ ^[0-9]+$ ]] || usage
        if [ "$(id -u)" -ne 0 ]; then
            tb_err "--token needs root (scontrol token username=... is for root/SlurmUser)"
            exit 77
        fi
        tb_mint_token "$lifespan" || exit 69
        exit 0
        ;;
    "") ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
esac

# Keep the stored token usable (quietly skipped when not root or slurmctld is down).
if [ "$(id -u)" -eq 0 ] && [ -d "$TB_KEYS" ] && ! tb_token_fresh; then
    lifespan=$(tb_setting TOKEN_LIFESPAN)
    if tb_pid slurmctld >/dev/null; then
        tb_write_token_file "${lifespan:-86400}" 2>/dev/null ||
            tb_warn "could not renew $TB_TOKEN_FILE"
    else
        tb_warn "testbed is not running (no slurmctld); $TB_TOKEN_FILE not renewed - start it with deploy/testbed/start.sh"
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
