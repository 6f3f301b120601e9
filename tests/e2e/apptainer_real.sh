#!/usr/bin/env bash
# e2e-releases: 24.11 26.05
# apptainer_real.sh - profile `apptainer` with the REAL apptainer (Debian
# sid's 1.4.5, installed in the 24.11 and 26.05 roots by root.sh), run by a
# real Slurm whose daemons, and so the jobs, live in a mount namespace entered
# with pivot_root (deploy/testbed/lib.sh tb_enter; under chroot apptainer
# refuses to run).  Registered on 24.11 and 26.05 only: 22.05 runs on the
# host, which has no apptainer.
#
# The image: a SIF built here, inside the root's namespace as root, from a
# directory holding the root's own bash (and its libraries) and busybox-static
# (cat, grep, sha256sum, ...).  Then:
#   0. `apptainer exec --userns --containall --cleanenv --no-eval --no-privs`
#      of that SIF as the job user must work, or every case FAILS (never a
#      skip, never a pass);
#   1-7. tests/e2e/apptainer_profile.sh with the real binary: env, secrets,
#      secret_env and forward_env after setup; a request's ro and rw mounts;
#      HOME under --containall is not the host home; a two-pool hetjob; a
#      missing mount source refused by apptainer itself; the NVFlare form
#      (python_path, parent_host); an NVFlare 2-node pool with the
#      credentials on rank 0 only;
#   8. the job ran in the image, not on the node (/.singularity.d there, the
#      node's slurmd not), and --cleanenv as rendered: a variable setup put in
#      the task's environment, not named by forward_env, is absent inside;
#   9. a study dataset is mounted read-only at /data/<study>/<dataset>: read,
#      writes refused although the job user owns the source;
#  10. the NVFlare form with the site's workspace: the launcher mounts (the
#      per-attempt sandbox at the workspace, the run directory rw and as the
#      working directory, startup and local read-only, resolv.conf);
#  11. hostile values (`$(...)`, backticks, `;`, quotes, newlines) in env and
#      args reach the workload byte for byte (SHA-256 compared) and run
#      nothing, inside the container or out (--no-eval, quoting).
# GPUs: the testbed has none.  Cases 4, 6 and 7 ask Slurm for its stand-in
# GPUs, so the render adds --nv, which the real apptainer accepts and, with
# no NVIDIA driver on the node, binds nothing for: they show that
# CUDA_VISIBLE_DEVICES from Slurm reaches the container, never that a GPU
# or its libraries do.  What --nv / --rocm bind stays shown by the stand-in
# (apptainer_profile.sh on every release) and the golden cases only.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only; jobs run
# as the testbed's job user.  Last line:
# "apptainer_real@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=12
NAME=apptainer_real
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

APPTAINER=/usr/bin/apptainer # its path in the root, as the jobs see it
[ "$(id -u)" -eq 0 ] || abort "needs root (it enters the testbed's root to build the image)"
e2e_launch_setup apptainer-real
[ -n "${SLUICE_TB_ROOT:-}" ] ||
    abort "release $SLUICE_TB_RELEASE has no root: the real apptainer lives in the 24.11 and 26.05 roots"
node_root=$SLUICE_TB_ROOT
host_store=$SLUICE_TB_STORAGE_ROOT
data="/var/tmp/sluice-e2e-apptainer-real-$run" # on the nodes (inside the root)
hdata="$node_root$data"
job_user=$SLUICE_TB_USER
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() { rm -rf "$work" "$hdata" /tmp/sluice-pwned-"$run"-*; }
trap cleanup EXIT
chmod 0755 "$work"

# enter CMD...: CMD inside the root's namespace, as the daemons run.
enter() { "$REPO/deploy/testbed/enter.sh" --release "$SLUICE_TB_RELEASE" "$@"; }
first_error() { grep -m1 -E 'FATAL|ERROR|[Ee]rror' "$1" || head -n1 "$1" || true; }

# ------------------------------------------------------------- the image
[ -x "$node_root$APPTAINER" ] ||
    abort "no $APPTAINER in $node_root (deploy/testbed/root.sh --release $SLUICE_TB_RELEASE prepare installs it)"
