"""What every provider adapter shares: the adapter protocol and small helpers.

An adapter turns one provider's stream events (dicts, as decoded from the wire, or the
official SDK's objects, converted with ``as_mapping``) into *items* and returns them, in the
order they happen: tool-call deltas whose core index the adapter has already chosen
(``Delta``, a plain dict in the OpenAI wire shape, or ``Arguments``), the core's small
instructions (``EndCall``, ``Finish``, and ``ServerDelta``/``ServerEnd`` for calls the
provider runs itself; see ``toolstitch.core.instructions``), and stream events
(``TextDelta``, ``FinishReason``, ``Usage``, ``StreamFailed``, quirk ``CallWarning`` /
``StreamWarning`` …). It never owns or drives an ``Assembler``: the ``Stitcher`` applies each
delta and instruction to its assembler as it comes and passes the events on. So an adapter
is tested alone by feeding it payloads and looking at the items. Like every stage it is
sans-I/O: ``feed(payload, *, event=None)`` and ``close()``.

The pull design: ``feed`` and ``close`` return an *iterable* that the caller consumes item by
item, applying each delta before it asks for the next item. Adapters that must read the
core's record after an earlier item of the same payload (the OpenAI-Chat quirk layer: several
entries in one chunk, a fragment split at the close) are generators, so the record they read
through ``records`` (a read-only ``CallRecords`` view) is current at each resume; the others
return lists. Consume the result once, fully, before the next ``feed``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from toolstitch.core.instructions import Item
from toolstitch.core.record import CallRecords
from toolstitch.vocab._quick import one_field
from toolstitch.vocab.call_events import CallWarning
from toolstitch.vocab.errors import ProviderError, ProviderQuirk
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.stream_events import (
    FinishReason,
    StreamFailed,
    TextDelta,
    Usage,
)
from toolstitch.vocab.streamed import BoundedText, ReasoningText, reasoning_delta, stream_quirk

__all__ = [
    "MAX_REPORTED_KINDS",
    "SHARED_CODES",
    "Adapter",
    "BoundedText",
    "Fragments",
    "ReasoningText",
    "UnknownKinds",
    "as_mapping",
    "compact_json",
    "finish_event",
    "provider_error",
    "quirk_warning",
    "reasoning_delta",
    "stream_quirk",
    "text_delta",
    "usage_event",
]


#: The codes every adapter may emit, defined once: an event (or block, or delta kind) it does
#: not read, and reasoning text past ``Limits.max_reasoning_chars``.
SHARED_CODES: Final[dict[str, str]] = {
    "quirk-unknown-event": "an event, block or delta of a kind the adapter does not read was "
    "skipped (reported once per kind and stream)",
    "quirk-reasoning-over-limit": "a reasoning block passed max_reasoning_chars; its "
    "ReasoningBlock keeps the first characters only (and cannot be sent back)",
}


#: An adapter's ``_fragment`` shortcut (``Adapter._fragment``).
Fragments = Callable[[Mapping[str, Any]], "tuple[int, str] | tuple[()] | None"]


#: ``TextDelta(text=...)``, quickly: the commonest event of most streams (``reasoning_delta``,
#: its reasoning twin, is ``vocab.streamed``'s).
text_delta = one_field(TextDelta, "text", str)
#: ``FinishReason(reason=...)`` and ``Usage(usage=...)``, the same way: each stream's end, and
#: a Gemini stream's usage on every chunk that carries it.
finish_event = one_field(FinishReason, "reason", str)
usage_event = one_field(Usage, "usage", dict)


def as_mapping(obj: object) -> Mapping[str, Any] | None:
    """``obj`` as a mapping: a Mapping as it is; an SDK object through its own dump.

    pydantic models (``openai``, ``anthropic``, ``google-genai``) are dumped in JSON mode
    (enums become their values) with ``exclude_unset=True``, so that a field the provider
    did not send is absent rather than ``None`` (the quirk layer tells an explicit ``null``
    from an absent key), and ``by_alias=True``, so that google-genai objects use the wire's
    camelCase names. A ``type`` field left at its default is kept all the same: it is the
    discriminator that says what the object is (langchain-core's ``"AIMessageChunk"``),
    never a value the provider may have left out. An object holding a value JSON cannot
    (a langchain message's ``additional_kwargs`` may hold raw bytes) is dumped in Python
    mode instead. Objects with ``to_dict()`` are asked for that. ``None`` for anything else.
    """
    if type(obj) is dict or isinstance(obj, Mapping):  # a plain dict skips the ABC check
        return obj
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        try:
            data = dump(mode="json", exclude_unset=True, by_alias=True)
        except TypeError:  # a model_dump without those keywords
            data = dump()
        except ValueError:  # a value JSON cannot hold (bytes that are not UTF-8): as it is
            data = dump(exclude_unset=True, by_alias=True)
        if isinstance(data, Mapping):
            return _typed(obj, data)
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        data = to_dict()
        if isinstance(data, Mapping):
            return data
    return None


@functools.lru_cache(maxsize=256)
def _has_type_field(kind: type) -> bool:
    """Whether the pydantic class ``kind`` declares a ``type`` field (asked once per class)."""
    fields = getattr(kind, "model_fields", None)
    return isinstance(fields, Mapping) and "type" in fields


def _typed(obj: object, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``data``, ``obj`` dumped without its unset fields, with ``obj``'s ``type`` when the
    dump left that discriminator out (a default, as every langchain-core message has it)."""
    kind: type = type(obj)
    if "type" in data or not _has_type_field(kind):
        return data
    value = getattr(obj, "type", None)
    return {**data, "type": value} if isinstance(value, str) and value else data


def get(data: Mapping[str, Any], *keys: str) -> Any:
    """The value of the first of ``keys`` present in ``data`` (camelCase / snake_case)."""
    for key in keys:
        if key in data:
            return data[key]
    return None


def mapping(value: object) -> Mapping[str, Any]:
    """``value`` if it is a Mapping (or convertible), else an empty one."""
    if type(value) is dict:
        return value
    if value is None:  # an absent field, the commonest case after a dict: before the ABC's check
        return {}
    if isinstance(value, Mapping):
        return value
    return as_mapping(value) or {}


def compact_json(value: object) -> str:
    """A call's arguments that arrived whole, as an object (Gemini ``args``, Ollama
    ``arguments``), as the argument text fed to the core: compact JSON, keys in the order
    received, non-ASCII characters as they are."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def quirk_warning(
    code: str,
    message: str,
    *,
    index: int,
    call_id: str | None = None,
    name: str | None = None,
) -> CallWarning:
    """A ``CallWarning`` carrying a ``ProviderQuirk`` with a stable ``quirk-…`` code."""
    return CallWarning(
        index=index,
        error=ProviderQuirk(code, message, index=index, call_id=call_id, name=name),
    )


#: How many distinct kinds of unknown event an adapter reports per stream (``UnknownKinds``);
#: a stream that invents kinds without end gets no more warnings, and memory stays bounded.
MAX_REPORTED_KINDS: Final = 64

#: How much of an unknown kind's ``repr`` a warning quotes (and ``UnknownKinds`` keeps).
_KIND_CHARS: Final = 80


def short_repr(value: object) -> str:
    """``repr(value)``, cut to ``_KIND_CHARS`` characters (a kind quoted in a warning)."""
    text = repr(value)
    return text if len(text) <= _KIND_CHARS else text[: _KIND_CHARS - 1] + "…"


class UnknownKinds:
    """The kinds of event, block or delta an adapter does not read: each reported once per
    stream as a ``quirk-unknown-event`` ``StreamWarning``, at most ``MAX_REPORTED_KINDS`` of
    them (each key at most ``_KIND_CHARS`` characters)."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def report(self, what: str, kind: object, message: str, out: list[Item]) -> None:
        """Report kind ``kind`` of ``what`` (``"event"``, ``"delta"``…) unless already
        reported; ``message`` says what was done with it, after ``{what} {kind!r}``."""
        key = f"{what}:{short_repr(kind)}"
        seen = self._seen
        if key in seen or len(seen) >= MAX_REPORTED_KINDS:
            return
        seen.add(key)
        out.append(stream_quirk("quirk-unknown-event", f"{what} {short_repr(kind)} {message}"))


def provider_error(error: object) -> StreamFailed:
    """A ``StreamFailed`` for an error object sent inside the stream.

    ``error`` is the provider's error object (``{"type", "message"}`` for Anthropic,
    ``{"message", "type", "code", ...}`` for OpenAI-compatible servers, ``{"code",
    "message", "status"}`` for Gemini), or the message alone as a string (Ollama's
    ``{"error": "…"}``). ``kind`` becomes its most specific code.
    """
    data = {"message": error} if isinstance(error, str) else mapping(error)
    message = data.get("message")
    if not isinstance(message, str) or not message:
        message = "the provider reported an error"
    kind: str | None = None
    for key in ("code", "status", "type"):
        value = data.get(key)
        if isinstance(value, str) and value:
            kind = value
            break
    else:
        value = data.get("code")
        if isinstance(value, int) and not isinstance(value, bool):
            kind = str(value)
    details = [kind] if kind else []
    status = data.get("status_code")
    if isinstance(status, int) and not isinstance(status, bool):
        details.append(f"status {status}")
    where = f" ({', '.join(details)})" if details else ""
    text = f"the provider sent an error in the stream{where}: {message}"
    payload = dict(data) if data else error
    return StreamFailed(error=ProviderError(text, kind=kind, payload=payload))


class _NoRecords:
    """The records of a core that has seen nothing (an adapter used on its own)."""

    limits = Limits()

    def record(self, index: int) -> None:
        return None

    def generated_id(self, index: int) -> str:
        from toolstitch.core.ids import generated_id

        return generated_id(index, ())


class Adapter:
    """Base class of the provider adapters.

    ``name`` is the provider id (``"openai-chat"``, ``"openai-responses"``, ``"anthropic"``,
    ``"gemini"``). ``choice`` selects the choice or candidate to follow; ``records`` is the
    core's read-only ``CallRecords`` (the ``Assembler`` the items go to), for the adapters
    that read it. ``feed`` takes one decoded stream event; ``event`` is the SSE event name
    when there was one. ``close`` ends the stream: every call still open is resolved. Both
    return the items (see the module docstring).
    """

    name: str = ""
    #: The adapter's shortcut for its commonest events, if it has one: a plain dict in, the
    #: ``(index, fragment)`` of the one ``Arguments`` item ``feed`` would return for it, ``()``
    #: for an event of which ``feed`` would return no items and change nothing, or ``None``
    #: (having done nothing) when ``feed`` must read the event. The ``Stitcher`` applies it
    #: itself.
    _fragment: Fragments | None = None

    def _native_fragment(self) -> Fragments | None:
        """The C form of ``_fragment`` (the same results and effects), if the adapter has one
        and the extension is active; the native ``Stitcher`` reads plain dicts through it."""
        return None

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        self.choice = choice
        self.records: CallRecords = _NoRecords() if records is None else records

    def feed(self, payload: object, *, event: str | None = None) -> Iterable[Item]:
        """One stream event (a mapping, or an SDK object); the items it caused."""
        data = payload if type(payload) is dict else as_mapping(payload)
        if data is None:
            raise TypeError(f"cannot read a {type(payload).__name__} as a {self.name} event")
        return self._feed(data, event)

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> Iterable[Item]:
        raise NotImplementedError

    def _feed_declined(self, payload: Mapping[str, Any], event: str | None) -> Iterable[Item]:
        """``_feed`` of an event that ``_fragment`` has just declined, without asking it again
        (the ``Stitcher`` asked it first). An adapter with a ``_fragment`` overrides it."""
        return self._feed(payload, event)

    def close(self) -> Iterable[Item]:
        raise NotImplementedError
