#!/usr/bin/env python3
# webhook_receiver.py - the webhook receiver of tests/e2e/webhooks.sh: an
# http.server on 127.0.0.1:PORT that checks every delivery's signature
# (docs/api.md, "Webhooks": X-Sluice-Signature is sha256=<hex of
# HMAC-SHA256(secret, "<X-Sluice-Timestamp>.<body>")>) and appends one JSON
# line per POST to OUT: path, delivery id, event, launch_id, gseq, state,
# result_code, sig_ok (the signature matches and the timestamp is within 5
# minutes).  Answers 200.  Not a test itself (CTest registers only
# tests/e2e/*.sh).
#
# usage: webhook_receiver.py PORT SECRET_FILE OUT
import hashlib
import hmac
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

PORT = int(sys.argv[1])
with open(sys.argv[2], "rb") as f:
    SECRET = f.read().rstrip(b" \t\r\n")
OUT = sys.argv[3]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        ts = self.headers.get("X-Sluice-Timestamp", "")
        sig = self.headers.get("X-Sluice-Signature", "")
        want = "sha256=" + hmac.new(SECRET, ts.encode() + b"." + body, hashlib.sha256).hexdigest()
        fresh = ts.isdigit() and abs(time.time() - int(ts)) < 300
        rec = {"path": self.path, "sig_ok": hmac.compare_digest(sig, want) and fresh,
               "delivery": self.headers.get("X-Sluice-Delivery"),
               "event_header": self.headers.get("X-Sluice-Event")}
        try:
            d = json.loads(body)
            rec.update({k: d.get(k) for k in ("delivery_id", "launch_id", "gseq", "state",
                                              "result_code", "reason")})
            rec["event"] = (d.get("event") or {}).get("name")
        except ValueError:
            rec["bad_json"] = True
        with open(OUT, "a") as f:
            f.write(json.dumps(rec) + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


HTTPServer.allow_reuse_address = True
HTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
