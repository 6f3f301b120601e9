"""Checks of sluice_client against a real `sluice serve` (run by
tests/e2e/python_client.sh on the testbed, from the venv the client was
installed into).  Not a unittest module (it needs the service).

    python live_service.py --tcp http://127.0.0.1:PORT --token-file F \\
        --unix unix:/path/api.sock --site SITE --run TAG

Prints one line per check, ``PASS <what>`` or ``FAIL <what>: <why>``; the
suite counts them.  The service is built from the same commit as this
client, so every feature the client uses is required: a missing one is a
FAIL, never a skip.  The checks run side by side (threads) so that the whole
takes one job's time.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import traceback
from typing import Callable, Dict, List, Optional

import sluice_client as sc

OUT_LOCK = threading.Lock()


WAIT_S = 150


def say(kind: str, what: str, why: str = "") -> None:
    with OUT_LOCK:
        print("%s %s%s" % (kind, what, (": " + why) if why else ""), flush=True)


def pool(name: str, series: str, script: str) -> sc.Pool:
    return sc.Pool(name=name, gpu_series=series, nodes=1, cpus_per_node=1, mem_per_node_mib=200,
                   args=["-c", script])


def hetjob(launch_id: str, site: str, trainer: str, rollout: str) -> dict:
    return {"launch_id": launch_id, "site": site, "profile": "none", "command": "/bin/bash", "time_limit": 5,
            "pools": [pool("trainer", "a100", trainer), pool("rollout", "h100", rollout)]}


class Checks:
    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.tcp = sc.Client(a.tcp, token_file=a.token_file)
        self.unix = sc.Client(a.unix)
        self.het_id = "pyhet-%s" % a.run
        self.ready = threading.Event()  # the hetjob was created
        self.stream_start: Optional[int] = None

    # 1. a two-pool hetjob created from Python (TCP + token), idempotent,
    #    dry run first, reaches SUCCEEDED; GET's ETag / If-None-Match.
    def check_hetjob(self) -> None:
        what = "hetjob from Python (TCP, bearer token) reaches DONE SUCCEEDED (0)"
        req = hetjob(self.het_id, self.a.site,
                     "echo line-1; sleep 3; echo line-2; sleep 3; echo line-3",
                     "sleep 4")
        dry = self.tcp.dry_run(req)
        try:
            self.tcp.get(self.het_id)
            raise AssertionError("the dry run stored the launch")
        except sc.NotFound:
            pass
        if len(dry.jobs) != 2 or "srun" not in dry.script:
            raise AssertionError("dry run rendered %d jobs" % len(dry.jobs))
        # list-then-watch: the stream starts at the list's resource version
        page = self.tcp.list(limit=1)
        if page.resource_version is None:
            raise AssertionError("the list has no resource_version")
        self.stream_start = page.resource_version
        launch = self.tcp.create(req)
        self.ready.set()
        again = self.tcp.create(req)
        if launch.created is not True or again.created is not False or again.launch_id != self.het_id:
            raise AssertionError("create: created=%s, again created=%s" % (launch.created, again.created))
        try:
            self.tcp.create(dict(req, time_limit=6))
            raise AssertionError("a different request with the same id was accepted")
        except sc.Conflict:
            pass
        done = self.tcp.wait(self.het_id, timeout=WAIT_S)
        jobs = [c.job_id for c in done.components]
        if (done.state, done.result_code, done.result) != ("DONE", 0, "SUCCEEDED") or len(jobs) != 2:
            raise AssertionError("ended %s %s %s, components %s" % (done.state, done.result, done.reason, jobs))
        if launch.location != "/v1/launches/" + self.het_id or again.location != launch.location:
            raise AssertionError("Location %r / %r" % (launch.location, again.location))
        if done.resource_version is None or done.etag != '"%s"' % done.resource_version:
            raise AssertionError("ETag %r, resource_version %r" % (done.etag, done.resource_version))
        # events may still come after DONE (archived): the version the
        # conditional GET sends is the newest one read
        for _ in range(10):
            cur = self.tcp.get(self.het_id)
            assert cur is not None
            again304 = self.tcp.get(self.het_id, if_none_match=cur.etag)
            if again304 is None:
                break
            if again304.etag == cur.etag:
                raise AssertionError("If-None-Match %s did not answer 304" % cur.etag)
            time.sleep(0.5)
        else:
            raise AssertionError("the launch's version kept changing")
        if self.tcp.get(self.het_id, if_none_match='"1"') is None:
            raise AssertionError("If-None-Match with an old version answered 304")
        extra = ", Location, ETag %s and 304" % done.etag
        say("PASS", what, "jobs %s, idempotent create, 409 on a different body, dry run%s" % (jobs, extra))

    # 2. cancel over the Unix socket reaches ABORTED (9).
    def check_cancel(self) -> None:
        lid = "pycancel-%s" % self.a.run
        self.unix.create({"launch_id": lid, "site": self.a.site, "profile": "none", "command": "/bin/sleep",
                          "args": ["120"], "time_limit": 5,
                          "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]})
        deadline = time.monotonic() + WAIT_S
        while True:
            launch = self.unix.get(lid)
            assert launch is not None
            if launch.state == "RUNNING" or launch.terminal or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if launch.state != "RUNNING":
            raise AssertionError("never RUNNING: %s %s" % (launch.state, launch.reason))
        self.unix.cancel(lid)
        self.unix.cancel(lid)  # idempotent
        done = self.unix.wait(lid, timeout=WAIT_S)
        names = [e.name for e in done.events]
        if (done.result_code, done.result) != (9, "ABORTED") or "cancel-requested" not in names:
            raise AssertionError("ended %s (%s): %s" % (done.result, done.result_code, done.reason))
        say("PASS", "cancel over the Unix socket reaches DONE ABORTED (9)", done.reason or "")

    # 3. log follow returns the job's output as it is written.
    def check_logs(self) -> None:
        self.ready.wait(WAIT_S)
        chunks = list(self.tcp.follow_logs(self.het_id))
        text = b"".join(chunks)
        want = b"line-1\nline-2\nline-3\n"
        if text != want:
            raise AssertionError("followed %r, want %r" % (text, want))
        tail = self.tcp.logs(self.het_id, offset=7)
        if tail != b"line-2\nline-3\n":
            raise AssertionError("offset 7 read %r" % tail)
        say("PASS", "follow_logs streams the job's output until the end",
            "%d chunks, %d bytes; offset read ok" % (len(chunks), len(text)))

    # 4. the global stream, dropped mid-stream, resumes with Last-Event-ID:
    #    every event of the launch once, as GET lists them, filtered by
    #    launch_id, from the list's resource version (list-then-watch:
    #    nothing before it, nothing missed).
    def check_global_resume(self) -> None:
        self._resume("global (launch_id filter, after the list's resource_version)",
                     lambda after: self.tcp.events(after=after, launch_id=self.het_id))

    # 5. the per-launch stream, the same; it ends by itself after DONE.
    def check_launch_resume(self) -> None:
        self._resume("per-launch", lambda after: self.unix.launch_events(self.het_id, after=after))

    def _is_done(self, ev: sc.Event) -> bool:
        """The launch's DONE event, by the state every stream event carries."""
        if ev.state is None:
            raise AssertionError("stream event %s (seq %s) carries no state" % (ev.name, ev.seq))
        return ev.state == "DONE"

    def _resume(self, kind: str, open_stream: Callable[[Optional[int]], sc.EventStream]) -> None:
        self.ready.wait(WAIT_S)
        s = open_stream(self.stream_start)
        watchdog = threading.Timer(WAIT_S, s.close)  # the global stream never ends by itself
        watchdog.daemon = True
        watchdog.start()
        got: List[sc.Event] = []
        dropped = False
        deadline = time.monotonic() + WAIT_S
        try:
            for ev in s:
                if ev.launch_id not in (None, self.het_id):
                    raise AssertionError("the stream gave an event of %s" % ev.launch_id)
                got.append(ev)
                if len(got) == 1 and not dropped:
                    s.drop_connection()  # the socket dies under the reader
                    dropped = True
                if kind.startswith("global") and self._is_done(ev):
                    break
                if time.monotonic() > deadline:
                    raise AssertionError("no DONE event in the stream")
        finally:
            watchdog.cancel()
            s.close()
        # GET may answer from the service's read cache for a moment: wait
        # until it holds what the stream gave
        for _ in range(20):
            final = self.tcp.get(self.het_id)
            assert final is not None
            if len(final.events) >= len(got):
                break
            time.sleep(0.5)
        want = [e.seq for e in final.events]
        done_at = [i for i, e in enumerate(final.events) if e.state == "DONE"]
        seqs = [e.seq for e in got]
        if not done_at or seqs != want[:len(seqs)] or seqs[:1] != [1] or len(seqs) < done_at[0] + 1:
            raise AssertionError("stream gave seqs %s, the launch has %s (DONE at index %s)"
                                 % (seqs, want, done_at[:1]))
        if s.reconnects < 1:
            raise AssertionError("the dropped connection was not reconnected")
        gseqs = [e.gseq for e in got]
        if gseqs != sorted(set(gseqs)):
            raise AssertionError("gseqs repeated or out of order: %s" % gseqs)
        say("PASS", "%s event stream dropped after the first event resumes with Last-Event-ID" % kind,
            "%d events once each (%s), %d reconnect(s), states %s"
            % (len(got), ",".join(e.name for e in got), s.reconnects, [e.state for e in got]))

    # 6. problems as typed exceptions.
    def check_problems(self) -> None:
        bad = sc.Client(self.a.tcp, token="not-a-token")
        try:
            bad.list()
            raise AssertionError("a wrong token was accepted")
        except sc.Unauthorized as e:
            if e.status != 401:
                raise
        try:
            self.unix.get("nope-%s" % self.a.run)
            raise AssertionError("an unknown launch was found")
        except sc.NotFound:
            pass
        try:
            self.unix.list(limit=5000)
            raise AssertionError("limit=5000 was accepted")
        except sc.BadRequest as e:
            if e.field != "limit":
                raise AssertionError("limit=5000: field %r" % e.field)
        for bad in ({"limit": 0}, {"state": "NOPE"}):
            try:
                self.unix.list(**bad)
                raise AssertionError("%s was accepted" % bad)
            except sc.BadRequest:
                pass
        req = {"launch_id": "pybad-%s" % self.a.run, "site": self.a.site, "command": "/bin/true",
               "pools": [{"name": "A", "nodes": 0}]}
        try:
            self.unix.create(req)
            raise AssertionError("an invalid request was accepted")
        except sc.InvalidRequest as e:
            errs, field = e.errors, e.field
            if not e.field or e.status != 422:
                raise AssertionError("422 without field: %s" % e)
        paths = [x.path for x in errs]
        if ("pools[0].name" not in paths or "pools[0].nodes" not in paths
                or paths.index("pools[0].name") > paths.index("pools[0].nodes") or errs[0].path != field):
            raise AssertionError("422 errors[] %s, field %s" % ([(x.path, x.reason) for x in errs], field))
        self.unix.openapi()  # GET /v1/openapi.json: sc.NotFound here is a FAIL
        note = "422 errors[]: %s; limit=0 and a bad state are 400; /v1/openapi.json served" % [
            (x.path, x.reason) for x in errs]
        say("PASS", "problems become typed exceptions (401 Unauthorized, 404 NotFound, 400 BadRequest, "
                    "422 InvalidRequest)", note)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcp", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--unix", required=True)
    ap.add_argument("--site", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    c = Checks(a)
    names = [n for n in dir(c) if n.startswith("check_")]
    if a.only:
        names = [n for n in names if n[len("check_"):] in a.only]
    results: Dict[str, bool] = {}

    def run(name: str) -> None:
        try:
            getattr(c, name)()
            results[name] = True
        except Exception as e:  # noqa: BLE001 - every failure is reported
            say("FAIL", name, "%s: %s" % (type(e).__name__, e))
            traceback.print_exc(file=sys.stderr)
            results[name] = False
        finally:
            c.ready.set() if name == "check_hetjob" else None

    threads = [threading.Thread(target=run, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
