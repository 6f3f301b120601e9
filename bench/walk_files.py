#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""walk_files.py CALLGRIND_OUT FILES_OUT - the files of src/ whose code ran
while callgrind collected (walk_files.sh switches collection on inside the
walk's entry points only), and the calls of jansson's parse and serialise (and
base/json_text.c's json_text_dump(), which writes jansson's text itself).

callgrind's format: fl= sets the function's file, fi=/fe= the file of the
code inlined into it, fn= the function, cfn= a called function; a calls=
line is followed by the call's inclusive cost line; every other cost line is
a self cost of the current file.  Prints the count, the files, and the
parse / serialisation calls; writes the files, one a line, to FILES_OUT.
"""
import re
import sys

SPEC = re.compile(r"(fl|fi|fe|fn|cfn|cfi|cfl)=\((\d+)\)(?: (.*))?")
COUNTED = ("json_loadb", "json_loads", "json_dumps", "json_dumpb", "json_text_dump")
# Where the launch's data changes form: parsed, serialised, or sent (the
# HTTP transport drives libcurl's multi interface; the CLI its easy one).
FORM = COUNTED + ("curl_multi_perform", "curl_easy_perform")
SRC = re.compile(r"src/[a-z_]+/[a-z_0-9]+\.c$")


# walk_files.sh's entry points: collection is on inside these only.
ENTRIES = ("launch_post", "launcher_intake_drain", "launcher_submit_due", "stage_worker",
           "chunk_post", "submit_worker")


def reach(start, graph):
    seen, todo = set(start), list(start)
    while todo:
        for g in graph.get(todo.pop(), ()):
            if g not in seen:
                seen.add(g)
                todo.append(g)
    return seen


def spine(edges, home):
    """The functions called (directly or not) from an entry point that
    themselves reach a FORM function, on the recorded call graph
    (callgrind's caller -> callee pairs, without their context), and the
    files of src/ that hold them."""
    callers, callees = {}, {}
    for a, b in edges:
        callers.setdefault(b, set()).add(a)
        callees.setdefault(a, set()).add(b)
    down = reach([f for f in ENTRIES if f in callees], callees)
    up = reach([f for f in FORM if f in callers], callers)
    on = down & up
    return sorted({m.group(0) for f in on for m in [SRC.search(home.get(f, ""))] if m})


def main():
    files, names, used = {}, {}, set()
    edges, home = set(), {}
    calls = dict.fromkeys(COUNTED, 0)
    by_caller = {}
    fl = cur = cfn = fn = None
    after_calls = False
    for line in open(sys.argv[1], errors="replace"):
        m = SPEC.match(line)
        if m:
            kind, num, name = m.groups()
            table = names if kind in ("fn", "cfn") else files
            if name:
                table[num] = name.strip()
            value = table.get(num)
            if kind == "fl":
                fl = cur = value
            elif kind in ("fi", "fe"):
                cur = value
            elif kind == "fn":
                cur = fl
                fn = value
                home.setdefault(fn, fl or "")
            elif kind == "cfn":
                cfn = value
                edges.add((fn, cfn))
            continue
        m = re.match(r"calls=(\d+)", line)
        if m:
            if cfn in calls:
                calls[cfn] += int(m.group(1))
                key = (cfn, fn)
                by_caller[key] = by_caller.get(key, 0) + int(m.group(1))
            after_calls = True
            continue
        if re.match(r"[+\-*]?\d", line):
            if after_calls:
                after_calls = False
            elif cur:
                used.add(cur)
    src = sorted({m.group(0) for f in used for m in [SRC.search(f)] if m})
    path = spine(edges, home)
    with open(sys.argv[2], "w") as out:
        out.write("".join(s + "\n" for s in src))
    print("%d files of src/" % len(src))
    for s in src:
        print("    " + s)
    print("%d files of src/ on the data's path (a function of the file calls, directly or "
          "not, a parse, a serialisation or the send)" % len(path))
    for s in path:
        print("    " + s)
    with open(sys.argv[2] + ".path", "w") as out:
        out.write("".join(s + "\n" for s in path))
    print("    parses (json_loadb + json_loads): %d; serialisations (json_dumps + json_dumpb + "
          "json_text_dump): %d"
          % (calls["json_loadb"] + calls["json_loads"],
             calls["json_dumps"] + calls["json_dumpb"] + calls["json_text_dump"]))
    for (callee, caller), n in sorted(by_caller.items()):
        print("      %-10s x%-3d from %s" % (callee, n, caller))


if __name__ == "__main__":
    main()
