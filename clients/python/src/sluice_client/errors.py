"""Problems (RFC 9457 problem objects) as typed exceptions.

Every error answer of `sluice serve` is `application/problem+json`:
``{"type": "urn:sluice:problem:<slug>", "title", "status", "detail", "field",
"errors": [{"path", "reason"}...]}``.  :func:`problem_error` turns one into the
exception class for its status (and, for 409, its slug); every class derives
from :class:`SluiceError`, which carries the problem's fields.
"""

from __future__ import annotations

import json
import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Type

PROBLEM_PREFIX = "urn:sluice:problem:"


@dataclass(frozen=True)
class FieldError:
    """One entry of a 422 problem's ``errors`` list."""

    path: str
    reason: str


@dataclass
class Problem:
    """A problem object (RFC 9457) as the service sent it; ``raw`` is the
    whole JSON."""

    type: str = ""
    title: str = ""
    status: Optional[int] = None
    detail: str = ""
    field: Optional[str] = None
    errors: List[FieldError] = dataclasses.field(default_factory=list)
    raw: Dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def slug(self) -> str:
        """The part of ``type`` after ``urn:sluice:problem:`` (``not-found``...)."""
        if self.type.startswith(PROBLEM_PREFIX):
            return self.type[len(PROBLEM_PREFIX):]
        return self.type

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Problem":
        """A problem from its JSON; fields of the wrong type are left empty."""
        errs = []
        for e in d.get("errors") or []:
            if isinstance(e, Mapping):
                errs.append(FieldError(str(e.get("path", "")), str(e.get("reason", ""))))
        status = d.get("status")
        return cls(
            type=str(d.get("type") or ""),
            title=str(d.get("title") or ""),
            status=status if isinstance(status, int) else None,
            detail=str(d.get("detail") or ""),
            field=d.get("field") if isinstance(d.get("field"), str) else None,
            errors=errs,
            raw=dict(d),
        )


class SluiceError(Exception):
    """Base of every error this client raises.

    ``status`` is the HTTP status (None for a transport failure); ``problem``
    the parsed problem object; ``type``, ``slug``, ``title``, ``detail``,
    ``field`` and ``errors`` are its fields.
    """

    def __init__(self, message: str, *, status: Optional[int] = None,
                 problem: Optional[Problem] = None,
                 headers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.problem = problem if problem is not None else Problem(status=status, detail=message)
        self.headers = dict(headers or {})

    @property
    def type(self) -> str:
        """The problem's ``type`` URI (``urn:sluice:problem:<slug>``)."""
        return self.problem.type

    @property
    def slug(self) -> str:
        """The last part of ``type`` (``not-found``, ``wrong-state`` ...)."""
        return self.problem.slug

    @property
    def title(self) -> str:
        """The problem's short, fixed title."""
        return self.problem.title

    @property
    def detail(self) -> str:
        """What went wrong with this request, in words."""
        return self.problem.detail

    @property
    def field(self) -> Optional[str]:
        """The request field (JSON path) the problem is about, if one."""
        return self.problem.field

    @property
    def errors(self) -> List[FieldError]:
        """A 422's field errors (path and reason), in request order; empty
        for other problems."""
        return self.problem.errors


class ConfigurationError(SluiceError, ValueError):
    """The client's own settings are wrong before anything is sent: a bad
    server address, plain ``http://`` to a host that is not loopback, a token
    file that holds no token or that others may write.  Also a
    ``ValueError``."""


class TransportError(SluiceError):
    """The service could not be reached or the connection broke."""


class ProtocolError(SluiceError):
    """The service answered something this client cannot read."""


class BadRequest(SluiceError):
    """400: malformed JSON, a bad launch id, a bad query parameter."""


class Unauthorized(SluiceError):
    """401: no bearer token, or one the service does not know."""


class Forbidden(SluiceError):
    """403: the caller may not do this (or secrets over plain TCP)."""


class NotFound(SluiceError):
    """404: no such launch (or route)."""


class MethodNotAllowed(SluiceError):
    """405: the route has no such method (the ``Allow`` header lists those
    it has)."""


class Conflict(SluiceError):
    """409: the launch id is taken by a different request."""


class WrongState(Conflict):
    """409 ``wrong-state``: the launch's state does not allow it."""


class PayloadTooLarge(SluiceError):
    """413: the body is over 1 MiB."""


class UnsupportedMediaType(SluiceError):
    """415: the body is not ``application/json``."""


class InvalidRequest(SluiceError):
    """422: the request breaks a rule or the site's policy; ``errors`` lists
    every field error (path and reason) in request order."""


class InternalError(SluiceError):
    """500: the service failed on its side; the problem's ``detail`` says
    how."""


class ServiceUnavailable(SluiceError):
    """503: busy, not ready, or the store cannot be used now."""


class WaitTimeout(SluiceError, TimeoutError):
    """:meth:`Client.wait` ran out of time before the launch ended."""


_BY_STATUS: Dict[int, Type[SluiceError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: InvalidRequest,
    500: InternalError,
    503: ServiceUnavailable,
}


def problem_error(status: int, body: bytes, headers: Optional[Mapping[str, str]] = None) -> SluiceError:
    """The exception for an error answer (``status`` >= 400) with ``body``."""
    problem = None
    try:
        d = json.loads(body.decode("utf-8")) if body else None
        if isinstance(d, dict):
            problem = Problem.from_dict(d)
    except (ValueError, UnicodeDecodeError):
        problem = None
    if problem is None:
        text = body[:200].decode("utf-8", "replace").strip() if body else ""
        problem = Problem(status=status, title="HTTP %d" % status, detail=text)
    if problem.status is None:
        problem.status = status
    cls = _BY_STATUS.get(status)
    if cls is Conflict and problem.slug == "wrong-state":
        cls = WrongState
    if cls is None:
        cls = ServiceUnavailable if status >= 500 and status != 500 else SluiceError
    msg = "%d %s" % (status, problem.slug or problem.title or "error")
    if problem.detail:
        msg += ": " + problem.detail
    return cls(msg, status=status, problem=problem, headers=headers)
