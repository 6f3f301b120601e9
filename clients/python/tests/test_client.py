import os
import tempfile
import time
import unittest

import _path  # noqa: F401
import fake_service
import sluice_client as sc
from sluice_client.transport import Endpoint, resolve_token


class ClientAgainstFakeTest(unittest.TestCase):
    def setUp(self):
        self.srv, self.url = fake_service.start()
        self.c = sc.Client(self.url, token="tok-unit", retry=sc.RetryPolicy(attempts=3, base=0.01))

    def tearDown(self):
        self.srv.shutdown()
        self.srv.server_close()

    def test_global_stream_resumes_once_each(self):
        got = []
        with self.c.events() as s:
            for ev in s:
                got.append(ev.gseq)
                if len(got) == 6:
                    break
        self.assertEqual(got, [1, 2, 3, 4, 5, 6])  # none missed, none repeated
        self.assertGreaterEqual(s.reconnects, 1)
        leis = [x[2] for x in self.srv.state.seen if x[1].startswith("/v1/events")]
        self.assertEqual(leis[:2], [None, "3"])
        self.assertTrue(all(x[3] == "Bearer tok-unit" for x in self.srv.state.seen))

    def test_event_filters_in_the_query(self):
        with self.c.events(launch_id="L1", state="RUNNING", site="s1") as s:
            next(s)
        path = [x[1] for x in self.srv.state.seen if x[1].startswith("/v1/events")][0]
        self.assertEqual(path, "/v1/events?launch_id=L1&state=RUNNING&site=s1")
        with self.assertRaises(ValueError):
            self.c.get("")

    def test_launch_stream_ends_after_done(self):
        s = self.c.launch_events("L1", after=1)
        got = [(e.gseq, e.state) for e in s]
        self.assertEqual([g for g, _ in got], [2, 3, 4, 5, 6])
        self.assertEqual(s.reconnects, 1)
        self.assertEqual(got[-1][1], "DONE")
        first = [x for x in self.srv.state.seen if x[1].startswith("/v1/launches/L1/events")][0]
        self.assertEqual(first[2], "1")

    def test_since_now_is_pinned_to_the_resource_version(self):
        # a reconnection before the first event must not skip events: "now"
        # becomes the list's (or the launch's) resource version
        self.assertEqual(self.c.events(since_now=True).last_event_id, 6)
        self.assertEqual(self.c.launch_events("L1", since_now=True).last_event_id, 6)
        self.assertIsNone(self.c.events().last_event_id)

    def test_follow_logs_resumes_at_offset(self):
        chunks = list(self.c.follow_logs("L1"))
        self.assertEqual(b"".join(chunks), b"abcdef")
        offs = [x[1] for x in self.srv.state.seen if "/logs/" in x[1]]
        self.assertIn("offset=3", offs[1])

    def test_get_etag_and_304(self):
        launch = self.c.get("L1")
        self.assertEqual((launch.etag, launch.resource_version, launch.result), ('"6"', 6, "SUCCEEDED"))
        self.assertEqual([p.name for p in launch.pools], ["a", "b"])
        self.assertEqual(launch.component_of("a").nodes[0].address, "127.0.0.1")
        self.assertEqual(launch.component_of("b").job_id, 11)
        self.assertIsNone(self.c.get("L1", if_none_match=launch.etag))
        self.assertIsNotNone(self.c.get("L1", if_none_match='"5"'))

    def test_wait_returns_final(self):
        self.assertEqual(self.c.wait("L1", timeout=10).result_code, 0)

    def test_wait_timeout_and_polling_fallback(self):
        t0 = time.monotonic()
        with self.assertRaises(sc.WaitTimeout):
            self.c.wait("L2", timeout=0.6, poll_interval=0.1)
        self.assertLess(time.monotonic() - t0, 3)
        gets = [x[1] for x in self.srv.state.seen if x[1] == "/v1/launches/L2"]
        self.assertGreater(len(gets), 2)  # polled: the per-launch route answered 404

    def test_pages(self):
        pages = list(self.c.pages(limit=2))
        self.assertEqual([len(p.items) for p in pages], [2, 2, 1])
        self.assertEqual([x.launch_id for x in self.c.iter_launches(limit=2)], ["P%d" % i for i in range(5)])
        self.assertEqual(pages[0].resource_version, 6)

    def test_create_idempotent_conflict_invalid(self):
        req = {"launch_id": "N1", "site": "s", "pools": [sc.Pool(name="a", nodes=1)]}
        a = self.c.create(req)
        self.assertEqual((a.created, a.location), (True, "/v1/launches/N1"))
        self.assertEqual(a.request["pools"], [{"name": "a", "nodes": 1}])
        self.assertFalse(self.c.create(req).created)
        with self.assertRaises(sc.Conflict):
            self.c.create(dict(req, site="t"))
        with self.assertRaises(sc.InvalidRequest) as cm:
            self.c.create({"site": "s"})
        self.assertEqual([e.path for e in cm.exception.errors], ["launch_id", "pools"])
        with self.assertRaises(sc.NotFound):
            self.c.get("L9")

    def test_transport_error(self):
        c = sc.Client("unix:/nonexistent/sock", retry=sc.RetryPolicy(attempts=1, base=0.01))
        with self.assertRaises(sc.TransportError):
            c.healthz()


class EndpointTest(unittest.TestCase):
    def test_addresses(self):
        self.assertEqual(Endpoint("unix:/run/s.sock").target, "/run/s.sock")
        self.assertEqual(Endpoint("unix:///run/s.sock").target, "/run/s.sock")
        self.assertEqual(Endpoint("http+unix://%2Frun%2Fs.sock").target, "/run/s.sock")
        self.assertEqual(Endpoint("http://127.0.0.1:8080").target, ("127.0.0.1", 8080))
        self.assertEqual(Endpoint("https://[::1]:8443").target, ("::1", 8443))
        for bad in ("ftp://x", "unix:relative", "http://127.0.0.1:1/v1", "localhost:80"):
            with self.assertRaises(ValueError):
                Endpoint(bad)
        with self.assertRaises(ValueError):
            Endpoint("http://127.0.0.1:1", ca_file="/x")

    def test_token_sources(self):
        old = {k: os.environ.pop(k, None) for k in ("SLUICE_TOKEN", "SLUICE_TOKEN_FILE")}
        try:
            self.assertIsNone(resolve_token())
            with tempfile.NamedTemporaryFile("w", delete=False) as f:
                f.write("from-file\n")
            self.assertEqual(resolve_token(token_file=f.name), "from-file")
            os.environ["SLUICE_TOKEN_FILE"] = f.name
            self.assertEqual(resolve_token(), "from-file")
            os.environ["SLUICE_TOKEN"] = "from-env"
            self.assertEqual(resolve_token(), "from-env")
            self.assertEqual(resolve_token("arg"), "arg")
            c = sc.Client("http://127.0.0.1:1")
            self.assertNotIn("from-env", repr(c))
            os.unlink(f.name)
        finally:
            for k, v in old.items():
                os.environ.pop(k, None)
                if v is not None:
                    os.environ[k] = v


if __name__ == "__main__":
    unittest.main()
