#!/usr/bin/env bash
# check-systemd.sh SRC_DIR - the systemd files in deploy/systemd/ are valid
# and keep the hardening the docs promise:
#   1. `systemd-analyze verify` accepts sluice.service (with ExecStart
#      pointed at an executable that exists here; the real path is checked
#      for form only) and its storage-root drop-in;
#   2. every directive of the hardening list is present with its value;
#   3. `systemd-analyze security --offline` rates the unit 2.0 or lower;
#   4. the drop-in's ReadWritePaths equals SLUICE_STORAGE_ROOT of the
#      example sluice.env, and the sysusers/tmpfiles files name user sluice.
# systemd-analyze comes from the systemd package (deploy/install-deps.sh):
# missing, it is a failure, never a skip.
set -euo pipefail
src="${1:?usage: check-systemd.sh SRC_DIR}"
unit="$src/deploy/systemd/sluice.service"
dropin="$src/deploy/systemd/sluice.service.d/storage-root.conf"
envf="$src/deploy/examples/sluice.env"
passed=0
failed=0
ok() { echo "check-systemd: PASS $*"; passed=$((passed + 1)); }
bad() { echo "check-systemd: FAIL $*"; failed=$((failed + 1)); }

if ! command -v systemd-analyze >/dev/null; then
    echo "check-systemd: systemd-analyze is not installed (deploy/install-deps.sh installs systemd)" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. verify.  ExecStart must name the installed binary; verify needs an
# executable at that path, so a copy points it at a stand-in.
exec_line=$(grep -E '^ExecStart=' "$unit" || true)
case "$exec_line" in
    "ExecStart=/usr/local/bin/sluice serve "*) ok "ExecStart runs /usr/local/bin/sluice serve" ;;
    *) bad "ExecStart is '$exec_line', expected /usr/local/bin/sluice serve ..." ;;
esac
mkdir -p "$tmp/sluice.service.d"
printf '#!/bin/sh\nexit 0\n' >"$tmp/sluice-standin"
chmod 0755 "$tmp/sluice-standin"
sed "s#/usr/local/bin/sluice#$tmp/sluice-standin#" "$unit" >"$tmp/sluice.service"
cp "$dropin" "$tmp/sluice.service.d/"
if out=$(cd "$tmp" && SYSTEMD_UNIT_PATH="$tmp:" systemd-analyze verify "$tmp/sluice.service" 2>&1) &&
    [ -z "$out" ]; then
    ok "systemd-analyze verify sluice.service"
else
    bad "systemd-analyze verify: $out"
fi
# Break the unit on purpose: verify must notice (so the check can fail).
# verify exits 0 on a value it ignores, so any output counts as refusal.
sed 's/^ProtectSystem=strict$/ProtectSystem=sideways/' "$tmp/sluice.service" >"$tmp/broken.service"
out=$(cd "$tmp" && systemd-analyze verify "$tmp/broken.service" 2>&1) || true
if [ -n "$out" ]; then
    ok "systemd-analyze verify refuses a broken copy"
else
    bad "systemd-analyze verify accepted ProtectSystem=sideways"
fi

# 2. hardening directives.
want=(
    "User=sluice" "Group=sluice" "EnvironmentFile=/etc/sluice/sluice.env"
    "StateDirectory=sluice" "RuntimeDirectory=sluice"
    "Environment=SLUICE_STATE_DIR=/var/lib/sluice"
    "ProtectSystem=strict" "ProtectHome=yes" "PrivateTmp=yes" "PrivateDevices=yes"
    "NoNewPrivileges=yes" "CapabilityBoundingSet=" "UMask=0077"
    "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6"
    "SystemCallFilter=@system-service" "KillSignal=SIGTERM"
)
missing=()
for d in "${want[@]}"; do
    grep -qxF "$d" "$unit" || missing+=("$d")
done
if [ "${#missing[@]}" -eq 0 ]; then
    ok "all ${#want[@]} hardening directives present"
else
    bad "missing directives: ${missing[*]}"
fi
if grep -q -- '--socket /run/sluice/sluice.sock' "$unit"; then
    ok "socket in the runtime directory"
else
    bad "ExecStart does not put the socket at /run/sluice/sluice.sock"
fi

# 3. exposure score.
score=$(cd "$tmp" && systemd-analyze security --offline=yes "$tmp/sluice.service" 2>/dev/null |
    sed -n 's/.*Overall exposure level for sluice.service: \([0-9.]*\).*/\1/p')
if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
    ok "exposure level $score (<= 2.0)"
else
    bad "exposure level '${score:-?}' (want <= 2.0)"
fi

# 4. the examples agree.
rw=$(sed -n 's/^ReadWritePaths=//p' "$dropin")
root=$(sed -n 's/^SLUICE_STORAGE_ROOT=//p' "$envf")
if [ -n "$rw" ] && [ "$rw" = "$root" ]; then
    ok "drop-in ReadWritePaths = SLUICE_STORAGE_ROOT ($rw)"
else
    bad "drop-in ReadWritePaths '$rw' differs from sluice.env SLUICE_STORAGE_ROOT '$root'"
fi
if grep -qE '^u sluice ' "$src/deploy/systemd/sluice.sysusers" &&
    grep -qE '^d /etc/sluice 0750 root sluice' "$src/deploy/systemd/sluice.tmpfiles"; then
    ok "sysusers and tmpfiles"
else
    bad "sysusers must create user sluice, tmpfiles /etc/sluice 0750 root:sluice"
fi
if grep -qiE '(token|password|secret|key)=[^/]' "$envf"; then
    bad "sluice.env carries what looks like a secret value"
else
    ok "sluice.env names files, no secret values"
fi

echo "check-systemd: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
