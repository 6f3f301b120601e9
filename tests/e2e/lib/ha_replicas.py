"""ha_replicas.py - what the replica suites' drivers (ha_chaos.py,
ha_dbloss.py) share: one `sluice serve` replica started, called, stopped
and killed, and the RESULT lines they print.  Imported, never run."""
import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request


def result(name, ok, detail=""):
    """One check's verdict, for the shell suite to turn into PASS/FAIL."""
    print(f"RESULT {name} {'ok' if ok else 'fail'} {detail}".rstrip(), flush=True)


class Replica:
    """One `sluice serve` with a state directory and a log of its own in
    `work`; `env` (may be empty) is added to the environment (the replica's
    id is SLUICE_REPLICA_ID = name)."""

    def __init__(self, name, sluice, site, work, token, env=None, extra_args=()):
        self.name, self.sluice, self.site, self.work, self.token = name, sluice, site, work, token
        self.env = dict(env or {})
        self.extra_args = list(extra_args)
        self.proc, self.port, self.starts = None, None, 0
        self.log_path = os.path.join(work, f"serve-{name}.log")

    def start(self):
        """Start it and wait (up to 60 s) for its port; RuntimeError if not."""
        self.starts += 1
        env = dict(os.environ, SLUICE_REPLICA_ID=self.name, **self.env)
        with open(self.log_path, "a") as logf:
            logf.write(f"---- start {self.starts} at {time.time():.3f}\n")
            logf.flush()
            offset = logf.tell()
            self.proc = subprocess.Popen(
                [self.sluice, "serve", "--config", self.site, "--state-dir",
                 os.path.join(self.work, f"state-{self.name}"), "--listen", "127.0.0.1:0",
                 "--tokens", os.path.join(self.work, "tokens")] + self.extra_args,
                stdout=logf, stderr=subprocess.STDOUT, env=env)
        self.port = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(self.log_path) as f:
                f.seek(offset)
                m = re.search(r"listening on http://\S+ \(port (\d+)\)", f.read())
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"replica {self.name} did not start (see {self.log_path})")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_text(self):
        with open(self.log_path) as f:
            return f.read()

    def call(self, method, path, body=None, timeout=10):
        """(status, parsed body or None); status 0 when nothing answered."""
        if not self.alive() or self.port is None:
            return 0, None
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, raw = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        except (OSError, urllib.error.URLError):
            return 0, None
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, None

    def get_raw(self, path, timeout=10):
        """(status, body bytes, X-Sluice-Log-Source) of a GET; status 0 when
        nothing answered."""
        if not self.alive() or self.port is None:
            return 0, b"", None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}")
        req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read(), r.headers.get("X-Sluice-Log-Source")
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers.get("X-Sluice-Log-Source")
        except (OSError, urllib.error.URLError):
            return 0, b"", None

    def ready(self):
        """(HTTP status, role, epoch) of /v1/readyz; (0, None, None) when it
        does not answer."""
        status, body = self.call("GET", "/v1/readyz", timeout=5)
        body = body if isinstance(body, dict) else {}
        return status, body.get("role"), body.get("epoch")

    def role(self):
        """(role, epoch) from /v1/readyz."""
        return self.ready()[1:]
