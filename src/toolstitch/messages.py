"""One neutral message shape, and conversion both ways to each provider's wire form.

A conversation is a list of ``Message``: ``SystemMessage``, ``UserMessage``,
``AssistantMessage`` (text, tool calls, reasoning) and ``ToolResult`` (one per call, success
or error). All are frozen dataclasses. ``to_*`` gives a provider's wire form, ``from_*``
reads it back:

=====================  ==========================================  =============================
provider               ``to_*`` returns                            tool calls / results
=====================  ==========================================  =============================
OpenAI Chat            ``messages`` (list of dicts)                ``tool_calls`` / ``tool``
                                                                   messages with ``tool_call_id``
OpenAI Responses       ``input`` items (list of dicts)             ``function_call`` /
                                                                   ``function_call_output``
Anthropic              ``(system, messages)``                      ``tool_use`` / ``tool_result``
Gemini                 ``(system_instruction, contents)``          ``functionCall`` /
                                                                   ``functionResponse``
=====================  ==========================================  =============================

Rules worth knowing:

* Arguments are always a dict here, so the wire form never carries invalid JSON.
* An error result is ``is_error=True``. Anthropic has a flag for it (``is_error``) and Gemini
  a key (``response: {"error": ...}``); the OpenAI forms have neither, so there the content
  itself says it: ``tool_error`` makes every error content start with ``"Error"`` (adding
  ``"Error: "`` when the message does not), the OpenAI writers add the same prefix to an
  error content that lacks it, and the OpenAI readers take a content starting with
  ``"Error:"`` or ``"Error ["`` as an error.
* Gemini calls may have no id: reading, a call without one gets
  ``f"{GENERATED_ID_PREFIX}{n}"`` (``n`` counts the calls of the conversation) and each
  ``functionResponse`` without one is paired *by position* with the calls of the model turn
  before it; writing, such generated ids are left out again. ``thoughtSignature`` values are
  carried on ``FunctionCall.signature``, ``Reasoning.signature`` and
  ``AssistantMessage.signature`` (the text part's) and written back where they came from.
* Anthropic needs its ``thinking`` blocks signed: reasoning without a signature is not
  written (it would be rejected). OpenAI Chat writes reasoning as ``reasoning_content`` only
  when asked (``include_reasoning=True``; DeepSeek-style servers want it back, others refuse
  unknown keys).
* The neutral order inside one assistant turn is reasoning, text, calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from toolstitch.core.ids import GENERATED_ID_PREFIX

__all__ = [
    "ERROR_PREFIX",
    "AssistantMessage",
    "FunctionCall",
    "Message",
    "Reasoning",
    "SystemMessage",
    "ToolResult",
    "UserMessage",
    "from_anthropic",
    "from_gemini",
    "from_openai_chat",
    "from_openai_responses",
    "to_anthropic",
    "to_gemini",
    "to_openai_chat",
    "to_openai_responses",
    "tool_error",
    "tool_result",
]

#: How an error result's content starts in the OpenAI wire forms (which have no error flag).
ERROR_PREFIX = "Error: "


@dataclass(frozen=True, slots=True)
class SystemMessage:
    """Instructions for the model (Anthropic ``system``, Gemini ``systemInstruction``)."""

    text: str


@dataclass(frozen=True, slots=True)
class UserMessage:
    """What the user said."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionCall:
    """A tool call in an assistant turn: ``arguments`` is always a dict (valid JSON).

    ``signature`` is Gemini's ``thoughtSignature`` on the call's part, carried back as is.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict, hash=False)
    signature: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Reasoning:
    """Reasoning the model showed (or hid) before answering.

    ``signature`` is what the provider needs to accept it back: Anthropic's ``signature``
    (or, with ``redacted=True``, the ``redacted_thinking`` block's ``data``), Gemini's
    ``thoughtSignature``, the Responses API's ``encrypted_content``. ``id`` is the Responses
    reasoning item's id.
    """

    text: str = ""
    signature: str | None = None
    id: str | None = None
    redacted: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    """One assistant turn: visible ``text``, ``tool_calls``, ``reasoning``.

    ``signature`` is Gemini's ``thoughtSignature`` on the text part, when it had one.
    """

    text: str = ""
    tool_calls: tuple[FunctionCall, ...] = ()
    reasoning: tuple[Reasoning, ...] = ()
    signature: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """The answer to one tool call: ``content`` for the model, ``is_error`` when it failed."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResult


class _CallLike(Protocol):
    @property
    def id(self) -> str | None: ...

    @property
    def name(self) -> str | None: ...


def _content_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if hasattr(value, "model_dump_json") and callable(value.model_dump_json):
        return str(value.model_dump_json())
    return json.dumps(value, ensure_ascii=False, default=str)


def tool_result(call: _CallLike, content: object) -> ToolResult:
    """A successful result for ``call`` (a ``FunctionCall``, a core ``ToolCall``, anything
    with ``id`` and ``name``). ``content`` that is not a string is written as JSON."""
    return ToolResult(call_id=call.id or "", name=call.name or "", content=_content_text(content))


def tool_error(call: _CallLike, message: str) -> ToolResult:
    """An error result for ``call`` (e.g. a core ``CallDiscarded``): ``message`` should say
    what went wrong and what the model can do about it. The content starts with ``"Error"``
    (``"Error: "`` is added when ``message`` does not), so that it reads as an error on the
    wire forms that have no error flag."""
    content = message if _is_error_text(message) else ERROR_PREFIX + message
    return ToolResult(call_id=call.id or "", name=call.name or "", content=content, is_error=True)


# -- helpers -----------------------------------------------------------------------------------


def _get(data: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in data:
            return data[key]
    return None


def _dump_args(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False)


def _load_args(text: object, where: str) -> dict[str, Any]:
    if isinstance(text, Mapping):
        return dict(text)
    if text is None or text == "":
        return {}
    if not isinstance(text, str):
        raise ValueError(f"{where}: arguments must be a JSON object text, got {text!r}")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{where}: the arguments are not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{where}: the arguments are not a JSON object")
    return value


def _text_of(content: object) -> str:
    """Text of a message content: a string, or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return str(content)


def _is_error_text(content: str) -> bool:
    return content.startswith(("Error:", "Error ["))


def _error_text(result: ToolResult) -> str:
    if result.is_error and not _is_error_text(result.content):
        return ERROR_PREFIX + result.content
    return result.content


def _read_error_text(content: str) -> tuple[str, bool]:
    return content, _is_error_text(content)


class _Names:
    """Call id → name, to give results (which only carry the id) their tool's name."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def add(self, call_id: str, name: str) -> None:
        self.names[call_id] = name

    def get(self, call_id: str) -> str:
        return self.names.get(call_id, "")


# -- OpenAI Chat -------------------------------------------------------------------------------


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
            item: dict[str, Any] = {
                "role": "assistant",
                "content": message.text if message.text or not message.tool_calls else None,
            }
            if message.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": _dump_args(call.arguments)},
                    }
                    for call in message.tool_calls
                ]
            reasoning = "".join(r.text for r in message.reasoning)
            if include_reasoning and reasoning:
                item["reasoning_content"] = reasoning
            out.append(item)
        elif isinstance(message, ToolResult):
            out.append(
                {"role": "tool", "tool_call_id": message.call_id, "content": _error_text(message)}
            )
        else:
            raise TypeError(f"not a message: {message!r}")
    return out


