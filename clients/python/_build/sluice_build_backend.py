"""A PEP 517 build backend written with the standard library only.

pip builds a project in an isolated environment into which it installs the
backend named by ``build-system.requires`` from an index.  sluice's checkout
must install with no index at all (``pip install --no-index clients/python``),
so this backend needs nothing: ``requires = []`` and ``backend-path`` point
pip here.  It builds a pure-Python wheel (the ``src/sluice_client`` package
with every file in it, ``py.typed`` (PEP 561) included, and ``*.dist-info``
with METADATA, WHEEL and RECORD) and an sdist, reading the
name, version and summary from pyproject.toml.  Editable installs (PEP 660)
are supported with a ``.pth`` file pointing at ``src``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "sluice_client"
SDIST_FILES = ["pyproject.toml", "README.md", "_build", "src", "tests", "examples"]


def _project() -> Dict[str, str]:
    """name, version, description and requires-python from [project]
    (a small reader: tomllib is Python 3.11+)."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.S | re.M)
    if not m:
        raise RuntimeError("pyproject.toml has no [project] table")
    out = {}
    for key in ("name", "version", "description", "requires-python"):
        km = re.search(r'^%s\s*=\s*"([^"]*)"\s*$' % re.escape(key), m.group(1), re.M)
        if km:
            out[key] = km.group(1)
    for need in ("name", "version"):
        if need not in out:
            raise RuntimeError("pyproject.toml: [project].%s is missing" % need)
    return out


def _dist_name(p: Dict[str, str]) -> str:
    return re.sub(r"[-_.]+", "_", p["name"]).lower()


def _metadata(p: Dict[str, str]) -> bytes:
    lines = ["Metadata-Version: 2.1", "Name: %s" % p["name"], "Version: %s" % p["version"]]
    if p.get("description"):
        lines.append("Summary: %s" % p["description"])
    if p.get("requires-python"):
        lines.append("Requires-Python: %s" % p["requires-python"])
    lines.append("License: Apache-2.0")
    readme = os.path.join(ROOT, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return ("\n".join(lines) + "\n\n" + body).encode("utf-8")


def _wheel_meta(tag: str = "py3-none-any") -> bytes:
    return ("Wheel-Version: 1.0\nGenerator: sluice_build_backend\nRoot-Is-Purelib: true\nTag: %s\n" % tag).encode()


def _package_files() -> List[Tuple[str, str]]:
    """(path in the wheel, path on disk) of every file of the package: its
    modules and the ``py.typed`` marker (PEP 561)."""
    src = os.path.join(ROOT, "src")
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(src, PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith((".pyc", ".pyo")):
                continue
            full = os.path.join(dirpath, fn)
            out.append((os.path.relpath(full, src).replace(os.sep, "/"), full))
    if (PACKAGE + "/py.typed") not in {a for a, _ in out}:
        raise RuntimeError("src/%s/py.typed is missing: the wheel would not be typed (PEP 561)" % PACKAGE)
    return out


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def _write_wheel(wheel_directory: str, files: List[Tuple[str, bytes]]) -> str:
    p = _project()
    dist = _dist_name(p)
    info = "%s-%s.dist-info" % (dist, p["version"])
    name = "%s-%s-py3-none-any.whl" % (dist, p["version"])
    entries = list(files)
    entries.append(("%s/METADATA" % info, _metadata(p)))
    entries.append(("%s/WHEEL" % info, _wheel_meta()))
    entries.append(("%s/top_level.txt" % info, (PACKAGE + "\n").encode()))
    record = [_record_line(a, d) for a, d in entries]
    record.append("%s/RECORD,," % info)
    entries.append(("%s/RECORD" % info, ("\n".join(record) + "\n").encode()))
    os.makedirs(wheel_directory, exist_ok=True)
    path = os.path.join(wheel_directory, name)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for arc, data in entries:
            zi = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return name


# ------------------------------------------------------------------ PEP 517
def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    files = []
    for arc, full in _package_files():
        with open(full, "rb") as f:
            files.append((arc, f.read()))
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None,
                   metadata_directory: Optional[str] = None) -> str:
    pth = (os.path.join(ROOT, "src") + "\n").encode()
    return _write_wheel(wheel_directory, [("__editable__.%s.pth" % PACKAGE, pth)])


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    p = _project()
    info = "%s-%s.dist-info" % (_dist_name(p), p["version"])
    d = os.path.join(metadata_directory, info)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "wb") as f:
        f.write(_metadata(p))
    with open(os.path.join(d, "WHEEL"), "wb") as f:
        f.write(_wheel_meta())
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    p = _project()
    base = "%s-%s" % (_dist_name(p), p["version"])
    os.makedirs(sdist_directory, exist_ok=True)
    path = os.path.join(sdist_directory, base + ".tar.gz")
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))

    def clean(ti: tarfile.TarInfo) -> Optional[tarfile.TarInfo]:
        if "__pycache__" in ti.name or ti.name.endswith(".pyc"):
            return None
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        ti.mtime = mtime
        return ti

    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as t:
        for item in SDIST_FILES:
            full = os.path.join(ROOT, item)
            if os.path.exists(full):
                t.add(full, arcname="%s/%s" % (base, item), filter=clean)
        pkg_info = _metadata(p)
        ti = tarfile.TarInfo("%s/PKG-INFO" % base)
        ti.size = len(pkg_info)
        ti.mtime = mtime
        ti.mode = 0o644
        t.addfile(ti, io.BytesIO(pkg_info))
    return os.path.basename(path)
