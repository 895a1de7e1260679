"""Server-Sent Events as the scripted server sends them: the one SSE writer of the package.

Reading an event stream is ``toolstitch.decode.sse``'s job (and this module asks it when it
must read one); this module writes: ``frame`` encodes one event, as the script builders send
it (``DONE`` is OpenAI's end-of-stream event), ``split`` cuts a recorded stream into its
events, byte for byte as recorded, and ``named`` gives an event without an ``event:`` line
the name its JSON ``type`` says.
"""

from __future__ import annotations

import json
from typing import Any, Final

from toolstitch.decode.sse import SSEDecoder

__all__ = ["DONE", "frame", "named", "split"]


def _event_line(event: str) -> bytes:
    return f"event: {event}\n".encode()


def frame(data: Any, event: str | None = None) -> bytes:
    """One SSE event: ``data`` (a string as is, anything else as JSON) on one ``data:`` line,
    after an ``event:`` line when ``event`` is given."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return (_event_line(event) if event else b"") + f"data: {text}\n\n".encode()


#: The event that ends an OpenAI stream.
DONE: Final = frame("[DONE]")


def split(stream: bytes) -> list[bytes]:
    """A recorded stream's events, each with its blank line (CRLF line ends made LF)."""
    stream = stream.replace(b"\r\n", b"\n")
    return [event + b"\n\n" for event in stream.split(b"\n\n") if event.strip()]


def named(event: bytes) -> bytes:
    """``event`` with an ``event: <type>`` line first, when it has no name of its own and
    its data is a JSON object with a string ``type``; else ``event`` as it is."""
    decoder = SSEDecoder()
    messages = decoder.feed(event) + decoder.close()
    if len(messages) != 1 or messages[0].event != "message":
        return event
    try:
        kind = json.loads(messages[0].data).get("type")
    except (ValueError, AttributeError):
        return event
    if not isinstance(kind, str):
        return event
    return _event_line(kind) + event
