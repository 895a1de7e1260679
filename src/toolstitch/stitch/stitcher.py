"""The entry point: a provider stream in, events and a result out.

Theory of operation
-------------------
``Stitcher`` is the sans-I/O engine. Feed it what you have, in order - the response body's
bytes in any chunking, or the stream's events as dicts or as the official SDK's objects -
and it returns the events each piece caused; ``close()`` ends the stream. Underneath, bytes
go through a stream decoder (``SSEDecoder``; ``JSONArrayDecoder`` when the body starts
with ``[``: Gemini without ``alt=sse``; ``NDJSONDecoder`` when it starts with ``{``: Ollama's
newline-delimited JSON; ``EventStreamDecoder`` when it starts with an AWS event-stream
prelude: Bedrock), each decoded event goes to the provider's adapter
(detected from the first events that only one provider sends, unless named), which returns
items: deltas, instructions (``EndCall``, ``Finish``, and ``ServerDelta``/``ServerEnd`` for
calls the provider runs itself) and stream-level events. The ``Stitcher`` drives: it applies
each delta and instruction to its ``Assembler`` as it comes (server calls to a second one it
owns, whose outcomes become ``ServerToolCall`` events) and passes the events through, in
order. ``result`` is a ``StitchResult`` summarising everything so far.

``stitch`` and ``astitch`` drive a ``Stitcher`` over an iterable (or async iterable)
source and yield the events one by one; their ``result`` is there at the end::

    run = stitch(response.iter_bytes())
    for event in run:
        if isinstance(event, CallReady):
            dispatch(event.call)
    print(run.result.finish_reason)
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeAlias, TypeVar

from toolstitch.adapters import ADAPTERS, PROVIDERS, Adapter, as_mapping, detect, shared_by
from toolstitch.adapters._base import Fragments, provider_error
from toolstitch.adapters.openai_chat import sdk_chunk
from toolstitch.core.assembler import Assembler, _PythonAssembler
from toolstitch.core.ids import IdFactory
from toolstitch.core.instructions import Item
from toolstitch.decode.eventstream import (
    PRELUDE_BYTES,
    EventStreamDecoder,
    EventStreamFrame,
    is_prelude,
)
from toolstitch.decode.jsonarray import JSONArrayDecoder
from toolstitch.decode.ndjson import NDJSONDecoder, NDJSONItem
from toolstitch.decode.sse import SSEDecoder
from toolstitch.json.lexicon import WHITESPACE_BYTES
from toolstitch.messages import AssistantMessage, FunctionCall, Reasoning, TextPart
from toolstitch.stitch.driver import Driver
from toolstitch.stitch.parallel import ParallelWrappers, declared_names, needed
from toolstitch.stitch.pump import PUMP, Pump
from toolstitch.stitch.recovery import tool_error_reply
from toolstitch.stitch.textcalls import TextCalls
from toolstitch.text.bodies import QUIET_PLAIN
from toolstitch.vocab.call_events import (
    ArgumentsDelta,
    CallDiscarded,
    CallReady,
    CallSnapshot,
    CallStarted,
    CallWarning,
    Event,
    ToolCall,
)
from toolstitch.vocab.endings import EMPTY_ARGUMENTS, Ending
from toolstitch.vocab.errors import LimitExceeded, StreamDecodeError, StreamError
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.native import extension, publish
from toolstitch.vocab.stream_events import (
    CustomToolCall,
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    RefusalDelta,
    ServerToolCall,
    StreamFailed,
    StreamWarning,
    TextDelta,
    TextSignature,
    Usage,
)

__all__ = [
    "AsyncStitch",
    "IdFactory",
    "ResultPart",
    "Stitch",
    "StitchResult",
    "Stitcher",
    "astitch",
    "stitch",
]

#: Events buffered while the provider is still unknown; past this, the stream is not one of
#: the known formats.
MAX_UNDETECTED_EVENTS: Final = 64

_BOM = b"\xef\xbb\xbf"

#: How many calls refused past ``Limits.max_calls`` keep their ``CallDiscarded`` in
#: ``StitchResult.discarded``; the rest are counted in ``discarded_omitted``.
MAX_REFUSED_KEPT: Final = 64


#: One part of the assistant turn, in ``StitchResult.parts``.
ResultPart: TypeAlias = ReasoningBlock | TextPart | ToolCall | CallDiscarded


@dataclass(frozen=True, slots=True, kw_only=True)
class StitchResult:
    """What one stream produced.

    ``calls`` are the complete calls in stream order (the order they started); ``discarded``
    the calls that can never be valid, each with its ``error``; ``warnings`` every
    ``CallWarning`` and ``StreamWarning``; ``server_calls`` the calls the provider ran itself
    (never to dispatch); ``stream_error`` the first error of the stream as a whole (an error
    event sent by the provider, or bytes that are not the format); ``text``, ``reasoning``
    and ``refusal`` the concatenated text, reasoning and refusal deltas; ``reasoning_blocks``
    every ``ReasoningBlock`` in stream order; ``finish_reason`` the first finish reason the
    provider gave; ``usage`` the
    provider's usage objects merged in arrival order; ``events`` and ``bytes`` how many
    provider events and bytes were read; ``finished`` whether the stream was closed;
    ``custom_calls`` the Responses custom tool calls (free-text input, never JSON arguments:
    not among ``calls``), in stream order. ``discarded_omitted`` counts the calls refused
    past ``Limits.max_calls`` whose ``CallDiscarded`` is not kept in ``discarded`` (the
    first ``MAX_REFUSED_KEPT`` are; every refused call still ended with its own event).

    ``parts`` is the assistant turn in the order the provider sent it: each reasoning block
    (at its end), each run of text (a ``TextPart``, with the signature that ended it when
    there was one), each call (at its start: its ``ToolCall``, or its ``CallDiscarded``; a
    call still open is left out). ``message()`` makes it the assistant message to send back.
    """

    provider: str | None
    calls: tuple[ToolCall, ...] = ()
    discarded: tuple[CallDiscarded, ...] = ()
    warnings: tuple[CallWarning | StreamWarning, ...] = ()
    server_calls: tuple[ServerToolCall, ...] = ()
    stream_error: StreamError | None = None
    text: str = ""
    reasoning: str = ""
    refusal: str = ""
    reasoning_blocks: tuple[ReasoningBlock, ...] = ()
    parts: tuple[ResultPart, ...] = ()
    finish_reason: str | None = None
    usage: dict[str, Any] | None = field(default=None, hash=False)
    events: int = 0
    bytes: int = 0
    finished: bool = False
    custom_calls: tuple[CustomToolCall, ...] = ()
    discarded_omitted: int = 0

    def message(self) -> AssistantMessage:
        """The assistant turn exactly as the provider needs it back on the next request
        (``toolstitch.messages``; see docs/reasoning.md): in ``parts`` order, each reasoning
        block with its signature, id and summary, the text runs with their signatures, the
        complete calls with theirs, and each discarded call with ``{}`` as its arguments
        (and the id and name ``tool_error_reply`` gives it), so that its error result has a
        call to answer. Server calls are not part of it. Call it once the stream ended."""
        return AssistantMessage(parts=tuple(_message_part(part) for part in self.parts))


def _message_part(part: ResultPart) -> Reasoning | TextPart | FunctionCall:
    if isinstance(part, ToolCall):
        return FunctionCall(
            id=part.id,
            name=part.name,
            arguments=dict(part.parsed_arguments),
            signature=part.signature,
            caller=part.caller,
        )
    if isinstance(part, CallDiscarded):
        reply = tool_error_reply(part)
        return FunctionCall(id=reply.call_id, name=reply.name, signature=part.signature)
    if isinstance(part, ReasoningBlock):
        return Reasoning(
            text=part.text,
            signature=part.signature,
            id=part.id,
            redacted=part.redacted,
            summary=part.summary,
        )
    return part


class _TextRun:
    """Where one run of text sits in the ``Stitcher``'s text pieces, and its signature."""

    __slots__ = ("end", "signature", "start")

    def __init__(self, start: int) -> None:
        self.start = start
        self.end: int | None = None  # None while the run is open
        self.signature: str | None = None


