"""OpenAI Responses: the ``input`` items of a request (and the ``output`` items of a response).

Items are typed: ``message`` (role ``system``, ``developer``, ``user`` or ``assistant``;
assistant text as ``output_text`` parts), ``reasoning`` (a ``summary`` of ``summary_text``
parts, ``encrypted_content`` carried on ``Reasoning.signature``, its ``id`` on
``Reasoning.id``), ``function_call`` (``call_id``, the arguments as JSON text) and
``function_call_output``. There is no error flag: see ``ERROR_PREFIX``. One neutral assistant
turn is written in its own order (``AssistantMessage.ordered_parts``: by default its
reasoning items, then its message, then its calls), and a run of reasoning, message and
``function_call`` items is read back as one turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from toolstitch.vocab.stream_events import CustomToolCall

from ._neutral import (
    SYSTEM_ROLES,
    AssistantMessage,
    AssistantTurn,
    FunctionCall,
    Message,
    Names,
    Reasoning,
    SystemMessage,
    TextPart,
    ToolResult,
    UserMessage,
    dump_arguments,
    error_text,
    flagless_result,
    load_arguments,
    not_a_message,
    text_of,
)

__all__ = ["custom_call_item", "custom_call_output", "from_openai_responses", "to_openai_responses"]


def to_openai_responses(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The ``input`` items of a Responses request."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"type": "message", "role": "system", "content": message.text})
        elif isinstance(message, UserMessage):
            out.append({"type": "message", "role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            out.extend(_assistant_items(message))
        elif isinstance(message, ToolResult):
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": message.call_id,
                    "output": error_text(message),
                }
            )
        else:
            raise not_a_message(message)
    return out


def _assistant_items(message: AssistantMessage) -> Iterator[dict[str, Any]]:
    """The turn's items in its own order (``ordered_parts``): each reasoning item before the
    ``function_call`` items that followed it."""
    for part in message.ordered_parts():
        if isinstance(part, Reasoning):
            yield _reasoning_item(part)
        elif isinstance(part, TextPart):
            if part.text:
                yield {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": part.text}],
                }
        else:
            yield {
                "type": "function_call",
                "call_id": part.id,
                "name": part.name,
                "arguments": dump_arguments(part.arguments),
            }


def _reasoning_item(reasoning: Reasoning) -> dict[str, Any]:
    """A ``reasoning`` input item: its ``id``, its ``summary`` parts (the text as the one
    summary part when there are none: what a reasoning item from another form shows), its
    ``encrypted_content``."""
    item: dict[str, Any] = {"type": "reasoning"}
    if reasoning.id is not None:
        item["id"] = reasoning.id
    texts = reasoning.summary or ((reasoning.text,) if reasoning.text else ())
    item["summary"] = [{"type": "summary_text", "text": text} for text in texts]
    if reasoning.signature is not None:
        item["encrypted_content"] = reasoning.signature
    return item


# The stages of one assistant turn, in the order its items come.
_REASONING, _TEXT, _CALLS = 0, 1, 2


class _Turns:
    """Gathers reasoning, assistant message and ``function_call`` items into assistant turns:
    an item of an earlier stage than the one before it starts a new turn."""

    def __init__(self, out: list[Message]) -> None:
        self.out = out
        self.turn: AssistantTurn | None = None
        self.stage = _REASONING

    def at(self, stage: int) -> AssistantTurn:
        """The turn an item of ``stage`` belongs to."""
        if self.turn is None or stage < self.stage:
            self.flush()
            self.turn = AssistantTurn()
        self.stage = stage
        return self.turn

    def flush(self) -> list[Message]:
        """End the turn being gathered; return the output, to append what follows it."""
        if self.turn is not None:
            self.out.append(self.turn.message())
            self.turn = None
        return self.out


def from_openai_responses(items: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Read Responses ``input`` (or ``output``) items. Consecutive reasoning, assistant
    message and ``function_call`` items make one ``AssistantMessage``."""
    turns = _Turns([])
    names = Names()
    for position, raw in enumerate(items):
        kind = raw.get("type", "message")
        role = raw.get("role")
        if kind == "reasoning":
            turns.at(_REASONING).reasoning(_read_reasoning(raw))
        elif kind == "message" and role == "assistant":
            turns.at(_TEXT).text(text_of(raw.get("content")))
        elif kind == "function_call":
            turns.at(_CALLS).call(names.add(_read_call(raw, f"item {position}")))
        elif kind == "function_call_output":
            call_id = str(raw.get("call_id") or "")
            turns.flush().append(flagless_result(call_id, raw.get("output"), names))
        elif kind == "message" and role in SYSTEM_ROLES:
            turns.flush().append(SystemMessage(text_of(raw.get("content"))))
        elif kind == "message" and role == "user":
            turns.flush().append(UserMessage(text_of(raw.get("content"))))
        else:
            raise ValueError(f"item {position}: unsupported item type {kind!r} (role {role!r})")
    return turns.flush()


def _read_reasoning(raw: Mapping[str, Any]) -> Reasoning:
    """A reasoning item: its summary parts (and, as ``text``, its ``reasoning_text``
    content, else the summary joined), ``encrypted_content`` and ``id``. One summary part
    and no content is read as ``text`` alone: what ``_reasoning_item`` writes for it."""
    summary = tuple(str(part.get("text", "")) for part in raw.get("summary") or ())
    content = "".join(str(part.get("text", "")) for part in raw.get("content") or ())
    if not content and len(summary) == 1:
        content, summary = summary[0], ()
    return Reasoning(
        text=content or "".join(summary),
        summary=summary,
        signature=raw.get("encrypted_content"),
        id=raw.get("id"),
    )


def _read_call(raw: Mapping[str, Any], where: str) -> FunctionCall:
    return FunctionCall(
        id=str(raw.get("call_id") or raw.get("id") or ""),
        name=str(raw.get("name") or ""),
        arguments=load_arguments(raw.get("arguments"), where),
    )


# -- custom tool calls (free-text input, not JSON arguments) -------------------------------------


def custom_call_item(call: CustomToolCall) -> dict[str, Any]:
    """The ``custom_tool_call`` input item for a streamed ``CustomToolCall``, to send back
    (after the turn's reasoning items) with its output on the next request. Its ``input``
    is the text exactly as received."""
    item: dict[str, Any] = {
        "type": "custom_tool_call",
        "call_id": call.call_id,
        "name": call.name,
        "input": call.input,
    }
    if call.id is not None:
        item["id"] = call.id
    return item


def custom_call_output(call_id: str, output: str) -> dict[str, Any]:
    """The ``custom_tool_call_output`` input item answering custom call ``call_id``."""
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": output}
