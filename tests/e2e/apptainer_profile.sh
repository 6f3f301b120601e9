#!/usr/bin/env bash
# apptainer_profile.sh - profile `apptainer` end to end on the local testbed:
# the batch script sluice renders, its environment and its mounts, run by a
# real Slurm.  By default job_launcher.executables.apptainer points at the
# apptainer STAND-IN (tests/e2e/lib/apptainer-standin: checks apptainer's
# documented rules, emulates the container's environment and binds, runs the
# command; see docs/testbed.md, "Containers on the testbed"), so the suite
# runs on every release, 22.05 (no apptainer on the host) included.  With
# SLUICE_E2E_APPTAINER=<cluster path of a real apptainer> and
# SLUICE_E2E_APPTAINER_IMAGE=<host path of a SIF with bash and coreutils>
# the same cases run with the real binary (tests/e2e/apptainer_real.sh does
# that on 24.11 and 26.05, whose roots have Debian sid's apptainer).
#
#   1. environment: the request's env, a per-launch secret, a secret_env
#      name and a forward_env name reach the workload, the forward_env one
#      with the value the site's `setup` gave it (not the service's); the
#      task's SLURM_* variables and SLURMD_NODENAME reach it; a variable of
#      the service's environment that forward_env does not name does not,
#      nor does an APPTAINERENV_* variable that setup exported;
#   2. mounts: a request mount (source on the nodes' filesystem, outside the
#      storage root, which mount sources may not reach) is visible at its
#      target; mode ro refuses writes, mode rw writes land in the source;
#   3. HOME under --containall is not the job user's host home;
#   4. a two-pool hetjob (a100 with a GPU, so --nv, and h100): each pool runs
#      in its own container and learns the other's host; the GPU pool sees
#      the CUDA_VISIBLE_DEVICES Slurm set for its task, the other none;
#   5. a mount source that does not exist: sluice accepts it (it checks
#      only the image on the service side), the container runtime refuses it
#      ("mount source ... doesn't exist"), the launch ends EXECUTION_ERROR (1);
#   6. an NVFlare-form request without a command: the site's python_path
#      runs the worker arguments, the parent URL carries the site's
#      parent_host, and the GPU Slurm gave the task is visible inside;
#   7. an NVFlare node group (2 nodes, additional_node_command) under
#      apptainer: each rank's container sees its own rank and GPU; rank 0
#      has the request's secrets (NVFlare's job credential among them),
#      rank 1 has none of them and gets the Cell API bootstrap instead.
#
# Runs as root against the testbed's slurmrestd on 127.0.0.1 only; jobs run
# as the testbed's job user, 1 node per pool, time limit 5 min.  Last line:
# "apptainer_profile@<release>: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TESTS=7
NAME=apptainer_profile
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

SLUICE=${SLUICE_BIN:-$REPO/build/sluice}
[ -x "$SLUICE" ] || abort "no sluice binary at $SLUICE (set SLUICE_BIN)"
e2e_testbed_env
e2e_require_loopback
e2e_require_running

run="a$(date +%s)$$"
work=$(mktemp -d /tmp/sluice-e2e-apptainer.XXXXXX)
# Host view and cluster view of the shared storage (they differ for a
# release in a root), and the host view of the nodes' own filesystem.
host_store=$SLUICE_TB_STORAGE_ROOT
clu_store=${SLUICE_TB_CLUSTER_STORAGE_ROOT:-$SLUICE_TB_STORAGE_ROOT}
node_root=
if [ "$host_store" != "$clu_store" ]; then
    node_root=${host_store%"$clu_store"}
fi
base="$host_store/e2e-apptainer-$run"
cbase="$clu_store/e2e-apptainer-$run"
# Mount sources: outside the storage root, at the same path on the nodes
# (data) and, seen from the host, below the nodes' root (hdata).
data="/var/tmp/sluice-e2e-apptainer-data-$run"
hdata="$node_root$data"
job_user=$SLUICE_TB_USER
home_marker=
cleanup() {
    rm -rf "$work" "$base" "$hdata"
    if [ -n "$home_marker" ]; then rm -f "$home_marker"; fi
}
trap cleanup EXIT

# ------------------------------------------------------------ the runtime
mkdir -p "$base/bin" "$base/images" "$hdata/data-ro" "$hdata/data-rw"
chmod 0755 "$base" "$base/bin" "$base/images"
if [ -n "${SLUICE_E2E_APPTAINER:-}" ]; then
    runtime=$SLUICE_E2E_APPTAINER
    mode=real
    if [ -z "${SLUICE_E2E_APPTAINER_IMAGE:-}" ] || [ ! -f "$SLUICE_E2E_APPTAINER_IMAGE" ]; then
        abort "SLUICE_E2E_APPTAINER is set: SLUICE_E2E_APPTAINER_IMAGE must name a SIF with bash and coreutils"
    fi
    cp "$SLUICE_E2E_APPTAINER_IMAGE" "$base/images/e2e.sif"