T = TypeVar("T")


def _added(items: Sequence[T], item: T) -> list[T]:
    """``items`` with ``item`` appended: the list itself, or a new list in place of the empty
    tuple a ``Stitcher`` starts its rarely used lists as."""
    if type(items) is list:
        items.append(item)
        return items
    return [*items, item]


def _check_provider(provider: str) -> str:
    if provider != "auto" and provider not in ADAPTERS:
        raise ValueError(
            f"unknown provider {provider!r}: use 'auto' or one of {', '.join(PROVIDERS)}"
        )
    return provider


def _is_error(payload: Mapping[str, Any], event: str | None) -> bool:
    return (
        event == "error"
        or payload.get("type") == "error"
        or (payload.get("error") is not None and len(payload) <= 2)
    )


class _StitcherBody:
    """The sans-I/O engine behind ``stitch``: feed bytes or events, get events back.

    ``provider`` is ``"auto"`` (detect it from the first events) or one of the ids of
    ``toolstitch.adapters.PROVIDERS`` (``"openai-chat"``, ``"anthropic"``,
    ``"bedrock-converse"``, …). ``choice``
    selects the choice (OpenAI Chat) or candidate (Gemini) to follow when the response has
    several. ``limits``, ``empty_arguments``, ``tools``, ``on_schema_violation``,
    ``watch_strings`` and ``partial_arguments`` go to the ``Assembler`` as they are, with the
    same meaning and the same events: with ``tools`` (an OpenAI tools list, Chat or
    Responses, Anthropic tools, Gemini function declarations, or a mapping name → JSON
    Schema) an unknown tool is discarded with ``UnknownTool`` at the delta that made it
    certain and the arguments are checked against the tool's schema as they stream
    (``SchemaViolation``: a discard, or a ``CallWarning`` with ``on_schema_violation="warn"``);
    ``watch_strings`` streams ``ArgumentsValue`` events; ``calls`` then carries
    ``partial_arguments``. See docs/schema.md. ``id_factory(index, position) -> str``, also
    the ``Assembler``'s, makes the ids of calls that arrive without one (see docs/concepts.md).

    ``feed`` takes either bytes (``bytes``, ``bytearray``, ``memoryview``, or ``str`` text)
    or one event (a mapping, or an SDK object with ``model_dump``/``to_dict``), never both
    kinds in one stream. A stream that turns out not to be any known format raises
    ``StreamDecodeError`` (from ``feed`` once that is certain, else from ``close``); after
    the format is known, bad bytes and error events become ``StreamFailed`` events instead.
    """

    #: The assembler this path's stitcher makes (its server calls' and parallel wrappers'
    #: assemblers are of the same class): the native one, or ``_PythonAssembler``.
    _assembler_class: ClassVar[type[Assembler]]

    def __init__(
        self,
        provider: str = "auto",
        *,
        limits: Limits | None = None,
        choice: int = 0,
        empty_arguments: str = EMPTY_ARGUMENTS,
        tools: object = None,
        on_schema_violation: str = "discard",
        watch_strings: Mapping[str, Iterable[str]] | None = None,
        partial_arguments: bool | None = None,
        id_factory: IdFactory | None = None,
        text_format: str | None = None,
        primed_reasoning: bool = False,
    ) -> None:
        self.assembler = self._assembler_class(
            limits=limits,
            empty_arguments=empty_arguments,
            tools=tools,
            on_schema_violation=on_schema_violation,
            watch_strings=watch_strings,
            partial_arguments=partial_arguments,
            id_factory=id_factory,
        )
        self.choice = choice
        _check_provider(provider)
        # With declared tools, an undeclared multi_tool_use.parallel wrapper is expanded
        # into its calls between the adapter and the core (stitch/parallel.py).
        declared = declared_names(tools)
        self._wrappers = (
            ParallelWrappers(self.assembler, declared)
            if declared is not None and needed(declared)
            else None
        )
        self.adapter: Adapter | None = None
        wrappers = self._wrappers
        # The driver applies the items (after the wrapper rule, when there is one); it keeps
        # the stream's cut and, at the end, its finish reason (``close``).
        self._driver = Driver(self.assembler) if wrappers is None else wrappers.driver
        applies: Driver | ParallelWrappers | TextCalls = (
            self._driver if wrappers is None else wrappers
        )
        if text_format is not None:  # the text is read as a format (stitch/textcalls.py)
            applies = self._textcalls = TextCalls(
                text_format,
                applies,
                self._driver,
                self.assembler,
                tools=tools,
                primed_reasoning=primed_reasoning,
            )
        self._drive = applies.drive
        self._events = applies.events
        if provider != "auto":
            self.adapter = self._adapter(provider)
        # The result so far.
        self._order: dict[int, int] = {}
        self._calls: dict[int, ToolCall] = {}
        self._text: list[str] = []
        self._reasoning: list[str] = []
        # The turn's parts in arrival order: reasoning blocks, text runs, call indexes. One
        # entry per block, call or run of text between them: no larger than what the result
        # holds anyway.
        self._parts: list[ReasoningBlock | _TextRun | int] = []

    # The state that starts as a constant is read from the class until it first changes
    # (an instance attribute then): a new Stitcher sets only what it must.

    #: Provider events read so far (SSE messages, JSON array elements, NDJSON lines or fed
    #: objects).
    events_read: int = 0
    #: Bytes fed so far (0 when fed events).
    bytes_read: int = 0
    _mode: str | None = None  # "bytes" or "events"
    _head = b""  # leading bytes kept until the framing is known
    _sse: SSEDecoder | None = None
    _array: JSONArrayDecoder | None = None
    _frames: EventStreamDecoder | None = None
    _ndjson: NDJSONDecoder | None = None
    _dead = False  # a decoder failed: later bytes are ignored
    _closed = False
    _verified = False  # a named provider was confirmed by the events
    #: The adapter's reader of a plain dict, once nothing but reading is left to do (its
    #: ``_feed``, or with ``_fragment`` its ``_feed_declined``: the events ``_fragment`` declined).
    _direct: Callable[[Mapping[str, Any], str | None], Iterable[Item]] | None = None
    #: The adapter's ``_fragment``, with ``_direct`` (and no wrapper rule to apply).
    _fragment: Fragments | None = None
    #: The core index of the open call while any piece of its body's steady lane is all its
    #: arguments (``TextReader.steady``), and that lane as data (``bodies.Steady``: the ASCII
    #: characters that end it, ``_lane_stops``; ``_lane_escapes``; ``_lane_raw``): the C
    #: ``feed`` takes such a piece itself (the text lane), counting its characters in
    #: ``_lane_chars``, and in ``_lane_escape`` whether the last one began an escape, for the
    #: reader (``_lane_sync``).
    _text_lane: int | None = None
    _lane_stops: bytes = b""
    _lane_escapes: bool = False
    _lane_raw: bool = False
    _lane_newlines: bool = False
    _lane_trim: bool = False
    _lane_decodes: bytes = b""
    _lane_chars: int = 0
    _lane_escape: bool = False
    #: What went by the lane besides its characters: line breaks, the characters after the
    #: last of them, and a last line break held back (``Steady.trim``).
    _lane_lines: int = 0
    _lane_tail: int = 0
    _lane_newline: bool = False
    #: What pieces of the model's text would give nothing now (``TextReader.quiet``, a
    #: ``bodies.Quiet``), as data for the C quiet lane: ``_quiet_markers`` (``None``: no
    #: lane), ``_quiet_tail`` (what may still become a marker), ``_quiet_plain`` (0 none, 1
    #: any, 2 whitespace), ``_quiet_stops`` and ``_quiet_room``. The C ``feed`` holds such
    #: pieces back in ``_quiet_pending`` (counted as read); the next piece that is not quiet
    #: is read joined to them, and ``close`` reads them first.
    _quiet_markers: tuple[str, ...] | None = None
    _quiet_tail: str = ""
    _quiet_plain: int = 0
    _quiet_stops: str = ""
    _quiet_room: int = 0
    _quiet_pending: str | None = None
    #: Some event meant something: an event other than a ``StreamWarning`` came out of the
    #: stream (``_observe``); the format being detected, or ``[DONE]``, is not enough.
    _understood = False
    _mismatch = False  # ... or contradicted by them
    _stream_error: StreamError | None = None
    _errors = 0
    _refused = 0  # calls refused past max_calls whose CallDiscarded is kept
    _omitted = 0  # ... and those whose CallDiscarded is only counted
    _run: _TextRun | None = None  # the text run still open
    _textcalls: TextCalls | None = None  # with text_format: the text read as that format
    _finish: str | None = None
    _usage: dict[str, Any] | None = None
    # What few streams have: empty until the first one comes (``_added``), so that a new
    # Stitcher makes no list for them.
    _queue: Sequence[tuple[Mapping[str, Any], str | None]] = ()  # events before detection
    _discarded: Sequence[CallDiscarded] = ()
    _warnings: Sequence[CallWarning | StreamWarning] = ()
    _server: Sequence[ServerToolCall] = ()
    _refusal: Sequence[str] = ()
    _blocks: Sequence[ReasoningBlock] = ()
    _custom: Sequence[CustomToolCall] = ()

    # -- public -----------------------------------------------------------------------------

    @property
    def provider(self) -> str | None:
        """The provider id, once named or detected."""
        return None if self.adapter is None else self.adapter.name

    @property
    def calls(self) -> tuple[CallSnapshot, ...]:
        """Snapshots of every client call so far (the assembler's view)."""
        return self.assembler.calls

    @property
    def result(self) -> StitchResult:
        """Everything so far; final once ``close`` has been called."""
        order = self._order
        calls = sorted(self._calls.values(), key=lambda c: order.get(c.index, c.index))
        return StitchResult(
            provider=self.provider,
            calls=tuple(calls),
            discarded=tuple(self._discarded),
            discarded_omitted=self._omitted,
            warnings=tuple(self._warnings),
            server_calls=tuple(self._server),
            stream_error=self._stream_error,
            text="".join(self._text),
            reasoning="".join(self._reasoning),
            refusal="".join(self._refusal),
            reasoning_blocks=tuple(self._blocks),
            parts=self._result_parts(),
            finish_reason=self._finish,
            usage=None if self._usage is None else dict(self._usage),
            events=self.events_read,
            bytes=self.bytes_read,
            finished=self._closed,
            custom_calls=tuple(self._custom),
        )

    def _result_parts(self) -> tuple[ResultPart, ...]:
        discarded = {d.index: d for d in self._discarded}
        out: list[ResultPart] = []
        for part in self._parts:
            if isinstance(part, int):
                call = self._calls.get(part) or discarded.get(part)
                if call is not None:
                    out.append(call)
            elif isinstance(part, _TextRun):
                text = "".join(self._text[part.start : part.end])
                out.append(TextPart(text=text, signature=part.signature))
            else:
                out.append(part)
        return tuple(out)

    def _place(self, part: ReasoningBlock | int) -> None:
        """A reasoning block or a call takes the next place; the text run before it ends."""
        if self._run is not None:
            self._run.end = len(self._text)
            self._run = None
        self._parts.append(part)

    def _signed(self, event: ReasoningBlock | TextSignature) -> None:
        """A reasoning block takes the next place; a text signature ends the text run before
        it (an empty one if there is none)."""
        if isinstance(event, ReasoningBlock):
            self._blocks = _added(self._blocks, event)
            self._place(event)
            return
        run = self._run
        if run is None:
            run = _TextRun(len(self._text))
            self._parts.append(run)
        run.signature = event.signature
        run.end = len(self._text)
        self._run = None

    def feed(self, data: object) -> list[Event]:
        """Take the next piece of the stream (bytes, or one event); return its events."""
        direct = self._direct
        if direct is not None and type(data) is dict:
            # The common case: a dict, in a stream of events whose provider is known and
            # confirmed (``close`` clears ``_direct``), so nothing but reading is left.
            self.events_read += 1
            fragment = self._fragment
            if fragment is not None:
                item = fragment(data)
                if item is not None:  # the adapter's commonest events: straight to the core
                    if not item:
                        return []  # quiet: no items (what ``_observe`` would return)
                    events = self.assembler.feed_arguments(*item)
                    if len(events) == 1 and type(events[0]) is ArgumentsDelta and self._understood:
                        return events  # what ``_observe`` would return, noting nothing
                    return self._observe(events)
            return self._observe(self._events(direct(data, None)))
        textcalls = self._textcalls
        if (
            textcalls is not None
            and type(data) is str
            and self._mode == "text"
            and not self._closed
        ):
            if self._lane_chars:
                self._lane_sync()
            if self._quiet_pending is not None:
                return self._raw_text(data)
            index = textcalls.reader.lane(data)
            if index is not None:
                # The steady state of a long string argument written in the text: the
                # piece is all arguments of the open call (TextReader.lane).
                self.events_read += 1
                events = self.assembler.feed_arguments(index, data)
                self._lane_ask()  # the piece may have ended in an escape
                if len(events) == 1 and type(events[0]) is ArgumentsDelta:
                    return events if self._understood else self._observe(events)
                return self._lane_events(events)
        if self._sse is not None and type(data) is bytes and not (self._dead or self._closed):
            # The common case of a byte stream: SSE, its framing known and its decoder alive.
            self.bytes_read += len(data)
            out: list[Event] = []
            self._decode(data, out)
            return self._observe(out)
        if self._closed:
            raise RuntimeError("Stitcher.feed() called after close()")
        if type(data) is dict and self._mode != "bytes":
            return self._plain(data)
        if type(data) is str and self._textcalls is not None and self._mode != "bytes":
            return self._raw_text(data)
        if isinstance(data, (bytes, bytearray, memoryview, str)):
            self._set_mode("bytes")
            chunk = data.encode() if isinstance(data, str) else bytes(data)
            return self._observe(self._bytes(chunk))
        self._set_mode("events")
        data = sdk_chunk(data)  # the openai SDK's helper stream: its chunks, not its repeats
        if data is None:
            self.events_read += 1
            return []
        payload = as_mapping(data)
        if payload is None:
            raise TypeError(
                f"cannot read a {type(data).__name__} as a stream event: give bytes, a mapping, "
                "or an SDK object with model_dump()/to_dict()"
            )
        self.events_read += 1
        return self._observe(self._payload(payload, None))

    def _raw_text(self, data: str) -> list[Event]:
        """``feed(data)`` for a piece of the model's raw output (``text_format`` given):
        read by the ``"text"`` adapter, its text by the format (after the quiet pieces the C
        lane held back, if any)."""
        pending = self._quiet_pending
        if pending is not None:
            self._quiet_pending = None
            data = pending + data
        if self._mode is None and self.adapter is None:
            self.adapter = self._adapter("text")
        self._set_mode("text")
        self.events_read += 1
        adapter = self.adapter
        assert adapter is not None
        events = self._observe(self._events(adapter.feed(data)))
        self._lane_ask()
        return events

    def _lane_ask(self) -> None:
        """``_text_lane`` and its lane now: what ``TextReader.steady`` says of the open call;
        else the quiet lane: what ``TextReader.quiet`` says."""
        textcalls = self._textcalls
        steady = None if textcalls is None or self._closed else textcalls.reader.steady()
        if steady is None:
            self._text_lane = None
            quiet = None if textcalls is None or self._closed else textcalls.reader.quiet()
            self._quiet_markers = None if quiet is None else quiet.markers
            if quiet is not None:
                self._quiet_tail, self._quiet_stops = quiet.held, quiet.stops
                self._quiet_plain = QUIET_PLAIN.index(quiet.plain)
                self._quiet_room = quiet.room
            return
        self._quiet_markers = None
        self._text_lane, lane = steady
        self._lane_stops, self._lane_escapes = lane.stops.encode(), lane.escapes
        self._lane_raw, self._lane_newlines, self._lane_trim = lane.raw, lane.newlines, lane.trim
        self._lane_decodes = lane.decodes.encode()

    def _lane_sync(self) -> None:
        """The characters that went by the text lane, counted by the reader now."""
        chars, self._lane_chars = self._lane_chars, 0
        escape, self._lane_escape = self._lane_escape, False
        lines, tail, self._lane_lines, self._lane_tail = self._lane_lines, self._lane_tail, 0, 0
        newline, self._lane_newline = self._lane_newline, False
        textcalls = self._textcalls
        if chars and textcalls is not None:
            textcalls.reader.skipped(chars, escape, lines, tail, newline)

    def _lane_events(self, events: list[Event]) -> list[Event]:
        """The events of a piece that went by the text lane and did more than add arguments
        (a limit, a schema violation...): placed in the model's text, noted."""
        self._lane_sync()
        textcalls = self._textcalls
        assert textcalls is not None
        events = self._observe(textcalls.placed(events))
        self._lane_ask()
        return events

    def _plain(self, data: dict[str, Any]) -> list[Event]:
        """``feed(data)`` for a plain dict (no SDK wrapper to unwrap, nothing to convert)
        before the direct reading is set up."""
        self._mode = "events"
        self.events_read += 1
        adapter = self.adapter
        if adapter is not None and not self._verified:
            self._verify(adapter, data, None)
            if self._direct is not None:  # confirmed: read as every later plain dict is
                self.events_read -= 1  # (``feed`` counts it)
                return self.feed(data)
        return self._observe(self._payload(data, None))

    def _declined(self, data: dict[str, Any]) -> list[Event]:
        """``feed(data)`` for a plain dict that ``_fragment`` (set, with ``_direct``) has just
        declined without asking its Python form: the adapter reads it. The native ``feed``
        calls it once its C reader has declined (docs/native.md, "The event fast path"), so
        that the reader is not asked twice."""
        self.events_read += 1
        direct = self._direct
        assert direct is not None  # set whenever ``_fragment`` is
        return self._observe(self._events(direct(data, None)))

    def close(self, *, cancelled: bool = False) -> list[Event]:
        """The stream ended: flush the decoder, resolve every open call. Idempotent.

        How it ended decides what a call whose arguments never arrived becomes
        (docs/concepts.md, "How a response ends"): the empty-arguments object only after a
        normal end (the stream's first finish reason is one: ``vocab.endings.ending_of``),
        discarded after a cut. ``cancelled=True`` says the reader stopped before the
        stream's end (``Stitch.close``, a cancelled task): a cut, whatever was read.
        """
        pending, self._quiet_markers = self._quiet_pending, None
        if pending is None or self._closed:
            return self._close(cancelled)
        self._quiet_pending = None  # what the quiet lane held back is read first
        self.events_read -= 1  # it was counted when it was held
        early = self._raw_text(pending)
        return early + self._close(cancelled)

    def _close(self, cancelled: bool) -> list[Event]:
        """``close``, once what the quiet lane held back was read."""
        self._direct = self._fragment = None  # a feed after close goes the long way, refused
        self._text_lane = self._quiet_markers = None
        if self._closed:
            return []
        if self._lane_chars:
            self._lane_sync()
        driver = self._driver
        if cancelled and driver.cut is None:
            driver.cut = Ending.CANCELLED
        driver.reason = self._finish
        out: list[Event] = []
        if self._mode == "bytes" and not self._dead:
            self._flush(out)
        if self.adapter is None and self._textcalls is not None and not self.events_read:
            self.adapter = self._adapter("text")  # nothing at all: an empty output
        if self.adapter is None:
            if self._errors:
                self._closed = True
                return self._observe(out)
            what = (
                "no stream events at all"
                if not self.events_read
                else (f"none of its {self.events_read} events belongs to a known provider")
            )
            raise StreamDecodeError(
                f"cannot tell the stream format: {what} (known: {', '.join(PROVIDERS)})"
            )
        self._drive(self.adapter.close(), out)
        self._closed = True
        self._observe(out)
        if not self._understood and self.events_read and not self._errors:
            out.append(self._not_understood())
            self._observe(out[-1:])
        return out

    def _not_understood(self) -> StreamFailed:
        """The stream error for a stream of which nothing at all was understood."""
        return StreamFailed(
            error=StreamDecodeError(
                f"nothing in the stream was understood as {self.provider}: none of its "
                f"{self.events_read} events carried a call, text, reasoning, a finish reason "
                "or usage (a body cut at its start, or another provider's stream?)"
            )
        )

    # -- bytes ------------------------------------------------------------------------------

    def _set_mode(self, mode: str) -> None:
        if self._mode is None:
            self._mode = mode
        elif self._mode != mode:
            raise TypeError("a stream is fed either bytes or events, not both")

    def _bytes(self, chunk: bytes) -> list[Event]:
        self.bytes_read += len(chunk)
        out: list[Event] = []
        if self._dead or not chunk:
            return out
        if not self._framed:
            self._head += chunk
            head = self._head
            if len(head) < len(_BOM) and _BOM.startswith(head):
                return out  # maybe a BOM, split
            if len(head) < PRELUDE_BYTES and head[0] < 0x20 and head[0] not in WHITESPACE_BYTES:
                return out  # a control byte, as no text starts: maybe an event-stream prelude
            body = head[len(_BOM) :] if head.startswith(_BOM) else head
            if body.strip(WHITESPACE_BYTES):
                self._frame(b"", out)
            return out
        self._decode(chunk, out)
        return out

    @property
    def _framed(self) -> bool:
        """Whether the body's framing is known (a decoder was chosen)."""
        return (
            self._sse is not None
            or self._array is not None
            or self._ndjson is not None
            or self._frames is not None
        )

    def _flush(self, out: list[Event]) -> None:
        """The body ended: pick the framing of what was kept back, close the decoder."""
        if not self._framed and self._head.strip(WHITESPACE_BYTES):
            self._frame(b"", out)
        try:
            if self._sse is not None:
                for message in self._sse.close():
                    self._message(message.event, message.data, message.is_done, out)
            elif self._array is not None:
                for element in self._array.close():
                    self._element(element, out)
            elif self._frames is not None:
                for frame in self._frames.close():
                    self._aws_frame(frame, out)
            elif self._ndjson is not None:
                for line in self._ndjson.close():
                    self._line(line, out)
        except StreamDecodeError as exc:
            self._decode_failed(exc, out)

    def _frame(self, chunk: bytes, out: list[Event]) -> None:
        """Pick the framing from the first significant byte, then decode what was kept."""
        head, self._head = self._head + chunk, b""
        body = head[len(_BOM) :] if head.startswith(_BOM) else head
        if is_prelude(head):
            self._frames = EventStreamDecoder()
        elif body.lstrip(WHITESPACE_BYTES).startswith(b"["):
            self._array = JSONArrayDecoder()
            head = body
        elif body.lstrip(WHITESPACE_BYTES).startswith(b"{"):
            self._ndjson = NDJSONDecoder()  # one JSON object per line (Ollama)
            head = body
        else:
            self._sse = SSEDecoder()
        self._decode(head, out)

    def _decode(self, chunk: bytes, out: list[Event]) -> None:
        try:
            if self._sse is not None:
                for message in self._sse.feed(chunk):
                    self._message(message.event, message.data, message.is_done, out)
            elif self._array is not None:
                for element in self._array.feed(chunk):
                    self._element(element, out)
            elif self._frames is not None:
                for frame in self._frames.feed(chunk):
                    self._aws_frame(frame, out)
            elif self._ndjson is not None:
                for line in self._ndjson.feed(chunk):
                    self._line(line, out)
        except StreamDecodeError as exc:
            self._decode_failed(exc, out)

    def _decode_failed(self, exc: StreamDecodeError, out: list[Event]) -> None:
        self._dead = True
        if (self.adapter is None and not self._errors) or self._mismatch:
            raise exc
        self._drive([StreamFailed(error=exc)], out)  # the driver notes the cut

    def _message(self, event: str, data: str, done: bool, out: list[Event]) -> None:
        self.events_read += 1
        # (``data[0]`` first: only a text that starts with whitespace may be blank.)
        if done or not data or (data[0].isspace() and not data.strip()):
            return  # ``[DONE]`` ends the protocol but says nothing: it is not understanding
        try:
            payload = json.loads(data)
        except ValueError as exc:
            self._bad_event(f"event {self.events_read}: the data is not JSON ({exc})", out)
            return
        if not isinstance(payload, dict):
            self._bad_event(f"event {self.events_read}: the data is not a JSON object", out)
            return
        out.extend(self._payload(payload, None if event == "message" else event))

    def _element(self, element: object, out: list[Event]) -> None:
        self.events_read += 1
        if not isinstance(element, dict):
            self._bad_event(f"array element {self.events_read} is not a JSON object", out)
            return
        out.extend(self._payload(element, None))

    def _aws_frame(self, frame: EventStreamFrame, out: list[Event]) -> None:
        """An event-stream frame as the event boto3 would give: ``{event_type: payload}``;
        an exception (or error) frame as ``{exception_type: payload}``, marked
        ``event="exception"``."""
        self.events_read += 1
        headers = frame.headers
        kind = headers.get(":message-type")
        event = "exception" if kind in ("exception", "error") else None
        name = headers.get(":error-code" if kind == "error" else f":{kind or 'event'}-type")
        where = f"event-stream frame {self.events_read} (byte {frame.offset})"
        if not isinstance(name, str) or not name:
            self._bad_event(f"{where}: no event type in its headers", out)
            return
        payload: object
        try:
            payload = json.loads(frame.payload) if frame.payload else {}
        except ValueError as exc:
            if event is None:
                self._bad_event(f"{where}: the payload is not JSON ({exc})", out)
                return
            payload = {"message": frame.payload.decode("utf-8", "replace")}
        if kind == "error":
            payload = {"message": headers.get(":error-message")}
        if not isinstance(payload, dict):
            self._bad_event(f"{where}: the payload is not a JSON object", out)
            return
        out.extend(self._payload({name: payload}, event))

    def _line(self, line: NDJSONItem, out: list[Event]) -> None:
        self.events_read += 1
        if isinstance(line, StreamDecodeError):  # a line that is not a JSON object
            self._bad_event(line, out)
            return
        out.extend(self._payload(line, None))

    def _bad_event(self, message: str | StreamDecodeError, out: list[Event]) -> None:
        error = message if isinstance(message, StreamDecodeError) else StreamDecodeError(message)
        if self.adapter is None and not self._errors:
            raise error
        self._drive([StreamFailed(error=error)], out)  # the driver notes the cut

    # -- events -----------------------------------------------------------------------------

    def _payload(self, payload: Mapping[str, Any], event: str | None) -> list[Event]:
        if self.adapter is not None:
            if not self._verified:
                self._verify(self.adapter, payload, event)
            return self._events(self.adapter.feed(payload, event=event))
        provider = detect(payload, event)
        if provider is None:
            if _is_error(payload, event):
                error = payload.get("error", payload)
                return [provider_error(error if error is not None else payload)]
            self._queue = _added(self._queue, (payload, event))
            if len(self._queue) > MAX_UNDETECTED_EVENTS:
                raise StreamDecodeError(
                    f"cannot tell the stream format: the first {len(self._queue)} events "
                    f"belong to no known provider (known: {', '.join(PROVIDERS)})"
                )
            return []
        adapter = self.adapter = self._adapter(provider)
        out: list[Event] = []
        queued, self._queue = self._queue, ()
        for item, name in queued:
            self._drive(adapter.feed(item, event=name), out)
        self._drive(adapter.feed(payload, event=event), out)
        return out

    def _verify(self, adapter: Adapter, payload: Mapping[str, Any], event: str | None) -> None:
        """Confirm the named provider by an event that names one (``StreamDecodeError`` if it
        names another); then, for events, set up the direct reading of plain dicts."""
        found = detect(payload, event)
        if found is None:
            return
        if found != adapter.name and adapter.name in shared_by(payload, event):
            return  # not this provider's alone (a Bedrock exception frame)
        self._verified = True  # (understood only once an event means something: _observe)
        if found != adapter.name:
            self._mismatch = True
            raise StreamDecodeError(
                f"the stream is {found}, not {adapter.name} (event {self.events_read})"
            )
        if self._mode == "events":
            # A plain dict needs no conversion: the adapter's own reader takes it.
            self._direct = adapter._feed
            if self._wrappers is None and self._textcalls is None:  # they see every item
                self._fragment = self._shortcut(adapter)
                if self._fragment is not None:  # ``feed`` asks it first
                    self._direct = adapter._feed_declined

    def _adapter(self, provider: str) -> Adapter:
        if self._textcalls is not None and provider != "text":
            self._textcalls.from_provider()  # calls in its text are a quirk of the server's
        records = self.assembler if self._wrappers is None else self._wrappers.records
        return ADAPTERS[provider](choice=self.choice, records=records)

    def _observe(self, events: list[Event]) -> list[Event]:
        """Note what the result keeps of ``events``; return them. The native ``Stitcher``
        runs this loop in C (``StitcherBase._observe``) over the same ``_NOTES``."""
        if events and not self._understood:
            # Anything but a warning says the adapter understood an event.
            self._understood = any(type(e) is not StreamWarning for e in events)
        for event in events:
            kind = type(event)
            if kind is ArgumentsDelta:
                continue  # the most frequent event, and nothing to note in the result
            if type(event) is TextDelta:  # the commonest event of every stream: no lookup
                self._note_text(event)
                continue
            if type(event) is ReasoningDelta:  # a reasoning model's commonest event
                self._note_reasoning(event)
                continue
            note = _NOTES.get(kind)
            if note is None:
                note = _note_of(kind)
            note(self, event)
        return events

    # What ``_observe`` notes of each kind of event (``_NOTES`` maps the kinds to these).

    def _note_text(self, event: TextDelta) -> None:
        if self._run is None:
            self._run = _TextRun(len(self._text))
            self._parts.append(self._run)
        self._text.append(event.text)

    def _note_reasoning(self, event: ReasoningDelta) -> None:
        self._reasoning.append(event.text)

    def _note_started(self, event: CallStarted) -> None:
        if event.index not in self._order:
            self._order[event.index] = len(self._order)
            self._place(event.index)

    def _note_ready(self, event: CallReady) -> None:
        self._calls[event.call.index] = event.call

    def _note_finish(self, event: FinishReason) -> None:
        if self._finish is None:
            self._finish = event.reason

    def _note_usage(self, event: Usage) -> None:
        if self._usage is None:
            self._usage = {}
        self._usage.update(event.usage)

    def _note_warning(self, event: CallWarning | StreamWarning) -> None:
        self._warnings = _added(self._warnings, event)

    def _note_discarded(self, event: CallDiscarded) -> None:
        error = event.error
        if type(error) is LimitExceeded and error.limit == "max_calls":
            # A call refused past max_calls: the first MAX_REFUSED_KEPT are kept, the rest
            # counted, so that a stream of endless indices costs the result nothing more.
            if self._refused >= MAX_REFUSED_KEPT:
                self._omitted += 1
                self._order.pop(event.index, None)
                if self._parts and self._parts[-1] == event.index:
                    self._parts.pop()  # placed by its CallStarted, just before
                return
            self._refused += 1
        self._discarded = _added(self._discarded, event)
        # Never a call: its place among the calls is not needed (its part stays).
        if self._order.pop(event.index, None) is None:  # discarded before it started
            self._place(event.index)

    def _note_refusal(self, event: RefusalDelta) -> None:
        self._refusal = _added(self._refusal, event.text)

    def _note_server(self, event: ServerToolCall) -> None:
        self._server = _added(self._server, event)

    def _note_custom(self, event: CustomToolCall) -> None:
        self._custom = _added(self._custom, event)

    def _note_failed(self, event: StreamFailed) -> None:
        self._errors += 1
        if self._stream_error is None:
            self._stream_error = event.error

    def _note_nothing(self, event: Event) -> None:
        """An event the result has no place for (``ArgumentsValue``, a subclass of
        ``ArgumentsDelta``, an event type of no entry in ``_NOTES``)."""

    def _shortcut(self, adapter: Adapter) -> Fragments | None:
        """The adapter's ``_fragment`` shortcut, as this path reads it."""
        return adapter._fragment


