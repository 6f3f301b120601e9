"""sluice_client: the Python client of sluice's HTTP API (`sluice serve`).

Standard library only; Python 3.9 and later.  See clients/python/README.md
and docs/python-client.md.

    from sluice_client import Client
    c = Client("unix:/run/sluice/sluice.sock")   # or Client.from_env()
    launch = c.create(LaunchRequest(launch_id="run-1", site="site-1", command="/bin/true",
                                    pools=[Pool(name="main")]))
    done = c.wait(launch.launch_id)
    print(done.result, done.result_code)
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import (  # noqa: E402
    BadRequest,
    ConfigurationError,
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
    Dependency,
    DependencyCondition,
    DryRun,
    Event,
    Launch,
    LaunchRequest,
    LaunchState,
    LaunchSummary,
    Mount,
    MountMode,
    Node,
    Page,
    PollStats,
    Pool,
    Result,
    ServiceStatus,
    Webhook,
    result_name,
)
from .sse import Message, SSEParser  # noqa: E402
from .stream import EventStream, RetryPolicy  # noqa: E402
from .webhook import WebhookDelivery, WebhookVerificationError, load_webhook_secret, sign_webhook, verify_webhook  # noqa: E402
from .transport import is_loopback_host, read_token_file  # noqa: E402
from .client import DEFAULT_CREATE_RETRY, Client, RequestLike  # noqa: E402
from .aio import AsyncClient, AsyncEventStream  # noqa: E402

__all__ = [
    "__version__", "Client", "AsyncClient", "AsyncEventStream", "EventStream", "RetryPolicy", "DEFAULT_CREATE_RETRY", "RequestLike",
    "Launch", "LaunchSummary", "Page", "Pool", "Component", "Node", "Event", "DryRun", "Problem", "FieldError",
    "LaunchRequest", "Mount", "MountMode", "Dependency", "DependencyCondition", "Webhook",
    "LaunchState", "Result", "ServiceStatus", "PollStats", "read_token_file", "is_loopback_host",
    "RESULT_NAMES", "SUCCEEDED", "EXECUTION_ERROR", "ABORTED", "INFRASTRUCTURE_ERROR", "UNKNOWN", "result_name",
    "SluiceError", "ConfigurationError", "TransportError", "ProtocolError", "BadRequest", "Unauthorized", "Forbidden", "NotFound",
    "MethodNotAllowed", "Conflict", "WrongState", "PayloadTooLarge", "UnsupportedMediaType", "InvalidRequest",
    "InternalError", "ServiceUnavailable", "WaitTimeout", "problem_error",
    "SSEParser", "Message", "verify_webhook", "load_webhook_secret", "sign_webhook", "WebhookDelivery", "WebhookVerificationError",
]
