"""The client of `sluice serve`'s HTTP API (docs/api.md)."""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import time
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple, Union
from urllib.parse import quote, urlencode

from . import __version__
from .errors import (ConfigurationError, MethodNotAllowed, NotFound, ProtocolError, ServiceUnavailable, SluiceError,
                     TransportError, WaitTimeout, problem_error)
from .models import DryRun, Event, Launch, LaunchRequest, LaunchState, LaunchSummary, Page, ServiceStatus
from .stream import EventStream, RetryPolicy, _deadline_timeout
from .transport import DEFAULT_TIMEOUT, Endpoint, resolve_token

#: What create() and dry_run() take: a LaunchRequest or the request's JSON as
#: a mapping (in which Pool, Mount, Dependency objects may stand in for dicts).
RequestLike = Union[LaunchRequest, Mapping[str, Any]]
StateLike = Union[LaunchState, str]

#: create()'s default: up to 3 more tries, 0.5 s doubling to 4 s.
DEFAULT_CREATE_RETRY = RetryPolicy(attempts=3, base=0.5, cap=4.0, max_retry_after=30.0)


def retry_after_seconds(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """A ``Retry-After`` header as seconds (delta-seconds or an HTTP date);
    None when absent or unreadable."""
    if value is None:
        return None
    v = value.strip()
    if v.isdigit():
        return float(v)
    try:
        dt = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None
    if dt is None:
        return None
    return max(0.0, dt.timestamp() - (time.time() if now is None else now))


def _encode(obj: Any) -> Any:
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    raise TypeError("%s is not JSON serialisable" % type(obj).__name__)


def _lid(launch_id: str) -> str:
    if not isinstance(launch_id, str) or not launch_id:
        raise ValueError("launch_id must be a non-empty string")
    return quote(launch_id, safe="")


class Response:
    """A finished (non-streaming) answer."""

    def __init__(self, status: int, headers: Dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ProtocolError("the service answered %d with a body that is not JSON: %s" % (self.status, e),
                                status=self.status) from None


class Client:
    """One sluice service.

    ``server``: ``unix:/path/to.sock``, ``http://127.0.0.1:PORT`` or
    ``https://host:PORT`` (default: $SLUICE_SERVER, as the CLI).  Plain
    ``http://`` to a host that is not loopback is refused
    (:class:`ConfigurationError`: the token would travel in clear text)
    unless ``allow_insecure_http=True``.  The bearer token comes from
    ``token``, else ``token_file``, else $SLUICE_TOKEN, else the file named by
    $SLUICE_API_TOKEN_FILE (the CLI's), else the file named by
    $SLUICE_TOKEN_FILE; a token file is read as the CLI reads it (a bare
    token, or a ``<caller> <token>`` line of the service's tokens file); the
    Unix socket needs none.  ``ca_file`` (default: $SLUICE_API_CA) checks an
    https server's certificate; ``timeout`` is the per-request socket timeout
    in seconds.  ``retry``: how streams and log follows reconnect;
    ``create_retry``: how :meth:`create` tries again after a transport
    error or a 503 with Retry-After (``RetryPolicy(attempts=0)``: never).
    """

    def __init__(self, server: Optional[str] = None, *, token: Optional[str] = None,
                 token_file: Optional[str] = None, ca_file: Optional[str] = None,
                 ssl_context: Any = None, timeout: Optional[float] = DEFAULT_TIMEOUT,
                 retry: Optional[RetryPolicy] = None, create_retry: Optional[RetryPolicy] = None,
                 allow_insecure_http: bool = False, environ: Optional[Mapping[str, str]] = None) -> None:
        env = os.environ if environ is None else environ
        server = server or env.get("SLUICE_SERVER")
        if not server:
            raise ConfigurationError("no server address: pass server= or set SLUICE_SERVER")
        ca_from_env = False
        if ca_file is None and ssl_context is None and env.get("SLUICE_API_CA"):
            ca_file, ca_from_env = env.get("SLUICE_API_CA"), True
        if ca_from_env and not server.startswith("https:"):
            ca_file = None  # the variable is for https:// servers; the CLI ignores it elsewhere too
        self.endpoint = Endpoint(server, ca_file=ca_file, ssl_context=ssl_context,
                                 allow_insecure_http=allow_insecure_http)
        self._token = resolve_token(token, token_file, environ=env)
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.create_retry = create_retry if create_retry is not None else DEFAULT_CREATE_RETRY

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None, **kwargs: Any) -> "Client":
        """A client configured as the CLI is: $SLUICE_SERVER,
        $SLUICE_API_TOKEN_FILE and $SLUICE_API_CA (``environ``: another
        mapping than ``os.environ``).  ``kwargs`` are the constructor's
        (``allow_insecure_http``, ``timeout``, ``create_retry`` ...)."""
        return cls(None, environ=environ, **kwargs)

    def __repr__(self) -> str:  # never shows the token
        return "Client(%r, token=%s)" % (self.endpoint.url, "set" if self._token else "none")

    # ------------------------------------------------------------ plumbing
    def _headers(self, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        h = {"User-Agent": "sluice-client-python/%s" % __version__, "Accept": "application/json"}
        if self._token:
            h["Authorization"] = "Bearer " + self._token
        if extra:
            h.update(extra)
        return h

    @staticmethod
    def _path(path: str, query: Optional[Mapping[str, Any]]) -> str:
        if not query:
            return path
        q = {}
        for k, v in query.items():
            if v is None:
                continue
            if isinstance(v, bool):
                q[k] = "true" if v else "false"
            elif isinstance(v, LaunchState):
                q[k] = v.value
            else:
                q[k] = str(v)
        return path + ("?" + urlencode(q) if q else "")

    def open(self, method: str, path: str, *, query: Optional[Mapping[str, Any]] = None,
             body: Optional[bytes] = None, headers: Optional[Mapping[str, str]] = None,
             timeout: Optional[float] = None) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send one request and return the connection and the response with
        its body unread (for streams).  The caller closes the connection."""
        conn = self.endpoint.connection(timeout if timeout is not None else self.timeout)
        h = self._headers(headers)
        if body is not None:
            h["Content-Type"] = "application/json"
        try:
            conn.request(method, self._path(path, query), body=body, headers=h)
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise TransportError("%s %s: %s: %s" % (method, path, self.endpoint.url, e)) from e
        return conn, resp

    def request(self, method: str, path: str, *, query: Optional[Mapping[str, Any]] = None,
                json_body: Any = None, headers: Optional[Mapping[str, str]] = None,
                ok: Tuple[int, ...] = (200,), body: Optional[bytes] = None) -> Response:
        """One request; an answer whose status is not in ``ok`` raises the
        problem's exception."""
        if json_body is not None:
            body = json.dumps(json_body, default=_encode).encode("utf-8")
        conn, resp = self.open(method, path, query=query, body=body, headers=headers)
        try:
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise TransportError("%s %s: reading the answer: %s" % (method, path, e)) from e
        finally:
            conn.close()
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
        if resp.status not in ok:
            raise problem_error(resp.status, data, hdrs)
        return Response(resp.status, hdrs, data)

    # ------------------------------------------------------------ service
    def healthz(self) -> Dict[str, Any]:
        """``GET /v1/healthz`` (no token needed)."""
        return self.request("GET", "/v1/healthz").json()

    def readyz(self) -> Dict[str, Any]:
        """``GET /v1/readyz``: raises ServiceUnavailable when not ready."""
        return self.request("GET", "/v1/readyz").json()

    def openapi(self) -> Dict[str, Any]:
        """``GET /v1/openapi.json``: the service's OpenAPI document."""
        return self.request("GET", "/v1/openapi.json").json()

    def status(self) -> ServiceStatus:
        """``GET /v1/status``: version, slurmrestd's ping, the Slurm token's
        lifetime, the supervisor's poll cycles and the launches by state."""
        d = self.request("GET", "/v1/status").json()
        if not isinstance(d, dict):
            raise ProtocolError("GET /v1/status answered with no status object", status=200)
        return ServiceStatus.from_dict(d)

    def metrics(self) -> str:
        """``GET /v1/metrics``: the Prometheus text exposition."""
        r = self.request("GET", "/v1/metrics", headers={"Accept": "text/plain"})
        return r.body.decode("utf-8", "replace")

    # ------------------------------------------------------------ launches
    @staticmethod
    def _request_body(request: RequestLike) -> bytes:
        if isinstance(request, LaunchRequest):
            obj: Any = request.to_dict()
        elif isinstance(request, Mapping):
            obj = request
        elif callable(getattr(request, "to_dict", None)):
            obj = request.to_dict()  # type: ignore[attr-defined]
        else:
            raise TypeError("a launch request is a LaunchRequest or a mapping, not %s" % type(request).__name__)
        return json.dumps(obj, default=_encode).encode("utf-8")

    def create(self, request: RequestLike, *, retry: Optional[RetryPolicy] = None) -> Launch:
        """``POST /v1/launches``.  Idempotent on ``launch_id``: the same
        request again returns the existing launch (``created`` False); a
        different request with that id raises :class:`Conflict`; a request
        that breaks a rule raises :class:`InvalidRequest` with ``errors``.

        Because of that, a try that failed in transport (connection refused
        or reset, a timeout, an answer cut off) or was answered 503 with
        ``Retry-After`` is sent again, the same bytes, up to
        ``retry.attempts`` more times (default: the client's
        ``create_retry``), waiting the backoff or the Retry-After.  No other
        answer is retried.  A launch accepted by a try whose answer was lost
        comes back from the next try with ``created`` False."""
        policy = retry if retry is not None else self.create_retry
        body = self._request_body(request)
        failures = 0
        while True:
            try:
                r = self.request("POST", "/v1/launches", body=body, ok=(200, 201))
                break
            except TransportError:
                failures += 1
                if failures > policy.attempts:
                    raise
                time.sleep(policy.delay(failures))
            except ServiceUnavailable as e:
                ra = retry_after_seconds(e.headers.get("retry-after"))
                if e.status != 503 or ra is None:
                    raise
                failures += 1
                if failures > policy.attempts:
                    raise
                time.sleep(policy.delay(failures, ra))
        d = r.json()
        if not isinstance(d, dict):
            raise ProtocolError("POST /v1/launches answered %d with no launch object" % r.status, status=r.status)
        launch = Launch.from_dict(d, etag=r.headers.get("etag"))
        launch.created = r.status == 201
        launch.location = r.headers.get("location")
        return launch

    def dry_run(self, request: RequestLike) -> DryRun:
        """``POST /v1/launches?dry_run=true``: validate and render only."""
        r = self.request("POST", "/v1/launches", query={"dry_run": True}, body=self._request_body(request))
        return DryRun.from_dict(r.json())

    def get(self, launch_id: str, *, if_none_match: Optional[str] = None) -> Optional[Launch]:
        """``GET /v1/launches/{id}``.  With ``if_none_match`` (a previous
        launch's ``etag``) an unchanged launch returns None (304)."""
        headers = {"If-None-Match": if_none_match} if if_none_match else None
        r = self.request("GET", "/v1/launches/" + _lid(launch_id), headers=headers, ok=(200, 304))
        if r.status == 304:
            return None
        return Launch.from_dict(r.json(), etag=r.headers.get("etag"))

    def list(self, *, state: Optional[StateLike] = None, site: Optional[str] = None, study: Optional[str] = None,
             limit: Optional[int] = None, cursor: Optional[str] = None, cluster: Optional[str] = None) -> Page:
        """One page of ``GET /v1/launches`` (oldest first).  ``cluster``:
        only launches of this cluster of the site (a launch stored before
        clusters counts as the first cluster's; an unknown name is 400)."""
        q = {"state": state, "site": site, "study": study, "cluster": cluster, "limit": limit, "cursor": cursor}
        return Page.from_dict(self.request("GET", "/v1/launches", query=q).json())

    def pages(self, *, state: Optional[StateLike] = None, site: Optional[str] = None, study: Optional[str] = None,
              limit: Optional[int] = None, cluster: Optional[str] = None) -> Iterator[Page]:
        """Every page, following ``next_cursor``."""
        cursor = None
        while True:
            page = self.list(state=state, site=site, study=study, limit=limit, cursor=cursor, cluster=cluster)
            yield page
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def iter_launches(self, **filters: Any) -> Iterator[LaunchSummary]:
        """Every launch summary matching the filters, page after page."""
        for page in self.pages(**filters):
            for item in page.items:
                yield item

    def _get_full(self, launch_id: str) -> Launch:
        """GET without If-None-Match: a 304 here breaks the protocol."""
        launch = self.get(launch_id)
        if launch is None:
            raise ProtocolError("GET /v1/launches/%s answered 304 to a request without If-None-Match" % launch_id,
                                status=304)
        return launch

    def cancel(self, launch_id: str) -> Launch:
        """``DELETE /v1/launches/{id}``: ask for the cancel (idempotent)."""
        r = self.request("DELETE", "/v1/launches/" + _lid(launch_id), ok=(200, 202))
        return Launch.from_dict(r.json())

    # ------------------------------------------------------------ logs
    def logs(self, launch_id: str, stream: str = "stdout", *, offset: int = 0) -> bytes:
        """The job's output from ``offset`` (bytes) on, as it is now."""
        r = self.request("GET", self._log_path(launch_id, stream), query={"offset": offset or None})
        return r.body

    @staticmethod
    def _log_path(launch_id: str, stream: str) -> str:
        if stream not in ("stdout", "stderr"):
            raise ValueError("stream must be stdout or stderr, not %r" % stream)
        return "/v1/launches/%s/logs/%s" % (_lid(launch_id), stream)

    def follow_logs(self, launch_id: str, stream: str = "stdout", *, offset: int = 0,
                    chunk_size: int = 65536, read_timeout: float = 300.0) -> Iterator[bytes]:
        """A generator of output chunks (bytes) until the launch has ended.

        A dropped connection is resumed at the byte after the last one
        yielded, so nothing is repeated or lost."""
        path = self._log_path(launch_id, stream)
        off = offset
        failures = 0
        while True:
            conn = None
            try:
                conn, resp = self.open("GET", path, query={"offset": off or None, "follow": True},
                                       headers={"Accept": "text/plain"}, timeout=read_timeout)
                if resp.status != 200:
                    data = resp.read()
                    raise problem_error(resp.status, data, {k.lower(): v for k, v in resp.getheaders()})
                while True:
                    chunk = resp.read1(chunk_size)
                    if not chunk:
                        break
                    off += len(chunk)
                    failures = 0
                    yield chunk
            except (OSError, http.client.HTTPException, TransportError) as e:
                failures += 1
                if failures > self.retry.attempts:
                    raise TransportError("following %s: %s" % (path, e)) from e
                time.sleep(self.retry.delay(failures))
                continue
            finally:
                if conn is not None:
                    conn.close()
            # A clean end: the launch is over -- unless the connection ended
            # without the chunked terminator being distinguishable.
            launch = self._get_full(launch_id)
            if launch.terminal:
                return
            time.sleep(self.retry.delay(1))

    # ------------------------------------------------------------ events
    def events(self, *, after: Optional[int] = None, launch_id: Optional[str] = None,
               state: Optional[StateLike] = None, site: Optional[str] = None, since_now: bool = False,
               read_timeout: float = 120.0) -> EventStream:
        """``GET /v1/events``: every launch's events in store order (filters
        optional).  An iterator of :class:`Event` that never ends by itself;
        a dropped connection is resumed with ``Last-Event-ID``, so no event
        is missed or repeated.  ``after``: start after this gseq (a list's
        or get's ``resource_version``); ``since_now``: only events from now on."""
        q = {"launch_id": launch_id, "state": state.value if isinstance(state, LaunchState) else state,
             "site": site}
        if since_now and after is None:
            # Pin "now" to a position, so a reconnection before the first
            # event resumes there (the list's resource version; the
            # service's since=now where it has none).
            after = self.list(limit=1).resource_version
            since_now = after is None
        return EventStream(self, "/v1/events", q, after=after, since_now=since_now, ends=False,
                           read_timeout=read_timeout)

    def launch_events(self, launch_id: str, *, after: Optional[int] = None, since_now: bool = False,
                      read_timeout: float = 120.0, deadline: Optional[float] = None) -> EventStream:
        """``GET /v1/launches/{id}/events``: one launch's events; the
        iterator ends once the launch is DONE and its last event was sent.
        Resumes after a dropped connection like :meth:`events`."""
        if since_now and after is None:
            launch = self.get(launch_id)
            after = launch.resource_version if launch is not None else None
            since_now = after is None
        return EventStream(self, "/v1/launches/%s/events" % _lid(launch_id), {}, after=after,
                           since_now=since_now, ends=True, read_timeout=read_timeout, deadline=deadline)

    # ------------------------------------------------------------ wait
    def wait(self, launch_id: str, timeout: Optional[float] = None,
             on_event: Optional[Callable[[Event], None]] = None, poll_interval: float = 2.0) -> Launch:
        """Follow the launch until it is DONE and return it (``result_code``,
        ``result``, ``reason``).  ``timeout`` in seconds (None: no limit)
        raises :class:`WaitTimeout`; ``on_event`` is called with each new
        :class:`Event`.  Follows the per-launch stream from the launch's
        current resource version; falls back to polling on a service that
        has no per-launch stream."""
        deadline = None if timeout is None else time.monotonic() + timeout
        launch = self._get_full(launch_id)
        if launch.terminal:
            return launch
        try:
            with self.launch_events(launch_id, after=launch.resource_version, deadline=deadline) as s:
                for ev in s:
                    if on_event is not None:
                        on_event(ev)
                    if ev.state == "DONE":
                        break
        except (NotFound, MethodNotAllowed):
            pass  # a service without GET /v1/launches/{id}/events: poll
        pause = 0.2  # the stream saw DONE: a GET may lag a moment behind
        while True:
            launch = self._get_full(launch_id)
            if launch.terminal:
                return launch
            left = _deadline_timeout(deadline, pause)
            if left is not None and left <= 0:
                raise WaitTimeout("launch %s is still %s after %s s" % (launch_id, launch.state, timeout))
            time.sleep(left if left is not None else pause)
            pause = min(poll_interval, pause * 2)


__all__ = ["Client", "Response", "SluiceError", "RequestLike", "DEFAULT_CREATE_RETRY", "retry_after_seconds"]
