import base64
import hashlib
import os
import re
import sys
import tarfile
import tempfile
import unittest
import zipfile

import _path  # noqa: F401
import sluice_client

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "_build"))
import sluice_build_backend as backend  # noqa: E402


class BuildBackendTest(unittest.TestCase):
    def test_version_agrees(self):
        with open(os.path.join(HERE, "pyproject.toml")) as f:
            v = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
        self.assertEqual(v, sluice_client.__version__)

    def test_wheel_record_and_sdist(self):
        with tempfile.TemporaryDirectory() as d:
            name = backend.build_wheel(d)
            self.assertEqual(name, "sluice_client-%s-py3-none-any.whl" % sluice_client.__version__)
            with zipfile.ZipFile(os.path.join(d, name)) as z:
                names = set(z.namelist())
                self.assertIn("sluice_client/client.py", names)
                self.assertIn("sluice_client/py.typed", names)  # PEP 561: the package is typed
                info = "sluice_client-%s.dist-info/" % sluice_client.__version__
                self.assertIn("Name: sluice-client", z.read(info + "METADATA").decode())
                self.assertIn("Root-Is-Purelib: true", z.read(info + "WHEEL").decode())
                rows = [r.split(",") for r in z.read(info + "RECORD").decode().splitlines()]
                self.assertEqual({r[0] for r in rows}, names)
                for path, digest, size in rows:
                    if path.endswith("RECORD"):
                        continue
                    data = z.read(path)
                    want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                    self.assertEqual((digest, int(size)), ("sha256=" + want, len(data)), path)
            self.assertEqual(backend.get_requires_for_build_wheel(), [])
            sd = backend.build_sdist(d)
            with tarfile.open(os.path.join(d, sd)) as t:
                n = t.getnames()
            base = sd[:-len(".tar.gz")]
            for want in ("pyproject.toml", "PKG-INFO", "_build/sluice_build_backend.py", "src/sluice_client/__init__.py",
                         "src/sluice_client/py.typed"):
                self.assertIn("%s/%s" % (base, want), n)
            self.assertFalse([x for x in n if "__pycache__" in x])


if __name__ == "__main__":
    unittest.main()
