#!/usr/bin/env bash
# start.sh - bring up sluice's local Slurm testbed on loopback and wait until
# it is ready: munged, MariaDB, slurmdbd, slurmctld, three slurmd and
# slurmrestd (TCP and Unix socket), all with state under one directory.
#
# Idempotent: daemons that already run (checked through their pid files) are
# left alone, missing ones are started, and the readiness checks run every
# time.  Prints the start-to-ready time and the environment (as env.sh does).
#
# Usage: deploy/testbed/start.sh [--release 22.05|24.11|26.05]   (as root)
#   22.05 (default) runs the host's Debian 12 packages; 24.11 and 26.05 run
#   Debian trixie's / forky's Slurm in a debootstrap root that is made once
#   and kept (deploy/testbed/root.sh), on their own port blocks.
# Knobs (environment; see docs/testbed.md):
#   SLUICE_TB_RELEASE         release, as --release     (22.05)
#   SLUICE_TESTBED_DIR        base directory            (/var/tmp/sluice-testbed,
#                             inside the root for 24.11 and 26.05)
#   SLUICE_TB_PORT_BASE       first port of the block   (16810; 16830 for
#                             24.11, 16850 for 26.05)
#   SLUICE_TB_ACCOUNTING      yes|no: load slurmrestd's slurmdbd plugin (yes;
#                             no gives a slurmrestd that serves no /slurmdb/)
#   SLUICE_TB_MIN_JOB_AGE     slurm.conf MinJobAge      (300)
#   SLUICE_TB_SLURMD_TIMEOUT  slurm.conf SlurmdTimeout  (300)
#   SLUICE_TB_BF_INTERVAL     backfill interval seconds (1)
#   SLUICE_TB_TOKEN_LIFESPAN  lifespan of the stored token, seconds (86400)
#   SLUICE_TB_WAIT            seconds to wait for each daemon (60)
#   SLUICE_TB_DEBUG           Slurm daemons' debug level (info)
#   SLUICE_TB_NO_INADDR_ANY   yes|no: CommunicationParameters=NoInAddrAny,
#                             NoCtldInAddrAny (default yes; needs the host
#                             name to resolve to a 127.0.0.0/8 address)
#   SLUICE_TB_FIX_HOSTS       1: if the host name does not resolve to
#                             127.0.0.0/8, add "127.0.1.1 <host>" to /etc/hosts
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T0=$(tb_now)

MIN_JOB_AGE=${SLUICE_TB_MIN_JOB_AGE:-300}
SLURMD_TIMEOUT=${SLUICE_TB_SLURMD_TIMEOUT:-300}
BF_INTERVAL=${SLUICE_TB_BF_INTERVAL:-1}
TOKEN_LIFESPAN=${SLUICE_TB_TOKEN_LIFESPAN:-86400}
WAIT=${SLUICE_TB_WAIT:-60}
DEBUG_LEVEL=${SLUICE_TB_DEBUG:-info}
NO_INADDR_ANY=${SLUICE_TB_NO_INADDR_ANY:-yes}
REST_ACCOUNTING=${SLUICE_TB_ACCOUNTING:-yes}
case "$REST_ACCOUNTING" in
    yes | no) ;;
    *) tb_err "SLUICE_TB_ACCOUNTING must be yes or no: '$REST_ACCOUNTING'"; exit 78 ;;
esac

for v in MIN_JOB_AGE SLURMD_TIMEOUT BF_INTERVAL TOKEN_LIFESPAN WAIT; do
    if [[ ! "${!v}" =~ ^[0-9]+$ ]]; then
        tb_err "SLUICE_TB_$v must be a non-negative integer, got '${!v}'"
        exit 78
    fi
done
case "$DEBUG_LEVEL" in
    quiet | fatal | error | info | verbose | debug | debug2 | debug3 | debug4 | debug5) ;;
    *) tb_err "SLUICE_TB_DEBUG must be a Slurm debug level (info, debug, ...): '$DEBUG_LEVEL'"; exit 78 ;;
esac

# Every command below (and every daemon started from here) reads our config.
export SLURM_CONF=$TB_SLURM_CONF

# fail DAEMON MESSAGE: report a daemon that did not come up, with its log.
fail() {
    local daemon=$1 log
    shift
    log=$(tb_logfile "$daemon" 2>/dev/null || echo "$TB_LOG")
    tb_err "$daemon: $* (after $(tb_elapsed "$T0") s)"
    tb_err "$daemon log: $log"
    tb_show_log "$log" 20
    exit 1
}

phase_t=$T0
phase_done() {   # phase_done TEXT: print TEXT with the time this phase took
    tb_say "$1 ($(tb_elapsed "$phase_t") s)"
    phase_t=$(tb_now)
}

# ================================================================ preflight
preflight() {
    if [ "$(id -u)" -ne 0 ]; then
        tb_err "start.sh must run as root (it creates users and starts daemons that switch users)"
        exit 77
    fi
    local missing=() c
    for c in munged munge unmunge mariadbd mariadb mariadb-install-db slurmdbd slurmctld slurmd \
        slurmrestd sacctmgr scontrol sinfo curl jq start-stop-daemon runuser useradd getent; do
        command -v "$c" >/dev/null 2>&1 || missing+=("$c")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        tb_err "missing programs: ${missing[*]} (install them with deploy/install-deps.sh)"
        exit 69
    fi
    local plug plugins=(auth_jwt.so rest_auth_jwt.so accounting_storage_mysql.so)
    if [ "$TB_RELEASE" = 22.05 ]; then
        plugins+=(openapi_v0_0_38.so openapi_dbv0_0_38.so)
    else
        plugins+=(openapi_slurmctld.so openapi_slurmdbd.so)
    fi
    for plug in "${plugins[@]}"; do
        if ! compgen -G "/usr/lib/*/slurm-wlm/$plug" >/dev/null && ! compgen -G "/usr/lib/slurm-wlm/$plug" >/dev/null; then
            tb_err "Slurm plugin $plug not found (packages slurm-wlm-jwt-plugin, slurm-wlm-mysql-plugin, slurmrestd; see deploy/install-deps.sh)"
            exit 69
        fi
    done
    local u
    for u in "$TB_SLURM_USER" "$TB_MUNGE_USER" "$TB_MYSQL_USER"; do
        if ! getent passwd "$u" >/dev/null; then
            tb_err "system user '$u' is missing (it is created by the Debian packages; see deploy/install-deps.sh)"
            exit 69
        fi
    done

    # Ports may only be changed while the testbed is stopped.
    if [ -n "$TB_PORT_BASE_RECORDED" ] && [ "$TB_PORT_BASE_RECORDED" != "$TB_PORT_BASE" ]; then
        local d
        for d in "${TB_DAEMONS[@]}"; do
            if tb_pid "$d" >/dev/null; then
                tb_err "the running testbed uses SLUICE_TB_PORT_BASE=$TB_PORT_BASE_RECORDED; stop it (deploy/testbed/stop.sh) before changing it to $TB_PORT_BASE"
                exit 78
            fi
        done
    fi

    check_host_name
}

