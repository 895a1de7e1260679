"""Histories as users hold them: read the forms a run accepts, write one back in a wire form.

A run's history may be given as

* a ``str``: one user message;
* neutral messages (``toolstitch.messages``: ``SystemMessage``, ``UserMessage``,
  ``AssistantMessage``, ``ToolResult``), a ``str`` among them being a user message;
* the model's own wire format, every item a dict (or an SDK object with ``model_dump`` /
  ``to_dict``): OpenAI Chat ``messages``, Responses ``input`` items, Anthropic ``messages``
  (its ``system`` as ``system=``), Gemini ``contents`` (its system instruction as
  ``system=``), Bedrock Converse ``messages``, Ollama ``messages``. Which one is the model's
  ``provider``: the history of an ``OpenAIChatModel`` is read as Chat messages.

Neutral and wire items are not mixed in one history: a wire history is read as a whole
(the pairing of results with calls, and Gemini's generated ids, depend on all of it).
``write_history`` is the other way: neutral messages (``RunResult.messages``) in a provider's
wire form, as ``toolstitch.messages``' ``to_*`` gives it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from toolstitch.adapters import as_mapping
from toolstitch.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResult,
    UserMessage,
    from_anthropic,
    from_bedrock,
    from_gemini,
    from_ollama,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_bedrock,
    to_gemini,
    to_ollama,
    to_openai_chat,
    to_openai_responses,
)

__all__ = ["WIRE_FORMS", "read_history", "write_history"]

_NEUTRAL: Final = (SystemMessage, UserMessage, AssistantMessage, ToolResult)

Reader = Callable[[list[Mapping[str, Any]], Any], list[Message]]


def _system_first(reader: Callable[[list[Mapping[str, Any]]], list[Message]]) -> Reader:
    """A reader of a form without its own system field: ``system=`` comes first."""

    def read(items: list[Mapping[str, Any]], system: Any) -> list[Message]:
        head: list[Message] = [SystemMessage(system)] if system else []
        return head + reader(items)

    return read


#: Anthropic's messages, for the Messages API and for Claude through Bedrock's InvokeModel.
_ANTHROPIC: Final[tuple[str, Reader]] = (
    "Anthropic messages (the system prompt as system=)",
    lambda items, system: from_anthropic(items, system),
)

#: provider -> (what its history is called, its reader ``(items, system) -> messages``).
WIRE_FORMS: Final[dict[str, tuple[str, Reader]]] = {
    "openai-chat": ("OpenAI Chat messages", _system_first(from_openai_chat)),
    "openai-responses": ("OpenAI Responses input items", _system_first(from_openai_responses)),
    "anthropic": _ANTHROPIC,
    "anthropic-bedrock": _ANTHROPIC,  # Bedrock's InvokeModel body for Claude: the same messages
    "gemini": (
        "Gemini contents (the system instruction as system=)",
        lambda items, system: from_gemini(items, system),
    ),
    "bedrock-converse": (
        "Bedrock Converse messages (the system blocks as system=)",
        lambda items, system: from_bedrock(system, items),
    ),
    "ollama-chat": ("Ollama messages", _system_first(from_ollama)),
}

_WRITERS: Final[dict[str, Callable[..., Any]]] = {
    "openai-chat": to_openai_chat,
    "openai-responses": to_openai_responses,
    "anthropic": to_anthropic,
    "anthropic-bedrock": to_anthropic,
    "gemini": to_gemini,
    "bedrock-converse": to_bedrock,
    "ollama-chat": to_ollama,
}


def _accepted(provider: str) -> str:
    forms = "a str (one user message), a list of toolstitch.messages messages (or str)"
    wire = WIRE_FORMS.get(provider)
    if wire is not None:
        return f"{forms}, or {wire[0]} (dicts) for this {provider!r} model"
    known = ", ".join(WIRE_FORMS)
    return f"{forms}, or the wire format of a model whose provider is one of {known}"


def _refuse(provider: str, what: str) -> TypeError:
    return TypeError(f"cannot read the history: {what}. A history is {_accepted(provider)}.")


def read_history(messages: object, provider: str, *, system: Any = None) -> list[Message]:
    """``messages`` as neutral messages (a new list), for a model of ``provider``.

    ``system`` is the system prompt of a history given without one: Anthropic's ``system``
    (text or blocks), Gemini's system instruction, Bedrock's system blocks; for the other
    forms, and for neutral messages, a text that becomes a leading ``SystemMessage``.
    A history that is none of the accepted forms raises ``TypeError`` naming them; a wire
    history that its reader cannot read raises ``ValueError`` (``TypeError`` for a part of
    the wrong type) saying where.
    """
    if isinstance(messages, str):
        return [*_neutral_system(system), UserMessage(messages)]
    if isinstance(messages, Mapping) or not isinstance(messages, Iterable):
        raise _refuse(provider, f"got {type(messages).__name__}, not a list")
    items = list(messages)
    if all(isinstance(item, (str, *_NEUTRAL)) for item in items):
        converted = [UserMessage(m) if isinstance(m, str) else m for m in items]
        return [*_neutral_system(system), *converted]
    wire = _wire_items(items, provider)
    name, reader = WIRE_FORMS[provider]
    try:
        return reader(wire, system)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"cannot read the history as {name}: {exc}") from exc
    except (TypeError, AttributeError) as exc:  # a part of the wrong type (a str for a block)
        raise TypeError(f"cannot read the history as {name}: {exc}") from exc


def _neutral_system(system: Any) -> list[Message]:
    if system is None or system == "":
        return []
    if not isinstance(system, str):
        raise TypeError("with neutral messages, system= is a str (or give a SystemMessage)")
    return [SystemMessage(system)]


def _wire_items(items: list[Any], provider: str) -> list[Mapping[str, Any]]:
    """Every item as a mapping, or the ``TypeError`` that names the accepted forms."""
    wire: list[Mapping[str, Any]] = []
    for position, item in enumerate(items):
        if isinstance(item, (str, *_NEUTRAL)):
            raise _refuse(
                provider,
                f"item {position} is a {type(item).__name__} among wire-format items; "
                "give the whole history in one form",
            )
        raw = as_mapping(item)
        if raw is None:
            raise _refuse(provider, f"item {position} is {item!r:.80}")
        wire.append(raw)
    if wire and provider not in WIRE_FORMS:
        raise _refuse(provider, f"a model of provider {provider!r} has no wire format here")
    return wire


def write_history(messages: Sequence[Message], provider: str, **options: Any) -> Any:
    """``messages`` in ``provider``'s wire form, as ``toolstitch.messages`` writes it:
    a list of dicts for OpenAI Chat, Responses and Ollama, ``(system, messages)`` for
    Anthropic and Bedrock, ``(system_instruction, contents)`` for Gemini. ``options`` go to
    the writer (``include_reasoning=True`` for OpenAI Chat, ``binary=True`` for Bedrock)."""
    writer = _WRITERS.get(provider)
    if writer is None:
        raise ValueError(f"no wire format for provider {provider!r}: one of {', '.join(_WRITERS)}")
    return writer(messages, **options)
