"""Ollama's native ``/api/chat`` stream → items.

What arrives: newline-delimited JSON (``NDJSONDecoder``), one object per line, or the
``ollama`` SDK's ``ChatResponse`` objects (``chat(stream=True)``)::

    {"model", "created_at", "message": {"role", "content", "thinking"?, "tool_calls"?},
     "done": false}
    ...
    {..., "done": true, "done_reason": "stop", "total_duration", "prompt_eval_count",
     "eval_count", ...}

``message.content`` is visible text and ``message.thinking`` reasoning, both streamed
piece by piece. Calls arrive whole in ``message.tool_calls``: ``{"id"?, "function":
{"index"?, "name", "arguments": {...}}}``, with the arguments as a JSON *object*. Each
becomes a call, fed as compact JSON text in the order the keys arrived, and ends at once.

The call's index is ``function.index`` when the line gives a usable one (an int not taken
yet), else the next free position; the id is the call's ``id`` when there is one (Ollama
Cloud and recent servers), else the core's generated one (``toolstitch_call_<index>``),
as for Gemini. ``done_reason`` (``stop``, ``length``, ``load``, ``unload``; there is no
tool-specific reason) is the ``FinishReason``; the counters and durations of the last line
are the ``Usage``, with Ollama's own keys. A line ``{"error": "…"}`` is a ``StreamFailed``.
The thinking text ends as a ``ReasoningBlock(kind="thinking")`` when the first text or call
comes after it, or at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import EndCall, Finish, Item
from toolstitch.core.record import CallRecords

from ._base import (
    Adapter,
    ReasoningText,
    compact_json,
    finish_event,
    mapping,
    provider_error,
    quirk_warning,
    text_delta,
    usage_event,
)

__all__ = ["CODES", "OllamaChatAdapter", "detects"]

#: The ``quirk-…`` codes this adapter emits (it also uses ``quirk-index-invalid``, declared
#: with the OpenAI-Chat codes).
CODES: Final[dict[str, str]] = {
    "quirk-arguments-as-text": "a whole call's arguments came as a JSON text instead of an "
    "object; the text was used as it is",
    "quirk-index-taken": "a call's own index was already used by an earlier call of the "
    "response; the call got the next free one",
}

#: The keys of an ``/api/chat`` line that detection looks for.
_SHAPE: Final = ("model", "created_at", "message", "done")

#: The usage counters and durations (nanoseconds) of the last line, passed on as sent.
USAGE_KEYS: Final = (
    "prompt_eval_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
)


def detects(payload: Mapping[str, Any]) -> bool:
    """Whether ``payload`` is a line of an ``/api/chat`` stream."""
    return all(key in payload for key in _SHAPE)


class OllamaChatAdapter(Adapter):
    """Adapter for Ollama's native ``/api/chat`` NDJSON (``provider="ollama-chat"``)."""

    name = "ollama-chat"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self._taken: set[int] = set()
        self._next = 0  # the next free position
        self._thinking = ReasoningText("thinking", self.records.limits.max_reasoning_chars)

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        out: list[Item] = []
        error = payload.get("error")
        if error is not None and not payload.get("message"):
            out.append(provider_error(error))
            return out
        message = mapping(payload.get("message"))
        self._thinking.add(message.get("thinking"), out)
        content = message.get("content")
        calls = message.get("tool_calls")
        if (isinstance(content, str) and content) or calls:
            self._thinking.end(out)  # reasoning precedes the text and the calls it led to
        if isinstance(content, str) and content:
            out.append(text_delta(content))
        if isinstance(calls, list):
            for entry in calls:
                self._call(mapping(entry), out)
        if payload.get("done") is True:
            self._thinking.end(out)
            reason = payload.get("done_reason")
            if isinstance(reason, str) and reason:
                out.append(finish_event(reason))
        usage = {key: payload[key] for key in USAGE_KEYS if key in payload}
        if usage:
            out.append(usage_event(usage))
        return out

    def _call(self, entry: Mapping[str, Any], out: list[Item]) -> None:
        function = mapping(entry.get("function"))
        call_id = entry.get("id") if isinstance(entry.get("id"), str) and entry["id"] else None
        name = function.get("name") if isinstance(function.get("name"), str) else None
        index, note = self._index(function.get("index"))
        args = function.get("arguments")
        if isinstance(args, str):
            text = args
            out.append(Delta(index=index, id=call_id, name=name or None, arguments=text))
            out.append(
                quirk_warning(
                    "quirk-arguments-as-text",
                    "the call's arguments came as a JSON text, not an object; used as sent",
                    index=index,
                    call_id=call_id,
                    name=name,
                )
            )
        else:
            # No arguments at all: no text; the call's end gives it the empty-arguments
            # object (core.machine.at_end).
            whole = None if args is None else compact_json(args)
            out.append(Delta(index=index, id=call_id, name=name or None, arguments=whole))
        out.append(EndCall(index))
        if note is not None:
            out.append(quirk_warning(note[0], note[1], index=index, call_id=call_id, name=name))

    def _index(self, given: object) -> tuple[int, tuple[str, str] | None]:
        """The core index for a call whose ``function.index`` is ``given``, and the quirk
        (code, message) when that index could not be used."""
        note = None
        if type(given) is int and given >= 0 and given not in self._taken:
            index = given
        else:
            index = self._next
            while index in self._taken:
                index += 1
            if given is not None:
                if type(given) is int and given >= 0:
                    note = ("quirk-index-taken", f"index {given} was taken; the call got {index}")
                else:
                    note = (
                        "quirk-index-invalid",
                        f"the call's index {given!r} is not a usable index; it got {index}",
                    )
        self._taken.add(index)
        if index >= self._next:
            self._next = index + 1
        return index, note

    def close(self) -> list[Item]:
        out: list[Item] = []
        self._thinking.end(out)
        out.append(Finish())
        return out
