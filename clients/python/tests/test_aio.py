import asyncio
import time
import unittest

import _path  # noqa: F401
import fake_service
import sluice_client as sc


class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self):
        self.srv, self.url = fake_service.start()
        self.c = sc.AsyncClient(self.url, token="tok-unit", retry=sc.RetryPolicy(attempts=3, base=0.01),
                                create_retry=sc.RetryPolicy(attempts=3, base=0.01, cap=0.05))

    def tearDown(self):
        self.srv.shutdown()
        self.srv.server_close()

    async def test_create_get_list_status_metrics(self):
        req = sc.LaunchRequest(launch_id="A1", site="s", cluster="west", pools=[sc.Pool(name="a")])
        a = await self.c.create(req)
        self.assertEqual((a.created, a.cluster), (True, "west"))
        self.assertFalse((await self.c.create(req)).created)
        with self.assertRaises(sc.Conflict):
            await self.c.create(sc.LaunchRequest(launch_id="A1", site="t"))
        launch, page, st, metrics = await asyncio.gather(
            self.c.get("L1"), self.c.list(cluster="west"), self.c.status(), self.c.metrics())
        self.assertIs(launch.result_enum, sc.Result.SUCCEEDED)
        self.assertEqual([i.launch_id for i in page.items], ["P1", "P3"])
        self.assertEqual(st.version, "0.1.0")
        self.assertIn("sluice_launches", metrics)
        self.assertEqual([x.launch_id async for x in self.c.iter_launches(limit=2)], ["P%d" % i for i in range(5)])
        self.assertIsNone(await self.c.get("L1", if_none_match=launch.etag))

    async def test_create_retried(self):
        self.srv.state.post_faults = ["503", "drop-before"]
        a = await self.c.create({"launch_id": "A2", "site": "s", "pools": [{"name": "a"}]})
        self.assertTrue(a.created)
        self.assertEqual(self.srv.state.posts, 3)
        self.srv.state.post_faults = ["400"]
        with self.assertRaises(sc.BadRequest):
            await self.c.create({"launch_id": "A3", "site": "s"})

    async def test_streams_resume(self):
        got = []
        async with self.c.events() as s:
            async for ev in s:
                got.append(ev.gseq)
                if len(got) == 6:
                    break
        self.assertEqual(got, [1, 2, 3, 4, 5, 6])
        self.assertGreaterEqual(s.reconnects, 1)
        per = [(e.gseq, e.state_enum) async for e in self.c.launch_events("L1", after=1)]
        self.assertEqual([g for g, _ in per], [2, 3, 4, 5, 6])
        self.assertIs(per[-1][1], sc.LaunchState.DONE)
        chunks = [c async for c in self.c.follow_logs("L1")]
        self.assertEqual(b"".join(chunks), b"abcdef")
        self.assertEqual((await self.c.events_since_now()).last_event_id, 6)

    async def test_wait(self):
        seen = []

        async def on_event(ev):
            seen.append(ev.gseq)

        done = await self.c.wait("L1", timeout=10, on_event=on_event)
        self.assertEqual(done.result_code, 0)
        t0 = time.monotonic()
        with self.assertRaises(sc.WaitTimeout):
            await self.c.wait("L2", timeout=0.5, poll_interval=0.1)
        self.assertLess(time.monotonic() - t0, 3)

    async def test_wait_cancelled(self):
        task = asyncio.ensure_future(self.c.wait("L2", poll_interval=0.1))
        await asyncio.sleep(0.3)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task

    async def test_from_env_and_refusal(self):
        c = sc.AsyncClient.from_env({"SLUICE_SERVER": self.url, "SLUICE_TOKEN": "t"})
        self.assertEqual(c.sync._token, "t")
        with self.assertRaises(sc.ConfigurationError):
            sc.AsyncClient("http://sluice.internal:8750")
        async with sc.AsyncClient.from_client(self.c.sync) as c2:
            self.assertIs(c2.sync, self.c.sync)


if __name__ == "__main__":
    unittest.main()
