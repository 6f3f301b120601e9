"""ha_dbloss.py - the driver of tests/e2e/ha_dbloss.sh: two `sluice serve`
replicas on one PostgreSQL store, one of them (b) reaching the database
through a TCP relay of this script's own, so that b alone can lose it.

    ha_dbloss.py SLUICE SITE WORK TOKEN PGPORT

1. b leads, a follows: an event stream opened on the follower sees every
   event the leader commits within 1 s of its time;
2. the relay is cut: b stops leading and says so (readyz 503, the log), a
   POST to b is 503 and stores nothing, a leads, a launch POSTed to a ends;
3. the relay is back: b answers readyz 200 again as a follower.

Environment: SLUICE_STORE_URL (the store through the relay, as b sees it),
SLUICE_STORE_URL_DIRECT (as a sees it), PGPASSFILE, the testbed's
(SLUICE_TB_*).  Prints `RESULT <name> ok|fail <detail>` lines; exit status 0
when it ran to the end, 2 when it could not run.
"""
import json
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

from ha_replicas import Replica, result

SLUICE, SITE, WORK, TOKEN, PGPORT = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
RUN = os.path.basename(WORK).replace(".", "-").lower()
CLUSTER = os.environ["SLUICE_TB_CLUSTER"]
SSE_LIMIT_MS = 1000


def log(msg):
    print(f"ha_dbloss: {msg}", flush=True)


class Relay:
    """127.0.0.1:<port> -> 127.0.0.1:PGPORT; cut() drops every connection and
    refuses new ones until restore()."""

    def __init__(self):
        self.lsock = None
        self.port = 0
        self.conns = []
        self.mu = threading.Lock()
        self.is_cut = False
        self.open()

    def open(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(16)
        self.port = s.getsockname()[1]
        self.lsock = s
        threading.Thread(target=self.accept, args=(s,), daemon=True).start()

    def accept(self, lsock):
        while True:
            try:
                c, _ = lsock.accept()
            except OSError:
                return
            # Closing a listening socket does not end an accept() another
            # thread is blocked in: a connection that arrives after the cut
            # is dropped here, or it would outlive the cut.
            with self.mu:
                if self.is_cut or lsock is not self.lsock:
                    c.close()
                    continue
            try:
                u = socket.create_connection(("127.0.0.1", PGPORT))
            except OSError:
                c.close()
                continue
            with self.mu:
                if self.is_cut or lsock is not self.lsock:
                    for s in (c, u):
                        s.close()
                    continue
                self.conns += [c, u]
            for x, y in ((c, u), (u, c)):
                threading.Thread(target=self.pipe, args=(x, y), daemon=True).start()

    @staticmethod
    def pipe(x, y):
        try:
            while True:
                data = x.recv(65536)
                if not data:
                    break
                y.sendall(data)
        except OSError:
            pass
        for s in (x, y):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.mu:
            self.is_cut = True
        try:
            self.lsock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        except OSError:
            pass
        self.lsock.close()
        with self.mu:
            for s in self.conns:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
                except OSError:
                    pass
            self.conns = []

    def restore(self):
        with self.mu:
            self.is_cut = False
        self.open()


def wait_for(what, fn, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    log(f"waited {seconds} s for {what}")
    return None


def request(i):
    """Launch i: prints `out <launch id>` and ends."""
    lid = f"dbloss-{RUN}-{i}"
    return lid, {"launch_id": lid, "site": CLUSTER, "profile": "none", "command": "/bin/sh",
                 "args": ["-c", f"echo 'out {lid}'"],
                 "time_limit": 2,
                 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 100}]}


def done(r, lids):
    for lid in lids:
        status, body = r.call("GET", f"/v1/launches/{lid}")
        if status != 200 or not isinstance(body, dict) or body.get("state") != "DONE":
            return False
    return True


def stream(r, seen, stop):
    """Read /v1/events?since=now on r; append (arrival ms, event) to seen."""
    req = urllib.request.Request(f"http://127.0.0.1:{r.port}/v1/events?since=now")
    req.add_header("Authorization", f"Bearer {TOKEN}")
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            for raw in resp:
                if stop.is_set():
                    return
                line = raw.decode().rstrip("\n")
                if line.startswith("data: "):
                    try:
                        seen.append((time.time() * 1000.0, json.loads(line[6:])))
                    except ValueError:
                        pass
    except (OSError, urllib.error.URLError):
        return


