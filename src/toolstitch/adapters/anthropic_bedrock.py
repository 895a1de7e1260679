"""AWS Bedrock ``InvokeModelWithResponseStream`` for Anthropic models → items.

What arrives: the binary ``application/vnd.amazon.eventstream`` framing of every Bedrock
runtime stream (the ``Stitcher`` decodes it, as for ConverseStream), in which every event is
a ``chunk`` (``:message-type`` ``event``, ``:event-type`` ``chunk``) whose JSON payload is a
``PayloadPart``: ``{"bytes": "<base64>", "p": "<padding>"}``. The decoded ``bytes`` are one
ordinary Anthropic Messages stream event (``message_start``, ``content_block_start``,
``content_block_delta``, ``content_block_stop``, ``message_delta``, ``message_stop``…), and
Bedrock adds ``"amazon-bedrock-invocationMetrics"`` (token counts and latencies) to the
``message_stop``. In-stream errors are exception frames (``internalServerException``,
``modelStreamErrorException``, ``throttlingException``, ``validationException``,
``serviceUnavailableException``, ``modelTimeoutException``), the same as ConverseStream's.

boto3's ``invoke_model_with_response_stream(...)["body"]`` yields the same events as dicts,
``{"chunk": {"bytes": b"<the event's JSON>"}}``: botocore has already decoded the base64,
and drops the padding. The ``Stitcher`` builds ``{"chunk": payload}`` from a frame, with the
base64 text. This adapter reads both.

Each chunk's event goes, unchanged, to an inner ``AnthropicAdapter`` sharing this adapter's
records and choice, and its items are this adapter's: every rule of Anthropic streams
(block keying, explicit block ends, server tools, thinking blocks, quirks, the end of the
stream) applies as it is, from the one place it is written. Around it, only what Bedrock
adds: the chunk's unwrapping (a chunk whose ``bytes`` are neither base64 text nor bytes, or
not one JSON object, is a ``StreamFailed`` with a ``StreamDecodeError``, as an undecodable
event of any stream is, and the stream goes on); the invocation metrics, reported as a
``Usage`` under their own key; exceptions, each a ``StreamFailed`` with a ``ProviderError``
whose ``kind`` is its name (``bedrock_converse.exception_failure``); and any other event, a
``StreamWarning`` (``quirk-unknown-event``, once per kind).

The native ``Stitcher``'s C reading of plain Anthropic events is keyed by the
``AnthropicAdapter`` class itself, and this adapter is not one: its events take the Python
path (nothing of Anthropic's is read twice, nothing differs but the speed).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.instructions import Item
from toolstitch.core.record import CallRecords
from toolstitch.vocab.errors import StreamDecodeError
from toolstitch.vocab.stream_events import StreamFailed

from ._base import Adapter, UnknownKinds, as_mapping, usage_event
from .anthropic import AnthropicAdapter
from .bedrock_converse import exception_failure, is_exception

__all__ = ["CHUNK_EVENT", "METRICS_KEY", "AnthropicBedrockAdapter", "detects"]

#: The one event type of the stream (the ``:event-type`` of its frames, boto3's key).
CHUNK_EVENT: Final = "chunk"
#: The key of the ``PayloadPart`` that holds the Anthropic event.
BYTES_KEY: Final = "bytes"
#: What Bedrock adds to the Anthropic ``message_stop`` event: ``inputTokenCount``,
#: ``outputTokenCount``, ``invocationLatency``, ``firstByteLatency``.
METRICS_KEY: Final = "amazon-bedrock-invocationMetrics"


def detects(payload: Mapping[str, Any]) -> bool:
    """Whether ``payload`` is an event of this stream: ``{"chunk": {"bytes": …}}`` and nothing
    else (a ConverseStream event has another key; the ``openai`` SDK's dumped ``ChunkEvent``
    has a ``type`` beside its ``chunk``)."""
    if len(payload) != 1:
        return False
    part = payload.get(CHUNK_EVENT)
    return isinstance(part, Mapping) and BYTES_KEY in part


def _chunk_event(part: object) -> dict[str, Any] | None:
    """The Anthropic event a chunk's ``PayloadPart`` holds; ``None`` when it holds none (no
    ``bytes``, or empty ones). Raises ``StreamDecodeError`` saying what is wrong with it."""
    data = part if isinstance(part, Mapping) else as_mapping(part)
    if data is None:
        raise StreamDecodeError(f"the chunk is a {type(part).__name__}, not an object")
    raw = data.get(BYTES_KEY)
    if raw is None or raw == "" or raw == b"":
        return None
    if isinstance(raw, str):  # the wire's JSON payload: base64 text
        try:
            raw = base64.b64decode(raw, validate=True)
        except ValueError as exc:  # binascii.Error, or a character outside ASCII
            raise StreamDecodeError(f"the chunk's bytes are not base64 ({exc})") from None
    elif not isinstance(raw, (bytes, bytearray, memoryview)):
        raise StreamDecodeError(
            f"the chunk's bytes are a {type(raw).__name__}, not base64 text or bytes"
        )
    try:
        event = json.loads(bytes(raw))
    except ValueError as exc:  # UnicodeDecodeError included
        raise StreamDecodeError(f"the chunk's bytes are not JSON ({exc})") from None
    if not isinstance(event, dict):
        raise StreamDecodeError("the chunk's bytes are not a JSON object (an Anthropic event)")
    return event


class AnthropicBedrockAdapter(Adapter):
    """Adapter for Bedrock ``InvokeModelWithResponseStream`` with Anthropic models
    (``provider="anthropic-bedrock"``): each chunk's event read by an ``AnthropicAdapter``."""

    name = "anthropic-bedrock"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self._inner = AnthropicAdapter(choice=choice, records=records)
        self._chunks = 0  # chunks read, to say which one was bad
        self._unknown = UnknownKinds()

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        out: list[Item] = []
        for key, value in payload.items():
            if key == CHUNK_EVENT and event is None:
                self._chunk(value, out)
            elif is_exception(key, event):
                out.append(exception_failure(str(key), value))
            else:
                self._unknown.report(
                    "an InvokeModelWithResponseStream event", key, "is not read; skipped", out
                )
        return out

    def _chunk(self, part: object, out: list[Item]) -> None:
        """One chunk: its Anthropic event's items, then Bedrock's metrics if it has them."""
        self._chunks += 1
        try:
            event = _chunk_event(part)
        except StreamDecodeError as exc:
            out.append(StreamFailed(error=StreamDecodeError(f"chunk {self._chunks}: {exc}")))
            return
        if event is None:
            return
        # Consumed here, before the next payload: the inner adapter reads the core's records
        # at its feed, as it does when the Stitcher feeds it directly.
        out.extend(self._inner.feed(event))
        metrics = event.get(METRICS_KEY)
        if isinstance(metrics, Mapping) and metrics:
            out.append(usage_event({METRICS_KEY: dict(metrics)}))

    def close(self) -> list[Item]:
        """The inner adapter's end, unchanged (it ends with its ``Finish``)."""
        return list(self._inner.close())