def from_openai_chat(messages: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Read Chat Completions ``messages`` (``developer`` counts as ``system``)."""
    out: list[Message] = []
    names = _Names()
    for position, raw in enumerate(messages):
        role = raw.get("role")
        where = f"message {position}"
        if role in ("system", "developer"):
            out.append(SystemMessage(_text_of(raw.get("content"))))
        elif role == "user":
            out.append(UserMessage(_text_of(raw.get("content"))))
        elif role == "assistant":
            calls: list[FunctionCall] = []
            for entry in raw.get("tool_calls") or ():
                function = entry.get("function") or {}
                call = FunctionCall(
                    id=str(entry.get("id") or ""),
                    name=str(function.get("name") or ""),
                    arguments=_load_args(function.get("arguments"), where),
                )
                names.add(call.id, call.name)
                calls.append(call)
            reasoning = raw.get("reasoning_content")
            if not isinstance(reasoning, str):
                reasoning = raw.get("reasoning")
            out.append(
                AssistantMessage(
                    text=_text_of(raw.get("content")),
                    tool_calls=tuple(calls),
                    reasoning=(Reasoning(text=reasoning),)
                    if isinstance(reasoning, str) and reasoning
                    else (),
                )
            )
        elif role == "tool":
            call_id = str(raw.get("tool_call_id") or "")
            content, is_error = _read_error_text(_text_of(raw.get("content")))
            out.append(
                ToolResult(
                    call_id=call_id, name=names.get(call_id), content=content, is_error=is_error
                )
            )
        else:
            raise ValueError(f"{where}: unknown role {role!r}")
    return out


# -- OpenAI Responses --------------------------------------------------------------------------


def to_openai_responses(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The ``input`` items of a Responses request."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"type": "message", "role": "system", "content": message.text})
        elif isinstance(message, UserMessage):
            out.append({"type": "message", "role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            for reasoning in message.reasoning:
                item: dict[str, Any] = {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": reasoning.text}]
                    if reasoning.text
                    else [],
                }
                if reasoning.id is not None:
                    item["id"] = reasoning.id
                if reasoning.signature is not None:
                    item["encrypted_content"] = reasoning.signature
                out.append(item)
            if message.text:
                out.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": message.text}],
                    }
                )
            for call in message.tool_calls:
                out.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": _dump_args(call.arguments),
                    }
                )
        elif isinstance(message, ToolResult):
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": message.call_id,
                    "output": _error_text(message),
                }
            )
        else:
            raise TypeError(f"not a message: {message!r}")
    return out


_REASONING, _TEXT, _CALLS = 0, 1, 2


def from_openai_responses(items: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Read Responses ``input`` (or ``output``) items. Consecutive reasoning, assistant
    message and ``function_call`` items make one ``AssistantMessage``."""
    out: list[Message] = []
    names = _Names()
    turn: dict[str, Any] | None = None  # the assistant turn being gathered
    stage = _REASONING

    def flush() -> None:
        nonlocal turn
        if turn is not None:
            out.append(
                AssistantMessage(
                    text=turn["text"],
                    tool_calls=tuple(turn["calls"]),
                    reasoning=tuple(turn["reasoning"]),
                )
            )
            turn = None

    def gather(at: int) -> dict[str, Any]:
        nonlocal turn, stage
        if turn is None or at < stage:
            flush()
            turn = {"text": "", "calls": [], "reasoning": []}
        stage = at
        return turn

    for position, raw in enumerate(items):
        kind = raw.get("type", "message")
        role = raw.get("role")
        where = f"item {position}"
        if kind == "reasoning":
            summary = raw.get("summary") or ()
            gather(_REASONING)["reasoning"].append(
                Reasoning(
                    text="".join(str(part.get("text", "")) for part in summary),
                    signature=raw.get("encrypted_content"),
                    id=raw.get("id"),
                )
            )
        elif kind == "message" and role == "assistant":
            current = gather(_TEXT)
            current["text"] += _text_of(raw.get("content"))
        elif kind == "function_call":
            call = FunctionCall(
                id=str(raw.get("call_id") or raw.get("id") or ""),
                name=str(raw.get("name") or ""),
                arguments=_load_args(raw.get("arguments"), where),
            )
            names.add(call.id, call.name)
            gather(_CALLS)["calls"].append(call)
        elif kind == "function_call_output":
            flush()
            call_id = str(raw.get("call_id") or "")
            output = raw.get("output")
            content, is_error = _read_error_text(_text_of(output))
            out.append(
                ToolResult(
                    call_id=call_id, name=names.get(call_id), content=content, is_error=is_error
                )
            )
        elif kind == "message" and role in ("system", "developer"):
            flush()
            out.append(SystemMessage(_text_of(raw.get("content"))))
        elif kind == "message" and role == "user":
            flush()
            out.append(UserMessage(_text_of(raw.get("content"))))
        else:
            raise ValueError(f"{where}: unsupported item type {kind!r} (role {role!r})")
    flush()
    return out


# -- Anthropic ---------------------------------------------------------------------------------


def to_anthropic(messages: Iterable[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)`` of a Messages request. System messages are joined into
    ``system``; consecutive tool results share one user message. Reasoning without a
    signature is left out (Anthropic refuses unsigned thinking)."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None
    for message in messages:
        if not isinstance(message, ToolResult):
            results = None
        if isinstance(message, SystemMessage):
            system.append(message.text)
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            for reasoning in message.reasoning:
                if reasoning.signature is None:
                    continue
                if reasoning.redacted:
                    blocks.append({"type": "redacted_thinking", "data": reasoning.signature})
                else:
                    blocks.append(
                        {
                            "type": "thinking",
                            "thinking": reasoning.text,
                            "signature": reasoning.signature,
                        }
                    )
            if message.text:
                blocks.append({"type": "text", "text": message.text})
            for call in message.tool_calls:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": dict(call.arguments),
                    }
                )
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolResult):
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.call_id,
                "content": message.content,
            }
            if message.is_error:
                block["is_error"] = True
            if results is None:
                results = []
                out.append({"role": "user", "content": results})
            results.append(block)
        else:
            raise TypeError(f"not a message: {message!r}")
    joined = "\n\n".join(t for t in system if t)
    return (joined or None), out


