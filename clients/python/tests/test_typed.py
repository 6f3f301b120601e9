import json
import os
import unittest

import _path  # noqa: F401
import sluice_client as sc

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(os.path.dirname(HERE))


class RequestObjectsTest(unittest.TestCase):
    def test_launch_request_serialises_to_the_api_json(self):
        req = sc.LaunchRequest(
            launch_id="rl-17", site="site-1", study="s1", cluster="west", profile="apptainer",
            image="/img/x.sif", command="/opt/w", args=["-v"], workdir="/work", env={"A": "1"},
            secret_env=["TOKEN"], secrets={"K": "v"},
            mounts=[sc.Mount("/data", "/in"), sc.Mount("/out", "/o", sc.MountMode.RW), {"source": "/a", "target": "/b"}],
            time_limit="1-00:00", pending_timeout=600,
            depends_on=sc.Dependency("rl-16", sc.DependencyCondition.AFTEROK),
            webhook=sc.Webhook("https://hooks.example/x"), requeue=False, keep_going=True, signal="USR1@120",
            exclusive=True, account="acc", qos="normal", partition="gpu",
            pools=[sc.Pool(name="trainer", nodes=2, gpus_per_node=8, gpu_series="a100"), {"name": "rollout"}])
        want = {
            "launch_id": "rl-17", "site": "site-1", "study": "s1", "cluster": "west", "profile": "apptainer",
            "image": "/img/x.sif", "command": "/opt/w", "args": ["-v"], "workdir": "/work", "env": {"A": "1"},
            "secret_env": ["TOKEN"], "secrets": {"K": "v"},
            "mounts": [{"source": "/data", "target": "/in"}, {"source": "/out", "target": "/o", "mode": "rw"},
                       {"source": "/a", "target": "/b"}],
            "time_limit": "1-00:00", "pending_timeout": 600,
            "depends_on": {"launch_id": "rl-16", "condition": "afterok"},
            "webhook": {"url": "https://hooks.example/x"}, "requeue": False, "keep_going": True,
            "signal": "USR1@120", "exclusive": True, "account": "acc", "qos": "normal", "partition": "gpu",
            "pools": [{"name": "trainer", "nodes": 2, "gpus_per_node": 8, "gpu_series": "a100"},
                      {"name": "rollout"}]}
        self.assertEqual(req.to_dict(), want)
        self.assertEqual(json.loads(json.dumps(req.to_dict())), want)
        self.assertNotIn("'v'", repr(req))  # secret values never in repr
        back = sc.LaunchRequest.from_dict(want)
        self.assertIsInstance(back.pools[0], sc.Pool)
        self.assertIsInstance(back.depends_on, sc.Dependency)
        self.assertIs(back.depends_on.condition, sc.DependencyCondition.AFTEROK)
        self.assertIs(back.mounts[1].mode, sc.MountMode.RW)
        self.assertEqual(back.to_dict(), want)

    def test_minimal_and_unknown_fields(self):
        self.assertEqual(sc.LaunchRequest("a", "s").to_dict(), {"launch_id": "a", "site": "s"})
        nv = sc.LaunchRequest("a", "s", command="/bin/w", resource_spec={"num_of_gpus": 4},
                              launcher_spec={"default": {"slurm": {"nodes": 1}}})
        self.assertEqual(nv.to_dict(), {"launch_id": "a", "site": "s", "command": "/bin/w",
                                        "resource_spec": {"num_of_gpus": 4},
                                        "launcher_spec": {"default": {"slurm": {"nodes": 1}}}})
        r = sc.LaunchRequest.from_dict({"launch_id": "a", "site": "s", "future_field": 1})
        self.assertEqual(r.extra, {"future_field": 1})
        self.assertEqual(r.to_dict(), {"launch_id": "a", "site": "s", "future_field": 1})

    def test_field_names_are_the_openapi_schemas(self):
        # every property of the LaunchRequest, Pool, Mount and Dependency
        # schemas is a field of the dataclass, and no field is outside them
        path = os.path.join(REPO, "openapi", "components", "launch-request.yaml")
        if not os.path.exists(path):
            self.skipTest("not in a sluice checkout")
        props = _schema_properties(path)
        import dataclasses
        for cls, schema in ((sc.LaunchRequest, "LaunchRequest"), (sc.Pool, "Pool"), (sc.Mount, "Mount"),
                            (sc.Dependency, "Dependency")):
            fields = {f.name for f in dataclasses.fields(cls)} - {"extra"}
            self.assertEqual(fields, props[schema], schema)


def _schema_properties(path):
    """{schema: {property names}} of a components/schemas YAML file, read by
    indentation (the standard library has no YAML reader)."""
    out = {}
    schema = None
    in_props = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            ind = len(line) - len(line.lstrip(" "))
            if ind == 4 and stripped.endswith(":"):
                schema = stripped[:-1]
                out[schema] = set()
                in_props = None
            elif ind == 6:
                in_props = stripped == "properties:"
            elif ind == 8 and in_props and ":" in stripped:
                out[schema].add(stripped.split(":", 1)[0])
    return out


