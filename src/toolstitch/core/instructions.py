"""What a provider adapter hands the core besides deltas: small instructions, as data.

An adapter's ``feed``/``close`` return *items*: tool-call deltas (a ``Delta``, or a plain
dict in the OpenAI wire shape whose index is already the core index), the instructions
here, and stream events (``TextDelta``, ``FinishReason``, ``CallWarning`` …) to pass on. The
``Stitcher`` applies each delta and instruction to its ``Assembler`` as it comes and passes
the events through, so the adapter never touches the core.

``CallNote`` carries a call's signature and caller to its ``ToolCall`` (``Assembler.note``).
``Arguments`` is ``Delta(index=…, arguments=…)`` for the hot path (``Assembler.feed_arguments``
without building a delta). ``EndCall`` ends one call (Anthropic ``content_block_stop``, a
Responses ``.done``); ``Finish`` ends them all. Both say how (an ``Ending``): what a call
whose arguments never arrived becomes depends on it (``core.machine.at_end``).
``Discard`` discards one call with the error its reader found (a text format's body that is
not the format's: ``Assembler.reject``).
``ServerDelta`` and ``ServerEnd`` are the same for calls the provider runs itself (Anthropic
``server_tool_use``): the ``Stitcher`` assembles them apart and reports each outcome as a
``ServerToolCall``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeAlias

from toolstitch.core.deltas import Delta
from toolstitch.vocab.call_events import Event
from toolstitch.vocab.endings import Ending
from toolstitch.vocab.errors import ToolCallError

__all__ = [
    "Arguments",
    "CallNote",
    "Discard",
    "EndCall",
    "Finish",
    "Item",
    "ServerDelta",
    "ServerEnd",
    "arguments",
]


class Arguments(NamedTuple):
    """One more arguments fragment for core call ``index`` (``Assembler.feed_arguments``).

    A named tuple rather than a dataclass: it is made once per fragment on the hot path, and
    ``arguments(index, fragment)`` builds one for a few tens of nanoseconds."""

    index: int  # type: ignore[assignment]  # shadows tuple.index, as the name should
    fragment: str


_tuple_new = tuple.__new__


def arguments(index: int, fragment: str) -> Arguments:
    """``Arguments(index, fragment)`` without the generated ``__new__`` (the hot path)."""
    return _tuple_new(Arguments, (index, fragment))


@dataclass(frozen=True, slots=True)
class EndCall:
    """Call ``index`` is over (``Assembler.end``): the provider closed it (``ending`` is
    ``Ending.CLOSED``, the default), or the response's end reached it: how the response
    ended when the adapter knows (``Ending.COMPLETE`` or a cut, e.g. ``ending_of`` of the
    finish reason it just read; see ``toolstitch.vocab.endings``), or ``None`` for "as the
    stream's finish reason says" (the ``Stitcher`` knows it at the stream's end)."""

    index: int
    ending: Ending | None = Ending.CLOSED


@dataclass(frozen=True, slots=True)
class Discard:
    """Call ``index`` cannot be a call: discard it with ``error`` (``Assembler.reject``)."""

    index: int
    error: ToolCallError


@dataclass(frozen=True, slots=True, kw_only=True)
class CallNote:
    """What the provider said about call ``index`` besides its deltas, to keep on its
    ``ToolCall`` (``Assembler.note``): its ``signature`` and ``caller``. An adapter hands it
    over before the fragment that closes the call's arguments."""

    index: int
    signature: str | None = None
    caller: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Finish:
    """The response is over: resolve every open call (``Assembler.finish``). ``ending`` is
    how it ended: ``None`` (the default) for "as the stream's finish reason says" (the
    ``Stitcher`` reads the first ``FinishReason`` of the stream with ``ending_of``: no
    reason at all is ``Ending.ABANDONED``), or an ``Ending`` the adapter knows better."""

    ending: Ending | None = None


@dataclass(frozen=True, slots=True)
class ServerDelta:
    """A delta of a call the provider runs itself, for the server-side assembler."""

    delta: Delta


@dataclass(frozen=True, slots=True)
class ServerEnd:
    """Server call ``index`` is over: report its outcome as a ``ServerToolCall`` with this
    ``id`` and ``kind`` (the provider's block type, e.g. ``"server_tool_use"``); ``ending``
    as for ``EndCall``."""

    index: int
    id: str | None
    kind: str
    ending: Ending | None = Ending.CLOSED


#: What adapters return: deltas, instructions and events, in the order they happen.
Item: TypeAlias = (
    Event
    | Delta
    | Mapping[str, Any]
    | Arguments
    | CallNote
    | Discard
    | EndCall
    | Finish
    | ServerDelta
    | ServerEnd
)
