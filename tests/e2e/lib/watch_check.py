#!/usr/bin/env python3
# watch_check.py BASE TOKEN SITE RUN - the list-then-watch checks of
# tests/e2e/watch.sh against a running `sluice serve` (loopback only).
#
# Posts short launches in two waves; at several moments while they change
# state it lists (resource_version) and then watches /v1/events?after=rv,
# a filtered /v1/events, and per-launch streams from GET's resource_version
# with a dropped connection resumed by Last-Event-ID.  At the end it
# compares, per launch, snapshot + watched events with the final event log
# of GET /v1/launches/{id}: no transition missed, none repeated.  Standard
# library only.  Prints one "RESULT <ok|bad> <check> <detail>" line per
# check.
import http.client
import json
import sys
import threading
import time
import urllib.parse

BASE, TOKEN, SITE, RUN = sys.argv[1:5]
U = urllib.parse.urlparse(BASE)
assert U.hostname in ("127.0.0.1", "::1", "localhost"), "loopback only"
AUTH = {"Authorization": "Bearer " + TOKEN}
results = []


def result(ok, check, detail=""):
    results.append(ok)
    print("RESULT %s %s %s" % ("ok" if ok else "bad", check, detail), flush=True)


def conn(timeout=30):
    return http.client.HTTPConnection(U.hostname, U.port, timeout=timeout)


def call(method, path, body=None, headers=None):
    c = conn()
    h = dict(AUTH)
    h.update(headers or {})
    if body is not None:
        h["Content-Type"] = "application/json"
        body = json.dumps(body)
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        j = json.loads(data) if data else None
    except ValueError:
        j = None
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), j


