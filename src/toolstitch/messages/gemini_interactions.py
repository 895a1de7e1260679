"""Gemini Interactions API: the ``system_instruction`` and the ``input`` steps of a request.

An interaction's history is a list of typed steps (the ``steps`` of an interaction, and what
``input`` takes when the request does not lean on ``previous_interaction_id``):
``user_input`` (``content``: text objects), ``thought`` (``signature``, ``summary``: text
objects), ``model_output`` (``content``), ``function_call`` (``id``, ``name``, ``arguments``
as an object, and the ``signature`` the stream gave it, when it gave one) and
``function_result`` (``call_id``, ``name``, ``result``, ``is_error``). The system prompt is
the request's ``system_instruction`` string.

Every call has an id (the results name it in ``call_id``), written as it is. A thought's
``signature`` is carried on ``Reasoning.signature`` and its summary text on
``Reasoning.text`` (several summary items: on ``Reasoning.summary`` too), a call's on
``FunctionCall.signature``, all byte for byte. A run of model steps (thought,
``model_output``, ``function_call``) is one assistant turn, written in its own order
(``AssistantMessage.ordered_parts``). With ``previous_interaction_id`` the server keeps the
earlier steps and the next request needs only the ``function_result`` steps: write just the
results (``to_gemini_interactions(results)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
    content_text,
    joined_system,
    load_arguments,
    not_a_message,
    text_of,
)

__all__ = ["from_gemini_interactions", "to_gemini_interactions"]

#: The step types of an assistant turn.
_MODEL_STEPS = frozenset({"thought", "model_output", "function_call"})


def _texts(texts: Iterable[str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text} for text in texts]


def to_gemini_interactions(
    messages: Iterable[Message],
) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system_instruction, input)`` of an ``interactions.create`` request: the system
    messages joined (``None`` without any) and the history as steps."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(message.text)
        elif isinstance(message, UserMessage):
            out.append({"type": "user_input", "content": _texts([message.text])})
        elif isinstance(message, AssistantMessage):
            out.extend(_model_steps(message))
        elif isinstance(message, ToolResult):
            out.append(_result_step(message))
        else:
            raise not_a_message(message)
    return joined_system(system), out


def _model_steps(message: AssistantMessage) -> list[dict[str, Any]]:
    """The turn's steps in its own order, each signature on the step it came with."""
    steps: list[dict[str, Any]] = []
    for part in message.ordered_parts():
        if isinstance(part, Reasoning):
            steps.append(_thought_step(part))
        elif isinstance(part, TextPart):
            if part.text:
                steps.append({"type": "model_output", "content": _texts([part.text])})
        else:
            step: dict[str, Any] = {
                "type": "function_call",
                "id": part.id,
                "name": part.name,
                "arguments": dict(part.arguments),
            }
            if part.signature is not None:
                step["signature"] = part.signature
            steps.append(step)
    return steps


def _thought_step(reasoning: Reasoning) -> dict[str, Any]:
    """A ``thought`` step: its signature, and its summary (the summary items when there are
    several, else the text as the one item; none when there is no text)."""
    step: dict[str, Any] = {"type": "thought"}
    if reasoning.signature is not None:
        step["signature"] = reasoning.signature
    texts = reasoning.summary or ((reasoning.text,) if reasoning.text else ())
    if texts:
        step["summary"] = _texts(texts)
    return step


def _result_step(result: ToolResult) -> dict[str, Any]:
    step: dict[str, Any] = {
        "type": "function_result",
        "call_id": result.call_id,
        "name": result.name,
        "result": result.content,
    }
    if result.is_error:
        step["is_error"] = True
    return step


def from_gemini_interactions(
    steps: Iterable[Mapping[str, Any]], system_instruction: str | None = None
) -> list[Message]:
    """Read ``input`` (or an interaction's ``steps``) and a system instruction. Consecutive
    thought, ``model_output`` and ``function_call`` steps make one ``AssistantMessage``; a
    result without a ``name`` takes its call's."""
    out: list[Message] = [SystemMessage(system_instruction)] if system_instruction else []
    turn: AssistantTurn | None = None
    names = Names()
    for position, raw in enumerate(steps):
        kind = raw.get("type")
        if kind in _MODEL_STEPS:
            turn = turn or AssistantTurn()
            _read_model_step(raw, turn, names, f"step {position}")
            continue
        if turn is not None:
            out.append(turn.message())
            turn = None
        if kind == "user_input":
            out.append(UserMessage(text_of(raw.get("content"))))
        elif kind == "function_result":
            out.append(_read_result(raw, names))
        else:
            raise ValueError(f"step {position}: unsupported step type {kind!r}")
    if turn is not None:
        out.append(turn.message())
    return out


def _read_model_step(raw: Mapping[str, Any], turn: AssistantTurn, names: Names, where: str) -> None:
    kind = raw.get("type")
    signature = raw.get("signature")
    if kind == "thought":
        texts = tuple(str(item.get("text", "")) for item in raw.get("summary") or ())
        turn.reasoning(
            Reasoning(
                text="".join(texts),
                summary=texts if len(texts) > 1 else (),
                signature=signature,
            )
        )
    elif kind == "model_output":
        turn.text(text_of(raw.get("content")))
    else:
        call = FunctionCall(
            id=str(raw.get("id") or ""),
            name=str(raw.get("name") or ""),
            arguments=load_arguments(raw.get("arguments"), where),
            signature=signature,
        )
        turn.call(names.add(call))


def _read_result(raw: Mapping[str, Any], names: Names) -> ToolResult:
    """A ``function_result``: its ``result`` as content (a string as it is, text objects as
    their text, ``{"content": [...]}`` as that content's text, anything else as JSON)."""
    call_id = str(raw.get("call_id") or "")
    result = raw.get("result")
    if isinstance(result, list):
        content = text_of(result)
    elif isinstance(result, Mapping) and set(result) == {"content"}:
        content = text_of(result["content"])
    else:
        content = content_text(result)
    return ToolResult(
        call_id=call_id,
        name=str(raw.get("name") or names.get(call_id)),
        content=content,
        is_error=raw.get("is_error") is True,
    )
