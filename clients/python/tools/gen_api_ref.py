#!/usr/bin/env python3
"""gen_api_ref.py [--check FILE] - the Markdown API reference of sluice_client
(docs/python-api.md) from the package's own signatures and docstrings.

    python3 clients/python/tools/gen_api_ref.py > docs/python-api.md

prints the reference; ``--check FILE`` compares FILE with a fresh generation
and exits 1 (with a diff and the command above) when they differ.  Standard
library only (``inspect``, ``dataclasses``, ``enum``); the package is imported
from clients/python/src, never an installed copy.

Every name of ``sluice_client.__all__`` must be in one of SECTIONS: a public
name that is not fails the generation, so a new one cannot go undocumented.
A class shows its constructor, its fields (dataclasses), members (enums) and
its public methods and properties, each with its docstring.
"""
from __future__ import annotations

import dataclasses
import difflib
import enum
import inspect
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import sluice_client  # noqa: E402

COMMAND = "python3 clients/python/tools/gen_api_ref.py > docs/python-api.md"

# (title, introduction, names) in the order of the page.
SECTIONS = [
    ("Clients", "The blocking client, its asyncio twin and what `create()` accepts.",
     ["Client", "AsyncClient", "RequestLike", "DEFAULT_CREATE_RETRY"]),
    ("Requests", "A launch request as typed objects ([launch-request.md](launch-request.md) is the "
     "JSON they stand for); a `dict` of that JSON may stand in for each.",
     ["LaunchRequest", "Pool", "Mount", "Dependency", "Webhook"]),
    ("Answers", "What the service's routes return. Unknown fields are kept in `raw`; missing "
     "optional ones are None.",
     ["Launch", "LaunchSummary", "Component", "Node", "Event", "Page", "DryRun", "ServiceStatus",
      "PollStats"]),
    ("Enums and result codes", "`str` subclasses: a member goes wherever the API takes a name.",
     ["LaunchState", "Result", "DependencyCondition", "MountMode", "result_name", "RESULT_NAMES",
      "SUCCEEDED", "EXECUTION_ERROR", "ABORTED", "INFRASTRUCTURE_ERROR", "UNKNOWN"]),
    ("Streams", "Event streams (resumed with `Last-Event-ID`), their retry policy and the "
     "Server-Sent Events parser underneath.",
     ["EventStream", "AsyncEventStream", "RetryPolicy", "SSEParser", "Message"]),
    ("Errors", "Every problem answer becomes the exception of its status; all derive from "
     "`SluiceError`.",
     ["SluiceError", "Problem", "FieldError", "problem_error", "ConfigurationError",
      "TransportError", "ProtocolError", "BadRequest", "Unauthorized", "Forbidden", "NotFound",
      "MethodNotAllowed", "Conflict", "WrongState", "PayloadTooLarge", "UnsupportedMediaType",
      "InvalidRequest", "InternalError", "ServiceUnavailable", "WaitTimeout"]),
    ("Webhooks", "For a receiver of the service's signed deliveries ([api.md](api.md#webhooks)).",
     ["verify_webhook", "load_webhook_secret", "sign_webhook", "WebhookDelivery",
      "WebhookVerificationError"]),
    ("Helpers", "", ["read_token_file", "is_loopback_host", "__version__"]),
]


def prose(doc):
    """A docstring as Markdown: reST roles and literals made plain."""
    if not doc:
        return ""
    doc = re.sub(r":(?:class|meth|func|attr|data|exc):`~?(?:sluice_client\.)?([^`]+)`", r"`\1`", doc)
    doc = doc.replace("``", "`")
    out, code = [], False
    for line in doc.split("\n"):
        # an indented example block (reST `::` or a plain indent): a code fence
        if line.startswith("    ") and not code and (not out or out[-1] == ""):
            out.append("```python")
            code = True
        elif code and line and not line.startswith("    "):
            out.append("```")
            code = False
        if code:
            if not line.strip():
                out.append("")
                continue
            line = line[4:]
        out.append(line.rstrip())
    if code:
        while out and out[-1] == "":
            out.pop()
        out.append("```")
    text = "\n".join(out).replace("::\n```", ":\n\n```")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def value(v):
    """A default or a constant as source text (stable: no addresses)."""
    if isinstance(v, enum.Enum):
        return "%s.%s" % (type(v).__name__, v.name)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return "%s(%s)" % (type(v).__name__, ", ".join(
            "%s=%s" % (f.name, value(getattr(v, f.name))) for f in dataclasses.fields(v) if f.repr))
    if type(v).__module__.startswith("sluice_client") and "__repr__" in vars(type(v)):
        return repr(v)
    if isinstance(v, (str, int, float, bool, type(None), tuple, list, dict)):
        return repr(v)
    return "%s(...)" % type(v).__name__


