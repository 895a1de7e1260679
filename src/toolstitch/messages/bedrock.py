"""AWS Bedrock Converse: the ``system`` and ``messages`` of a ``converse`` / ``converse_stream``
request.

System messages become ``system`` content blocks, ``[{"text": ...}]`` (one per message).
Messages have role ``user`` or ``assistant`` and a ``content`` list of blocks, each a
one-key union: assistant ``reasoningContent`` (``{"reasoningText": {"text", "signature"}}``,
or ``{"redactedContent": ...}``, carried on ``Reasoning.signature`` with ``redacted=True``),
``text`` and ``toolUse`` (``toolUseId``, ``name``, ``input`` as an object); user ``text`` and
``toolResult`` (``toolUseId``, ``content: [{"text": ...}]``, ``status`` ``"success"`` or
``"error"``). Consecutive results share one user message.

Like Anthropic (whose models Bedrock serves), reasoning without a signature is not written:
Claude refuses unsigned reasoning, and the other models do not need it back.
``redactedContent`` is binary: in the JSON of the HTTP API it is base64 text, which is what
``Reasoning.signature`` holds; boto3 wants (and gives) ``bytes``, so write with
``binary=True`` for boto3 and aioboto3. ``status`` is understood by Nova and Claude models
only: ``tool_result_status=False`` leaves it out for the others (an error result's content
then says it, with the ``"Error: "`` prefix of the OpenAI forms).
"""

from __future__ import annotations

import base64
import json
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
    error_text,
    is_error_text,
    load_arguments,
    not_a_message,
    read_block_turns,
    runs,
    system_messages,
    text_of,
    user_turn,
)

__all__ = ["from_bedrock", "to_bedrock"]


def to_bedrock(
    messages: Iterable[Message], *, binary: bool = False, tool_result_status: bool = True
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(system, messages)`` of a Converse request: ``client.converse_stream(modelId=...,
    system=system, messages=messages)``. ``binary=True`` writes ``redactedContent`` as
    ``bytes`` (boto3, aioboto3) instead of its base64 text (the HTTP API's JSON).
    ``tool_result_status=False`` leaves out the results' ``status`` (models other than Nova
    and Claude refuse it). Reasoning without a signature is left out."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for message in runs(messages):
        if isinstance(message, tuple):
            blocks = [_result_block(r, tool_result_status) for r in message]
            out.append({"role": "user", "content": blocks})
        elif isinstance(message, SystemMessage):
            if message.text:
                system.append({"text": message.text})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": [{"text": message.text}]})
        elif isinstance(message, AssistantMessage):
            content = list(_assistant_blocks(message, binary))
            if content:
                out.append({"role": "assistant", "content": content})
        else:
            raise not_a_message(message)
    return system, out


def _assistant_blocks(message: AssistantMessage, binary: bool) -> Iterator[dict[str, Any]]:
    """The turn's blocks in its own order (``ordered_parts``): reasoning stays where it was
    relative to the text and the ``toolUse`` blocks."""
    for part in message.ordered_parts():
        if isinstance(part, Reasoning):
            block = _reasoning_block(part, binary)
            if block is not None:
                yield block
        elif isinstance(part, TextPart):
            if part.text:
                yield {"text": part.text}
        else:
            use = {"toolUseId": part.id, "name": part.name, "input": dict(part.arguments)}
            yield {"toolUse": use}


def _reasoning_block(reasoning: Reasoning, binary: bool) -> dict[str, Any] | None:
    """A ``reasoningContent`` block, or ``None`` for reasoning without a signature."""
    if reasoning.signature is None:
        return None
    if reasoning.redacted:
        data: str | bytes = reasoning.signature
        if binary:
            data = base64.b64decode(reasoning.signature)
        return {"reasoningContent": {"redactedContent": data}}
    text = {"text": reasoning.text, "signature": reasoning.signature}
    return {"reasoningContent": {"reasoningText": text}}


def _result_block(result: ToolResult, status: bool) -> dict[str, Any]:
    block: dict[str, Any] = {
        "toolUseId": result.call_id,
        "content": [{"text": result.content if status else error_text(result)}],
    }
    if status:
        block["status"] = "error" if result.is_error else "success"
    return {"toolResult": block}


def from_bedrock(
    system: Sequence[Mapping[str, Any]] | str | None, messages: Iterable[Mapping[str, Any]]
) -> list[Message]:
    """Read a Converse request's (or response's) ``system`` blocks and ``messages``:
    ``from_bedrock(*to_bedrock(conversation))`` gives the conversation back."""
    texts = [system] if isinstance(system, str) else [text_of([b]) for b in system or ()]
    out: list[Message] = [m for text in texts for m in system_messages(text)]
    return out + read_block_turns(
        messages, lambda text: {"text": text}, _read_assistant, _read_user
    )


def _read_assistant(blocks: list[Mapping[str, Any]], where: str, names: Names) -> AssistantMessage:
    turn = AssistantTurn()
    for block in blocks:
        if "text" in block:
            turn.text(str(block["text"]))
        elif "toolUse" in block:
            use = block["toolUse"]
            call = FunctionCall(
                id=str(use.get("toolUseId") or ""),
                name=str(use.get("name") or ""),
                arguments=load_arguments(use.get("input"), where),
            )
            turn.call(names.add(call))
        elif "reasoningContent" in block:
            reasoning = _read_reasoning(block["reasoningContent"])
            if reasoning is not None:
                turn.reasoning(reasoning)
    return turn.message()


def _read_reasoning(content: Mapping[str, Any]) -> Reasoning | None:
    redacted = content.get("redactedContent")
    if isinstance(redacted, (bytes, bytearray)):
        redacted = base64.b64encode(redacted).decode("ascii")
    if isinstance(redacted, str):
        return Reasoning(signature=redacted, redacted=True)
    text = content.get("reasoningText")
    if isinstance(text, Mapping):
        return Reasoning(text=str(text.get("text", "")), signature=text.get("signature"))
    return None


def _read_user(blocks: list[Mapping[str, Any]], names: Names) -> list[Message]:
    results: list[ToolResult] = []
    texts: list[str] = []
    for block in blocks:
        if "toolResult" in block:
            result = block["toolResult"]
            call_id = str(result.get("toolUseId") or "")
            content = _result_text(result.get("content"))
            status = result.get("status")
            is_error = status == "error" if status is not None else is_error_text(content)
            results.append(
                ToolResult(
                    call_id=call_id, name=names.get(call_id), content=content, is_error=is_error
                )
            )
        elif "text" in block:
            texts.append(str(block["text"]))
    return user_turn(results, texts, empty=not blocks)


def _result_text(content: object) -> str:
    """A result's content blocks as one text: ``text`` blocks as they are, ``json`` blocks as
    JSON text."""
    if not isinstance(content, list):
        return text_of(content)
    parts: list[str] = []
    for part in content:
        if isinstance(part, Mapping) and "json" in part:
            parts.append(json.dumps(part["json"], ensure_ascii=False))
        else:
            parts.append(text_of([part]))
    return "".join(parts)
