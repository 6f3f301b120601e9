#!/usr/bin/env python3
"""An NVFlare-style job launcher built on sluice_client.

NVFlare's job launchers (``JobLauncherSpec``) start a job and hand back a
``JobHandleSpec`` whose ``poll()`` answers ``JobReturnCode.UNKNOWN`` while the
job runs and its return code once it is over, ``wait()`` blocks until then and
``terminate()`` aborts it.  NVFlare's Slurm launcher
(shared/seeds/nvflare-slurm-manager.py.txt, ``_result_for``) maps Slurm's end
to those codes; sluice already decides the result the same way
(docs/state-machine.md, "States and results"), so a launcher on top of sluice
only has to carry the code over:

=====================  ======  ===========================================
sluice result          code    NVFlare return code
=====================  ======  ===========================================
SUCCEEDED              0       JobReturnCode.SUCCESS (0)
EXECUTION_ERROR        1       JobReturnCode.EXECUTION_ERROR (1)
ABORTED                9       JobReturnCode.ABORTED (9): the user aborted
WORKLOAD_101..103      101-3   kept: the worker's ProcessExitCode
                               (EXCEPTION 101, UNSAFE_COMPONENT 102,
                               CONFIG_ERROR 103)
INFRASTRUCTURE_ERROR   104     104, the infrastructure failure code of
                               NVFlare's current launcher (its older code,
                               the seed, returned ProcessExitCode.EXCEPTION)
(still live)           --      JobReturnCode.UNKNOWN (127)
=====================  ======  ===========================================

The request is in NVFlare's job form (``resource_spec`` + ``launcher_spec``,
docs/launch-request.md, "NVFlare job form"), as NVFlare's launcher would send
it for one client job.  The NVFlare classes are not imported (NVFlare is not
installed here); the two code tables below have NVFlare's values.

Run (exit status: the NVFlare return code)::

    nvflare_launcher.py --server unix:/run/sluice/sluice.sock --site site-1 \\
        --job-id 3f2a -- /usr/bin/python3 -u -m nvflare.private.fed.app.client.worker_process ...
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional

from sluice_client import Client, Launch, SluiceError


class JobReturnCode:
    """nvflare.apis.job_launcher_spec.JobReturnCode."""

    SUCCESS = 0
    EXECUTION_ERROR = 1
    ABORTED = 9
    UNKNOWN = 127


class ProcessExitCode:
    """nvflare.fuel.common.exit_codes.ProcessExitCode (the worker's own codes)."""

    EXCEPTION = 101
    UNSAFE_COMPONENT = 102
    CONFIG_ERROR = 103


INFRASTRUCTURE_ERROR = 104

_NAMES = {0: "SUCCESS", 1: "EXECUTION_ERROR", 9: "ABORTED", 101: "EXCEPTION", 102: "UNSAFE_COMPONENT",
          103: "CONFIG_ERROR", 104: "INFRASTRUCTURE_ERROR", 127: "UNKNOWN"}


def nvflare_return_code(launch: Launch) -> int:
    """The NVFlare return code of a sluice launch (UNKNOWN while live)."""
    if not launch.terminal or launch.result_code is None:
        return JobReturnCode.UNKNOWN
    code = launch.result_code
    if code in (JobReturnCode.SUCCESS, JobReturnCode.EXECUTION_ERROR, JobReturnCode.ABORTED):
        return code
    if code in (ProcessExitCode.EXCEPTION, ProcessExitCode.UNSAFE_COMPONENT, ProcessExitCode.CONFIG_ERROR):
        return code
    if code == INFRASTRUCTURE_ERROR:
        return INFRASTRUCTURE_ERROR
    return JobReturnCode.EXECUTION_ERROR  # a code this launcher does not know: a failure


class SluiceJobHandle:
    """JobHandleSpec on a sluice launch."""

    def __init__(self, client: Client, launch_id: str) -> None:
        self.client = client
        self.launch_id = launch_id
        self.launch: Optional[Launch] = None

    def poll(self) -> int:
        self.launch = self.client.get(self.launch_id)
        assert self.launch is not None
        return nvflare_return_code(self.launch)

    def wait(self, timeout: Optional[float] = None) -> int:
        self.launch = self.client.wait(self.launch_id, timeout=timeout)
        return nvflare_return_code(self.launch)

    def terminate(self) -> None:
        self.client.cancel(self.launch_id)


class SluiceJobLauncher:
    """JobLauncherSpec.launch_job on sluice: one client job, NVFlare form."""

    def __init__(self, client: Client, site: str, *, nodes: int = 1, cpus_per_node: int = 1,
                 mem_per_node: str = "256M", time_limit: str = "00:10:00", profile: str = "none") -> None:
        self.client, self.site = client, site
        self.slurm = {"nodes": nodes, "cpus_per_node": cpus_per_node, "mem_per_node": mem_per_node,
                      "time": time_limit}
        self.profile = profile

    def launch_job(self, job_id: str, command: str, args: List[str], num_of_gpus: int = 0) -> SluiceJobHandle:
        request = {
            "launch_id": "nvfl-%s" % job_id,
            "site": self.site,
            "profile": self.profile,
            "command": command,
            "args": args,
            "resource_spec": {self.site: {"num_of_gpus": num_of_gpus}},
            "launcher_spec": {self.site: {"slurm": dict(self.slurm)}},
        }
        launch = self.client.create(request)  # idempotent: a retried launch_job gets the same launch
        return SluiceJobHandle(self.client, launch.launch_id)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True, help="unix:/path, http://127.0.0.1:PORT or https://...")
    ap.add_argument("--token-file", help="bearer token file (TCP); else $SLUICE_API_TOKEN_FILE, as the CLI")
    ap.add_argument("--ca-file", help="CA bundle for an https server")
    ap.add_argument("--site", required=True)
    ap.add_argument("--job-id", required=True, help="the NVFlare job id (launch id nvfl-<job-id>)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds to wait at most")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...: the worker process")
    a = ap.parse_args(argv)
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("the worker command is missing (after --)")
    client = Client(a.server, token_file=a.token_file, ca_file=a.ca_file)
    launcher = SluiceJobLauncher(client, a.site)
    try:
        handle = launcher.launch_job(a.job_id, cmd[0], cmd[1:])
        first = handle.poll()  # UNKNOWN while it runs, as NVFlare's poll() answers
        print("job %s: launch %s accepted, poll() -> %d (%s)" % (a.job_id, handle.launch_id, first, _NAMES[first]))
        t0 = time.monotonic()
        rc = handle.wait(timeout=a.timeout)
    except SluiceError as e:
        print("job %s: %s" % (a.job_id, e), file=sys.stderr)
        return JobReturnCode.UNKNOWN
    launch = handle.launch
    assert launch is not None
    print("job %s: sluice %s (%s) after %.0f s, reason: %s -> NVFlare return code %d (%s)"
          % (a.job_id, launch.result, launch.result_code, time.monotonic() - t0, launch.reason, rc,
             _NAMES.get(rc, "?")))
    return rc


if __name__ == "__main__":
    sys.exit(main())
