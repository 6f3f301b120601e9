#!/bin/bash
# Batch script of sluice launch nvfl-client-site1-job43, attempt 1 (rendered once; do not edit).
# Steps: requeue guard, identity, peers, environment, secrets, setup and
# forward_env, component hosts, one srun step per pool, exit status per pool.
# See docs/rendering.md.
set -euo pipefail
set +x
umask 077
export PATH='/usr/local/bin:/usr/bin:/bin' LANG='C.UTF-8'
SLUICE_STAGING='/cluster/sluice/site-1/13520270/attempt-1'
SLUICE_PROFILE='apptainer'
SLUICE_STOP_ON_FAILURE=1
export HOME="$SLUICE_STAGING"
SLUICE_EXPORTED=()
sluice_die() {
    local code=$1
    shift
    printf 'sluice: %s\n' "$*" >&2
    exit "$code"
}
sluice_export() {
    export "$1=$2"
    SLUICE_EXPORTED+=("$1")
    if [ "$SLUICE_PROFILE" = apptainer ]; then export "APPTAINERENV_$1=$2"; fi
}

# 1. Requeue is off for this launch: a requeued job must not run twice.
if [ "${SLURM_RESTART_COUNT:-0}" != 0 ]; then
    sluice_die 96 "job was requeued (SLURM_RESTART_COUNT=$SLURM_RESTART_COUNT) but requeue is off for this launch; refusing to run twice"
fi

# 2. Identity of the launch.
sluice_export SLUICE_LAUNCH_ID 'nvfl-client-site1-job43'
sluice_export SLUICE_ATTEMPT '1'
sluice_export SLUICE_RUN_ID 'nvfl-client-site1-job43.1'
sluice_export NVFL_RUN_ID 'nvfl-client-site1-job43.1'
sluice_export SLUICE_STAGING "$SLUICE_STAGING"

# 6. Setup lines of the site and the study (trusted shell).
set +u
module load cuda
set -u
# apptainer takes its settings from sluice only: whatever setup left in
# APPTAINER_* / SINGULARITY_* (binds, options, variables) is dropped, and
# the container's variables are mirrored again from the exported ones.
for sluice_n in ${!APPTAINER_@} ${!APPTAINERENV_@} ${!SINGULARITY_@} ${!SINGULARITYENV_@}; do
    unset "$sluice_n"
done
for sluice_n in ${SLUICE_EXPORTED[@]+"${SLUICE_EXPORTED[@]}"}; do
    if [ -n "${!sluice_n+x}" ]; then export "APPTAINERENV_$sluice_n=${!sluice_n}"; fi
done

# 6b. forward_env: the values the job has now, after setup (unset names
# are skipped).
for sluice_n in 'CUDA_HOME'; do
    if [ -n "${!sluice_n+x}" ]; then sluice_export "$sluice_n" "${!sluice_n}"; fi
done

