# shellcheck shell=bash disable=SC2034  # the variables are used by the scripts that source this
# lib.sh - definitions shared by the sluice Slurm testbed scripts (start.sh,
# stop.sh, status.sh, env.sh).  It is sourced, never run, and only defines
# variables and functions: nothing here starts or stops a process.
#
# Everything the testbed owns lives under one base directory, TB_DIR
# (SLUICE_TESTBED_DIR, default /var/tmp/sluice-testbed).  docs/testbed.md
# describes the layout, the ports and the knobs.

# A client-side SLURM_JWT in the caller's environment would make scontrol and
# sacctmgr authenticate with that token instead of munge; the scripts always
# talk to the daemons as root through munge, so drop it.
unset SLURM_JWT

TB_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ---------------------------------------------------------------- releases
# Which Slurm the testbed runs: 22.05 is the host's own packages (Debian 12);
# 24.11 (Debian trixie) and 26.05 (Debian forky) run in a debootstrap root
# under TB_ROOTS, made once and kept (deploy/testbed/root.sh).  Every script
# takes `--release R` (or `--release=R`) anywhere in its arguments, else
# SLUICE_TB_RELEASE, else 22.05; lib.sh removes the option from "$@".
TB_RELEASES=(22.05 24.11 26.05 26.11)
TB_RELEASE=${SLUICE_TB_RELEASE:-22.05}
_tb_args=()
while [ "$#" -gt 0 ]; do
    case "$1" in
        --release=*) TB_RELEASE=${1#--release=} ;;
        --release)
            if [ "$#" -lt 2 ]; then
                echo "testbed: --release needs a value (one of ${TB_RELEASES[*]})" >&2
                exit 64
            fi
            TB_RELEASE=$2
            shift ;;
        *) _tb_args+=("$1") ;;
    esac
    shift
done
set -- ${_tb_args[@]+"${_tb_args[@]}"}
unset _tb_args
# TB_FROM_SOURCE=1: no Debian release ships it yet; its root is forky with
# Slurm built from a checkout of SchedMD's repository (SLUICE_TB_SLURM_SRC,
# root.sh prepare), so it runs where that checkout exists, never in CI.
TB_FROM_SOURCE=0
case "$TB_RELEASE" in
    22.05) TB_SUITE=host   TB_API=v0.0.38 TB_PORT_BASE_DEFAULT=16810 TB_SLURM_PREFIX= ;;
    # trixie's Slurm with its client commands moved to /opt/slurm/bin, off
    # the default PATH, as many sites install it.
    24.11) TB_SUITE=trixie TB_API=v0.0.42 TB_PORT_BASE_DEFAULT=16830 TB_SLURM_PREFIX=/opt/slurm ;;
    26.05) TB_SUITE=forky  TB_API=v0.0.45 TB_PORT_BASE_DEFAULT=16850 TB_SLURM_PREFIX= ;;
    26.11) TB_SUITE=forky  TB_API=v0.0.46 TB_PORT_BASE_DEFAULT=16970 TB_FROM_SOURCE=1 TB_SLURM_PREFIX= ;;
    *)
        echo "testbed: unknown release '$TB_RELEASE' (one of ${TB_RELEASES[*]})" >&2
        exit 64 ;;
esac
export SLUICE_TB_RELEASE=$TB_RELEASE
# Where the Slurm client commands live in the testbed's world.
TB_SLURM_BIN=${TB_SLURM_PREFIX:+$TB_SLURM_PREFIX/bin}
TB_SLURM_BIN=${TB_SLURM_BIN:-/usr/bin}
# The root of a release's world as the host sees it: "" for the host's own
# release and for a script already running inside the root (chroot).
TB_ROOTS=${SLUICE_TB_ROOTS:-/var/tmp/sluice-roots}
TB_ROOTS=${TB_ROOTS%/}
if [ "$TB_SUITE" = host ]; then
    TB_ROOT=
    TB_X=
elif [ "${SLUICE_TB_IN_ROOT:-0}" = 1 ]; then
    TB_ROOT=/
    TB_X=
else
    TB_ROOT=$TB_ROOTS/$TB_RELEASE
    TB_X=$TB_ROOT
fi
# tb_in_root: this script runs on the host but the release lives in a root.
tb_in_root() { [ -n "$TB_X" ]; }

