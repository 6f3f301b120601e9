"""Event streams that survive dropped connections.

:class:`EventStream` reads one of the service's SSE streams and yields
:class:`~sluice_client.models.Event` objects.  When the connection breaks
(a reset, a read timeout, an incomplete chunked body, a proxy that closes
it), it reconnects with ``Last-Event-ID: <gseq of the last event yielded>``
and the service continues with the next event; an event whose gseq is not
above the last one yielded is dropped, so the caller sees every event once.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional

from .errors import ProtocolError, ServiceUnavailable, TransportError, WaitTimeout, problem_error
from .models import TERMINAL_STATE, Event
from .sse import SSEParser

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client


class RetryPolicy:
    """How often and how fast to try again: ``attempts`` consecutive
    failures at most (0: never again), waiting ``base`` s doubled each time
    up to ``cap``; a ``Retry-After`` of the service is honoured up to
    ``max_retry_after`` s."""

    def __init__(self, attempts: int = 8, base: float = 0.25, cap: float = 5.0,
                 max_retry_after: float = 30.0) -> None:
        if attempts < 0 or base < 0 or cap < 0 or max_retry_after < 0:
            raise ValueError("RetryPolicy: attempts, base, cap and max_retry_after must not be negative")
        self.attempts = attempts
        self.base = base
        self.cap = cap
        self.max_retry_after = max_retry_after

    def delay(self, failures: int, retry_after: Optional[float] = None) -> float:
        """The wait before try ``failures + 1``: the backoff, or the
        service's ``Retry-After`` (capped) when that is longer."""
        d = min(self.cap, self.base * (2 ** max(0, failures - 1)))
        if retry_after is not None:
            d = max(d, min(retry_after, self.max_retry_after))
        return d

    def __repr__(self) -> str:
        return "RetryPolicy(attempts=%d, base=%r, cap=%r, max_retry_after=%r)" % (
            self.attempts, self.base, self.cap, self.max_retry_after)


def _deadline_timeout(deadline: Optional[float], default: Optional[float]) -> Optional[float]:
    if deadline is None:
        return default
    left = deadline - time.monotonic()
    return left if default is None else min(default, left)


class EventStream:
    """An iterator of :class:`Event` over one SSE route.

    ``last_event_id`` is the gseq of the last event yielded (what a later
    stream may pass as ``after``); ``reconnects`` counts the reconnections.
    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, client: "Client", path: str, query: Mapping[str, Any], *,
                 after: Optional[int] = None, since_now: bool = False, ends: bool = False,
                 read_timeout: float = 120.0, deadline: Optional[float] = None) -> None:
        self._client = client
        self._path = path
        self._query = {k: v for k, v in query.items() if v is not None}
        self._since_now = since_now and after is None
        self.last_event_id: Optional[int] = after
        self._ends = ends
        self._read_timeout = read_timeout
        self._deadline = deadline
        self._conn: Optional[http.client.HTTPConnection] = None
        self._resp: Optional[http.client.HTTPResponse] = None
        self._parser = SSEParser()
        self._failures = 0
        self._events_this_connection = 0
        self._saw_done = False
        self._closed = False
        self.reconnects = 0

    # -------------------------------------------------------------- iteration
    def __iter__(self) -> "EventStream":
        return self

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop: close the connection; iteration ends."""
        self._closed = True
        self._disconnect()

    def drop_connection(self) -> None:
        """Break the connection as a network failure would (the socket is
        shut down under the reader); the next read reconnects.  For tests
        and for callers that want to force a reconnection."""
        conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __next__(self) -> Event:
        while True:
            if self._closed:
                raise StopIteration
            if self._resp is None:
                self._connect()
                continue
            try:
                self._apply_timeout()
                line = self._resp.readline()
            except (OSError, http.client.HTTPException, ValueError) as e:
                self._lost(e)
                continue
            if not line:
                if self._ends and (self._saw_done or self._events_this_connection == 0):
                    self.close()  # the service ended the stream: the launch is over
                    raise StopIteration
                self._lost(None)
                continue
            msg = self._parser.feed(line)
            if msg is None:
                continue
            ev = self._event(msg.data, msg.id)
            if ev is None:
                continue
            return ev

    # -------------------------------------------------------------- internals
    def _event(self, data: str, mid: Optional[str]) -> Optional[Event]:
        try:
            d = json.loads(data)
        except ValueError:
            raise ProtocolError("the event stream sent data that is not JSON") from None
        if not isinstance(d, dict):
            raise ProtocolError("the event stream sent data that is not an object")
        ev = Event.from_dict(d)
        gseq = ev.gseq
        if gseq is None and mid is not None and mid.isdigit():
            gseq = ev.gseq = int(mid)
        if gseq is not None:
            if self.last_event_id is not None and gseq <= self.last_event_id:
                return None  # already yielded before a reconnect
            self.last_event_id = gseq
        self._failures = 0
        self._events_this_connection += 1
        if ev.state == TERMINAL_STATE:
            self._saw_done = True
        return ev

    def _apply_timeout(self) -> None:
        t = _deadline_timeout(self._deadline, self._read_timeout)
        if t is not None and t <= 0:
            self.close()
            raise WaitTimeout("no end of %s before the deadline" % self._path)
        conn = self._conn
        if conn is not None and conn.sock is not None:
            conn.sock.settimeout(t)

    def _disconnect(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except OSError:
                pass
        self._conn = None
        self._resp = None
        self._parser.reset()

    def _lost(self, err: Optional[BaseException]) -> None:
        self._disconnect()
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self.close()
            raise WaitTimeout("no end of %s before the deadline" % self._path)
        self._failures += 1
        if self._failures > self._client.retry.attempts:
            self.close()
            raise TransportError("%s: the connection broke %d times in a row (last: %s)"
                                 % (self._path, self._failures, err or "end of stream"))
        if self._failures > 1:
            time.sleep(self._client.retry.delay(self._failures - 1))
        self.reconnects += 1

    def _connect(self) -> None:
        q: Dict[str, Any] = dict(self._query)
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self.last_event_id is not None:
            headers["Last-Event-ID"] = str(self.last_event_id)
        elif self._since_now:
            q["since"] = "now"
        timeout = _deadline_timeout(self._deadline, self._read_timeout)
        try:
            conn, resp = self._client.open("GET", self._path, query=q, headers=headers, timeout=timeout)
        except TransportError as e:
            self._lost(e)
            return
        if resp.status != 200:
            try:
                body = resp.read()
            except (OSError, http.client.HTTPException):
                body = b""
            conn.close()
            err = problem_error(resp.status, body, {k.lower(): v for k, v in resp.getheaders()})
            if isinstance(err, ServiceUnavailable):
                self._lost(err)
                return
            self.close()
            raise err
        self._conn, self._resp = conn, resp
        self._events_this_connection = 0
