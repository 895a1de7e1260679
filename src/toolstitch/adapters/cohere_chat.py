"""Cohere v2 chat streams (``POST /v2/chat`` with ``"stream": true``) → items.

What arrives: SSE events with an ``event:`` line and a ``data:`` JSON object whose
``type`` repeats the event name (the stream ends with ``data: [DONE]``), or the ``cohere``
SDK's stream events (``client.v2.chat_stream``, pydantic objects of the same shape):

* ``message-start`` (``id``, an empty ``delta.message``);
* ``tool-plan-delta``: ``delta.message.tool_plan``, the model's plan before it calls tools;
* per call ``tool-call-start`` (``index``; ``delta.message.tool_calls`` is ONE object:
  ``id``, ``type``, ``function.name``, ``function.arguments: ""``), ``tool-call-delta``
  (``delta.message.tool_calls.function.arguments``, a fragment) and ``tool-call-end``;
* per content block ``content-start`` / ``content-delta`` / ``content-end`` (``index``;
  ``delta.message.content`` holds ``text``, or for thinking models ``type: "thinking"``
  with ``thinking``);
* ``citation-start`` / ``citation-end`` (RAG citations), ``debug``;
* ``message-end``: ``delta.finish_reason`` and ``delta.usage`` (``billed_units``,
  ``tokens``, ``cached_tokens``), and ``delta.error`` when the model failed.

A call is keyed by its ``index`` (the core index): ``tool-call-start`` gives it its id and
name, the deltas its arguments, ``tool-call-end`` ends it (a call that streamed no
arguments gets the core's empty arguments, ``{}``). The plan is reasoning: a
``ReasoningDelta`` per piece and, when the plan ends (the first call or content, or the
message's end), a ``ReasoningBlock(kind="tool_plan")``; thinking content the same with
``kind="thinking"``. ``message-end`` gives the ``FinishReason`` as sent (``COMPLETE``,
``TOOL_CALL``, ``MAX_TOKENS``, ...) and the ``Usage``; an ``ERROR``, ``ERROR_TOXIC``,
``ERROR_LIMIT`` or ``TIMEOUT`` finish is Cohere's way of failing inside the stream, so it is
also a ``StreamFailed`` (``ProviderError``, ``kind`` = the reason). An event of a type this
module does not know leaves a ``StreamWarning`` (``quirk-unknown-event``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import EndCall, Finish, Item, arguments
from toolstitch.core.record import CallRecords

from ._base import (
    Adapter,
    ReasoningText,
    UnknownKinds,
    finish_event,
    mapping,
    provider_error,
    quirk_warning,
    text_delta,
    usage_event,
)

__all__ = ["CODES", "EVENT_TYPES", "FAILED_REASONS", "CohereChatAdapter", "detects"]

#: The ``quirk-…`` codes this adapter emits (it also uses ``quirk-index-invalid``, declared
#: with the OpenAI-Chat codes).
CODES: Final[dict[str, str]] = {
    "quirk-tool-call-index-reused": "a tool-call-start reused the index of an earlier call; "
    "the new call got the next free index",
}

#: Cohere's own event types (none of them is another provider's).
EVENT_TYPES: Final = frozenset(
    {
        "message-start",
        "message-end",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
    }
)

#: Events read and deliberately left without items.
_QUIET: Final = frozenset({"message-start", "citation-start", "citation-end", "debug"})

#: The finish reasons that say the response failed.
FAILED_REASONS: Final = frozenset({"ERROR", "ERROR_TOXIC", "ERROR_LIMIT", "TIMEOUT"})


def detects(payload: Mapping[str, Any], event: str | None = None) -> bool:
    """Whether ``payload`` (with its SSE event name) is an event of a Cohere v2 stream."""
    kind = payload.get("type")
    return (isinstance(kind, str) and kind in EVENT_TYPES) or (
        isinstance(event, str) and event in EVENT_TYPES
    )


def _index(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _block(value: object) -> int | None:
    """A content block's index (``None`` when it has no usable one)."""
    return value if type(value) is int else None


