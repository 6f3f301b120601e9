"""ha_chaos.py - the driver of tests/e2e/ha_chaos.sh: two `sluice serve`
replicas on one PostgreSQL store, N launches POSTed alternately to both,
the leader killed with SIGKILL at K random points of the run (and started
again at once, as a supervisor of a pod would), then every launch followed
to its end and checked against Slurm's own records.

    ha_chaos.py SLUICE SITE WORK TOKEN N K SEED

Environment: SLUICE_STORE_URL (the store, schema of the suite's own),
PGPASSFILE, the testbed's (SLUICE_TB_*, PATH with squeue/sacct).

Each launch prints one line of its own; at the end its stdout is read from
the replica that did not archive it (the store's copy, issue 30).

Prints one `RESULT <name> ok|fail <detail>` line per check and one
`FAILOVER <seconds>` line per kill; the shell suite turns them into
PASS/FAIL lines.  Exit status 0 when it ran to the end (whatever the
checks said), 2 when it could not run at all.
"""
import hashlib
import os
import random
import re
import statistics
import subprocess
import sys
import time

from ha_replicas import Replica, result

SLUICE, SITE, WORK, TOKEN = sys.argv[1:5]
N, KILLS, SEED = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
RUN = os.path.basename(WORK).replace(".", "-").lower()
CLUSTER = os.environ["SLUICE_TB_CLUSTER"]
USER = os.environ["SLUICE_TB_USER"]
SINCE = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - 60))
FAILOVER_LIMIT_S = 15.0  # the target is 10 s; the slack is for a loaded machine
rng = random.Random(SEED)


def log(msg):
    print(f"ha_chaos: {msg}", flush=True)


# notice: the `leadership: leader now (epoch N)` lines say who archived what
replicas = [Replica(n, SLUICE, SITE, WORK, TOKEN, extra_args=("--log-level", "notice")) for n in ("a", "b")]


def leader(wait_s):
    """The replica that says it leads (and its epoch), waiting up to wait_s."""
    deadline = time.monotonic() + wait_s
    while True:
        for r in replicas:
            role, epoch = r.role()
            if role == "leader":
                return r, epoch
        if time.monotonic() >= deadline:
            return None, None
        time.sleep(0.05)


def request(i):
    """Launch i: prints its own line (log_line) and sleeps 0-2 s."""
    lid = f"chaos-{RUN}-{i:03d}"
    return lid, {
        "launch_id": lid, "site": CLUSTER, "profile": "none",
        "command": "/bin/sh", "args": ["-c", f"echo 'out {lid}'; sleep {rng.choice([0, 1, 2])}"],
        "time_limit": 2,
        "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 100}],
    }


def log_line(lid):
    return f"out {lid}\n".encode()


def archiver(body):
    """The replica that archived the launch: its `archived` event carries the
    leader's epoch, and each replica's log says which epochs it led at
    (None before it is archived, "?" when no replica led at that epoch)."""
    for e in body.get("events", []):
        if e.get("name") == "archived":
            epoch = (e.get("context") or {}).get("epoch")
            for r in replicas:
                if re.search(rf"leadership: leader now \(epoch {epoch}\)", r.log_text()):
                    return r.name
            return "?"
    return None


def logs_elsewhere(lids):
    """Each launch's stdout read from every replica that did not archive it:
    from the store, byte for byte.  A leader killed inside its cycle may
    leave a launch that ended without its `archived` event (the next leader
    adopts live launches only): archived into the store before the kill, or
    not at all (its log stays in its staging on the shared storage).  Both
    replicas serve those, from wherever the log is.  (from the replica that
    did not archive, without an `archived` event, what went wrong)."""
    known, unknown, wrong = 0, 0, []
    for lid in lids:
        body = None
        for r in replicas:
            status, b = r.call("GET", f"/v1/launches/{lid}")
            if status == 200 and isinstance(b, dict):
                body = b
                break
        who = archiver(body) if body is not None else "?"
        if who is not None and who not in (r.name for r in replicas):
            wrong.append(f"{lid}: archived by {who}")
            continue
        for r in replicas:
            if r.name == who:
                continue
            status, data, source = r.get_raw(f"/v1/launches/{lid}/logs/stdout")
            want = ("store",) if who is not None else ("store", "live")
            if status != 200 or data != log_line(lid) or source not in want:
                wrong.append(f"{lid} on {r.name} (archived by {who}): {status} {source} {data[:80]!r}")
        if who is not None:
            known += 1
        else:
            unknown += 1
    return known, unknown, wrong


def post(i, body):
    """POST to replica i % 2, else to the other; True once one accepted it."""
    deadline = time.monotonic() + 60
    k = i % 2
    while time.monotonic() < deadline:
        for r in (replicas[k], replicas[1 - k]):
            status, _ = r.call("POST", "/v1/launches", body)
            if status in (200, 201):
                return True
            if status not in (0, 502, 503):
                log(f"POST {body['launch_id']} to {r.name}: {status}")
                return False
        time.sleep(0.2)
    return False


def kill_leader(failovers):
    r, epoch = leader(30)
    if r is None:
        log("no leader to kill within 30 s")
        failovers.append(None)
        return
    t0 = time.monotonic()
    r.kill()
    log(f"killed leader {r.name} (epoch {epoch})")
    r.start()  # back at once, as a follower until it wins a lease
    while time.monotonic() - t0 < 60:
        for x in replicas:
            role, e = x.role()
            if role == "leader" and e is not None and epoch is not None and e > epoch:
                dt = time.monotonic() - t0
                failovers.append(dt)
                print(f"FAILOVER {dt:.2f} {x.name} epoch {e}", flush=True)
                return
        time.sleep(0.05)
    failovers.append(None)
    log("no new leader within 60 s")


