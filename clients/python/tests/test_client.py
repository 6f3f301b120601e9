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

    def test_create_typed_request(self):
        req = sc.LaunchRequest(launch_id="T1", site="s", cluster="west", command="/bin/true",
                               pools=[sc.Pool(name="a", nodes=1)],
                               depends_on=sc.Dependency("L1", sc.DependencyCondition.AFTER))
        a = self.c.create(req)
        self.assertTrue(a.created)
        self.assertEqual(self.srv.state.launches["T1"], req.to_dict())
        self.assertEqual(a.cluster, "west")
        self.assertFalse(self.c.create(req.to_dict()).created)  # the same JSON as a dict: idempotent
        with self.assertRaises(TypeError):
            self.c.create(["not", "a", "request"])

    def _retrying(self, attempts=3):
        return sc.Client(self.url, token="tok-unit",
                         create_retry=sc.RetryPolicy(attempts=attempts, base=0.01, cap=0.05))

    def test_create_retried_after_503_with_retry_after(self):
        c = self._retrying()
        self.srv.state.post_faults = ["503", "503"]
        a = c.create({"launch_id": "R1", "site": "s", "pools": [{"name": "a"}]})
        self.assertTrue(a.created)
        self.assertEqual(self.srv.state.posts, 3)
        # bounded: more 503s than attempts raise the last one
        self.srv.state.posts = 0
        self.srv.state.post_faults = ["503"] * 5
        with self.assertRaises(sc.ServiceUnavailable) as cm:
            self._retrying(attempts=2).create({"launch_id": "R2", "site": "s", "pools": [{"name": "a"}]})
        self.assertEqual(cm.exception.headers.get("retry-after"), "0")
        self.assertEqual(self.srv.state.posts, 3)

    def test_create_not_retried_after_503_without_retry_after(self):
        self.srv.state.post_faults = ["503-no-retry-after"]
        with self.assertRaises(sc.ServiceUnavailable):
            self._retrying().create({"launch_id": "R3", "site": "s", "pools": [{"name": "a"}]})
        self.assertEqual(self.srv.state.posts, 1)

    def test_create_retried_after_a_dropped_connection(self):
        c = self._retrying()
        self.srv.state.post_faults = ["drop-before"]
        self.assertTrue(c.create({"launch_id": "D1", "site": "s", "pools": [{"name": "a"}]}).created)
        self.assertEqual(self.srv.state.posts, 2)
        # accepted, but the answer was lost: the next try finds the launch (200)
        self.srv.state.posts = 0
        self.srv.state.post_faults = ["drop-after"]
        again = c.create({"launch_id": "D2", "site": "s", "pools": [{"name": "a"}]})
        self.assertEqual((again.created, again.launch_id, self.srv.state.posts), (False, "D2", 2))
        # no retries: the transport error is raised at once
        self.srv.state.posts = 0
        self.srv.state.post_faults = ["drop-before"]
        with self.assertRaises(sc.TransportError):
            c.create({"launch_id": "D3", "site": "s"}, retry=sc.RetryPolicy(attempts=0))
        self.assertEqual(self.srv.state.posts, 1)

    def test_create_retried_after_connection_refused(self):
        port = self.srv.server_address[1]
        self.srv.shutdown()
        self.srv.server_close()
        c = sc.Client("http://127.0.0.1:%d" % port, token="t",
                      create_retry=sc.RetryPolicy(attempts=2, base=0.01, cap=0.02))
        t0 = time.monotonic()
        with self.assertRaises(sc.TransportError):
            c.create({"launch_id": "X", "site": "s"})
        self.assertLess(time.monotonic() - t0, 2)
        self.srv, self.url = fake_service.start()  # for tearDown

    def test_create_not_retried_after_4xx(self):
        c = self._retrying()
        self.srv.state.post_faults = ["400"]
        with self.assertRaises(sc.BadRequest):
            c.create({"launch_id": "B1", "site": "s"})
        self.assertEqual(self.srv.state.posts, 1)
        c.create({"launch_id": "B2", "site": "s"})
        self.srv.state.posts = 0
        with self.assertRaises(sc.Conflict):
            c.create({"launch_id": "B2", "site": "t"})
        with self.assertRaises(sc.InvalidRequest):
            c.create({"site": "s"})
        self.assertEqual(self.srv.state.posts, 2)

    def test_retry_after_and_policy(self):
        from sluice_client.client import retry_after_seconds
        self.assertEqual(retry_after_seconds("3"), 3.0)
        self.assertIsNone(retry_after_seconds(None))
        self.assertIsNone(retry_after_seconds("soon"))
        self.assertEqual(retry_after_seconds("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0), 6.0)
        p = sc.RetryPolicy(attempts=3, base=0.5, cap=4.0, max_retry_after=30.0)
        self.assertEqual([p.delay(n) for n in (1, 2, 3, 4, 5)], [0.5, 1.0, 2.0, 4.0, 4.0])
        self.assertEqual(p.delay(1, retry_after=7), 7.0)
        self.assertEqual(p.delay(1, retry_after=3600), 30.0)
        self.assertEqual(p.delay(3, retry_after=0), 2.0)
        with self.assertRaises(ValueError):
            sc.RetryPolicy(attempts=-1)
        self.assertEqual(sc.DEFAULT_CREATE_RETRY.attempts, 3)

    def test_cluster_filter_status_metrics(self):
        page = self.c.list(cluster="west", state=sc.LaunchState.DONE)
        self.assertEqual([i.launch_id for i in page.items], ["P1", "P3"])
        self.assertEqual({i.cluster for i in page.items}, {"west"})
        self.assertIs(page.items[0].result_enum, sc.Result.ABORTED)
        path = [x[1] for x in self.srv.state.seen if x[1].startswith("/v1/launches?")][0]
        self.assertEqual(path, "/v1/launches?state=DONE&cluster=west")
        self.assertEqual([x.launch_id for x in self.c.iter_launches(cluster="west", limit=1)], ["P1", "P3"])
        self.assertEqual(self.c.get("L1").cluster, "west")
        st = self.c.status()
        self.assertIsInstance(st, sc.ServiceStatus)
        self.assertEqual((st.version, st.slurmrestd_ok, st.token_expires_in_s, st.poll.max_cycle_ms, st.tracked),
                         ("0.1.0", True, 75310, 912.4, 3))
        self.assertEqual(st.launches["DONE"], 57)
        self.assertIn('sluice_launches{state="DONE"} 57', self.c.metrics())

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
        old = {k: os.environ.pop(k, None) for k in ("SLUICE_TOKEN", "SLUICE_TOKEN_FILE", "SLUICE_API_TOKEN_FILE")}
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