# 7. First host of every component, and its address.
# First host of a Slurm hostlist: scontrol when present, else pure bash
# ("node[03-05,9]" -> "node03").
sluice_first_host() {
    local l=$1 pre rest inner hs
    if [ -z "$l" ]; then return 0; fi
    if command -v scontrol >/dev/null 2>&1 && hs=$(scontrol show hostnames "$l" 2>/dev/null); then
        printf '%s\n' "${hs%%$'\n'*}"
        return 0
    fi
    pre=${l%%[[,]*}
    rest=${l:${#pre}}
    if [ "${rest:0:1}" != "[" ]; then
        printf '%s\n' "$pre"
        return 0
    fi
    inner=${rest:1}
    inner=${inner%%]*}
    inner=${inner%%,*}
    inner=${inner%%-*}
    printf '%s%s\n' "$pre" "$inner"
}
# A node's address as Slurm reaches it (NodeAddr; the name may not resolve
# on the other nodes): scontrol when present, else the name, which is what
# NodeAddr defaults to.
sluice_node_addr() {
    local rec w words
    if command -v scontrol >/dev/null 2>&1 && rec=$(scontrol show node -o "$1" 2>/dev/null); then
        read -r -a words <<<"$rec"
        for w in "${words[@]}"; do
            case $w in NodeAddr=?*) printf '%s\n' "${w#NodeAddr=}"; return 0 ;; esac
        done
    fi
    printf 'sluice: no NodeAddr known for %s; using its name\n' "$1" >&2
    printf '%s\n' "$1"
}
SLUICE_POOL_MAIN_HOST=$(sluice_first_host "${SLURM_JOB_NODELIST:-}")
if [ -z "$SLUICE_POOL_MAIN_HOST" ]; then
    sluice_die 99 "no host known for pool main"
fi
sluice_export SLUICE_POOL_MAIN_HOST "$SLUICE_POOL_MAIN_HOST"
sluice_export SLUICE_POOL_MAIN_ADDR "$(sluice_node_addr "$SLUICE_POOL_MAIN_HOST")"

# 8. One step per pool; each records its exit status in exit/<pool>.
mkdir -p -- "$SLUICE_STAGING/exit"
# The NVFlare workspace as the container sees it: private to this attempt.
mkdir -p -- "$SLUICE_STAGING/sandbox"
# A status as the shell reports one: 0-255 in decimal.
sluice_is_status() {
    case $1 in
    [0-9] | [1-9][0-9] | 1[0-9][0-9] | 2[0-4][0-9] | 25[0-5]) return 0 ;;
    esac
    return 1
}
# Run one pool's step; record its exit status in exit/<pool>.  TERM is
# passed on to srun, which stops the step's tasks (also one that came
# before srun was started).
sluice_step() {
    local pool=$1 rc=0 child= stop=0
    shift
    trap 'stop=1; if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null || true; fi' TERM
    "$@" &
    child=$!
    if [ "$stop" = 1 ]; then kill -TERM "$child" 2>/dev/null || true; fi
    wait "$child" || true
    while kill -0 "$child" 2>/dev/null; do
        wait "$child" || true
    done
    # a wait cut short by the trap says 143, not how srun ended: ask again
    wait "$child" || rc=$?
    # bash has answered that second wait with -1 (a status it no longer
    # held): only a status 0-255 is ever recorded, anything else is 255
    if ! sluice_is_status "$rc"; then
        printf 'sluice: pool %s: no exit status known (wait said %s); recorded as 255\n' \
            "$pool" "$rc" >&2
        rc=255
    fi
    printf '%s\n' "$rc" >"$SLUICE_STAGING/exit/$pool"
    return "$rc"
}
# Task wrapper, run on every node of a step: the task's Slurm and GPU
# variables into the container (apptainer); rank 0 runs the command, the
# other ranks the pool's additional_node_command.
SLUICE_TASK_SH='set -eu
mode=$1; shift
nk=$1; shift; cred=("${@:1:$nk}"); shift "$nk"
np=$1; shift; pre=("${@:1:$np}"); shift "$np"
nc=$1; shift; cmd=("${@:1:$nc}"); shift "$nc"
r=${SLURM_NODEID:-0}
export SLUICE_NODE_RANK="$r" NVFL_NODE_RANK="$r"
case $mode in *a*)
    export APPTAINERENV_SLUICE_NODE_RANK="$r" APPTAINERENV_NVFL_NODE_RANK="$r"
    for n in CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL ROCR_VISIBLE_DEVICES ZE_AFFINITY_MASK; do unset "APPTAINERENV_$n"; done
    for n in CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL ROCR_VISIBLE_DEVICES ZE_AFFINITY_MASK SLURMD_NODENAME ${!SLURM_@}; do
        if [ -n "${!n+x}" ]; then export "APPTAINERENV_$n=${!n}"; fi
    done ;;
esac
if [ "$r" != 0 ] && [ "$#" -gt 0 ]; then
    for n in ${cred[@]+"${cred[@]}"}; do unset "$n" "APPTAINERENV_$n"; done
    case $mode in *n*)
        export CLIENT_API_TYPE=CELL_API NVFLARE_CLIENT_API_BOOTSTRAP=client_api_bootstrap_1.json
        export APPTAINERENV_CLIENT_API_TYPE=CELL_API APPTAINERENV_NVFLARE_CLIENT_API_BOOTSTRAP=client_api_bootstrap_1.json ;;
    esac
    exec ${pre[@]+"${pre[@]}"} "$@"
fi
exec ${pre[@]+"${pre[@]}"} "${cmd[@]}"
'
SLUICE_POOLS=(main)
SLUICE_PIDS=()
sluice_signalled=0
trap 'sluice_signalled=1; { : >"$SLUICE_STAGING/exit/.signalled"; } 2>/dev/null || true; kill -TERM "${SLUICE_PIDS[@]}" 2>/dev/null || true' TERM INT

