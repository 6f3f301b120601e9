"""check_example_renders.py SOURCE_DIR SLUICE - every example launch request
the repository ships renders with `sluice render` against a shipped site file.

The examples are
- the request files (every tracked *.json outside tests/ whose object has
  `launch_id` and `site`): each must be named in deploy/examples/renders.txt
  with the site file it goes with;
- the request examples of the Markdown (every ```json block that has a
  "launch_id" and a "site" key): the line just before the block must be a
  marker `<!-- render-with: SITE [--study-runtime FILE] -->`.
An example with no pairing fails, so a new one cannot escape.  A site file
ending in .sh is a script that prints the site file (the testbed's).  Where
a golden case of the same name exists (tests/golden/render/<name>/), the
script the command prints must be its expected.sh.

The render checks that the container image exists (a regular file).  The
shipped site files keep images where a CI host has none (/srv/images/), so
the renders run in a private mount namespace (`unshare --mount`, as root,
else in a user namespace) with a tmpfs on the top directory of every place
the site file says images live (policy.allowed_images, the directory of
job_launcher.image), holding an empty file for each image an example, its
site file or its study file names there.  The product is not changed: no
image check is skipped.  Without a namespace the check is skipped (77)
outside CI and fails under CI=true.

Last line: "example_renders: <n> rendered, <m> failed".
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

SRC = os.path.abspath(sys.argv[1])
SLUICE = os.path.abspath(sys.argv[2])
MANIFEST = "deploy/examples/renders.txt"
MARKER = re.compile(r"^<!--\s*render-with:\s*(.*?)\s*-->\s*$")
IMAGE = re.compile(r"/[A-Za-z0-9._/+-]+\.(?:sif|sqsh)\b")
# Directories a tmpfs may never cover, even in a private namespace: the
# command, its libraries, the sources and the build must stay visible.
KEEP = {"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
        "/opt", "/proc", "/root", "/run", "/sbin", "/sys", "/tmp", "/usr", "/var"}


def in_ci():
    return os.environ.get("CI", "") not in ("", "0", "false", "FALSE", "False")


def rel(p):
    return os.path.relpath(p, SRC)


def tracked(pattern):
    out = subprocess.run(["git", "-c", "safe.directory=" + SRC, "-C", SRC, "ls-files", "-z", "--",
                          pattern], check=True,
                         capture_output=True).stdout.decode()
    return sorted(f for f in out.split("\0") if f)


def is_request(obj):
    return isinstance(obj, dict) and "launch_id" in obj and "site" in obj


def collect(problems):
    """[(name, where, request text, [render options])] of every example."""
    examples = []
    pairs = {}
    for n, line in enumerate(open(os.path.join(SRC, MANIFEST)), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) < 2:
            problems.append("%s:%d: expected `REQUEST SITE [options]`" % (MANIFEST, n))
            continue
        pairs[words[0]] = (words[1:], "%s:%d" % (MANIFEST, n))
    for f in tracked("*.json"):
        if f.startswith("tests/") or "/node_modules/" in f:
            continue
        try:
            obj = json.load(open(os.path.join(SRC, f)))
        except ValueError:
            continue
        if not is_request(obj):
            continue
        if f not in pairs:
            problems.append("%s: an example request with no site file: name it in %s" % (f, MANIFEST))
            continue
        opts, _ = pairs.pop(f)
        examples.append((os.path.splitext(os.path.basename(f))[0], f,
                         open(os.path.join(SRC, f)).read(), opts))
    for f, (_, where) in sorted(pairs.items()):
        problems.append("%s: %s is not an example request in the repository" % (where, f))
    for f in tracked("*.md"):
        if "/node_modules/" in f:
            continue
        lines = open(os.path.join(SRC, f)).read().split("\n")
        i = 0
        while i < len(lines):
            if not re.match(r"^\s*```json\s*$", lines[i]):
                i += 1
                continue
            start, j = i, i + 1
            while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                j += 1
            text = "\n".join(lines[start + 1:j])
            i = j + 1
            m = MARKER.match(lines[start - 1].strip()) if start > 0 else None
            looks = re.search(r'"launch_id"\s*:', text) and re.search(r'"site"\s*:', text)
            if not m and not looks:
                continue
            where = "%s:%d" % (f, start + 1)
            if not m:
                problems.append("%s: a request example with no site file: put "
                                "`<!-- render-with: SITE -->` on the line before it" % where)
                continue
            try:
                lid = json.loads(text).get("launch_id", "example")
            except (ValueError, AttributeError):
                lid = "example"
            examples.append((lid, where, text, m.group(1).split()))
    return examples


def site_file(opt, work, cache):
    """The site file an option names; a .sh prints it."""
    if opt in cache:
        return cache[opt]
    p = os.path.join(SRC, opt)
    if opt.endswith(".sh"):
        out = os.path.join(work, "site-%d.yaml" % len(cache))
        with open(out, "w") as fh:
            subprocess.run(["bash", p], check=True, stdout=fh)
        p = out
    cache[opt] = p
    return p


def render_args(ex, work, cache):
    """sluice render's arguments for an example, paths made absolute."""
    opts = ex[3]
    args = ["--config", site_file(opts[0], work, cache)]
    rest = opts[1:]
    while rest:
        if rest[0] == "--study-runtime" and len(rest) > 1:
            args += [rest[0], os.path.join(SRC, rest[1])]
            rest = rest[2:]
        else:
            args.append(rest[0])
            rest = rest[1:]
    return args


