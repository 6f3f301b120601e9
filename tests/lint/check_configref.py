#!/usr/bin/env python3
"""check_configref.py SLUICE_BIN SRC_DIR - the generated configuration
reference (issue 31) against the field table:
  1. `sluice config reference` (markdown) is docs/config-reference.md, byte
     for byte, and `--format json-schema` is docs/sluice-site.schema.json;
  2. the schema parses as JSON, is draft 2020-12 and closed at the top;
  3. every row of cfg_fields[] (src/site/config_fields.c) has a non-empty
     description: in the markdown (one row per key) and in the schema.
Standard library only.  Prints one line per failure and exits 1 on any.
"""
import difflib
import json
import os
import re
import subprocess
import sys

REGEN = ("regenerate with: {bin} config reference > docs/config-reference.md && "
         "{bin} config reference --format json-schema > docs/sluice-site.schema.json")


def main():
    binary, src = sys.argv[1], os.path.abspath(sys.argv[2])
    failures = []
    outputs = {}
    for fmt, rel in (("markdown", "docs/config-reference.md"),
                     ("json-schema", "docs/sluice-site.schema.json")):
        run = subprocess.run([binary, "config", "reference", "--format", fmt],
                             capture_output=True, text=True)
        if run.returncode != 0:
            failures.append(f"sluice config reference --format {fmt}: exit {run.returncode}: "
                            f"{run.stderr.strip()}")
            continue
        outputs[fmt] = run.stdout
        path = os.path.join(src, rel)
        committed = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if committed != run.stdout:
            diff = difflib.unified_diff(committed.splitlines(), run.stdout.splitlines(),
                                        rel, "sluice config reference --format " + fmt,
                                        lineterm="", n=1)
            failures.append(f"{rel} differs from `sluice config reference --format {fmt}` "
                            f"(the field table changed?); " + REGEN.format(bin="build/sluice")
                            + "\n" + "\n".join(list(diff)[:40]))

    # The rows of the table: F("path", ...
    table = open(os.path.join(src, "src/site/config_fields.c"), encoding="utf-8").read()
    paths = re.findall(r'^\s*F\("([^"]+)"', table, re.M)
    if len(paths) < 90:
        failures.append(f"src/site/config_fields.c: found only {len(paths)} rows")

    md = outputs.get("markdown", "")
    rows = {}
    for line in md.splitlines():
        m = re.match(r"^\| `([^`]+)` \|(.*)\|$", line)
        if m:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", m.group(2))]
            rows[m.group(1)] = cells
    for p in paths:
        if p not in rows:
            failures.append(f"markdown: no row for {p}")
        elif len(rows[p]) != 4 or not all(rows[p]):
            failures.append(f"markdown: {p}: expected type, environment, --set and a "
                            f"non-empty description, got {rows[p]}")

    if "json-schema" in outputs:
        try:
            schema = json.loads(outputs["json-schema"])
        except ValueError as e:
            failures.append(f"the schema does not parse as JSON: {e}")
            schema = None
        if schema is not None:
            if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
                failures.append("schema: $schema is not draft 2020-12")
            if schema.get("additionalProperties") is not False:
                failures.append("schema: the top level is not closed (additionalProperties)")
            for p in paths:
                node = schema
                for part in p.split("."):
                    node = (node.get("properties") or {}).get(part) if node else None
                if not node:
                    failures.append(f"schema: no property for {p}")
                elif not (node.get("description") or "").strip():
                    failures.append(f"schema: {p}: empty description")

    for f in failures:
        print("configref: FAIL " + f)
    print(f"configref: {len(paths)} keys, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
