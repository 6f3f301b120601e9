"""A small fake of `sluice serve` on 127.0.0.1 (threads, standard library)
for the unit tests: enough of each route to check the client's side of the
contract, and connections that break in the middle on purpose."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


def event(gseq, lid, seq, name, state):
    return {"gseq": gseq, "launch_id": lid, "seq": seq, "time": 1000 + gseq, "name": name,
            "context": {}, "caller": "alice", "state": state}


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.seen = []  # (method, path, Last-Event-ID, Authorization)
        names = [("accepted", "ACCEPTED"), ("submit-started", "SUBMITTING"), ("submitted", "PENDING"),
                 ("observed", "RUNNING"), ("observed", "DONE"), ("archived", "DONE")]
        self.events = [event(i + 1, "L1", i + 1, n, s) for i, (n, s) in enumerate(names)]
        self.drop_after = {"events": 3, "launch": 2, "logs": 3}
        self.dropped = set()
        self.log = b"abcdef"
        self.launches = {}
        # what the next POSTs meet, one entry each: "503" (Retry-After: 0),
        # "503-no-retry-after", "drop-before" (the socket closed, nothing
        # stored), "drop-after" (stored, then the socket closed before the
        # answer), "400"
        self.post_faults = []
        self.posts = 0  # POST /v1/launches requests received


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    @property
    def st(self):
        return self.server.state

    def _send(self, status, obj=None, headers=None, ctype="application/json"):
        data = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(status)
        if status != 304:
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if status != 304:
            self.wfile.write(data)

    def _problem(self, status, slug, **kw):
        p = {"type": "urn:sluice:problem:" + slug, "title": slug, "status": status, "detail": slug}
        p.update(kw)
        self._send(status, p, ctype="application/problem+json")

    def _chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _start_chunked(self, ctype):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _drop(self):
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # the client left first

    def _sse(self, key, events, end):
        lei = self.headers.get("Last-Event-ID")
        q = parse_qs(urlsplit(self.path).query)
        after = int(lei) if lei else int(q.get("after", ["0"])[0])
        todo = [e for e in events if e["gseq"] > after]
        self._start_chunked("text/event-stream")
        self._chunk(b": keep-alive\n\n")
        drop = key not in self.st.dropped
        for i, e in enumerate(todo):
            if drop and i == self.st.drop_after[key]:
                self.st.dropped.add(key)
                # half of the next frame, then the connection breaks
                self.wfile.write(b"40\r\nid: %d\nevent: x\nda" % e["gseq"])
                return self._drop()
            # the resumed stream repeats the last event once, as a buggy
            # proxy might: the client must drop it
            if not drop and i == 0 and key == "events" and after > 0:
                prev = [x for x in events if x["gseq"] == after]
                if prev:
                    self._chunk(b"id: %d\nevent: %s\ndata: %s\n\n" % (after, prev[0]["name"].encode(),
                                                                       json.dumps(prev[0]).encode()))
            self._chunk(b"id: %d\nevent: %s\ndata: %s\n\n" % (e["gseq"], e["name"].encode(),
                                                               json.dumps(e).encode()))
        if end:
            self.wfile.write(b"0\r\n\r\n")
        else:
            self._chunk(b": keep-alive\n\n")
            self._drop()

    def _launch(self, lid):
        evs = [dict(e) for e in self.st.events if e["launch_id"] == lid]
        last = evs[-1]
        return {"launch_id": lid, "site": "s", "cluster": "west", "state": last["state"], "created_ms": 1,
                "updated_ms": 2,
                "attempt": 1, "job_ids": [10, 11], "terminal": last["state"] == "DONE", "result_code": 0,
                "reason": "ok", "request": {"pools": [{"name": "a"}, {"name": "b"}]}, "request_hash": "h",
                "created_by": "alice", "resource_version": last["gseq"],
                "components": [{"component": 1, "job_id": 11, "nodelist": "tb2",
                                "nodes": [{"name": "tb2", "address": "127.0.0.2"}]},
                               {"component": 0, "job_id": 10, "nodelist": "tb1",
                                "nodes": [{"name": "tb1", "address": "127.0.0.1"}]}],
                "events": evs}

    def do_GET(self):
        u = urlsplit(self.path)
        q = parse_qs(u.query)
        with self.st.lock:
            self.st.seen.append(("GET", self.path, self.headers.get("Last-Event-ID"),
                                 self.headers.get("Authorization")))
        if u.path == "/v1/events":
            return self._sse("events", self.st.events, end=False)
        if u.path == "/v1/launches/L1/events":
            return self._sse("launch", self.st.events, end=True)
        if u.path == "/v1/launches/L1/logs/stdout":
            off = int(q.get("offset", ["0"])[0])
            self._start_chunked("text/plain")
            data = self.st.log[off:]
            if "logs" not in self.st.dropped:
                self.st.dropped.add("logs")
                self._chunk(data[:3])
                return self._drop()
            self._chunk(data)
            self.wfile.write(b"0\r\n\r\n")
            return
        if u.path == "/v1/launches/L1":
            d = self._launch("L1")
            etag = '"%d"' % d["resource_version"]
            if self.headers.get("If-None-Match") == etag:
                return self._send(304, headers={"ETag": etag})
            return self._send(200, d, headers={"ETag": etag})
        if u.path == "/v1/launches/L2":  # live for ever; no per-launch stream (an older service)
            d = self._launch("L1")
            d.update(launch_id="L2", state="RUNNING", terminal=False, result_code=None, events=d["events"][:4])
            return self._send(200, d)
        if u.path == "/v1/launches":
            cur = int(q.get("cursor", ["0"])[0])
            items = [{"launch_id": "P%d" % i, "site": "s", "state": "DONE", "terminal": True,
                      "cluster": "west" if i % 2 else None, "result_code": 9} for i in range(5)]
            if "cluster" in q:
                items = [i for i in items if i["cluster"] == q["cluster"][0]]
            lim = int(q.get("limit", ["100"])[0])
            page = items[cur:cur + lim]
            nxt = str(cur + lim) if cur + lim < len(items) else None
            return self._send(200, {"items": page, "next_cursor": nxt, "resource_version": 6})
        if u.path == "/v1/status":
            return self._send(200, {"version": "0.1.0", "uptime_s": 5120,
                                    "slurmrestd": {"state": "ok", "detail": None},
                                    "token": {"expires_in_s": 75310},
                                    "poll": {"cycles": 4096, "errors": 2, "last_cycle_ms": 41.7,
                                             "avg_cycle_ms": 38.2, "max_cycle_ms": 912.4,
                                             "since_last_cycle_ms": 640, "interval_ms": 1000},
                                    "tracked": 3,
                                    "launches": {"ACCEPTED": 0, "PENDING": 1, "RUNNING": 2, "DONE": 57}})
        if u.path == "/v1/metrics":
            data = b"# TYPE sluice_launches gauge\nsluice_launches{state=\"DONE\"} 57\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        return self._problem(404, "not-found")

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        with self.st.lock:
            self.st.posts += 1
            self.st.seen.append(("POST", self.path, None, self.headers.get("Authorization")))
            fault = self.st.post_faults.pop(0) if self.st.post_faults else None
        if fault == "503":
            return self._send(
                503, {"type": "urn:sluice:problem:store-unavailable", "title": "Store unavailable", "status": 503,
                      "detail": "send the request again"}, headers={"Retry-After": "0"},
                ctype="application/problem+json")
        if fault == "503-no-retry-after":
            return self._problem(503, "store")
        if fault == "400":
            return self._problem(400, "malformed-json")
        if fault == "drop-before":
            return self._drop()
        req = json.loads(raw)
        lid = req.get("launch_id")
        if not lid:
            return self._problem(422, "invalid-request", field="launch_id",
                                 errors=[{"path": "launch_id", "reason": "required"},
                                         {"path": "pools", "reason": "required"}])
        have = self.st.launches.get(lid)
        if have is not None and have != req:
            return self._problem(409, "conflict")
        self.st.launches[lid] = req
        if fault == "drop-after":
            return self._drop()
        d = {"launch_id": lid, "site": "s", "cluster": req.get("cluster"), "state": "ACCEPTED", "terminal": False,
             "request": req}
        return self._send(201 if have is None else 200, d, headers={"Location": "/v1/launches/" + lid})


def start():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = State()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    return srv, "http://127.0.0.1:%d" % srv.server_address[1]