def image_dirs(site):
    """Where the site file says images live, as the command reads it."""
    out = subprocess.run([SLUICE, "config", "show", "--config", site, "-o", "json"],
                         capture_output=True, text=True, env=clean_env())
    if out.returncode != 0:
        raise SystemExit("example_renders: FAIL %s does not load: %s" % (site, out.stderr.strip()))
    cfg = json.loads(out.stdout)["config"]
    dirs = set()
    for e in cfg.get("policy", {}).get("allowed_images") or []:
        dirs.add(e.rstrip("/") if e.endswith("/") else os.path.dirname(e))
    img = cfg.get("job_launcher", {}).get("image")
    if img:
        dirs.add(os.path.dirname(img))
    return dirs


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLUICE_", "FORGE_")) or k == "SLUICE_SOURCE_DIR"}
    return env


def prepare_images(examples, work, cache):
    """[(top directory for a tmpfs, [image files below it])]."""
    dirs, texts, sites = set(), [], set()
    for ex in examples:
        args = render_args(ex, work, cache)
        if args[1] not in sites:
            sites.add(args[1])
            dirs |= image_dirs(args[1])
            texts.append(open(args[1]).read())
        texts.append(ex[2])
        if "--study-runtime" in args:
            texts.append(open(args[args.index("--study-runtime") + 1]).read())
    images = {m.group(0) for t in texts for m in IMAGE.finditer(t)}
    plan = {}
    for d in sorted(dirs):
        top = "/" + d.strip("/").split("/")[0]
        if top in KEEP or SRC.startswith(top + "/") or SLUICE.startswith(top + "/"):
            raise SystemExit("example_renders: FAIL images live in %s, whose top directory %s "
                             "this check will not cover with a tmpfs" % (d, top))
        if not os.path.isdir(top):
            raise SystemExit("example_renders: FAIL images live in %s and this host has no %s to "
                             "cover with a tmpfs" % (d, top))
        plan.setdefault(top, set()).add(d)
    return {top: (sorted(ds), sorted(i for i in images
                                     if any(i.startswith(d + "/") for d in ds)))
            for top, ds in plan.items()}


def inside(plan_file):
    """Run in the private namespace: the tmpfs mounts, then every render."""
    plan = json.load(open(plan_file))
    for top, (dirs, images) in plan["images"].items():
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755,size=1m", "example-images", top],
                       check=True)
        for d in dirs:
            os.makedirs(d, exist_ok=True)
        for i in images:
            os.makedirs(os.path.dirname(i), exist_ok=True)
            open(i, "w").close()
    def render(ex):
        return subprocess.run([SLUICE, "render", ex["request"], "-o", "json"] + ex["args"],
                              capture_output=True, text=True, env=clean_env(), cwd=plan["work"])

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        outs = list(pool.map(render, plan["examples"]))
    for ex, out in zip(plan["examples"], outs):
        why = None
        if out.returncode != 0:
            why = "exit %d: %s" % (out.returncode, out.stderr.strip())
        elif ex["golden"]:
            want = open(ex["golden"]).read()
            if json.loads(out.stdout)["script"] != want:
                why = ("its script is not %s (the golden case of the same request): "
                       "regenerate the golden case or pair the example with that case's site file"
                       % rel(ex["golden"]))
        if why:
            failed += 1
            print("example_renders: FAIL %s (%s, %s): %s" % (ex["where"], ex["name"],
                                                             " ".join(ex["shown"]), why))
        else:
            print("example_renders: ok   %s (%s, %s)" % (ex["where"], ex["name"],
                                                         " ".join(ex["shown"])))
    print("example_renders: %d rendered, %d failed" % (len(plan["examples"]) - failed, failed))
    return 1 if failed else 0


def namespace_cmd():
    """The unshare prefix that works here, or None."""
    tries = []
    if os.geteuid() == 0:
        tries.append(["unshare", "--mount", "--propagation", "private"])
    tries.append(["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"])
    for t in tries:
        try:
            if subprocess.run(t + ["true"], capture_output=True).returncode == 0:
                return t
        except OSError:
            return None  # no unshare(1)
    return None


def main():
    if len(sys.argv) > 3 and sys.argv[3] == "--inside":
        return inside(sys.argv[4])
    problems = []
    examples = collect(problems)
    for p in problems:
        print("example_renders: FAIL %s" % p)
    with tempfile.TemporaryDirectory(prefix="example-renders-") as work:
        cache = {}
        plan = {"work": work, "examples": [], "images": {}}
        for n, ex in enumerate(examples):
            if ex[1].endswith(".json") and os.path.exists(os.path.join(SRC, ex[1])):
                req = os.path.join(SRC, ex[1])
            else:
                req = os.path.join(work, "example-%d.json" % n)
                open(req, "w").write(ex[2])
            golden = os.path.join(SRC, "tests/golden/render", ex[0], "expected.sh")
            plan["examples"].append({
                "name": ex[0], "where": ex[1], "request": req, "shown": ex[3],
                "args": render_args(ex, work, cache),
                "golden": golden if ex[1].startswith("deploy/") and os.path.exists(golden) else None})
        plan["images"] = prepare_images(examples, work, cache)
        with open(os.path.join(work, "plan.json"), "w") as fh:
            json.dump(plan, fh)
        ns = namespace_cmd()
        if ns is None:
            if in_ci():
                print("example_renders: FAIL no private mount namespace (unshare --mount needs "
                      "root or user namespaces) while CI=%s: the examples cannot be rendered, "
                      "which in CI is a failure" % os.environ["CI"])
                return 1
            print("example_renders: no private mount namespace (unshare --mount needs root or "
                  "user namespaces): skipped outside CI; with CI=true this fails")
            return 77
        rc = subprocess.run(ns + [sys.executable, os.path.abspath(__file__), SRC, SLUICE,
                                  "--inside", os.path.join(work, "plan.json")]).returncode
    return 1 if problems or rc != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