#: What ``_StitcherBody._observe`` does with an event, by its exact type (``_note_of`` adds a
#: subclass of an event type, with its nearest base's entry). Before the lookup it skips an
#: ``ArgumentsDelta`` (nothing of it is noted) and sends a ``TextDelta`` and a
#: ``ReasoningDelta``, the commonest events of a stream, to their entries directly.
_NOTES: dict[type[Event], Callable[[_StitcherBody, Any], None]] = {
    TextDelta: _StitcherBody._note_text,
    ReasoningDelta: _StitcherBody._note_reasoning,
    CallStarted: _StitcherBody._note_started,
    CallReady: _StitcherBody._note_ready,
    FinishReason: _StitcherBody._note_finish,
    Usage: _StitcherBody._note_usage,
    CallWarning: _StitcherBody._note_warning,
    StreamWarning: _StitcherBody._note_warning,
    CallDiscarded: _StitcherBody._note_discarded,
    RefusalDelta: _StitcherBody._note_refusal,
    ReasoningBlock: _StitcherBody._signed,
    TextSignature: _StitcherBody._signed,
    ServerToolCall: _StitcherBody._note_server,
    CustomToolCall: _StitcherBody._note_custom,
    StreamFailed: _StitcherBody._note_failed,
}


def _note_of(kind: type[Event]) -> Callable[[_StitcherBody, Any], None]:
    """The entry of an event type not in ``_NOTES`` (a subclass, or a type with nothing to
    note): its nearest base's in the method resolution order, kept for the next time. The
    table stays as small as the event types in use: one entry per type."""
    note = next(
        (_NOTES[base] for base in kind.__mro__ if base in _NOTES),
        _StitcherBody._note_nothing,
    )
    _NOTES[kind] = note
    return note