say "runtime: $(enter "$APPTAINER" --version 2>&1 | head -n1) in $node_root"
cat >"$work/build-image.sh" <<'EOF'
set -eu
rootfs=$1/rootfs
mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/etc" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev"
for f in /bin/bash $(ldd /bin/bash | grep -o '/[^ ]*'); do
    mkdir -p "$rootfs$(dirname "$f")"
    cp -L "$f" "$rootfs$f"
done
cp /bin/busybox "$rootfs/bin/busybox"
for a in cat grep sha256sum ls id env mkdir rm touch true false sleep wc head tr sh; do
    ln -s busybox "$rootfs/bin/$a"
done
apptainer build --force "$1/e2e.sif" "$rootfs"
EOF
if ! timeout 300 "$REPO/deploy/testbed/enter.sh" --release "$SLUICE_TB_RELEASE" \
    /bin/sh "$work/build-image.sh" "$work" >"$work/build.log" 2>&1; then
    sed 's/^/    build| /' "$work/build.log"
    abort "apptainer build of the test image failed: $(first_error "$work/build.log")"
fi
chmod 0644 "$work/e2e.sif"

# ----------------------------------------------- 0. apptainer exec works
# shellcheck disable=SC2016 # expanded inside the container
if timeout 120 "$REPO/deploy/testbed/enter.sh" --release "$SLUICE_TB_RELEASE" \
    runuser -u "$job_user" -- "$APPTAINER" exec --userns --containall --cleanenv --no-eval \
    --no-privs "$work/e2e.sif" /bin/bash -c 'echo in-image=$([ -d /.singularity.d ] && echo yes)' \
    >"$work/exec.log" 2>&1 && grep -qx 'in-image=yes' "$work/exec.log"; then
    pass "apptainer exec of the test SIF as $job_user in the root's namespace works"
else
    sed 's/^/    exec| /' "$work/exec.log"
    abort "apptainer exec as $job_user cannot run: $(first_error "$work/exec.log")"
fi

# ------------------------------- 1-7. apptainer_profile.sh, for real
rc=0
SLUICE_E2E_APPTAINER=$APPTAINER SLUICE_E2E_APPTAINER_IMAGE="$work/e2e.sif" \
    bash "$HERE/apptainer_profile.sh" >"$work/profile.out" 2>&1 || rc=$?
grep -v -E '^apptainer_profile@[^:]*: (PASS|FAIL) ' "$work/profile.out" | sed 's/^/    profile| /'
while IFS= read -r line; do
    case "$line" in
        *": PASS "*) pass "profile: ${line#*: PASS }" ;;
        *": FAIL "*) fail "profile: ${line#*: FAIL }" ;;
    esac
done < <(grep -E '^apptainer_profile@[^:]*: (PASS|FAIL) ' "$work/profile.out")
[ "$rc" -eq 0 ] || say "apptainer_profile.sh exited $rc: $(tail -n1 "$work/profile.out")"

# ---------------------------------------------- this suite's own cases
mkdir -p "$hdata/ds" "$hdata/ws/startup" "$hdata/ws/local" "$hdata/ws/job-$run"
printf 'dataset-%s\n' "$run" >"$hdata/ds/hello.txt"
printf '{"kit": "%s"}\n' "$run" >"$hdata/ws/startup/fed_client.json"
printf '{"local": "%s"}\n' "$run" >"$hdata/ws/local/resources.json"
# The job user owns every source: only a read-only bind can refuse a write.
chown -R "$job_user" "$hdata"
chmod -R u+rwX,go+rX "$hdata"
image="$host_store/e2e-apptainer-real-$run.sif"
cp "$work/e2e.sif" "$image"
chmod 0644 "$image"
ws="$data/ws"
awk -v run="$run" -v ws="$ws" -v img="$host_store/" '
    /^  sandbox: / { print "  sandbox: apptainer"; next }
    /^  multi_node_port_range: / {
        print
        print "  workspace: " ws
        print "  python_path: /bin/bash"
        print "  setup: |"
        print "    export E2E_PLAIN=plain-" run
        next }
    /^policy:$/ { print; print "  allowed_images: [" img "]"; next }
    { print }' "$site" >"$site.new"
