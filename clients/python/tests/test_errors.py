import json
import unittest

import _path  # noqa: F401
import sluice_client as sc


def body(status, slug, **kw):
    d = {"type": "urn:sluice:problem:" + slug, "title": slug, "status": status, "detail": "d-" + slug}
    d.update(kw)
    return json.dumps(d).encode()


class ProblemMappingTest(unittest.TestCase):
    def test_each_status_has_its_class(self):
        cases = [(400, "invalid-query", sc.BadRequest), (401, "unauthorized", sc.Unauthorized),
                 (403, "forbidden", sc.Forbidden), (404, "not-found", sc.NotFound),
                 (405, "method-not-allowed", sc.MethodNotAllowed), (409, "conflict", sc.Conflict),
                 (409, "wrong-state", sc.WrongState), (413, "too-large", sc.PayloadTooLarge),
                 (415, "unsupported-media-type", sc.UnsupportedMediaType),
                 (422, "invalid-request", sc.InvalidRequest), (500, "internal", sc.InternalError),
                 (503, "busy", sc.ServiceUnavailable), (503, "not-ready", sc.ServiceUnavailable)]
        for status, slug, cls in cases:
            e = sc.problem_error(status, body(status, slug))
            self.assertIs(type(e), cls, (status, slug))
            self.assertIsInstance(e, sc.SluiceError)
            self.assertEqual((e.status, e.slug, e.detail), (status, slug, "d-" + slug))
        self.assertIsInstance(sc.problem_error(409, body(409, "wrong-state")), sc.Conflict)

    def test_422_errors_list(self):
        e = sc.problem_error(422, body(422, "invalid-request", field="pools[1].nodes",
                                       errors=[{"path": "pools[1].nodes", "reason": "must be >= 1"},
                                               {"path": "site", "reason": "missing"}]))
        self.assertIsInstance(e, sc.InvalidRequest)
        self.assertEqual(e.field, "pools[1].nodes")
        self.assertEqual(e.errors, [sc.FieldError("pools[1].nodes", "must be >= 1"), sc.FieldError("site", "missing")])
        self.assertIn("422 invalid-request", str(e))

    def test_not_json_body(self):
        e = sc.problem_error(502, b"<html>bad gateway</html>")
        self.assertIsInstance(e, sc.ServiceUnavailable)
        self.assertEqual(e.status, 502)
        self.assertIn("bad gateway", e.detail)
        e = sc.problem_error(418, b"")
        self.assertIs(type(e), sc.SluiceError)

    def test_wait_timeout_is_a_timeout(self):
        self.assertTrue(issubclass(sc.WaitTimeout, TimeoutError))


if __name__ == "__main__":
    unittest.main()