class _PythonStitcher(_StitcherBody):
    """The pure-Python stitcher: the reference, and the fallback of the native one. Its
    assembler is the pure-Python one on either path (``toolstitch.testing.PythonStitcher``)."""

    _assembler_class = _PythonAssembler


def _native_stitcher(native: Any) -> type[_StitcherBody]:
    """The stitcher of the native path: the C base of ``native`` (docs/native.md, "The event
    fast path") under the same Python body. Its ``feed`` is C for the commonest events of a
    content-block stream (the adapter's C shortcut, straight to the native assembler, and the
    plain block starts and message events the C reader knows), and its ``_observe`` loops in C
    over the Python notes; what C does not take goes to the Python methods."""
    native.configure_event_path(
        python_feed=_StitcherBody.feed,
        declined_feed=_StitcherBody._declined,
        assembler_class=Assembler,
        python_observe=_StitcherBody._observe,
        notes=_NOTES,
        note_of=_note_of,
        stream_warning=StreamWarning,
    )

    class _NativeStitcher(native.StitcherBase, _StitcherBody):  # type: ignore[misc]
        _assembler_class = Assembler

        def _shortcut(self, adapter: Adapter) -> Fragments | None:
            return adapter._native_fragment() or adapter._fragment

    return _NativeStitcher


