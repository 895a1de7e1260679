"""Incremental AWS event-stream decoder (sans-I/O): ``application/vnd.amazon.eventstream``.

The binary framing of AWS streaming APIs (Bedrock ``ConverseStream`` among them): a body is a
concatenation of frames, each

=========================  ===================================================================
bytes                      field
=========================  ===================================================================
4                          total length of the frame (big-endian, these 4 bytes and the CRC
                           included)
4                          length of the headers section (big-endian)
4                          CRC32 of the 8 bytes before it (the *prelude* CRC)
headers length             headers: 1-byte name length, name, 1-byte value type, value
total - headers - 16       payload
4                          CRC32 of everything before it in the frame (the *message* CRC)
=========================  ===================================================================

Header value types: 0 true, 1 false (no value bytes), 2 int8, 3 int16, 4 int32, 5 int64,
6 bytes (2-byte length), 7 UTF-8 string (2-byte length), 8 timestamp (int64 milliseconds since
the epoch, kept as that ``int``), 9 UUID (16 bytes, a ``uuid.UUID``). Integers are big-endian
and signed.

    decoder = EventStreamDecoder()
    for chunk in body_chunks:
        for frame in decoder.feed(chunk):
            ...
    decoder.close()
"""

from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Final, NoReturn

from toolstitch.vocab.errors import StreamDecodeError

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "DEFAULT_MAX_HEADER_BYTES",
    "PRELUDE_BYTES",
    "EventStreamDecoder",
    "EventStreamFrame",
    "is_prelude",
]

#: Bytes of a frame's prelude: total length, headers length, prelude CRC.
PRELUDE_BYTES: Final = 12
#: A frame's fixed overhead: the prelude and the message CRC.
_OVERHEAD: Final = PRELUDE_BYTES + 4
#: Default bound of one frame. AWS documents 16 MiB as the largest message and botocore
#: accepts payloads up to 24 MiB: this admits both.
DEFAULT_MAX_FRAME_BYTES: Final = 24 * 1024 * 1024 + 128 * 1024 + _OVERHEAD
#: Default bound of one frame's headers section (AWS's and botocore's own: 128 KiB).
DEFAULT_MAX_HEADER_BYTES: Final = 128 * 1024

_PRELUDE = struct.Struct(">III")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
#: Fixed-size header value types: type -> (struct format, size).
_FIXED: Final[dict[int, struct.Struct]] = {
    2: struct.Struct(">b"),
    3: struct.Struct(">h"),
    4: struct.Struct(">i"),
    5: struct.Struct(">q"),
    8: struct.Struct(">q"),
}


def is_prelude(head: bytes) -> bool:
    """Whether the first 12 bytes of ``head`` are a frame prelude: its CRC matches and its
    lengths are possible (how a body is recognised as an event stream)."""
    if len(head) < PRELUDE_BYTES:
        return False
    total, headers, crc = _PRELUDE.unpack_from(head)
    return bool(zlib.crc32(head[:8]) == crc and total >= _OVERHEAD + headers)


@dataclass(frozen=True, slots=True, kw_only=True)
class EventStreamFrame:
    """One decoded frame: its ``headers`` (name -> value, in wire order), its ``payload``
    bytes, and ``offset``, the byte of the stream where the frame starts."""

    headers: dict[str, object] = field(hash=False)
    payload: bytes
    offset: int