# ---------------------------------------------------------------- constants
TB_CLUSTER=sluicetb
TB_PARTITION=debug
TB_ACCOUNT=sluice
TB_SLURM_USER=slurm        # SlurmUser; created by Debian's slurm packages
TB_MUNGE_USER=munge        # created by Debian's munge package
TB_MYSQL_USER=mysql        # created by Debian's mariadb-server package
TB_JOB_USER=sluiceuser     # unprivileged user that submits the test jobs
TB_JOB_UID_WANTED=16810    # used when creating TB_JOB_USER, if that uid is free
TB_REST_USER=sluicerest    # unprivileged user slurmrestd runs as
# Two tenants (docs/tenants.md): each its own Unix user, with a fixed uid
# (the same on the host and in every root, when free) and its own Slurm
# account, so that fair share and accounting are per tenant.
TB_TENANTS=(a b)
declare -A TB_TENANT_USER=([a]=sluice-ta [b]=sluice-tb)
declare -A TB_TENANT_UID_WANTED=([a]=16811 [b]=16812)
declare -A TB_TENANT_ACCOUNT=([a]=tenant-a [b]=tenant-b)
TB_DB_NAME=slurm_acct_db
TB_DB_USER=slurm
TB_GRES_NAME=gpu
TB_SITE_FEATURE=sluicetb   # feature every node carries (a "site" constraint)

# Nodes and the GPU series each one stands for (no real GPUs: the feature and
# a counted, device-less gres are what the scheduler sees).
TB_NODES=(tb1 tb2 tb3)
declare -A TB_NODE_SERIES=([tb1]=a100 [tb2]=h100 [tb3]=h100)
TB_NODE_CPUS=4
TB_NODE_MEM_MB=8000
TB_NODE_GPUS=2
# Feature name for a GPU series: "gpu_<series>".
tb_series_feature() { printf 'gpu_%s' "$1"; }

