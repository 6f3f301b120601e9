#!/usr/bin/env bash
# check-apidoc.sh SRC_DIR - docs/api.md and openapi/sluice-v1.yaml name the
# same routes: every path + method of the OpenAPI document has a
# "### METHOD /path" section in docs/api.md and vice versa, and each
# section's "Answers:" line lists exactly the response statuses the
# document gives that operation; and the document's info.version is the
# project's version (CMakeLists.txt), the one the binary reports.  Needs
# Debian's python3 with python3-yaml.
set -euo pipefail
src="${1:?usage: check-apidoc.sh SRC_DIR}"
py=/usr/bin/python3
"$py" -c 'import yaml' 2>/dev/null || {
    echo "check-apidoc: $py with the yaml module is needed (deploy/install-deps.sh)" >&2
    exit 1
}
exec "$py" - "$src/openapi/sluice-v1.yaml" "$src/docs/api.md" "$src/CMakeLists.txt" <<'PY'
import re, sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
doc = open(sys.argv[2]).read()
project = re.search(r"project\(sluice VERSION (\S+)", open(sys.argv[3]).read())
methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
want = {}
for path, item in spec.get("paths", {}).items():
    for m, op in item.items():
        if m in methods:
            want[(m.upper(), path)] = sorted(str(s) for s in op.get("responses", {}))
have = {}
sections = re.split(r"^### ", doc, flags=re.M)[1:]
for sec in sections:
    head = sec.splitlines()[0].strip()
    m = re.fullmatch(r"(GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS|TRACE) (/\S+)", head)
    if not m:
        continue
    ans = re.search(r"^Answers: (.*)$", sec, re.M)
    have[(m.group(1), m.group(2))] = sorted(re.findall(r"`(\d{3})`", ans.group(1))) if ans else None
bad = []
doc_version = str(spec.get("info", {}).get("version"))
if not project:
    bad.append("CMakeLists.txt has no 'project(sluice VERSION x.y.z'")
elif doc_version != project.group(1):
    bad.append(f"openapi info.version is {doc_version}, the project's version is {project.group(1)}")
for k in sorted(set(want) - set(have)):
    bad.append(f"{k[0]} {k[1]} is in the OpenAPI document but not in docs/api.md")
for k in sorted(set(have) - set(want)):
    bad.append(f"{k[0]} {k[1]} is in docs/api.md but not in the OpenAPI document")
for k in sorted(set(want) & set(have)):
    if have[k] is None:
        bad.append(f"{k[0]} {k[1]}: no 'Answers:' line in docs/api.md")
    elif have[k] != want[k]:
        bad.append(f"{k[0]} {k[1]}: docs/api.md answers {have[k]}, the document {want[k]}")
for b in bad:
    print(f"check-apidoc: FAIL {b}")
print(f"check-apidoc: {len(want)} operations in the document, {len(have)} in docs/api.md, "
      f"{len(bad)} differences")
sys.exit(1 if bad or not want else 0)
PY