_NativeStitcher: type[_StitcherBody] | None = None
if extension is not None:
    _NativeStitcher = _native_stitcher(extension)

if not TYPE_CHECKING:
    Stitcher = _PythonStitcher if _NativeStitcher is None else _NativeStitcher
    publish(Stitcher, "Stitcher", _StitcherBody)
else:
    # What type checkers and the API reference (griffe reads the source) see: the body both
    # classes share, with every method and the public docstring.
    Stitcher = _StitcherBody


# -- drivers ----------------------------------------------------------------------------------


def _is_manager(source: object, enter: str, exit: str) -> bool:
    """A context manager that is not itself the stream (an SDK's stream manager)."""
    kind = type(source)
    return callable(getattr(kind, enter, None)) and callable(getattr(kind, exit, None))


def _sync_chunks(source: object) -> Iterator[object]:
    """The pieces of a sync source. A stream manager (the ``openai`` SDK's
    ``chat.completions.stream(...)``, the ``anthropic`` SDK's ``messages.stream(...)``: a
    context manager that is not iterable) is entered here and exited when the stream ends,
    or when this generator is closed or collected (``Stitch.close``, an abandoned run): its
    connection is never left open."""
    if isinstance(source, (bytes, bytearray, memoryview, str)):
        yield source
        return
    if isinstance(source, Iterable):
        yield from source
        return
    iter_bytes = getattr(source, "iter_bytes", None)
    if callable(iter_bytes):
        yield from iter_bytes()
        return
    if _is_manager(source, "__enter__", "__exit__"):
        with source as stream:  # type: ignore[attr-defined]
            yield from _sync_chunks(stream)
        return
    raise TypeError(
        f"stitch() needs bytes or an iterable of bytes or events, got {type(source).__name__}"
    )


