"""Receiving sluice's webhooks: check the signature, read the delivery.

Each transition is one POST with a JSON body ``{"delivery_id", "launch_id",
"gseq", "event", "state", "result_code", "reason"}`` and the headers
``X-Sluice-Delivery``, ``X-Sluice-Event``, ``X-Sluice-Timestamp`` (unix
seconds) and ``X-Sluice-Signature: sha256=<hex>``, where hex is
HMAC-SHA256(secret, "<timestamp>.<body>").  Deliveries are at least once:
dedupe by ``delivery_id``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Union

from .models import Event


class WebhookVerificationError(ValueError):
    """The delivery is not signed with the secret, or is too old/new."""


@dataclass
class WebhookDelivery:
    """One verified webhook delivery, as :func:`verify_webhook` returns it.

    ``delivery_id`` (the ``X-Sluice-Delivery`` header, the same in the body;
    deliveries are at least once: dedupe by it), ``launch_id``, ``gseq``
    (the event's global cursor), ``state`` (the launch's state after the
    event), ``result_code`` and ``reason`` (set on the transition into
    DONE), ``event`` (the event as ``/v1/events`` sends it), ``timestamp``
    (``X-Sluice-Timestamp``: Unix seconds of this attempt) and ``raw`` (the
    body's JSON).
    """

    delivery_id: str
    launch_id: str
    gseq: Optional[int]
    state: Optional[str]
    result_code: Optional[int]
    reason: Optional[str]
    event: Optional[Event]
    timestamp: int
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


def sign_webhook(secret: Union[str, bytes], timestamp: Union[int, str], body: Union[str, bytes]) -> str:
    """The ``X-Sluice-Signature`` value for ``body`` sent at ``timestamp``."""
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    raw = body.encode("utf-8") if isinstance(body, str) else body
    mac = hmac.new(key, str(timestamp).encode("ascii") + b"." + raw, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def load_webhook_secret(path: str) -> bytes:
    """The secret as the service reads ``webhooks.secret_file``: the file's
    bytes without trailing whitespace."""
    with open(path, "rb") as f:
        return f.read().rstrip(b" \t\r\n")


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    get = getattr(headers, "get", None)
    if get is not None:
        v = get(name)
        if v is not None:
            return v
    low = name.lower()
    for k, v in headers.items():
        if k.lower() == low:
            return v
    return None


def verify_webhook(secret: Union[str, bytes], headers: Mapping[str, str], body: Union[str, bytes],
                   *, tolerance_s: Optional[int] = 300, now: Optional[float] = None) -> WebhookDelivery:
    """Check one delivery and return it parsed.

    ``headers`` is any mapping (a dict, ``http.server``'s message, a WSGI
    environment's headers ...; names are matched without regard to case),
    ``body`` the raw request body exactly as received.  Raises
    :class:`WebhookVerificationError` when a header is missing, the signature
    does not match (compared in constant time), the timestamp is more than
    ``tolerance_s`` seconds away from ``now`` (None: not checked), or the
    body is not the delivery JSON.
    """
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    sig = _header(headers, "X-Sluice-Signature")
    ts = _header(headers, "X-Sluice-Timestamp")
    if not sig:
        raise WebhookVerificationError("X-Sluice-Signature header is missing")
    if not ts:
        raise WebhookVerificationError("X-Sluice-Timestamp header is missing")
    ts = ts.strip()
    if not ts.isdigit():
        raise WebhookVerificationError("X-Sluice-Timestamp is not unix seconds")
    if not sig.startswith("sha256="):
        raise WebhookVerificationError("X-Sluice-Signature is not sha256=<hex>")
    want = sign_webhook(secret, ts, raw)
    if not hmac.compare_digest(want.encode("ascii"), sig.strip().encode("ascii", "replace")):
        raise WebhookVerificationError("X-Sluice-Signature does not match the body")
    if tolerance_s is not None:
        t = time.time() if now is None else now
        if abs(t - int(ts)) > tolerance_s:
            raise WebhookVerificationError("X-Sluice-Timestamp is more than %d s from now" % tolerance_s)
    try:
        d = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise WebhookVerificationError("the body is not JSON: %s" % e) from None
    if not isinstance(d, dict):
        raise WebhookVerificationError("the body is not a JSON object")
    delivery = _header(headers, "X-Sluice-Delivery") or d.get("delivery_id")
    if d.get("delivery_id") is not None and delivery != d.get("delivery_id"):
        raise WebhookVerificationError("X-Sluice-Delivery does not match the body's delivery_id")
    ev = d.get("event")
    rc = d.get("result_code")
    gseq = d.get("gseq")
    return WebhookDelivery(
        delivery_id=str(delivery or ""),
        launch_id=str(d.get("launch_id", "")),
        gseq=gseq if isinstance(gseq, int) else None,
        state=d.get("state") if isinstance(d.get("state"), str) else None,
        result_code=rc if isinstance(rc, int) else None,
        reason=d.get("reason") if isinstance(d.get("reason"), str) else None,
        event=Event.from_dict(ev) if isinstance(ev, dict) else None,
        timestamp=int(ts),
        raw=d,
    )
