"""OpenAI Chat Completions: the ``messages`` of a request.

Roles ``system`` (``developer`` is read as ``system`` too), ``user``, ``assistant`` and
``tool``. An assistant message carries its calls in ``tool_calls`` (``type: "function"``,
the arguments as JSON text) and has ``content: null`` when it has calls but no text; a result
is a ``tool`` message with ``tool_call_id``. There is no error flag: see ``ERROR_PREFIX``.
Reasoning is written as ``reasoning_content`` only when asked (``include_reasoning=True``:
DeepSeek-style servers want it back, others refuse unknown keys) and read from
``reasoning_content`` or ``reasoning``. A call's signature (from Gemini's OpenAI-compatible
endpoint) is written and read as the entry's ``extra_content.google.thought_signature``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ._neutral import (
    SYSTEM_ROLES,
    AssistantMessage,
    FunctionCall,
    Message,
    Names,
    Reasoning,
    SystemMessage,
    ToolResult,
    UserMessage,
    dump_arguments,
    error_text,
    flagless_result,
    load_arguments,
    not_a_message,
    text_of,
)

__all__ = ["from_openai_chat", "to_openai_chat"]


def to_openai_chat(
    messages: Iterable[Message], *, include_reasoning: bool = False
) -> list[dict[str, Any]]:
    """The ``messages`` of a Chat Completions request."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.text})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            out.append(_assistant(message, include_reasoning))
        elif isinstance(message, ToolResult):
            out.append(
                {"role": "tool", "tool_call_id": message.call_id, "content": error_text(message)}
            )
        else:
            raise not_a_message(message)
    return out


def _assistant(message: AssistantMessage, include_reasoning: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "role": "assistant",
        "content": message.text if message.text or not message.tool_calls else None,
    }
    if message.tool_calls:
        item["tool_calls"] = [_call_entry(call) for call in message.tool_calls]
    reasoning = "".join(r.text for r in message.reasoning)
    if include_reasoning and reasoning:
        item["reasoning_content"] = reasoning
    return item


def _call_entry(call: FunctionCall) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": dump_arguments(call.arguments)},
    }
    if call.signature is not None:
        # Gemini's OpenAI-compatible endpoint wants the call's thought signature back here.
        entry["extra_content"] = {"google": {"thought_signature": call.signature}}
    return entry


def _signature(entry: Mapping[str, Any]) -> str | None:
    """``extra_content.google.thought_signature`` of a ``tool_calls`` entry, if any."""
    extra = entry.get("extra_content")
    google = extra.get("google") if isinstance(extra, Mapping) else None
    value = google.get("thought_signature") if isinstance(google, Mapping) else None
    return value if isinstance(value, str) else None


def from_openai_chat(messages: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Read Chat Completions ``messages`` (``developer`` counts as ``system``)."""
    out: list[Message] = []
    names = Names()
    for position, raw in enumerate(messages):
        role = raw.get("role")
        where = f"message {position}"
        if role in SYSTEM_ROLES:
            out.append(SystemMessage(text_of(raw.get("content"))))
        elif role == "user":
            out.append(UserMessage(text_of(raw.get("content"))))
        elif role == "assistant":
            out.append(_read_assistant(raw, where, names))
        elif role == "tool":
            out.append(
                flagless_result(str(raw.get("tool_call_id") or ""), raw.get("content"), names)
            )
        else:
            raise ValueError(f"{where}: unknown role {role!r}")
    return out


def _read_assistant(raw: Mapping[str, Any], where: str, names: Names) -> AssistantMessage:
    calls: list[FunctionCall] = []
    for entry in raw.get("tool_calls") or ():
        function = entry.get("function") or {}
        call = FunctionCall(
            id=str(entry.get("id") or ""),
            name=str(function.get("name") or ""),
            arguments=load_arguments(function.get("arguments"), where),
            signature=_signature(entry),
        )
        calls.append(names.add(call))
    reasoning = raw.get("reasoning_content")
    if not isinstance(reasoning, str):
        reasoning = raw.get("reasoning")
    return AssistantMessage(
        text=text_of(raw.get("content")),
        tool_calls=tuple(calls),
        reasoning=(Reasoning(text=reasoning),) if isinstance(reasoning, str) and reasoning else (),
    )
