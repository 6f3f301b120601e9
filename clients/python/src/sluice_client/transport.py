"""Connections to `sluice serve`: a Unix socket, loopback TCP, or TLS.

Addresses:

- ``unix:/run/sluice/sluice.sock`` (also ``unix:///run/...`` and
  ``http+unix://%2Frun%2Fsluice%2Fsluice.sock``): no token needed;
- ``http://127.0.0.1:8750``: bearer token;
- ``https://sluice.internal:8443``: bearer token, the server's certificate
  checked against ``ca_file`` (or the system's CAs).

One connection per request (a stream keeps its own), so a Client may be used
from several threads.
"""

from __future__ import annotations

import http.client
import os
import socket
import ssl
from typing import Optional, Tuple
from urllib.parse import unquote, urlsplit

DEFAULT_TIMEOUT = 30.0


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over an AF_UNIX stream socket."""

    def __init__(self, path: str, timeout: Optional[float] = DEFAULT_TIMEOUT) -> None:
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if self.timeout is not None:
                s.settimeout(self.timeout)
            s.connect(self.unix_path)
        except BaseException:
            s.close()
            raise
        self.sock = s


class Endpoint:
    """Where the service is and how to open a connection to it."""

    def __init__(self, url: str, *, ca_file: Optional[str] = None,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        self.url = url
        self.kind, self.target = self._parse(url)
        self.ssl_context = ssl_context
        if self.kind == "https" and ssl_context is None:
            self.ssl_context = ssl.create_default_context(cafile=ca_file)
        elif ca_file and self.kind != "https":
            raise ValueError("ca_file is for https:// addresses, not %s" % self.kind)

    @staticmethod
    def _parse(url: str) -> Tuple[str, object]:
        if url.startswith("unix:") and not url.startswith("unix://"):
            path = url[len("unix:"):]
        elif url.startswith("unix://"):
            path = url[len("unix://"):]
        elif url.startswith("http+unix://"):
            path = unquote(url[len("http+unix://"):].split("/", 1)[0])
        elif url.startswith("/"):
            path = url
        else:
            u = urlsplit(url)
            if u.scheme not in ("http", "https") or not u.hostname:
                raise ValueError("server address %r: use unix:/path, http://host:port or https://host:port" % url)
            if u.path not in ("", "/"):
                raise ValueError("server address %r: give no path (the client adds /v1/...)" % url)
            port = u.port or (443 if u.scheme == "https" else 80)
            return u.scheme, (u.hostname, port)
        if not path.startswith("/"):
            raise ValueError("unix socket address %r: the path must be absolute" % url)
        return "unix", path

    @property
    def is_unix(self) -> bool:
        return self.kind == "unix"

    def connection(self, timeout: Optional[float]) -> http.client.HTTPConnection:
        if self.kind == "unix":
            return UnixHTTPConnection(str(self.target), timeout=timeout)
        host, port = self.target  # type: ignore[misc]
        if self.kind == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeout, context=self.ssl_context)
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def __repr__(self) -> str:
        return "Endpoint(%r)" % self.url


def resolve_token(token: Optional[str] = None, token_file: Optional[str] = None) -> Optional[str]:
    """The bearer token: ``token``, else the first line of ``token_file``,
    else $SLUICE_TOKEN, else the file named by $SLUICE_TOKEN_FILE."""
    if token:
        return token.strip()
    if token_file is None and not os.environ.get("SLUICE_TOKEN"):
        token_file = os.environ.get("SLUICE_TOKEN_FILE") or None
    if token_file:
        with open(token_file, "r", encoding="utf-8") as f:
            first = f.readline().strip()
        if not first:
            raise ValueError("token file %s is empty" % token_file)
        return first
    env = os.environ.get("SLUICE_TOKEN")
    return env.strip() if env else None
