"""A Server-Sent Events parser (the WHATWG event-stream format).

The service sends ``id: <gseq>``, ``event: <name>`` and ``data: <JSON>``
lines, a blank line after each message, and ``: keep-alive`` comments while
idle.  :class:`SSEParser` is fed one line at a time and returns a
:class:`Message` at each blank line; it keeps ``last_event_id`` as the spec
says (an ``id`` field sets it, and it persists across messages), which is what
a client sends back as ``Last-Event-ID`` when it reconnects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional, Union


@dataclass
class Message:
    """One dispatched SSE message: its ``event`` type (``message`` when the
    stream named none), ``data`` (the data lines joined by newlines), the
    stream's last event ``id`` at that point and the ``retry`` the server
    last asked for (milliseconds)."""

    event: str
    data: str
    id: Optional[str]
    retry: Optional[int] = None


class SSEParser:
    """An incremental Server-Sent Events parser (the WHATWG rules): feed it
    one line at a time; ``last_event_id`` and ``retry`` hold the stream's
    latest ``id`` and ``retry`` fields."""

    def __init__(self, last_event_id: Optional[str] = None) -> None:
        self.last_event_id = last_event_id
        self.retry: Optional[int] = None
        self._data: List[str] = []
        self._event = ""
        self._has_fields = False

    def feed(self, line: Union[bytes, str]) -> Optional[Message]:
        """Take one line (bytes or str, its line ending included or not);
        the :class:`Message` the blank line ending a message completes, else
        None (comments and field lines return None)."""
        if isinstance(line, bytes):
            line = line.decode("utf-8", "replace")
        if line.endswith("\r\n"):
            line = line[:-2]
        elif line.endswith("\n") or line.endswith("\r"):
            line = line[:-1]
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment (keep-alive)
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_fields = True
        elif name == "event":
            self._event = value
            self._has_fields = True
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
            self._has_fields = True
        elif name == "retry":
            if value.isdigit():
                self.retry = int(value)
        return None

    def _dispatch(self) -> Optional[Message]:
        if not self._has_fields:
            return None
        data, event = self._data, self._event
        self._data, self._event, self._has_fields = [], "", False
        if not data:
            return None  # a message with no data is not dispatched
        return Message(event=event or "message", data="\n".join(data), id=self.last_event_id,
                       retry=self.retry)

    def reset(self) -> None:
        """Forget a half-read message (after a dropped connection); keeps
        ``last_event_id``."""
        self._data, self._event, self._has_fields = [], "", False


def parse_lines(lines: Iterable[Union[bytes, str]], last_event_id: Optional[str] = None) -> Iterator[Message]:
    """Every complete message of ``lines`` (a message cut off by the end of
    input is dropped, as the spec says)."""
    p = SSEParser(last_event_id)
    for line in lines:
        m = p.feed(line)
        if m is not None:
            yield m
