"""OpenAI Chat Completions chunks (and every OpenAI-compatible server) → items.

What arrives: ``chat.completion.chunk`` objects, ``{"choices": [{"index", "delta": {"role",
"content", "reasoning_content" | "reasoning", "tool_calls": [...]}, "finish_reason"}],
"usage"}``; a final chunk with ``choices: []`` and ``usage`` when usage was requested;
``data: [DONE]`` (handled by the stream decoder). An error may arrive instead of a chunk,
as ``{"error": {...}}`` (Groq sends it as ``event: error``).

The openai SDK's helper stream (``client.chat.completions.stream(...)``, a
``ChatCompletionStream``) wraps each raw chunk in a ``ChunkEvent`` (``type == "chunk"``, the
chunk in ``.chunk``) and adds events of its own (``content.delta``,
``tool_calls.function.arguments.done``...) that only repeat what the chunks say:
``sdk_chunk`` unwraps the first and drops the others (``HELPER_EVENTS``), as objects or as
dicts, so nothing is counted twice. Any other event that is not a chunk (no ``choices``,
``usage`` or ``error``) leaves a ``StreamWarning`` (``quirk-unknown-event``): nothing
vanishes silently.

Tool-call entries go through this provider's quirk layer (``_openai_chat_quirks.ChatQuirks``),
which normalises what servers bend and warns about it, reading the core's record of each call.
The adapter follows one choice (``choice``, default 0); the others are ignored. ``feed`` and
``close`` are generators (see adapters/_base.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from toolstitch.core.instructions import Item
from toolstitch.core.record import CallRecords
from toolstitch.vocab.stream_events import (
    ReasoningBlock,
    RefusalDelta,
)

from ._base import (
    Adapter,
    BoundedText,
    finish_event,
    mapping,
    provider_error,
    reasoning_delta,
    stream_quirk,
    text_delta,
    usage_event,
)
from ._openai_chat_quirks import CODES as _QUIRK_CODES
from ._openai_chat_quirks import ChatQuirks

__all__ = ["CODES", "HELPER_EVENTS", "OpenAIChatAdapter", "sdk_chunk"]

#: The ``quirk-…`` codes of OpenAI Chat Completions streams: the quirk layer's (this module
#: emits only the shared ``quirk-unknown-event`` besides, ``adapters._base.SHARED_CODES``).
CODES: Final[dict[str, str]] = {
    **_QUIRK_CODES,
    "quirk-error-in-chunk": "a chunk carried a top-level error object beside its choices "
    "(OpenRouter): a StreamFailed, and the rest of the chunk is read",
}

#: The ``type`` of the openai SDK's ``ChatCompletionStream`` events that repeat what the raw
#: chunks (its ``chunk`` events) already say: skipped, never counted twice.
HELPER_EVENTS: Final = frozenset(
    {
        "content.delta",
        "content.done",
        "refusal.delta",
        "refusal.done",
        "tool_calls.function.arguments.delta",
        "tool_calls.function.arguments.done",
        "logprobs.content.delta",
        "logprobs.content.done",
        "logprobs.refusal.delta",
        "logprobs.refusal.done",
    }
)


#: The keys of a delta that ``_choice`` reads. Each shape of ``_standard`` is one of them
#: set and none of the others (``_READ_BESIDES_…``; a ``role`` may come with it).
_READ_BY_CHOICE: Final = (
    "tool_calls",
    "content",
    "refusal",
    "reasoning_content",
    "reasoning",
    "function_call",
)
_READ_BESIDES_TOOL_CALLS: Final = tuple(k for k in _READ_BY_CHOICE if k != "tool_calls")
_READ_BESIDES_CONTENT: Final = tuple(k for k in _READ_BY_CHOICE if k != "content")


def _sets_any(delta: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """Whether ``delta`` sets any of ``keys`` (a value other than ``None``). A plain loop,
    half the cost of ``any()`` over a generator: an SDK object's dumped delta holds every
    key, so this runs per chunk."""
    for key in keys:  # noqa: SIM110
        if delta.get(key) is not None:
            return True
    return False


def _text(delta: dict[str, Any]) -> list[Item] | None:
    """The items of a delta that holds text and nothing else ``_choice`` reads (a ``role``
    may come with it), read when no reasoning is open: its ``TextDelta``, or none for empty
    text. ``None`` for any other delta."""
    content = delta.get("content")
    if type(content) is not str:
        return None
    if len(delta) > 1 and _sets_any(delta, _READ_BESIDES_CONTENT):
        return None
    return [text_delta(content)] if content else []


def sdk_chunk(event: object) -> object | None:
    """An event of the openai SDK's helper stream, unwrapped: the raw chunk a ``ChunkEvent``
    carries; ``None`` for a helper event (``HELPER_EVENTS``); anything else as it is.

    Read by attribute, before any conversion, so that the helper events' snapshots (the
    whole text so far, on every event) are never dumped.
    """
    kind = getattr(event, "type", None)
    if kind == "chunk":
        chunk = getattr(event, "chunk", None)
        return event if chunk is None else chunk
    if isinstance(kind, str) and kind in HELPER_EVENTS:
        return None
    return event


def _failure(payload: Mapping[str, Any], event: str | None) -> tuple[list[Item], bool]:
    """The stream failure an event carries (``{"error": …}``, ``event: error``), and whether
    that is all of it. An error object inside an ordinary chunk, beside its choices
    (OpenRouter): the stream failed, and what the chunk carried besides is still read (a cut:
    a call whose arguments never arrived is discarded); the oddity is reported."""
    error = payload.get("error")
    if "error" in payload and not payload.get("choices"):
        whole: list[Item] = [provider_error(error)] if error is not None or event == "error" else []
        return whole, True
    if event == "error":
        return [provider_error(payload)], True
    if error is None:
        return [], False
    quirk = stream_quirk(
        "quirk-error-in-chunk",
        "a chunk carried a top-level error object beside its choices; the stream failed, and "
        "the rest of the chunk was read",
    )
    return [provider_error(error), quirk], False


class OpenAIChatAdapter(Adapter):
    """Adapter for OpenAI Chat Completions streams (``provider="openai-chat"``)."""

    name = "openai-chat"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self.quirks = ChatQuirks(self.records)
        # The reasoning text being read, until the text, a call or the finish follows it:
        # one block's text (the same text its ReasoningDelta events carry), and its key.
        self._reasoning: BoundedText | None = None
        self._reasoning_key = "reasoning_content"
        self.unknown = 0  # events that were not chunks (``quirk-unknown-event``)

    def feed(self, payload: object, *, event: str | None = None) -> Iterable[Item]:
        """One chunk (a mapping, an SDK object, or an event of the SDK's helper stream)."""
        if type(payload) is dict:  # the common case, directly
            return self._feed(payload, event)
        chunk = sdk_chunk(payload)
        if chunk is None and payload is not None:
            return ()  # a helper event that repeats the chunks
        return super().feed(payload if chunk is None else chunk, event=event)

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> Iterable[Item]:
        if event is None and self._reasoning is None:
            items = self._standard(payload)
            if items is not None:
                return items
        return self._chunk(payload, event)

    def _standard(self, payload: Mapping[str, Any]) -> Iterable[Item] | None:
        """The commonest chunks, cheaply: plain dicts, one choice (the one followed), no
        finish reason, no usage, and a delta that is either one ``tool_calls`` entry and
        nothing else that ``_choice`` reads, that entry one more fragment the quirk layer
        passes as it came (``ChatQuirks.continuation``), or text alone (``_text``). Their
        items, the same ``_chunk`` would give; ``None``, having done nothing, for anything
        else."""
        choices = payload.get("choices")
        if (
            type(choices) is not list
            or len(choices) != 1
            or "error" in payload
            or payload.get("usage") is not None
        ):
            return None
        choice = choices[0]
        if (
            type(choice) is not dict
            or choice.get("index", 0) != self.choice
            or choice.get("finish_reason") is not None
        ):
            return None
        delta = choice.get("delta")
        if type(delta) is not dict:
            return None
        tool_calls = delta.get("tool_calls")
        if tool_calls is None:
            return _text(delta)
        if type(tool_calls) is not list or len(tool_calls) != 1 or type(tool_calls[0]) is not dict:
            return None
        if len(delta) > 1 and _sets_any(delta, _READ_BESIDES_TOOL_CALLS):
            return None  # the standard delta sets ``tool_calls`` alone of what ``_choice`` reads
        return self.quirks.continuation(tool_calls[0])

    def _chunk(self, payload: Mapping[str, Any], event: str | None) -> Iterator[Item]:
        """Any chunk (or event that is not one): its items, in order."""
        if "choices" not in payload and "usage" not in payload:
            kind = payload.get("type")
            if kind == "chunk" and "chunk" in payload:  # an SDK ChunkEvent, dumped
                payload = mapping(payload["chunk"])
            elif isinstance(kind, str) and kind in HELPER_EVENTS:
                return
            elif "error" not in payload and event != "error":
                yield from self._unknown(payload, event)
                return
        if "error" in payload or event == "error":  # (the rare case: no call otherwise)
            failure, whole = _failure(payload, event)
            yield from failure
            if whole:
                return
        choices = payload.get("choices")
        if isinstance(choices, list):
            for position, raw in enumerate(choices):
                choice = mapping(raw)
                index = choice.get("index", position)
                if index != self.choice:
                    continue
                yield from self._choice(choice)
        elif choices is not None:  # ``choices`` that is not a list: not a chunk either
            yield from self._unknown(payload, event)
        usage = payload.get("usage")
        if usage is not None:
            usage_map = mapping(usage)
            if usage_map:
                yield usage_event(dict(usage_map))

    def _choice(self, choice: Mapping[str, Any]) -> Iterator[Item]:
        delta = mapping(choice.get("delta"))
        if not delta:
            # Some servers put a whole message instead of a delta.
            delta = mapping(choice.get("message"))
        yield from self._reasoning_piece(delta)
        content = delta.get("content")
        tool_calls = delta.get("tool_calls")
        reason = choice.get("finish_reason")
        if self._reasoning is not None and (content or tool_calls or reason):
            yield self._reasoning_block()
        if isinstance(content, str) and content:
            yield text_delta(content)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            yield RefusalDelta(text=refusal)
        if tool_calls is not None:
            if isinstance(tool_calls, (list, tuple)):
                tool_calls = [mapping(t) if not isinstance(t, Mapping) else t for t in tool_calls]
            yield from self.quirks.feed(tool_calls)
        function_call = delta.get("function_call")
        if function_call is not None:
            # The deprecated ``functions`` API: one call, no index, no id.
            fc = mapping(function_call)
            yield from self.quirks.feed([{"index": 0, "type": "function", "function": fc}])
        if isinstance(reason, str) and reason:
            yield finish_event(reason)
            yield from self.quirks.finish_reason(reason)

    def _reasoning_piece(self, delta: Mapping[str, Any]) -> Iterator[Item]:
        """A delta's reasoning text (``reasoning_content``, or ``reasoning``): a
        ``ReasoningDelta``, kept for the block's ``ReasoningBlock`` up to
        ``max_reasoning_chars``."""
        key = "reasoning_content"
        reasoning = delta.get(key)
        if not isinstance(reasoning, str):
            key = "reasoning"
            reasoning = delta.get(key)
        if not isinstance(reasoning, str) or not reasoning:
            return
        yield reasoning_delta(reasoning)
        if self._reasoning is None:
            self._reasoning = BoundedText(self.records.limits.max_reasoning_chars)
            self._reasoning_key = key
        if not self._reasoning.add(reasoning):
            yield stream_quirk(
                "quirk-reasoning-over-limit",
                "the reasoning text passed max_reasoning_chars; its ReasoningBlock keeps the "
                "first characters only",
            )

    def _reasoning_block(self) -> ReasoningBlock:
        """The reasoning read so far as one block (``kind``: the key it came in), ended by
        what followed it; DeepSeek-style servers want it back (``message()``)."""
        text, self._reasoning = self._reasoning, None
        assert text is not None
        return ReasoningBlock(text=text.text(), kind=self._reasoning_key)

    def _unknown(self, payload: Mapping[str, Any], event: str | None) -> Iterator[Item]:
        """An event that is not a chunk: the first one is reported as it comes, how many in
        all at the close (two warnings at most, whatever the stream holds)."""
        self.unknown += 1
        if self.unknown == 1:
            kind = payload.get("type")
            what = (
                f"type {kind!r}"
                if isinstance(kind, str)
                else f"keys {sorted(map(str, payload))[:8]}"
                if payload
                else "no keys"
            )
            named = f" (SSE event {event!r})" if event else ""
            yield stream_quirk(
                "quirk-unknown-event",
                f"an event that is not a chat completion chunk ({what}){named} was ignored",
            )

    def close(self) -> Iterator[Item]:
        if self._reasoning is not None:
            yield self._reasoning_block()
        if self.unknown > 1:
            yield stream_quirk(
                "quirk-unknown-event",
                f"{self.unknown} events in all were not chat completion chunks; ignored",
            )
        yield from self.quirks.close()