def _message(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(mapping(payload.get("delta")).get("message"))


def _tool_call(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """The event's one call object (``delta.message.tool_calls``); a list holding just one,
    as a client that models the field as a list may give, is read the same way."""
    value = _message(payload).get("tool_calls")
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return mapping(value)


class CohereChatAdapter(Adapter):
    """Adapter for Cohere v2 chat streams (``provider="cohere-chat"``)."""

    name = "cohere-chat"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self._calls: dict[int, int] = {}  # Cohere's tool-call index -> core index
        self._cores: set[int] = set()
        self._last: int | None = None  # the core index of the latest call
        self._warned: set[int] = set()  # calls told quirk-index-invalid (once per call)
        self._plan = ReasoningText("tool_plan", self.records.limits.max_reasoning_chars)
        self._thinking = ReasoningText("thinking", self.records.limits.max_reasoning_chars)
        self._thinking_blocks: set[int | None] = set()  # content indices of thinking blocks
        self._unknown = UnknownKinds()

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        kind = payload.get("type")
        if not isinstance(kind, str):
            kind = event
        out: list[Item] = []
        if kind == "tool-call-delta":
            self._call_delta(payload, out)
        elif kind == "content-delta" or kind == "content-start":
            self._content(payload, out)
        elif kind == "tool-plan-delta":
            self._plan.add(_message(payload).get("tool_plan"), out)
        elif kind == "tool-call-start":
            self._plan.end(out)
            self._call_start(payload, out)
        elif kind == "tool-call-end":
            core = self._core(payload.get("index"), out)
            if core is not None:
                out.append(EndCall(core))
        elif kind == "content-end":
            index = _block(payload.get("index"))
            if index in self._thinking_blocks:
                self._thinking_blocks.discard(index)
                self._thinking.end(out)
        elif kind == "message-end":
            self._end(payload, out)
        elif kind == "error":
            out.append(provider_error(payload.get("error", payload)))
        elif kind not in _QUIET:
            self._unknown_event(kind, out)
        return out

    # -- calls ------------------------------------------------------------------------------

    def _call_start(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        given = payload.get("index")
        call = _tool_call(payload)
        function = mapping(call.get("function"))
        call_id = call.get("id") if isinstance(call.get("id"), str) and call["id"] else None
        name = function.get("name") if isinstance(function.get("name"), str) else None
        index = _index(given)
        core = index if index is not None and index not in self._cores else self._free()
        if index is not None:
            self._calls[index] = core
        self._cores.add(core)
        self._last = core
        fragment = function.get("arguments")
        out.append(
            Delta(
                index=core,
                id=call_id,
                name=name or None,
                arguments=fragment if isinstance(fragment, str) and fragment else None,
            )
        )
        if index is None or core != index:
            code = "quirk-index-invalid" if index is None else "quirk-tool-call-index-reused"
            if index is None:
                self._warned.add(core)
            out.append(
                quirk_warning(
                    code,
                    f"tool-call-start came with index {given!r}; the call got index {core}",
                    index=core,
                    call_id=call_id,
                    name=name,
                )
            )

    def _free(self) -> int:
        return max(self._cores, default=-1) + 1

    def _core(self, given: object, out: list[Item]) -> int | None:
        """The core index of the call a delta or end names; one with no usable index goes
        to the latest call (Cohere's calls never interleave), with a warning."""
        index = _index(given)
        if index is not None and index in self._calls:
            return self._calls[index]
        if self._last is not None and self._last not in self._warned:
            self._warned.add(self._last)
            out.append(
                quirk_warning(
                    "quirk-index-invalid",
                    f"a tool-call event came with index {given!r}, which no call has; it was "
                    f"taken for the latest call ({self._last})",
                    index=self._last,
                )
            )
        return self._last

    def _call_delta(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        function = mapping(_tool_call(payload).get("function"))
        fragment = function.get("arguments")
        if not isinstance(fragment, str) or not fragment:
            return
        core = self._core(payload.get("index"), out)
        if core is not None:
            out.append(arguments(core, fragment))

    # -- content, end -----------------------------------------------------------------------

    def _content(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        self._plan.end(out)
        content = mapping(_message(payload).get("content"))
        index = _block(payload.get("index"))
        thinking = content.get("thinking")
        if content.get("type") == "thinking" or isinstance(thinking, str):
            self._thinking_blocks.add(index)
            self._thinking.add(thinking, out)
            return
        text = content.get("text")
        if isinstance(text, str) and text:
            self._thinking.end(out)
            out.append(text_delta(text))

    def _end(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        self._plan.end(out)
        self._thinking.end(out)
        delta = mapping(payload.get("delta"))
        reason = delta.get("finish_reason")
        if not isinstance(reason, str):
            reason = ""
        if reason:
            out.append(finish_event(reason))
        usage = mapping(delta.get("usage"))
        if usage:
            out.append(usage_event(dict(usage)))
        if reason in FAILED_REASONS:
            error = delta.get("error")
            message = error if isinstance(error, str) and error else f"finish reason {reason}"
            out.append(provider_error({"message": message, "code": reason}))

    def _unknown_event(self, kind: object, out: list[Item]) -> None:
        self._unknown.report(
            "an event of type", kind, "(Cohere's v2 chat stream has none such) was ignored", out
        )

    def close(self) -> list[Item]:
        out: list[Item] = []
        self._plan.end(out)
        self._thinking.end(out)
        out.append(Finish())
        return out