def request(lid, secs):
    return {"launch_id": lid, "site": SITE, "profile": "none", "command": "/bin/sleep",
            "args": [str(secs)], "time_limit": 5,
            "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}


class Stream(threading.Thread):
    """An SSE reader: frames (gseq, data) into self.frames until stop(),
    the server ends the stream, or `drop_after` frames (then the connection
    is closed and reopened with Last-Event-ID, once)."""

    def __init__(self, path, last_id=None, drop_after=0, until=None):
        super().__init__(daemon=True)
        self.path, self.last_id, self.drop_after = path, last_id, drop_after
        self.until = until  # callable(frames) -> True to stop
        self.frames, self.ended, self.error, self.drops = [], False, None, 0
        self._halt, self._c = threading.Event(), None

    def stop(self):
        self._halt.set()
        c = self._c
        if c is not None:
            try:
                c.sock.shutdown(2)
            except Exception:
                pass

    def _once(self):
        h = dict(AUTH)
        if self.last_id is not None:
            h["Last-Event-ID"] = str(self.last_id)
        c = self._c = conn(timeout=120)
        c.request("GET", self.path, headers=h)
        r = c.getresponse()
        if r.status != 200:
            raise RuntimeError("%s: %d %s" % (self.path, r.status, r.read()[:200]))
        cur, n = {}, 0
        while not self._halt.is_set():
            line = r.readline()
            if not line:
                self.ended = True  # the server completed the response
                return False
            line = line.decode().rstrip("\n")
            if line.startswith("id: "):
                cur["id"] = int(line[4:])
            elif line.startswith("data: "):
                cur["data"] = json.loads(line[6:])
            elif line == "" and "id" in cur:
                self.frames.append((cur["id"], cur["data"]))
                self.last_id = cur["id"]
                cur, n = {}, n + 1
                if self.until and self.until(self.frames):
                    return False
                if self.drop_after and n >= self.drop_after and self.drops == 0:
                    self.drops += 1
                    c.close()  # a dropped connection, resumed below
                    return True
        return False

    def run(self):
        try:
            while self._once():
                pass
        except Exception as e:  # noqa: BLE001 - reported by the checks
            if not self._halt.is_set():
                self.error = repr(e)


def final_logs(ids):
    logs = {}
    for lid in ids:
        st, _, j = call("GET", "/v1/launches/" + lid)
        logs[lid] = j if st == 200 else None
    return logs


def main():
    ids = []
    t0 = time.time()
    first = ["w%s-%d" % (RUN, i) for i in range(3)]
    second = ["w%s-%d" % (RUN, i) for i in range(3, 6)]
    secs = [2, 4, 6, 3, 5, 7]
    watches = []  # (snapshot {id: state}, rv, Stream)
    per_launch = []  # (id, rv, Stream)
    created = {}

    def list_then_watch():
        st, _, j = call("GET", "/v1/launches?limit=1000")
        if st != 200 or not isinstance(j.get("resource_version"), int):
            result(False, "list", "GET /v1/launches: %s %s" % (st, j))
            return
        snap = {i["launch_id"]: i["state"] for i in j["items"]}
        s = Stream("/v1/events?after=%d" % j["resource_version"])
        s.start()
        watches.append((snap, j["resource_version"], s))

    def post(lid, n):
        st, hdr, j = call("POST", "/v1/launches", request(lid, n))
        created[lid] = (st, hdr.get("location"))
        ids.append(lid)

    def watch_one(lid, drop_after):
        st, hdr, j = call("GET", "/v1/launches/" + lid)
        rv = j["resource_version"]
        s = Stream("/v1/launches/%s/events?after=%d" % (lid, rv), drop_after=drop_after)
        s.start()
        per_launch.append((lid, rv, s, hdr.get("etag")))

    list_then_watch()  # before anything exists: rv 0
    for lid, n in zip(first, secs):
        post(lid, n)
    watch_one(first[0], 1)
    list_then_watch()
    time.sleep(1.5)
    list_then_watch()
    for lid, n in zip(second, secs[3:]):
        post(lid, n)
    watch_one(second[0], 2)
    watch_one(second[1], 1)
    time.sleep(2)
    list_then_watch()
    # a filtered watch from now on: one launch's DONE event only
    done_only = Stream("/v1/events?since=now&state=DONE&launch_id=" + second[2],
                       until=lambda f: len(f) >= 1)
    done_only.start()
    time.sleep(3)
    list_then_watch()

    # every launch ends
    deadline = t0 + 70
    logs = {}
    while time.time() < deadline:
        logs = final_logs(ids)
        if all(l is not None and l.get("terminal") for l in logs.values()):
            break
        time.sleep(1)
    done = all(l is not None and l.get("terminal") for l in logs.values())
    result(done and all(l.get("result_code") == 0 for l in logs.values()),
           "launches", "%d launches, all DONE SUCCEEDED in %.0f s: %s" % (
               len(ids), time.time() - t0,
               {k: (v or {}).get("state") for k, v in logs.items()}))
    if not done:
        for _, _, s in watches:
            s.stop()
        return
    # wait for the bookkeeping after DONE (archived) to settle, then the
    # final logs are final
    time.sleep(3)
    logs = final_logs(ids)
    newest = max(e["gseq"] for l in logs.values() for e in l["events"])
    # the global watchers catch up with the newest event, then stop
    for _, _, s in watches:
        end = time.time() + 15
        while time.time() < end and (not s.frames or s.frames[-1][0] < newest) and not s.error:
            time.sleep(0.2)
        s.stop()

    # 1. list then watch: snapshot + watched events = the final log
    bad = []
    for k, (snap, rv, s) in enumerate(watches):
        if s.error:
            bad.append("watch %d: %s" % (k, s.error))
            continue
        got = {}
        for g, d in s.frames:
            got.setdefault(d["launch_id"], []).append(g)
        gseqs = [g for g, _ in s.frames]
        if gseqs != sorted(set(gseqs)):
            bad.append("watch %d: gseqs not strictly increasing" % k)
        for lid, l in logs.items():
            want = [e["gseq"] for e in l["events"] if e["gseq"] > rv]
            before = [e for e in l["events"] if e["gseq"] <= rv]
            if got.get(lid, []) != want:
                bad.append("watch %d (rv %d) %s: got %s want %s" % (k, rv, lid, got.get(lid), want))
            if lid in snap:
                if not before or before[-1]["state"] != snap[lid]:
                    bad.append("watch %d %s: listed %s, log at rv says %s" % (
                        k, lid, snap[lid], before[-1]["state"] if before else None))
            elif before:
                bad.append("watch %d %s: not listed but has events up to rv" % (k, lid))
            # the snapshot's state moved by the watched events ends DONE
            states = [snap.get(lid)] + [d["state"] for g, d in s.frames if d["launch_id"] == lid]
            if states[-1] != "DONE":
                bad.append("watch %d %s: folds to %s" % (k, lid, states[-1]))
        extra = set(got) - set(logs)
        if extra:
            bad.append("watch %d: events of unknown launches %s" % (k, extra))
    moved = sum(1 for snap, rv, s in watches if rv > 0 and any(
        v != "DONE" for v in snap.values()))
    result(not bad and moved >= 2, "list-then-watch",
           "%d list+watch moments (rvs %s, %d with live launches): %s" % (
               len(watches), [rv for _, rv, _ in watches], moved,
               "; ".join(bad[:5]) or "no transition missed or repeated"))

    # 2. per-launch streams: from GET's version, dropped once, resumed
    bad = []
    for lid, rv, s, etag in per_launch:
        s.join(20)
        l = logs[lid]
        done_at = next(e["gseq"] for e in l["events"] if e["state"] == "DONE")
        want = [e["gseq"] for e in l["events"] if rv < e["gseq"] <= done_at]
        got = [g for g, _ in s.frames]
        if s.error or s.is_alive() or not s.ended:
            bad.append("%s: error %s, alive %s, ended %s" % (lid, s.error, s.is_alive(), s.ended))
        if got != want or s.drops != 1:
            bad.append("%s (rv %d): got %s want %s drops %d" % (lid, rv, got, want, s.drops))
        if any(d["launch_id"] != lid for _, d in s.frames):
            bad.append("%s: another launch's event" % lid)
        if etag != '"%d"' % rv:
            bad.append("%s: ETag %s for rv %d" % (lid, etag, rv))
    result(not bad and len(per_launch) == 3, "launch-stream",
           "; ".join(bad[:5]) or "%d per-launch streams: exactly the events after GET's version "
           "up to DONE, across a dropped connection (Last-Event-ID), then the stream ended" %
           len(per_launch))

    # 3. filtered watch and the HTTP details
    done_only.join(10)
    done_only.stop()
    l = logs[second[2]]
    want = [e["gseq"] for e in l["events"] if e["state"] == "DONE"][:1]
    bad = []
    if [g for g, _ in done_only.frames] != want:
        bad.append("state=DONE&launch_id: got %s want %s" % (
            [g for g, _ in done_only.frames], want))
    lid = first[1]
    st, hdr, j = call("GET", "/v1/launches/" + lid)
    st2, hdr2, j2 = call("GET", "/v1/launches/" + lid, headers={"If-None-Match": hdr.get("etag", "")})
    if st != 200 or st2 != 304 or j2 is not None or hdr2.get("etag") != hdr.get("etag"):
        bad.append("If-None-Match: %s then %s" % (st, st2))
    for lid2 in ids:
        if created[lid2] != (201, "/v1/launches/" + lid2):
            bad.append("POST %s: %s" % (lid2, created[lid2]))
    for path, field in (("/v1/launches?limit=0", "limit"), ("/v1/launches?state=done", "state"),
                        ("/v1/events?launchid=x", "launchid"), ("/v1/events?since=then", "since"),
                        ("/v1/launches/%s/events?state=DONE" % lid, "state")):
        st, _, j = call("GET", path)
        if st != 400 or (j or {}).get("field") != field:
            bad.append("%s: %s %s" % (path, st, j))
    st, _, _ = call("GET", "/v1/launches/nope-%s/events" % RUN)
    if st != 404:
        bad.append("unknown launch stream: %s" % st)
    result(not bad, "http", "; ".join(bad[:5]) or
           "filtered since=now watch, ETag/If-None-Match 304, Location, 400s, 404")


main()
sys.exit(0 if results and all(results) else 1)
