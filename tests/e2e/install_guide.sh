#!/usr/bin/env bash
# install_guide.sh - docs/install.md, run as written, on a testbed instance
# of the suite's own, so that the guide cannot drift from what works.
#
# The page's fenced blocks carry their names in the info string
# (```sh {install-step=NAME}); every fenced block but the diagrams must
# have one.  The blocks are taken from the page at run time and handled in
# the page's order, each as HOW below says:
#   run      run with bash -euo pipefail, as root, with the guide's variables
#            (the `vars` block's names) set to this instance, from $work
#            (from the repository for `unit`, which installs a file of it);
#   conf     a slurm.conf or slurmdbd.conf fragment: each of its lines, with
#            the guide's example values replaced by the instance's, must be
#            a line of the instance's own file (the one its daemons run on);
#   standin  shown, not run (systemctl: this machine has no systemd as PID
#            1); instead the suite runs the ExecStart= of the unit that the
#            guide's blocks installed (into a scratch UNIT_DIR), as systemd
#            would: as its User=/Group=, with its Environment= and
#            EnvironmentFile=, UMask=, its RuntimeDirectory= and
#            StateDirectory= made, `$VAR` split and `${VAR}` kept whole;
#   shown    shown, not run, for the reason given.
# The stand-ins move what the units name under /run, /var/lib and
# /etc/sluice into the instance's directory, and run the build's binary
# where sluice.service says /usr/local/bin/sluice; the blocks that run get
# the same /run moves.  The suite fails when a block HOW names is gone from
# the page, when the page has a block HOW does not name, or when the `vars`
# block names other variables than the suite sets.
#
# What it proves: on a real Slurm (22.05), the guide's slurmrestd unit,
# account, storage root, token file, site file and sluice.service (with the
# guide's drop-in and env file) give a `sluice check --probe-job` with no
# failure as the service's user (uid-contract ok), and a `sluice launch
# --wait` through the service's socket that ends SUCCEEDED.  What it cannot
# show: systemd itself (ordering, the unit's sandboxing, ReadWritePaths=),
# the restart of slurmctld and slurmdbd after the slurm.conf edit (the
# instance started with those lines), a TLS proxy, a second host (service
# host and compute nodes are one host here, so the uid contract holds
# trivially), cron, and the package install.
#
# One release: the guide is about sluice's own deployment, the same on every
# release.  Own instance: /var/tmp/sluice-tb-install, ports from 17010
# (SLUICE_E2E_INSTALL_DIR, SLUICE_E2E_INSTALL_PORT_BASE); the guide's
# slurmrestd listens on port base + 12.  Runs as root on 127.0.0.1 only.
# Last line: "install_guide@22.05: <n> passed, <m> failed".
# e2e-releases: 22.05
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
NAME=install_guide
PAGE=$REPO/docs/install.md