# ---------------------------------------------------------------- paths
# Check SLUICE_TESTBED_DIR before anything uses it: it ends up in slurm.conf
# and in `rm -rf`, so only plain absolute paths are accepted.
tb_check_dir() {
    case "$TB_DIR" in
        /*) ;;
        *) echo "testbed: SLUICE_TESTBED_DIR must be an absolute path: '$TB_DIR'" >&2; return 1 ;;
    esac
    if [[ ! "$TB_DIR" =~ ^/[A-Za-z0-9._/-]+$ ]] || [[ "$TB_DIR" =~ (^|/)\.\.?(/|$) ]]; then
        echo "testbed: SLUICE_TESTBED_DIR may only hold [A-Za-z0-9._/-] and no . or .. parts: '$TB_DIR'" >&2
        return 1
    fi
    if [[ ! "$TB_ROOTS" =~ ^/[A-Za-z0-9._/-]+$ ]] || [[ "$TB_ROOTS" =~ (^|/)\.\.?(/|$) ]]; then
        echo "testbed: SLUICE_TB_ROOTS must be an absolute path of [A-Za-z0-9._/-] and no . or .. parts: '$TB_ROOTS'" >&2
        return 1
    fi
    # The REST Unix socket path must fit in sun_path (108 bytes with the NUL).
    if [ "${#TB_DIR}" -gt 70 ]; then
        echo "testbed: SLUICE_TESTBED_DIR is too long for Unix socket paths (max 70 chars): '$TB_DIR'" >&2
        return 1
    fi
}

# TB_IN_DIR is the base directory inside the release's world; TB_DIR the same
# directory as this script sees it (TB_X + TB_IN_DIR).  SLUICE_TESTBED_DIR
# may name either (env.sh prints the host's view).
TB_IN_DIR=${SLUICE_TESTBED_DIR:-/var/tmp/sluice-testbed}
TB_IN_DIR=${TB_IN_DIR%/}
# A host path into any release's root (e.g. left in the environment by
# env.sh of another release) names the directory inside that root.
if [[ "$TB_IN_DIR" =~ ^$TB_ROOTS/[0-9][0-9]\.[0-9][0-9](/.*)$ ]]; then
    TB_IN_DIR=${BASH_REMATCH[1]}
fi
[ -n "$TB_IN_DIR" ] || TB_IN_DIR=/   # caught by tb_check_dir below
TB_DIR=$TB_X$TB_IN_DIR
tb_check_dir || exit 78

TB_MARKER=$TB_DIR/.sluice-testbed   # proves a directory is ours before --purge
TB_ETC=$TB_DIR/etc
TB_KEYS=$TB_DIR/keys
TB_RUN=$TB_DIR/run
TB_LOG=$TB_DIR/log
TB_STATE=$TB_DIR/state
TB_SPOOL=$TB_DIR/spool
TB_MYSQL_DATA=$TB_DIR/mysql
TB_STORAGE=$TB_DIR/storage
TB_DEV=$TB_DIR/dev                  # stand-in GPU device files

TB_SLURM_CONF=$TB_ETC/slurm.conf
TB_SLURMDBD_CONF=$TB_ETC/slurmdbd.conf
TB_GRES_CONF=$TB_ETC/gres.conf
TB_MY_CNF=$TB_ETC/my.cnf
TB_SETTINGS=$TB_ETC/testbed.settings   # knob values the running testbed was started with

TB_MUNGE_KEY=$TB_KEYS/munge.key
TB_JWT_KEY=$TB_KEYS/jwt_hs256.key
TB_DB_PASS_FILE=$TB_KEYS/mariadb-slurm.pass
TB_TOKEN_FILE=$TB_KEYS/$TB_JOB_USER.jwt
# One token file a tenant user, and one of SlurmUser for the proxy identity
# (X-SLURM-USER-NAME); all root 0600 like TB_TOKEN_FILE.
tb_token_file_of() { printf '%s/%s.jwt' "$TB_KEYS" "$1"; }   # tb_token_file_of USER
TB_SLURMUSER_TOKEN_FILE=$(tb_token_file_of "$TB_SLURM_USER")
# Every stored token: "USER FILE" a line.
tb_token_files() {
    local t
    printf '%s %s\n' "$TB_JOB_USER" "$TB_TOKEN_FILE"
    for t in "${TB_TENANTS[@]}"; do
        printf '%s %s\n' "${TB_TENANT_USER[$t]}" "$(tb_token_file_of "${TB_TENANT_USER[$t]}")"
    done
    printf '%s %s\n' "$TB_SLURM_USER" "$TB_SLURMUSER_TOKEN_FILE"
}

TB_MUNGE_SOCKET=$TB_RUN/munge/munge.socket
TB_MYSQL_SOCKET=$TB_RUN/mysql/mariadbd.sock
TB_REST_SOCKET=$TB_RUN/rest/slurmrestd.sock

# ---------------------------------------------------------------- ports
# One block of ports, by default 16810-16820 (SLUICE_TB_PORT_BASE moves the
# whole block).  The value a testbed was started with is recorded in
# TB_SETTINGS, so later calls of env.sh/status.sh find the same ports.
tb_setting() {   # tb_setting KEY -> recorded value, or nothing
    [ -r "$TB_SETTINGS" ] || return 0
    sed -n "s/^$1=\([0-9A-Za-z_.,-]*\)\$/\1/p" "$TB_SETTINGS" | tail -n 1
}
TB_PORT_BASE_RECORDED=$(tb_setting PORT_BASE)
TB_PORT_BASE=${SLUICE_TB_PORT_BASE:-${TB_PORT_BASE_RECORDED:-$TB_PORT_BASE_DEFAULT}}
if [[ ! "$TB_PORT_BASE" =~ ^[0-9]+$ ]] || [ "$TB_PORT_BASE" -lt 1024 ] || [ "$TB_PORT_BASE" -gt 65000 ]; then
    echo "testbed: SLUICE_TB_PORT_BASE must be a number in 1024..65000: '$TB_PORT_BASE'" >&2
    exit 78
fi
TB_PORT_MARIADB=$((TB_PORT_BASE + 0))
TB_PORT_SLURMDBD=$((TB_PORT_BASE + 1))
TB_PORT_SLURMCTLD=$((TB_PORT_BASE + 2))
declare -A TB_PORT_SLURMD=([tb1]=$((TB_PORT_BASE + 3)) [tb2]=$((TB_PORT_BASE + 4)) [tb3]=$((TB_PORT_BASE + 5)))
TB_PORT_REST=$((TB_PORT_BASE + 10))
TB_REST_URL=http://127.0.0.1:$TB_PORT_REST

# ---------------------------------------------------------------- daemons
# The daemon table: name, pid file, expected process name (prefix of
# /proc/<pid>/comm or of the executable's base name), log file.  Start order
# is table order; stop.sh walks it backwards.
TB_DAEMONS=(munged mariadbd slurmdbd slurmctld)
for _n in "${TB_NODES[@]}"; do TB_DAEMONS+=("slurmd-$_n"); done
TB_DAEMONS+=(slurmrestd)
unset _n

tb_pidfile() {
    case "$1" in
        munged) echo "$TB_RUN/munge/munged.pid" ;;
        mariadbd) echo "$TB_RUN/mysql/mariadbd.pid" ;;
        slurmdbd) echo "$TB_RUN/slurm/slurmdbd.pid" ;;
        slurmctld) echo "$TB_RUN/slurm/slurmctld.pid" ;;
        slurmd-*) echo "$TB_RUN/slurmd-${1#slurmd-}.pid" ;;   # SlurmdPidFile=.../slurmd-%n.pid
        slurmrestd) echo "$TB_RUN/rest/slurmrestd.pid" ;;
        *) return 1 ;;
    esac
}
tb_logfile() {
    case "$1" in
        munged | mariadbd | slurmdbd | slurmctld | slurmd-* | slurmrestd) echo "$TB_LOG/$1.log" ;;
        *) return 1 ;;
    esac
}
tb_procname() {
    case "$1" in
        slurmd-*) echo slurmd ;;
        *) echo "$1" ;;
    esac
}

# tb_pid NAME: print the daemon's pid and succeed if its pid file names a live
# process that really is that daemon (a stale pid file, a zombie, or a pid
# reused by another program counts as not running).  Builtins only: this runs
# in every wait loop.
tb_pid() {
    local pidfile pid want comm exe state _x
    pidfile=$(tb_pidfile "$1") || return 1
    [ -r "$pidfile" ] || return 1
    read -r pid 2>/dev/null <"$pidfile" || [ -n "${pid:-}" ] || return 1
    [[ "$pid" =~ ^[0-9]+$ ]] && [ "$pid" -gt 1 ] || return 1
    # /proc/<pid>/stat: "<pid> (<comm>) <state> ..."; Z = exited, not reaped.
    read -r _x comm state _x 2>/dev/null <"/proc/$pid/stat" || return 1
    [ "$state" != Z ] && [ "$state" != X ] || return 1
    comm=${comm#(}
    comm=${comm%)}
    # Debian installs e.g. /usr/sbin/slurmctld as an alternative for
    # slurmctld-wlm: accept both names.
    want=$(tb_procname "$1")
    case "$comm" in "$want" | "$want-wlm") echo "$pid"; return 0 ;; esac
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
    case "${exe##*/}" in "$want" | "$want-wlm") echo "$pid"; return 0 ;; esac
    return 1
}

