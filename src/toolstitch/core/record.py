"""The read-only view of the core's record of each call, for the stages above the core.

The assembler keeps one record per call index (id, name, state, the arguments text and the
tokenizer that validates it). Adapters that must know what the core already holds - the
OpenAI-Chat quirk layer (has this call's object closed? is this fragment a re-send of the
text so far?), the Responses adapter (do the ``.done`` arguments match the deltas?) - read
it through these two protocols instead of keeping a mirror of their own. ``Assembler``
implements ``CallRecords``; nothing here can change a record.
"""

from __future__ import annotations

from typing import Protocol

from toolstitch.vocab.call_events import CallState, ToolCall
from toolstitch.vocab.limits import Limits

__all__ = ["CallRecord", "CallRecords"]


class CallRecord(Protocol):
    """One call as the core holds it now. Read it; never keep it past the next feed."""

    @property
    def index(self) -> int:
        """The call's index in the core."""
        ...

    @property
    def id(self) -> str | None:
        """The call's id (``None`` until one arrived or was generated)."""
        ...

    @property
    def name(self) -> str:
        """The name received so far (``""`` if none)."""
        ...

    @property
    def state(self) -> CallState:
        """Where the call is in its life."""
        ...

    @property
    def closed(self) -> bool:
        """Whether the arguments object has closed."""
        ...

    @property
    def started(self) -> bool:
        """Whether the arguments text holds anything but whitespace."""
        ...

    @property
    def length(self) -> int:
        """Characters of arguments text kept (0 once the call is discarded)."""
        ...

    @property
    def result(self) -> ToolCall | None:
        """The complete call, once it is ready."""
        ...

    def text(self) -> str:
        """The arguments text kept (``""`` once the call is discarded)."""
        ...

    def close_offset(self, fragment: str) -> int:
        """Where ``fragment``, fed next, would close the arguments object: the offset just
        past its ``}``; -1 if it would not; 0 if the object is already closed. Changes
        nothing."""
        ...


class CallRecords(Protocol):
    """The core's records, read-only (``Assembler`` implements it)."""

    def record(self, index: int) -> CallRecord | None:
        """The record of call ``index``, or ``None`` if the core has none."""
        ...

    def generated_id(self, index: int) -> str:
        """The id the core would give call ``index`` if it ended now without one."""
        ...

    @property
    def limits(self) -> Limits:
        """The bounds the core enforces (adapters bound their own buffers by them too)."""
        ...