else
    mode=stand-in
    install -m 0755 "$HERE/lib/apptainer-standin" "$base/bin/apptainer-standin"
    runtime="$cbase/bin/apptainer-standin"
    # A stand-in runs no image: any small regular file does.
    printf 'not a real SIF: sluice e2e fake image for the apptainer stand-in\n' >"$base/images/e2e.sif"
fi
chmod 0644 "$base/images/e2e.sif"
say "runtime: $mode ($runtime)"
# The request names the image as the service sees it; sluice checks it there
# and renders the cluster path.
image="$base/images/e2e.sif"
printf 'hello-%s\n' "$run" >"$hdata/data-ro/hello.txt"
chown -R "$job_user" "$hdata/data-ro" "$hdata/data-rw"
chmod 0755 "$hdata" "$hdata/data-ro" "$hdata/data-rw"

# -------------------------------------------------------- the site config
site="$work/site.yaml"
state="$work/state"
bash "$REPO/deploy/testbed/site-config.sh" |
    awk -v rt="$runtime" -v run="$run" -v img="$base/images/" '
        /^  sandbox: / { print "  sandbox: apptainer"; next }
        /^  multi_node_port_range: / {
            print; print "  forward_env: [E2E_FWD]"
            print "  setup: |"
            print "    export E2E_FWD=fwd-setup-" run
            print "    export APPTAINERENV_E2E_SETUP_LEAK=1"
            print "  python_path: /bin/bash"
            print "  parent_host: parent.e2e.invalid"
            next }
        /^  executables:$/ { print; print "    apptainer: " rt; done = 1; next }
        /^gpu_series:$/ && !done { print "  executables:"; print "    apptainer: " rt }
        /^policy:$/ { print; print "  allowed_images: [" img "]"
                      print "  allowed_secret_env: [E2E_SVC_SECRET]"
                      print "  default_gpu_series: h100"; next }
        { print }' >"$site"
grep -q "^    apptainer: $runtime\$" "$site" || abort "could not write executables.apptainer into $site"

# launch NAME: `sluice launch --wait` on $work/NAME.json; sets $rc, output in
# $work/NAME.out.
launch() {
    rc=0
    timeout 300 "$SLUICE" launch "$work/$1.json" --wait --config "$site" --state-dir "$state" \
        >"$work/$1.out" 2>&1 || rc=$?
}
artifacts() { cat "$state/artifacts/$1/stdout.log" 2>/dev/null || true; }
errors() { cat "$state/artifacts/$1/stderr.log" 2>/dev/null || true; }
show() {
    sed 's/^/    | /' "$work/$1.out" >&2
    errors "$1-$run" | sed 's/^/    stderr| /' >&2
}
pool='{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}'

# ------------------------------------------------------- 1. environment
secret="s3cr3t-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
svc_secret="svc-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export E2E_FWD="svc-$run"                # named by forward_env: the job's own value wins
export E2E_SVC_SECRET="$svc_secret"      # named by the request's secret_env
export E2E_SVC_LEAK="leak-$run"          # named by nothing: must not reach it
cat >"$work/env.json" <<JSON
{"launch_id": "env-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "apptainer",
 "image": "$image", "command": "/bin/bash", "time_limit": 5,
 "args": ["-c", "echo req=\${E2E_REQ-unset} fwd=\${E2E_FWD-unset} leak=\${E2E_SVC_LEAK-unset} launch=\${SLUICE_LAUNCH_ID-unset}; [ \"\${#E2E_SECRET}\" -eq ${#secret} ] && echo secret-ok; [ \"\${#E2E_SVC_SECRET}\" -eq ${#svc_secret} ] && echo secret-env-ok; echo slurm=\${SLURM_JOB_ID:+job}/\${SLURM_PROCID:+procid}/\${SLURMD_NODENAME:+node} setup-leak=\${E2E_SETUP_LEAK-unset}; echo slurm-vars=\$(compgen -e | grep -c '^SLURM_' || true)"],
 "env": {"E2E_REQ": "req-$run"},
 "secrets": {"E2E_SECRET": "$secret"},
 "secret_env": ["E2E_SVC_SECRET"],
 "pools": [$pool]}
JSON
launch env
out=$(artifacts "env-$run")
if [ "$rc" -eq 0 ] &&
    grep -qx "req=req-$run fwd=fwd-setup-$run leak=unset launch=env-$run" <<<"$out" &&
    grep -qx 'secret-ok' <<<"$out" && grep -qx 'secret-env-ok' <<<"$out" &&
    grep -qx 'slurm=job/procid/node setup-leak=unset' <<<"$out"; then
    pass "environment: env, secrets, secret_env arrive; forward_env with setup's value; the task's SLURM_* arrive ($(grep '^slurm-vars=' <<<"$out")); an unnamed service variable and setup's APPTAINERENV_* do not"
