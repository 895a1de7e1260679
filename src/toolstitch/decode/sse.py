"""Incremental Server-Sent Events decoder (sans-I/O).

``SSEDecoder`` turns the bytes of a ``text/event-stream`` response body, in whatever chunks
the transport delivers them, into ``SSEMessage`` values. It follows the WHATWG HTML
"event stream interpretation" rules, with one deliberate difference: at ``close()`` a final
event that lacks its terminating blank line is dispatched instead of discarded, because real
recorded provider streams end that way.

    decoder = SSEDecoder()
    for chunk in body_chunks:
        for message in decoder.feed(chunk):
            ...
    for message in decoder.close():
        ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn

from toolstitch.vocab.errors import StreamDecodeError

__all__ = ["SSEDecoder", "SSEMessage"]

_BOM = b"\xef\xbb\xbf"
# Only CRLF, LF and CR end an SSE line. (``splitlines`` would also split on \x0b, \x1c,
# U+2028 and others, which are ordinary characters in an event stream.)
_EOL = re.compile(rb"\r\n?|\n")
_DATA_PREFIX = b"data:"


@dataclass(frozen=True, slots=True)
class SSEMessage:
    """One dispatched event.

    ``event`` is the event type (``"message"`` when the stream named none); ``data`` is the
    event's data lines joined with ``"\\n"``; ``id`` is the stream's last event ID at dispatch
    time (it persists across events, as the spec says; ``None`` if the stream never sent an
    ``id`` field); ``retry`` is the reconnection time in milliseconds if this event's lines
    carried a valid ``retry`` field, else ``None``.
    """

    event: str = "message"
    data: str = ""
    id: str | None = None
    retry: int | None = None

    @property
    def is_done(self) -> bool:
        """True for OpenAI's end-of-stream sentinel, ``data: [DONE]``."""
        return self.data == "[DONE]"


_new = object.__new__
_SET_FIELDS = tuple(vars(SSEMessage)[name].__set__ for name in ("event", "data", "id", "retry"))


def _message(event: str, data: str, id: str | None, retry: int | None) -> SSEMessage:
    """``SSEMessage(event, data, id, retry)`` without the frozen dataclass's per-field
    ``object.__setattr__`` (one message per event makes it the decoder's hot path)."""
    message: SSEMessage = _new(SSEMessage)
    set_event, set_data, set_id, set_retry = _SET_FIELDS
    set_event(message, event)
    set_data(message, data)
    set_id(message, id)
    set_retry(message, retry)
    return message


