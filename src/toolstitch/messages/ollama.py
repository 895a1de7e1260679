"""Ollama ``/api/chat``: the ``messages`` of a request.

Roles ``system``, ``user``, ``assistant`` and ``tool``. An assistant message carries its
reasoning in ``thinking`` (one string: several ``Reasoning`` texts are joined, and there is
no signature to carry) and its calls in ``tool_calls``, ``{"id"?, "function": {"name",
"arguments": {...}}}`` with the arguments as an object; a result is a ``tool`` message
with ``tool_name`` and ``content``. There is no error flag: see ``ERROR_PREFIX``.

Calls may have no id (local servers before call ids, and the ``ollama`` SDK, which drops
them), and results carry none. Reading, a call without one gets
``f"{GENERATED_ID_PREFIX}{n}"`` (``n`` counts the calls of the conversation) and each
``tool`` message is paired with a call of the assistant turn before it: the first one not
answered yet whose name is its ``tool_name``, else the next one by position (a
``tool_call_id``, when a server sends one, wins). Writing, generated ids are left out again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolstitch.adapters._base import mapping
from toolstitch.core.ids import GENERATED_ID_PREFIX

from ._neutral import (
    AssistantMessage,
    FunctionCall,
    Message,
    Reasoning,
    SystemMessage,
    ToolResult,
    UserMessage,
    error_text,
    is_error_text,
    load_arguments,
    not_a_message,
    text_of,
)

__all__ = ["from_ollama", "to_ollama"]


def to_ollama(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The ``messages`` of an ``/api/chat`` request. Ids that ``from_ollama`` (or the core)
    generated are left out."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.text})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            out.append(_assistant(message))
        elif isinstance(message, ToolResult):
            item: dict[str, Any] = {"role": "tool", "content": error_text(message)}
            if message.name:
                item["tool_name"] = message.name
            out.append(item)
        else:
            raise not_a_message(message)
    return out


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    item: dict[str, Any] = {"role": "assistant", "content": message.text}
    thinking = "".join(r.text for r in message.reasoning)
    if thinking:
        item["thinking"] = thinking
    if message.tool_calls:
        calls = []
        for call in message.tool_calls:
            entry: dict[str, Any] = {}
            if call.id and not call.id.startswith(GENERATED_ID_PREFIX):
                entry["id"] = call.id
            entry["function"] = {"name": call.name, "arguments": dict(call.arguments)}
            calls.append(entry)
        item["tool_calls"] = calls
    return item


def from_ollama(messages: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Read ``/api/chat`` ``messages`` (dicts, or the ``ollama`` SDK's ``Message`` objects)."""
    out: list[Message] = []
    reader = _Reader()
    for position, item in enumerate(messages):
        raw = mapping(item)
        role = raw.get("role")
        where = f"message {position}"
        if role == "system":
            out.append(SystemMessage(text_of(raw.get("content"))))
        elif role == "user":
            out.append(UserMessage(text_of(raw.get("content"))))
        elif role == "assistant":
            out.append(reader.assistant(raw, where))
        elif role == "tool":
            out.append(reader.result(raw))
        else:
            raise ValueError(f"{where}: unknown role {role!r}")
    return out


class _Reader:
    """Reads messages in order, keeping what pairs results with calls: how many calls the
    conversation has had (for generated ids) and the unanswered calls of the last turn."""

    def __init__(self) -> None:
        self.counter = 0
        self.open: list[FunctionCall] = []  # the last assistant turn's calls not answered
        self.names: dict[str, str] = {}

    def assistant(self, raw: Mapping[str, Any], where: str) -> AssistantMessage:
        calls: list[FunctionCall] = []
        for item in raw.get("tool_calls") or ():
            entry = mapping(item)
            function = mapping(entry.get("function"))
            call_id = entry.get("id") or f"{GENERATED_ID_PREFIX}{self.counter}"
            self.counter += 1
            call = FunctionCall(
                id=str(call_id),
                name=str(function.get("name") or ""),
                arguments=load_arguments(function.get("arguments"), where),
            )
            self.names[call.id] = call.name
            calls.append(call)
        self.open = list(calls)
        thinking = raw.get("thinking")
        return AssistantMessage(
            text=text_of(raw.get("content")),
            tool_calls=tuple(calls),
            reasoning=(Reasoning(text=thinking),) if isinstance(thinking, str) and thinking else (),
        )

    def result(self, raw: Mapping[str, Any]) -> ToolResult:
        name = raw.get("tool_name") or raw.get("name")
        call_id = raw.get("tool_call_id")
        if call_id:
            self.open = [c for c in self.open if c.id != call_id]
        else:
            call = next((c for c in self.open if name and c.name == name), None)
            if call is None and self.open:
                call = self.open[0]
            if call is not None:
                self.open.remove(call)
                call_id = call.id
            else:
                call_id = f"{GENERATED_ID_PREFIX}{self.counter}"
                self.counter += 1
        content = text_of(raw.get("content"))
        return ToolResult(
            call_id=str(call_id),
            name=str(name or self.names.get(str(call_id), "")),
            content=content,
            is_error=is_error_text(content),
        )