def _pieces(source: object) -> Iterator[object]:
    """The pieces of a sync source: a list or tuple by its own iterator (nothing to enter or
    release, and no generator resumed per piece), anything else by ``_sync_chunks``."""
    if isinstance(source, (list, tuple)) and type(source) in (list, tuple):
        return iter(source)
    return _sync_chunks(source)


async def _managed_chunks(manager: Any) -> AsyncIterator[object]:
    """The pieces of an async stream manager (``AsyncChatCompletionStreamManager``,
    ``AsyncMessageStreamManager``), entered here and exited when the stream ends, or when
    this generator is closed (``AsyncStitch.aclose``) or finalised by the event loop."""
    async with manager as stream:
        if isinstance(stream, AsyncIterable):
            async for item in stream:
                yield item
        else:
            for item in _sync_chunks(stream):
                yield item


class _Run:
    """What ``Stitch`` and ``AsyncStitch`` share: a ``Stitcher`` over a source and the
    figures read so far; for ``AsyncStitch``, the events it produced that were not handed out
    yet (``Stitch``'s pump holds its own)."""

    def __init__(
        self,
        source: object,
        provider: str = "auto",
        *,
        limits: Limits | None = None,
        choice: int = 0,
        empty_arguments: str = EMPTY_ARGUMENTS,
        tools: object = None,
        on_schema_violation: str = "discard",
        watch_strings: Mapping[str, Iterable[str]] | None = None,
        partial_arguments: bool | None = None,
        id_factory: IdFactory | None = None,
        text_format: str | None = None,
        primed_reasoning: bool = False,
    ) -> None:
        self.stitcher = Stitcher(
            provider,
            limits=limits,
            choice=choice,
            empty_arguments=empty_arguments,
            tools=tools,
            on_schema_violation=on_schema_violation,
            watch_strings=watch_strings,
            partial_arguments=partial_arguments,
            id_factory=id_factory,
            text_format=text_format,
            primed_reasoning=primed_reasoning,
        )
        self._source = source
        self._pending: deque[Event] = deque()
        self._done = False
        self._cancelled = False  # closed by the reader before the source ended

    def _take(self, item: object | None, *, end: bool = False) -> None:
        """Feed one piece of the source (or its end) and keep the events it caused."""
        if end:
            self._done = True
            self._pending.extend(self.stitcher.close(cancelled=self._cancelled))
        else:
            self._pending.extend(self.stitcher.feed(item))

    @property
    def provider(self) -> str | None:
        return self.stitcher.provider

    @property
    def events_read(self) -> int:
        return self.stitcher.events_read

    @property
    def bytes_read(self) -> int:
        return self.stitcher.bytes_read