# ---------------------------------------------------------------- helpers
tb_say() { printf 'testbed: %s\n' "$*"; }
tb_warn() { printf 'testbed: warning: %s\n' "$*" >&2; }
tb_err() { printf 'testbed: error: %s\n' "$*" >&2; }

# Time in microseconds (bash 5 EPOCHREALTIME, no subprocess).
tb_now() { local t=${EPOCHREALTIME/[.,]/}; echo "$((10#$t))"; }
tb_elapsed() {   # tb_elapsed START_US: seconds since START_US, one decimal
    local d=$(( $(tb_now) - $1 ))
    printf '%d.%d' $((d / 1000000)) $((d % 1000000 / 100000))
}

# tb_show_log FILE [LINES]: print the tail of a log file to stderr.
tb_show_log() {
    local f=$1 n=${2:-20}
    if [ -r "$f" ]; then
        printf -- '----- last %s lines of %s -----\n' "$n" "$f" >&2
        tail -n "$n" "$f" >&2 || true
        printf -- '----- end of %s -----\n' "$f" >&2
    else
        printf 'testbed: (log file %s does not exist)\n' "$f" >&2
    fi
}

# tb_wait SECONDS CMD...: run CMD every 0.25 s until it succeeds or SECONDS
# have passed.  Returns CMD's success.
tb_wait() {
    local deadline=$(( $(tb_now) + $1 * 1000000 ))
    shift
    while :; do
        if "$@"; then return 0; fi
        [ "$(tb_now)" -lt "$deadline" ] || return 1
        sleep 0.25
    done
}