# NoInAddrAny / NoCtldInAddrAny make slurmctld, slurmd, slurmdbd and the
# clients (srun, slurmstepd) bind to the address gethostname() resolves
# to, not to NodeAddr.  srun also advertises that address to the job
# steps.  So the host name must resolve to a loopback address, or some
# traffic would go to the machine's own non-loopback address.
check_host_name() {
    local host_full host_addr
    host_full=$(uname -n)             # what gethostname() returns
    HOST_SHORT=${host_full%%.*}       # NodeHostname (as `hostname -s`)
    host_addr=$(getent ahostsv4 "$host_full" 2>/dev/null | awk 'NR == 1 { print $1 }')
    case "$host_addr" in
        127.*) ;;
        *)
            if [ "${SLUICE_TB_FIX_HOSTS:-0}" = 1 ]; then
                tb_say "host name '$host_full' resolves to '${host_addr:-nothing}': adding '127.0.1.1 $host_full $HOST_SHORT' to /etc/hosts (SLUICE_TB_FIX_HOSTS=1)"
                printf '127.0.1.1\t%s %s\t# added by sluice deploy/testbed/start.sh\n' "$host_full" "$HOST_SHORT" >>/etc/hosts
                host_addr=$(getent ahostsv4 "$host_full" 2>/dev/null | awk 'NR == 1 { print $1 }')
            fi ;;
    esac
    case "$NO_INADDR_ANY:$host_addr" in
        yes:127.*) COMM_PARAMS=NoInAddrAny,NoCtldInAddrAny ;;
        yes:*)
            tb_err "host name '$host_full' resolves to '${host_addr:-nothing}', not to 127.0.0.0/8."
            tb_err "The Slurm daemons bind to that address and srun advertises it, so the testbed would not stay on loopback."
            tb_err "Fix: add '127.0.1.1 $host_full $HOST_SHORT' to /etc/hosts (or run start.sh with SLUICE_TB_FIX_HOSTS=1 to have it added)."
            exit 78 ;;
        no:*)
            COMM_PARAMS=
            tb_warn "SLUICE_TB_NO_INADDR_ANY=no: slurmctld, slurmd and slurmdbd listen on 0.0.0.0" ;;
        *) tb_err "SLUICE_TB_NO_INADDR_ANY must be yes or no: '$NO_INADDR_ANY'"; exit 78 ;;
    esac
}

# ================================================================ users, dirs, keys
# ensure_user NAME WANTED_UID INNER_ID COMMENT: create the unprivileged user
# NAME (home directory, bash) unless it exists.  Inside a root INNER_ID is
# "uid:gid" of the host's user of that name, so that both sides own the
# shared storage alike; on the host the uid and gid are WANTED_UID when both
# are free, else any.
ensure_user() {
    local name=$1 wanted=$2 inner=$3 comment=$4 uidopt=()
    getent passwd "$name" >/dev/null && return 0
    if [ -n "$inner" ]; then
        getent group "${inner#*:}" >/dev/null || groupadd --gid "${inner#*:}" "$name"
        uidopt=(--uid "${inner%%:*}" --gid "${inner#*:}")
    elif ! getent passwd "$wanted" >/dev/null && ! getent group "$wanted" >/dev/null; then
        groupadd --gid "$wanted" "$name"
        uidopt=(--uid "$wanted" --gid "$wanted")
    else
        uidopt=(--user-group)
    fi
    useradd "${uidopt[@]}" --create-home --shell /bin/bash --comment "$comment" "$name"
    tb_say "created user $name (uid $(id -u "$name"))"
}

# inner_id NAME: the "uid:gid" the host gave NAME, as passed into a root
# (SLUICE_TB_JOB_UID/GID, SLUICE_TB_TENANT_IDS "name:uid:gid ..."), or "".
inner_id() {
    local e
    if [ "$1" = "$TB_JOB_USER" ]; then
        [ -n "${SLUICE_TB_JOB_UID:-}" ] && echo "$SLUICE_TB_JOB_UID:${SLUICE_TB_JOB_GID:-}"
        return 0
    fi
    for e in ${SLUICE_TB_TENANT_IDS:-}; do
        [ "${e%%:*}" = "$1" ] && echo "${e#*:}"
    done
    return 0
}

ensure_users() {
    local t u
    ensure_user "$TB_JOB_USER" "$TB_JOB_UID_WANTED" "$(inner_id "$TB_JOB_USER")" "sluice testbed job user"
    for t in "${TB_TENANTS[@]}"; do
        u=${TB_TENANT_USER[$t]}
        ensure_user "$u" "${TB_TENANT_UID_WANTED[$t]}" "$(inner_id "$u")" "sluice testbed tenant $t"
    done
    if ! getent passwd "$TB_REST_USER" >/dev/null; then
        useradd --system --user-group --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin --comment "sluice testbed slurmrestd" "$TB_REST_USER"
        tb_say "created user $TB_REST_USER (uid $(id -u "$TB_REST_USER"))"
    fi
}

