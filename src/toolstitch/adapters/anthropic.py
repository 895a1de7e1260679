"""Anthropic Messages streams → events.

What arrives: ``message_start``; per content block ``content_block_start`` (a ``text``,
``thinking``, ``tool_use``, ``server_tool_use`` … block, keyed by its ``index``), deltas
(``text_delta``, ``thinking_delta``, ``input_json_delta`` with ``partial_json``, …) and
``content_block_stop``; ``message_delta`` with the ``stop_reason`` and usage;
``message_stop``; ``ping``; and possibly ``error``.

A ``tool_use`` block is one call whose index is the block index. ``content_block_stop`` is
an explicit end, so the call is resolved there (``Assembler.end``): ready, or discarded
(e.g. truncated). A block whose only ``partial_json`` is empty takes the block's start
``input`` (``{}``). ``server_tool_use`` / ``mcp_tool_use`` blocks are run by Anthropic: they
are assembled apart and reported as ``ServerToolCall`` events, never as calls to dispatch.
An ``error`` event becomes a ``StreamFailed`` with a ``ProviderError``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolstitch.core.assembler import Assembler
from toolstitch.core.deltas import Delta
from toolstitch.vocab.call_events import CallDiscarded, CallReady, Event
from toolstitch.vocab.errors import ProviderQuirk
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningDelta,
    ServerToolCall,
    StreamWarning,
    TextDelta,
    Usage,
)

from ._base import Adapter, mapping, provider_error, quirk_warning

__all__ = ["AnthropicAdapter"]

#: Block types that Anthropic executes itself.
SERVER_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})
CLIENT_BLOCKS = frozenset({"tool_use"})


class _Block:
    __slots__ = ("core", "events", "id", "input", "kind", "name", "streamed")

    def __init__(self, kind: str, block_id: str | None, name: str | None, start: object) -> None:
        self.kind = kind
        self.id = block_id
        self.name = name
        self.input = start
        self.streamed = False  # a non-empty partial_json arrived
        self.events: list[Event] = []  # a server block's events, reported at its end
        self.core = 0  # the call's index in the assembler (the block index when usable)


class AnthropicAdapter(Adapter):
    """Adapter for Anthropic Messages streams (``provider="anthropic"``)."""

    name = "anthropic"

    def __init__(self, assembler: Assembler, *, choice: int = 0) -> None:
        super().__init__(assembler, choice=choice)
        # Server tool calls get an assembler of their own: validated like client calls,
        # but their events never reach the caller as calls.
        self.server = Assembler(limits=assembler.limits)
        self._blocks: dict[int, _Block] = {}
        self._cores: set[int] = set()  # call indices given out

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Event]:
        kind = payload.get("type") or event
        out: list[Event] = []
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

    def _start(self, payload: Mapping[str, Any], out: list[Event]) -> None:
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
            block_id = block.get("id") if isinstance(block.get("id"), str) else None
            name = block.get("name") if isinstance(block.get("name"), str) else None
            state = _Block(kind, block_id, name, block.get("input"))
            # A negative block index cannot be a call index: the call gets the next free one.
            state.core = index if index >= 0 else max(self._cores, default=-1) + 1
            self._cores.add(state.core)
            self._blocks[index] = state
            target = self.assembler if kind in CLIENT_BLOCKS else self.server
            events = target.feed(Delta(index=state.core, id=block_id or None, name=name or None))
            if index < 0:
                events.append(
                    quirk_warning(
                        "quirk-index-negative",
                        f"the block's index {index} was replaced by {state.core}",
                        index=state.core,
                        call_id=block_id,
                        name=name,
                    )
                )
            if kind in CLIENT_BLOCKS:
                out.extend(events)
            else:
                state.events.extend(events)
        elif kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                out.append(TextDelta(text=text))
        elif kind == "thinking":
            text = block.get("thinking")
            if isinstance(text, str) and text:
                out.append(ReasoningDelta(text=text))

    def _delta(self, payload: Mapping[str, Any], out: list[Event]) -> None:
        delta = mapping(payload.get("delta"))
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
                out.extend(self.assembler.feed_arguments(state.core, fragment))
            else:
                state.events.extend(self.server.feed_arguments(state.core, fragment))
        elif kind == "thinking_delta":
            text = delta.get("thinking")
            if isinstance(text, str) and text:
                out.append(ReasoningDelta(text=text))

    def _stop(self, payload: Mapping[str, Any], out: list[Event]) -> None:
        index = payload.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            return
        state = self._blocks.get(index)
        if state is None:
            return
        client = state.kind in CLIENT_BLOCKS
        target = self.assembler if client else self.server
        events: list[Event] = state.events
        state.events = []
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
            events.extend(target.feed(Delta(index=state.core, arguments=text)))
        events.extend(target.end(state.core))
        if client:
            out.extend(events)
            if note is not None:
                out.append(note)
        else:
            out.extend(self._server_calls(events, state))

    def _server_calls(self, events: list[Event], state: _Block) -> list[Event]:
        found: list[Event] = []
        for event in events:
            if isinstance(event, CallReady):
                call = event.call
                found.append(
                    ServerToolCall(
                        index=call.index,
                        id=state.id,
                        name=call.name,
                        type=state.kind,
                        arguments=call.arguments,
                        parsed_arguments=call.parsed_arguments,
                    )
                )
            elif isinstance(event, CallDiscarded):
                found.append(
                    ServerToolCall(
                        index=event.index,
                        id=state.id,
                        name=event.name,
                        type=state.kind,
                        arguments=event.arguments,
                        error=event.error,
                    )
                )
        return found

    def close(self) -> list[Event]:
        out: list[Event] = self.assembler.finish()
        for _, state in sorted(self._blocks.items()):
            if state.kind in SERVER_BLOCKS:
                events = state.events + self.server.end(state.core)
                state.events = []
                out.extend(self._server_calls(events, state))
        return out
