"""Typed views of the API's objects (docs/api.md, openapi/sluice-v1.yaml).

Parsing is tolerant: fields the client does not know are kept in ``raw`` and
missing optional fields become None, so a newer service does not break an
older client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

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
    """``0`` -> ``SUCCEEDED`` ...; None for None."""
    if code is None:
        return None
    return RESULT_NAMES.get(code, "RESULT_%d" % code)


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
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Pool":
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


@dataclass
class Event:
    """One event of a launch's log.

    ``gseq`` (the global cursor) and ``launch_id`` are set in the streams;
    ``state`` is the launch's state right after the event (None for events
    stored before store schema 2).
    """

    seq: int
    time: int
    name: str
    context: Dict[str, Any] = field(default_factory=dict)
    caller: Optional[str] = None
    state: Optional[str] = None
    gseq: Optional[int] = None
    launch_id: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Event":
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
            raw=dict(d),
        )


@dataclass
class Node:
    name: str
    address: Optional[str] = None


@dataclass
class Component:
    """One Slurm job component of the newest job observation."""

    component: int
    job_id: Optional[int] = None
    nodelist: Optional[str] = None
    state_reason: Optional[str] = None
    state_description: Optional[str] = None
    nodes: List[Node] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Component":
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
    """A launch as the list shows it."""

    launch_id: str
    site: str
    state: str
    created_ms: int = 0
    updated_ms: int = 0
    attempt: int = 0
    job_ids: List[int] = field(default_factory=list)
    terminal: bool = False
    study: Optional[str] = None
    result_code: Optional[int] = None
    reason: Optional[str] = None
    last_seq: Optional[int] = None
    summary_seq: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def result(self) -> Optional[str]:
        """The result's name (``SUCCEEDED``, ``ABORTED`` ...), None while live."""
        return result_name(self.result_code)

    @property
    def succeeded(self) -> bool:
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
            result_code=_int(d.get("result_code")),
            reason=_str(d.get("reason")),
            last_seq=_int(d.get("last_seq")),
            summary_seq=_int(d.get("summary_seq")),
            raw=dict(d),
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "LaunchSummary":
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
    """One page of ``GET /v1/launches``."""

    items: List[LaunchSummary]
    next_cursor: Optional[str] = None
    resource_version: Optional[int] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Page":
        return cls(
            items=[LaunchSummary.from_dict(i) for i in d.get("items") or [] if isinstance(i, Mapping)],
            next_cursor=_str(d.get("next_cursor")),
            resource_version=_int(d.get("resource_version")),
        )


@dataclass
class DryRun:
    """``POST /v1/launches?dry_run=true``: the canonical request and its render."""

    launch_id: str
    request: Dict[str, Any]
    script: str = ""
    jobs: List[Dict[str, Any]] = field(default_factory=list)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "DryRun":
        render = d.get("render") if isinstance(d.get("render"), Mapping) else {}
        return cls(
            launch_id=str(d.get("launch_id", "")),
            request=dict(d.get("request") or {}),
            script=str(render.get("script") or ""),
            jobs=[dict(j) for j in render.get("jobs") or [] if isinstance(j, Mapping)],
            raw=dict(d),
        )
