"""Gemini ``generateContent``: the ``system_instruction`` and ``contents`` of a request.

Contents have role ``user`` or ``model`` (``function`` and ``tool`` are read as ``user``)
and a list of parts: ``text`` (a ``thought: true`` text is reasoning), ``functionCall``
(``name``, ``args`` as an object, an optional ``id``) and ``functionResponse`` (``name``,
``response: {"output": ...}`` or ``{"error": ...}``). Any part may carry a
``thoughtSignature``, kept on the neutral value it came with and written back there. Keys
are read in the wire's camelCase or the SDK's snake_case.

Calls may have no id. Reading, a call without one gets ``f"{GENERATED_ID_PREFIX}{n}"``
(``n`` counts the calls of the conversation) and each ``functionResponse`` without one is
paired *by position* with the calls of the model turn before it; writing, such generated ids
are left out again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolstitch.adapters._base import get
from toolstitch.core.ids import GENERATED_ID_PREFIX

from ._neutral import (
    AssistantMessage,
    AssistantTurn,
    FunctionCall,
    Message,
    Reasoning,
    SystemMessage,
    TextPart,
    ToolResult,
    UserMessage,
    content_text,
    joined_system,
    load_arguments,
    not_a_message,
    runs,
    system_messages,
    text_of,
    user_turn,
)

__all__ = ["from_gemini", "to_gemini"]

#: The roles read as the user's turn.
_USER_ROLES = ("user", "function", "tool")


def _generated(call_id: str) -> bool:
    return call_id.startswith(GENERATED_ID_PREFIX)


def _with_id(call_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with ``id`` first, unless the id is absent or one ``from_gemini`` made."""
    if call_id and not _generated(call_id):
        return {"id": call_id, **body}
    return body


def _signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def to_gemini(
    messages: Iterable[Message],
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``(system_instruction, contents)`` of a ``generateContent`` request (wire names).

    Ids that ``from_gemini`` generated are left out (Gemini pairs them by position).
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in runs(messages):
        if isinstance(message, tuple):
            out.append({"role": "user", "parts": [_response_part(r) for r in message]})
        elif isinstance(message, SystemMessage):
            system.append(message.text)
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "parts": [{"text": message.text}]})
        elif isinstance(message, AssistantMessage):
            parts = _model_parts(message)
            if parts:
                out.append({"role": "model", "parts": parts})
        else:
            raise not_a_message(message)
    joined = joined_system(system)
    return ({"parts": [{"text": joined}]} if joined else None), out


def _model_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    """The turn's parts in its own order (``ordered_parts``), each signature on the part it
    came with (Gemini refuses signatures moved or merged between parts)."""
    parts: list[dict[str, Any]] = []
    for part in message.ordered_parts():
        if isinstance(part, Reasoning):
            parts.append(_signed({"text": part.text, "thought": True}, part.signature))
        elif isinstance(part, TextPart):
            parts.append(_signed({"text": part.text}, part.signature))
        else:
            function = _with_id(part.id, {"name": part.name, "args": dict(part.arguments)})
            parts.append(_signed({"functionCall": function}, part.signature))
    return parts


def _response_part(result: ToolResult) -> dict[str, Any]:
    response = _with_id(result.call_id, {"name": result.name})
    response["response"] = (
        {"error": result.content} if result.is_error else {"output": result.content}
    )
    return {"functionResponse": response}


def from_gemini(
    contents: Iterable[Mapping[str, Any]],
    system_instruction: Mapping[str, Any] | str | None = None,
) -> list[Message]:
    """Read ``contents`` (wire camelCase or SDK snake_case keys) and a system instruction.

    A ``functionCall`` without id gets ``f"{GENERATED_ID_PREFIX}{n}"``; a
    ``functionResponse`` without id takes the id of the call at its position in the model
    turn before it.
    """
    if system_instruction is None or isinstance(system_instruction, str):
        out = system_messages(system_instruction or "")
    else:
        out = system_messages(text_of(system_instruction.get("parts")))
    reader = _Reader()
    for position, raw in enumerate(contents):
        role = raw.get("role", "user")
        parts: list[Mapping[str, Any]] = list(raw.get("parts") or ())
        if role == "model":
            out.append(reader.model(parts, f"content {position}"))
        elif role in _USER_ROLES:
            out.extend(reader.user(parts))
        else:
            raise ValueError(f"content {position}: unknown role {role!r}")
    return out


class _Reader:
    """Reads turns in order, keeping what pairs results with calls: how many calls the
    conversation has had (for generated ids) and the calls of the last model turn."""

    def __init__(self) -> None:
        self.counter = 0
        self.previous_calls: list[FunctionCall] = []

    def model(self, parts: list[Mapping[str, Any]], where: str) -> AssistantMessage:
        turn = AssistantTurn()
        for part in parts:
            signature = get(part, "thoughtSignature", "thought_signature")
            function = get(part, "functionCall", "function_call")
            if function is not None:
                turn.call(self._call(function, signature, where))
            elif part.get("thought") is True:
                turn.reasoning(Reasoning(text=str(part.get("text", "")), signature=signature))
            elif "text" in part or signature is not None:
                turn.text(str(part.get("text", "")), signature)
        message = turn.message()
        self.previous_calls = list(message.tool_calls)
        return message

    def _call(self, function: Mapping[str, Any], signature: str | None, where: str) -> FunctionCall:
        call_id = function.get("id") or f"{GENERATED_ID_PREFIX}{self.counter}"
        self.counter += 1
        return FunctionCall(
            id=str(call_id),
            name=str(function.get("name") or ""),
            arguments=load_arguments(function.get("args"), where),
            signature=signature,
        )

    def user(self, parts: list[Mapping[str, Any]]) -> list[Message]:
        results: list[ToolResult] = []
        texts: list[str] = []
        for part in parts:
            response = get(part, "functionResponse", "function_response")
            if response is not None:
                results.append(self._result(response, len(results)))
            elif "text" in part:
                texts.append(str(part["text"]))
        return user_turn(results, texts, empty=not parts)

    def _result(self, response: Mapping[str, Any], seen: int) -> ToolResult:
        """The result at position ``seen`` in its turn."""
        call_id = response.get("id")
        if not call_id:
            previous = self.previous_calls
            call_id = (
                previous[seen].id
                if seen < len(previous)
                else f"{GENERATED_ID_PREFIX}{self.counter + seen}"
            )
        content, is_error = _response_content(response.get("response"))
        return ToolResult(
            call_id=str(call_id),
            name=str(response.get("name") or ""),
            content=content,
            is_error=is_error,
        )


def _response_content(response: object) -> tuple[str, bool]:
    """A ``functionResponse.response`` as ``(content, is_error)``: ``{"error": ...}``,
    ``{"output": ...}``, a lone ``{"result": ...}``, or any other value as JSON."""
    if isinstance(response, Mapping):
        if "error" in response:
            return content_text(response["error"]), True
        if "output" in response:
            return content_text(response["output"]), False
        if "result" in response and len(response) == 1:
            return content_text(response["result"]), False
    return content_text(response), False
