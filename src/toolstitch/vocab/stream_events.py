"""Stream-level events: what a provider stream says besides tool-call deltas.

The core's events (``CallStarted``, ``ArgumentsDelta``, ``CallReady``, ``CallDiscarded``,
``CallWarning``) describe calls. A provider stream also carries visible text, reasoning,
a finish reason, token usage, calls that the provider runs itself, in-stream errors and
oddities that concern no single call. Those are the events here. All of them subclass the
core's ``Event``, so one ``isinstance(event, Event)`` covers everything ``stitch`` yields.

Every class is a frozen, slotted, keyword-only value object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolstitch.vocab.call_events import Event
from toolstitch.vocab.errors import ProviderQuirk, StreamError, ToolCallError

__all__ = [
    "CustomToolCall",
    "FinishReason",
    "ReasoningBlock",
    "ReasoningDelta",
    "RefusalDelta",
    "ServerToolCall",
    "StreamEvent",
    "StreamFailed",
    "StreamWarning",
    "TextDelta",
    "TextSignature",
    "Usage",
]


@dataclass(frozen=True, slots=True)
class StreamEvent(Event):
    """Base class of the stream-level events (everything that is not about one client call)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta(StreamEvent):
    """A piece of the visible assistant text, in stream order."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TextSignature(StreamEvent):
    """The provider's opaque signature on the visible text that came just before it (Gemini's
    ``thoughtSignature`` on a text part), byte for byte. It ends that text part: the text
    after it is a new part. A part with a signature and no text still sends this event
    (the part is then empty), so the signature is never lost; ``StitchResult.message()``
    writes it back on the same part (see docs/reasoning.md)."""

    signature: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta(StreamEvent):
    """A piece of reasoning / thinking text (OpenAI-compatible ``reasoning_content`` or
    ``reasoning``, Anthropic ``thinking_delta``, Responses reasoning text and summaries,
    Gemini ``thought`` parts). Never part of the visible text."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RefusalDelta(StreamEvent):
    """A piece of the model's refusal message (OpenAI Chat ``delta.refusal``, Responses
    ``response.refusal.delta``): text the model sends instead of an answer it will not give.
    Never part of the visible ``text``; ``StitchResult.refusal`` joins it."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningBlock(StreamEvent):
    """One reasoning block, reported when it ends, with what the provider needs to accept it
    back on the next request (see docs/reasoning.md).

    ``text`` is the block's reasoning text (what its ``ReasoningDelta`` events carried);
    ``summary`` the Responses API's summary parts, one string each, as sent; ``signature``
    the provider's opaque token for the block, byte for byte: Anthropic's ``signature``
    (from ``signature_delta``), or with ``redacted=True`` a ``redacted_thinking`` block's
    ``data``; Gemini's ``thoughtSignature`` on a thought part; the Responses reasoning
    item's ``encrypted_content``; Bedrock's ``reasoningContent.signature`` (or, redacted,
    its ``redactedContent``). ``id`` is the Responses reasoning item's id. ``kind`` is the
    provider's own name for the block (``"thinking"``, ``"redacted_thinking"``,
    ``"reasoning"``, ``"thought"``, ``"reasoningContent"``, ``"tool_plan"``, ...).
    """

    text: str = ""
    summary: tuple[str, ...] = ()
    signature: str | None = None
    id: str | None = None
    redacted: bool = False
    kind: str = "reasoning"


@dataclass(frozen=True, slots=True, kw_only=True)
class FinishReason(StreamEvent):
    """Why the provider says the response ended, exactly as it says it.

    OpenAI Chat ``finish_reason`` (``"tool_calls"``, ``"stop"``, ``"length"``…), Anthropic
    ``stop_reason`` (``"tool_use"``, ``"end_turn"``, ``"max_tokens"``…), Gemini
    ``finishReason`` (``"STOP"``, ``"MAX_TOKENS"``…), and for the Responses API the response
    ``status`` (``"completed"``) or, for an incomplete response, its
    ``incomplete_details.reason`` (``"max_output_tokens"``…).
    """

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage(StreamEvent):
    """Token usage as the provider reported it (its own keys, unchanged)."""

    usage: dict[str, Any] = field(hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerToolCall(StreamEvent):
    """A tool call the provider executes itself (Anthropic ``server_tool_use``).

    Reported so that nothing is hidden, but never a call to dispatch: it is not a
    ``CallReady`` and never appears among the complete calls. ``arguments`` is the input
    text as streamed; ``parsed_arguments`` is that text loaded, or ``None`` with ``error``
    set when it is not a complete JSON object.
    """

    index: int
    id: str | None
    name: str | None
    type: str
    arguments: str
    parsed_arguments: dict[str, Any] | None = field(default=None, hash=False)
    error: ToolCallError | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomToolCall(StreamEvent):
    """A call to a custom tool (Responses ``custom_tool_call``): its input is free text,
    not JSON arguments, so it is never a ``ToolCall``. Reported once, when its input is
    complete, for the caller to run and answer (a ``custom_tool_call_output`` with its
    ``call_id``; see ``toolstitch.messages.custom_call_output``).

    ``index`` is the item's ``output_index``; ``id`` the item id (``ctc_…``); ``call_id``
    the id its output must reference; ``input`` the text exactly as sent.
    """

    index: int
    id: str | None
    call_id: str | None
    name: str | None
    input: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFailed(StreamEvent):
    """The stream as a whole went wrong.

    ``error`` is a ``ProviderError`` for an error the provider sent inside the stream (e.g.
    Anthropic's or Groq's ``event: error``), or a ``StreamDecodeError`` for bytes that are
    not the stream format. Calls still open when the stream ends are then resolved as usual
    (usually discarded as truncated); a complete call stays complete.
    """

    error: StreamError


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamWarning(StreamEvent):
    """A provider quirk that concerns no particular call (e.g. a second finish chunk in a
    response without tool calls). Quirks that concern calls are ``CallWarning`` events."""

    error: ProviderQuirk
