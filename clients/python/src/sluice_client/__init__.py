"""sluice_client: the Python client of sluice's HTTP API (`sluice serve`).

Standard library only; Python 3.9 and later.  See clients/python/README.md
and docs/python-client.md.

    from sluice_client import Client
    c = Client("unix:/run/sluice/sluice.sock")
    launch = c.create({...})
    done = c.wait(launch.launch_id)
    print(done.result, done.result_code)
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import (  # noqa: E402
    BadRequest,
    Conflict,
    FieldError,
    Forbidden,
    InternalError,
    InvalidRequest,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    Problem,
    ProtocolError,
    ServiceUnavailable,
    SluiceError,
    TransportError,
    Unauthorized,
    UnsupportedMediaType,
    WaitTimeout,
    WrongState,
    problem_error,
)
from .models import (  # noqa: E402
    ABORTED,
    EXECUTION_ERROR,
    INFRASTRUCTURE_ERROR,
    RESULT_NAMES,
    SUCCEEDED,
    UNKNOWN,
    Component,
    DryRun,
    Event,
    Launch,
    LaunchSummary,
    Node,
    Page,
    Pool,
    result_name,
)
from .sse import Message, SSEParser  # noqa: E402
from .stream import EventStream, RetryPolicy  # noqa: E402
from .webhook import WebhookDelivery, WebhookVerificationError, load_webhook_secret, sign_webhook, verify_webhook  # noqa: E402
from .client import Client  # noqa: E402

__all__ = [
    "__version__", "Client", "EventStream", "RetryPolicy",
    "Launch", "LaunchSummary", "Page", "Pool", "Component", "Node", "Event", "DryRun", "Problem", "FieldError",
    "RESULT_NAMES", "SUCCEEDED", "EXECUTION_ERROR", "ABORTED", "INFRASTRUCTURE_ERROR", "UNKNOWN", "result_name",
    "SluiceError", "TransportError", "ProtocolError", "BadRequest", "Unauthorized", "Forbidden", "NotFound",
    "MethodNotAllowed", "Conflict", "WrongState", "PayloadTooLarge", "UnsupportedMediaType", "InvalidRequest",
    "InternalError", "ServiceUnavailable", "WaitTimeout", "problem_error",
    "SSEParser", "Message", "verify_webhook", "load_webhook_secret", "sign_webhook", "WebhookDelivery", "WebhookVerificationError",
]