def main():
    relay = Relay()
    url = os.environ["SLUICE_STORE_URL_DIRECT"]
    args = ("--log-level", "info")
    b = Replica("b", SLUICE, SITE, WORK, TOKEN, {"SLUICE_STORE_URL": url.replace(f":{PGPORT}/", f":{relay.port}/")},
                args)
    a = Replica("a", SLUICE, SITE, WORK, TOKEN, {"SLUICE_STORE_URL": url}, args)
    b.start()
    if not wait_for("b to lead", lambda: b.ready()[1] == "leader", 30):
        result("sse-on-follower", False, "b (first) never led")
        return
    a.start()
    if not wait_for("a to follow", lambda: a.ready()[1] == "follower", 30):
        result("sse-on-follower", False, "a did not come up as a follower")
        return

    # 1. the follower's stream
    seen, stop = [], threading.Event()
    t = threading.Thread(target=stream, args=(a, seen, stop), daemon=True)
    t.start()
    time.sleep(1.0)
    lids = []
    for i in range(5):
        lid, body = request(i)
        status, _ = b.call("POST", "/v1/launches", body)
        if status in (200, 201):
            lids.append(lid)
    wait_for("the first launches to end", lambda: done(a, lids), 120)
    time.sleep(1.5)
    stop.set()
    mine = [(at, ev) for at, ev in seen if ev.get("launch_id") in lids]
    lags = [at - ev["time"] for at, ev in mine if isinstance(ev.get("time"), (int, float))]
    dones = {ev.get("launch_id") for _, ev in mine if ev.get("state") == "DONE"}
    worst = max(lags) if lags else None
    result("sse-on-follower", len(lids) == 5 and dones == set(lids) and worst is not None and worst <= SSE_LIMIT_MS,
           f"{len(mine)} events of {len(lids)} launches on the follower's stream, {len(dones)} DONE, "
           f"worst lag {worst:.0f} ms after the commit (limit {SSE_LIMIT_MS})" if worst is not None
           else f"no event of {len(lids)} launches on the follower's stream")

    # 2. b loses the database
    t_cut = time.monotonic()
    relay.cut()
    lost = wait_for("b to stop leading", lambda: b.ready()[0] == 503 and b.ready()[1] != "leader", 30)
    logged = "the database cannot be reached" in b.log_text()
    result("db-lost-stops-leading", bool(lost) and logged,
           f"readyz 503 and not leader after {time.monotonic() - t_cut:.1f} s; log line: {logged}")
    lid, body = request(9)
    status, answer = b.call("POST", "/v1/launches", body)
    ok503 = status == 503
    status_a, _ = a.call("GET", f"/v1/launches/{lid}")
    result("db-lost-accepts-503", ok503 and status_a == 404,
           f"POST to b: {status} ({(answer or {}).get('type', '')}); the launch in the store: {status_a}")
    led = wait_for("a to lead", lambda: a.ready()[1] == "leader", 30)
    lid2, body2 = request(10)
    status, _ = a.call("POST", "/v1/launches", body2)
    ended = wait_for("a's launch to end", lambda: done(a, [lid2]), 120)
    result("db-lost-other-leads", bool(led) and status in (200, 201) and bool(ended),
           f"a leads {time.monotonic() - t_cut:.1f} s after the cut; its launch: POST {status}, DONE {bool(ended)}")

    # 3. the database is back for b
    relay.restore()
    back = wait_for("b to be ready again", lambda: b.ready()[:2] == (200, "follower"), 60)
    logged = "the database answers again" in b.log_text()
    result("db-back-rejoins", bool(back) and logged, f"b ready as a follower: {bool(back)}; log line: {logged}")

    # 4. a archived its launch while b was cut off: b serves its stdout from
    # the store (issue 30)
    status, data, source = b.get_raw(f"/v1/launches/{lid2}/logs/stdout")
    result("logs-on-the-other-replica", status == 200 and data == f"out {lid2}\n".encode() and source == "store",
           f"b (which did not archive {lid2}): {status}, source {source}, {data[:60]!r}")
    for r in (a, b):
        r.stop()


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        log(f"ERROR {e}")
        sys.exit(2)