class EnumTest(unittest.TestCase):
    def test_states_are_the_openapi_enum(self):
        want = ["NEW", "ACCEPTED", "SUBMITTING", "PENDING", "RUNNING", "CANCELLING", "DONE", "RECONCILING",
                "RETRYING"]
        self.assertEqual([s.value for s in sc.LaunchState], want)
        path = os.path.join(REPO, "openapi", "sluice-v1.yaml")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            self.assertIn("enum: [%s]" % ", ".join(want), text)
        self.assertEqual(sc.LaunchState("DONE"), "DONE")
        self.assertTrue(sc.LaunchState.DONE.terminal)
        self.assertIsNone(sc.LaunchState.parse("FUTURE"))
        self.assertEqual(str(sc.LaunchState.RUNNING), "RUNNING")

    def test_results_and_codes(self):
        want = {"SUCCEEDED": 0, "EXECUTION_ERROR": 1, "ABORTED": 9, "WORKLOAD_101": 101, "WORKLOAD_102": 102,
                "WORKLOAD_103": 103, "INFRASTRUCTURE_ERROR": 104, "UNKNOWN": 127}
        self.assertEqual({r.value: r.code for r in sc.Result}, want)
        self.assertIs(sc.Result.from_code(9), sc.Result.ABORTED)
        self.assertIs(sc.Result.parse("INFRASTRUCTURE_ERROR"), sc.Result.INFRASTRUCTURE_ERROR)
        self.assertIs(sc.Result.parse(0), sc.Result.SUCCEEDED)
        self.assertIsNone(sc.Result.from_code(55))
        self.assertIsNone(sc.Result.from_code(None))
        self.assertEqual(sc.Result.ABORTED, "ABORTED")

    def test_typed_accessors(self):
        s = sc.LaunchSummary.from_dict({"launch_id": "a", "site": "s", "state": "DONE", "terminal": True,
                                        "result_code": 104, "cluster": "west"})
        self.assertIs(s.state_enum, sc.LaunchState.DONE)
        self.assertIs(s.result_enum, sc.Result.INFRASTRUCTURE_ERROR)
        self.assertEqual((s.state, s.result, s.result_code, s.cluster), ("DONE", "INFRASTRUCTURE_ERROR", 104, "west"))
        live = sc.Launch.from_dict({"launch_id": "a", "site": "s", "state": "RUNNING", "result_code": None,
                                    "request": {"launch_id": "a", "site": "s", "pools": [{"name": "p"}]},
                                    "events": [{"seq": 1, "time": 1, "name": "observed", "state": "RUNNING"}]})
        self.assertIsNone(live.result_enum)
        self.assertIsNone(live.cluster)
        self.assertIs(live.events[0].state_enum, sc.LaunchState.RUNNING)
        self.assertEqual(live.launch_request.pools[0].name, "p")
        self.assertIsNone(live.tenant)

    def test_tenant_of_launches_and_events(self):
        # a site with tenants: the service sends the launch_id as its caller
        # sent it, and `tenant` beside it (docs/api.md, "Tenants")
        s = sc.LaunchSummary.from_dict({"launch_id": "run-1", "site": "s", "state": "ACCEPTED",
                                        "tenant": "vision"})
        self.assertEqual((s.launch_id, s.tenant), ("run-1", "vision"))
        e = sc.Event.from_dict({"seq": 1, "time": 1, "name": "accepted", "launch_id": "run-1",
                                "tenant": "vision"})
        self.assertEqual(e.tenant, "vision")
        self.assertIsNone(sc.Event.from_dict({"seq": 1, "time": 1, "name": "x"}).tenant)

    def test_status_object(self):
        st = sc.ServiceStatus.from_dict({"version": "0.1.0", "uptime_s": 5, "slurmrestd": {"state": "failed",
                                         "detail": "refused"}, "token": {"expires_in_s": None},
                                         "poll": {"cycles": 3, "errors": 0, "last_cycle_ms": None},
                                         "tracked": 1, "launches": {"DONE": 2}})
        self.assertFalse(st.slurmrestd_ok)
        self.assertEqual((st.slurmrestd_detail, st.token_expires_in_s, st.poll.cycles, st.poll.last_cycle_ms),
                         ("refused", None, 3, None))
        self.assertEqual(st.launches, {"DONE": 2})


class PackageTest(unittest.TestCase):
    def test_py_typed_and_no_assert(self):
        pkg = os.path.dirname(sc.__file__)
        self.assertTrue(os.path.isfile(os.path.join(pkg, "py.typed")))
        import ast
        for fn in sorted(os.listdir(pkg)):
            if fn.endswith(".py"):
                with open(os.path.join(pkg, fn), encoding="utf-8") as f:
                    tree = ast.parse(f.read(), fn)
                self.assertFalse([n.lineno for n in ast.walk(tree) if isinstance(n, ast.Assert)], fn)


if __name__ == "__main__":
    unittest.main()