else
    fail "environment (exit $rc): $out"; show env
fi
unset E2E_FWD E2E_SVC_SECRET E2E_SVC_LEAK

# ------------------------------------------------------------ 2. mounts
tgt="/tmp/sluice-e2e-$run"
cat >"$work/mounts.json" <<JSON
{"launch_id": "mounts-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "apptainer",
 "image": "$image", "command": "/bin/bash", "time_limit": 5,
 "args": ["-c", "echo read=\$(cat $tgt/ro/hello.txt); if (echo x >$tgt/ro/probe) 2>/dev/null; then echo ro=writable; else echo ro=refused; fi; echo rw-$run >$tgt/rw/out.txt && echo rw=written"],
 "mounts": [{"source": "$data/data-ro", "target": "$tgt/ro", "mode": "ro"},
            {"source": "$data/data-rw", "target": "$tgt/rw", "mode": "rw"}],
 "pools": [$pool]}
JSON
launch mounts
out=$(artifacts "mounts-$run")
leftover=
if [ "$mode" = stand-in ] && { [ -e "$node_root$tgt" ] || [ -L "$node_root$tgt/ro" ]; }; then
    leftover=" (stand-in left $tgt behind)"
fi
if [ "$rc" -eq 0 ] && grep -qx "read=hello-$run" <<<"$out" && grep -qx 'ro=refused' <<<"$out" &&
    grep -qx 'rw=written' <<<"$out" && [ ! -e "$hdata/data-ro/probe" ] &&
    [ "$(cat "$hdata/data-rw/out.txt" 2>/dev/null)" = "rw-$run" ] && [ -z "$leftover" ]; then
    pass "mounts: source seen at its target; ro refuses writes, rw writes reach the source"
else
    fail "mounts (exit $rc)$leftover: $out"; show mounts
fi

# -------------------------------------------------------------- 3. HOME
# A marker in the job user's home on the nodes: a container that shares the
# host home would see it.
host_home=$(awk -F: -v u="$job_user" '$1 == u { print $6 }' "$node_root/etc/passwd")
if [ -n "$host_home" ] && [ -d "$node_root$host_home" ]; then
    home_marker="$node_root$host_home/.sluice-e2e-home-$run"
    : >"$home_marker"
fi
cat >"$work/home.json" <<JSON
{"launch_id": "home-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "apptainer",
 "image": "$image", "command": "/bin/bash", "time_limit": 5,
 "args": ["-c", "echo home=\$HOME; if [ -e \"\$HOME/.sluice-e2e-home-$run\" ]; then echo home-view=host; else echo home-view=private; fi"],
 "pools": [$pool]}
JSON
launch home
out=$(artifacts "home-$run")
if [ "$rc" -eq 0 ] && [ -n "$home_marker" ] && grep -qx 'home-view=private' <<<"$out" &&
    grep -q '^home=/' <<<"$out"; then
    pass "HOME under --containall is not the job user's host home ($host_home): $(grep '^home=' <<<"$out")"
else
    fail "HOME (exit $rc, host home '${host_home:-?}', marker '${home_marker:-none}'): $out"; show home
fi

# ------------------------------------------------------------ 4. hetjob
cat >"$work/het.json" <<JSON
{"launch_id": "het-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "apptainer",
 "image": "$image", "command": "/bin/bash", "time_limit": 5,
 "pools": [
  {"name": "trainer", "gpu_series": "a100", "nodes": 1, "gpus_per_node": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200,
   "args": ["-c", "echo pool=\$SLUICE_POOL image=\${APPTAINER_NAME-none} peer=\$SLUICE_POOL_ROLLOUT_HOST cuda=\${CUDA_VISIBLE_DEVICES-unset}"]},
  {"name": "rollout", "gpu_series": "h100", "nodes": 1, "cpus_per_node": 1,
   "mem_per_node_mib": 200,
   "args": ["-c", "echo pool=\$SLUICE_POOL image=\${APPTAINER_NAME-none} peer=\$SLUICE_POOL_TRAINER_HOST cuda=\${CUDA_VISIBLE_DEVICES-unset}"]}]}
JSON
launch het
out=$(artifacts "het-$run")
if [ "$rc" -eq 0 ] && grep -qE '^pool=trainer image=e2e.sif peer=tb[23] cuda=[0-9]+$' <<<"$out" &&
    grep -qx 'pool=rollout image=e2e.sif peer=tb1 cuda=unset' <<<"$out"; then
    pass "hetjob: both pools ran in their container (trainer with --nv, $(grep -o 'cuda=[0-9]*' <<<"$out" | head -1) from Slurm) and learned each other's host"