# dirs_as OWNER GROUP MODE DIR...: create the directories (or fix existing
# ones) with that owner and mode, in one process.
dirs_as() {
    local o=$1 g=$2 m=$3
    shift 3
    install -d -o "$o" -g "$g" -m "$m" "$@"
}

# touch_as FILE OWNER:GROUP MODE: create a (log) file the daemon can append
# to; an existing file is left as it is.
touch_as() {
    [ ! -e "$1" ] || return 0
    install -o "${2%%:*}" -g "${2##*:}" -m "$3" /dev/null "$1"
}

ensure_dirs() {
    local job_group n spools=()
    job_group=$(id -gn "$TB_JOB_USER")
    for n in "${TB_NODES[@]}"; do spools+=("$TB_SPOOL/$n"); done
    # root-owned log directory: munged refuses a log file in a directory
    # owned by anyone but root or munge.  (slurmctld and slurmdbd then log a
    # harmless "chdir(<log dir>): Permission denied" and use /var/tmp.)
    dirs_as root root 0755 "$TB_DIR" "$TB_ETC" "$TB_KEYS" "$TB_RUN" "$TB_LOG" \
        "$TB_STATE" "$TB_SPOOL" "${spools[@]}" "$TB_DEV"
    [ -e "$TB_MARKER" ] || echo "sluice Slurm testbed base directory (deploy/testbed)" >"$TB_MARKER"
    dirs_as "$TB_MUNGE_USER" "$TB_MUNGE_USER" 0755 "$TB_RUN/munge"
    dirs_as "$TB_MUNGE_USER" "$TB_MUNGE_USER" 0700 "$TB_STATE/munge"
    dirs_as "$TB_MYSQL_USER" "$TB_MYSQL_USER" 0755 "$TB_RUN/mysql"
    dirs_as "$TB_MYSQL_USER" "$TB_MYSQL_USER" 0700 "$TB_MYSQL_DATA"
    dirs_as "$TB_SLURM_USER" "$TB_SLURM_USER" 0755 "$TB_RUN/slurm"
    dirs_as "$TB_SLURM_USER" "$TB_SLURM_USER" 0700 "$TB_STATE/slurmctld"
    # Only root, slurmrestd's user and the job user's group reach the REST socket.
    dirs_as "$TB_REST_USER" "$job_group" 0750 "$TB_RUN/rest"
    # Shared storage: job output lands here.
    dirs_as "$TB_JOB_USER" "$job_group" 0775 "$TB_STORAGE"

    for n in "${TB_NODES[@]}"; do touch_as "$(tb_logfile "slurmd-$n")" root:root 0640; done
    touch_as "$(tb_logfile munged)" "$TB_MUNGE_USER:$TB_MUNGE_USER" 0640
    touch_as "$(tb_logfile mariadbd)" "$TB_MYSQL_USER:$TB_MYSQL_USER" 0640
    touch_as "$(tb_logfile slurmdbd)" "$TB_SLURM_USER:$TB_SLURM_USER" 0640
    touch_as "$(tb_logfile slurmctld)" "$TB_SLURM_USER:$TB_SLURM_USER" 0640
    touch_as "$(tb_logfile slurmrestd)" "$TB_REST_USER:$TB_REST_USER" 0640
    ensure_fake_gpus
}

# Stand-in GPU device files for gres.conf: character devices 1,3 (what
# /dev/null is).  slurmd only stats them; nothing in a job binds them.  Where
# mknod is not allowed, plain files still let slurmd count the GPUs (it then
# logs "is not a valid character or block device" at every start).
ensure_fake_gpus() {
    local n i f
    for n in "${TB_NODES[@]}"; do
        for ((i = 0; i < TB_NODE_GPUS; i++)); do
            f=$TB_DEV/$n-gpu$i
            [ -e "$f" ] && continue
            if ! mknod -m 0666 "$f" c 1 3 2>/dev/null; then
                tb_warn "mknod $f failed; using a plain file as stand-in GPU"
                : >"$f"
            fi
        done
    done
}

# new_secret_file FILE OWNER BYTES: BYTES random bytes, mode 0600 (kept if
# present and at least BYTES long: an HS256 key needs 32, RFC 7518 3.2).
new_secret_file() {
    if [ ! -s "$1" ] || [ "$(stat -c %s "$1")" -lt "$3" ]; then
        (umask 077 && head -c "$3" /dev/urandom >"$1.tmp" && mv -f "$1.tmp" "$1")
    fi
    chown "$2:$2" "$1"
    chmod 0600 "$1"
}

