#!/usr/bin/env python3
"""check_layers.py SRC_DIR [OBJ_DIR ...] - the layering rules of src/ (src/README.md).

Checks, each failure named with its file:
  1. includes: a file of layer L includes only headers of layers <= L
     (quoted "layer/x.h" or a same-folder "x.h", and <sluice/x.h> by the
     PUBLIC table below); no include cycle between files.
  2. calls (with OBJ_DIRs, the object files of sluice_core and of the
     command): every call from
     one file into another goes to the same or a lower layer, and no set of
     files calls round in a cycle (found with `nm` on the objects).
  3. third-party headers: each library is included by its one file only.
  4. size: no file of src/ over MAX_LINES lines.
Prints what it checked (edges, files, the largest files) and exits 1 on any
failure.
"""
import os
import re
import subprocess
import sys

LAYERS = ["base", "site", "request", "transport", "slurm", "store", "supervise", "serve", "cli"]
# Public headers and the layer that implements them.
PUBLIC = {
    "common.h": "base", "error.h": "base", "log.h": "base", "version.h": "base",
    "timing.h": "base",
    "config.h": "site",
    "launch.h": "request", "jobdesc.h": "request", "render.h": "request",
    "auth.h": "slurm", "client.h": "slurm", "cluster.h": "slurm",
    "fsm.h": "supervise", "store.h": "store", "launcher.h": "supervise",
    "launch_view.h": "supervise", "ops.h": "supervise", "accept.h": "supervise",
    "supervisor.h": "supervise", "leader.h": "supervise", "lease.h": "store",
    "server.h": "serve",
    "sluice.h": "cli",  # the umbrella: everything, for users of the library
}
# Third-party headers and the one file allowed to include each.
THIRD_PARTY = {
    r"curl/": "src/transport/http.c",
    r"jwt\.h": "src/slurm/auth.c",
    r"yaml\.h": "src/site/config_yaml.c",
    r"sqlite3\.h": "src/store/store_sqlite.c",
    r"libpq-fe\.h": "src/store/store_pg.c",
    r"microhttpd\.h": "src/serve/server.c",
    r"openssl/": "src/base/marker.c",
}
MAX_LINES = int(os.environ.get("SLUICE_MAX_LINES", "800"))

INC = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)


def layer_of(rel):
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] == "include":
        return PUBLIC.get(parts[-1])
    return None


def rank(layer):
    return LAYERS.index(layer)


def find_cycles(nodes, edges):
    """Tarjan's strongly connected components with more than one member."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    objdirs = [os.path.abspath(d) for d in sys.argv[2:]]
    os.chdir(src)
    failures = []
    files = []
    for top in ("src", "include/sluice"):
        for dp, _, fn in os.walk(top):
            for f in fn:
                if f.endswith((".c", ".h", ".h.in")):
                    files.append(os.path.join(dp, f).replace(os.sep, "/"))
    files.sort()
    for f in files:
        if f.startswith("src/") and len(f.split("/")) == 2:
            failures.append(f"{f}: a source file outside every layer folder")
        if f.startswith("include/") and f.endswith(".h") and os.path.basename(f) not in PUBLIC:
            failures.append(f"{f}: public header missing from check_layers.py's PUBLIC table")

    # 1. includes
    inc_edges, n_inc = {}, 0
    for f in files:
        mine = layer_of(f)
        text = open(f, encoding="utf-8", errors="replace").read()
        for kind, name in INC.findall(text):
            target = None
            if kind == '"':
                here = os.path.join(os.path.dirname(f), name)
                there = os.path.join("src", name)
                target = here if os.path.exists(here) else there if os.path.exists(there) else None
                target = os.path.normpath(target).replace(os.sep, "/") if target else None
            elif name.startswith("sluice/"):
                target = "include/" + name
            else:
                for pat, owner in THIRD_PARTY.items():
                    if re.match(pat, name) and f != owner:
                        failures.append(f"{f}: includes <{name}>; only {owner} may")
                continue
            if target is None:
                continue
            n_inc += 1
            inc_edges.setdefault(f, set()).add(target)
            theirs = layer_of(target)
            if mine and theirs and rank(theirs) > rank(mine):
                failures.append(f"{f} ({mine}) includes {target} ({theirs}): a lower layer "
                                f"never includes a higher one")
    for cyc in find_cycles(set(files), inc_edges):
        failures.append("include cycle: " + " -> ".join(cyc))

    # 2. calls
    n_calls = 0
    if objdirs:
        objs = []
        for objdir in objdirs:
            for dp, _, fn in os.walk(objdir):
                for f in fn:
                    if f.endswith(".c.o"):
                        objs.append((objdir, os.path.join(dp, f)))
        defined, undefined = {}, {}
        for objdir, o in objs:
            rel = os.path.relpath(o, objdir).replace(os.sep, "/")
            m = re.search(r"(src/.*)\.o$", rel)
            if not m:
                continue
            cfile = m.group(1)
            out = subprocess.run(["nm", "-P", o], capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) < 2:
                    continue
                sym, typ = parts[0], parts[1]
                if typ == "U":
                    undefined.setdefault(cfile, set()).add(sym)
                elif typ in "TDBRVWC" and typ.isupper():
                    defined[sym] = cfile
        if not defined:
            failures.append(f"{' '.join(objdirs)}: no object files of src/ found")
        call_edges = {}
        for f, syms in undefined.items():
            for s in syms:
                g = defined.get(s)
                if g and g != f:
                    n_calls += 1
                    call_edges.setdefault(f, set()).add(g)
                    lf, lg = layer_of(f), layer_of(g)
                    if lf and lg and rank(lg) > rank(lf):
                        failures.append(f"{f} ({lf}) uses {s} of {g} ({lg}): a lower layer never "
                                        f"calls a higher one")
        for cyc in find_cycles(set(undefined) | set(defined.values()), call_edges):
            failures.append("call cycle: " + " <-> ".join(cyc))

    # 4. size
    sizes = []
    for f in files:
        if f.startswith("src/"):
            n = sum(1 for _ in open(f, encoding="utf-8", errors="replace"))
            sizes.append((n, f))
            if n > MAX_LINES:
                failures.append(f"{f}: over {MAX_LINES} lines ({n})")
    sizes.sort(reverse=True)
    print(f"check-layers: {len(files)} files, {n_inc} include edges, {n_calls} cross-file "
          f"symbol uses" + ("" if objdirs else " (no object dir: calls not checked)"))
    print("check-layers: largest: " + ", ".join(f"{f} {n}" for n, f in sizes[:8]))
    # Known failures still being worked off (tests/lint/layers-known.txt, one
    # per line, the message up to any " (" of a count): listed ones are
    # reported but pass; a listed one that no longer happens fails, so the
    # list can only shrink.
    known_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers-known.txt")
    known = set()
    if os.path.exists(known_path):
        for line in open(known_path, encoding="utf-8"):
            line = line.strip()
            if line and not line.startswith("#"):
                known.add(line)
    bad = 0
    seen = set()
    for msg in failures:
        key = re.sub(r" \(\d+\)$", "", msg)
        if key in known:
            seen.add(key)
            print("check-layers: known: " + msg)
        else:
            bad += 1
            print("check-layers: " + msg)
    for key in sorted(known - seen):
        bad += 1
        print(f"check-layers: fixed, remove from layers-known.txt: {key}")
    print(f"check-layers: {bad} failure(s), {len(seen)} known")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
