#!/usr/bin/env python3
"""A Flower deployment: SuperNode + SuperExec as one hetjob, through sluice.

Flower's Slurm guide (shared/seeds/flower-supernode-slurm.md) runs the
SuperNode and the SuperExec as two jobs pinned to nodes; sluice runs them as
one hetjob (docs/launch-request.md, "The Flower SuperNode patterns", pattern
2): the SuperNode listens on its own node's address, which the batch script
gives both steps as ``SLUICE_POOL_SUPERNODE_ADDR``, and the SuperExec connects
to it after the guide's readiness loop.  This example starts that hetjob,
waits until it runs, reads the partner address -- the SuperNode's Runtime API,
``<NodeAddr of the supernode pool's node>:<port>`` -- from the launch's
components, prints it (a control plane would hand it on, e.g. to a SuperLink
or a monitoring probe), then waits for the end and prints the output.

Flower itself is not installed on sluice's testbed.  There the e2e suite
(tests/e2e/python_client.sh) runs this example with the stand-ins of
tests/e2e/flower_patterns.sh (tests/e2e/lib/flower-standin/:
``flower-supernode`` and ``flower-superexec`` that open and dial the same
sockets and report what they met), put on the job's PATH by the site's
``setup`` line.  On a real site the same commands run the real Flower binaries.

Run (exit status 0 when the hetjob SUCCEEDED and the SuperExec found the
SuperNode at the address read here)::

    flower_deployment.py --server unix:/run/sluice/sluice.sock --site site-1 \\
        --launch-id flower-pair-1 --port 9094 [--partition cpu]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional

from sluice_client import Client, Launch, Pool, SluiceError

SUPERNODE = ('export FLWR_HOME="${SLURM_TMPDIR:-/tmp}/flower-$SLURM_JOB_ID"; '
             "exec flower-supernode --superlink %(superlink)s --auth-supernode-private-key %(key)s "
             '--isolation process --host "$SLUICE_POOL_SUPERNODE_ADDR" --port %(port)d')
SUPEREXEC = ('export FLWR_HOME="${SLURM_TMPDIR:-/tmp}/flower-$SLURM_JOB_ID"; '
             'api="$SLUICE_POOL_SUPERNODE_ADDR:%(port)d"; for _ in {1..30}; do '
             'if bash -c "</dev/tcp/${api%%:*}/${api##*:}" 2>/dev/null; then '
             'exec flower-superexec --insecure --plugin-type clientapp --runtime-api-address "$api"; fi; '
             'sleep 2; done; echo "SuperNode Runtime API did not start on $api." >&2; exit 1')


def hetjob_request(launch_id: str, site: str, port: int, partition: Optional[str], superlink: str,
                   key: str) -> dict:
    subst = {"port": port, "superlink": superlink, "key": key}
    req = {
        "launch_id": launch_id,
        "site": site,
        "profile": "none",
        "time_limit": 10,
        "pools": [
            Pool(name="supernode", cpus_per_node=1, mem_per_node_mib=256, command="/bin/sh",
                 args=["-c", SUPERNODE % subst]),
            Pool(name="superexec", cpus_per_node=1, mem_per_node_mib=256, command="/bin/bash",
                 args=["-c", SUPEREXEC % subst]),
        ],
    }
    if partition:
        req["partition"] = partition
    return req


def wait_for_partner(client: Client, launch_id: str, deadline: float) -> Launch:
    """Poll the launch (a conditional GET: unchanged answers are 304, no
    body) until the supernode pool's node has an address, or it is over."""
    etag = None
    launch: Optional[Launch] = None
    while time.monotonic() < deadline:
        fresh = client.get(launch_id, if_none_match=etag)
        if fresh is not None:
            launch, etag = fresh, fresh.etag
            comp = launch.component_of("supernode")
            if launch.terminal or (comp is not None and comp.nodes and comp.nodes[0].address):
                return launch
        time.sleep(0.5)
    raise TimeoutError("launch %s did not start in time" % launch_id)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--token-file")
    ap.add_argument("--ca-file")
    ap.add_argument("--site", required=True)
    ap.add_argument("--partition")
    ap.add_argument("--launch-id", required=True)
    ap.add_argument("--port", type=int, default=9094, help="the SuperNode's Runtime API port")
    ap.add_argument("--superlink", default="fleet-supergrid.flower.ai:443")
    ap.add_argument("--key", default="/srv/sluice/keys/supernode.key", help="the SuperNode's private key")
    ap.add_argument("--timeout", type=float, default=240.0)
    a = ap.parse_args(argv)
    client = Client(a.server, token_file=a.token_file, ca_file=a.ca_file)
    deadline = time.monotonic() + a.timeout
    try:
        launch = client.create(hetjob_request(a.launch_id, a.site, a.port, a.partition, a.superlink, a.key))
        print("flower: hetjob %s %s (%s)" % (launch.launch_id, "accepted" if launch.created else "already there",
                                            launch.state))
        launch = wait_for_partner(client, a.launch_id, deadline)
        comp = launch.component_of("supernode")
        if comp is not None and comp.nodes and comp.nodes[0].address:
            node = comp.nodes[0]
            print("flower: partner address %s:%d (SuperNode Runtime API on node %s, job %s)"
                  % (node.address, a.port, node.name, comp.job_id))
        else:
            print("flower: the launch ended before its SuperNode ran", file=sys.stderr)
        final = client.wait(a.launch_id, timeout=max(1.0, deadline - time.monotonic()))
        out = client.logs(a.launch_id, "stdout").decode("utf-8", "replace")
    except (SluiceError, TimeoutError) as e:
        print("flower: %s" % e, file=sys.stderr)
        return 1
    for line in out.splitlines():
        print("flower: job| %s" % line)
    print("flower: %s %s (%s): %s" % (final.launch_id, final.result, final.result_code, final.reason))
    return 0 if final.result_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