ensure_keys() {
    new_secret_file "$TB_MUNGE_KEY" "$TB_MUNGE_USER" 1024    # own munge domain
    new_secret_file "$TB_JWT_KEY" "$TB_SLURM_USER" 32        # HS256 key for auth/jwt
    if [ ! -s "$TB_DB_PASS_FILE" ]; then
        (umask 077 && od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$TB_DB_PASS_FILE")
    fi
    chown root:root "$TB_DB_PASS_FILE"
    chmod 0600 "$TB_DB_PASS_FILE"
}

# ================================================================ configs
# install_file SRC DEST OWNER MODE: move a generated file into place if it
# differs; succeeds (0) when DEST changed.
install_file() {
    local changed=1
    if [ ! -f "$2" ] || ! cmp -s "$1" "$2"; then
        mv -f "$1" "$2"
        changed=0
    else
        rm -f "$1"
    fi
    chown "$3" "$2"
    chmod "$4" "$2"
    return $changed
}

gen_slurm_conf() {
    local n series feature
    cat <<EOF
# slurm.conf for the sluice testbed - generated by deploy/testbed/start.sh;
# edits are overwritten on the next start.  See docs/testbed.md.
ClusterName=$TB_CLUSTER
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$TB_PORT_SLURMCTLD
SlurmUser=$TB_SLURM_USER
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$TB_MUNGE_SOCKET
CredType=cred/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$TB_JWT_KEY
${COMM_PARAMS:+CommunicationParameters=$COMM_PARAMS}
SlurmdParameters=config_overrides

StateSaveLocation=$TB_STATE/slurmctld
SlurmdSpoolDir=$TB_SPOOL/%n
SlurmctldPidFile=$(tb_pidfile slurmctld)
SlurmdPidFile=$TB_RUN/slurmd-%n.pid
SlurmctldLogFile=$(tb_logfile slurmctld)
SlurmdLogFile=$TB_LOG/slurmd-%n.log
SlurmctldDebug=$DEBUG_LEVEL
SlurmdDebug=$DEBUG_LEVEL

SchedulerType=sched/backfill
SchedulerParameters=bf_interval=$BF_INTERVAL
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=$MIN_JOB_AGE
# Room for the 10,000-job poll benchmark next to the other tests' jobs.
MaxJobCount=50000
SlurmdTimeout=$SLURMD_TIMEOUT
MailProg=/bin/true

AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$TB_PORT_SLURMDBD
# Messages to slurmdbd are signed through the munge socket named here, not
# through AuthInfo (Slurm 22.05: _global_auth_key() in slurm_protocol_api.c).
AccountingStoragePass=socket=$TB_MUNGE_SOCKET
AccountingStoreFlags=job_comment
AccountingStorageTRES=gres/$TB_GRES_NAME

GresTypes=$TB_GRES_NAME
EOF
    for n in "${TB_NODES[@]}"; do
        series=${TB_NODE_SERIES[$n]}
        feature=$(tb_series_feature "$series")
        echo "NodeName=$n NodeHostname=$HOST_SHORT NodeAddr=127.0.0.1 Port=${TB_PORT_SLURMD[$n]} CPUs=$TB_NODE_CPUS RealMemory=$TB_NODE_MEM_MB Features=$TB_SITE_FEATURE,$feature Gres=$TB_GRES_NAME:$series:$TB_NODE_GPUS State=UNKNOWN"
    done
    local IFS=,
    echo "PartitionName=$TB_PARTITION Nodes=${TB_NODES[*]} Default=YES MaxTime=INFINITE State=UP"
}

gen_gres_conf() {
    local n
    echo "# gres.conf for the sluice testbed - generated by deploy/testbed/start.sh."
    echo "# The GPUs are stand-ins: $TB_DEV/<node>-gpu<i> are copies of /dev/null"
    echo "# (slurmd drops a GPU without File=), so jobs can request gres gpu:N."
    for n in "${TB_NODES[@]}"; do
        echo "NodeName=$n Name=$TB_GRES_NAME Type=${TB_NODE_SERIES[$n]} File=$TB_DEV/$n-gpu[0-$((TB_NODE_GPUS - 1))]"
    done
}

gen_slurmdbd_conf() {
    cat <<EOF
# slurmdbd.conf for the sluice testbed - generated by deploy/testbed/start.sh.
AuthType=auth/munge
AuthInfo=socket=$TB_MUNGE_SOCKET
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$TB_JWT_KEY
DbdHost=localhost
DbdAddr=127.0.0.1
# slurmdbd takes CommunicationParameters from here, not from slurm.conf;
# without NoInAddrAny it listens on 0.0.0.0 whatever DbdAddr says.
${COMM_PARAMS:+CommunicationParameters=NoInAddrAny}
DbdPort=$TB_PORT_SLURMDBD
SlurmUser=$TB_SLURM_USER
DebugLevel=$DEBUG_LEVEL
LogFile=$(tb_logfile slurmdbd)
PidFile=$(tb_pidfile slurmdbd)
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$TB_PORT_MARIADB
StorageUser=$TB_DB_USER
StoragePass=$(cat "$TB_DB_PASS_FILE")
StorageLoc=$TB_DB_NAME
EOF
}

gen_my_cnf() {
    cat <<EOF
# MariaDB for the sluice testbed - generated by deploy/testbed/start.sh.
[client]
socket = $TB_MYSQL_SOCKET
port = $TB_PORT_MARIADB

[mariadbd]
datadir = $TB_MYSQL_DATA
socket = $TB_MYSQL_SOCKET
pid-file = $(tb_pidfile mariadbd)
log-error = $(tb_logfile mariadbd)
bind-address = 127.0.0.1
port = $TB_PORT_MARIADB
skip-name-resolve
innodb_buffer_pool_size = 128M
innodb_log_file_size = 64M
innodb_lock_wait_timeout = 900
innodb_flush_log_at_trx_commit = 2
max_connections = 64
EOF
}

SLURM_CONF_CHANGED=0
write_configs() {
    gen_slurm_conf >"$TB_SLURM_CONF.new"
    install_file "$TB_SLURM_CONF.new" "$TB_SLURM_CONF" root:root 0644 && SLURM_CONF_CHANGED=1
    gen_gres_conf >"$TB_GRES_CONF.new"
    install_file "$TB_GRES_CONF.new" "$TB_GRES_CONF" root:root 0644 && SLURM_CONF_CHANGED=1
    if [ "$TB_SUITE" != host ]; then
        # A root has no cgroup file system of its own: slurmd would stop
        # with "cgroup filesystem not mounted".
        printf '# generated by deploy/testbed/start.sh\nCgroupPlugin=disabled\n' >"$TB_ETC/cgroup.conf.new"
        install_file "$TB_ETC/cgroup.conf.new" "$TB_ETC/cgroup.conf" root:root 0644 && SLURM_CONF_CHANGED=1
    fi
    # slurmdbd refuses a config that others can read (it holds the DB password).
    (umask 077 && gen_slurmdbd_conf >"$TB_SLURMDBD_CONF.new")
    install_file "$TB_SLURMDBD_CONF.new" "$TB_SLURMDBD_CONF" "$TB_SLURM_USER:$TB_SLURM_USER" 0600 || true
    gen_my_cnf >"$TB_MY_CNF.new"
    install_file "$TB_MY_CNF.new" "$TB_MY_CNF" root:root 0644 || true
    {
        echo "# knobs the testbed was last started with (read by the testbed scripts)"
        echo "PORT_BASE=$TB_PORT_BASE"
        echo "MIN_JOB_AGE=$MIN_JOB_AGE"
        echo "SLURMD_TIMEOUT=$SLURMD_TIMEOUT"
        echo "BF_INTERVAL=$BF_INTERVAL"
        echo "TOKEN_LIFESPAN=$TOKEN_LIFESPAN"
        echo "COMM_PARAMS=$COMM_PARAMS"
        echo "RELEASE=$TB_RELEASE"
        echo "ACCOUNTING=$REST_ACCOUNTING"
    } >"$TB_SETTINGS.new"
    install_file "$TB_SETTINGS.new" "$TB_SETTINGS" root:root 0644 || true
}

# ================================================================ daemons
# run_start DAEMON CMD...: run a start command; on failure report its output.
run_start() {
    local d=$1 out
    shift
    if ! out=$("$@" 2>&1); then
        tb_err "$d: start command failed: $*"
        [ -z "$out" ] || printf '%s\n' "$out" >&2
        fail "$d" "did not start"
    fi
    [ -z "$out" ] || printf '%s\n' "$out" | sed "s/^/testbed: $d: /"
}

# wait_pid DAEMON: wait until the daemon's pid file names the live daemon.
wait_pid() {
    tb_wait "$WAIT" tb_pid "$1" >/dev/null || fail "$1" "no live process behind pid file $(tb_pidfile "$1")"
}

# wait_ready DAEMON SECONDS CMD...: wait until CMD succeeds; fail at once
# when DAEMON's process is gone meanwhile (a fatal error at startup).
# Returns 1 on timeout.
wait_ready() {
    local d=$1 deadline=$(( $(tb_now) + $2 * 1000000 ))
    shift 2
    while :; do
        if "$@"; then return 0; fi
        tb_pid "$d" >/dev/null || fail "$d" "exited while starting up"
        [ "$(tb_now)" -lt "$deadline" ] || return 1
        sleep 0.25
    done
}

# port_free DAEMON PORT: before starting DAEMON, make sure no other program
# already accepts connections on 127.0.0.1:PORT.
port_free() {
    if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then
        tb_err "$1: port 127.0.0.1:$2 is already in use by another program (ss -tlnp shows which);"
        tb_err "stop that program or move the testbed's port block with SLUICE_TB_PORT_BASE (stop.sh first)"
        exit 1
    fi
}

STARTED=()
RUNNING_BEFORE=0

munge_ok() {
    munge -S "$TB_MUNGE_SOCKET" -n 2>/dev/null | unmunge -S "$TB_MUNGE_SOCKET" >/dev/null 2>&1
}

start_munged() {
    if ! tb_pid munged >/dev/null; then
        # munged refuses a socket left over by a killed instance.
        rm -f "$TB_MUNGE_SOCKET" "$TB_MUNGE_SOCKET.lock" "$(tb_pidfile munged)"
        run_start munged runuser -u "$TB_MUNGE_USER" -- munged \
            --socket="$TB_MUNGE_SOCKET" --key-file="$TB_MUNGE_KEY" \
            --pid-file="$(tb_pidfile munged)" --log-file="$(tb_logfile munged)" \
            --seed-file="$TB_STATE/munge/munged.seed"
        STARTED+=(munged)
    else
        RUNNING_BEFORE=$((RUNNING_BEFORE + 1))
    fi
    wait_pid munged
    wait_ready munged "$WAIT" munge_ok || fail munged "munge credential round trip through $TB_MUNGE_SOCKET fails"
    phase_done "munged ready (pid $(tb_pid munged))"
}

sql() { mariadb --defaults-file="$TB_MY_CNF" --user=root --batch --skip-column-names "$@"; }
mariadb_ok() { sql -e 'SELECT 1' >/dev/null 2>&1; }

start_mariadb() {
    if [ ! -d "$TB_MYSQL_DATA/mysql" ]; then
        tb_say "initialising MariaDB data directory $TB_MYSQL_DATA"
        if ! mariadb-install-db --defaults-file="$TB_MY_CNF" --user="$TB_MYSQL_USER" \
            --auth-root-authentication-method=socket --skip-test-db \
            >"$TB_LOG/mariadb-install-db.log" 2>&1; then
            tb_show_log "$TB_LOG/mariadb-install-db.log" 20
            fail mariadbd "mariadb-install-db failed (full output in $TB_LOG/mariadb-install-db.log)"
        fi
    fi
    if ! tb_pid mariadbd >/dev/null; then
        rm -f "$TB_MYSQL_SOCKET" "$TB_MYSQL_SOCKET.lock" "$(tb_pidfile mariadbd)"
        port_free mariadbd "$TB_PORT_MARIADB"
        # mariadbd stays in the foreground: detach it; it writes its own pid
        # file.  UMASK is the mode of files it creates: a world-readable pid
        # file lets status.sh work for any user (the data directory is 0700).
        run_start mariadbd env UMASK=0644 start-stop-daemon --start --quiet --background \
            --pidfile "$(tb_pidfile mariadbd)" --exec /usr/sbin/mariadbd -- \
            --defaults-file="$TB_MY_CNF" --user="$TB_MYSQL_USER"
        STARTED+=(mariadbd)
    else
        RUNNING_BEFORE=$((RUNNING_BEFORE + 1))
    fi
    tb_wait "$WAIT" mariadb_ok || fail mariadbd "no answer on $TB_MYSQL_SOCKET"
    wait_pid mariadbd
    # The accounting database and slurmdbd's account (idempotent).
    local pass
    pass=$(cat "$TB_DB_PASS_FILE")
    sql <<EOF || fail mariadbd "creating database $TB_DB_NAME / user $TB_DB_USER failed"
CREATE DATABASE IF NOT EXISTS $TB_DB_NAME;
CREATE USER IF NOT EXISTS '$TB_DB_USER'@'127.0.0.1' IDENTIFIED BY '$pass';
ALTER USER '$TB_DB_USER'@'127.0.0.1' IDENTIFIED BY '$pass';
GRANT ALL PRIVILEGES ON $TB_DB_NAME.* TO '$TB_DB_USER'@'127.0.0.1';
EOF
    phase_done "mariadbd ready on 127.0.0.1:$TB_PORT_MARIADB (pid $(tb_pid mariadbd))"
}

sacctmgr_q() { timeout 15 sacctmgr --noheader --parsable2 "$@"; }
slurmdbd_ok() { sacctmgr_q show cluster format=cluster >/dev/null 2>&1; }

start_slurmdbd() {
    if ! tb_pid slurmdbd >/dev/null; then
        rm -f "$(tb_pidfile slurmdbd)"
        port_free slurmdbd "$TB_PORT_SLURMDBD"
        run_start slurmdbd slurmdbd
        STARTED+=(slurmdbd)
    else
        RUNNING_BEFORE=$((RUNNING_BEFORE + 1))
    fi
    wait_pid slurmdbd
    wait_ready slurmdbd "$WAIT" slurmdbd_ok || fail slurmdbd "sacctmgr gets no answer from slurmdbd on localhost:$TB_PORT_SLURMDBD"
    # Cluster, account and user association (idempotent).  An existing user
    # association implies the cluster and the account exist.
    if [ -z "$(sacctmgr_q show association where user="$TB_JOB_USER" account="$TB_ACCOUNT" cluster="$TB_CLUSTER" format=user)" ]; then
        if [ -z "$(sacctmgr_q show cluster where name="$TB_CLUSTER" format=cluster)" ]; then
            sacctmgr -i add cluster "$TB_CLUSTER" >/dev/null || fail slurmdbd "sacctmgr add cluster $TB_CLUSTER failed"
        fi
        if [ -z "$(sacctmgr_q show account where name="$TB_ACCOUNT" format=account)" ]; then
            sacctmgr -i add account "$TB_ACCOUNT" cluster="$TB_CLUSTER" \
                description="sluice testbed" organization=sluice >/dev/null ||
                fail slurmdbd "sacctmgr add account $TB_ACCOUNT failed"
        fi
        sacctmgr -i add user "$TB_JOB_USER" account="$TB_ACCOUNT" cluster="$TB_CLUSTER" \
            defaultaccount="$TB_ACCOUNT" >/dev/null ||
            fail slurmdbd "sacctmgr add user $TB_JOB_USER failed"
    fi
    ensure_tenant_associations
    phase_done "slurmdbd ready on 127.0.0.1:$TB_PORT_SLURMDBD (pid $(tb_pid slurmdbd)); cluster $TB_CLUSTER, account $TB_ACCOUNT, user $TB_JOB_USER"
}

# Each tenant user: its own account (tenant-a, tenant-b) and association, as
# its default account (idempotent; one query when they exist).
ensure_tenant_associations() {
    local t u a have
    have=$(sacctmgr_q show association where cluster="$TB_CLUSTER" format=user,account) ||
        fail slurmdbd "sacctmgr show association failed"
    for t in "${TB_TENANTS[@]}"; do
        u=${TB_TENANT_USER[$t]} a=${TB_TENANT_ACCOUNT[$t]}
        grep -qx "$u|$a" <<<"$have" && continue
        if [ -z "$(sacctmgr_q show account where name="$a" format=account)" ]; then
            sacctmgr -i add account "$a" cluster="$TB_CLUSTER" \
                description="sluice testbed tenant $t" organization=sluice >/dev/null ||
                fail slurmdbd "sacctmgr add account $a failed"
        fi
        sacctmgr -i add user "$u" account="$a" cluster="$TB_CLUSTER" defaultaccount="$a" >/dev/null ||
            fail slurmdbd "sacctmgr add user $u account=$a failed"
        tb_say "tenant $t: user $u, account $a"
    done
}

slurmctld_ok() { timeout 15 scontrol ping 2>/dev/null | grep -q 'is UP'; }

start_slurmctld() {
    local was_running=0
    if ! tb_pid slurmctld >/dev/null; then
        rm -f "$(tb_pidfile slurmctld)"
        port_free slurmctld "$TB_PORT_SLURMCTLD"
        run_start slurmctld slurmctld
        STARTED+=(slurmctld)
    else
        was_running=1
        RUNNING_BEFORE=$((RUNNING_BEFORE + 1))
    fi
    wait_pid slurmctld
    wait_ready slurmctld "$WAIT" slurmctld_ok || fail slurmctld "scontrol ping does not report slurmctld UP on localhost:$TB_PORT_SLURMCTLD"
    if [ "$was_running" -eq 1 ] && [ "$SLURM_CONF_CHANGED" -eq 1 ]; then
        tb_say "slurm.conf changed while slurmctld was running: scontrol reconfigure"
        scontrol reconfigure || fail slurmctld "scontrol reconfigure failed"
    fi
    phase_done "slurmctld ready on localhost:$TB_PORT_SLURMCTLD (pid $(tb_pid slurmctld))"
}

# node_states: "name state" per node, e.g. "tb1 idle" or "tb2 idle*".
node_states() { timeout 15 sinfo --noheader --Node --format='%N %t' 2>/dev/null | sort -u; }

# nodes_ok: every testbed node is responding and usable (idle, mixed,
# allocated or completing; no "*" not-responding or other suffix).
nodes_ok() {
    local states n s
    states=$(node_states) || return 1
    for n in "${TB_NODES[@]}"; do
        s=$(awk -v n="$n" '$1 == n { print $2 }' <<<"$states")
        case "$s" in idle | mix | alloc | comp) ;; *) return 1 ;; esac
    done
}