# How each block of the page is handled, in no particular order (the page's
# order is the order they run in).
declare -A HOW=(
    [vars]="set|the suite sets each of these names to its own instance"
    [jwt-key]="run"
    [slurm-conf]="conf|slurm.conf"
    [slurmdbd-conf]="conf|slurmdbd.conf"
    [slurm-restart]="shown|systemctl: no systemd as PID 1 here; the instance's slurmctld and slurmdbd started with these lines (block conf checks)"
    [slurmrestd-user]="run"
    [slurmrestd-unit]="run"
    [slurmrestd-start]="standin|slurmrestd"
    [tls-proxy]="shown|no nginx here, and loopback only: sluice dials the guide's slurmrestd on 127.0.0.1 over http"
    [account]="run"
    [service-user]="shown|the instance's job user already has a fixed uid (deploy/testbed/start.sh); one host is service host and nodes"
    [uid]="run"
    [storage]="run"
    [install]="shown|the suite runs the build tree's binary; install_tree and deb_package test installing it"
    [etc]="run"
    [token]="run"
    [token-cron]="shown|no cron here: block token ran the renewal once"
    [jwt-command]="shown|another token source: e2e jwt_command runs one"
    [jwt-key-file]="shown|another token source: the unit tests of rest.jwt_key_file mint with it"
    [site-file]="run"
    [check]="run"
    [unit]="run"
    [env-file]="run"
    [unit-start]="standin|sluice"
    [probe]="run"
    [first-launch]="run"
)
ran=0
for b in "${!HOW[@]}"; do case ${HOW[$b]} in run | conf* | standin*) ran=$((ran + 1)) ;; esac; done
# One PASS per block run, checked or stood in for, and one for the page's
# blocks matching HOW.
TESTS=$((ran + 1))
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
[ -f "$PAGE" ] || abort "no $PAGE"
pids=()
e2e_cleanup_hook() {
    local p
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
e2e_own_testbed install "${SLUICE_E2E_INSTALL_DIR:-/var/tmp/sluice-tb-install}" \
    "${SLUICE_E2E_INSTALL_PORT_BASE:-17010}"
show() { sed 's/^/    | /' "$1" >&2 || true; }

# ------------------------------------------------ the page's blocks
# $work/blocks/NAME (the text), $work/order (names, the page's order).
mkdir -p "$work/blocks"
awk -v dir="$work/blocks" '
    /^```/ && !inb {
        inb = 1
        if ($0 ~ /^```mermaid[ \t]*$/) { name = ""; next }
        if (match($0, /\{install-step=[a-z0-9-]+\}/)) {
            name = substr($0, RSTART + 14, RLENGTH - 15)
            if (name in seen) { print "DUP " name; name = ""; next }
            seen[name] = 1
            print "BLOCK " name
            printf "" >(dir "/" name)
        } else { name = ""; print "UNMARKED " NR ": " $0 }
        next
    }
    /^```/ && inb { inb = 0; if (name != "") close(dir "/" name); name = ""; next }
    inb && name != "" { print >>(dir "/" name) }
' "$PAGE" >"$work/extract"
sed -n 's/^BLOCK //p' "$work/extract" >"$work/order"
problems=$(grep -E '^(DUP|UNMARKED) ' "$work/extract" || true)
for b in "${!HOW[@]}"; do grep -qx "$b" "$work/order" || problems+=$'\n'"block $b is gone from the page"; done
while read -r b; do [ -n "${HOW[$b]:-}" ] || problems+=$'\n'"block $b is neither run nor listed"; done <"$work/order"

# The guide's variables: the example values (for the conf blocks) and this
# instance's.
declare -A EXAMPLE=() VAL=()
while IFS= read -r line; do
    [[ "$line" =~ ^([A-Z_]+)=([^[:space:]]*) ]] || continue
    EXAMPLE[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
done <"$work/blocks/vars"
# (a fresh directory and account even on an instance a killed run left up)
guide=$SLUICE_TESTBED_DIR/guide
rm -rf "$guide"
install -d -m 0755 "$guide"
VAL=(
    [SLURM_ETC]=$SLUICE_TESTBED_DIR/etc
    [SLURM_USER]=slurm
    [SLURM_JWT_KEY]=$SLUICE_TB_JWT_KEY
    [SLURM_CLUSTER]=$SLUICE_TB_CLUSTER
    [SLURM_PARTITION]=$SLUICE_TB_PARTITION
    [SLURM_ACCOUNT]=guide$run
    [SLURMRESTD_USER]=sluicerest
    [SLURMRESTD_PLUGINS]="openapi/$SLUICE_TB_REST_VERSION,openapi/db$SLUICE_TB_REST_VERSION"
    [SLURMRESTD_LISTEN]=127.0.0.1:$((SLUICE_TB_PORT_BASE + 12))
    [SLURMRESTD_URL]=http://127.0.0.1:$((SLUICE_TB_PORT_BASE + 12))
    [SLUICE_USER]=$SLUICE_TB_USER
    [SLUICE_GROUP]=$(id -gn "$SLUICE_TB_USER")
    [SLUICE_ETC]=$guide/etc
    [SLUICE_ROOT]=$guide/storage
    [UNIT_DIR]=$work/units
)
mkdir -p "$work/units"
names_page=$(printf '%s\n' "${!EXAMPLE[@]}" | sort | tr '\n' ' ')
names_here=$(printf '%s\n' "${!VAL[@]}" | sort | tr '\n' ' ')
[ "$names_page" = "$names_here" ] ||
    problems+=$'\n'"block vars names [$names_page], the suite sets [$names_here]"
if [ -z "${problems//$'\n'/}" ]; then
    pass "every block of docs/install.md is run, checked or listed ($(wc -l <"$work/order") blocks)"
else
    fail "docs/install.md and the suite disagree:$problems"
fi

# Where the stand-ins put what the units name under /run, /var/lib and
# /etc/sluice, and the sluice the guide's commands find first on PATH.
runbase=$guide/run
statebase=$guide/state
install -d -m 0755 "$runbase" "$statebase" "$guide/bin"
ln -sf "$SLUICE" "$guide/bin/sluice"
moves() {
    sed -E -e "s#(^|[ :=])/run/(sluice|slurmrestd)/#\\1$runbase/\\2/#g" "$@"
}

# run_block NAME [VAR=VALUE...]: block NAME with the guide's variables (and
# the overrides); its output in $work/NAME.out.
run_block() {
    local b=$1 dir=$work
    shift
    local -a vars=()
    local k
    for k in "${!VAL[@]}"; do vars+=("$k=${VAL[$k]}"); done
    [ "$b" = unit ] && dir=$REPO
    moves "$work/blocks/$b" >"$work/$b.sh"
    (cd "$dir" && env "${vars[@]}" "$@" PATH="$guide/bin:$PATH" \
        timeout 300 bash -euo pipefail "$work/$b.sh") </dev/null >"$work/$b.out" 2>&1
}

# unit_start NAME: the stand-in of `systemctl start NAME`, from the unit in
# UNIT_DIR and its drop-ins; the pid appended to pids.
unit_start() {
    local unit=$1 f line key value user="" group="" umask=0022 exec="" w
    local -a files=("${VAL[UNIT_DIR]}/$unit.service") envfiles=() dirs=()
    local -A env=([PATH]=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
    for f in "${VAL[UNIT_DIR]}/$unit.service.d"/*.conf; do [ -f "$f" ] && files+=("$f"); done
    while IFS= read -r line; do
        [[ "$line" =~ ^([A-Za-z]+)=(.*)$ ]] || continue
        key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
        case $key in
            User) user=$value ;;
            Group) group=$value ;;
            UMask) umask=$value ;;
            Environment) env[${value%%=*}]=${value#*=} ;;
            EnvironmentFile) envfiles+=("${value#-}") ;;
            RuntimeDirectory) dirs+=("$runbase/$value:$(grep -h '^RuntimeDirectoryMode=' "${files[@]}" | tail -1 | cut -d= -f2)") ;;
            StateDirectory) dirs+=("$statebase/$value:$(grep -h '^StateDirectoryMode=' "${files[@]}" | tail -1 | cut -d= -f2)") ;;
            ExecStart) exec=$value ;;
        esac
    done < <(cat "${files[@]}" | moves | sed -e "s|/var/lib/|$statebase/|g" \
        -e "s|/etc/sluice/|${VAL[SLUICE_ETC]}/|g" -e "s|^ExecStart=/usr/local/bin/sluice |ExecStart=$SLUICE |")
    if [ -z "$user" ] || [ -z "$exec" ]; then
        echo "unit $unit: no User= or ExecStart=" >"$work/$unit.log"
        return 1
    fi
    for f in "${envfiles[@]}"; do
        while IFS= read -r line; do
            [[ "$line" =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] && env[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
        done <"$f"
    done
    for w in "${dirs[@]}"; do install -d -o "$user" -g "${group:-$user}" -m "${w##*:}" "${w%:*}"; done
    local -a argv=() parts envlist=()
    read -r -a words <<<"$exec"
    for w in "${words[@]}"; do
        if [[ "$w" =~ ^\$([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
            read -r -a parts <<<"${env[${BASH_REMATCH[1]}]:-}"
            argv+=("${parts[@]}")
        else
            while [[ "$w" =~ \$\{([A-Za-z_][A-Za-z0-9_]*)\} ]]; do
                w=${w/"${BASH_REMATCH[0]}"/${env[${BASH_REMATCH[1]}]:-}}
            done
            argv+=("$w")
        fi
    done
    for key in "${!env[@]}"; do envlist+=("$key=${env[$key]}"); done
    printf '%s\n' "${argv[*]}" >"$work/$unit.argv"
    (umask "$umask" && exec setpriv --reuid="$user" --regid="${group:-$user}" --init-groups \
        -- env -i "${envlist[@]}" "${argv[@]}") </dev/null >"$work/$unit.log" 2>&1 &
    pids+=("$!")
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds.
wait_for() {
    local n=$(($1 * 10))
    shift
    while [ "$n" -gt 0 ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
        n=$((n - 1))
    done
    return 1
}
rest_up() {
    curl -sf --max-time 5 --noproxy '*' -H "X-SLURM-USER-NAME: $SLUICE_TB_USER" \
        -H "X-SLURM-USER-TOKEN: $(sed 's/^SLURM_JWT=//' "$SLUICE_TB_TOKEN_FILE")" \
        "${VAL[SLURMRESTD_URL]}/slurm/$SLUICE_TB_REST_VERSION/diag" -o /dev/null
}

# ------------------------------------------------ each block, in order
while read -r b; do
    how=${HOW[$b]:-}
    case $how in
    run)
        case $b in
        jwt-key)
            # a new key (a scratch path), then the instance's own (kept)
            rc=0
            run_block jwt-key SLURM_JWT_KEY="$work/new-jwt.key" || rc=$?
            cp "$work/jwt-key.out" "$work/jwt-key-new.out"
            run_block jwt-key || rc=$?
            got="$(stat -c '%a %U %s' "$work/new-jwt.key" 2>&1) / $(stat -c '%a %U' "${VAL[SLURM_JWT_KEY]}" 2>&1)"
            if [ "$rc" -eq 0 ] && [ "$got" = "600 slurm 32 / 600 slurm" ]; then
                pass "jwt-key: a new key is 32 bytes, 0600, SlurmUser's; the instance's key is kept ($got)"
            else
                fail "jwt-key (exit $rc; mode owner size: $got)"; show "$work/jwt-key-new.out"; show "$work/jwt-key.out"
            fi
            continue
            ;;
        *) rc=0; run_block "$b" || rc=$? ;;
        esac
        out=$work/$b.out
        note=""
        case $b in
        account) grep -qx "${VAL[SLURM_CLUSTER]}|${VAL[SLURM_ACCOUNT]}|$SLUICE_TB_USER" "$out" || rc=${rc/#0/assoc} ;;
        uid) grep -q "uid=$(id -u "$SLUICE_TB_USER")(" "$out" || rc=${rc/#0/id} ;;
        storage) note=$(stat -c '%a %U' "${VAL[SLUICE_ROOT]}"); [ "$note" = "750 $SLUICE_TB_USER" ] || rc=${rc/#0/mode} ;;
        token)
            note=$(stat -c '%a %U' "${VAL[SLUICE_ETC]}/slurm-jwt")
            { [ "$note" = "600 $SLUICE_TB_USER" ] && grep -q "$SLUICE_TB_USER" "$out" &&
                ! grep -q 'eyJ' "$out"; } || rc=${rc/#0/token}
            ;;
        check)
            grep -Eq "^uid-contract +ok +sluice runs as $SLUICE_TB_USER" "$out" &&
                grep -Eq '^token +ok' "$out" && grep -Eq '^accounting +ok' "$out" &&
                grep -Eq '^probe-job +ok' "$out" && ! grep -q 'FAIL' "$out" || rc=${rc/#0/rows}
            note="no FAIL; uid-contract, token, accounting and probe-job ok"
            ;;
        first-launch)
            grep -q 'SUCCEEDED' "$out" && grep -qx "$(hostname)" "$out" || rc=${rc/#0/output}
            note="SUCCEEDED through the service's socket; its log is the node's host name"
            ;;
        esac
        if [ "$rc" = 0 ]; then
            pass "$b: ran${note:+ ($note)}"
        else
            fail "$b (exit or check: $rc)"; show "$out"
        fi
        ;;
    conf*)
        conf=$SLUICE_TESTBED_DIR/etc/${how#conf|}
        missing=""
        while IFS= read -r line; do
            [[ "$line" =~ ^[A-Za-z] ]] || continue
            # longest example first, through placeholders: one pass
            for k in $(for v in "${!EXAMPLE[@]}"; do echo "${#EXAMPLE[$v]} $v"; done | sort -rn | cut -d' ' -f2); do
                line=${line//"${EXAMPLE[$k]}"/@@$k@@}
            done
            for k in "${!VAL[@]}"; do line=${line//@@$k@@/${VAL[$k]}}; done
            grep -qxF -- "$line" "$conf" || missing+=" [$line]"
        done <"$work/blocks/$b"
        if [ -z "$missing" ]; then
            pass "$b: every line is a line of the instance's ${how#conf|}"
        else
            fail "$b: not in ${how#conf|}:$missing"
        fi
        ;;
    standin*)
        unit=${how#standin|}
        sock=""
        if unit_start "$unit" </dev/null && case $unit in
            slurmrestd)
                # up, and its socket kept from others: slurmrestd makes the
                # socket 0777 whatever the umask, so its directory does it
                wait_for 30 rest_up && wait_for 10 test -S "$runbase/slurmrestd/slurmrestd.socket" &&
                    sock=$(stat -c '%a %U:%G' "$runbase/slurmrestd") &&
                    [ "$sock" = "750 ${VAL[SLURMRESTD_USER]}:${VAL[SLURMRESTD_USER]}" ]
                ;;
            sluice) wait_for 60 test -S "$runbase/sluice/sluice.sock" ;;
        esac; then
            pass "$b: stood in for by the $unit unit's ExecStart ($(cat "$work/$unit.argv"))${sock:+; socket directory $sock}"
        else
            fail "$b: the $unit unit's ExecStart did not come up${sock:+ (socket directory $sock)}"; show "$work/$unit.log"
        fi
        ;;
    set | shown*) say "shown, not run: $b (${how#*|})" ;;
    esac
done <"$work/order"

finish
