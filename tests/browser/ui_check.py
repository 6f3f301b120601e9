#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ui_check.py - the status page (/ui) of a running `sluice serve` in
Debian's headless Chromium, driven through chromedriver (webdriver.py).

Prints one line per check, "ok: <what>" or "not ok: <what>: <why>", for
tests/e2e/ui_browser.sh to count:

  1. headers: /ui and its script carry the strict CSP, nosniff and
     no-referrer;
  2. token: the page asks for the bearer token, keeps it in sessionStorage
     (a reload needs none) and then shows the health: slurmrestd reachable,
     the token's expiry, the poll cycle latency, the live stream;
  3. live: a two-pool hetjob launched through the API after the page loaded
     appears and goes PENDING -> RUNNING -> DONE in the list (every change
     of its state cell recorded by a MutationObserver, no sampling);
  4. detail: opened while it runs, its stdout lines appear while it is
     still RUNNING, and then its events (with the state after each: PENDING,
     RUNNING, DONE), both components with job ids and nodes, and the result
     (on a service with resource versions, through the per-launch stream);
  5. filters: state, site and text narrow the list;
  6. console: no CSP violation was logged, and an inline script injected
     afterwards is refused and logged (the policy is enforced and the check
     sees violations);
  7. proxy: the page through a TCP proxy to the Unix socket works without a
     token.