class EventStreamDecoder:
    """Decode an AWS event stream incrementally; feed bytes in any chunking.

    Every frame is checked whole before it is returned: the prelude CRC as soon as its 12
    bytes are there (so a frame that declares an impossible or oversized length fails before
    anything of it is buffered), then the message CRC, then the headers. ``max_frame_bytes``
    bounds a frame's declared total length (default ``DEFAULT_MAX_FRAME_BYTES``, about
    24 MiB) and ``max_header_bytes`` its headers section (default 128 KiB). Cost is linear in
    the input: bytes are appended once, and each frame is cut out and checked once.

    A bad CRC, impossible lengths, a limit passed, a malformed header, or a frame still
    incomplete at ``close()`` raises ``StreamDecodeError`` whose ``offset`` is the stream byte
    where the fault is (the field that is wrong, or the start of the cut frame). Frames
    completed earlier in the same chunk are never lost: that ``feed`` returns them, and the
    next ``feed`` or ``close`` raises the error (so every chunking gives the same frames
    before it). After an error the decoder is dead: every later ``feed`` or ``close`` raises
    the error again; ``feed`` after ``close`` raises ``RuntimeError``.
    """

    def __init__(
        self,
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
    ) -> None:
        if max_frame_bytes < _OVERHEAD or max_header_bytes < 0:
            raise ValueError(
                f"max_frame_bytes must be at least {_OVERHEAD} and max_header_bytes at least 0"
            )
        self.max_frame_bytes = max_frame_bytes
        self.max_header_bytes = max_header_bytes
        self._buffer = bytearray()  # the bytes of the frame(s) not yet decoded
        self._start = 0  # stream offset of self._buffer[0]
        self._need = PRELUDE_BYTES  # bytes the current frame needs before it can be read
        self._closed = False
        self._error: StreamDecodeError | None = None

    def feed(self, chunk: bytes) -> list[EventStreamFrame]:
        """Decode ``chunk``; return the frames it completed, in stream order."""
        self._check_usable()
        if not chunk:
            return []
        buffer = self._buffer
        buffer += chunk
        out: list[EventStreamFrame] = []
        pos = 0
        # Each frame is looked at twice: once when its prelude is complete (to learn its
        # length; ``_need`` is 12 until then, and a frame is at least 16 bytes) and once when
        # all of it is there. Nothing is scanned twice.
        try:
            while len(buffer) - pos >= self._need:
                if self._need == PRELUDE_BYTES:
                    self._need = self._prelude(buffer, pos)
                    continue
                out.append(self._frame(buffer, pos, self._need))
                pos += self._need
                self._need = PRELUDE_BYTES
        except StreamDecodeError:
            if not out:
                raise
            return out  # the frames before the fault; the next feed or close raises it
        if pos:
            del buffer[:pos]  # from the front of a bytearray: no copy of the rest
            self._start += pos
        return out

    def close(self) -> list[EventStreamFrame]:
        """The stream ended. Returns ``[]``; raises ``StreamDecodeError`` if it ended inside a
        frame. Calling it again does the same (or raises the decoder's error again)."""
        if self._error is not None:
            raise StreamDecodeError(self._error.message, offset=self._error.offset)
        self._closed = True
        if self._buffer:
            have = len(self._buffer)
            if self._need == PRELUDE_BYTES:
                what = f"inside a frame's prelude ({have} of its {PRELUDE_BYTES} bytes)"
            else:
                what = f"inside a frame ({have} of its {self._need} bytes)"
            self._fail(f"the event stream ends {what}", self._start)
        return []

    # -- internals --------------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._error is not None:
            raise StreamDecodeError(self._error.message, offset=self._error.offset)
        if self._closed:
            raise RuntimeError("EventStreamDecoder.feed() called after close()")

    def _fail(self, message: str, offset: int) -> NoReturn:
        self._error = StreamDecodeError(message, offset=offset)
        self._buffer = bytearray()
        raise StreamDecodeError(message, offset=offset)

    def _prelude(self, buffer: bytearray, pos: int) -> int:
        """Check the prelude at ``buffer[pos:]``; return the frame's total length."""
        at = self._start + pos
        total, headers, crc = _PRELUDE.unpack_from(buffer, pos)
        actual = zlib.crc32(buffer[pos : pos + 8])
        if actual != crc:
            self._fail(
                f"event-stream frame at byte {at}: prelude CRC32 mismatch "
                f"(0x{crc:08x} in the frame, 0x{actual:08x} computed)",
                at + 8,
            )
        if total < _OVERHEAD + headers:
            self._fail(
                f"event-stream frame at byte {at}: impossible lengths (total {total} bytes, "
                f"headers {headers} bytes; a frame needs at least the headers + {_OVERHEAD})",
                at,
            )
        if total > self.max_frame_bytes:
            self._fail(
                f"event-stream frame at byte {at} declares {total} bytes, more than "
                f"max_frame_bytes={self.max_frame_bytes}",
                at,
            )
        if headers > self.max_header_bytes:
            self._fail(
                f"event-stream frame at byte {at} declares {headers} bytes of headers, more "
                f"than max_header_bytes={self.max_header_bytes}",
                at + 4,
            )
        return int(total)

    def _frame(self, buffer: bytearray, pos: int, total: int) -> EventStreamFrame:
        """The complete frame of ``total`` bytes at ``buffer[pos:]``, checked."""
        at = self._start + pos
        end = pos + total - 4
        (crc,) = _U32.unpack_from(buffer, end)
        (header_bytes,) = _U32.unpack_from(buffer, pos + 4)
        body = pos + PRELUDE_BYTES + header_bytes
        with memoryview(buffer) as view:  # released before the bytearray is resized
            actual = zlib.crc32(view[pos:end])
            head = bytes(view[pos + PRELUDE_BYTES : body])
            payload = bytes(view[body:end])
        if actual != crc:
            self._fail(
                f"event-stream frame at byte {at}: message CRC32 mismatch "
                f"(0x{crc:08x} in the frame, 0x{actual:08x} computed)",
                at + total - 4,
            )
        headers = self._headers(head, at + PRELUDE_BYTES)
        return EventStreamFrame(headers=headers, payload=payload, offset=at)

    def _headers(self, data: bytes, base: int) -> dict[str, object]:
        """Parse a headers section; ``base`` is the stream offset of ``data[0]``."""
        headers: dict[str, object] = {}
        pos = 0
        size = len(data)
        while pos < size:
            start = pos
            length = data[pos]
            pos += 1
            if length == 0 or pos + length + 1 > size:
                self._bad_header(base + start, "a name length of 0 or past the section")
            try:
                name = data[pos : pos + length].decode("utf-8")
            except UnicodeDecodeError:
                self._bad_header(base + start, "a name that is not UTF-8")
            pos += length
            kind = data[pos]
            pos += 1
            value, pos = self._value(data, pos, kind, base + start)
            if name in headers:
                self._bad_header(base + start, f"a second {name!r} header")
            headers[name] = value
        return headers

    def _value(self, data: bytes, pos: int, kind: int, at: int) -> tuple[object, int]:
        """The header value of type ``kind`` at ``data[pos:]``, and the position after it."""
        if kind == 0 or kind == 1:
            return kind == 0, pos
        fixed = _FIXED.get(kind)
        if fixed is not None:
            if pos + fixed.size > len(data):
                self._bad_header(at, f"a type-{kind} value cut by the end of the section")
            return fixed.unpack_from(data, pos)[0], pos + fixed.size
        if kind == 9:
            if pos + 16 > len(data):
                self._bad_header(at, "a UUID value cut by the end of the section")
            return uuid.UUID(bytes=data[pos : pos + 16]), pos + 16
        if kind != 6 and kind != 7:
            self._bad_header(at, f"an unknown value type {kind}")
        if pos + 2 > len(data):
            self._bad_header(at, "a value length cut by the end of the section")
        (length,) = _U16.unpack_from(data, pos)
        pos += 2
        if pos + length > len(data):
            self._bad_header(at, f"a {length}-byte value past the end of the section")
        raw = data[pos : pos + length]
        if kind == 6:
            return raw, pos + length
        try:
            return raw.decode("utf-8"), pos + length
        except UnicodeDecodeError:
            self._bad_header(at, "a string value that is not UTF-8")

    def _bad_header(self, at: int, what: str) -> NoReturn:
        self._fail(f"event-stream header at byte {at}: {what}", at)