class SSEDecoder:
    """Decode an event stream incrementally; feed bytes in any chunking.

    Chunks may end anywhere: inside a line, between the CR and LF of a CRLF pair, or inside a
    multi-byte UTF-8 sequence. Invalid UTF-8 is replaced with U+FFFD. A leading BOM is
    ignored. Comment lines (starting with ``:``) carry no data; they are counted in
    ``comments``. ``last_event_id`` and ``retry`` hold the stream's current last event ID and
    reconnection time.

    Cost is linear in the input. Memory is bounded: a line longer than ``max_line_bytes``
    (terminator excluded) or an event whose data passes ``max_event_bytes`` (UTF-8 bytes of the
    joined data) raises ``StreamDecodeError`` whose ``offset`` is the byte offset in the stream
    where the limit was passed, after buffering no more than about that limit. The messages
    completed earlier in the same chunk are never lost: that ``feed`` returns them and the
    next ``feed`` or ``close`` raises the error (every chunking gives the same messages before
    it). After an error the decoder is dead: every later ``feed`` or ``close`` raises
    ``StreamDecodeError`` again.
    """

    def __init__(
        self, *, max_line_bytes: int = 16 * 1024 * 1024, max_event_bytes: int = 64 * 1024 * 1024
    ) -> None:
        if max_line_bytes < 1 or max_event_bytes < 1:
            raise ValueError("max_line_bytes and max_event_bytes must be positive")
        self.max_line_bytes = max_line_bytes
        self.max_event_bytes = max_event_bytes
        self.comments = 0
        self.last_event_id: str | None = None
        self.retry: int | None = None

        self._offset = 0  # stream bytes received so far
        # Bytes held back at the start of the stream while they may still be a split BOM;
        # None once that is decided.
        self._head: bytes | None = b""
        # The pending (unterminated) line, kept as pieces and joined once when it ends, so
        # that a long line costs linear time.
        self._pieces: list[bytes] = []
        self._line_len = 0
        self._line_start = 0
        # Whether the pending line is a data line, decided once it has 6 bytes: 0 undecided,
        # -1 no, else the length of its ``data:`` / ``data: `` prefix. It lets the event limit
        # stop a huge data line before the line ends.
        self._line_kind = 0
        # A chunk ended with CR: an LF at the start of the next chunk completes that CRLF.
        self._skip_lf = False

        self._data: list[str] = []
        self._data_bytes = 0
        self._event = ""
        self._event_retry: int | None = None
        self._out: list[SSEMessage] = []
        self._closed = False
        self._error: StreamDecodeError | None = None

    def feed(self, chunk: bytes) -> list[SSEMessage]:
        """Decode ``chunk`` and return the messages it completed, in stream order."""
        self._check_usable()
        if not chunk:
            return []
        if not isinstance(chunk, bytes):
            chunk = bytes(chunk)
        if self._head is None and not (self._pieces or self._data or self._skip_lf):
            whole = self._whole_event(chunk)
            if whole is not None:
                self._offset += len(chunk)
                return [whole]
        base = self._offset
        self._offset += len(chunk)
        if self._head is not None:
            head = self._head + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._head = head
                return []
            self._head = None
            if head.startswith(_BOM):
                chunk, base = head[len(_BOM) :], len(_BOM)
            else:
                chunk, base = head, 0
            if not chunk:
                return []
        try:
            self._scan(chunk, base)
        except StreamDecodeError:
            if not self._out:
                raise
            # The messages before the fault are returned; the next feed or close raises it.
        out, self._out = self._out, []
        return out

    def close(self) -> list[SSEMessage]:
        """Signal the end of the stream; return the messages still pending.

        A last line without a line terminator is processed, and an event still pending (one
        whose blank line never came) is dispatched. Calling ``close`` again returns ``[]``
        (or raises the decoder's error again, if it died of one); ``feed`` after ``close``
        raises ``RuntimeError``.
        """
        if self._error is not None:
            # Dead since an error (even one raised by an earlier close): say so again.
            raise StreamDecodeError(self._error.message, offset=self._error.offset)
        if self._closed:
            return []
        self._check_usable()
        self._closed = True
        if self._head:
            self._scan(self._head, 0)
        self._head = None
        if self._pieces:
            line = b"".join(self._pieces)
            self._pieces = []
            self._line(line, self._line_start)
        self._dispatch()
        out, self._out = self._out, []
        return out

    # -- internals --------------------------------------------------------------------------

    def _whole_event(self, chunk: bytes) -> SSEMessage | None:
        """The commonest chunk, cheaply: exactly one event of one ``data: `` line
        (``data: <value>\n\n``, no CR anywhere, within the limits), fed while nothing is
        pending; its message, as ``_scan`` would dispatch it. ``None``, having changed
        nothing, for anything else (``_scan`` reads it)."""
        size = len(chunk)
        if (
            not chunk.startswith(b"data: ")
            or not chunk.endswith(b"\n\n")
            or chunk.find(b"\n", 6) != size - 2
            or b"\r" in chunk
            or size - 2 > self.max_line_bytes
            or size - 8 > self.max_event_bytes
            or self._event
            or self._event_retry is not None
        ):
            return None
        return _message("message", chunk[6:-2].decode("utf-8", "replace"), self.last_event_id, None)

    def _check_usable(self) -> None:
        if self._closed:
            raise RuntimeError("SSEDecoder.feed() called after close()")
        if self._error is not None:
            raise StreamDecodeError(self._error.message, offset=self._error.offset)

    def _scan(self, chunk: bytes, base: int) -> None:
        pos = 0
        if self._skip_lf:
            self._skip_lf = False
            if chunk[0] == 0x0A:
                pos = 1
        for match in _EOL.finditer(chunk, pos):
            end = match.start()
            if self._pieces:
                self._grow(chunk, pos, end, base)
                line = b"".join(self._pieces)
                line_start = self._line_start
                self._pieces = []
                self._line_len = 0
                self._line_kind = 0
            else:
                line_start = base + pos
                if end - pos > self.max_line_bytes:
                    self._long_line(chunk, pos, end, line_start)
                line = chunk[pos:end]
            self._line(line, line_start)
            pos = match.end()
        if pos < len(chunk):
            self._grow(chunk, pos, len(chunk), base)
        elif chunk[-1] == 0x0D:
            self._skip_lf = True

    def _grow(self, chunk: bytes, start: int, end: int, base: int) -> None:
        """Append ``chunk[start:end]`` to the pending line, enforcing the limits first."""
        if not self._pieces:
            self._line_start = base + start
        size = self._line_len + end - start
        if size > self.max_line_bytes:
            # Report whichever limit the line passed first, as a whole line would.
            kind = self._line_kind
            if kind == 0:
                head = (b"".join(self._pieces) + chunk[start : start + 8])[:8]
                kind = (6 if head[5:6] == b" " else 5) if head.startswith(_DATA_PREFIX) else -1
            if kind > 0:
                before = self._data_bytes + (1 if self._data else 0)
                passed_at = self._line_start + kind + max(self.max_event_bytes - before, 0)
                if passed_at < self._line_start + self.max_line_bytes:
                    self._check_event(size - kind, self._line_start + kind)
            self._line_too_long(self._line_start)
        self._pieces.append(chunk[start:end])
        self._line_len = size
        if self._line_kind == 0 and size >= len(_DATA_PREFIX) + 1:
            head = b"".join(self._pieces)
            self._pieces = [head]
            if head.startswith(_DATA_PREFIX):
                self._line_kind = len(_DATA_PREFIX) + (head[len(_DATA_PREFIX)] == 0x20)
            else:
                self._line_kind = -1
        if self._line_kind > 0:
            self._check_event(size - self._line_kind, self._line_start + self._line_kind)

    def _long_line(self, chunk: bytes, pos: int, end: int, line_start: int) -> NoReturn:
        """A whole line past ``max_line_bytes``: report whichever limit it passed first, as
        the byte-by-byte path would (a data line may pass the event limit earlier)."""
        if chunk.startswith(b"data:", pos):
            value_index = 6 if chunk.startswith(b" ", pos + 5) else 5
            before = self._data_bytes + (1 if self._data else 0)
            passed_at = line_start + value_index + max(self.max_event_bytes - before, 0)
            if passed_at < line_start + self.max_line_bytes:
                self._check_event(end - pos - value_index, line_start + value_index)
        self._line_too_long(line_start)

    def _line_too_long(self, line_start: int) -> NoReturn:
        self._fail(
            f"SSE line longer than max_line_bytes={self.max_line_bytes} bytes "
            f"(the line starts at byte {line_start})",
            line_start + self.max_line_bytes,
        )

    def _check_event(self, value_bytes: int, value_start: int) -> None:
        """Raise if adding a data value of ``value_bytes`` bytes passes the event limit."""
        before = self._data_bytes + (1 if self._data else 0)  # +1: the "\n" joining lines
        if before + value_bytes > self.max_event_bytes:
            self._fail(
                f"SSE event data larger than max_event_bytes={self.max_event_bytes} bytes",
                value_start + max(self.max_event_bytes - before, 0),
            )

    def _fail(self, message: str, offset: int) -> NoReturn:
        self._error = StreamDecodeError(message, offset=offset)
        self._pieces = []
        self._data = []
        raise StreamDecodeError(message, offset=offset)

    def _line(self, raw: bytes, start: int) -> None:
        """Interpret one complete line (terminator removed) that starts at byte ``start``."""
        if not raw:
            self._dispatch()
            return
        if raw.startswith(b"data: "):
            # The common line, cheaply ("data: " is ASCII: character and byte indexes agree).
            value_bytes = len(raw) - 6
            self._check_event(value_bytes, start + 6)
            self._data_bytes += (1 if self._data else 0) + value_bytes
            self._data.append(raw[6:].decode("utf-8", "replace"))
            return
        if raw[0] == 0x3A:  # ":" starts a comment
            self.comments += 1
            return
        text = raw.decode("utf-8", "replace")
        colon = text.find(":")
        if colon < 0:
            field, value, value_index = text, "", len(raw)
        else:
            field = text[:colon]
            value_index = colon + 1
            if text.startswith(" ", value_index):
                value_index += 1
            value = text[value_index:]
        if field == "data":
            # "data:" is ASCII, so the value's character index is also its byte index.
            value_bytes = len(raw) - value_index
            self._check_event(value_bytes, start + value_index)
            self._data_bytes += (1 if self._data else 0) + value_bytes
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            if "\x00" not in value:
                self.last_event_id = value
        elif field == "retry" and value.isascii() and value.isdigit():
            try:
                retry = int(value)
            except ValueError:  # more digits than int() accepts: no sane reconnection time
                return
            self.retry = self._event_retry = retry

    def _dispatch(self) -> None:
        # Per spec an event whose data buffer is empty is not dispatched, but the event type
        # still resets. (One empty "data:" line does count: it dispatches data "".)
        if self._data:
            data = self._data
            self._out.append(
                _message(
                    self._event or "message",
                    data[0] if len(data) == 1 else "\n".join(data),
                    self.last_event_id,
                    self._event_retry,
                )
            )
            self._data = []
            self._data_bytes = 0
        self._event = ""
        self._event_retry = None