def from_anthropic(
    messages: Iterable[Mapping[str, Any]], system: str | Sequence[Mapping[str, Any]] | None = None
) -> list[Message]:
    """Read a Messages request's ``messages`` (and its ``system``, text or blocks)."""
    out: list[Message] = []
    if system is not None:
        system_text = _text_of(system)
        if system_text:
            out.append(SystemMessage(system_text))
    names = _Names()
    for position, raw in enumerate(messages):
        role = raw.get("role")
        content = raw.get("content")
        blocks: list[Mapping[str, Any]] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content or ())
        )
        if role == "assistant":
            texts: list[str] = []
            calls: list[FunctionCall] = []
            reasoning: list[Reasoning] = []
            for block in blocks:
                kind = block.get("type")
                if kind == "text":
                    texts.append(str(block.get("text", "")))
                elif kind == "thinking":
                    reasoning.append(
                        Reasoning(
                            text=str(block.get("thinking", "")), signature=block.get("signature")
                        )
                    )
                elif kind == "redacted_thinking":
                    reasoning.append(Reasoning(signature=block.get("data"), redacted=True))
                elif kind == "tool_use":
                    call = FunctionCall(
                        id=str(block.get("id") or ""),
                        name=str(block.get("name") or ""),
                        arguments=_load_args(block.get("input"), f"message {position}"),
                    )
                    names.add(call.id, call.name)
                    calls.append(call)
            out.append(
                AssistantMessage(
                    text="".join(texts), tool_calls=tuple(calls), reasoning=tuple(reasoning)
                )
            )
        elif role == "user":
            texts = []
            for block in blocks:
                kind = block.get("type")
                if kind == "tool_result":
                    call_id = str(block.get("tool_use_id") or "")
                    out.append(
                        ToolResult(
                            call_id=call_id,
                            name=names.get(call_id),
                            content=_text_of(block.get("content")),
                            is_error=bool(block.get("is_error", False)),
                        )
                    )
                elif kind == "text":
                    texts.append(str(block.get("text", "")))
            if texts or not blocks:
                out.append(UserMessage("".join(texts)))
        else:
            raise ValueError(f"message {position}: unknown role {role!r}")
    return out


