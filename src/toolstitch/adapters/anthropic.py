"""Anthropic Messages streams → items.

What arrives: ``message_start``; per content block ``content_block_start`` (a ``text``,
``thinking``, ``redacted_thinking``, ``tool_use``, ``server_tool_use`` … block, keyed by its
``index``), deltas (``text_delta``, ``thinking_delta``, ``signature_delta``,
``input_json_delta`` with ``partial_json``, ``citations_delta``) and ``content_block_stop``;
``message_delta`` with the ``stop_reason`` and usage; ``message_stop``; ``ping``; and
possibly ``error``.

A ``tool_use`` block is one call whose index is the block index. ``content_block_stop`` is
an explicit end, so the call is resolved there (``EndCall``): ready, or discarded (e.g.
truncated). A block whose only ``partial_json`` is empty takes the block's start ``input``
(``{}``). A ``caller`` on the block (programmatic tool calling) goes to the call with a
``CallNote`` right after its start. ``server_tool_use`` / ``mcp_tool_use`` blocks are run by
Anthropic: their deltas are marked ``ServerDelta`` and their end ``ServerEnd``, so that the
``Stitcher`` assembles them apart and reports them as ``ServerToolCall`` events, never as
calls to dispatch. An ``error`` event becomes a ``StreamFailed`` with a ``ProviderError``.

Reasoning: a ``thinking`` block's text (``ReasoningDelta`` as it streams) and its
``signature`` (``signature_delta``) are collected, bounded by
``Limits.max_reasoning_chars``, and reported at its ``content_block_stop`` as one
``ReasoningBlock(kind="thinking")``; a ``redacted_thinking`` block's ``data`` as
``ReasoningBlock(signature=data, redacted=True, kind="redacted_thinking")``.

Several messages in one stream (programmatic tool calling): each ``message_start`` starts
fresh block keying. A block index that already names a call of an earlier message gets the
next free call index (``quirk-index-reused``), so every message's calls are calls of their
own. Finished ``tool_use`` / ``server_tool_use`` blocks inside ``message_start``'s
``message.content`` (no content-block events follow for them) are calls ready at once
(``quirk-call-in-message-start``).

The ``anthropic`` SDK's ``MessageStream`` adds helper events to the raw ones (``text``,
``input_json``, ``thinking``, ``signature``, ``citation``; ``content_block_stop`` and
``message_stop`` carrying snapshots): the helpers only repeat raw events and are skipped;
the snapshots are ignored. Any other event type, and any unknown delta type, leaves a
``StreamWarning`` (``quirk-unknown-event``, once per type).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import (
    Arguments,
    CallNote,
    EndCall,
    Finish,
    Item,
    ServerDelta,
    ServerEnd,
    arguments,
)
from toolstitch.core.record import CallRecords
from toolstitch.vocab.call_events import CallState
from toolstitch.vocab.native import extension
from toolstitch.vocab.stream_events import (
    ReasoningBlock,
)

from ._base import (
    Adapter,
    BoundedText,
    Fragments,
    UnknownKinds,
    finish_event,
    mapping,
    provider_error,
    quirk_warning,
    reasoning_delta,
    stream_quirk,
    text_delta,
    usage_event,
)

__all__ = ["CODES", "KNOWN_EVENTS", "MESSAGE_EVENTS", "SDK_HELPER_EVENTS", "AnthropicAdapter"]

#: The ``quirk-…`` codes only this adapter emits (it also uses ``quirk-index-invalid``,
#: ``quirk-index-negative`` and ``quirk-index-reused``, declared with the OpenAI-Chat codes,
#: and ``quirk-unknown-event``, declared with the Responses codes).
CODES: Final[dict[str, str]] = {
    "quirk-input-at-block-start": "a tool block carried its input at content_block_start and "
    "streamed none",
    "quirk-call-in-message-start": "a finished tool block came inside message_start's "
    "message.content, with no content-block events: a call ready at once",
}

#: Event types only the Messages stream protocol has (what detection knows it by).
MESSAGE_EVENTS: Final = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
    }
)
#: Every event type of the protocol (``error`` is shared with other providers).
KNOWN_EVENTS: Final = MESSAGE_EVENTS | {"error"}
#: The event types that carry nothing the adapter reads (``message_stop``'s SDK snapshot is
#: ignored): no items, whatever they hold.
SILENT_EVENTS: Final = frozenset({"message_stop", "ping"})
#: Helper events the ``anthropic`` SDK's ``MessageStream`` yields besides the raw events,
#: each repeating a raw delta (or a snapshot of them): skipped.
SDK_HELPER_EVENTS: Final = frozenset({"text", "input_json", "thinking", "signature", "citation"})
#: Delta types of ``content_block_delta``.
KNOWN_DELTAS: Final = frozenset(
    {"text_delta", "input_json_delta", "thinking_delta", "signature_delta", "citations_delta"}
)

#: Block types that Anthropic executes itself.
SERVER_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})
CLIENT_BLOCKS: Final = frozenset({"tool_use"})
#: A block's delta event, the delta type of a tool block's arguments and the key of its text.
DELTA_EVENT: Final = "content_block_delta"
#: A block's end.
STOP_EVENT: Final = "content_block_stop"
#: A block's start, and the message's end (its stop reason and usage).
START_EVENT: Final = "content_block_start"
FINISH_EVENT: Final = "message_delta"
#: A message's start (its usage; ``content`` whole blocks, in programmatic tool calling).
MESSAGE_EVENT: Final = "message_start"
ARGUMENTS_DELTA: Final = "input_json_delta"
ARGUMENTS_KEY: Final = "partial_json"
REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking"})


#: The end of the response, as ``close`` gives it (frozen: one is enough).
_FINISH: Final = Finish()


class _Block:
    __slots__ = ("client", "core", "id", "input", "kind", "name", "streamed")

    def __init__(self, kind: str, block_id: str | None, name: str | None, start: object) -> None:
        self.kind = kind
        self.client = kind in CLIENT_BLOCKS  # a call the client runs, not a server tool
        self.id = block_id
        self.name = name
        self.input = start
        self.streamed = False  # a non-empty partial_json arrived
        self.core = 0  # the call's index in the core (the block index when usable)


class _Thinking:
    """A reasoning block being collected: its text and its signature, each bounded."""

    __slots__ = ("kind", "signature", "text")

    def __init__(self, kind: str, bound: int, text: str, signature: str) -> None:
        self.kind = kind
        self.text = BoundedText(bound, text)
        self.signature = BoundedText(bound, signature)

    def block(self) -> ReasoningBlock:
        signature = self.signature.text()
        if self.kind == "redacted_thinking":
            return ReasoningBlock(signature=signature, redacted=True, kind=self.kind)
        return ReasoningBlock(text=self.text.text(), signature=signature or None, kind=self.kind)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class AnthropicAdapter(Adapter):
    """Adapter for Anthropic Messages streams (``provider="anthropic"``)."""

    # Slots, which the C forms of ``_fragment`` and of a plain tool block's start read through
    # their descriptors (the rest of the adapter's state stays in its ``__dict__``).
    __slots__ = ("_blocks", "_cores", "_ids", "_messages", "_thinking")
    name = "anthropic"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self._blocks: dict[int, _Block] = {}  # tool blocks of the current message
        self._thinking: dict[int, _Thinking] = {}  # reasoning blocks still open
        self._servers: list[_Block] = []  # server blocks of earlier messages, for close()
        self._cores: set[int] = set()  # call indices given out
        self._messages = 0  # message_start events seen
        # Unknown event / delta types, reported once each; made when the first one comes.
        self._unknown: UnknownKinds | None = None
        self._server_blocks = False  # a server tool block has started (close ends them)
        self._ids: set[str] = set()  # ids of the tool blocks seen (at most max_calls)

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        fragment = self._fragment(payload)
        if fragment:
            return [arguments(*fragment)]
        # Declined, or quiet (``()``): read as any event, for the wrapper rule to see the end.
        return self._feed_declined(payload, event)

    def _feed_declined(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        kind = payload.get("type") or event
        out: list[Item] = []
        if kind == DELTA_EVENT:
            self._delta(payload, out)
        elif kind == START_EVENT:
            self._start(payload, out)
        elif kind == STOP_EVENT:
            self._stop(payload, out)
        elif kind == FINISH_EVENT:
            delta = mapping(payload.get("delta"))
            reason = delta.get("stop_reason")
            if isinstance(reason, str) and reason:
                out.append(finish_event(reason))
            usage = mapping(payload.get("usage"))
            if usage:
                out.append(usage_event(dict(usage)))
        elif kind == MESSAGE_EVENT:
            self._message_start(mapping(payload.get("message")), out)
        elif kind == "error" or event == "error":
            out.append(provider_error(payload.get("error", payload)))
        elif not isinstance(kind, str) or (
            kind not in KNOWN_EVENTS and kind not in SDK_HELPER_EVENTS
        ):
            self._unknown_type("event", kind, out)
        return out

    def _fragment(self, payload: Mapping[str, Any]) -> tuple[int, str] | tuple[()] | None:
        """The commonest events, cheaply. A ``content_block_delta`` whose ``input_json_delta``
        continues a ``tool_use`` block with text, in plain dicts, as ``(core index,
        fragment)`` (the ``Arguments`` it stands for, without building one); a quiet event
        (``_quiet``) as ``()``, meaning "no items". ``None``, having done nothing, for
        anything else, an empty fragment included (``_delta`` reads it then).
        ``_native_fragment`` is its C form (docs/native.md, "The event fast path")."""
        kind = payload.get("type")
        if kind != DELTA_EVENT:
            return () if self._quiet(kind, payload) else None
        delta = payload.get("delta")
        if type(delta) is not dict or delta.get("type") != ARGUMENTS_DELTA:
            return None
        index = payload.get("index")
        state = self._blocks.get(index) if type(index) is int else None
        if state is None or not state.client:
            return None
        fragment = delta.get(ARGUMENTS_KEY)
        if type(fragment) is not str or not fragment:
            return None  # ``_json_fragment`` decides what an empty or odd one means
        state.streamed = True
        return state.core, fragment

    def _quiet(self, kind: object, payload: Mapping[str, Any]) -> bool:
        """Whether an event of type ``kind`` gives no items and changes nothing: a silent
        event (``SILENT_EVENTS``), or the ``content_block_stop`` of a ``tool_use`` block that
        streamed its input and whose call has already ended in the core (its ``EndCall``
        would resolve nothing). Reads only; ``False`` whenever ``_feed`` must decide."""
        if type(kind) is not str:
            return False
        if kind in SILENT_EVENTS:
            return True
        if kind != STOP_EVENT:
            return False
        index = payload.get("index")
        if type(index) is not int or index in self._thinking:
            return False
        state = self._blocks.get(index)
        if state is None or state.client is not True or state.streamed is not True:
            return False
        record = self.records.record(state.core)
        return record is not None and record.state.is_final

    def _native_fragment(self) -> Fragments | None:
        if _READER is None:
            return None
        reader: Fragments = _READER.bind(self, self._fragment)
        return reader

    @staticmethod
    def _json_fragment(state: _Block, fragment: object) -> Arguments | None:
        """A client block's ``partial_json``, as its ``Arguments``; ``None`` for an empty or
        non-text one, which is ignored."""
        if not isinstance(fragment, str) or not fragment:
            return None
        state.streamed = True
        return arguments(state.core, fragment)

    def _unknown_type(self, what: str, kind: object, out: list[Item]) -> None:
        if self._unknown is None:
            self._unknown = UnknownKinds()
        self._unknown.report(
            f"an Anthropic stream {what} of type",
            kind,
            "is not part of the protocol; it was skipped",
            out,
        )

    # -- messages ---------------------------------------------------------------------------

    def _message_start(self, message: Mapping[str, Any], out: list[Item]) -> None:
        if self._messages:
            # A new message: its blocks are keyed afresh. Reasoning blocks the previous one
            # left open are reported now; its server blocks still end at close at the latest.
            self._flush_thinking(out)
            self._servers.extend(b for b in self._blocks.values() if b.kind in SERVER_BLOCKS)
            self._blocks = {}
        self._messages += 1
        usage = mapping(message.get("usage"))
        if usage:
            out.append(usage_event(dict(usage)))
        content = message.get("content")
        if isinstance(content, list):
            for position, raw in enumerate(content):
                self._finished_block(position, mapping(raw), out)

    def _finished_block(self, position: int, block: Mapping[str, Any], out: list[Item]) -> None:
        """A whole block inside ``message_start.message.content`` (no block events)."""
        kind = block.get("type")
        if kind in CLIENT_BLOCKS or kind in SERVER_BLOCKS:
            assert isinstance(kind, str)
            block_id = _str(block.get("id"))
            if block_id is not None and block_id in self._ids:
                # Already streamed in this response: running it twice would be worse than
                # saying so.
                out.append(
                    stream_quirk(
                        "quirk-call-in-message-start",
                        f"message_start repeats the block {block_id!r}, already seen in this "
                        "stream; the repeat was ignored",
                    )
                )
                return
            self._tool_block(position, kind, block, out)
            state = self._blocks[position]
            if kind in CLIENT_BLOCKS:
                out.append(
                    quirk_warning(
                        "quirk-call-in-message-start",
                        "the call came whole inside message_start's message.content",
                        index=state.core,
                        call_id=state.id,
                        name=state.name,
                    )
                )
            self._stop({"index": position}, out, whole=True)
        elif kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                out.append(text_delta(text))
        elif kind in REASONING_BLOCKS:
            assert isinstance(kind, str)
            thinking = self._open_thinking(kind, block, out)
            text = thinking.text.text()
            if text:
                out.append(reasoning_delta(text))
            out.append(thinking.block())

    # -- blocks -----------------------------------------------------------------------------

    def _start(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        index = payload.get("index")
        block = mapping(payload.get("content_block"))
        kind = block.get("type")
        if not isinstance(kind, str):
            return
        if not isinstance(index, int) or isinstance(index, bool):
            if kind in CLIENT_BLOCKS or kind in SERVER_BLOCKS or kind in REASONING_BLOCKS:
                # Nothing can key this block's deltas: say so rather than lose it silently.
                out.append(
                    stream_quirk(
                        "quirk-index-invalid",
                        f"a {kind} block came with index {index!r}; it was ignored",
                    )
                )
            return
        if kind in CLIENT_BLOCKS or kind in SERVER_BLOCKS:
            self._tool_block(index, kind, block, out)
        elif kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                out.append(text_delta(text))
        elif kind in REASONING_BLOCKS:
            thinking = self._open_thinking(kind, block, out)
            self._thinking[index] = thinking
            text = thinking.text.text()
            if text:
                out.append(reasoning_delta(text))

    def _open_thinking(self, kind: str, block: Mapping[str, Any], out: list[Item]) -> _Thinking:
        text: object = ""
        if kind == "redacted_thinking":
            signature = block.get("data")
        else:
            text, signature = block.get("thinking"), block.get("signature")
        thinking = _Thinking(
            kind,
            self.records.limits.max_reasoning_chars,
            text if isinstance(text, str) else "",
            signature if isinstance(signature, str) else "",
        )
        if thinking.text.cut or thinking.signature.cut:
            self._over_limit("text" if thinking.text.cut else "signature", out)
        return thinking

    def _core_index(self, index: int, state: _Block, out: list[Item]) -> None:
        """The call index of a tool block: its block index unless negative or taken by a
        call of an earlier message (or an earlier block of this one): then the next free."""
        if index >= 0 and index not in self._cores:
            state.core = index
        else:
            state.core = max(self._cores, default=-1) + 1
            if state.client:
                code, why = (
                    ("quirk-index-negative", f"the block's index {index}")
                    if index < 0
                    else ("quirk-index-reused", f"block index {index}, already a call's,")
                )
                out.append(
                    quirk_warning(
                        code,
                        f"{why} was replaced by {state.core}",
                        index=state.core,
                        call_id=state.id,
                        name=state.name,
                    )
                )
        self._cores.add(state.core)

    def _tool_block(self, index: int, kind: str, block: Mapping[str, Any], out: list[Item]) -> None:
        """A ``tool_use`` (or server tool) block starts: a call, keyed by the block index."""
        block_id, name = _str(block.get("id")), _str(block.get("name"))
        if block_id is not None and len(self._ids) < self.records.limits.max_calls:
            self._ids.add(block_id)
        state = _Block(kind, block_id, name, block.get("input"))
        self._blocks[index] = state
        warnings: list[Item] = []
        self._core_index(index, state, warnings)
        if not state.client:
            self._server_blocks = True
            out.append(ServerDelta(Delta(index=state.core, id=block_id, name=name)))
            return
        # The call's start in the wire shape, which the core reads as it reads a ``Delta``
        # (``delta_fields``), for less than a third of the cost.
        out.append({"index": state.core, "id": block_id, "function": {"name": name}})
        caller = block.get("caller")
        if caller is not None and mapping(caller):
            # Programmatic tool calling: who made the call, kept on the ToolCall as sent.
            out.append(CallNote(index=state.core, caller=dict(mapping(caller))))
        out.extend(warnings)

    def _delta(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        delta = payload.get("delta")
        if type(delta) is not dict:  # a plain dict (the common case) skips the conversion
            delta = mapping(delta)
        kind = delta.get("type")
        if kind == ARGUMENTS_DELTA:
            index = payload.get("index")
            state = self._blocks.get(index) if isinstance(index, int) else None
            if state is None:
                return
            if state.client:
                item = self._json_fragment(state, delta.get(ARGUMENTS_KEY))
                if item is not None:
                    out.append(item)
                return
            fragment = delta.get(ARGUMENTS_KEY)
            if isinstance(fragment, str) and fragment:
                state.streamed = True
                out.append(ServerDelta(Delta(index=state.core, arguments=fragment)))
        elif kind == "text_delta":
            text = delta.get("text")
            if isinstance(text, str) and text:
                out.append(text_delta(text))
        elif kind == "thinking_delta" or kind == "signature_delta":
            self._thinking_delta(payload.get("index"), kind, delta, out)
        elif not isinstance(kind, str) or kind not in KNOWN_DELTAS:
            self._unknown_type("delta", kind, out)

    def _thinking_delta(
        self, index: object, kind: str, delta: Mapping[str, Any], out: list[Item]
    ) -> None:
        thinking = self._thinking.get(index) if isinstance(index, int) else None
        if kind == "thinking_delta":
            text = delta.get("thinking")
            if not isinstance(text, str) or not text:
                return
            out.append(reasoning_delta(text))
            if thinking is not None and not thinking.text.add(text):
                self._over_limit("text", out)
            return
        signature = delta.get("signature")
        if (
            thinking is not None
            and isinstance(signature, str)
            and signature
            and not thinking.signature.add(signature)
        ):
            self._over_limit("signature", out)

    def _over_limit(self, what: str, out: list[Item]) -> None:
        bound = self.records.limits.max_reasoning_chars
        out.append(
            stream_quirk(
                "quirk-reasoning-over-limit",
                f"a thinking block's {what} passed max_reasoning_chars ({bound}); its "
                "ReasoningBlock keeps the first characters only and cannot be sent back",
            )
        )

    def _stop(self, payload: Mapping[str, Any], out: list[Item], *, whole: bool = False) -> None:
        """A block ends (``whole``: a finished block of ``message_start``, whose input is
        its arguments by nature, not by quirk)."""
        index = payload.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            return
        thinking = self._thinking.pop(index, None)
        if thinking is not None:
            out.append(thinking.block())
            return
        state = self._blocks.get(index)
        if state is None:
            return
        client = state.client
        note = None
        if not state.streamed:
            start = state.input
            state.streamed = True  # a second stop must not feed the input again
            if isinstance(start, Mapping) and start:
                note = quirk_warning(
                    "quirk-input-at-block-start",
                    "the block streamed no input; its content_block_start input was used",
                    index=state.core,
                    call_id=state.id,
                    name=state.name,
                )
                delta = Delta(index=state.core, arguments=json.dumps(start, ensure_ascii=False))
                out.append(delta if client else ServerDelta(delta))
            # No input at all: the block's stop closes the call, and the core's end rule
            # gives it the empty-arguments object (core.machine.at_end).
        if client:
            out.append(EndCall(state.core))
            if note is not None and not whole:
                out.append(note)
        else:
            out.append(ServerEnd(state.core, state.id, state.kind))

    def _flush_thinking(self, out: list[Item]) -> None:
        if not self._thinking:
            return
        for _, thinking in sorted(self._thinking.items()):
            out.append(thinking.block())
        self._thinking = {}

    def close(self) -> list[Item]:
        out: list[Item] = []
        if self._thinking:
            self._flush_thinking(out)  # reasoning blocks cut off by the end of the stream
        out.append(_FINISH)
        if not self._server_blocks:
            return out
        servers = self._servers + [b for _, b in sorted(self._blocks.items())]
        for state in servers:
            if state.kind in SERVER_BLOCKS:
                # The Stitcher ends each server call once: this matters only if its stop
                # never came (then as the stream's finish reason says: ``ending=None``).
                out.append(ServerEnd(state.core, state.id, state.kind, None))
        return out


#: ``_fragment``'s C form with this module's names, unbound (``_native_fragment`` binds it to
#: an adapter); ``None`` on the pure-Python path.
_READER: Any = (
    None
    if extension is None
    else extension.BlockFragments(
        event_type=DELTA_EVENT,
        delta_type=ARGUMENTS_DELTA,
        text_key=ARGUMENTS_KEY,
        stop_type=STOP_EVENT,
        silent_types=SILENT_EVENTS,
        final_states=tuple(state for state in CallState if state.is_final),
        adapter_type=AnthropicAdapter,
        block_type=_Block,
    )
)
if extension is not None:
    # The native Stitcher reads a plain tool block's start and a message delta in C too, with
    # this module's names and makers (docs/native.md, "The event fast path").
    extension.configure_block_events(
        start_type=START_EVENT,
        finish_type=FINISH_EVENT,
        message_type=MESSAGE_EVENT,
        client_types=CLIENT_BLOCKS,
        finish=finish_event,
        usage=usage_event,
        adapter_type=AnthropicAdapter,
        block_type=_Block,
    )
