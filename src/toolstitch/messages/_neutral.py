"""The neutral message shape, and the rules that more than one wire form shares.

The shape: ``SystemMessage``, ``UserMessage``, ``AssistantMessage`` (with ``FunctionCall``
and ``Reasoning``) and ``ToolResult``, frozen dataclasses; ``tool_result`` and
``tool_error`` build results. The shared rules, each stated once here and used by the wire
modules beside this one:

* arguments: written as JSON text (the OpenAI forms) and read back from a JSON object text or
  a mapping (every form), always into a dict;
* content: a string, or a list of text parts, read as one string; a non-string tool value
  written as JSON;
* error results on the forms with no error flag (the OpenAI ones): written with the
  ``ERROR_PREFIX`` when the content lacks one, read as errors when the content starts with
  ``"Error:"`` or ``"Error ["``; ``developer`` read as ``system``;
* the forms with one system field and grouped results (Anthropic, Gemini): system texts
  joined by a blank line, consecutive results written into one user turn, and a user turn
  read as its results, then its text;
* results carry only the call id: ``Names`` remembers each call's name for them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

__all__ = [
    "ERROR_PREFIX",
    "AssistantMessage",
    "AssistantPart",
    "FunctionCall",
    "Message",
    "Reasoning",
    "SystemMessage",
    "TextPart",
    "ToolResult",
    "UserMessage",
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

    ``signature`` is the provider's opaque signature on the call, carried back as is:
    Gemini's ``thoughtSignature`` on the call's part (or the OpenAI-compatible
    ``extra_content.google.thought_signature``). ``caller`` is Anthropic's ``caller`` object
    of a programmatic tool call, written back on its ``tool_use`` block.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict, hash=False)
    signature: str | None = None
    caller: Mapping[str, Any] | None = field(default=None, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reasoning:
    """Reasoning the model showed (or hid) before answering.

    ``signature`` is the provider's opaque token that lets it accept the block back, byte for
    byte: Anthropic's ``signature`` (or, with ``redacted=True``, the ``redacted_thinking``
    block's ``data``), Gemini's ``thoughtSignature`` on a thought part, the Responses API's
    ``encrypted_content``. ``id`` is the Responses reasoning item's id and ``summary`` its
    ``summary_text`` parts, one string each; ``text`` the reasoning text itself (Anthropic's
    ``thinking``, a Gemini thought, the Responses ``reasoning_text`` content, an
    OpenAI-compatible ``reasoning_content``).
    """

    text: str = ""
    signature: str | None = None
    id: str | None = None
    redacted: bool = False
    summary: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class TextPart:
    """One run of visible text in an assistant turn, with the provider's signature on it
    (Gemini's ``thoughtSignature`` on a text part) when it had one."""

    text: str
    signature: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    """One assistant turn: visible ``text``, ``tool_calls``, ``reasoning``.

    ``signature`` is Gemini's ``thoughtSignature`` on the text part, when it had one.

    ``parts`` is the turn's reasoning, text runs and calls in the order the provider sent
    them, for the turns whose order matters on the way back (Anthropic interleaved thinking,
    Gemini parts that each carry their own signature). Give either ``parts`` or the fields:
    given ``parts``, ``text``, ``tool_calls``, ``reasoning`` and ``signature`` are derived
    from them (the text runs joined; ``signature`` the last signed text run's), and
    ``parts`` is dropped again when it says no more than the fields in the neutral order
    (reasoning, one text part, calls), so that two messages with the same content are
    equal. ``ordered_parts()`` is the order the writers use either way.
    """

    text: str = ""
    tool_calls: tuple[FunctionCall, ...] = ()
    reasoning: tuple[Reasoning, ...] = ()
    signature: str | None = None
    parts: tuple[AssistantPart, ...] = ()

    def __post_init__(self) -> None:
        if not self.parts:
            return
        parts = tuple(p for p in self.parts if not _empty_text(p))
        for part in parts:
            if not isinstance(part, (Reasoning, TextPart, FunctionCall)):
                raise TypeError(f"not a part of an assistant turn: {part!r}")
        texts = [p for p in parts if isinstance(p, TextPart)]
        signed = [p.signature for p in texts if p.signature is not None]
        derived = {
            "text": "".join(p.text for p in texts),
            "tool_calls": tuple(p for p in parts if isinstance(p, FunctionCall)),
            "reasoning": tuple(p for p in parts if isinstance(p, Reasoning)),
            "signature": signed[-1] if signed else None,
        }
        defaults = {"text": "", "tool_calls": (), "reasoning": (), "signature": None}
        for name, value in derived.items():
            given = getattr(self, name)
            if given != defaults[name] and given != value:
                raise ValueError(
                    f"AssistantMessage: {name}={given!r} disagrees with its parts ({value!r}); "
                    "give either parts or the fields"
                )
            object.__setattr__(self, name, value)
        neutral = _neutral_parts(self)
        object.__setattr__(self, "parts", () if parts == neutral else parts)

    def ordered_parts(self) -> tuple[AssistantPart, ...]:
        """The turn's parts in the order to write them: ``parts`` when given, else the
        neutral order (reasoning, the text as one part when there is text or a signature,
        the calls)."""
        return self.parts or _neutral_parts(self)


#: One part of an assistant turn (``AssistantMessage.parts``).
AssistantPart: TypeAlias = Reasoning | TextPart | FunctionCall


def _empty_text(part: object) -> bool:
    """An empty text part without a signature carries nothing."""
    return isinstance(part, TextPart) and not part.text and part.signature is None


def _neutral_parts(message: AssistantMessage) -> tuple[AssistantPart, ...]:
    text: tuple[TextPart, ...] = ()
    if message.text or message.signature is not None:
        text = (TextPart(text=message.text, signature=message.signature),)
    return (*message.reasoning, *text, *message.tool_calls)


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


def tool_result(call: _CallLike, content: object) -> ToolResult:
    """A successful result for ``call`` (a ``FunctionCall``, a core ``ToolCall``, anything
    with ``id`` and ``name``). ``content`` that is not a string is written as JSON."""
    return ToolResult(call_id=call.id or "", name=call.name or "", content=content_text(content))


def tool_error(call: _CallLike, message: str) -> ToolResult:
    """An error result for ``call`` (e.g. a core ``CallDiscarded``): ``message`` should say
    what went wrong and what the model can do about it. The content starts with ``"Error"``
    (``"Error: "`` is added when ``message`` does not), so that it reads as an error on the
    wire forms that have no error flag."""
    content = message if is_error_text(message) else ERROR_PREFIX + message
    return ToolResult(call_id=call.id or "", name=call.name or "", content=content, is_error=True)


def not_a_message(value: object) -> TypeError:
    """What every writer raises for an item that is not a ``Message``."""
    return TypeError(f"not a message: {value!r}")


# -- arguments and content -------------------------------------------------------------------


def content_text(value: object) -> str:
    """A tool's value as content text: a string as is, a pydantic model as its JSON, anything
    else as JSON."""
    if isinstance(value, str):
        return value
    if hasattr(value, "model_dump_json") and callable(value.model_dump_json):
        return str(value.model_dump_json())
    return json.dumps(value, ensure_ascii=False, default=str)


def dump_arguments(arguments: Mapping[str, Any]) -> str:
    """Arguments as the JSON text the OpenAI forms carry."""
    return json.dumps(arguments, ensure_ascii=False)


def load_arguments(value: object, where: str) -> dict[str, Any]:
    """Arguments read from the wire: a mapping, or a JSON object text (empty or absent:
    ``{}``). Anything else is a ``ValueError`` that says ``where`` it was."""
    if isinstance(value, Mapping):
        return dict(value)
    if value is None or value == "":
        return {}
    if not isinstance(value, str):
        raise ValueError(f"{where}: arguments must be a JSON object text, got {value!r}")
    try:
        loaded = json.loads(value)
    except ValueError as exc:
        raise ValueError(f"{where}: the arguments are not valid JSON ({exc})") from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{where}: the arguments are not a JSON object")
    return loaded


def text_of(content: object) -> str:
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


def system_messages(text: str) -> list[Message]:
    """A system text read from the wire: one ``SystemMessage``, or none when it is empty."""
    return [SystemMessage(text)] if text else []


# -- the OpenAI forms: no error flag, "developer" is "system" --------------------------------

#: The roles the OpenAI forms read as a ``SystemMessage``.
SYSTEM_ROLES = ("system", "developer")


def is_error_text(content: str) -> bool:
    return content.startswith(("Error:", "Error ["))


def error_text(result: ToolResult) -> str:
    """A result's content for a form with no error flag: an error says so itself."""
    if result.is_error and not is_error_text(result.content):
        return ERROR_PREFIX + result.content
    return result.content


def flagless_result(call_id: str, content: object, names: Names) -> ToolResult:
    """A result read from a form with no error flag: its content says whether it failed."""
    text = text_of(content)
    return ToolResult(
        call_id=call_id, name=names.get(call_id), content=text, is_error=is_error_text(text)
    )


# -- the forms with one system field and grouped results (Anthropic, Gemini) -----------------


def joined_system(texts: Iterable[str]) -> str | None:
    """System messages as one system text (blank-line separated), ``None`` if there is none."""
    return "\n\n".join(t for t in texts if t) or None


def runs(messages: Iterable[Message]) -> Iterator[Message | tuple[ToolResult, ...]]:
    """``messages`` with each run of consecutive ``ToolResult`` gathered into one tuple (the
    results a single user turn carries)."""
    results: list[ToolResult] = []
    for message in messages:
        if isinstance(message, ToolResult):
            results.append(message)
            continue
        if results:
            yield tuple(results)
            results = []
        yield message
    if results:
        yield tuple(results)


def user_turn(results: list[ToolResult], texts: list[str], *, empty: bool) -> list[Message]:
    """A user turn read from the wire: its results, then its text as one ``UserMessage``
    (also for a turn with no parts at all)."""
    if texts or empty:
        return [*results, UserMessage("".join(texts))]
    return list(results)


# -- reading ---------------------------------------------------------------------------------


class Names:
    """Call id → name, to give results (which only carry the id) their tool's name."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def add(self, call: FunctionCall) -> FunctionCall:
        """Remember ``call``'s name; return ``call``."""
        self.names[call.id] = call.name
        return call

    def get(self, call_id: str) -> str:
        return self.names.get(call_id, "")


class ReadAssistant(Protocol):
    def __call__(
        self, blocks: list[Mapping[str, Any]], where: str, names: Names
    ) -> AssistantMessage: ...


class ReadUser(Protocol):
    def __call__(self, blocks: list[Mapping[str, Any]], names: Names) -> list[Message]: ...


def read_block_turns(
    messages: Iterable[Mapping[str, Any]],
    text_block: Callable[[str], Mapping[str, Any]],
    read_assistant: ReadAssistant,
    read_user: ReadUser,
) -> list[Message]:
    """The ``user`` / ``assistant`` messages of a block-list form (Anthropic, Bedrock), each
    read by its role's reader; a string ``content`` is one text block (``text_block``)."""
    out: list[Message] = []
    names = Names()
    for position, raw in enumerate(messages):
        role = raw.get("role")
        content = raw.get("content")
        blocks: list[Mapping[str, Any]] = (
            [text_block(content)] if isinstance(content, str) else list(content or ())
        )
        if role == "assistant":
            out.append(read_assistant(blocks, f"message {position}", names))
        elif role == "user":
            out.extend(read_user(blocks, names))
        else:
            raise ValueError(f"message {position}: unknown role {role!r}")
    return out


@dataclass(slots=True)
class AssistantTurn:
    """An assistant turn being read, part by part, in wire order."""

    parts: list[AssistantPart] = field(default_factory=list)

    def text(self, text: str, signature: str | None = None) -> None:
        self.parts.append(TextPart(text=text, signature=signature))

    def call(self, call: FunctionCall) -> None:
        self.parts.append(call)

    def reasoning(self, reasoning: Reasoning) -> None:
        self.parts.append(reasoning)

    def message(self) -> AssistantMessage:
        return AssistantMessage(parts=tuple(self.parts))
