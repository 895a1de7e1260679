"""Turn a discarded call into a tool-error reply the model can act on.

A call that toolstitch discards (malformed or truncated arguments, no name, a passed limit)
must still be answered in most tool-calling protocols: the assistant message that carried
it is part of the conversation, and every call in it needs a tool result with its id.
Sending the call's raw text back would put invalid JSON in front of the provider, which
many APIs reject. ``tool_error_reply`` builds the pieces to send instead: the call with
``{}`` as its arguments, and a tool message that tells the model what went wrong, where,
and what to do::

    for event in assembler.feed(delta):
        if isinstance(event, CallDiscarded):
            assistant_entry, tool_message = tool_error_reply(event).to_openai()

Pure functions and frozen values: nothing here does I/O or keeps state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from toolstitch.core.ids import generated_id
from toolstitch.vocab.call_events import CallDiscarded
from toolstitch.vocab.errors import (
    LimitExceeded,
    MalformedArguments,
    MissingName,
    ToolCallError,
    TruncatedArguments,
)

__all__ = [
    "SAFE_ARGUMENTS",
    "UNKNOWN_TOOL_NAME",
    "ToolErrorReply",
    "accepted_name",
    "tool_error_reply",
]

#: The arguments sent back for a discarded call: the one JSON object every API accepts.
SAFE_ARGUMENTS: Final = "{}"
#: The name sent back when the call had none, or one that no provider accepts.
UNKNOWN_TOOL_NAME: Final = "unknown_tool"

# The tool names OpenAI, Anthropic and Gemini all accept.
_SAFE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MAX_CONTENT = 2000


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolErrorReply:
    """What to send back for one discarded call.

    ``call_id`` is the call's own id, else the caller's ``fallback_id``, else a generated
    ``f"{GENERATED_ID_PREFIX}{index}"`` (the same scheme the assembler uses for complete
    calls without id, so it is deterministic and unique within one response). ``name`` is
    the call's name when every major provider accepts it (``[A-Za-z0-9_-]{1,64}``), else
    ``UNKNOWN_TOOL_NAME``; the name as received is quoted in ``content``.
    ``safe_arguments`` is always ``"{}"``. ``content`` is the message for the model: what
    went wrong (``code``), where (offset, line, column and a caret snippet for malformed
    JSON) and what to do.
    """

    index: int
    call_id: str
    name: str
    code: str
    content: str
    safe_arguments: str = SAFE_ARGUMENTS

    @property
    def id(self) -> str:
        """``call_id``: so that a reply is call-like (``id`` and ``name``), e.g. for
        ``toolstitch.messages.tool_error(reply, reply.content)``."""
        return self.call_id

    def to_openai(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The OpenAI Chat Completions pair: the assistant's ``tool_calls`` entry (with the
        safe arguments) and the ``{"role": "tool", ...}`` message answering it."""
        entry = {
            "id": self.call_id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.safe_arguments},
        }
        message = {"role": "tool", "tool_call_id": self.call_id, "content": self.content}
        return entry, message

    def to_anthropic(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The Anthropic Messages pair: the assistant's ``tool_use`` block (with an empty
        input) and the user's ``tool_result`` block, marked ``is_error``."""
        block = {"type": "tool_use", "id": self.call_id, "name": self.name, "input": {}}
        result = {
            "type": "tool_result",
            "tool_use_id": self.call_id,
            "content": self.content,
            "is_error": True,
        }
        return block, result


def _quoted(value: str, width: int = 64) -> str:
    return repr(value if len(value) <= width else value[:width] + "…")


def _explain(error: ToolCallError, received: int) -> str:
    if isinstance(error, MalformedArguments):
        return (
            f"its arguments are not valid JSON: at line {error.line}, column {error.column} "
            f"(character {error.offset}) expected {error.expected}.\n"
            f"{error.snippet}\n"
            "Call the tool again with arguments that are exactly one JSON object "
            "(double-quoted keys and strings, no comments, no trailing commas, no NaN)."
        )
    if isinstance(error, TruncatedArguments):
        return (
            f"its arguments ended before the JSON object closed ({received} characters "
            "received); the output was probably cut off. Call the tool again with complete "
            "arguments (shorter ones if they were long)."
        )
    if isinstance(error, MissingName):
        return "it had no function name. Call the tool again and name the function."
    if isinstance(error, LimitExceeded):
        return (
            f"it passed the limit {error.limit} ({error.value}). Call the tool again with a "
            "smaller call (shorter arguments, shallower nesting, fewer calls at once)."
        )
    return f"{error}. Call the tool again with valid arguments."


def accepted_name(name: str) -> str:
    """``name`` if every provider accepts it as a tool name (``^[A-Za-z0-9_-]{1,64}$``),
    else ``UNKNOWN_TOOL_NAME``: the one rule for what a name sent back may be."""
    return name if _SAFE_NAME.fullmatch(name) else UNKNOWN_TOOL_NAME


def tool_error_reply(event: CallDiscarded, *, fallback_id: str | None = None) -> ToolErrorReply:
    """The reply to send for the discarded call ``event`` (see ``ToolErrorReply``).

    ``fallback_id`` is used when the call never received an id (pass the id your provider
    expects, if it assigned one some other way; with an ``id_factory``, pass
    ``stitcher.assembler.generated_id(event.index)``, the id the factory gives that call, as
    ``ToolRunner`` does); without it the id is generated. Raises
    ``TypeError`` if ``event`` is not a ``CallDiscarded``.
    """
    if not isinstance(event, CallDiscarded):
        raise TypeError(f"tool_error_reply needs a CallDiscarded, got {type(event).__name__}")
    if fallback_id is not None and (not isinstance(fallback_id, str) or not fallback_id):
        raise ValueError("fallback_id must be a non-empty str or None")
    call_id = event.id or fallback_id or generated_id(event.index, ())
    received_name = event.name or ""
    name = accepted_name(received_name)
    error = event.error
    called = f"tool {received_name!r}" if name == received_name else "tool"
    if received_name and name != received_name:
        called = f"tool named {_quoted(received_name)} (not a valid tool name)"
    head = f"Error [{error.code}]: the call to {called} (id {call_id}) was not run, because "
    content = head + _explain(error, len(event.arguments))
    if len(content) > _MAX_CONTENT:
        content = content[: _MAX_CONTENT - 1] + "…"
    return ToolErrorReply(
        index=event.index,
        call_id=call_id,
        name=name,
        code=error.code,
        content=content,
    )