def sacct_rows():
    """{job name: [(job id, state)]} of the job user since the start, live and
    accounted (squeue for jobs not yet in accounting)."""
    rows = {}
    out = subprocess.run(["sacct", "-n", "-X", "-P", "-u", USER, "-S", SINCE, "-o", "JobID,JobName,State"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) >= 3:
            rows.setdefault(parts[1], {})[parts[0]] = parts[2].split()[0]
    out = subprocess.run(["squeue", "-h", "-u", USER, "-o", "%i|%j|%T"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) >= 3:
            rows.setdefault(parts[1], {}).setdefault(parts[0], parts[2])
    return rows


def marker_base(lid):
    return f"sluice-{CLUSTER}-{hashlib.sha256(lid.encode()).hexdigest()[:8]}"


def main():
    for r in replicas:
        r.start()
    if leader(30)[0] is None:
        result("leader", False, "no replica leads within 30 s of the start")
        return
    kill_at = sorted(rng.sample(range(5, N), KILLS))
    log(f"kill points (before POST #): {kill_at}")
    failovers, accepted, refused = [], [], []
    for i in range(N):
        if kill_at and i == kill_at[0]:
            kill_at.pop(0)
            kill_leader(failovers)
        lid, body = request(i)
        (accepted if post(i, body) else refused).append(lid)
    result("accepts", not refused and len(accepted) == N,
           f"{len(accepted)} of {N} accepted on either replica" + (f"; refused {refused[:5]}" if refused else ""))
    done = [f for f in failovers if f is not None]
    result("failover", len(done) == KILLS and all(f <= FAILOVER_LIMIT_S for f in done),
           f"{len(done)} of {KILLS} kills followed by a new leader"
           + (f", median {statistics.median(done):.2f} s, worst {max(done):.2f} s" if done else ""))

    # Every accepted launch ends.
    ends, deadline = {}, time.monotonic() + 300
    while time.monotonic() < deadline and len(ends) < len(accepted):
        for lid in accepted:
            if lid in ends:
                continue
            for r in replicas:
                status, body = r.call("GET", f"/v1/launches/{lid}")
                if status == 200 and isinstance(body, dict):
                    if body.get("state") == "DONE":
                        ends[lid] = body
                    break
        if len(ends) < len(accepted):
            time.sleep(1)
    missing = [lid for lid in accepted if lid not in ends]
    result("terminal", not missing, f"{len(ends)} of {len(accepted)} launches DONE"
           + (f"; not yet: {missing[:5]}" if missing else ""))

    # Exactly one Slurm job per launch marker, and the launch's result is
    # the one accounting implies.
    rows, deadline = {}, time.monotonic() + 60
    while time.monotonic() < deadline:
        rows = sacct_rows()
        jobs = {lid: {j: s for name, js in rows.items() if name.rsplit(".", 1)[0] == marker_base(lid)
                      for j, s in js.items()} for lid in accepted}
        if all(len(j) >= 1 and all(s not in ("PENDING", "RUNNING", "COMPLETING") for s in j.values())
               for j in jobs.values()):
            break
        time.sleep(2)
    not_one = {lid: sorted(j) for lid, j in jobs.items() if len(j) != 1}
    result("one-job-per-marker", not not_one,
           f"{len(accepted) - len(not_one)} of {len(accepted)} markers have exactly one job"
           + (f"; {dict(list(not_one.items())[:5])}" if not_one else ""))
    wrong = []
    for lid, body in ends.items():
        j = jobs.get(lid, {})
        if len(j) != 1:
            continue
        # The result accounting implies: COMPLETED is result 0 (reason
        # "completed: ..."), any other end (a job Slurm failed by itself,
        # as the testbed does now and then) a non-zero result; and the
        # launch names that job.
        job_id, state = next(iter(j.items()))
        got = body.get("reason")
        ids = [str(x) for x in body.get("job_ids", [])]
        ok_acct = state == "COMPLETED"
        ok_launch = body.get("result_code") == 0 and str(got).startswith("completed")
        if ok_acct != ok_launch or job_id not in ids:
            wrong.append(f"{lid}: launch {got}/{body.get('result_code')} jobs {ids}, accounting {job_id} {state}")
    result("result-matches-accounting", not wrong,
           f"{len(ends) - len(wrong)} of {len(ends)} results match accounting" + (f"; {wrong[:3]}" if wrong else ""))

    # Every completed launch's stdout, archived by whichever replica led
    # when it ended, read from the other replica: from the store, byte for
    # byte.  (A job Slurm failed by itself may never have run.)
    ran = [lid for lid, body in ends.items() if body.get("result_code") == 0]
    known, unknown, wrong = logs_elsewhere(ran)
    result("logs-from-the-other-replica", not wrong and known + unknown == len(ran) and known > 0,
           f"{known} of {len(ran)} completed launches' stdout served from the store by the replica that did "
           f"not archive it; {unknown} without an `archived` event (a leader killed in its cycle) served by "
           "both" + (f"; {wrong[:3]}" if wrong else ""))
    for r in replicas:
        r.stop()


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        log(f"ERROR {e}")
        sys.exit(2)
    finally:
        for rep in replicas:
            if rep.alive():
                rep.proc.kill()