# slurmds_nodes_ok: nodes_ok, but fail at once when a slurmd died.
slurmds_nodes_ok() {
    local n
    for n in "${TB_NODES[@]}"; do
        tb_pid "slurmd-$n" >/dev/null || fail "slurmd-$n" "exited while starting up"
    done
    nodes_ok
}

start_slurmds() {
    local n
    for n in "${TB_NODES[@]}"; do
        if ! tb_pid "slurmd-$n" >/dev/null; then
            rm -f "$(tb_pidfile "slurmd-$n")"
            port_free "slurmd-$n" "${TB_PORT_SLURMD[$n]}"
            run_start "slurmd-$n" slurmd -N "$n"
            STARTED+=("slurmd-$n")
        else
            RUNNING_BEFORE=$((RUNNING_BEFORE + 1))
        fi
    done
    for n in "${TB_NODES[@]}"; do wait_pid "slurmd-$n"; done
    if ! tb_wait 10 slurmds_nodes_ok; then
        # A node left DOWN/DRAINED by an earlier run (a killed slurmd, a
        # failed job) does not come back by itself: resume it once.
        local st name state
        st=$(node_states || true)
        while read -r name state; do
            case "$state" in
                down* | drain* | drng* | fail*)
                    tb_say "node $name is $state: scontrol update nodename=$name state=resume"
                    scontrol update nodename="$name" state=resume || true ;;
            esac
        done <<<"$st"
        if ! tb_wait "$WAIT" slurmds_nodes_ok; then
            st=$(node_states || true)
            for n in "${TB_NODES[@]}"; do
                s=$(awk -v n="$n" '$1 == n { print $2 }' <<<"$st")
                case "$s" in idle | mix | alloc | comp) ;; *)
                    tb_err "node $n state '${s:-unknown}'; slurmctld log: $(tb_logfile slurmctld)"
                    tb_show_log "$(tb_logfile slurmctld)" 10
                    fail "slurmd-$n" "node $n is not up (sinfo: ${s:-no answer})" ;;
                esac
            done
        fi
    fi
    phase_done "slurmd ready: $(node_states | tr '\n' ' ')"
}

