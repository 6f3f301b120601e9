"""Typed views of the API's objects (docs/api.md, openapi/sluice-v1.yaml).

Parsing is tolerant: fields the client does not know are kept in ``raw`` and
missing optional fields become None, so a newer service does not break an
older client.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union

# The result codes of a DONE launch (docs/state-machine.md, "States and results").
RESULT_NAMES: Dict[int, str] = {
    0: "SUCCEEDED",
    1: "EXECUTION_ERROR",
    9: "ABORTED",
    101: "WORKLOAD_101",
    102: "WORKLOAD_102",
    103: "WORKLOAD_103",
    104: "INFRASTRUCTURE_ERROR",
    127: "UNKNOWN",
}
SUCCEEDED, EXECUTION_ERROR, ABORTED, INFRASTRUCTURE_ERROR, UNKNOWN = 0, 1, 9, 104, 127
TERMINAL_STATE = "DONE"


def result_name(code: Optional[int]) -> Optional[str]:
    """The name of result code ``code``: ``0`` -> ``SUCCEEDED``, ``9`` ->
    ``ABORTED`` ... (``RESULT_NAMES``); ``RESULT_<n>`` for a code this
    client does not know; None for None (a launch still live)."""
    if code is None:
        return None
    return RESULT_NAMES.get(code, "RESULT_%d" % code)


class LaunchState(str, enum.Enum):
    """A launch's state (``LauncherState`` of openapi/sluice-v1.yaml).

    A ``str`` subclass: ``LaunchState.DONE == "DONE"``, and a member may be
    passed wherever the API takes a state name (``list(state=...)``)."""

    NEW = "NEW"
    ACCEPTED = "ACCEPTED"
    SUBMITTING = "SUBMITTING"
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    CANCELLING = "CANCELLING"
    DONE = "DONE"
    RECONCILING = "RECONCILING"
    RETRYING = "RETRYING"

    def __str__(self) -> str:
        return self.value

    @property
    def terminal(self) -> bool:
        """True for ``DONE``, the only state a launch never leaves."""
        return self is LaunchState.DONE

    @classmethod
    def parse(cls, value: Optional[str]) -> Optional["LaunchState"]:
        """The member named ``value``; None for None or a name this client
        does not know (a newer service's)."""
        if value is None:
            return None
        try:
            return cls(value)
        except ValueError:
            return None


class Result(str, enum.Enum):
    """A DONE launch's result, by name (docs/state-machine.md); ``code`` is
    the number the API carries in ``result_code``.  A ``str`` subclass:
    ``Result.SUCCEEDED == "SUCCEEDED"``."""

    SUCCEEDED = "SUCCEEDED"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    ABORTED = "ABORTED"
    WORKLOAD_101 = "WORKLOAD_101"
    WORKLOAD_102 = "WORKLOAD_102"
    WORKLOAD_103 = "WORKLOAD_103"
    INFRASTRUCTURE_ERROR = "INFRASTRUCTURE_ERROR"
    UNKNOWN = "UNKNOWN"

    def __str__(self) -> str:
        return self.value

    @property
    def code(self) -> int:
        """``SUCCEEDED`` -> 0, ``ABORTED`` -> 9 ..."""
        return _RESULT_CODES[self.value]

    @classmethod
    def from_code(cls, code: Optional[int]) -> Optional["Result"]:
        """The member for ``result_code``; None for None or a code this
        client does not know."""
        if code is None:
            return None
        name = RESULT_NAMES.get(code)
        return cls(name) if name is not None else None

    @classmethod
    def parse(cls, value: Union[str, int, None]) -> Optional["Result"]:
        """From a name (``"ABORTED"``) or a code (``9``); None when unknown."""
        if value is None or isinstance(value, bool):
            return None
        if isinstance(value, int):
            return cls.from_code(value)
        try:
            return cls(value)
        except ValueError:
            return None


_RESULT_CODES: Dict[str, int] = {name: code for code, name in RESULT_NAMES.items()}


class DependencyCondition(str, enum.Enum):
    """``depends_on.condition`` (the ``Dependency`` schema)."""

    AFTER = "after"
    AFTEROK = "afterok"
    AFTERANY = "afterany"

    def __str__(self) -> str:
        return self.value


class MountMode(str, enum.Enum):
    """``mounts[].mode`` (the ``Mount`` schema; the service's default is ro)."""

    RO = "ro"
    RW = "rw"

    def __str__(self) -> str:
        return self.value


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None


@dataclass
class Pool:
    """One pool of a launch request (one hetjob component)."""

    name: str
    nodes: Optional[int] = None
    cpus_per_node: Optional[int] = None
    mem_per_node_mib: Optional[int] = None
    gpus_per_node: Optional[int] = None
    gpu_series: Optional[str] = None
    command: Optional[str] = None
    args: Optional[List[str]] = None
    additional_node_command: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        """The request JSON of this pool (unset fields left out)."""
        return _plain({k: v for k, v in self.__dict__.items() if v is not None})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Pool":
        """A pool from its request JSON; a field of the wrong type is None."""
        args = d.get("args")
        return cls(
            name=str(d.get("name", "")),
            nodes=_int(d.get("nodes")),
            cpus_per_node=_int(d.get("cpus_per_node")),
            mem_per_node_mib=_int(d.get("mem_per_node_mib")),
            gpus_per_node=_int(d.get("gpus_per_node")),
            gpu_series=_str(d.get("gpu_series")),
            command=_str(d.get("command")),
            args=[str(a) for a in args] if isinstance(args, list) else None,
            additional_node_command=_str(d.get("additional_node_command")),
        )


def _plain(v: Any) -> Any:
    """``v`` as JSON values: enums by value, request objects by to_dict()."""
    if isinstance(v, enum.Enum):
        return v.value
    to_dict = getattr(v, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


@dataclass
class Mount:
    """One entry of a request's ``mounts`` (the ``Mount`` schema)."""

    source: str
    target: str
    mode: Optional[Union[MountMode, str]] = None

    def to_dict(self) -> Dict[str, Any]:
        """``{"source", "target"}`` and ``mode`` when set (by its value)."""
        d: Dict[str, Any] = {"source": self.source, "target": self.target}
        if self.mode is not None:
            d["mode"] = _plain(self.mode)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Mount":
        """A mount from its JSON; a ``mode`` of ``ro``/``rw`` becomes a
        :class:`MountMode`, any other string stays as it is."""
        mode = _str(d.get("mode"))
        return cls(source=str(d.get("source", "")), target=str(d.get("target", "")),
                   mode=MountMode(mode) if mode in ("ro", "rw") else mode)


@dataclass
class Dependency:
    """A request's ``depends_on`` (the ``Dependency`` schema): start after
    launch ``launch_id`` has started (``after``), succeeded (``afterok``) or
    ended (``afterany``)."""

    launch_id: str
    condition: Union[DependencyCondition, str]

    def to_dict(self) -> Dict[str, Any]:
        """``{"launch_id", "condition"}``, the condition by its value."""
        return {"launch_id": self.launch_id, "condition": _plain(self.condition)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Dependency":
        """A dependency from its JSON; a known condition becomes a
        :class:`DependencyCondition`, any other string stays as it is."""
        cond = str(d.get("condition", ""))
        known = {c.value for c in DependencyCondition}
        return cls(launch_id=str(d.get("launch_id", "")),
                   condition=DependencyCondition(cond) if cond in known else cond)


@dataclass
class Webhook:
    """A request's own ``webhook`` receiver: ``{"url": ...}``."""

    url: str

    def to_dict(self) -> Dict[str, Any]:
        """``{"url": ...}``."""
        return {"url": self.url}


# LaunchRequest's fields in the order of openapi/components/launch-request.yaml.
_REQUEST_FIELDS = ("launch_id", "site", "study", "cluster", "profile", "image", "command", "args", "workdir",
                   "env", "secret_env", "secrets", "mounts", "time_limit", "pending_timeout", "depends_on",
                   "webhook", "requeue", "keep_going", "signal", "exclusive", "account", "qos", "partition",
                   "pools", "resource_spec", "launcher_spec")


@dataclass
class LaunchRequest:
    """The body of ``POST /v1/launches`` (the ``LaunchRequest`` schema,
    docs/launch-request.md) in the native form (``pools``) or NVFlare's
    (``resource_spec`` / ``launcher_spec``).

    Fields are the API's JSON names; None (the default) leaves a field out,
    so the service applies its own default.  ``extra`` holds fields this
    client does not know (a newer service's), sent as they are.
    ``secrets`` is never shown by ``repr()``.
    """

    launch_id: str
    site: str
    study: Optional[str] = None
    cluster: Optional[str] = None
    profile: Optional[str] = None
    image: Optional[str] = None
    command: Optional[str] = None
    args: Optional[List[str]] = None
    workdir: Optional[str] = None
    env: Optional[Dict[str, str]] = None
    secret_env: Optional[List[str]] = None
    secrets: Optional[Dict[str, str]] = field(default=None, repr=False)
    mounts: Optional[List[Union[Mount, Dict[str, Any]]]] = None
    time_limit: Optional[Union[int, str]] = None
    pending_timeout: Optional[int] = None
    depends_on: Optional[Union[Dependency, Dict[str, Any]]] = None
    webhook: Optional[Union[Webhook, Dict[str, Any]]] = None
    requeue: Optional[bool] = None
    keep_going: Optional[bool] = None
    signal: Optional[str] = None
    exclusive: Optional[bool] = None
    account: Optional[str] = None
    qos: Optional[str] = None
    partition: Optional[str] = None
    pools: Optional[List[Union[Pool, Dict[str, Any]]]] = None
    resource_spec: Optional[Dict[str, Any]] = None
    launcher_spec: Optional[Dict[str, Any]] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> Dict[str, Any]:
        """The request JSON: the set fields under the API's names, in the
        schema's order, nested objects as their JSON."""
        d: Dict[str, Any] = {}
        for name in _REQUEST_FIELDS:
            v = getattr(self, name)
            if v is not None:
                d[name] = _plain(v)
        for k, v in self.extra.items():
            if k not in d:
                d[k] = _plain(v)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "LaunchRequest":
        """A request (or a launch's canonical ``request``) as objects; fields
        this client does not know go to ``extra``."""
        kw: Dict[str, Any] = {}
        extra: Dict[str, Any] = {}
        for k, v in d.items():
            if k in _REQUEST_FIELDS:
                kw[k] = v
            else:
                extra[k] = v
        if isinstance(kw.get("pools"), list):
            kw["pools"] = [Pool.from_dict(p) if isinstance(p, Mapping) else p for p in kw["pools"]]
        if isinstance(kw.get("mounts"), list):
            kw["mounts"] = [Mount.from_dict(m) if isinstance(m, Mapping) else m for m in kw["mounts"]]
        if isinstance(kw.get("depends_on"), Mapping):
            kw["depends_on"] = Dependency.from_dict(kw["depends_on"])
        if isinstance(kw.get("webhook"), Mapping) and isinstance(kw["webhook"].get("url"), str):
            kw["webhook"] = Webhook(kw["webhook"]["url"])
        kw.setdefault("launch_id", "")
        kw.setdefault("site", "")
        return cls(extra=extra, **kw)


@dataclass
class Event:
    """One event of a launch's log.

    ``gseq`` (the global cursor) and ``launch_id`` are set in the streams,
    with ``tenant`` for a tenant's launch; ``state`` is the launch's state
    right after the event (None for events stored before store schema 2).
    """

    seq: int
    time: int
    name: str
    context: Dict[str, Any] = field(default_factory=dict)
    caller: Optional[str] = None
    state: Optional[str] = None
    gseq: Optional[int] = None
    launch_id: Optional[str] = None
    tenant: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Event":
        """An event from the JSON of a stream or of a launch's ``events``."""
        ctx = d.get("context")
        return cls(
            seq=_int(d.get("seq")) or 0,
            time=_int(d.get("time")) or 0,
            name=str(d.get("name", "")),
            context=dict(ctx) if isinstance(ctx, Mapping) else {},
            caller=_str(d.get("caller")),
            state=_str(d.get("state")),
            gseq=_int(d.get("gseq")),
            launch_id=_str(d.get("launch_id")),
            tenant=_str(d.get("tenant")),
            raw=dict(d),
        )

    @property
    def state_enum(self) -> Optional[LaunchState]:
        """``state`` as a :class:`LaunchState` (None when absent or unknown)."""
        return LaunchState.parse(self.state)


@dataclass
class Node:
    """One node of a component: its Slurm name and ``address``, Slurm's
    NodeAddr (what to connect to; None until the service has read it)."""

    name: str
    address: Optional[str] = None


@dataclass
class Component:
    """One Slurm job component of the newest job observation.

    ``component`` is the index of the pool that runs in it (0 for a plain
    job), ``job_id`` its Slurm job id, ``nodelist`` Slurm's host list and
    ``nodes`` the same as :class:`Node` objects with their addresses;
    ``state_reason`` and ``state_description`` are Slurm's words for why it
    waits or how it ended.
    """

    component: int
    job_id: Optional[int] = None
    nodelist: Optional[str] = None
    state_reason: Optional[str] = None
    state_description: Optional[str] = None
    nodes: List[Node] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Component":
        """A component from a launch's ``components`` JSON."""
        nodes = []
        for n in d.get("nodes") or []:
            if isinstance(n, Mapping):
                nodes.append(Node(str(n.get("name", "")), _str(n.get("address"))))
        return cls(
            component=_int(d.get("component")) or 0,
            job_id=_int(d.get("job_id")),
            nodelist=_str(d.get("nodelist")),
            state_reason=_str(d.get("state_reason")),
            state_description=_str(d.get("state_description")),
            nodes=nodes,
        )


@dataclass
class LaunchSummary:
    """A launch as the list shows it (``GET /v1/launches`` items).

    ``state`` is the launcher state's name (:class:`LaunchState`),
    ``terminal`` True once it is ``DONE``, ``result_code`` the result's
    number when it is (None while live; :attr:`result` names it),
    ``reason`` the words that go with the result, ``attempt`` the number
    of its current submit attempt, ``job_ids`` its Slurm job ids,
    ``created_ms`` and ``updated_ms`` Unix times in milliseconds,
    ``last_seq`` the sequence number of its newest event; ``cluster`` is
    None for a site without ``clusters:`` and for a launch stored before
    clusters (the first cluster's).  ``tenant`` names the launch's tenant on
    a site with ``tenants:`` (None for the default tenant's; a launch_id is
    unique within its tenant, and an admin sees every tenant's).  ``raw``
    is the JSON as received.
    """

    launch_id: str
    site: str
    state: str
    created_ms: int = 0
    updated_ms: int = 0
    attempt: int = 0
    job_ids: List[int] = field(default_factory=list)
    terminal: bool = False
    study: Optional[str] = None
    cluster: Optional[str] = None
    result_code: Optional[int] = None
    reason: Optional[str] = None
    last_seq: Optional[int] = None
    summary_seq: Optional[int] = None
    tenant: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def result(self) -> Optional[str]:
        """The result's name (``SUCCEEDED``, ``ABORTED`` ...), None while live."""
        return result_name(self.result_code)

    @property
    def result_enum(self) -> Optional[Result]:
        """The result as a :class:`Result` (None while live, or for a code
        this client does not know)."""
        return Result.from_code(self.result_code)

    @property
    def state_enum(self) -> Optional[LaunchState]:
        """``state`` as a :class:`LaunchState` (None for a state this client
        does not know)."""
        return LaunchState.parse(self.state)

    @property
    def succeeded(self) -> bool:
        """The launch is over and its result is ``SUCCEEDED`` (0)."""
        return self.terminal and self.result_code == SUCCEEDED

    @staticmethod
    def _summary_kwargs(d: Mapping[str, Any]) -> Dict[str, Any]:
        return dict(
            launch_id=str(d.get("launch_id", "")),
            site=str(d.get("site", "")),
            state=str(d.get("state", "")),
            created_ms=_int(d.get("created_ms")) or 0,
            updated_ms=_int(d.get("updated_ms")) or 0,
            attempt=_int(d.get("attempt")) or 0,
            job_ids=[j for j in d.get("job_ids") or [] if isinstance(j, int)],
            terminal=bool(d.get("terminal", False)),
            study=_str(d.get("study")),
            cluster=_str(d.get("cluster")),
            result_code=_int(d.get("result_code")),
            reason=_str(d.get("reason")),
            last_seq=_int(d.get("last_seq")),
            summary_seq=_int(d.get("summary_seq")),
            tenant=_str(d.get("tenant")),
            raw=dict(d),
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "LaunchSummary":
        """A summary from the JSON of a list item."""
        return cls(**cls._summary_kwargs(d))


@dataclass
class Launch(LaunchSummary):
    """One launch: the summary, its canonical request, components, events.

    ``resource_version`` is the gseq of its newest event (watch the streams
    with ``after=resource_version``); ``etag`` the ETag header of the GET;
    after :meth:`Client.create`, ``created`` (True for 201, False for the
    idempotent 200) and ``location`` (the Location header).
    """

    request: Dict[str, Any] = field(default_factory=dict)
    request_hash: Optional[str] = None
    created_by: Optional[str] = None
    components: List[Component] = field(default_factory=list)
    events: List[Event] = field(default_factory=list)
    resource_version: Optional[int] = None
    etag: Optional[str] = None
    created: Optional[bool] = None
    location: Optional[str] = None

    @property
    def pools(self) -> List[Pool]:
        """The request's pools (one for a plain job, several for a hetjob)."""
        return [Pool.from_dict(p) for p in self.request.get("pools") or [] if isinstance(p, Mapping)]

    @property
    def launch_request(self) -> LaunchRequest:
        """The canonical request as a :class:`LaunchRequest`."""
        return LaunchRequest.from_dict(self.request)

    def component_of(self, pool: str) -> Optional[Component]:
        """The component that runs pool ``pool`` (pools are components in order)."""
        names = [p.name for p in self.pools]
        if pool not in names:
            return None
        idx = names.index(pool)
        for c in self.components:
            if c.component == idx:
                return c
        return None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], etag: Optional[str] = None) -> "Launch":
        """A launch from the JSON of ``GET /v1/launches/{id}`` (``etag``:
        the answer's ETag header, for a later conditional GET)."""
        req = d.get("request")
        return cls(
            request=dict(req) if isinstance(req, Mapping) else {},
            request_hash=_str(d.get("request_hash")),
            created_by=_str(d.get("created_by")),
            components=[Component.from_dict(c) for c in d.get("components") or [] if isinstance(c, Mapping)],
            events=[Event.from_dict(e) for e in d.get("events") or [] if isinstance(e, Mapping)],
            resource_version=_int(d.get("resource_version")),
            etag=etag,
            **cls._summary_kwargs(d),
        )


@dataclass
class Page:
    """One page of ``GET /v1/launches``: ``items`` in the list's order,
    ``next_cursor`` for the next page (None on the last) and the list's
    ``resource_version`` (the newest event's gseq when it was read: watch
    the global stream from there to miss nothing)."""

    items: List[LaunchSummary]
    next_cursor: Optional[str] = None
    resource_version: Optional[int] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Page":
        """A page from the JSON of the list."""
        return cls(
            items=[LaunchSummary.from_dict(i) for i in d.get("items") or [] if isinstance(i, Mapping)],
            next_cursor=_str(d.get("next_cursor")),
            resource_version=_int(d.get("resource_version")),
        )


@dataclass
class DryRun:
    """``POST /v1/launches?dry_run=true``: the canonical request and its
    render, nothing stored or sent.  ``script`` is the batch script,
    ``jobs`` the job description of each pool (as ``sluice render -o json``
    shows them)."""

    launch_id: str
    request: Dict[str, Any]
    script: str = ""
    jobs: List[Dict[str, Any]] = field(default_factory=list)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "DryRun":
        """A dry run from the service's answer."""
        render = d.get("render") if isinstance(d.get("render"), Mapping) else {}
        return cls(
            launch_id=str(d.get("launch_id", "")),
            request=dict(d.get("request") or {}),
            script=str(render.get("script") or ""),
            jobs=[dict(j) for j in render.get("jobs") or [] if isinstance(j, Mapping)],
            raw=dict(d),
        )


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass
class PollStats:
    """``GET /v1/status``'s ``poll``: the supervisor's cycles (the ``_ms``
    figures are None before the first cycle)."""

    cycles: int = 0
    errors: int = 0
    last_cycle_ms: Optional[float] = None
    avg_cycle_ms: Optional[float] = None
    max_cycle_ms: Optional[float] = None
    since_last_cycle_ms: Optional[int] = None
    interval_ms: Optional[int] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "PollStats":
        """The ``poll`` object of the status JSON."""
        return cls(
            cycles=_int(d.get("cycles")) or 0,
            errors=_int(d.get("errors")) or 0,
            last_cycle_ms=_num(d.get("last_cycle_ms")),
            avg_cycle_ms=_num(d.get("avg_cycle_ms")),
            max_cycle_ms=_num(d.get("max_cycle_ms")),
            since_last_cycle_ms=_int(d.get("since_last_cycle_ms")),
            interval_ms=_int(d.get("interval_ms")),
        )


@dataclass
class ServiceStatus:
    """``GET /v1/status`` (the ``Status`` schema): the service's
    ``version`` and ``uptime_s``, slurmrestd's ping (``slurmrestd_state``
    ``ok`` or ``failed``, with the transport's words in
    ``slurmrestd_detail``), seconds until the Slurm token expires (None
    when unknown), the supervisor's ``poll`` cycles, ``tracked``: the live
    launches the launchers hold in memory, and ``launches``: how many
    launches are in each state."""

    version: str
    uptime_s: int = 0
    slurmrestd_state: str = ""
    slurmrestd_detail: Optional[str] = None
    token_expires_in_s: Optional[int] = None
    poll: PollStats = field(default_factory=PollStats)
    tracked: int = 0
    launches: Dict[str, int] = field(default_factory=dict)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def slurmrestd_ok(self) -> bool:
        """slurmrestd answered the service's ping (``state`` ``ok``)."""
        return self.slurmrestd_state == "ok"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ServiceStatus":
        """A status from the JSON of ``GET /v1/status``."""
        sr = d.get("slurmrestd") if isinstance(d.get("slurmrestd"), Mapping) else {}
        tok = d.get("token") if isinstance(d.get("token"), Mapping) else {}
        poll = d.get("poll") if isinstance(d.get("poll"), Mapping) else {}
        launches = d.get("launches") if isinstance(d.get("launches"), Mapping) else {}
        return cls(
            version=str(d.get("version", "")),
            uptime_s=_int(d.get("uptime_s")) or 0,
            slurmrestd_state=str(sr.get("state", "")),
            slurmrestd_detail=_str(sr.get("detail")),
            token_expires_in_s=_int(tok.get("expires_in_s")),
            poll=PollStats.from_dict(poll),
            tracked=_int(d.get("tracked")) or 0,
            launches={str(k): v for k, v in launches.items() if _int(v) is not None},
            raw=dict(d),
        )
