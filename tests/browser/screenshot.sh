#!/usr/bin/env bash
# screenshot.sh [OUT.png] - make the picture of docs/ui.md (default
# docs/images/ui-status.png): a real `sluice serve` on the testbed
# (SLUICE_TB_RELEASE, default 22.05) with a few launches of different
# outcomes, the page in headless Chromium with a running two-pool hetjob
# opened.  Not a test; loopback only; needs a running testbed.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
out=$(realpath -m "${1:-$REPO/docs/images/ui-status.png}")
NAME=screenshot
TESTS=0
# shellcheck source=../e2e/lib/harness.sh
. "$REPO/tests/e2e/lib/harness.sh"
e2e_launch_setup shot
pid=""
trap '[ -n "$pid" ] && kill "$pid"; wait; rm -rf "$work"' EXIT
tok="tok-ops-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf 'ops %s\n' "$tok" >"$work/tokens"
printf '%s\n' "$tok" >"$work/ops.token"
chmod 0600 "$work/tokens" "$work/ops.token"
"$SLUICE" serve --config "$site" --state-dir "$state" --listen 127.0.0.1:0 \
    --tokens "$work/tokens" >"$work/serve.log" 2>&1 &
pid=$!
port=""
for _ in $(seq 1 100); do
    port=$(sed -n 's/.*listening on http:\/\/.*(port \([0-9]*\)).*/\1/p' "$work/serve.log" | head -1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || abort "sluice serve did not start"
PYTHONPATH="$HERE" python3 - "http://127.0.0.1:$port" "$tok" "$SLUICE_TB_CLUSTER" "$out" "$run" <<'PY'
import json, sys, time, urllib.request
from webdriver import Chrome
base, tok, cluster, out, run = sys.argv[1:]
def call(method, path, body=None):
    req = urllib.request.Request(base + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": "Bearer " + tok, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"null")
def pool(name, series, cmd, nodes=1):
    return {"name": name, "gpu_series": series, "nodes": nodes, "cpus_per_node": 1,
            "mem_per_node_mib": 200, "args": ["-c", cmd]}
def launch(lid, *pools):
    call("POST", "/v1/launches", {"launch_id": lid, "site": cluster, "profile": "none",
                                  "command": "/bin/bash", "time_limit": 5, "pools": list(pools)})
def state(lid):
    return call("GET", "/v1/launches/" + lid)["state"]
def wait(lid, want, t=120):
    end = time.time() + t
    while state(lid) != want and time.time() < end:
        time.sleep(0.5)
tag = run[-4:]
launch("prep-shards-%s" % tag, pool("prep", "a100", "echo sharding; sleep 1; echo 'missing /data/raw/part-0007' >&2; exit 3"))
launch("eval-ckpt-%s" % tag, pool("eval", "h100", "echo 'accuracy 0.913'"))
launch("sweep-lr-%s" % tag, pool("sweep", "a100", "sleep 60"))
for lid in ("prep-shards-%s" % tag, "eval-ckpt-%s" % tag):
    wait(lid, "DONE")
wait("sweep-lr-%s" % tag, "RUNNING")
call("DELETE", "/v1/launches/sweep-lr-%s" % tag)
wait("sweep-lr-%s" % tag, "DONE")
b = Chrome(width=1440, height=1100)
try:
    b.get(base + "/ui")
    b.wait("prompt", lambda: not b.js("return document.getElementById('message').hidden"))
    b.type("#token-input", tok)
    b.click("#token-save")
    b.wait("live", lambda: b.text("#h-stream") == "live" and "reachable" in b.text("#h-rest"))
    het = "train-llm-%s" % tag
    launch(het, pool("trainer", "a100",
                     "for e in 1 2 3 4 5 6 7 8 9 10 11 12; do echo \"epoch $e/12 loss=$(awk -v e=$e 'BEGIN{printf \"%.3f\", 2.4/e}')\"; sleep 1; done"),
           pool("rollout", "h100", "echo 'rollout workers: 8'; sleep 14"))
    b.wait("running", lambda: b.js("""const r = [...document.querySelectorAll('#launches tbody tr')]
        .find(r => r.dataset.id === arguments[0]); return r && r.cells[1].textContent === 'RUNNING';""", het), timeout=120)
    b.get(base + "/ui#/launch/" + het)
    b.wait("log lines", lambda: "epoch 6/12" in (b.text("#d-stdout") or ""), timeout=60)
    time.sleep(1.5)  # let the status chips refresh; a picture, not a test
    b.screenshot(out)
finally:
    b.quit()
print("screenshot: wrote", out)
PY