rest_diag_tcp() { tb_rest_tcp "/slurm/$TB_API/diag" -o /dev/null 2>/dev/null; }
rest_diag_unix() { tb_rest_unix "/slurm/$TB_API/diag" -o /dev/null 2>/dev/null; }
# slurmdbd through slurmrestd.  With no job in the default window (today) the
# answer is HTTP 200 with errors[0].error_number 9003 "Nothing found with
# query"; that counts as an answer, any other error does not.
rest_db_tcp() {
    local body
    body=$(tb_rest_tcp "/slurmdb/$TB_API/jobs" 2>/dev/null) || return 1
    jq -e '.jobs != null and ([.errors[]? | select(.error_number != 9003)] | length) == 0' >/dev/null <<<"$body"
}

# slurmrestd: one process, as TB_REST_USER, JWT authentication only,
# listening on 127.0.0.1:<port> and on the Unix socket.  start-stop-daemon
# detaches it and writes the pid of the process it execs (slurmrestd itself,
# which has no pid-file option) into the pid file.
rest_socket_ok() { [ -S "$TB_REST_SOCKET" ]; }

# The OpenAPI plugins: 22.05 has one per version; 23.11 and later serve every
# version through openapi/slurmctld and openapi/slurmdbd.
rest_plugins() {
    local ctld=openapi/slurmctld dbd=openapi/slurmdbd
    if [ "$TB_RELEASE" = 22.05 ]; then
        ctld=openapi/$TB_API dbd=openapi/db$TB_API
    fi
    if [ "$REST_ACCOUNTING" = yes ]; then echo "$ctld,$dbd"; else echo "$ctld"; fi
}