# -- Gemini ------------------------------------------------------------------------------------


def _generated(call_id: str) -> bool:
    return call_id.startswith(GENERATED_ID_PREFIX)


def to_gemini(
    messages: Iterable[Message],
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``(system_instruction, contents)`` of a ``generateContent`` request (wire names).

    Ids that ``from_gemini`` generated are left out (Gemini pairs them by position).
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None
    for message in messages:
        if not isinstance(message, ToolResult):
            results = None
        if isinstance(message, SystemMessage):
            system.append(message.text)
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "parts": [{"text": message.text}]})
        elif isinstance(message, AssistantMessage):
            parts: list[dict[str, Any]] = []
            for reasoning in message.reasoning:
                part: dict[str, Any] = {"text": reasoning.text, "thought": True}
                if reasoning.signature is not None:
                    part["thoughtSignature"] = reasoning.signature
                parts.append(part)
            if message.text or message.signature is not None:
                part = {"text": message.text}
                if message.signature is not None:
                    part["thoughtSignature"] = message.signature
                parts.append(part)
            for call in message.tool_calls:
                function: dict[str, Any] = {"name": call.name, "args": dict(call.arguments)}
                if call.id and not _generated(call.id):
                    function = {"id": call.id, **function}
                part = {"functionCall": function}
                if call.signature is not None:
                    part["thoughtSignature"] = call.signature
                parts.append(part)
            if parts:
                out.append({"role": "model", "parts": parts})
        elif isinstance(message, ToolResult):
            response: dict[str, Any] = {"name": message.name}
            if message.call_id and not _generated(message.call_id):
                response = {"id": message.call_id, **response}
            response["response"] = (
                {"error": message.content} if message.is_error else {"output": message.content}
            )
            if results is None:
                results = []
                out.append({"role": "user", "parts": results})
            results.append({"functionResponse": response})
        else:
            raise TypeError(f"not a message: {message!r}")
    joined = "\n\n".join(t for t in system if t)
    instruction = {"parts": [{"text": joined}]} if joined else None
    return instruction, out


