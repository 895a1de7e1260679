"""AWS event-stream frames *written* (toolstitch itself only decodes them): the one encoder of
the package, used by the generated Bedrock streams and by the test suite's fixtures.

``frame`` builds one frame with both CRCs; ``header`` one header of any value type;
``bedrock_event`` / ``bedrock_exception`` the frames Bedrock ConverseStream sends, and
``bedrock_body`` the wire body of boto3-style event dicts. A frame can be given raw header
bytes, so that tests can build well-framed frames with bad headers. The layout is the one
``toolstitch.decode.eventstream`` reads (its docstring has the table).
"""

from __future__ import annotations

import json
import struct
import uuid
import zlib
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "BYTE",
    "BYTES",
    "FALSE",
    "INT",
    "LONG",
    "SHORT",
    "STRING",
    "TIMESTAMP",
    "TRUE",
    "UUID",
    "bedrock_body",
    "bedrock_event",
    "bedrock_exception",
    "bedrock_frames",
    "frame",
    "header",
    "headers",
]

#: Header value types of the format.
TRUE, FALSE, BYTE, SHORT, INT, LONG, BYTES, STRING, TIMESTAMP, UUID = range(10)

_FIXED: Final = {BYTE: ">b", SHORT: ">h", INT: ">i", LONG: ">q", TIMESTAMP: ">q"}


def header(name: str, kind: int, value: object = None) -> bytes:
    """One header: name length, name, type, value (as that type writes it)."""
    raw = name.encode()
    out = bytes([len(raw)]) + raw + bytes([kind])
    if kind in (TRUE, FALSE):
        return out
    if kind in _FIXED:
        return out + struct.pack(_FIXED[kind], value)
    if kind == UUID:
        assert isinstance(value, (bytes, uuid.UUID))
        return out + (value.bytes if isinstance(value, uuid.UUID) else value)
    assert isinstance(value, (str, bytes))
    data = value.encode() if isinstance(value, str) else value
    return out + struct.pack(">H", len(data)) + data


def headers(pairs: Mapping[str, str] | Iterable[tuple[str, int, object]]) -> bytes:
    """A headers section: string headers from a mapping, or ``(name, type, value)`` triples."""
    if isinstance(pairs, Mapping):
        return b"".join(header(name, STRING, value) for name, value in pairs.items())
    return b"".join(header(name, kind, value) for name, kind, value in pairs)


def frame(
    head: bytes | Mapping[str, str] | Iterable[tuple[str, int, object]], payload: bytes
) -> bytes:
    """One complete frame: prelude with its CRC, headers, payload, message CRC."""
    raw = head if isinstance(head, bytes) else headers(head)
    total = 12 + len(raw) + len(payload) + 4
    lengths = struct.pack(">II", total, len(raw))
    prelude = lengths + struct.pack(">I", zlib.crc32(lengths))
    body = prelude + raw + payload
    return body + struct.pack(">I", zlib.crc32(body))


def _compact(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def bedrock_event(event_type: str, payload: Mapping[str, Any], *, pad: bool = True) -> bytes:
    """A Bedrock ConverseStream event frame (with AWS's ``"p"`` padding field, by default)."""
    body = dict(payload)
    if pad:
        body["p"] = "abcdefghijklmnopqrstuvwxyz"[: 3 + len(event_type)]
    return frame(
        {
            ":event-type": event_type,
            ":content-type": "application/json",
            ":message-type": "event",
        },
        _compact(body),
    )


def bedrock_exception(exception_type: str, payload: Mapping[str, Any]) -> bytes:
    """An in-stream exception frame (``:message-type: exception``)."""
    return frame(
        {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        _compact(payload),
    )


def bedrock_frames(events: Iterable[Mapping[str, Any]]) -> list[bytes]:
    """One frame per boto3-style event dict ``{"<eventType>": payload}`` (exceptions, named
    ``...Exception``, become exception frames)."""
    out = []
    for event in events:
        ((name, payload),) = event.items()
        if name.endswith("Exception"):
            out.append(bedrock_exception(name, payload))
        else:
            out.append(bedrock_event(name, payload))
    return out


def bedrock_body(events: Iterable[Mapping[str, Any]]) -> bytes:
    """The wire body of boto3-style event dicts (``bedrock_frames`` joined)."""
    return b"".join(bedrock_frames(events))