start_slurmrestd() {
    if ! tb_pid slurmrestd >/dev/null; then
        rm -f "$(tb_pidfile slurmrestd)" "$TB_REST_SOCKET"
        port_free slurmrestd "$TB_PORT_REST"
        # umask 0: the socket file is connectable by anyone who reaches it;
        # its 0750 directory limits that to root, slurmrestd's user and the
        # job user's group.  slurmrestd creates no other files.
        run_start slurmrestd env SLURM_JWT=daemon SLURM_CONF="$TB_SLURM_CONF" \
            start-stop-daemon --start --quiet --background --make-pidfile \
            --pidfile "$(tb_pidfile slurmrestd)" --chuid "$TB_REST_USER:$TB_REST_USER" \
            --umask 0000 --chdir / --output "$(tb_logfile slurmrestd)" \
            --exec /usr/sbin/slurmrestd -- \
            -a rest_auth/jwt -s "$(rest_plugins)" \
            "127.0.0.1:$TB_PORT_REST" "unix:$TB_REST_SOCKET"
        STARTED+=(slurmrestd)
    else
        RUNNING_BEFORE=$((RUNNING_BEFORE + 1))
    fi
    wait_pid slurmrestd
    wait_ready slurmrestd "$WAIT" rest_diag_tcp ||
        fail slurmrestd "no authenticated answer from GET $TB_REST_URL/slurm/$TB_API/diag"
    wait_ready slurmrestd "$WAIT" rest_socket_ok || fail slurmrestd "socket $TB_REST_SOCKET did not appear"
    wait_ready slurmrestd "$WAIT" rest_diag_unix ||
        fail slurmrestd "no authenticated answer from GET /slurm/$TB_API/diag on $TB_REST_SOCKET"
    if [ "$REST_ACCOUNTING" = yes ]; then
        wait_ready slurmrestd "$WAIT" rest_db_tcp ||
            fail slurmrestd "GET $TB_REST_URL/slurmdb/$TB_API/jobs fails (slurmrestd -> slurmdbd)"
    fi
    phase_done "slurmrestd ready on $TB_REST_URL and unix:$TB_REST_SOCKET (pid $(tb_pid slurmrestd)); diag and slurmdb answer with the token"
}