# pool main: component 0, 2 node(s), one task per node
(
    sluice_export SLUICE_POOL 'main'
    sluice_export SLUICE_NNODES '2'
    sluice_export NVFL_NNODES '2'
    sluice_export SLUICE_MASTER_ADDR "$SLUICE_POOL_MAIN_HOST"
    sluice_export NVFL_MASTER_ADDR "$SLUICE_POOL_MAIN_HOST"
    sluice_export SLUICE_MASTER_PORT '29534'
    sluice_export NVFL_MASTER_PORT '29534'
    sluice_step main srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=64 --kill-on-bad-exit=1 --wait=0 \
        bash -c "$SLUICE_TASK_SH" sluice-task 'an' '3' 'NVFLARE_JOB_AUTH_TOKEN' 'NVFLARE_JOB_TOKEN_SIGNATURE' 'NVFLARE_JOB_SSID' \
        '25' 'apptainer' 'exec' '--userns' '--containall' '--cleanenv' '--no-eval' '--no-privs' '--no-mount' 'bind-paths,hostfs' '--bind' '/cluster/sluice/site-1/13520270/attempt-1:/cluster/sluice/site-1/13520270/attempt-1' '--bind' '/cluster/sluice/site-1/13520270/attempt-1/sandbox:/lustre/proj123/nvflare/site-1:rw' '--bind' '/lustre/proj123/nvflare/site-1/job43:/lustre/proj123/nvflare/site-1/job43:rw' '--bind' '/lustre/proj123/nvflare/site-1/startup:/lustre/proj123/nvflare/site-1/startup:ro' '--bind' '/lustre/proj123/nvflare/site-1/local:/lustre/proj123/nvflare/site-1/local:ro' '--bind' '/etc/resolv.conf:/etc/resolv.conf:ro' '--pwd' '/lustre/proj123/nvflare/site-1/job43' '--nv' '/srv/images/nvflare-job.sif' \
        '10' '/usr/bin/python3' '-u' '-m' 'nvflare.private.fed.app.client.worker_process' '-m' '/lustre/proj123/nvflare/site-1' '-n' 'job43' '-p' 'tcp://nvflare-site1.internal:8102' \
        'python3' '-m' 'nvflare.app_opt.pt.torchrun_node' '--nproc-per-node=8' 'custom/client.py'
) &
SLUICE_PIDS+=("$!")

# 9. Wait; stop the other pools when one fails (unless keep_going); exit
# with the first failing code.
SLUICE_FIRST_RC=0
SLUICE_FIRST_POOL=
sluice_stopped=0
sluice_record_first() {
    SLUICE_FIRST_POOL=$1
    SLUICE_FIRST_RC=$2
    if [ "$sluice_signalled" = 0 ]; then
        printf '%s %s\n' "$1" "$2" >"$SLUICE_STAGING/exit/.first"
    fi
}
sluice_scan() {
    local p rc
    for p in "${SLUICE_POOLS[@]}"; do
        if [ -z "$SLUICE_FIRST_POOL" ] && [ -s "$SLUICE_STAGING/exit/$p" ]; then
            rc=$(<"$SLUICE_STAGING/exit/$p")
            sluice_is_status "$rc" || rc=255
            if [ "$rc" != 0 ]; then sluice_record_first "$p" "$rc"; fi
        fi
    done
}
sluice_alive() {
    local pid
    for pid in "${SLUICE_PIDS[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then return 0; fi
    done
    return 1
}
while sluice_alive; do
    wait -n 2>/dev/null || true
    sluice_scan
    if [ -n "$SLUICE_FIRST_POOL" ] && [ "$SLUICE_STOP_ON_FAILURE" = 1 ] &&
        [ "$sluice_stopped" = 0 ]; then
        sluice_stopped=1
        printf 'sluice: pool %s failed (exit %s); stopping the other pools\n' \
            "$SLUICE_FIRST_POOL" "$SLUICE_FIRST_RC" >&2
        kill -TERM "${SLUICE_PIDS[@]}" 2>/dev/null || true
    fi
done
wait || true
sluice_scan
for sluice_p in "${SLUICE_POOLS[@]}"; do
    if [ -z "$SLUICE_FIRST_POOL" ] && [ ! -s "$SLUICE_STAGING/exit/$sluice_p" ]; then
        printf '1\n' >"$SLUICE_STAGING/exit/$sluice_p"
        sluice_record_first "$sluice_p" 1
    fi
done
if [ "$SLUICE_FIRST_RC" != 0 ]; then
    printf 'sluice: pool %s failed with exit code %s\n' "$SLUICE_FIRST_POOL" "$SLUICE_FIRST_RC" >&2
    exit "$SLUICE_FIRST_RC"
fi
exit 0
