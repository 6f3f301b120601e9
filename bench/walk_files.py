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


def main():
    files, names, used = {}, {}, set()
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
            elif kind == "cfn":
                cfn = value
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
    src = sorted({m.group(0) for f in used
                  for m in [re.search(r"src/[a-z_]+/[a-z_0-9]+\.c$", f)] if m})
    with open(sys.argv[2], "w") as out:
        out.write("".join(s + "\n" for s in src))
    print("%d files of src/" % len(src))
    for s in src:
        print("    " + s)
    print("    parses (json_loadb + json_loads): %d; serialisations (json_dumps + json_dumpb + "
          "json_text_dump): %d"
          % (calls["json_loadb"] + calls["json_loads"],
             calls["json_dumps"] + calls["json_dumpb"] + calls["json_text_dump"]))
    for (callee, caller), n in sorted(by_caller.items()):
        print("      %-10s x%-3d from %s" % (callee, n, caller))


if __name__ == "__main__":
    main()