else
    fail "hetjob (exit $rc): $out"; show het
fi

# ------------------------------------------------- 5. missing bind source
cat >"$work/nosrc.json" <<JSON
{"launch_id": "nosrc-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "apptainer",
 "image": "$image", "command": "/bin/bash", "args": ["-c", "echo should-not-run"], "time_limit": 5,
 "mounts": [{"source": "$data/no-such-dir", "target": "$tgt/missing", "mode": "ro"}],
 "pools": [$pool]}
JSON
launch nosrc
out=$(artifacts "nosrc-$run")
err=$(errors "nosrc-$run")
if [ "$rc" -eq 1 ] && grep -q "mount source $data/no-such-dir doesn't exist" <<<"$err" &&
    ! grep -q 'should-not-run' <<<"$out"; then
    pass "a missing mount source is refused by the runtime; EXECUTION_ERROR (1): $(grep -m1 "mount source $data/no-such-dir" <<<"$err")"
else
    fail "missing mount source (exit $rc, want 1): stderr: $err"; show nosrc
fi

# ------------------------------------------- 6. NVFlare form, python_path
# No command: the site's python_path (/bin/bash here) runs the worker
# arguments; tcp://localhost:8102 (internal_port) gets parent_host.
cat >"$work/nvfl.json" <<JSON
{"launch_id": "nvfl-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "apptainer",
 "args": ["-c", "echo shell=\$BASH url=\$1 cuda=\${CUDA_VISIBLE_DEVICES-unset} rank=\${NVFL_NODE_RANK-unset}", "worker", "tcp://localhost:8102"],
 "resource_spec": {"$SLUICE_TB_CLUSTER": {"num_of_gpus": 1}},
 "launcher_spec": {"$SLUICE_TB_CLUSTER": {"slurm": {"image": "$image", "cpus_per_node": 1,
                                                  "mem_per_node": 200, "time": "00:05:00"}}}}
JSON
launch nvfl
out=$(artifacts "nvfl-$run")
if [ "$rc" -eq 0 ] &&
    grep -qE '^shell=/bin/bash url=tcp://parent\.e2e\.invalid:8102 cuda=[0-9]+ rank=0$' <<<"$out"; then
    pass "NVFlare form: python_path ran the worker, the parent URL got parent_host, the task's GPU is visible: $out"
else
    fail "NVFlare form (exit $rc): $out"; show nvfl
fi

# ------------------------------------------------ 7. NVFlare node group
# Rank 0 runs the site's python_path (/bin/bash) with the worker arguments;
# rank 1 runs additional_node_command (split on blanks, no shell), which
# lists its variables: it needs nothing but bash in the image.
cat >"$work/group.json" <<JSON
{"launch_id": "group-$run", "site": "$SLUICE_TB_CLUSTER", "profile": "apptainer",
 "args": ["-c", "echo rank=\$NVFL_NODE_RANK tok=\${NVFLARE_JOB_AUTH_TOKEN:+set} key=\${E2E_KEY:+set} api=\${CLIENT_API_TYPE-unset} cuda=\${CUDA_VISIBLE_DEVICES-unset} image=\${APPTAINER_NAME-none}"],
 "secrets": {"NVFLARE_JOB_AUTH_TOKEN": "tok-$run", "E2E_KEY": "key-$run"},
 "resource_spec": {"$SLUICE_TB_CLUSTER": {"num_of_gpus": 2}},
 "launcher_spec": {"$SLUICE_TB_CLUSTER": {"slurm": {"image": "$image", "nodes": 2, "gpus_per_node": 1,
   "cpus_per_node": 1, "mem_per_node": 200, "time": "00:05:00",
   "additional_node_command": "/bin/bash -c set"}}}}
JSON
launch group
out=$(artifacts "group-$run")
if [ "$rc" -eq 0 ] &&
    grep -qE '^rank=0 tok=set key=set api=unset cuda=[0-9]+ image=e2e.sif$' <<<"$out" &&
    grep -qx 'NVFL_NODE_RANK=1' <<<"$out" && grep -qx 'CLIENT_API_TYPE=CELL_API' <<<"$out" &&
    grep -qx 'NVFLARE_CLIENT_API_BOOTSTRAP=client_api_bootstrap_1.json' <<<"$out" &&
    grep -qE '^CUDA_VISIBLE_DEVICES=[0-9]+$' <<<"$out" &&
    ! grep -qE '^(NVFLARE_JOB_AUTH_TOKEN|E2E_KEY)=' <<<"$out" &&
    ! grep -qE -- "(tok|key)-$run" <<<"$out"; then
    pass "NVFlare node group: credentials on rank 0 only, rank 1 on the Cell API bootstrap, each rank's GPU inside: $(grep '^rank=0' <<<"$out")"
else
    fail "NVFlare node group (exit $rc): $out"; show group
fi

finish
