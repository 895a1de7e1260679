"""Anthropic Messages streams → items.

What arrives: ``message_start``; per content block ``content_block_start`` (a ``text``,
``thinking``, ``tool_use``, ``server_tool_use`` … block, keyed by its ``index``), deltas
(``text_delta``, ``thinking_delta``, ``input_json_delta`` with ``partial_json``, …) and
``content_block_stop``; ``message_delta`` with the ``stop_reason`` and usage;
``message_stop``; ``ping``; and possibly ``error``.

A ``tool_use`` block is one call whose index is the block index. ``content_block_stop`` is
an explicit end, so the call is resolved there (``EndCall``): ready, or discarded (e.g.
truncated). A block whose only ``partial_json`` is empty takes the block's start ``input``
(``{}``). ``server_tool_use`` / ``mcp_tool_use`` blocks are run by Anthropic: their deltas
are marked ``ServerDelta`` and their end ``ServerEnd``, so that the ``Stitcher`` assembles
them apart and reports them as ``ServerToolCall`` events, never as calls to dispatch. An
``error`` event becomes a ``StreamFailed`` with a ``ProviderError``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import EndCall, Finish, Item, ServerDelta, ServerEnd, arguments
from toolstitch.core.record import CallRecords
from toolstitch.vocab.errors import ProviderQuirk
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningDelta,
    StreamWarning,
    TextDelta,
    Usage,
)

from ._base import Adapter, mapping, provider_error, quirk_warning

__all__ = ["CODES", "AnthropicAdapter"]

#: The ``quirk-…`` codes only this adapter emits (it also uses ``quirk-index-invalid`` and
#: ``quirk-index-negative``, declared with the OpenAI-Chat codes).
CODES: Final[dict[str, str]] = {
    "quirk-input-at-block-start": "a tool block carried its input at content_block_start and "
    "streamed none",
}

#: Block types that Anthropic executes itself.
SERVER_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})
CLIENT_BLOCKS = frozenset({"tool_use"})


class _Block:
    __slots__ = ("core", "id", "input", "kind", "name", "streamed")

    def __init__(self, kind: str, block_id: str | None, name: str | None, start: object) -> None:
        self.kind = kind
        self.id = block_id
        self.name = name
        self.input = start
        self.streamed = False  # a non-empty partial_json arrived
        self.core = 0  # the call's index in the core (the block index when usable)


class AnthropicAdapter(Adapter):
    """Adapter for Anthropic Messages streams (``provider="anthropic"``)."""

    name = "anthropic"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self._blocks: dict[int, _Block] = {}
        self._cores: set[int] = set()  # call indices given out

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        kind = payload.get("type") or event
        out: list[Item] = []
        if kind == "content_block_delta":
            self._delta(payload, out)
        elif kind == "content_block_start":
            self._start(payload, out)
        elif kind == "content_block_stop":
            self._stop(payload, out)
        elif kind == "message_delta":
            delta = mapping(payload.get("delta"))
            reason = delta.get("stop_reason")
            if isinstance(reason, str) and reason:
                out.append(FinishReason(reason=reason))
            usage = mapping(payload.get("usage"))
            if usage:
                out.append(Usage(usage=dict(usage)))
        elif kind == "message_start":
            usage = mapping(mapping(payload.get("message")).get("usage"))
            if usage:
                out.append(Usage(usage=dict(usage)))
        elif kind == "error" or event == "error":
            out.append(provider_error(payload.get("error", payload)))
        return out

    def _start(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        index = payload.get("index")
        block = mapping(payload.get("content_block"))
        kind = block.get("type")
        if not isinstance(kind, str):
            return
        if not isinstance(index, int) or isinstance(index, bool):
            if kind in CLIENT_BLOCKS or kind in SERVER_BLOCKS:
                # Nothing can key this block's deltas: say so rather than lose it silently.
                out.append(
                    StreamWarning(
                        error=ProviderQuirk(
                            "quirk-index-invalid",
                            f"a {kind} block came with index {index!r}; it was ignored",
                        )
                    )
                )
            return
        if kind in CLIENT_BLOCKS or kind in SERVER_BLOCKS:
            self._tool_block(index, kind, block, out)
        elif kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                out.append(TextDelta(text=text))
        elif kind == "thinking":
            text = block.get("thinking")
            if isinstance(text, str) and text:
                out.append(ReasoningDelta(text=text))

    def _tool_block(self, index: int, kind: str, block: Mapping[str, Any], out: list[Item]) -> None:
        """A ``tool_use`` (or server tool) block starts: a call, keyed by the block index."""
        block_id = block.get("id") if isinstance(block.get("id"), str) else None
        name = block.get("name") if isinstance(block.get("name"), str) else None
        state = _Block(kind, block_id, name, block.get("input"))
        # A negative block index cannot be a call index: the call gets the next free one.
        state.core = index if index >= 0 else max(self._cores, default=-1) + 1
        self._cores.add(state.core)
        self._blocks[index] = state
        delta = Delta(index=state.core, id=block_id or None, name=name or None)
        if kind not in CLIENT_BLOCKS:
            out.append(ServerDelta(delta))
            return
        out.append(delta)
        if index < 0:
            out.append(
                quirk_warning(
                    "quirk-index-negative",
                    f"the block's index {index} was replaced by {state.core}",
                    index=state.core,
                    call_id=block_id,
                    name=name,
                )
            )

    def _delta(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        delta = payload.get("delta")
        if type(delta) is not dict:  # a plain dict (the common case) skips the conversion
            delta = mapping(delta)
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            if isinstance(text, str) and text:
                out.append(TextDelta(text=text))
        elif kind == "input_json_delta":
            index = payload.get("index")
            state = self._blocks.get(index) if isinstance(index, int) else None
            fragment = delta.get("partial_json")
            if state is None or not isinstance(fragment, str) or not fragment:
                return
            state.streamed = True
            if state.kind in CLIENT_BLOCKS:
                out.append(arguments(state.core, fragment))
            else:
                out.append(ServerDelta(Delta(index=state.core, arguments=fragment)))
        elif kind == "thinking_delta":
            text = delta.get("thinking")
            if isinstance(text, str) and text:
                out.append(ReasoningDelta(text=text))

    def _stop(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        index = payload.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            return
        state = self._blocks.get(index)
        if state is None:
            return
        client = state.kind in CLIENT_BLOCKS
        note = None
        if not state.streamed:
            start = state.input if state.input is not None else {}
            text = json.dumps(start, ensure_ascii=False) if isinstance(start, Mapping) else "{}"
            if isinstance(start, Mapping) and start:
                note = quirk_warning(
                    "quirk-input-at-block-start",
                    "the block streamed no input; its content_block_start input was used",
                    index=state.core,
                    call_id=state.id,
                    name=state.name,
                )
            delta = Delta(index=state.core, arguments=text)
            out.append(delta if client else ServerDelta(delta))
        if client:
            out.append(EndCall(state.core))
            if note is not None:
                out.append(note)
        else:
            out.append(ServerEnd(state.core, state.id, state.kind))

    def close(self) -> list[Item]:
        out: list[Item] = [Finish()]
        for _, state in sorted(self._blocks.items()):
            if state.kind in SERVER_BLOCKS:
                # The Stitcher ends each server call once: this matters only if its stop
                # never came.
                out.append(ServerEnd(state.core, state.id, state.kind))
        return out