class Stitch(_Run, Iterator[Event]):
    """Iterate a stream's events; ``result`` holds the outcome (see ``stitch``)."""

    _chunks: Iterator[object] | None = None
    _pump: Pump[Event] | None = None

    def __iter__(self) -> Iterator[Event]:
        """The events, from the pump (stitch/pump.py: the loop in C on the native path)."""
        pump = self._pump
        if pump is None:
            self._chunks = _pieces(self._source)
            pump = self._pump = PUMP(self._chunks, self.stitcher.feed, self._end)
        return pump

    def __next__(self) -> Event:
        return next(self._pump or iter(self))

    def _end(self) -> list[Event]:
        """The events of the source's end (the pump calls it once)."""
        self._done = True
        return self.stitcher.close(cancelled=self._cancelled)

    def close(self) -> None:
        """Stop reading the source and release it (a stream manager that ``stitch`` entered
        is exited, so its connection closes). What was read stays: ``result`` then ends the
        stream there: the stream was cut (``Ending.CANCELLED``), so a call whose arguments
        had not arrived is discarded, never dispatched. Idempotent."""
        self._cancelled = self._cancelled or not self._done
        chunks, self._chunks = self._chunks, None
        pump = self._pump
        if pump is None:
            pump = self._pump = PUMP(iter(()), self.stitcher.feed, self._end)
        pump.stop()
        if isinstance(chunks, Generator):
            chunks.close()

    def __enter__(self) -> Stitch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def result(self) -> StitchResult:
        """The outcome. Reading it consumes whatever of the stream is left."""
        for _ in self:
            pass
        return self.stitcher.result

    def collect(self) -> StitchResult:
        """Consume the rest of the stream and return the outcome."""
        return self.result