# tb_jwt_exp FILE: print the "exp" claim of the JWT in FILE (0 if unreadable).
tb_jwt_exp() {
    local payload
    payload=$(cut -d. -f2 <"$1" 2>/dev/null | tr '_-' '/+' | tr -d '\n') || { echo 0; return; }
    while [ $(( ${#payload} % 4 )) -ne 0 ]; do payload="$payload="; done
    printf '%s' "$payload" | base64 -d 2>/dev/null | jq -r '.exp // 0' 2>/dev/null || echo 0
}

# tb_slurm [-t SECONDS] CMD ARGS...: run a Slurm client command of the
# testbed's release against the testbed (inside its root when it has one; as
# root), killed after SECONDS when -t is given.
tb_slurm() {
    local t=()
    if [ "$1" = -t ]; then
        t=(timeout "$2")
        shift 2
    fi
    if tb_in_root; then
        "${t[@]}" chroot "$TB_ROOT" /usr/bin/env PATH="$TB_SLURM_BIN:/usr/sbin:/usr/bin:/sbin:/bin" \
            SLURM_CONF="$TB_IN_DIR/etc/slurm.conf" "$@"
    else
        PATH="$TB_SLURM_BIN:$PATH" SLURM_CONF=$TB_SLURM_CONF "${t[@]}" "$@"
    fi
}

# tb_enter CMD ARGS...: run CMD (a path or a name on PATH inside the root)
# in the release's root, entered the way Apptainer needs: a private mount
# namespace whose root is the release's root through pivot_root, not chroot
# (apptainer refuses a chroot: "Running inside a weak chrooted environment").
# Inside: the root itself (bound onto itself, so it is a mount point), a new
# /proc, the host's /dev (recursive: pts, shm, mqueue) and /sys, and the
# host's /tmp, where the host's tests keep the scripts and work directories
# the jobs must see.  The testbed's state, storage root and the e2e suites'
# mount sources live in the root's own /var/tmp, part of the root.  The
# network and pid namespaces stay the host's (ports, pid files and `kill`
# work as before).  Every call makes a new namespace, each seeing the same
# files; processes started in it (the daemons, and the jobs they start) keep
# it.  For the host's own release it just runs CMD.
tb_enter() {
    if ! tb_in_root; then
        "$@"
        return
    fi
    # shellcheck disable=SC2016 # expanded by that sh, from its arguments
    unshare --mount --propagation private -- /bin/sh -euc '
        r=$1
        shift
        mount --bind "$r" "$r"
        cd "$r"
        mount -t proc proc proc
        mount --rbind /dev dev
        mount --rbind /sys sys
        mount --bind /tmp tmp
        pivot_root . .oldroot
        cd /
        umount -l /.oldroot
        exec "$@"' tb-enter "$TB_ROOT" "$@"
}

# tb_mint_token LIFESPAN [USER]: print a fresh token for USER (default
# TB_JOB_USER); needs root and a running slurmctld (`scontrol token` prints
# "SLURM_JWT=<token>").
tb_mint_token() {
    local out user=${2:-$TB_JOB_USER}
    out=$(tb_slurm scontrol token "username=$user" "lifespan=$1" 2>&1) || {
        tb_err "scontrol token username=$user failed: $out"
        return 1
    }
    case "$out" in
        SLURM_JWT=?*) printf '%s\n' "${out#SLURM_JWT=}" ;;
        *) tb_err "unexpected scontrol token output for $user (not shown: it may hold a token)"; return 1 ;;
    esac
}

# tb_write_token_file LIFESPAN [USER FILE]: mint a token for USER (default
# TB_JOB_USER) and store it, raw (no newline, no "SLURM_JWT=" prefix), in
# FILE (default TB_TOKEN_FILE), mode 0600, owner root.
tb_write_token_file() {
    local token tmp user=${2:-$TB_JOB_USER} file=${3:-$TB_TOKEN_FILE}
    token=$(tb_mint_token "$1" "$user") || return 1
    tmp=$(mktemp "$TB_KEYS/.token.XXXXXX")
    chmod 0600 "$tmp"
    printf '%s' "$token" >"$tmp"
    mv -f "$tmp" "$file"
}

# tb_token_fresh [FILE]: succeed if FILE (default TB_TOKEN_FILE) holds a
# token valid for 10 more minutes.
tb_token_fresh() {
    local exp file=${1:-$TB_TOKEN_FILE}
    [ -s "$file" ] || return 1
    exp=$(tb_jwt_exp "$file")
    [[ "$exp" =~ ^[0-9]+$ ]] || return 1
    [ "$exp" -gt $(( $(date +%s) + 600 )) ]
}

# tb_renew_tokens LIFESPAN: mint every stored token (tb_token_files) that is
# missing or expires within 10 minutes; prints the users renewed.
tb_renew_tokens() {
    local user file
    while read -r user file; do
        tb_token_fresh "$file" && continue
        tb_write_token_file "$1" "$user" "$file" || return 1
        printf '%s ' "$user"
    done < <(tb_token_files)
}

# tb_rest PATH [curl args...]: authenticated GET over TCP; prints the body,
# fails on a non-2xx status.
tb_rest_tcp() {
    local path=$1
    shift
    curl -sS -f --max-time 10 --noproxy '*' \
        -H "X-SLURM-USER-NAME: $TB_JOB_USER" -H "X-SLURM-USER-TOKEN: $(cat "$TB_TOKEN_FILE")" \
        "$@" "$TB_REST_URL$path"
}
tb_rest_unix() {
    local path=$1
    shift
    curl -sS -f --max-time 10 --unix-socket "$TB_REST_SOCKET" \
        -H "X-SLURM-USER-NAME: $TB_JOB_USER" -H "X-SLURM-USER-TOKEN: $(cat "$TB_TOKEN_FILE")" \
        "$@" "http://localhost$path"
}
