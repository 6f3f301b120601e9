#!/usr/bin/python3
# check_openapi_served.py SRC_DIR SERVED_JSON - the document `sluice serve`
# answers at /v1/openapi.json against openapi/sluice-v1.yaml read here on
# its own (PyYAML, Debian's python3-yaml, as lint.apidoc): the request
# schemas of openapi/components/launch-request.yaml bundled under
# components.schemas, the references to that file made local, and
# info.version the project's version (CMakeLists.txt).  Then the served
# document must equal the file's value exactly; the counts of paths,
# operations and schemas are printed.
import json, re, sys
import yaml

src, served_path = sys.argv[1], sys.argv[2]
doc = yaml.safe_load(open(f"{src}/openapi/sluice-v1.yaml"))
parts = yaml.safe_load(open(f"{src}/openapi/components/launch-request.yaml"))
project = re.search(r"project\(sluice VERSION (\S+)", open(f"{src}/CMakeLists.txt").read()).group(1)
served = json.load(open(served_path))

REF = "./components/launch-request.yaml#"

def local(v):
    if isinstance(v, dict):
        return {k: (x[len(REF) - 1:] if k == "$ref" and isinstance(x, str) and x.startswith(REF)
                    else local(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [local(x) for x in v]
    return v

schemas = doc["components"]["schemas"]
for name, schema in parts["components"]["schemas"].items():
    schemas.setdefault(name, schema)
doc = local(doc)
doc["info"]["version"] = project

methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
def ops(d):
    return sorted(f"{m.upper()} {p}" for p, item in d["paths"].items() for m in item if m in methods)

bad = []
if served.get("info", {}).get("version") != project:
    bad.append(f"info.version {served.get('info', {}).get('version')!r}, the project's {project!r}")
if ops(served) != ops(doc):
    bad.append(f"operations differ: {sorted(set(ops(served)) ^ set(ops(doc)))}")
if sorted(served["components"]["schemas"]) != sorted(doc["components"]["schemas"]):
    bad.append("components.schemas names differ")
def refs(v):
    if isinstance(v, dict):
        return [x for k, x in v.items() if k == "$ref"] + [r for x in v.values() for r in refs(x)]
    if isinstance(v, list):
        return [r for x in v for r in refs(x)]
    return []
left = [r for r in refs(served) if not r.startswith("#/")]
if left:
    bad.append(f"references to another file are left: {left}")
if not bad and served != doc:
    for k in doc:
        if served.get(k) != doc[k]:
            bad.append(f"member {k} differs")
for b in bad:
    print(f"check_openapi_served: FAIL {b}")
print(f"check_openapi_served: {len(doc['paths'])} paths, {len(ops(doc))} operations, "
      f"{len(doc['components']['schemas'])} schemas; {len(bad)} differences")
sys.exit(1 if bad else 0)
