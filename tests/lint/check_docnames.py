#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_docnames.py SLUICE SOURCE_DIR - every option, site key and HTTP
route the docs name exists (issue 31):

- an option (`--name`) on a `sluice ...` command line, in a code block or an
  inline code span, is an option of some sluice command (`sluice help CMD`
  for every command `sluice help` lists);
- a site key in an inline code span (`job_launcher.poll_interval`,
  `--set rest.url=...`) is a key of the field table (the generated
  docs/config-reference.md), a section of it, or an entry under a map key
  (gpu_series.<name>..., job_launcher.executables.<name>);
- a route (`/v1/...`) is a path of openapi/sluice-v1.yaml (any `{...}` a
  parameter) or the status page (/ui).
Pages: README.md, docs/*.md (docs/benchmarks.md records history and is
left out), src/*/README.md.
"""
import pathlib
import re
import subprocess
import sys

SECTIONS = ("site", "rest", "storage", "job_launcher", "gpu_series", "policy", "accounting",
            "submit", "poll", "server", "retention", "webhooks", "store", "ha", "log")
MAPS = ("gpu_series.", "job_launcher.executables.", "clusters.", "clusters[")
KEY = re.compile(r"^(?:--set[ =])?((?:%s)\.[a-z_][a-z0-9_.]*)(?:=.*)?$" % "|".join(SECTIONS))
OPT = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
ROUTE = re.compile(r"/v1/[A-Za-z0-9_./{}|:-]*")


def sluice_options(sluice):
    top = subprocess.run([sluice, "help"], capture_output=True, text=True).stdout
    cmds = re.findall(r"^  ([a-z]+) ", top, re.M)
    opts = set(OPT.findall(top))
    for c in cmds:
        for sub in ([c], [c, "show"], [c, "reference"], [c, "mint"], [c, "check"]):
            r = subprocess.run([sluice, "help"] + sub, capture_output=True, text=True)
            if r.returncode == 0:
                opts |= set(OPT.findall(r.stdout))
    return opts


def site_keys(root):
    text = (root / "docs" / "config-reference.md").read_text()
    return set(re.findall(r"^\| `([a-z0-9_.]+)` \|", text, re.M))


def routes(root):
    text = (root / "openapi" / "sluice-v1.yaml").read_text()
    pats = []
    for p in re.findall(r"^  (/v1/[^:]*):", text, re.M):
        pats.append(re.compile("^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(p)) + "/?$"))
    return pats


def sluice_lines(text):
    """(line number, text) of the command lines and inline spans that run sluice."""
    out, in_block = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_block = not in_block
            continue
        if in_block:
            s = line.strip().lstrip("$# ").strip()
            if s.startswith("sluice ") or s.startswith("sudo sluice "):
                out.append((n, s.split(" #")[0]))
            continue
        for span in re.findall(r"`([^`]+)`", line):
            # a span that quotes an error about an option names a bad one on purpose
            if span.startswith("sluice ") and "unknown option" not in span:
                out.append((n, span))
    return out


def main():
    sluice, root = sys.argv[1], pathlib.Path(sys.argv[2])
    opts, keys, pats = sluice_options(sluice), site_keys(root), routes(root)
    sections = {k.split(".")[0] for k in keys} | {k.rsplit(".", 1)[0] for k in keys}
    pages = [root / "README.md"] + sorted(p for p in (root / "docs").glob("*.md")
                                          if p.name != "benchmarks.md")
    pages += sorted(root.glob("src/*/README.md"))
    bad = 0

    def report(page, n, what):
        nonlocal bad
        bad += 1
        print("%s:%d: %s" % (page.relative_to(root), n, what))

    for page in pages:
        text = page.read_text(errors="replace")
        for n, line in sluice_lines(text):
            for o in OPT.findall(line):
                if o not in opts:
                    report(page, n, "%s is no option of any sluice command (%s)" % (o, line))
        for n, line in enumerate(text.splitlines(), 1):
            for span in re.findall(r"`([^`]+)`", line):
                m = KEY.match(span.strip())
                if m and not re.search(r"\.(c|h|md|py|sh|yaml|yml|json|log)$", m.group(1)):
                    k = m.group(1).rstrip(".")
                    if not (k in keys or k in sections or k.startswith(MAPS)):
                        report(page, n, "site key `%s` is not in the field table" % k)
            for r in ROUTE.findall(line):
                r = re.sub(r"\{[^}/]*\}?", "X", r).rstrip(".,:;)")
                if r.startswith("/v1/ui") or not any(p.match(r) for p in pats):
                    if not any(p.match(r.rstrip("/")) for p in pats):
                        report(page, n, "route %s is not in openapi/sluice-v1.yaml" % r)
    print("docnames: %d pages; %d options, %d site keys, %d routes known; %d unknown named"
          % (len(pages), len(opts), len(keys), len(pats), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