Only loopback addresses are used.
"""
import argparse
import json
import re
import sys
import time
import urllib.request

from webdriver import Chrome, WebDriverError

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")

results = []


def report(ok, what, why=""):
    line = ("ok: %s" % what) if ok else ("not ok: %s: %s" % (what, why))
    print(line, flush=True)
    results.append(ok)


def check(what, fn):
    try:
        why = fn()
    except (WebDriverError, OSError, ValueError, KeyError, TypeError) as e:
        why = "%s: %s" % (type(e).__name__, e)
    report(not why, what, why or "")


def http_get(url, token=None):
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, dict((k.lower(), v) for k, v in r.headers.items()), r.read()


def post_launch(base, token, body):
    req = urllib.request.Request(base + "/v1/launches", data=json.dumps(body).encode(),
                                 method="POST", headers={"Content-Type": "application/json",
                                                         "Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="http://127.0.0.1:PORT of sluice serve (TCP)")
    ap.add_argument("--proxy", required=True, help="http://127.0.0.1:PORT of a proxy to the Unix socket")
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--launch-id", required=True)
    ap.add_argument("--screenshot", required=True)
    ap.add_argument("--chromedriver-log")
    a = ap.parse_args()
    for u in (a.base, a.proxy):
        if not re.match(r"^http://127\.0\.0\.1:\d+$", u):
            sys.exit("ui_check: only loopback targets: %s" % u)
    token = open(a.token_file).read().strip()
    lid = a.launch_id

    # ---- 1. headers
    def headers():
        bad = []
        for path in ("/ui", "/ui/app.js"):
            st, h, _ = http_get(a.base + path)
            if st != 200:
                bad.append("%s: %d" % (path, st))
            if h.get("content-security-policy") != CSP:
                bad.append("%s CSP: %r" % (path, h.get("content-security-policy")))
            if h.get("x-content-type-options") != "nosniff" or h.get("referrer-policy") != "no-referrer":
                bad.append("%s nosniff/referrer: %r %r" % (path, h.get("x-content-type-options"),
                                                         h.get("referrer-policy")))
        return "; ".join(bad)
    check("/ui and /ui/app.js carry the strict CSP, nosniff and no-referrer", headers)

    try:
        b = Chrome(log_path=a.chromedriver_log)
    except (WebDriverError, OSError) as e:
        report(False, "start headless Chromium", str(e))
        return 1
    try:
        run(b, a, token, lid)
    finally:
        b.quit()
    return 0 if all(results) else 1


def live_health(b):
    return b.wait("the live stream and the health", lambda: (
        b.text("#h-stream") == "live"
        and "reachable" in (b.text("#h-rest") or "")
        and re.search(r"poll cycle [0-9.]+ ms \(average [0-9.,]+ m?s, longest [0-9.,]+ m?s\)",
                      b.text("#h-poll") or "")
        and "expires in" in (b.text("#h-token") or "")), timeout=30)


def run(b, a, token, lid):
    # ---- 2. token
    def token_entry():
        b.get(a.base + "/ui")
        b.wait("the token prompt", lambda: b.js(
            "const m = document.getElementById('message');"
            " return !m.hidden && /token/i.test(m.textContent);"))
        b.type("#token-input", token)
        b.click("#token-save")
        live_health(b)
        if b.js("return sessionStorage.getItem('sluice.token')") != token:
            return "the token is not in sessionStorage"
        b.get(a.base + "/ui")  # a reload keeps it: no prompt
        live_health(b)
        if not b.js("return document.getElementById('message').hidden"):
            return "asked for the token again after a reload: %r" % b.text("#message")
        return ""
    check("the token is asked once, kept in sessionStorage; health shows slurmrestd, token expiry, poll latency",
          token_entry)

    # ---- 3. live states, 4. detail
    seen_at_first_line = {}

    def live():
        # Record every text the launch's state cell takes, as the DOM changes.
        b.js("""
            window.__states = [];
            const id = arguments[0];
            const look = () => {
              const row = [...document.querySelectorAll('#launches tbody tr')].find(r => r.dataset.id === id);
              const s = row ? row.cells[1].textContent : null;
              if (s && window.__states[window.__states.length - 1] !== s) window.__states.push(s);
            };
            new MutationObserver(look).observe(document.getElementById('launches'),
              {subtree: true, childList: true, characterData: true});
            look();""", lid)
        pool = lambda name, series, cmd: {"name": name, "gpu_series": series, "nodes": 1,
                                           "cpus_per_node": 1, "mem_per_node_mib": 200,
                                           "args": ["-c", cmd]}
        body = {"launch_id": lid, "site": a.cluster, "profile": "none", "command": "/bin/bash",
                "time_limit": 5, "pools": [
                    pool("trainer", "a100",
                         "for i in 1 2 3 4 5 6; do echo ui-line-$i; sleep 1; done; echo ui-err >&2"),
                    pool("rollout", "h100", "sleep 5")]}
        st = post_launch(a.base, token, body)
        if st != 201:
            return "POST /v1/launches: %d" % st
        b.wait("RUNNING in the list", lambda: "RUNNING" in b.js("return window.__states"), timeout=90)
        # open it while it runs
        b.js("const row = [...document.querySelectorAll('#launches tbody tr')]"
             ".find(r => r.dataset.id === arguments[0]); row.click();", lid)
        b.wait("the first stdout line", lambda: "ui-line-1" in (b.text("#d-stdout") or ""), timeout=30)
        seen_at_first_line["state"] = b.js("return window.__states[window.__states.length - 1]")
        b.wait("DONE in the list", lambda: "DONE" in b.js("return window.__states"), timeout=90)
        states = b.js("return window.__states")
        want = ["PENDING", "RUNNING", "DONE"]
        it = iter(states)
        if not all(w in it for w in want):
            return "the list showed %s, not PENDING -> RUNNING -> DONE in order" % states
        return ""
    check("a hetjob launched through the API goes PENDING -> RUNNING -> DONE live in the list", live)

    def detail():
        if seen_at_first_line.get("state") != "RUNNING":
            return "the first stdout line appeared while the list said %r, not RUNNING" % (
                seen_at_first_line.get("state"),)
        b.wait("every stdout line", lambda: "ui-line-6" in (b.text("#d-stdout") or ""), timeout=30)
        b.wait("the stderr line", lambda: "ui-err" in (b.text("#d-stderr") or ""), timeout=30)
        info = b.wait("the detail at DONE", lambda: b.js("""
            const comps = [...document.querySelectorAll('#d-components tbody tr')].map(r => r.cells[1].textContent);
            const evs = [...document.querySelectorAll('#d-events tbody tr')].map(r => r.cells[2].textContent);
            const evstates = [...document.querySelectorAll('#d-events tbody tr')].map(r => r.cells[3].textContent);
            const sum = document.getElementById('d-summary').textContent;
            if (!/DONE/.test(sum) || comps.length < 2) return null;
            return {comps, evs, evstates, sum,
                    nodes: [...document.querySelectorAll('#d-components tbody tr')].map(r => r.cells[2].textContent)};"""),
            timeout=30)
        if not all(re.match(r"^\d+$", c) for c in info["comps"]):
            return "component job ids: %r" % info["comps"]
        if any(n in ("", "—") for n in info["nodes"]):
            return "component nodes: %r" % info["nodes"]
        if len(info["evs"]) < 4 or "accepted" not in info["evs"]:
            return "events: %r" % info["evs"]
        if not all(s in info["evstates"] for s in ("PENDING", "RUNNING", "DONE")):
            return "the event log's states: %r" % info["evstates"]
        if not re.search(r"result\s*SUCCEEDED 0", info["sum"]):
            return "summary has no result SUCCEEDED 0 (the name beside the code): %r" % info["sum"]
        # a service with resource versions has the per-launch stream: the
        # open launch must follow it, not the global one
        st, _, body = http_get("%s/v1/launches/%s" % (a.base, lid), token)
        if "resource_version" in json.loads(body):
            # (a resource entry is added when its response ends: the stream
            # ends after the DONE event)
            try:
                b.wait("the per-launch stream", lambda: any(
                    u.endswith("/v1/launches/%s/events" % lid) for u in
                    b.js("return performance.getEntriesByType('resource').map(e => e.name)")),
                    timeout=15)
            except WebDriverError:
                return "the open launch did not follow /v1/launches/%s/events: %r" % (
                    lid, b.js("return performance.getEntriesByType('resource').map(e => e.name)"))
        return ""
    check("opened while RUNNING: stdout lines appear live, then events, two components with job ids and nodes, result 0",
          detail)

    def filters():
        def count(state="", site="", text=""):
            return b.js("""
                const [st, si, tx] = arguments;
                const s = document.getElementById('f-state'), t = document.getElementById('f-site');
                s.value = st; t.value = si;
                const x = document.getElementById('f-text'); x.value = tx;
                s.dispatchEvent(new Event('change'));
                x.dispatchEvent(new Event('input'));
                return [...document.querySelectorAll('#launches tbody tr')].map(r => r.dataset.id);""",
                        state, site, text)
        bad = []
        if lid not in count("DONE", a.cluster, lid[-8:]):
            bad.append("DONE + site + text hides it")
        if lid in count("PENDING"):
            bad.append("PENDING shows it")
        if count(text="no-such-launch-xyz"):
            bad.append("text filter matches nothing yet shows rows")
        if lid not in count():
            bad.append("no filter hides it")
        return "; ".join(bad)
    check("the state, site and text filters narrow the list", filters)

    def console():
        b.screenshot(a.screenshot)
        logs = b.browser_log()
        csp = [e["message"] for e in logs if "Content Security Policy" in e.get("message", "")]
        other = [e["message"] for e in logs if e.get("level") == "SEVERE"
                 and "Content Security Policy" not in e.get("message", "")
                 and "401" not in e.get("message", "")]
        if csp or other:
            return "console: %r %r" % (csp[:3], other[:3])
        # the policy is enforced, and this check sees a violation
        b.js("const s = document.createElement('script'); s.textContent = 'window.__inline = 1';"
             " document.body.appendChild(s);")
        time.sleep(0.2)  # let the console entry land (not an assertion)
        if b.js("return window.__inline === 1"):
            return "an inline script ran: the CSP is not enforced"
        logs = b.browser_log()
        if not any("Content Security Policy" in e.get("message", "") for e in logs):
            return "the injected inline script left no CSP violation in the log: %r" % logs[:3]
        return ""
    check("no CSP violation in the console (an injected inline script is refused and logged)", console)

    # ---- 7. the Unix socket through a local proxy
    def proxy():
        b.get(a.proxy + "/ui")
        b.wait("the launch through the proxy", lambda: b.js("""
            const row = [...document.querySelectorAll('#launches tbody tr')].find(r => r.dataset.id === arguments[0]);
            return row && row.cells[1].textContent === 'DONE';""", lid), timeout=30)
        live_health(b)
        if not b.js("return document.getElementById('message').hidden"):
            return "asked for a token over the Unix socket: %r" % b.text("#message")
        if b.js("return sessionStorage.getItem('sluice.token')"):
            return "a token was stored for the proxy origin"
        return ""
    check("through a TCP proxy to the Unix socket the page works with no token", proxy)


if __name__ == "__main__":
    sys.exit(main())