def _response_content(response: object) -> tuple[str, bool]:
    if isinstance(response, Mapping):
        if "error" in response:
            return _content_text(response["error"]), True
        if "output" in response:
            return _content_text(response["output"]), False
        if "result" in response and len(response) == 1:
            return _content_text(response["result"]), False
    return _content_text(response), False


def from_gemini(
    contents: Iterable[Mapping[str, Any]],
    system_instruction: Mapping[str, Any] | str | None = None,
) -> list[Message]:
    """Read ``contents`` (wire camelCase or SDK snake_case keys) and a system instruction.

    A ``functionCall`` without id gets ``f"{GENERATED_ID_PREFIX}{n}"``; a
    ``functionResponse`` without id takes the id of the call at its position in the model
    turn before it.
    """
    out: list[Message] = []
    if system_instruction is not None:
        system_text = (
            system_instruction
            if isinstance(system_instruction, str)
            else _text_of(system_instruction.get("parts"))
        )
        if system_text:
            out.append(SystemMessage(system_text))
    counter = 0
    previous_calls: list[FunctionCall] = []
    for position, raw in enumerate(contents):
        role = raw.get("role", "user")
        parts: list[Mapping[str, Any]] = list(raw.get("parts") or ())
        if role == "model":
            texts: list[str] = []
            signature: str | None = None
            calls: list[FunctionCall] = []
            reasoning: list[Reasoning] = []
            for part in parts:
                part_signature = _get(part, "thoughtSignature", "thought_signature")
                function = _get(part, "functionCall", "function_call")
                if function is not None:
                    call_id = function.get("id")
                    if not call_id:
                        call_id = f"{GENERATED_ID_PREFIX}{counter}"
                    counter += 1
                    calls.append(
                        FunctionCall(
                            id=str(call_id),
                            name=str(function.get("name") or ""),
                            arguments=_load_args(function.get("args"), f"content {position}"),
                            signature=part_signature,
                        )
                    )
                elif part.get("thought") is True:
                    reasoning.append(
                        Reasoning(text=str(part.get("text", "")), signature=part_signature)
                    )
                elif "text" in part:
                    texts.append(str(part["text"]))
                    if part_signature is not None:
                        signature = part_signature
            previous_calls = calls
            out.append(
                AssistantMessage(
                    text="".join(texts),
                    tool_calls=tuple(calls),
                    reasoning=tuple(reasoning),
                    signature=signature,
                )
            )
        elif role in ("user", "function", "tool"):
            texts = []
            seen = 0
            for part in parts:
                response = _get(part, "functionResponse", "function_response")
                if response is not None:
                    call_id = response.get("id")
                    name = str(response.get("name") or "")
                    if not call_id:
                        call_id = (
                            previous_calls[seen].id
                            if seen < len(previous_calls)
                            else f"{GENERATED_ID_PREFIX}{counter + seen}"
                        )
                    seen += 1
                    content, is_error = _response_content(response.get("response"))
                    out.append(
                        ToolResult(
                            call_id=str(call_id), name=name, content=content, is_error=is_error
                        )
                    )
                elif "text" in part:
                    texts.append(str(part["text"]))
            if texts or not parts:
                out.append(UserMessage("".join(texts)))
        else:
            raise ValueError(f"content {position}: unknown role {role!r}")
    return out
