# SPDX-License-Identifier: Apache-2.0
"""webdriver.py - a small client of the W3C WebDriver HTTP API, enough to
drive Debian's headless Chromium through chromedriver from the standard
library alone (no PyPI on the build machines).

Only loopback: chromedriver listens on 127.0.0.1 and the pages it loads are
the test's own `sluice serve`.
"""
import base64
import json
import os
import subprocess
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


class WebDriverError(Exception):
    pass


class Chrome:
    """One chromedriver process and one session of headless Chromium."""

    def __init__(self, chromedriver="/usr/bin/chromedriver", binary="/usr/bin/chromium",
                 port=0, width=1400, height=1000, log_path=None):
        if port == 0:
            import socket
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            s.close()
        self.base = "http://127.0.0.1:%d" % port
        args = [chromedriver, "--port=%d" % port, "--allowed-ips=127.0.0.1"]
        if log_path:
            args.append("--log-path=%s" % log_path)
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.session = None
        deadline = time.time() + 20
        while True:
            try:
                if self._call("GET", "/status").get("ready"):
                    break
            except (OSError, WebDriverError):
                pass
            if time.time() > deadline:
                self.quit()
                raise WebDriverError("chromedriver did not start on %s" % self.base)
            time.sleep(0.1)
        chrome_args = ["--headless=new", "--disable-gpu", "--disable-dev-shm-usage",
                       "--window-size=%d,%d" % (width, height), "--no-first-run",
                       "--disable-extensions", "--disable-background-networking"]
        if os.geteuid() == 0:
            chrome_args.append("--no-sandbox")  # Chromium refuses to run as root otherwise
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": binary, "args": chrome_args},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}}
        self.session = self._call("POST", "/session", caps)["sessionId"]

    def _call(self, method, path, body=None, timeout=60):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                out = json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            try:
                v = json.loads(e.read()).get("value", {})
                raise WebDriverError("%s %s: %s: %s" % (method, path, v.get("error"),
                                                        v.get("message", "")[:300]))
            except ValueError:
                raise WebDriverError("%s %s: HTTP %d" % (method, path, e.code))
        return out.get("value", out)

    def cmd(self, method, path, body=None):
        return self._call(method, "/session/%s%s" % (self.session, path), body)

    # ---- navigation and scripts
    def get(self, url):
        self.cmd("POST", "/url", {"url": url})

    def js(self, script, *args):
        """Run `script` (a function body; `arguments` holds args) and return
        its value."""
        return self.cmd("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        v = self.cmd("POST", "/element", {"using": "css selector", "value": css})
        return v[ELEMENT]

    def click(self, css):
        self.cmd("POST", "/element/%s/click" % self.find(css), {})

    def type(self, css, text):
        self.cmd("POST", "/element/%s/value" % self.find(css), {"text": text})

    def text(self, css):
        return self.js("const e = document.querySelector(arguments[0]);"
                       " return e ? e.textContent : null;", css)

    def wait(self, what, check, timeout=30, every=0.1):
        """Poll check() until it returns something true; return it, or raise
        WebDriverError naming `what` after timeout seconds."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            last = check()
            if last:
                return last
            time.sleep(every)
        raise WebDriverError("timed out after %ss waiting for %s (last: %r)" % (timeout, what, last))

    def screenshot(self, path):
        png = base64.b64decode(self.cmd("GET", "/screenshot"))
        with open(path, "wb") as f:
            f.write(png)

    def browser_log(self):
        """The console entries since the last call (chromedriver's log
        endpoint): [{"level", "message", "source", "timestamp"}]."""
        return self.cmd("POST", "/se/log", {"type": "browser"})

    def quit(self):
        try:
            if self.session:
                self.cmd("DELETE", "")
        except (OSError, WebDriverError):
            pass
        self.session = None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
