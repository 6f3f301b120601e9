"""An asyncio client with the surface of :class:`~sluice_client.Client`.

Standard library only: each call runs the blocking client's method in a
worker thread (``asyncio.to_thread``), so the event loop never waits on a
socket, and the behaviour is exactly the blocking client's (the same
addresses, token, refusals, ``create()`` retries, stream resumption).
Streams are async iterators; leaving one (``break``, ``aclose()``, the end of
an ``async with``, or the task being cancelled) closes its connection.

    async with AsyncClient("unix:/run/sluice/sluice.sock") as c:
        launch = await c.create(LaunchRequest(...))
        done = await c.wait(launch.launch_id, timeout=3600)
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import (Any, AsyncIterator, Awaitable, Callable, Dict, Iterator, Optional, TypeVar, Union)

from .client import Client, RequestLike, StateLike
from .errors import MethodNotAllowed, NotFound, WaitTimeout
from .models import DryRun, Event, Launch, LaunchSummary, Page, ServiceStatus
from .stream import EventStream, RetryPolicy, _deadline_timeout

T = TypeVar("T")
_END = object()


def _next_or_end(it: Iterator[Any]) -> Any:
    try:
        return next(it)
    except StopIteration:
        return _END


class AsyncEventStream:
    """An async iterator of :class:`Event` over an :class:`EventStream`
    (resumed with ``Last-Event-ID`` after a dropped connection, as there)."""

    def __init__(self, stream: EventStream) -> None:
        self.stream = stream

    @property
    def last_event_id(self) -> Optional[int]:
        """The gseq of the last event yielded (where a reconnection resumes)."""
        return self.stream.last_event_id

    @property
    def reconnects(self) -> int:
        """How many times the stream has reconnected."""
        return self.stream.reconnects

    def __aiter__(self) -> "AsyncEventStream":
        return self

    async def __anext__(self) -> Event:
        try:
            ev = await asyncio.to_thread(_next_or_end, self.stream)
        except asyncio.CancelledError:
            self.stream.close()  # unblocks the worker thread
            raise
        if ev is _END:
            raise StopAsyncIteration
        return ev  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        """Close the connection; iteration ends."""
        self.stream.close()

    async def __aenter__(self) -> "AsyncEventStream":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class AsyncClient:
    """The asyncio twin of :class:`Client`: the same constructor arguments
    (or :meth:`from_env`, or :meth:`from_client`), the same methods as
    coroutines, and async iterators for the streams.  ``sync`` is the
    blocking client underneath."""

    def __init__(self, server: Optional[str] = None, **kwargs: Any) -> None:
        self.sync = Client(server, **kwargs)

    @classmethod
    def from_env(cls, environ: Optional[Any] = None, **kwargs: Any) -> "AsyncClient":
        """As :meth:`Client.from_env`: $SLUICE_SERVER, $SLUICE_API_TOKEN_FILE, $SLUICE_API_CA."""
        return cls.from_client(Client.from_env(environ, **kwargs))

    @classmethod
    def from_client(cls, client: Client) -> "AsyncClient":
        """An async view of an existing blocking client."""
        self = cls.__new__(cls)
        self.sync = client
        return self

    def __repr__(self) -> str:
        return "Async" + repr(self.sync)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None  # one connection per request: nothing to close

    @staticmethod
    async def _run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    # ------------------------------------------------------------ service
    async def healthz(self) -> Dict[str, Any]:
        """``GET /v1/healthz`` (no token needed)."""
        return await self._run(self.sync.healthz)

    async def readyz(self) -> Dict[str, Any]:
        """``GET /v1/readyz``: raises :class:`ServiceUnavailable` when not ready."""
        return await self._run(self.sync.readyz)

    async def openapi(self) -> Dict[str, Any]:
        """``GET /v1/openapi.json``: the service's OpenAPI document."""
        return await self._run(self.sync.openapi)

    async def status(self) -> ServiceStatus:
        """``GET /v1/status`` as a :class:`ServiceStatus`."""
        return await self._run(self.sync.status)

    async def metrics(self) -> str:
        """``GET /v1/metrics``: the Prometheus text exposition."""
        return await self._run(self.sync.metrics)

    # ------------------------------------------------------------ launches
    async def create(self, request: RequestLike, *, retry: Optional[RetryPolicy] = None) -> Launch:
        """As :meth:`Client.create` (idempotent; retried after a transport
        error or a 503 with Retry-After)."""
        return await self._run(self.sync.create, request, retry=retry)

    async def dry_run(self, request: RequestLike) -> DryRun:
        """As :meth:`Client.dry_run`: validate and render only."""
        return await self._run(self.sync.dry_run, request)

    async def get(self, launch_id: str, *, if_none_match: Optional[str] = None) -> Optional[Launch]:
        """As :meth:`Client.get`: the launch, or None when ``if_none_match``
        is its current ETag (304)."""
        return await self._run(self.sync.get, launch_id, if_none_match=if_none_match)

    async def list(self, *, state: Optional[StateLike] = None, site: Optional[str] = None,
                   study: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None,
                   cluster: Optional[str] = None) -> Page:
        """As :meth:`Client.list`: one page of ``GET /v1/launches``."""
        return await self._run(self.sync.list, state=state, site=site, study=study, limit=limit, cursor=cursor,
                               cluster=cluster)

    async def pages(self, *, state: Optional[StateLike] = None, site: Optional[str] = None,
                    study: Optional[str] = None, limit: Optional[int] = None,
                    cluster: Optional[str] = None) -> AsyncIterator[Page]:
        """Every page, following ``next_cursor`` (an async generator)."""
        cursor = None
        while True:
            page = await self.list(state=state, site=site, study=study, limit=limit, cursor=cursor, cluster=cluster)
            yield page
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def iter_launches(self, **filters: Any) -> AsyncIterator[LaunchSummary]:
        """Every launch of every page (an async generator); ``filters`` are
        :meth:`pages`'s."""
        async for page in self.pages(**filters):
            for item in page.items:
                yield item

    async def cancel(self, launch_id: str) -> Launch:
        """As :meth:`Client.cancel`: ``DELETE /v1/launches/{id}``."""
        return await self._run(self.sync.cancel, launch_id)

    # ------------------------------------------------------------ logs
    async def logs(self, launch_id: str, stream: str = "stdout", *, offset: int = 0) -> bytes:
        """As :meth:`Client.logs`: the output of ``stream`` (``stdout`` or
        ``stderr``) from byte ``offset``."""
        return await self._run(self.sync.logs, launch_id, stream, offset=offset)

    async def follow_logs(self, launch_id: str, stream: str = "stdout", *, offset: int = 0,
                          chunk_size: int = 65536, read_timeout: float = 300.0) -> AsyncIterator[bytes]:
        """Output chunks until the launch has ended (an async generator;
        resumed at the next byte after a dropped connection)."""
        gen = self.sync.follow_logs(launch_id, stream, offset=offset, chunk_size=chunk_size,
                                    read_timeout=read_timeout)
        try:
            while True:
                chunk = await asyncio.to_thread(_next_or_end, gen)
                if chunk is _END:
                    return
                yield chunk
        finally:
            try:
                gen.close()
            except ValueError:
                pass  # still running in its thread (cancelled mid-read): it ends with its read

    # ------------------------------------------------------------ events
    def events(self, *, after: Optional[int] = None, launch_id: Optional[str] = None,
               state: Optional[StateLike] = None, site: Optional[str] = None,
               read_timeout: float = 120.0) -> AsyncEventStream:
        """``GET /v1/events`` as an async iterator of :class:`Event` (never
        ends by itself).  For ``since_now`` use :meth:`events_since_now`
        (it reads the list's resource version first)."""
        return AsyncEventStream(self.sync.events(after=after, launch_id=launch_id, state=state, site=site,
                                                 read_timeout=read_timeout))

    async def events_since_now(self, *, launch_id: Optional[str] = None, state: Optional[StateLike] = None,
                               site: Optional[str] = None, read_timeout: float = 120.0) -> AsyncEventStream:
        """The events from now on (pinned to the list's resource version)."""
        s = await self._run(self.sync.events, launch_id=launch_id, state=state, site=site, since_now=True,
                            read_timeout=read_timeout)
        return AsyncEventStream(s)

    def launch_events(self, launch_id: str, *, after: Optional[int] = None, read_timeout: float = 120.0,
                      deadline: Optional[float] = None) -> AsyncEventStream:
        """``GET /v1/launches/{id}/events``: ends after the launch's DONE event."""
        return AsyncEventStream(self.sync.launch_events(launch_id, after=after, read_timeout=read_timeout,
                                                        deadline=deadline))

    # ------------------------------------------------------------ wait
    async def wait(self, launch_id: str, timeout: Optional[float] = None,
                   on_event: Optional[Callable[[Event], Union[None, Awaitable[None]]]] = None,
                   poll_interval: float = 2.0) -> Launch:
        """As :meth:`Client.wait`; ``on_event`` may be a coroutine function.
        Cancelling the awaiting task closes the stream."""
        deadline = None if timeout is None else time.monotonic() + timeout
        launch = await self._run(self.sync._get_full, launch_id)
        if launch.terminal:
            return launch
        try:
            async with self.launch_events(launch_id, after=launch.resource_version, deadline=deadline) as s:
                async for ev in s:
                    if on_event is not None:
                        r = on_event(ev)
                        if inspect.isawaitable(r):
                            await r
                    if ev.state == "DONE":
                        break
        except (NotFound, MethodNotAllowed):
            pass  # a service without the per-launch stream: poll
        pause = 0.2
        while True:
            launch = await self._run(self.sync._get_full, launch_id)
            if launch.terminal:
                return launch
            left = _deadline_timeout(deadline, pause)
            if left is not None and left <= 0:
                raise WaitTimeout("launch %s is still %s after %s s" % (launch_id, launch.state, timeout))
            await asyncio.sleep(left if left is not None else pause)
            pause = min(poll_interval, pause * 2)


__all__ = ["AsyncClient", "AsyncEventStream"]