class AsyncStitch(_Run, AsyncIterator[Event]):
    """The async twin of ``Stitch`` (see ``astitch``)."""

    _aiter: AsyncIterator[object] | None = None
    _iter: Iterator[object] | None = None

    def __aiter__(self) -> AsyncStitch:
        return self

    async def __anext__(self) -> Event:
        pending = self._pending
        while not pending:
            if self._done:
                raise StopAsyncIteration
            await self._pull()
        return pending.popleft()

    async def _pull(self) -> None:
        item: object
        if self._aiter is None and self._iter is None:
            source = self._source
            if isinstance(source, AsyncIterable):
                self._aiter = source.__aiter__()
            elif callable(getattr(source, "aiter_bytes", None)):
                self._aiter = source.aiter_bytes().__aiter__()  # type: ignore[attr-defined]
            elif not isinstance(source, Iterable) and _is_manager(
                source, "__aenter__", "__aexit__"
            ):
                self._aiter = _managed_chunks(source)
            else:
                self._iter = _sync_chunks(source)
        try:
            if self._aiter is not None:
                item = await self._aiter.__anext__()
            else:
                assert self._iter is not None
                item = next(self._iter)
        except (StopAsyncIteration, StopIteration):
            self._take(None, end=True)
            return
        self._take(item)

    async def aclose(self) -> None:
        """Stop reading the source and release it (a stream manager that ``astitch``
        entered is exited, so its connection closes; a sync source is closed as ``Stitch``
        closes it). What was read stays: ``await collect()`` then ends the stream there.
        A call whose arguments had not arrived is then discarded (``Ending.CANCELLED``).
        Idempotent."""
        self._cancelled = self._cancelled or not self._done
        aiter, self._aiter = self._aiter, None
        chunks, self._iter = self._iter, iter(())
        if isinstance(aiter, AsyncGenerator):
            await aiter.aclose()
        if isinstance(chunks, Generator):
            chunks.close()

    async def __aenter__(self) -> AsyncStitch:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def result(self) -> StitchResult:
        """The outcome, once the iteration has ended (``await collect()`` gets there)."""
        if not self._done or self._pending:
            raise RuntimeError(
                "the stream has not been read to the end: iterate it, or await collect()"
            )
        return self.stitcher.result

    async def collect(self) -> StitchResult:
        """Consume the rest of the stream and return the outcome."""
        async for _ in self:
            pass
        return self.stitcher.result


def stitch(
    source: object,
    provider: str = "auto",
    *,
    limits: Limits | None = None,
    choice: int = 0,
    empty_arguments: str = EMPTY_ARGUMENTS,
    tools: object = None,
    on_schema_violation: str = "discard",
    watch_strings: Mapping[str, Iterable[str]] | None = None,
    partial_arguments: bool | None = None,
    id_factory: IdFactory | None = None,
    text_format: str | None = None,
    primed_reasoning: bool = False,
) -> Stitch:
    """Reassemble the tool calls of one streamed response; iterate it for the events.

    ``source`` is the response body (``bytes``), an iterable of byte chunks (e.g.
    ``httpx.Response.iter_bytes()``, a file opened in binary mode), an iterable of stream
    events as dicts or SDK objects (e.g. an ``openai`` ``Stream``, an ``anthropic``
    ``MessageStream``, ``google-genai``'s ``generate_content_stream``, ``cohere``'s
    ``v2.chat_stream``, ``ollama``'s ``chat(stream=True)``), or an object with
    ``iter_bytes()``, or a boto3 ``converse_stream()["stream"]``. ``provider`` is ``"auto"``
    or one of ``toolstitch.adapters.PROVIDERS``. The keywords are ``Stitcher``'s:
    ``limits``, ``choice``, ``empty_arguments``, and the declared-tool options ``tools``,
    ``on_schema_violation``, ``watch_strings``, ``partial_arguments`` (as ``Assembler`` takes
    them; see docs/schema.md), and ``id_factory``, the caller's ids for calls without one.

    ``source`` may also be a stream *manager*, the ``openai`` SDK's
    ``client.chat.completions.stream(...)`` or the ``anthropic`` SDK's
    ``client.messages.stream(...)``: ``stitch`` enters it, reads the stream (the openai
    helper stream's ``chunk`` events; the events that repeat them are skipped) and exits it
    when the stream ends, on ``close()`` (or leaving ``with stitch(...) as run:``), or when
    the run is abandoned, so its connection is always released.

    Iterating yields every event as it becomes true: the core's call events (``CallStarted``,
    ``ArgumentsDelta``, ``ArgumentsValue``, ``CallReady``, ``CallDiscarded``, ``CallWarning``)
    and the stream events (``TextDelta``, ``ReasoningDelta``, ``FinishReason``, ``Usage``,
    ``ServerToolCall``, ``CustomToolCall``, ``StreamFailed``, ``StreamWarning``). ``.result`` is the
    ``StitchResult`` (reading it first consumes the stream)::

        run = stitch(body)
        for event in run:
            ...
        run.result.calls
    """
    return Stitch(
        source,
        provider,
        limits=limits,
        choice=choice,
        empty_arguments=empty_arguments,
        tools=tools,
        on_schema_violation=on_schema_violation,
        watch_strings=watch_strings,
        partial_arguments=partial_arguments,
        id_factory=id_factory,
        text_format=text_format,
        primed_reasoning=primed_reasoning,
    )


def astitch(
    source: object,
    provider: str = "auto",
    *,
    limits: Limits | None = None,
    choice: int = 0,
    empty_arguments: str = EMPTY_ARGUMENTS,
    tools: object = None,
    on_schema_violation: str = "discard",
    watch_strings: Mapping[str, Iterable[str]] | None = None,
    partial_arguments: bool | None = None,
    id_factory: IdFactory | None = None,
    text_format: str | None = None,
    primed_reasoning: bool = False,
) -> AsyncStitch:
    """The async twin of ``stitch``: ``source`` may also be an async iterable (e.g.
    ``httpx.Response.aiter_bytes()``, an ``openai`` ``AsyncStream``) or an async stream
    manager (``AsyncOpenAI().chat.completions.stream(...)``,
    ``AsyncAnthropic().messages.stream(...)``), entered and exited as ``stitch`` does (on
    ``await run.aclose()``, ``async with astitch(...) as run:``, or the loop's finaliser
    for an abandoned run)::

        run = astitch(response.aiter_bytes())
        async for event in run:
            ...
        run.result.calls
    """
    return AsyncStitch(
        source,
        provider,
        limits=limits,
        choice=choice,
        empty_arguments=empty_arguments,
        tools=tools,
        on_schema_violation=on_schema_violation,
        watch_strings=watch_strings,
        partial_arguments=partial_arguments,
        id_factory=id_factory,
        text_format=text_format,
        primed_reasoning=primed_reasoning,
    )
