"""Anthropic Messages: the ``system`` and ``messages`` of a request.

System messages go into the one ``system`` text. Messages alternate ``user`` and
``assistant``, each a list of typed blocks: assistant ``thinking`` (with its ``signature``),
``redacted_thinking`` (its ``data`` carried on ``Reasoning.signature``, ``redacted=True``),
``text`` and ``tool_use`` (``id``, ``name``, ``input`` as an object, and the ``caller`` of a
programmatic call), in the turn's own order (``AssistantMessage.ordered_parts``); user
``text`` and ``tool_result`` (``tool_use_id``, ``content``, ``is_error``). Consecutive
results share one user message. Anthropic refuses unsigned thinking, so reasoning without a
signature is not written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ._neutral import (
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
    joined_system,
    load_arguments,
    not_a_message,
    read_block_turns,
    runs,
    system_messages,
    text_of,
    user_turn,
)

__all__ = ["from_anthropic", "to_anthropic"]


def to_anthropic(messages: Iterable[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)`` of a Messages request. System messages are joined into
    ``system``; consecutive tool results share one user message. Reasoning without a
    signature is left out (Anthropic refuses unsigned thinking)."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in runs(messages):
        if isinstance(message, tuple):
            out.append({"role": "user", "content": [_result_block(r) for r in message]})
        elif isinstance(message, SystemMessage):
            system.append(message.text)
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            blocks = list(_assistant_blocks(message))
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        else:
            raise not_a_message(message)
    return joined_system(system), out


def _assistant_blocks(message: AssistantMessage) -> Iterator[dict[str, Any]]:
    """The turn's blocks in its own order (``ordered_parts``): thinking stays where it was
    relative to the text and the ``tool_use`` blocks, as Anthropic requires."""
    for part in message.ordered_parts():
        if isinstance(part, Reasoning):
            if part.signature is None:
                continue
            if part.redacted:
                yield {"type": "redacted_thinking", "data": part.signature}
            else:
                yield {"type": "thinking", "thinking": part.text, "signature": part.signature}
        elif isinstance(part, TextPart):
            if part.text:
                yield {"type": "text", "text": part.text}
        else:
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": part.id,
                "name": part.name,
                "input": dict(part.arguments),
            }
            if part.caller is not None:
                block["caller"] = dict(part.caller)
            yield block


def _result_block(result: ToolResult) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "content": result.content,
    }
    if result.is_error:
        block["is_error"] = True
    return block


def from_anthropic(
    messages: Iterable[Mapping[str, Any]], system: str | Sequence[Mapping[str, Any]] | None = None
) -> list[Message]:
    """Read a Messages request's ``messages`` (and its ``system``, text or blocks)."""
    turns = read_block_turns(
        messages, lambda text: {"type": "text", "text": text}, _read_assistant, _read_user
    )
    return system_messages(text_of(system)) + turns


def _read_assistant(blocks: list[Mapping[str, Any]], where: str, names: Names) -> AssistantMessage:
    turn = AssistantTurn()
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            turn.text(str(block.get("text", "")))
        elif kind == "thinking":
            turn.reasoning(
                Reasoning(text=str(block.get("thinking", "")), signature=block.get("signature"))
            )
        elif kind == "redacted_thinking":
            turn.reasoning(Reasoning(signature=block.get("data"), redacted=True))
        elif kind == "tool_use":
            caller = block.get("caller")
            call = FunctionCall(
                id=str(block.get("id") or ""),
                name=str(block.get("name") or ""),
                arguments=load_arguments(block.get("input"), where),
                caller=caller if isinstance(caller, Mapping) else None,
            )
            turn.call(names.add(call))
    return turn.message()


def _read_user(blocks: list[Mapping[str, Any]], names: Names) -> list[Message]:
    results: list[ToolResult] = []
    texts: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            call_id = str(block.get("tool_use_id") or "")
            results.append(
                ToolResult(
                    call_id=call_id,
                    name=names.get(call_id),
                    content=text_of(block.get("content")),
                    is_error=bool(block.get("is_error", False)),
                )
            )
        elif kind == "text":
            texts.append(str(block.get("text", "")))
    return user_turn(results, texts, empty=not blocks)
