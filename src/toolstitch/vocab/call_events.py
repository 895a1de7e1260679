"""What the assembler produces: call states, events, complete calls and snapshots.

Every class here is a frozen, slotted value object; the assembler creates them and
callers only read them.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolstitch.vocab.errors import ToolCallError
from toolstitch.vocab.text import TextSnapshot

__all__ = [
    "ArgumentsDelta",
    "ArgumentsValue",
    "CallDiscarded",
    "CallReady",
    "CallSnapshot",
    "CallStarted",
    "CallState",
    "CallWarning",
    "Event",
    "ToolCall",
]


class CallState(str, enum.Enum):
    """Where one call is in its life; the values are stable strings."""

    AWAITING_ID = "awaiting-id"
    ACCUMULATING_NAME = "accumulating-name"
    ACCUMULATING_ARGS = "accumulating-args"
    COMPLETE = "complete"
    DISCARDED = "discarded"

    def __str__(self) -> str:
        return self.value

    @property
    def is_final(self) -> bool:
        return self is CallState.COMPLETE or self is CallState.DISCARDED


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A complete, valid tool call, ready to dispatch.

    ``arguments`` is exactly the concatenated fragments (the model's own whitespace and key
    order); ``parsed_arguments`` is that text loaded as a dict.

    ``signature`` is the provider's opaque signature on the call, exactly as received, to send
    back with it (Gemini's ``thoughtSignature`` on the ``functionCall`` part, or the
    OpenAI-compatible ``extra_content.google.thought_signature``); ``caller`` is what the
    provider said about who made the call (Anthropic programmatic tool calling's ``caller``
    object), unchanged. Both are ``None`` when the provider sent nothing.
    """

    index: int
    id: str
    name: str
    arguments: str
    parsed_arguments: dict[str, Any] = field(hash=False)
    type: str = "function"
    signature: str | None = None
    caller: Mapping[str, Any] | None = field(default=None, hash=False)

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI Chat Completions wire form of this call, for an assistant message."""
        return {
            "id": self.id,
            "type": self.type,
            "function": {"name": self.name, "arguments": self.arguments},
        }

    def arguments_json(self) -> str:
        """The arguments re-serialised compactly (for providers that want canonical JSON)."""
        return json.dumps(self.parsed_arguments, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True, init=False)
class CallSnapshot:
    """A read-only view of one call as it stands.

    ``arguments`` is the argument text received so far; ``closed`` whether the arguments
    object has closed; ``partial_arguments`` the Python value built so far when the assembler
    keeps the partial view (else ``None``). Taking a snapshot costs O(1): ``arguments`` is
    joined only when first read, so polling ``Assembler.call(index)`` after every delta stays
    linear as long as the text is not read each time. ``partial_arguments`` is the assembler's
    live value, not a copy: it keeps growing with later deltas (copy it to keep it).
    """

    index: int
    id: str | None
    name: str | None
    state: CallState
    error: ToolCallError | None
    closed: bool
    partial_arguments: Any
    _text: TextSnapshot = field(repr=False)

    def __init__(
        self,
        *,
        index: int,
        id: str | None,
        name: str | None,
        arguments: str | None = None,
        state: CallState,
        error: ToolCallError | None = None,
        closed: bool = False,
        partial_arguments: Any = None,
        text: TextSnapshot | None = None,
    ) -> None:
        setter = object.__setattr__
        setter(self, "index", index)
        setter(self, "id", id)
        setter(self, "name", name)
        setter(self, "state", state)
        setter(self, "error", error)
        setter(self, "closed", closed)
        setter(self, "partial_arguments", partial_arguments)
        # ``text`` (the assembler's O(1) snapshot of its buffer) wins over ``arguments``.
        if text is None:
            text = TextSnapshot("" if arguments is None else arguments)
        setter(self, "_text", text)

    @property
    def arguments(self) -> str:
        """The argument text received so far (joined on first read)."""
        return self._text.get()


@dataclass(frozen=True, slots=True)
class Event:
    """Base class of everything ``Assembler.feed`` and ``Assembler.finish`` return."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallStarted(Event):
    """A new call index was seen. ``id`` and ``name`` are what the first delta carried."""

    index: int
    id: str | None
    name: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ArgumentsDelta(Event):
    """A non-empty fragment of a call's arguments, accepted as a valid continuation."""

    index: int
    fragment: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CallReady(Event):
    """The call is complete and valid: dispatch it now. Exactly once per call."""

    call: ToolCall

    @property
    def index(self) -> int:
        """The call's index (``call.index``)."""
        return self.call.index


@dataclass(frozen=True, slots=True, kw_only=True)
class CallDiscarded(Event):
    """The call can never become valid; ``error`` says why. Exactly once per call.

    ``signature`` is the provider's signature on the call (as ``ToolCall.signature``), which
    the provider still wants back with the call's ``{}`` stand-in (``StitchResult.message()``).
    """

    index: int
    id: str | None
    name: str | None
    arguments: str
    error: ToolCallError
    signature: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CallWarning(Event):
    """A problem that does not end the call (trailing text, a conflicting id, a quirk)."""

    index: int
    error: ToolCallError


@dataclass(frozen=True, slots=True, kw_only=True)
class ArgumentsValue(Event):
    """A value of a call's arguments, for UIs (with ``watch_strings``; see docs/schema.md).

    ``path`` is a JSON Pointer. ``done=True``: the value at ``path`` is complete (containers
    after their contents, the whole object last at ``""``). ``done=False``: a watched string
    grew, and ``value`` is only the newly arrived text.
    """

    index: int
    path: str
    value: Any
    done: bool