# The stored tokens (tb_token_files): the job user's, each tenant user's
# (the token_file identity) and SlurmUser's (the proxy identity), in
# $TB_KEYS/<user>.jwt, root 0600.
ensure_token() {
    local renewed
    renewed=$(tb_renew_tokens "$TOKEN_LIFESPAN") || fail slurmctld "could not mint the testbed's tokens"
    [ -z "$renewed" ] || tb_say "minted tokens for ${renewed% } into $TB_KEYS/<user>.jwt (lifespan ${TOKEN_LIFESPAN} s)"
}

# write_host_wrappers: in TB_DIR/bin (the host's view), one script per Slurm
# client command of the root, running it inside the root against this
# testbed.  env.sh puts the directory first on PATH, so the host's tests and
# benchmarks call the release's own squeue, sacct, scontrol and sbatch.
# The host's /tmp is the root's /tmp too (root.sh mount); other host paths
# given as arguments are not seen inside.
write_host_wrappers() {
    local dir=$TB_DIR/bin c
    install -d -m 0755 "$dir"
    rm -f "$dir"/*
    # slurm-client's commands (the prefix release has moved them); a source
    # build installs the same set.
    local cmds
    if [ "$TB_FROM_SOURCE" = 1 ]; then
        cmds=$(cd "$TB_ROOT/usr/bin" && ls sacct sacctmgr salloc sattach sbatch sbcast scancel \
            scontrol scrontab sdiag sinfo sprio squeue sreport srun sshare sstat strigger 2>/dev/null)
    else
        cmds=$(chroot "$TB_ROOT" dpkg -L slurm-client | sed -n 's|^/usr/bin/\([a-z]*\)$|\1|p')
    fi
    for c in $cmds; do
        cat >"$dir/$c.new" <<EOF
#!/bin/sh
# $c of Slurm $TB_RELEASE in $TB_ROOT - generated by deploy/testbed/start.sh
exec chroot '$TB_ROOT' /usr/bin/env PATH='$TB_SLURM_BIN:/usr/sbin:/usr/bin:/sbin:/bin' SLURM_CONF='$TB_IN_DIR/etc/slurm.conf' '$TB_SLURM_BIN/$c' "\$@"
EOF
        chmod 0755 "$dir/$c.new"
        mv -f "$dir/$c.new" "$dir/$c"
    done
}

# ================================================================ main
# A release in a root: make and mount the root on the host, then run this
# same script inside it, and print the environment as the host sees it.
if tb_in_root; then
    if [ "$(id -u)" -ne 0 ]; then
        tb_err "start.sh must run as root (it makes a root and starts daemons in it)"
        exit 77
    fi
    check_host_name
    ensure_users   # the host's job user; the root gets the same uid and gid
    bash "$TB_LIB_DIR/root.sh" prepare
    bash "$TB_LIB_DIR/root.sh" mount
    phase_done "root $TB_ROOT (Slurm $TB_RELEASE) ready and mounted"
    inner=(SLUICE_TB_IN_ROOT=1 SLUICE_TB_NO_ENV=1 SLUICE_TESTBED_DIR="$TB_IN_DIR"
        SLUICE_TB_PORT_BASE="$TB_PORT_BASE" SLUICE_TB_NO_INADDR_ANY="$NO_INADDR_ANY"
        SLUICE_TB_JOB_UID="$(id -u "$TB_JOB_USER")" SLUICE_TB_JOB_GID="$(id -g "$TB_JOB_USER")"
        SLUICE_TB_TENANT_IDS="$(for t in "${TB_TENANTS[@]}"; do u=${TB_TENANT_USER[$t]}; printf '%s:%s:%s ' "$u" "$(id -u "$u")" "$(id -g "$u")"; done)"
        PATH="$TB_SLURM_BIN:/usr/sbin:/usr/bin:/sbin:/bin" HOME=/root LANG=C.UTF-8)
    while IFS= read -r kv; do
        case "$kv" in
            SLUICE_TB_IN_ROOT=* | SLUICE_TB_NO_ENV=* | SLUICE_TB_PORT_BASE=* | SLUICE_TB_JOB_[UG]ID=* | SLUICE_TB_TENANT_IDS=*) ;;
            SLUICE_TB_*=*) inner+=("$kv") ;;
        esac
    done < <(env)
    # The daemons run in a mount namespace whose root is the release's root
    # (pivot_root, not chroot: a real apptainer in a job needs that); the
    # jobs slurmd starts inherit it.
    tb_enter /usr/bin/env -i "${inner[@]}" bash /opt/sluice-testbed/start.sh
    write_host_wrappers
    tb_say "Slurm $TB_RELEASE READY in $(tb_elapsed "$T0") s (root $TB_ROOT)"
    echo "# environment (also: eval \"\$(deploy/testbed/env.sh --release $TB_RELEASE)\")"
    "$TB_LIB_DIR/env.sh"
    exit 0
fi
preflight
FRESH=0
[ -e "$TB_MARKER" ] || FRESH=1
ensure_users
ensure_dirs
ensure_keys
write_configs
phase_done "users, directories, keys and configs in $TB_DIR"

start_munged
start_mariadb
start_slurmdbd
start_slurmctld
start_slurmds
ensure_token
start_slurmrestd

if [ "${#STARTED[@]}" -eq 0 ]; then
    how="already running"
elif [ "$RUNNING_BEFORE" -gt 0 ]; then
    how="partial: started ${STARTED[*]}"
elif [ "$FRESH" -eq 1 ]; then
    how="cold start, new base directory"
else
    how="cold start, existing state"
fi
tb_say "READY in $(tb_elapsed "$T0") s ($how) - Slurm $TB_RELEASE, cluster $TB_CLUSTER, logs in $TB_LOG"
[ "${SLUICE_TB_NO_ENV:-0}" = 1 ] && exit 0
echo "# environment (also: eval \"\$(deploy/testbed/env.sh)\")"
"$TB_LIB_DIR/env.sh"