def annotation(a):
    if a is inspect.Parameter.empty:
        return ""
    text = a if isinstance(a, str) else inspect.formatannotation(a)
    return re.sub(r"""(['"])([A-Za-z_][A-Za-z0-9_.]*)\1""", r"\2", text)


def signature(name, fn, drop_self=False):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return name + "(...)"
    parts, star = [], False
    params = list(sig.parameters.values())
    if drop_self and params and params[0].name in ("self", "cls"):
        params = params[1:]
    for p in params:
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        s = p.name
        if p.kind is p.VAR_POSITIONAL:
            s, star = "*" + s, True
        elif p.kind is p.VAR_KEYWORD:
            s = "**" + s
        a = annotation(p.annotation)
        if a:
            s += ": " + a
        if p.default is not p.empty:
            s += (" = " if a else "=") + value(p.default)
        parts.append(s)
        if p.kind is p.POSITIONAL_ONLY and (p is params[-1] or params[params.index(p) + 1].kind
                                            is not p.POSITIONAL_ONLY):
            parts.append("/")
    ret = annotation(sig.return_annotation)
    ret = " -> " + ret if ret and not (name[:1].isupper() and ret == "None") else ""
    one = "%s(%s)%s" % (name, ", ".join(parts), ret)
    if len(one) <= 88 or not parts:
        return one
    return "%s(\n%s,\n)%s" % (name, ",\n".join("    " + p for p in parts), ret)


def code(text):
    return "```python\n%s\n```\n" % text


def anchor(name):
    return "#" + name.lower().replace(".", "").replace("_", "_")


def members(cls):
    """(name, kind, object) of the public methods and properties cls itself
    defines, in source order."""
    seen, out = set(), []
    for klass in cls.__mro__[:1]:
        for name, obj in vars(klass).items():
            if name in seen or (name.startswith("_") and name != "__init__"):
                continue
            seen.add(name)
            if name == "__init__":
                continue
            if isinstance(obj, property):
                out.append((name, "property", obj))
            elif isinstance(obj, classmethod):
                out.append((name, "classmethod", obj.__func__))
            elif isinstance(obj, staticmethod):
                out.append((name, "staticmethod", obj.__func__))
            elif inspect.isfunction(obj):
                out.append((name, "method", obj))
    return out


def field_table(cls):
    hints = {}
    for klass in reversed(cls.__mro__):
        hints.update(getattr(klass, "__annotations__", {}))
    rows = ["| field | type | default |", "|---|---|---|"]
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            d = "`%s`" % value(f.default)
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            d = "`%s`" % value(f.default_factory())  # type: ignore[misc]
        else:
            d = "required"
        t = annotation(hints.get(f.name, f.type)).replace("|", "\\|")
        rows.append("| `%s` | `%s` | %s |" % (f.name, t, d))
    return "\n".join(rows) + "\n"


def document_class(name, cls):
    out = ["### `%s`\n" % name]
    bases = [b.__name__ for b in cls.__bases__ if b is not object]
    if issubclass(cls, enum.Enum):
        out.append(code("class %s(%s)" % (name, ", ".join(bases))))
    elif dataclasses.is_dataclass(cls):
        out.append(code("@dataclass\nclass %s%s" % (name, "(%s)" % ", ".join(bases) if bases else "")))
    elif not bases:
        out.append(code("class " + signature(name, cls)))
    elif "__init__" in vars(cls):
        # the bases, then how it is constructed
        out.append(code("class %s(%s)\n\n%s" % (name, ", ".join(bases), signature(name, cls))))
    else:
        out.append(code("class %s(%s)" % (name, ", ".join(bases))))
    doc = prose(inspect.getdoc(cls) if cls.__doc__ else "")
    if doc and not (issubclass(cls, BaseException) is False and dataclasses.is_dataclass(cls)
                    and doc.startswith(name + "(")):
        out.append(doc + "\n")
    if issubclass(cls, enum.Enum):
        rows = ["| member | value |", "|---|---|"]
        for m in cls:
            rows.append("| `%s.%s` | `%r` |" % (name, m.name, m.value))
        out.append("\n".join(rows) + "\n")
    elif dataclasses.is_dataclass(cls):
        out.append("Fields (also the constructor's arguments, in this order):\n")
        out.append(field_table(cls))
    inherited = [b.__name__ for b in cls.__mro__[1:]
                 if b.__module__.startswith("sluice_client") and members(b)]
    if inherited:
        out.append("Also has the methods and properties of %s.\n" % ", ".join(
            "[`%s`](#%s)" % (b, b.lower()) for b in inherited))
    for mname, kind, obj in members(cls):
        if issubclass(cls, enum.Enum) and mname.startswith("_"):
            continue
        label = "%s.%s" % (name, mname)
        if kind == "property":
            ret = annotation(inspect.signature(obj.fget).return_annotation) if obj.fget else ""
            out.append("#### `%s` (property%s)\n" % (label, ": `%s`" % ret if ret else ""))
            d = prose(inspect.getdoc(obj.fget) if obj.fget is not None and obj.fget.__doc__ else "")
        else:
            prefix = {"classmethod": "@classmethod\n", "staticmethod": "@staticmethod\n"}.get(kind, "")
            asyn = "async " if inspect.iscoroutinefunction(obj) or inspect.isasyncgenfunction(obj) else ""
            out.append("#### `%s`\n" % label)
            out.append(code("%s%sdef %s" % (prefix, asyn, signature(mname, obj,
                                                                   drop_self=kind != "staticmethod"))))
            d = prose(inspect.getdoc(obj) if obj.__doc__ else "")
        if d:
            out.append(d + "\n")
    return out