mv "$site.new" "$site"
grep -q "^  workspace: $ws\$" "$site" || abort "could not write job_launcher.workspace into $site"
printf 'format_version: 2\nstudies:\n  s29:\n    datasets:\n      ds:\n        source: %s\n        mode: ro\n' \
    "$data/ds" >"$work/study_runtime.yaml"

launch() { # launch NAME: sets rc; output in $work/NAME.out
    rc=0
    timeout 300 "$SLUICE" launch "$work/$1.json" --wait --config "$site" --state-dir "$state" \
        --study-runtime "$work/study_runtime.yaml" >"$work/$1.out" 2>&1 || rc=$?
}
artifacts() { cat "$state/artifacts/$1-$run/stdout.log" 2>/dev/null || true; }
show() {
    sed 's/^/    | /' "$work/$1.out"
    sed 's/^/    stderr| /' "$state/artifacts/$1-$run/stderr.log" 2>/dev/null || true
}
pool='{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}'

# -------------------------------------- 8. the image's root, --cleanenv
cat >"$work/view.json" <<JSON
{"launch_id": "view-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "apptainer",
 "image": "$image", "command": "/bin/bash", "time_limit": 5,
 "args": ["-c", "echo sif=\$([ -d /.singularity.d ] && echo yes || echo no) node-slurmd=\$([ -e /usr/sbin/slurmd ] && echo visible || echo absent) plain=\${E2E_PLAIN-unset} name=\${APPTAINER_NAME-unset}"],
 "pools": [$pool]}
JSON
launch view
out=$(artifacts view)
want="sif=yes node-slurmd=absent plain=unset name=e2e-apptainer-real-$run.sif"
if [ "$rc" -eq 0 ] && grep -qx -- "$want" <<<"$out"; then
    pass "the job ran in the SIF (its /.singularity.d, not the node's slurmd); setup's E2E_PLAIN, in the task's environment, is absent inside (--cleanenv)"
else
    fail "image root / --cleanenv (exit $rc, want '$want'): $out"; show view
fi

# --------------------------------------------- 9. a study dataset, ro
cat >"$work/study.json" <<JSON
{"launch_id": "study-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "apptainer", "study": "s29",
 "image": "$image", "command": "/bin/bash", "time_limit": 5,
 "args": ["-c", "echo read=\$(cat /data/s29/ds/hello.txt); if (echo x >/data/s29/ds/probe) 2>/dev/null; then echo write=accepted; else echo write=refused; fi; if (rm -f /data/s29/ds/hello.txt) 2>/dev/null && [ ! -e /data/s29/ds/hello.txt ]; then echo rm=accepted; else echo rm=refused; fi"],
 "pools": [$pool]}
JSON
launch study
out=$(artifacts study)
if [ "$rc" -eq 0 ] && grep -qx "read=dataset-$run" <<<"$out" && grep -qx 'write=refused' <<<"$out" &&
    grep -qx 'rm=refused' <<<"$out" && [ ! -e "$hdata/ds/probe" ] && [ -f "$hdata/ds/hello.txt" ]; then
    pass "study dataset at /data/s29/ds: read; writes and deletes refused although $job_user owns the source"
else
    fail "study dataset (exit $rc): $out"; show study
fi

# ----------------------------- 10. NVFlare form, workspace mounts
# No command: python_path (/bin/bash) runs the worker arguments in the run
# directory <workspace>/job-<run>.
nv_script="echo pwd=\$PWD; echo kit=\$(cat $ws/startup/fed_client.json); echo local=\$(cat $ws/local/resources.json);"
nv_script+=" if (echo x >$ws/startup/probe) 2>/dev/null; then echo startup=writable; else echo startup=refused; fi;"
nv_script+=" echo out-$run >$ws/job-$run/result.txt && echo rundir=written;"
nv_script+=" echo ws-$run >$ws/sandbox-probe.txt && echo ws=written; echo ws-list=\$(ls $ws | tr '\\\\n' ' ');"
nv_script+=" if (echo x >>/etc/resolv.conf) 2>/dev/null; then echo resolv=writable; else echo resolv=refused; fi"
cat >"$work/nvws.json" <<JSON
{"launch_id": "nvws-$run", "site": "$SLUICE_TB_CLUSTER", "workdir": "$ws/job-$run",
 "args": ["-c", "$nv_script", "worker", "tcp://localhost:8102"],
 "resource_spec": {"$SLUICE_TB_CLUSTER": {"num_of_gpus": 0}},
 "launcher_spec": {"$SLUICE_TB_CLUSTER": {"slurm": {"image": "$image", "cpus_per_node": 1,
                                                  "mem_per_node": 200, "time": "00:05:00"}}}}
