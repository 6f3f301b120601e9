import os
import stat
import tempfile
import unittest
import warnings

import _path  # noqa: F401
import sluice_client as sc
from sluice_client.transport import Endpoint, read_token_file, resolve_token

ENV_VARS = ("SLUICE_SERVER", "SLUICE_TOKEN", "SLUICE_TOKEN_FILE", "SLUICE_API_TOKEN_FILE", "SLUICE_API_CA")


class _TempFiles(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.old = {k: os.environ.pop(k, None) for k in ENV_VARS}

    def tearDown(self):
        for k in ENV_VARS:
            os.environ.pop(k, None)
            if self.old[k] is not None:
                os.environ[k] = self.old[k]
        self.dir.cleanup()

    def file(self, text, mode=0o600, name="token"):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path


class TokenFileTest(_TempFiles):
    def test_forms_the_cli_accepts(self):
        cases = [("bare-token\n", "bare-token"),
                 ("  bare-token  \r\n", "bare-token"),
                 ("alice tok-alice\n", "tok-alice"),            # the service's tokens-file line
                 ("admin1\ttok-admin admin\n", "tok-admin"),    # with the admin flag
                 ("# my token\n\n   \nalice tok-1\nbob tok-2\n", "tok-1"),  # comments, blank lines, first wins
                 ("tok-no-newline", "tok-no-newline")]
        for text, want in cases:
            self.assertEqual(read_token_file(self.file(text)), want, repr(text))

    def test_refusals(self):
        for text in ("", "\n# only a comment\n", "alice tok extra\n"):
            with self.assertRaises(sc.ConfigurationError, msg=repr(text)):
                read_token_file(self.file(text))
        with self.assertRaises(ValueError):  # a ConfigurationError is a ValueError
            read_token_file(self.file(""))
        with self.assertRaises(sc.ConfigurationError) as cm:
            read_token_file(self.file("tok\n", mode=0o620))
        self.assertIn("writable by group or others", str(cm.exception))
        with self.assertRaises(sc.ConfigurationError):
            read_token_file(self.file("tok\n", mode=0o602))
        with self.assertRaises(sc.ConfigurationError):
            read_token_file(self.dir.name)  # not a regular file
        with self.assertRaises(FileNotFoundError):
            read_token_file(os.path.join(self.dir.name, "none"))
        with self.assertRaises(sc.ConfigurationError):
            read_token_file(self.file("x" * 5000))

    def test_readable_by_others_warns(self):
        path = self.file("tok\n", mode=0o644)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.assertEqual(read_token_file(path), "tok")
        self.assertTrue(any("readable by group or others" in str(x.message) for x in w))
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o644)

    def test_environment_order(self):
        api = self.file("alice from-api-file\n", name="api")
        old = self.file("from-old-file\n", name="old")
        self.assertIsNone(resolve_token())
        os.environ["SLUICE_TOKEN_FILE"] = old
        self.assertEqual(resolve_token(), "from-old-file")
        os.environ["SLUICE_API_TOKEN_FILE"] = api  # the CLI's variable wins over the older name
        self.assertEqual(resolve_token(), "from-api-file")
        os.environ["SLUICE_TOKEN"] = "from-env"
        self.assertEqual(resolve_token(), "from-env")
        self.assertEqual(resolve_token(token_file=old), "from-old-file")
        self.assertEqual(resolve_token("arg", token_file=old), "arg")
        self.assertEqual(resolve_token(environ={"SLUICE_API_TOKEN_FILE": old}), "from-old-file")


class FromEnvTest(_TempFiles):
    def test_from_env_reads_the_cli_variables(self):
        tok = self.file("alice tok-env\n")
        ca = self.file("not really a CA\n", name="ca.pem")
        env = {"SLUICE_SERVER": "http://127.0.0.1:8750", "SLUICE_API_TOKEN_FILE": tok, "SLUICE_API_CA": ca}
        c = sc.Client.from_env(env)
        self.assertEqual(c.endpoint.target, ("127.0.0.1", 8750))
        self.assertEqual(c._headers()["Authorization"], "Bearer tok-env")
        self.assertNotIn("tok-env", repr(c))
        # the CA variable is for https:// and ignored elsewhere, as the CLI does
        c = sc.Client.from_env(dict(env, SLUICE_SERVER="unix:/run/sluice/api.sock"))
        self.assertTrue(c.endpoint.is_unix)
        with self.assertRaises(Exception):  # https: the bundle is read (and this one is no certificate)
            sc.Client.from_env(dict(env, SLUICE_SERVER="https://sluice.internal:8443"))
        # os.environ when no mapping is given; the constructor's defaults are the same
        os.environ.update(env)
        self.assertEqual(sc.Client.from_env().endpoint.url, "http://127.0.0.1:8750")
        self.assertEqual(sc.Client()._token, "tok-env")
        self.assertEqual(sc.Client(token="arg")._token, "arg")
        with self.assertRaises(sc.ConfigurationError):
            sc.Client.from_env({})


class InsecureHttpTest(unittest.TestCase):
    def test_plain_http_only_to_loopback(self):
        for ok in ("http://127.0.0.1:8750", "http://127.1.2.3:1", "http://localhost:80", "http://LOCALHOST:1",
                   "http://[::1]:8080", "https://sluice.internal:8443", "https://10.0.0.5:1", "unix:/run/s.sock"):
            Endpoint(ok)
        for bad in ("http://sluice.internal:8750", "http://10.0.0.5:8750", "http://128.0.0.1:1",
                    "http://[::2]:1", "http://[::ffff:127.0.0.1]:1", "http://localhost.example:1"):
            with self.assertRaises(sc.ConfigurationError, msg=bad) as cm:
                sc.Client(bad, token="t")
            self.assertIn("allow_insecure_http", str(cm.exception))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            c = sc.Client("http://sluice.internal:8750", token="t", allow_insecure_http=True)
        self.assertEqual(c.endpoint.target, ("sluice.internal", 8750))
        self.assertTrue(any("clear text" in str(x.message) for x in w))

    def test_loopback_names(self):
        self.assertTrue(sc.is_loopback_host("127.0.0.1"))
        self.assertTrue(sc.is_loopback_host("[::1]"))
        self.assertFalse(sc.is_loopback_host("0.0.0.0"))
        self.assertFalse(sc.is_loopback_host("example.org"))


if __name__ == "__main__":
    unittest.main()