# Names that cannot carry a docstring (constants, a type alias).
NOTES = {
    "RequestLike": "What `create()` and `dry_run()` take: a `LaunchRequest` or a `dict` of the "
                   "request JSON.",
    "DEFAULT_CREATE_RETRY": "How `Client.create` tries again unless the client or the call "
                            "says otherwise: 3 more tries, 0.5 s doubling up to 4 s, a "
                            "`Retry-After` honoured up to 30 s.",
    "RESULT_NAMES": "Result code -> name: the results of [state-machine.md](state-machine.md).",
    "SUCCEEDED": "Result code 0.",
    "EXECUTION_ERROR": "Result code 1: the workload failed (a non-zero exit, or a signal).",
    "ABORTED": "Result code 9: the caller cancelled the launch.",
    "INFRASTRUCTURE_ERROR": "Result code 104: an infrastructure failure (the cases are in "
                            "[state-machine.md](state-machine.md)).",
    "UNKNOWN": "Result code 127: not terminal (still live, or the scheduler cannot be read "
               "now).",
    "__version__": "The package's version (the same as `pyproject.toml`'s).",
}


def document(name, obj):
    if inspect.isclass(obj):
        return document_class(name, obj)
    if inspect.isfunction(obj):
        return ["### `%s`\n" % name, code("def " + signature(name, obj)),
                prose(inspect.getdoc(obj) if obj.__doc__ else "") + "\n"]
    # a constant or a type alias
    text = value(obj) if not hasattr(obj, "__origin__") else str(obj).replace("typing.", "")
    text = text.replace("sluice_client.models.", "").replace("sluice_client.client.", "")
    return ["### `%s`\n" % name, code("%s = %s" % (name, text)), NOTES.get(name, "") + "\n"]


def generate():
    public = set(sluice_client.__all__)
    placed = [n for _, _, names in SECTIONS for n in names]
    missing = sorted(public - set(placed))
    unknown = sorted(set(placed) - public)
    if missing or unknown:
        raise SystemExit("gen_api_ref: the SECTIONS of %s and sluice_client.__all__ differ: "
                         "not placed %s, not public %s" % (__file__, missing, unknown))
    out = ["# Python client API reference (`sluice_client` %s)\n" % sluice_client.__version__,
           "<!-- Generated by clients/python/tools/gen_api_ref.py from the package's signatures and "
           "docstrings; do not edit: `%s` -->\n" % COMMAND,
           "Every public name of the package (`from sluice_client import ...`), with its signature "
           "and docstring. How the client behaves (connecting, retries, streams, waiting) is told "
           "in [python-client.md](python-client.md); the HTTP API it calls is [api.md](api.md).\n",
           "## Contents\n"]
    for title, _, names in SECTIONS:
        out.append("- [%s](#%s): %s" % (title, re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-"),
                                       ", ".join("`%s`" % n for n in names)))
    out.append("")
    for title, intro, names in SECTIONS:
        out.append("## %s\n" % title)
        if intro:
            out.append(intro + "\n")
        for n in names:
            out += document(n, getattr(sluice_client, n))
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"


def main(argv):
    text = generate()
    if len(argv) == 3 and argv[1] == "--check":
        have = open(argv[2]).read() if os.path.exists(argv[2]) else ""
        if have == text:
            print("python-api: %s matches the package" % argv[2])
            return 0
        sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), text.splitlines(True),
                                                   argv[2], "generated", n=1))
        print("python-api: %s is not what the package's docstrings give; regenerate it from the "
              "repository's top: %s" % (argv[2], COMMAND))
        return 1
    if len(argv) != 1:
        print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 64
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