JSON
launch nvws
out=$(artifacts nvws)
if [ "$rc" -eq 0 ] && grep -qx "pwd=$ws/job-$run" <<<"$out" &&
    grep -qx "kit={\"kit\": \"$run\"}" <<<"$out" && grep -qx "local={\"local\": \"$run\"}" <<<"$out" &&
    grep -qx 'startup=refused' <<<"$out" && grep -qx 'rundir=written' <<<"$out" &&
    grep -qx 'ws=written' <<<"$out" && grep -qx 'resolv=refused' <<<"$out" &&
    [ "$(cat "$hdata/ws/job-$run/result.txt" 2>/dev/null)" = "out-$run" ] &&
    [ ! -e "$hdata/ws/sandbox-probe.txt" ] && [ ! -e "$hdata/ws/startup/probe" ]; then
    pass "NVFlare workspace mounts: run directory rw and the working directory, startup and local ro, a write to the workspace lands in the per-attempt sandbox (not the site's workspace), resolv.conf ro: $(grep '^ws-list=' <<<"$out")"
else
    fail "NVFlare workspace mounts (exit $rc): $out"; show nvws
fi

# ------------------------------------------------- 11. hostile values
pw=/tmp/sluice-pwned-$run
h_sub="\$(touch pwned_sub; touch $pw-sub)"
h_tick="\`touch pwned_tick; touch $pw-tick\`"
h_semi="a; touch pwned_semi; touch $pw-semi"
h_quote="'; touch pwned_q; touch $pw-q; '\""
h_nl=$'a\nb\nexport EVIL=1\ntouch pwned_nl'
# jq writes the JSON: the values travel exactly as above.
jq -n --arg id "hostile-$run" --arg site "$SLUICE_TB_CLUSTER" --arg image "$image" \
    --arg sub "$h_sub" --arg tick "$h_tick" --arg semi "$h_semi" --arg quote "$h_quote" --arg nl "$h_nl" \
    --argjson pool "$pool" '{launch_id: $id, site: $site, profile: "apptainer", image: $image,
      command: "/bin/bash", time_limit: 5,
      args: ["-c", "for v in \"$H_SUB\" \"$H_TICK\" \"$H_SEMI\" \"$H_QUOTE\" \"$H_NL\" \"$1\" \"$2\"; do printf %s \"$v\" | sha256sum; done; echo evil=${EVIL-unset} pwned=$(ls pwned* 2>/dev/null | wc -l)", "arg0", $sub, $semi],
      env: {H_SUB: $sub, H_TICK: $tick, H_SEMI: $semi, H_QUOTE: $quote, H_NL: $nl},
      pools: [$pool]}' >"$work/hostile.json"
launch hostile
out=$(artifacts hostile)
want=$(for v in "$h_sub" "$h_tick" "$h_semi" "$h_quote" "$h_nl" "$h_sub" "$h_semi"; do
    printf %s "$v" | sha256sum | cut -d' ' -f1
done)
got=$(grep -oE '^[0-9a-f]{64}' <<<"$out" || true)
pwned=$(find "$host_store" "$hdata" -name 'pwned*' 2>/dev/null | head -n 3)
pwned+=$(find /tmp -maxdepth 1 -name "sluice-pwned-$run-*" 2>/dev/null | head -n 3)
if [ "$rc" -eq 0 ] && [ "$got" = "$want" ] && grep -qx 'evil=unset pwned=0' <<<"$out" && [ -z "$pwned" ]; then
    pass "hostile env values and args (\$(...), backticks, ;, quotes, newlines) arrived byte for byte (7 SHA-256 equal) and ran nothing inside or outside the container"
else
    fail "hostile values (exit $rc, files: ${pwned:-none}): $out"; show hostile
fi

finish
