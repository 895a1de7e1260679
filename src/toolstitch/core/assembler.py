"""The assembler: tool-call deltas in, events and complete calls out. Sans-I/O.

Theory of operation
-------------------
Deltas are routed by index to one ``_Call`` each. A call accumulates its id (set once, never
concatenated), its name (concatenated) and its argument fragments, which go through the
call's own ``ArgumentsTokenizer``; the text lives once, in the call's ``ChunkedText``. The
call's state moves only along the table of ``core.machine`` (derived from
``grammars/call-machine.json``), and only when it changes; the rules the table cannot say
(which triggers an id or a fragment fires, when a call is ready, what the end does with an
open call) are asked of ``core.machine`` too, never re-derived here.

A call becomes ready - ``CallReady``, returned by the very ``feed`` that made it so - when its
arguments object has closed *and* its name and id are known; whichever arrives last triggers
it. It is discarded - ``CallDiscarded`` - by the feed that delivered its first invalid
character or passed a limit. ``finish`` resolves every call still open, so each call that
starts ends exactly once. A discarded call ignores later deltas and keeps no text (its
``CallDiscarded`` carried it); a complete call accepts trailing whitespace and warns once
about anything else. Nothing here raises on bad data from the model; only input that is not
a delta at all raises ``InvalidDelta``, before any state changes.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from toolstitch.core.deltas import (
    NOT_DELTAS,
    Delta,
    checked_fields,
    delta_fields,
    unread_keys,
    wire_fields,
)
from toolstitch.core.ids import GENERATED_ID_PREFIX, IdFactory, check_id_factory, generated_id
from toolstitch.core.machine import (
    EMPTY,
    MISSING_NAME,
    READY,
    at_end,
    is_ready,
    next_state,
    on_arguments,
    on_first_id,
)
from toolstitch.core.record import CallRecord
from toolstitch.json.diagnose import Diagnosis, diagnose
from toolstitch.json.lexicon import (
    WHITESPACE,
    join_surrogates,
    load_json,
    locate,
    scan_value,
    snippet,
)
from toolstitch.json.tokenizer import (
    DepthExceeded,
    DigitsExceeded,
    InvalidFragment,
    JSONEventBatch,
    JSONEventListener,
    NumberOutOfRange,
    Tokenizer,
    make_tokenizer,
    replay,
)
from toolstitch.schema.checks import MAX_WARNINGS, CallChecks, ToolChecks
from toolstitch.vocab._quick import one_field
from toolstitch.vocab.call_events import (
    ArgumentsDelta,
    ArgumentsValue,
    CallDiscarded,
    CallReady,
    CallSnapshot,
    CallStarted,
    CallState,
    CallWarning,
    Event,
    ToolCall,
)
from toolstitch.vocab.endings import EMPTY_ARGUMENTS, Ending, ending_of
from toolstitch.vocab.errors import (
    ConflictingId,
    InvalidDelta,
    LimitExceeded,
    MalformedArguments,
    MissingName,
    SchemaViolation,
    ToolCallError,
    TrailingArguments,
    TruncatedArguments,
    UnexpectedDelta,
    UnreadField,
)
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.native import extension, publish
from toolstitch.vocab.text import JOIN_EVERY, ChunkedText, TextSnapshot

__all__ = ["GENERATED_ID_PREFIX", "Assembler"]

_AWAITING_ID = CallState.AWAITING_ID
_ACCUMULATING_NAME = CallState.ACCUMULATING_NAME
_ACCUMULATING_ARGS = CallState.ACCUMULATING_ARGS
_COMPLETE = CallState.COMPLETE
_DISCARDED = CallState.DISCARDED


_DEFAULT_LIMITS = Limits()  # frozen: one shared instance
_TOKENIZER_ERRORS = (InvalidFragment, DepthExceeded, DigitsExceeded, NumberOutOfRange)
_new_event = object.__new__
_set_index = vars(ArgumentsDelta)["index"].__set__
_set_fragment = vars(ArgumentsDelta)["fragment"].__set__


def _arguments_delta(index: int, fragment: str) -> ArgumentsDelta:
    """``ArgumentsDelta(index=index, fragment=fragment)`` at half the cost, for the hot path.

    A frozen dataclass's ``__init__`` goes through ``object.__setattr__`` per field; the slot
    descriptors set the same fields directly. The result is an ordinary, equal instance.
    """
    event: ArgumentsDelta = _new_event(ArgumentsDelta)
    _set_index(event, index)
    _set_fragment(event, fragment)
    return event


_NO_NOTE: tuple[None, None] = (None, None)
#: The type of a call whose deltas named none.
_DEFAULT_TYPE = "function"


#: The default ``empty_arguments``, loaded once (each assembler copies it when it uses it).
_DEFAULT_EMPTY = EMPTY_ARGUMENTS
#: How many unread keys are reported per call (a stream that invents keys without end gets
#: no more warnings, and memory stays bounded).
_MAX_UNREAD_KEYS = 16
_DEFAULT_EMPTY_PARSED: dict[str, Any] = load_json(_DEFAULT_EMPTY)

_set_call_fields = tuple(
    vars(ToolCall)[name].__set__
    for name in (
        "index",
        "id",
        "type",
        "name",
        "arguments",
        "parsed_arguments",
        "signature",
        "caller",
    )
)


def _tool_call(
    index: int,
    call_id: str,
    kind: str,
    name: str,
    arguments: str,
    parsed: dict[str, Any],
    signature: str | None,
    caller: Mapping[str, Any] | None,
) -> ToolCall:
    """``ToolCall(...)`` through the slot descriptors, as ``_arguments_delta`` does: one per
    call on the ready path, an ordinary, equal instance."""
    call: ToolCall = _new_event(ToolCall)
    set_index, set_id, set_type, set_name, set_arguments, set_parsed, set_signature, set_caller = (
        _set_call_fields
    )
    set_index(call, index)
    set_id(call, call_id)
    set_type(call, kind)
    set_name(call, name)
    set_arguments(call, arguments)
    set_parsed(call, parsed)
    set_signature(call, signature)
    set_caller(call, caller)
    return call


_set_started_fields = tuple(vars(CallStarted)[name].__set__ for name in ("index", "id", "name"))


def _call_started(index: int, call_id: str | None, name: str | None) -> CallStarted:
    """``CallStarted(index=index, id=call_id, name=name)`` through the slot descriptors, as
    ``_arguments_delta`` does: once per call, on the path of its first delta."""
    event: CallStarted = _new_event(CallStarted)
    set_index, set_id, set_name = _set_started_fields
    set_index(event, index)
    set_id(event, call_id)
    set_name(event, name)
    return event


_call_ready = one_field(CallReady, "call", ToolCall)


#: The members of a call that the hot path reads: on the native path, ``CallBase``'s (in C).
_HOT_CALL_FIELDS = ("buffer", "checks", "closed", "index", "state", "tokenizer")
_CALL_FIELDS = (
    "error",
    "id",
    "name",
    "position",
    "ready_length",
    "result",
    "schema_warnings",
    "trailing_offset",
    "trailing_warned",
    "type",
)


class _CallBody:
    """Everything known about one call index: the core's record of it (a ``CallRecord``).
    Private and mutable; snapshots and the ``CallRecord`` view are what others see.

    The body shared by the two paths: ``_PythonCall`` keeps every field in its slots, the
    native ``_Call`` keeps the hot ones in its C base (``_native.CallBase``)."""

    if not TYPE_CHECKING:  # the subclasses hold the fields (mypy checks them as declared here)
        __slots__ = ()
    #: The arguments text's type: ``ChunkedText``, or ``_native.TextBuffer`` (the same, in C).
    _text: ClassVar[type[ChunkedText]]

    def __init__(
        self, index: int, tokenizer: Tokenizer, position: int = 0, buffer: ChunkedText | None = None
    ) -> None:
        self.index = index
        self.position = position  # 0-based order among the calls of the stream
        self.id: str | None = None
        self.type: str | None = None
        self.name = ""
        # The arguments text: appends in O(1), snapshots in O(1); cleared when discarded.
        self.buffer = self._text() if buffer is None else buffer
        self.state = _AWAITING_ID
        self.error: ToolCallError | None = None
        self.tokenizer = tokenizer
        self.closed = False  # the arguments object has closed
        self.ready_length = 0  # characters of text that belong to the closed object
        self.trailing_warned = False
        self.trailing_offset: int | None = None  # trailing text seen, warning not yet sent
        self.result: ToolCall | None = None
        self.checks: CallChecks | None = None  # with declared tools: schema, partial view
        self.schema_warnings = 0

    @property
    def length(self) -> int:
        return self.buffer.length

    @property
    def started(self) -> bool:
        return self.tokenizer.started

    def text(self) -> str:
        return self.buffer.text()

    def close_offset(self, fragment: str) -> int:
        return self.tokenizer.close_offset(fragment)

    def move(self, trigger: str) -> None:
        self.state = next_state(self.state, trigger)

    def snapshot(self) -> CallSnapshot:
        return CallSnapshot(
            index=self.index,
            id=self.id,
            name=self.name or None,
            state=self.state,
            error=self.error,
            closed=self.closed,
            partial_arguments=(
                None
                if self.checks is None or self.checks.partial is None
                else self.checks.partial.value
            ),
            text=self.buffer.snapshot(),
        )


class _PythonCall(_CallBody):
    """A call record of the pure-Python path."""

    __slots__ = _HOT_CALL_FIELDS + _CALL_FIELDS
    _text = ChunkedText


#: The members of the assembler that the hot path reads: on the native path,
#: ``AssemblerBase``'s (in C).
_HOT_ASSEMBLER_FIELDS = ("_calls", "_last", "_max_argument_chars")
_ASSEMBLER_FIELDS = (
    "_by_id",
    "_discarded_overflow",
    "_empty_arguments",
    "_empty_parsed",
    "_id_factory",
    "_json_listener",
    "_limits",
    "_notes",
    "_open",
    "_tools",
    "_warned_keys",
)


class _AssemblerBody:
    """Assembles streamed tool-call deltas into complete, validated tool calls.

    Feed it every tool-call delta of one model response, in order, with ``feed``; call
    ``finish`` when the response ends. Each returns the events it caused. ``reset`` forgets
    everything, for the next response.

    ``limits`` bounds memory and work (see ``Limits``). ``empty_arguments`` is the JSON object
    text that a call whose arguments stayed empty (or whitespace) gets at ``finish``.
    ``json_listener``, if given, receives the tokenizer's JSON events of every call as
    ``(index, batch)``; nothing is spent on them when it is ``None``.

    ``tools`` declares the tools (an OpenAI ``tools`` list, Anthropic tools, Gemini function
    declarations, or a mapping name → JSON Schema): a call whose name can no longer become a
    declared name is discarded with ``UnknownTool`` at that delta, and its arguments are
    checked against the tool's schema as they stream and, whole, with ``jsonschema`` at the
    close. ``on_schema_violation`` is ``"discard"`` (the call is discarded at the delta that
    made the violation certain, never ready) or ``"warn"`` (``CallWarning``, the call goes
    on). ``partial_arguments`` keeps ``CallSnapshot.partial_arguments`` (on by default with
    ``tools`` or ``watch_strings``); ``watch_strings`` maps tool names to JSON Pointers of
    strings to stream as ``ArgumentsValue`` events. See docs/schema.md.

    ``id_factory(index, position) -> str`` makes the id of a call that ends complete without
    one (``position``: its 0-based order among the calls of the stream), instead of
    ``toolstitch_call_<index>``; an id already used in the stream is suffixed ``-2``,
    ``-3``…, and a factory that returns anything but a non-empty ``str`` raises
    ``UsageError`` from the ``feed``/``finish`` that needed the id (see docs/concepts.md).
    """

    # The body shared by the two paths (``_PythonAssembler``, the native ``Assembler``), which
    # hold the fields (mypy checks them as declared here).
    if not TYPE_CHECKING:
        __slots__ = ()
    #: The type of the call records it makes.
    _call_class: ClassVar[type[_CallBody]]
    #: Whether its calls' tokenizers may be the native ``Scanner`` (``make_tokenizer``).
    _scan_natively: ClassVar[bool]

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        empty_arguments: str = EMPTY_ARGUMENTS,
        json_listener: Callable[[int, JSONEventBatch], None] | None = None,
        tools: object = None,
        on_schema_violation: str = "discard",
        watch_strings: Mapping[str, Iterable[str]] | None = None,
        partial_arguments: bool | None = None,
        id_factory: IdFactory | None = None,
    ) -> None:
        self._id_factory = check_id_factory(id_factory)
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"limits must be a Limits, got {type(limits).__name__}")
        self._limits = limits or _DEFAULT_LIMITS
        self._max_argument_chars = self._limits.max_argument_chars
        if not isinstance(empty_arguments, str):
            raise TypeError("empty_arguments must be a str holding a JSON object")
        if empty_arguments == _DEFAULT_EMPTY:
            parsed = _DEFAULT_EMPTY_PARSED  # shared: ``_ready`` hands out copies only
        else:
            try:
                parsed = load_json(empty_arguments)
            except ValueError:
                parsed = None
        if not isinstance(parsed, dict):
            raise ValueError(f"empty_arguments must be a JSON object text, got {empty_arguments!r}")
        self._empty_arguments = empty_arguments
        self._empty_parsed: dict[str, Any] = parsed
        self._json_listener = json_listener
        if partial_arguments is None:
            partial_arguments = tools is not None or bool(watch_strings)
        self._tools: ToolChecks | None = None
        if tools is not None or watch_strings or partial_arguments:
            self._tools = ToolChecks(
                tools,
                on_schema_violation=on_schema_violation,
                watch_strings=watch_strings,
                partial_arguments=partial_arguments,
            )
        elif on_schema_violation not in ("discard", "warn"):
            raise ValueError("on_schema_violation must be 'discard' or 'warn'")
        self._calls: dict[int, _Call] = {}
        self._discarded_overflow = _NO_INDICES
        self._warned_keys: dict[int, set[str]] | None = None  # made at the first unread key
        self._by_id: dict[str, _Call] = {}
        self._last: _Call | None = None
        self._open = 0
        # index -> (signature, caller) for the calls a provider said more about (``note``).
        self._notes: dict[int, tuple[str | None, Mapping[str, Any] | None]] = {}

    # -- public surface ---------------------------------------------------------------------

    @property
    def limits(self) -> Limits:
        """The ``Limits`` this assembler enforces."""
        return self._limits

    @property
    def pending(self) -> int:
        """Calls neither complete nor discarded."""
        return self._open

    @property
    def calls(self) -> tuple[CallSnapshot, ...]:
        """Every call seen so far (within ``max_calls``), in index order."""
        return tuple(self._calls[i].snapshot() for i in sorted(self._calls))

    def call(self, index: int) -> CallSnapshot | None:
        """A snapshot of call ``index`` (``None`` if unseen). O(1): cheap to poll per delta."""
        call = self._calls.get(index)
        return None if call is None else call.snapshot()

    def record(self, index: int) -> CallRecord | None:
        """The core's record of call ``index`` (``CallRecords``), read-only; ``None`` if
        unseen."""
        return self._calls.get(index)

    def generated_id(self, index: int) -> str:
        """The id call ``index`` would get if it ended now without one (``CallRecords``):
        made as at the close, with the call's position (the next position for an index not
        seen yet)."""
        call = self._calls.get(index)
        position = len(self._calls) if call is None else call.position
        return generated_id(index, self._by_id, factory=self._id_factory, position=position)

    def complete(self) -> list[ToolCall]:
        """The complete calls, sorted by index."""
        calls = self._calls
        return [result for index in sorted(calls) if (result := calls[index].result) is not None]

    def reset(self) -> None:
        """Forget every call (between rounds of a tool loop); limits and options stay."""
        for call in self._calls.values():
            call.tokenizer.close()
        self._calls = {}
        self._discarded_overflow = _NO_INDICES
        self._by_id = {}
        self._last = None
        self._open = 0
        self._notes = {}
        self._warned_keys = None

    def note(
        self,
        index: int,
        *,
        signature: str | None = None,
        caller: Mapping[str, Any] | None = None,
    ) -> None:
        """Keep what the provider said about call ``index`` besides its deltas, for its
        ``ToolCall``: its ``signature`` (Gemini's ``thoughtSignature``) and ``caller``.

        Give it before the fragment that completes the call (it may come before the call's
        first delta); a later note for the same index adds to the earlier one. Noting a call
        that is already complete or discarded raises ``InvalidDelta``: its ``ToolCall`` is out.
        """
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise InvalidDelta(f"index must be a non-negative int, got {index!r}")
        call = self._calls.get(index)
        if call is not None and call.state.is_final:
            raise InvalidDelta(f"call {index} is already {call.state}: note it before", index=index)
        if signature is not None and not isinstance(signature, str):
            raise InvalidDelta(f"signature must be a str, got {type(signature).__name__}")
        notes = self._notes
        if index not in notes and len(notes) >= self._limits.max_calls:
            return  # bounded like the calls themselves: past max_calls, a note is not kept
        old_signature, old_caller = notes.get(index, _NO_NOTE)
        notes[index] = (
            old_signature if signature is None else signature,
            old_caller if caller is None else caller,
        )

    def feed(self, delta: object) -> list[Event]:
        """Take one tool-call delta; return the events it caused.

        ``delta`` is a ``Delta``, a Mapping in the OpenAI wire shape, or an object with the
        same attributes (the ``openai`` SDK's ``ChoiceDeltaToolCall``). Raises
        ``InvalidDelta`` (and changes nothing) for anything else - but a ``str`` (a text
        part of a message, fed in with the deltas) is ignored, as the seed collector
        ignores it: no events. A key of a mapping that no delta shape reads gives one
        ``CallWarning`` (``UnreadField``) per key and call; a mapping with nothing readable
        at all raises ``InvalidDelta``.
        """
        fields = wire_fields(delta)
        if fields is None:
            return self._feed_other(delta)
        return self._apply(*fields)

    def _feed_other(self, delta: object) -> list[Event]:
        """``feed`` of anything but a plain wire dict or a ``Delta``: a text part (ignored),
        a mapping of another shape or with keys no shape reads (reported on the call the
        delta went to), an SDK object, or what is not a delta (``InvalidDelta``)."""
        if isinstance(delta, str):
            return []
        events = self._apply(*delta_fields(delta))  # raises InvalidDelta, changing nothing
        unread = unread_keys(delta) if isinstance(delta, Mapping) else ()
        call = self._last
        if unread and call is not None:
            self._unread(call, unread, events)
        return events

    def _unread(self, call: _Call, keys: tuple[str, ...], events: list[Event]) -> None:
        if self._warned_keys is None:
            self._warned_keys = {}
        warned = self._warned_keys.setdefault(call.index, set())
        for key in keys:
            if key in warned or len(warned) >= _MAX_UNREAD_KEYS:
                continue
            warned.add(key)
            error = UnreadField(
                f"the delta's key {key!r} is not read by toolstitch (no delta shape has it); "
                "it was ignored",
                key=key,
                index=call.index,
                call_id=call.id,
                name=call.name or None,
            )
            events.append(CallWarning(index=call.index, error=error))

    def _apply(
        self,
        index: int | None,
        call_id: str | None,
        kind: str | None,
        name: str | None,
        arguments: str | None,
    ) -> list[Event]:
        call = self._calls.get(index) if index is not None else None
        if (
            call is not None
            and arguments
            and call.state is _ACCUMULATING_ARGS
            and not (call_id or name or call.closed)
        ):
            # The hot path: one more fragment for a call that is streaming its arguments.
            self._last = call
            buffer = call.buffer
            length = buffer.length + len(arguments)
            if length <= self._max_argument_chars:
                buffer.append_to_length(arguments, length)
                events: list[Event] = []
                try:
                    closed = call.tokenizer.feed(arguments)
                except _TOKENIZER_ERRORS as exc:
                    self._rejected(call, arguments, exc, events)
                    if call.closed:  # closed, then trailing text in the same fragment
                        self._settle_closed(call, events)
                    return events
                events.append(_arguments_delta(call.index, arguments))
                checks = call.checks
                if checks is not None and checks.pending:
                    self._apply_checks(call, checks, events)
                    if call.state is _DISCARDED:
                        return events
                if closed:
                    self._closed(call, arguments, events)
                return events
        return self._apply_slow(call, index, call_id, kind, name, arguments)

    def _apply_slow(
        self,
        call: _Call | None,
        index: int | None,
        call_id: str | None,
        kind: str | None,
        name: str | None,
        arguments: str | None,
    ) -> list[Event]:
        """Any delta but one more fragment for a call streaming its arguments."""
        events: list[Event] = []
        if call is None:
            call = self._route(index, call_id, name, events)
            if call is None:
                return events
        if call.state is _DISCARDED:
            return events
        self._last = call
        if kind is not None and call.type is None:
            call.type = kind
        if call_id:
            self._take_id(call, call_id, events)
        if name and call.state is not _DISCARDED:
            self._take_name(call, name, events)
        if arguments and call.state is not _DISCARDED:
            self._take_arguments(call, arguments, events)
        if is_ready(call.closed, bool(call.name), call.id is not None) and not call.state.is_final:
            self._ready(call, events)
        if call.trailing_offset is not None:
            # Reported after CallReady when the same fragment closed the object.
            self._trailing(call, call.trailing_offset, events)
        return events

    def feed_arguments(self, index: int, fragment: str) -> list[Event]:
        """``feed(Delta(index=index, arguments=fragment))``, for adapters that already know
        both, without building a delta. Raises ``InvalidDelta`` for wrong types."""
        if type(index) is not int or index < 0 or type(fragment) is not str:
            return self.feed(Delta(index=index, arguments=fragment))  # raises InvalidDelta
        return self._apply(index, None, None, None, fragment)

    def feed_all(self, deltas: Iterable[object]) -> list[Event]:
        """``feed`` each delta in turn; the events of all of them, in order."""
        events: list[Event] = []
        for delta in deltas:
            events.extend(self.feed(delta))
        return events

    def finish(self, finish_reason: str | Ending | None = None) -> list[Event]:
        """The response ended: resolve every open call. Idempotent (the first call's
        ``finish_reason`` decides).

        ``finish_reason`` is how it ended: the provider's finish reason as it sent it
        (``"tool_calls"``, ``"stop"``, ``"length"``, ``"end_turn"``, ``"MAX_TOKENS"``...,
        read by ``toolstitch.vocab.endings.ending_of``) or an ``Ending``; ``None`` when none
        came (the stream stopped without one).

        No name: discarded with ``MissingName``. Arguments a closed object: complete.
        Arguments empty or whitespace: complete with ``empty_arguments`` when the response
        ended normally (``"tool_calls"``, ``"stop"``... ``Ending.COMPLETE``), otherwise -
        the token limit, a filter, an error, no reason at all - discarded with
        ``TruncatedArguments`` (its ``ending`` says which): a call whose arguments never
        arrived is never dispatched after a cut. Arguments a valid but unclosed prefix:
        discarded with ``TruncatedArguments``. A complete call without an id gets a
        generated one.
        """
        events: list[Event] = []
        if not self._open:  # every call has ended already: nothing to resolve
            return events
        ending = ending_of(finish_reason)
        for index in sorted(self._calls):
            self._resolve(self._calls[index], events, ending)
        return events

    def end(self, index: int, ending: Ending | str | None = Ending.CLOSED) -> list[Event]:
        """Call ``index`` is over: the provider closed it (e.g. Anthropic
        ``content_block_stop``; ``ending`` is then ``Ending.CLOSED``, the default), or the
        response's end reached it (``ending`` says how, as ``finish``'s ``finish_reason``).

        Resolves that one call as ``finish`` would; a call already ended, or an index never
        seen, gives no events.
        """
        if isinstance(index, bool) or not isinstance(index, int):
            raise InvalidDelta(f"index must be an int, got {type(index).__name__}")
        events: list[Event] = []
        call = self._calls.get(index)
        if call is not None:
            self._resolve(call, events, ending_of(ending))
        return events

    def reject(self, index: int, error: ToolCallError) -> list[Event]:
        """Discard call ``index`` with ``error``: its reader found it cannot be a call (a
        text format's body that is not the format's; see ``toolstitch.text``). A call
        already ended, or an index never seen, gives no events."""
        events: list[Event] = []
        call = self._calls.get(index)
        if call is not None and not call.state.is_final:
            self._discard(call, error, events)
        return events

    def _resolve(self, call: _Call, events: list[Event], ending: Ending) -> None:
        if call.state.is_final:
            return
        # ``closed`` first: the blank test joins the text, needed only for an open call.
        blank = call.closed or not call.text().strip(WHITESPACE)
        outcome = at_end(bool(call.name), call.closed, blank, ending)
        if outcome == MISSING_NAME:
            self._discard(call, MissingName("the call never received a function name"), events)
        elif outcome == READY:
            self._ready(call, events)
        elif outcome == EMPTY:
            self._ready(call, events, empty=True)
        elif blank:
            self._discard(call, _never_arrived(ending), events)
        else:
            self._discard(
                call,
                TruncatedArguments(
                    "the arguments ended before their object closed "
                    f"({call.length} characters received, "
                    f"{_open_brackets(call.tokenizer.depth)} still open)",
                    ending=ending.value,
                ),
                events,
            )

    # -- routing ----------------------------------------------------------------------------

    def _route(
        self, index: int | None, call_id: str | None, name: str | None, events: list[Event]
    ) -> _Call | None:
        if index is None:
            # No index: a new id opens a new call at the next free index; anything else
            # continues the most recent call (see docs/concepts.md, "Deltas without index").
            last = self._last
            if call_id and call_id in self._by_id:
                return self._by_id[call_id]
            if last is not None and not (call_id and last.id is not None):
                return last
            index = max(self._calls, default=-1) + 1
            if self._discarded_overflow:
                index = max(index, self._discarded_overflow.highest + 1)
        call = self._calls.get(index)
        if call is not None:
            return call
        if index in self._discarded_overflow:
            return None
        if len(self._calls) >= self._limits.max_calls:
            if self._discarded_overflow is _NO_INDICES:
                self._discarded_overflow = _IndexSet()
            self._discarded_overflow.add(index)
            error = LimitExceeded(
                f"more than {self._limits.max_calls} calls in one stream",
                limit="max_calls",
                value=self._limits.max_calls,
                index=index,
                call_id=call_id,
                name=name,
            )
            events.append(CallStarted(index=index, id=call_id, name=name))
            events.append(
                CallDiscarded(index=index, id=call_id, name=name, arguments="", error=error)
            )
            return None
        limits = self._limits
        listener = self._json_listener
        buffer = self._call_class._text()
        call = self._call_class(
            index,
            make_tokenizer(
                max_depth=limits.max_depth,
                max_number_digits=limits.max_number_digits,
                listener=None if listener is None else _bind_listener(listener, index),
                text=buffer.text,
                native=self._scan_natively,
            ),
            len(self._calls),
            buffer,
        )
        self._calls[index] = call
        self._open += 1
        events.append(_call_started(index, call_id or None, name or None))
        return call

    # -- pieces of a delta ------------------------------------------------------------------

    def _take_id(self, call: _Call, call_id: str, events: list[Event]) -> None:
        if call.id is None:
            if len(call_id) > self._limits.max_id_chars:
                self._limit(call, "max_id_chars", len(call_id), events)
                return
            call.id = call_id
            self._by_id.setdefault(call_id, call)
            for trigger in on_first_id(call.state, bool(call.length)):
                call.move(trigger)
        elif call.id != call_id:
            events.append(
                CallWarning(
                    index=call.index,
                    error=ConflictingId(
                        f"the call already has id {call.id!r}; ignored {call_id!r}",
                        received=call_id,
                        index=call.index,
                        call_id=call.id,
                        name=call.name or None,
                    ),
                )
            )

    def _take_name(self, call: _Call, name: str, events: list[Event]) -> None:
        if call.state is _COMPLETE:
            events.append(
                CallWarning(
                    index=call.index,
                    error=UnexpectedDelta(
                        f"name text {name!r} arrived after the call was complete; ignored",
                        index=call.index,
                        call_id=call.id,
                        name=call.name,
                    ),
                )
            )
            return
        if len(call.name) + len(name) > self._limits.max_name_chars:
            self._limit(call, "max_name_chars", len(call.name) + len(name), events)
            return
        call.name += name
        if self._tools is not None:
            unknown = self._tools.name_error(call.name, complete=False)
            if unknown is not None:
                self._discard(call, unknown, events)

    def _take_arguments(self, call: _Call, fragment: str, events: list[Event]) -> None:
        if call.closed:
            self._after_close(call, fragment, events)
            return
        if self._tools is not None and not call.tokenizer.fed and call.name:
            # The arguments start: the name is complete now.
            unknown = self._tools.name_error(call.name, complete=True)
            if unknown is not None:
                self._discard(call, unknown, events)
                return
            checks = self._tools.start(call.index, call.name, self._json_listener)
            if checks is not None:
                call.checks = checks
                call.tokenizer.set_listener(checks.listen)
        length = call.length + len(fragment)
        if length > self._limits.max_argument_chars:
            self._limit(call, "max_argument_chars", length, events)
            return
        call.buffer.append(fragment)
        for trigger in on_arguments(call.state):
            call.move(trigger)
        try:
            closed = call.tokenizer.feed(fragment)
        except _TOKENIZER_ERRORS as exc:
            self._rejected(call, fragment, exc, events)
            return
        events.append(_arguments_delta(call.index, fragment))
        checks = call.checks
        if checks is not None and checks.pending:
            self._apply_checks(call, checks, events)
            if call.state is _DISCARDED:
                return
        if closed:
            self._mark_closed(call, fragment)

    def _rejected(self, call: _Call, fragment: str, exc: Exception, events: list[Event]) -> None:
        """The tokenizer refused ``fragment`` (already added to the call's text).

        The first fault in the text wins, by position, however the text was cut. The call's
        listener (its schema checks) first hears the fragment up to the first fault (the
        tokenizer dropped it whole), so a violation before the fault is reported as when a
        cut falls between the two; then the first of the faults the tokenizer checks."""
        found = diagnose(call.text(), self._limits.max_depth, exponents=True)
        digits = exc.offset if isinstance(exc, DigitsExceeded) else None
        stop = _fault_free(digits, found)
        self._hear_before_fault(call, fragment, stop)
        checks = call.checks
        if checks is not None and checks.violations and not _closes_before_fault(found):
            # (When the object closed before the fault, the close applies the checks.)
            self._apply_checks(call, checks, events, end=stop, values=False)
            if call.state is _DISCARDED:
                return
        if digits is not None and digits == stop:
            limit = self._limits.max_number_digits
            self._limit(call, "max_number_digits", limit, events, offset=digits)
        else:
            self._malformed(call, fragment, found, events)

    def _hear_before_fault(self, call: _Call, fragment: str, stop: int | None) -> None:
        """The call's listener hears ``fragment`` up to ``stop`` in the call's text, where the
        text before the fault ends (``None``: nothing to hear)."""
        start = call.length - len(fragment)
        if stop is None or stop <= start:
            return
        listener: JSONEventListener | None = None
        if call.checks is not None:
            listener = call.checks.listen
        elif self._json_listener is not None:
            listener = _bind_listener(self._json_listener, call.index)
        if listener is not None:
            limits = self._limits
            replay(
                call.text(),
                start,
                stop,
                listener,
                max_depth=limits.max_depth,
                max_number_digits=limits.max_number_digits,
            )

    def _mark_closed(self, call: _Call, fragment: str) -> None:
        """``fragment``, just accepted, closed the arguments object."""
        call.closed = True
        if call.tokenizer.exact_close:
            # yajl rejected anything but whitespace after the brace: the brace is the last
            # non-whitespace character, and the call's text ends there whatever the split.
            call.ready_length = call.length - (len(fragment) - len(fragment.rstrip(WHITESPACE)))
            return
        # A slower ijson backend does not reject trailing text in this fragment.
        found = diagnose(call.text())
        call.ready_length = call.length if found.end is None else found.end
        if found.offset is not None and found.end is not None:
            call.trailing_offset = found.offset

    def _closed(self, call: _Call, fragment: str, events: list[Event]) -> None:
        """The hot path's fragment closed the arguments object: ready it if it can be."""
        self._mark_closed(call, fragment)
        self._settle_closed(call, events)

    def _settle_closed(self, call: _Call, events: list[Event]) -> None:
        if is_ready(call.closed, bool(call.name), call.id is not None):
            self._ready(call, events)
        if call.trailing_offset is not None:
            self._trailing(call, call.trailing_offset, events)

    def _after_close(self, call: _Call, fragment: str, events: list[Event]) -> None:
        offset = call.length
        if offset + len(fragment) <= self._limits.max_argument_chars:
            # Past the limit the text stops growing; the call itself already stands.
            call.buffer.append(fragment)
        rest = fragment.lstrip(WHITESPACE)
        if rest and not call.trailing_warned:
            self._trailing(call, offset + len(fragment) - len(rest), events)

    # -- outcomes ---------------------------------------------------------------------------

    def _ready(self, call: _Call, events: list[Event], *, empty: bool = False) -> None:
        if empty:
            arguments, parsed = self._empty_arguments, dict(self._empty_parsed)
            # Complete now: whatever arrives for it later is text after its arguments.
            call.closed = True
            call.ready_length = call.length
        else:
            arguments = call.text()[: call.ready_length]
            # The halves of a pair may have come as separate code points: load them joined.
            source = join_surrogates(arguments)
            try:
                parsed = load_json(source)
            except (ValueError, RecursionError) as exc:
                # The tokenizer accepted what json.loads refuses: never report it ready.
                self._unloadable(call, exc, events)
                return
        if self._tools is not None and not self._checked_at_close(call, parsed, events):
            return
        if call.id is None:
            call.id = generated_id(
                call.index, self._by_id, factory=self._id_factory, position=call.position
            )
            self._by_id[call.id] = call
        call.tokenizer.close()
        signature, caller = self._notes.pop(call.index, _NO_NOTE) if self._notes else _NO_NOTE
        call.result = _tool_call(
            call.index,
            call.id,
            call.type or _DEFAULT_TYPE,
            call.name,
            arguments,
            parsed,
            signature,
            caller,
        )
        call.move("complete")
        self._open -= 1
        events.append(_call_ready(call.result))

    def _checked_at_close(self, call: _Call, parsed: object, events: list[Event]) -> bool:
        """The declared-tool checks due at the close; False if they discarded the call."""
        tools = self._tools
        assert tools is not None
        unknown = tools.name_error(call.name, complete=True)
        if unknown is not None:
            self._discard(call, unknown, events)
            return False
        checks = call.checks
        if checks is not None and checks.pending:
            self._apply_checks(call, checks, events)
            if call.state is _DISCARDED:
                return False
        already = set() if checks is None else {(v.path, v.keyword) for v in checks.reported}
        for violation in tools.final(call.name, parsed):
            if (violation.path, violation.keyword) in already:
                continue
            error = self._schema_error(call, violation, call.ready_length)
            if tools.policy == "discard":
                self._discard(call, error, events)
                return False
            self._schema_warning(call, error, events)
        return True

    def _apply_checks(
        self,
        call: _Call,
        checks: CallChecks,
        events: list[Event],
        *,
        end: int | None = None,
        values: bool = True,
    ) -> None:
        """Turn what the call's checks collected during this fragment into events.

        ``end``: where the text they heard ends, when the call's text goes on (a fault, or
        text after the object); the violations are located before it, as they are when the
        fragment ends there. Without ``values`` only the violations count (the fragment is
        refused: its values are not news)."""
        violations, updates = checks.take()
        index = call.index
        for path, value, done in updates if values else ():
            events.append(ArgumentsValue(index=index, path=path, value=value, done=done))
        assert self._tools is not None
        for violation in violations:
            checks.reported.append(violation)
            error = self._schema_error(call, violation, end)
            if self._tools.policy == "discard":
                self._discard(call, error, events)
                return
            self._schema_warning(call, error, events)

    def _schema_error(self, call: _Call, violation: Any, end: int | None = None) -> SchemaViolation:
        from toolstitch.json.pointer import locate_pointer

        text = call.text() if end is None else call.text()[:end]
        offset = locate_pointer(
            text, violation.path, key=violation.at_key, occurrences=violation.occurrences
        )
        where = "" if offset is None else f" (offset {offset})"
        return SchemaViolation(
            f"{violation.path or '/'}: {violation.message}{where}",
            path=violation.path,
            keyword=violation.keyword,
            offset=offset,
            index=call.index,
            call_id=call.id,
            name=call.name or None,
        )

    def _schema_warning(self, call: _Call, error: SchemaViolation, events: list[Event]) -> None:
        call.schema_warnings += 1
        if call.schema_warnings > MAX_WARNINGS:
            return  # bounded: each warning costs a scan of the text to locate it
        events.append(CallWarning(index=call.index, error=error))

    def _unloadable(self, call: _Call, exc: Exception, events: list[Event]) -> None:
        text = call.text()
        offset = getattr(exc, "pos", None)
        if not isinstance(offset, int):
            offset = 0
        line, column = locate(text, offset)
        self._discard(
            call,
            MalformedArguments(
                f"the arguments do not load as JSON: {exc}",
                offset=offset,
                line=line,
                column=column,
                snippet=snippet(text, offset),
                expected="valid JSON",
            ),
            events,
        )

    def _discard(self, call: _Call, error: ToolCallError, events: list[Event]) -> None:
        error = error.with_call(index=call.index, call_id=call.id, name=call.name or None)
        call.error = error
        call.tokenizer.close()
        call.move("discard")
        self._open -= 1
        signature = self._notes.pop(call.index, _NO_NOTE)[0] if self._notes else None
        # The event carries the text for the error report; the call keeps none.
        events.append(
            CallDiscarded(
                index=call.index,
                id=call.id,
                name=call.name or None,
                arguments=call.text(),
                error=error,
                signature=signature,
            )
        )
        call.buffer.clear()

    def _limit(
        self,
        call: _Call,
        limit: str,
        value: int,
        events: list[Event],
        *,
        offset: int | None = None,
    ) -> None:
        # "number_exponent" is Decimal's own bound on exponents, not a field of Limits.
        allowed = getattr(self._limits, limit, value)
        where = "" if offset is None else f" at offset {offset}"
        error = LimitExceeded(
            f"the call passed the limit {limit} = {allowed} ({value}){where}",
            limit=limit,
            value=value,
            offset=offset,
        )
        self._discard(call, error, events)

    def _malformed(self, call: _Call, fragment: str, found: Diagnosis, events: list[Event]) -> None:
        text = call.text()
        if found.too_deep is not None:
            # The same fragment nested too deep before it went wrong: the limit came first.
            self._limit(
                call, "max_depth", self._limits.max_depth + 1, events, offset=found.too_deep
            )
            return
        if found.too_large is not None:  # Decimal's own bound on exponents (NumberOutOfRange)
            self._limit(call, "number_exponent", 10**18, events, offset=found.too_large)
            return
        if found.offset is not None and found.end is not None:
            # The object closed earlier in this very fragment and text follows it: as if
            # the fragment had ended with the object (the checks first, as there).
            events.append(ArgumentsDelta(index=call.index, fragment=fragment))
            checks = call.checks
            if checks is not None and checks.pending:
                self._apply_checks(call, checks, events, end=found.end)
                if call.state is _DISCARDED:
                    return
            call.closed = True
            call.ready_length = found.end
            call.trailing_offset = found.offset
            return
        offset = len(text) - 1 if found.offset is None else found.offset
        expected = found.expected or "valid JSON"
        line, column = locate(text, offset)
        got = repr(text[offset]) if offset < len(text) else "the end"
        error = MalformedArguments(
            f"invalid JSON in the arguments at line {line}, column {column} "
            f"(offset {offset}): expected {expected}, got {got}",
            offset=offset,
            line=line,
            column=column,
            snippet=snippet(text, offset),
            expected=expected,
        )
        self._discard(call, error, events)

    def _trailing(self, call: _Call, offset: int, events: list[Event]) -> None:
        call.trailing_warned = True
        call.trailing_offset = None
        if call.state is _DISCARDED:
            return  # its text is read no further after its discard, however it was cut
        text = call.text()
        line, column = locate(text, offset)
        events.append(
            CallWarning(
                index=call.index,
                error=TrailingArguments(
                    f"text after the arguments object at line {line}, column {column} "
                    f"(offset {offset}) was ignored: {text[offset : offset + 20]!r}",
                    offset=offset,
                    line=line,
                    column=column,
                    snippet=snippet(text, offset),
                    index=call.index,
                    call_id=call.id,
                    name=call.name or None,
                ),
            )
        )


class _IndexSet:
    """A set of call indices kept as sorted disjoint ranges ``[start, stop)``.

    The indices refused past ``max_calls`` usually come in runs (0, 1, 2, …): a run costs one
    range whatever its length, so a stream of a million extra indices keeps a few bytes, not
    a set entry each.
    """

    __slots__ = ("_starts", "_stops", "highest")

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._stops: list[int] = []
        self.highest = -1  # the largest index in the set (-1 when empty)

    def __bool__(self) -> bool:
        return bool(self._starts)

    def __contains__(self, index: object) -> bool:
        if type(index) is not int or index > self.highest:  # past the last run (-1: empty)
            return False
        at = bisect.bisect_right(self._starts, index) - 1
        return at >= 0 and index < self._stops[at]

    def add(self, index: int) -> None:
        starts, stops = self._starts, self._stops
        if index > self.highest:
            self.highest = index
        if stops and stops[-1] == index:  # the common case: the next index of the last run
            stops[-1] = index + 1
            return
        at = bisect.bisect_right(starts, index) - 1
        if at >= 0 and index < stops[at]:
            return
        if at >= 0 and stops[at] == index:
            stops[at] = index + 1
        else:
            at += 1
            starts.insert(at, index)
            stops.insert(at, index + 1)
        if at + 1 < len(starts) and starts[at + 1] == stops[at]:  # two runs meet
            stops[at] = stops.pop(at + 1)
            del starts[at + 1]


#: The refused indices of every assembler that has refused none: shared, never added to
#: (``_route`` makes an assembler its own set at the first refusal), so that a new assembler
#: makes no set.
_NO_INDICES = _IndexSet()


def _bind_listener(
    listener: Callable[[int, JSONEventBatch], None], index: int
) -> JSONEventListener:
    def forward(batch: JSONEventBatch) -> None:
        listener(index, batch)

    return forward


#: What a call whose arguments never arrived was cut by, for its ``TruncatedArguments``.
_CUT_BY: dict[Ending, str] = {
    Ending.LENGTH: "the response hit its token limit",
    Ending.CONTENT_FILTER: "a content filter stopped the response",
    Ending.INCOMPLETE: "the response ended without completing",
    Ending.ERROR: "the provider sent an error",
    Ending.DECODE_ERROR: "the stream could not be decoded",
    Ending.CANCELLED: "the stream was cancelled",
    Ending.ABANDONED: "the stream stopped without a finish reason",
}


def _fault_free(digits: int | None, found: Diagnosis) -> int | None:
    """Where the text before its first fault ends: a run of ``digits`` past the limit, or
    what ``found`` (the text's diagnosis) found; ``None`` if nothing was found."""
    closing = found.end if _closes_before_fault(found) else found.offset
    faults = (digits, found.too_deep, found.too_large, closing)
    return min((at for at in faults if at is not None), default=None)


def _closes_before_fault(found: Diagnosis) -> bool:
    """Whether the object closed before the fault, and text follows it (not nested too deep
    before it closed: that limit came first)."""
    return found.too_deep is None and found.offset is not None and found.end is not None


def _never_arrived(ending: Ending) -> TruncatedArguments:
    """The error of a named call whose arguments never arrived when ``ending`` cut it."""
    cause = _CUT_BY.get(ending, f"the response ended ({ending})")
    return TruncatedArguments(
        f"{cause} before the call's arguments arrived; it is not dispatched with empty arguments",
        ending=ending.value,
    )


def _open_brackets(depth: int) -> str:
    """``depth`` containers left open by an unclosed (valid) prefix, for messages."""
    return f"{depth} container{'s' if depth != 1 else ''}"


class _PythonAssembler(_AssemblerBody):
    """The pure-Python assembler: the reference, and the fallback of the native one."""

    __slots__ = _HOT_ASSEMBLER_FIELDS + _ASSEMBLER_FIELDS
    _call_class = _PythonCall
    _scan_natively = False


def _native_classes(native: Any) -> tuple[type[_CallBody], type[_AssemblerBody]]:
    """The call record and the assembler of the native path: the C bases of ``native``
    (docs/native.md, "The fast feed") under the same Python bodies. Their ``feed`` and
    ``feed_arguments`` are C; what C does not take goes to the Python methods."""
    native.configure_fast_path(
        join_every=JOIN_EVERY,
        text_snapshot=TextSnapshot,
        empty_text=ChunkedText().snapshot(),
        accumulating=_ACCUMULATING_ARGS,
        arguments_delta=ArgumentsDelta,
        index_slot=vars(ArgumentsDelta)["index"],
        fragment_slot=vars(ArgumentsDelta)["fragment"],
        delta_type=Delta,
        mapping=Mapping,
        not_deltas=NOT_DELTAS,
        checked_fields=checked_fields,
        python_feed=_AssemblerBody.feed,
        python_feed_arguments=_AssemblerBody.feed_arguments,
    )

    class _NativeCall(native.CallBase, _CallBody):  # type: ignore[misc]
        __slots__ = _CALL_FIELDS
        _text = native.TextBuffer

    class _NativeAssembler(native.AssemblerBase, _AssemblerBody):  # type: ignore[misc]
        __slots__ = _ASSEMBLER_FIELDS
        _call_class = _NativeCall
        _scan_natively = True

    native.configure_ready_path(
        call_class=_NativeCall,
        assembler_class=_NativeAssembler,
        tool_call=ToolCall,
        call_ready=CallReady,
        complete=next_state(_ACCUMULATING_ARGS, "complete"),
        scan_once=scan_value,
        default_type=_DEFAULT_TYPE,
        is_ready=is_ready,
        first_moves=(_ACCUMULATING_NAME, _moved(_ACCUMULATING_NAME, on_arguments)),
    )
    native.configure_start_path(
        assembler_class=_NativeAssembler,
        call_class=_NativeAssembler._call_class,
        make_tokenizer=make_tokenizer,
        call_started=CallStarted,
        start_moves=(_AWAITING_ID, _moved(_AWAITING_ID, lambda state: on_first_id(state, False))),
    )
    return _NativeCall, _NativeAssembler


def _moved(state: CallState, triggers: Callable[[CallState], tuple[str, ...]]) -> CallState:
    """Where ``state`` goes with the moves ``triggers(state)`` fires (what ``_CallBody.move``
    does for each): handed to C as data, so the machine stays the one place of its rules."""
    for trigger in triggers(state):
        state = next_state(state, trigger)
    return state


_NativeCall: type[_CallBody] | None = None
_NativeAssembler: type[_AssemblerBody] | None = None
if extension is not None:
    _NativeCall, _NativeAssembler = _native_classes(extension)

if not TYPE_CHECKING:
    _Call = _PythonCall if _NativeCall is None else _NativeCall
    Assembler = _PythonAssembler if _NativeAssembler is None else _NativeAssembler
    publish(_Call, "_Call", _CallBody)
    publish(Assembler, "Assembler", _AssemblerBody)
else:
    # What type checkers and the API reference (griffe reads the source) see: the body both
    # classes share, with every method and the public docstring.
    _Call = _CallBody
    Assembler = _AssemblerBody
