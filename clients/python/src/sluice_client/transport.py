"""Connections to `sluice serve`: a Unix socket, loopback TCP, or TLS.

Addresses:

- ``unix:/run/sluice/sluice.sock`` (also ``unix:///run/...`` and
  ``http+unix://%2Frun%2Fsluice%2Fsluice.sock``): no token needed;
- ``http://127.0.0.1:8750``: bearer token; plain ``http://`` only to a
  loopback host (``localhost``, 127.0.0.0/8, ``[::1]``), as the service and
  the CLI allow it, unless ``allow_insecure_http=True``;
- ``https://sluice.internal:8443``: bearer token, the server's certificate
  checked against ``ca_file`` (or the system's CAs).

One connection per request (a stream keeps its own), so a Client may be used
from several threads.
"""

from __future__ import annotations

import http.client
import ipaddress
import os
import socket
import ssl
import stat
import warnings
from typing import Mapping, Optional, Tuple, Union
from urllib.parse import unquote, urlsplit

from .errors import ConfigurationError

DEFAULT_TIMEOUT = 30.0
TOKEN_MAX = 4096


def is_loopback_host(host: str) -> bool:
    """``localhost``, an IPv4 address in 127.0.0.0/8 or ``::1`` (what the
    CLI's ``urlsafe_host_is_loopback`` accepts; a name other than localhost
    is not resolved)."""
    h = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if h.lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        return False
    if ip.version == 4:
        return ip.packed[0] == 127
    return int(ip) == 1


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
                 ssl_context: Optional[ssl.SSLContext] = None, allow_insecure_http: bool = False) -> None:
        self.url = url
        self.kind, self.target = self._parse(url)
        self.ssl_context = ssl_context
        if self.kind == "http" and not is_loopback_host(self.host):
            if not allow_insecure_http:
                raise ConfigurationError(
                    "server address %r: plain http:// to non-loopback host %r refused (the token would "
                    "travel in clear text; use https://, or pass allow_insecure_http=True)" % (url, self.host))
            warnings.warn("allow_insecure_http: the token travels in clear text to %s" % self.host,
                          RuntimeWarning, stacklevel=3)
        if self.kind == "https" and ssl_context is None:
            self.ssl_context = ssl.create_default_context(cafile=ca_file)
        elif ca_file and self.kind != "https":
            raise ConfigurationError("ca_file is for https:// addresses, not %s" % self.kind)

    @property
    def host(self) -> str:
        """The TCP host ("" for a Unix socket)."""
        return "" if self.kind == "unix" else str(self.target[0])  # type: ignore[index]

    @staticmethod
    def _parse(url: str) -> Tuple[str, Union[str, Tuple[str, int]]]:
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
                raise ConfigurationError("server address %r: use unix:/path, http://host:port or https://host:port"
                                         % url)
            if u.path not in ("", "/"):
                raise ConfigurationError("server address %r: give no path (the client adds /v1/...)" % url)
            try:
                port = u.port or (443 if u.scheme == "https" else 80)
            except ValueError as e:
                raise ConfigurationError("server address %r: %s" % (url, e)) from None
            return u.scheme, (u.hostname, port)
        if not path.startswith("/"):
            raise ConfigurationError("unix socket address %r: the path must be absolute" % url)
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


def read_token_file(path: str) -> str:
    """The bearer token in ``path``, read as the CLI reads
    ``--api-token-file`` / ``$SLUICE_API_TOKEN_FILE`` (docs/cli.md): the
    first line that is neither empty nor a ``#`` comment holds either the
    token alone or a line of the service's tokens file, ``<caller> <token>
    [admin]`` (its token is used).  A file that group or others may write is
    refused (:class:`ConfigurationError`); one they may read gives a
    warning.  A missing file raises ``FileNotFoundError``."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigurationError("token file %s: not a regular file" % path)
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ConfigurationError("token file %s: refused: writable by group or others (chmod 600)" % path)
        if st.st_mode & (stat.S_IRGRP | stat.S_IROTH):
            warnings.warn("token file %s is readable by group or others" % path, RuntimeWarning, stacklevel=2)
        chunks = []
        left = TOKEN_MAX + 256
        while left > 0:
            b = os.read(fd, left)
            if not b:
                break
            chunks.append(b)
            left -= len(b)
    finally:
        os.close(fd)
    text = b"".join(chunks).decode("utf-8", "replace")
    for line in text.split("\n"):
        words = line.replace("\t", " ").replace("\r", " ").split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) >= 3 and words[2] != "admin":  # the CLI reads no further word
            raise ConfigurationError("token file %s: expected one token on its first line" % path)
        token = words[1] if len(words) >= 2 else words[0]
        if len(token) >= TOKEN_MAX:
            raise ConfigurationError("token file %s: the token is longer than %d bytes" % (path, TOKEN_MAX - 1))
        return token
    raise ConfigurationError("token file %s: no token in the file" % path)


def resolve_token(token: Optional[str] = None, token_file: Optional[str] = None,
                  environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The bearer token: ``token``, else ``token_file``, else $SLUICE_TOKEN,
    else the file named by $SLUICE_API_TOKEN_FILE (the CLI's variable), else
    the file named by $SLUICE_TOKEN_FILE (this client's older name).  Files
    are read by :func:`read_token_file`.  ``environ``: the variables
    (default ``os.environ``)."""
    env_vars = os.environ if environ is None else environ
    if token:
        return token.strip()
    if token_file:
        return read_token_file(token_file)
    env = env_vars.get("SLUICE_TOKEN")
    if env and env.strip():
        return env.strip()
    for var in ("SLUICE_API_TOKEN_FILE", "SLUICE_TOKEN_FILE"):
        f = env_vars.get(var)
        if f:
            return read_token_file(f)
    return None
