"""Stateful properties: arbitrary sequences of deltas, finish, end and reset.

``AssemblerMachine`` drives an ``Assembler`` with valid fragments, garbage, ids, names,
index-less deltas and inputs that are not deltas at all, against ``Model``, a small
reference written here from docs/concepts.md (routing of index-less deltas, ids set once,
names concatenated, readiness when the object has closed and the name and id are known, the
``finish`` rules) with tests/reference.py deciding what the text is. After every step:

* every started call ends exactly once (``CallReady`` + ``CallDiscarded`` per index, counted
  across all events), and nothing but warnings follows its end;
* states only move forward (awaiting-id < accumulating-name < accumulating-args < final);
* ``pending`` equals the calls not yet ended;
* ``complete()`` is sorted by index and holds only calls whose arguments ``json.loads`` as
  an object, equal to ``parsed_arguments``;
* no exception escapes but ``InvalidDelta``, and after one nothing changed (``calls``,
  ``pending``, ``complete()``);
* the calls, their states, ids, names and texts are the model's.

``StitcherMachine`` does the same through the provider layer: OpenAI Chat SSE events cut
into arbitrary chunks, garbage bytes and ``close``.

Arguments that arrive for a call ``finish``/``end`` made ready with ``{}`` are text after
its (empty) arguments: kept in the snapshot, a ``TrailingArguments`` warning if they are not
whitespace, never an ``ArgumentsDelta`` (bug 1 of the fuzz campaign, fixed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import event as note_event
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from reference import first_bad_offset, joined, load, object_end, typed
from toolstitch import (
    GENERATED_ID_PREFIX,
    ArgumentsDelta,
    Assembler,
    CallDiscarded,
    CallReady,
    CallStarted,
    CallState,
    CallWarning,
    ConflictingId,
    Delta,
    Event,
    InvalidDelta,
    MalformedArguments,
    MissingName,
    TrailingArguments,
    TruncatedArguments,
    UnexpectedDelta,
)

WS = " \t\n\r"
RANK = {
    CallState.AWAITING_ID: 0,
    CallState.ACCUMULATING_NAME: 1,
    CallState.ACCUMULATING_ARGS: 2,
    CallState.COMPLETE: 3,
    CallState.DISCARDED: 3,
}

STATEFUL_SETTINGS = settings(
    max_examples=200,
    stateful_step_count=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Fragments: pieces of valid objects (so calls do complete), whitespace, and garbage.
VALID_TEXTS = [
    '{"city": "Paris", "days": 3}',
    '{"a": [1, 2.5e-3, true, null, {"b": "\\u00e9\\ud83d\\ude80"}]}',
    "{}",
    ' {"k":"v"} ',
    '{"s": "\ud83d\ude80 split"}',
]
FRAGMENTS = st.one_of(
    st.sampled_from(VALID_TEXTS).flatmap(
        lambda text: st.tuples(st.integers(0, len(text)), st.integers(0, len(text))).map(
            lambda ab: text[min(ab) : max(ab)]
        )
    ),
    st.sampled_from(["{", "}", '"', ":", ",", "[", "]", " ", "\n", "x", "NaN", "\ud83d", "\x00"]),
    st.text(alphabet='{}[]":, 0123456789.eE-truefalsn\\u\t', max_size=8),
)
INDICES = st.one_of(st.none(), st.integers(0, 3))
IDS = st.sampled_from([None, None, "", "call_a", "call_b", "call_c"])
NAMES = st.sampled_from([None, None, "", "get", "_x"])


@dataclass
class ModelCall:
    index: int
    id: str | None = None
    name: str = ""
    text: str = ""
    end: str | None = None  # None while open, else "ready" or "discarded"
    empty_ready: bool = False
    trailing_warned: bool = False
    ready_args: str | None = None

    def closed(self) -> bool:
        return object_end(self.text) is not None


@dataclass
class Model:
    """What docs/concepts.md says the assembler does, with reference.py judging the text."""

    calls: dict[int, ModelCall] = field(default_factory=dict)
    by_id: dict[str, ModelCall] = field(default_factory=dict)
    last: ModelCall | None = None
    expected: list[tuple[str, int]] = field(default_factory=list)

    def route(self, index: int | None, call_id: str | None) -> ModelCall:
        if index is None:
            if call_id and call_id in self.by_id:
                return self.by_id[call_id]
            if self.last is not None and not (call_id and self.last.id is not None):
                return self.last
            index = max(self.calls, default=-1) + 1
        call = self.calls.get(index)
        if call is None:
            call = self.calls[index] = ModelCall(index)
            self.expected.append(("started", index))
        return call

    def feed(self, delta: Delta) -> None:
        call = self.route(delta.index, delta.id)
        if call.end == "discarded":
            return
        self.last = call
        self._take_id(call, delta.id)
        self._take_name(call, delta.name)
        if delta.arguments and call.empty_ready:
            self._take_after_empty(call, delta.arguments)
        elif delta.arguments and not self._take_arguments(call, delta.arguments):
            return
        if call.end is None and call.closed() and call.name and call.id is not None:
            self._ready(call)
            pending = getattr(self, "trailing_after_ready", None)
            if pending == call.index:
                self.expected.append(("trailing-arguments", call.index))
        self.trailing_after_ready = None

    trailing_after_ready: int | None = None

    def _take_id(self, call: ModelCall, call_id: str | None) -> None:
        """An id is set once; another one later is a conflict."""
        if not call_id:
            return
        if call.id is None:
            call.id = call_id
            self.by_id.setdefault(call_id, call)
        elif call.id != call_id:
            self.expected.append(("conflicting-id", call.index))

    def _take_name(self, call: ModelCall, name: str | None) -> None:
        """Names are concatenated until the call is ready; after that a name is unexpected."""
        if not name:
            return
        if call.end == "ready":
            self.expected.append(("unexpected-delta", call.index))
        else:
            call.name += name

    def _take_after_empty(self, call: ModelCall, arguments: str) -> None:
        """Text after the empty arguments of a complete call."""
        call.text += arguments
        if arguments.strip(WS) and not call.trailing_warned:
            call.trailing_warned = True
            self.expected.append(("trailing-arguments", call.index))

    def _take_arguments(self, call: ModelCall, arguments: str) -> bool:
        """Append to the text; False when that made the call malformed (it is discarded)."""
        was_closed = call.closed()
        call.text += arguments
        end = object_end(call.text)
        if end is None and first_bad_offset(call.text) is not None:
            self._end(call, "discarded", "malformed-arguments")
            return False
        if end is not None and call.text[end:].strip(WS) and not call.trailing_warned:
            call.trailing_warned = True
            if was_closed or call.end == "ready" or not (call.name and call.id):
                self.expected.append(("trailing-arguments", call.index))
            else:
                self.trailing_after_ready = call.index
        return True

    def _ready(self, call: ModelCall, *, empty: bool = False) -> None:
        if call.id is None:
            candidate, n = f"{GENERATED_ID_PREFIX}{call.index}", 1
            while candidate in self.by_id:
                n += 1
                candidate = f"{GENERATED_ID_PREFIX}{call.index}-{n}"
            call.id = candidate
            self.by_id[candidate] = call
        call.empty_ready = empty
        if empty:
            call.ready_args = "{}"
        else:
            end = object_end(call.text)
            assert end is not None
            call.ready_args = call.text[:end]
        self._end(call, "ready", "ready")

    def _end(self, call: ModelCall, how: str, code: str) -> None:
        call.end = how
        self.expected.append((code, call.index))

    def resolve(self, call: ModelCall, *, whole: bool = True) -> None:
        """``whole``: the provider closed the call, or the response ended normally (the
        only endings after which empty arguments are the empty object)."""
        if call.end is not None:
            return
        if not call.name:
            self._end(call, "discarded", "missing-name")
        elif call.closed():
            self._ready(call)
        elif not call.text.strip(WS) and whole:
            self._ready(call, empty=True)
        else:
            self._end(call, "discarded", "truncated-arguments")

    def finish(self, *, whole: bool) -> None:
        for index in sorted(self.calls):
            self.resolve(self.calls[index], whole=whole)


def outcome(events: list[Event]) -> list[tuple[str, int]]:
    """The events in the model's terms: starts, ends (with the error code) and warnings."""
    out: list[tuple[str, int]] = []
    for event in events:
        if isinstance(event, CallStarted):
            out.append(("started", event.index))
        elif isinstance(event, CallReady):
            out.append(("ready", event.index))
        elif isinstance(event, (CallDiscarded, CallWarning)):
            out.append((event.error.code, event.index))
    return out


class Ledger:
    """Counts CallReady + CallDiscarded per index over every event, and checks each."""

    def __init__(self) -> None:
        self.started: set[int] = set()
        self.ended: set[int] = set()
        self.ready: dict[int, Any] = {}

    def take(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, CallStarted):
                assert event.index not in self.started
                self.started.add(event.index)
            elif isinstance(event, ArgumentsDelta):
                assert event.index in self.started
                assert event.index not in self.ended
                assert event.fragment
            elif isinstance(event, (CallReady, CallDiscarded)):
                index = event.index
                assert index in self.started, f"call {index} ended before it started"
                assert index not in self.ended, f"call {index} ended twice"
                self.ended.add(index)
                if isinstance(event, CallReady):
                    check_ready(event)
                    self.ready[index] = event.call
                else:
                    check_discarded(event)
            elif isinstance(event, CallWarning):
                assert event.index in self.started

    @property
    def open(self) -> int:
        return len(self.started - self.ended)


def check_ready(event: CallReady) -> None:
    call = event.call
    assert call.name
    assert call.id
    loaded = load(call.arguments)
    assert isinstance(loaded, dict)
    assert typed(loaded) == typed(call.parsed_arguments)
    assert json.loads(joined(call.arguments)) == call.parsed_arguments
    assert first_bad_offset(call.arguments) is None


def check_discarded(event: CallDiscarded) -> None:
    error = event.error
    assert error.index == event.index
    if isinstance(error, MalformedArguments):
        assert error.offset == first_bad_offset(event.arguments)
    elif isinstance(error, TruncatedArguments):
        assert first_bad_offset(event.arguments) is None
        assert object_end(event.arguments) is None
    elif isinstance(error, MissingName):
        assert not event.name


NOT_DELTAS = st.sampled_from(
    [
        None,
        b"{}",
        7,
        1.5,
        [{"index": 0}],
        (0, "x"),
        {"index": -1},
        {"index": True},
        {"index": 1.0},
        {"index": "0"},
        {"index": 0, "function": "run"},
        {"index": 0, "function": {"arguments": 5}},
        {"index": 0, "id": 9},
        Delta(index=-2),
        Delta(index=0, arguments=b"{}"),  # type: ignore[arg-type]
        object(),
    ]
)


class AssemblerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.asm = Assembler()
        self.model = Model()
        self.ledger = Ledger()
        self.states: dict[int, CallState] = {}

    def _apply(self, events: list[Event]) -> None:
        self.ledger.take(events)
        got = outcome(events)
        for kind, _ in got:
            note_event(kind)
        expected, self.model.expected = self.model.expected, []
        assert got == expected, (got, expected)

    @rule(index=INDICES, call_id=IDS, name=NAMES, arguments=st.one_of(st.none(), FRAGMENTS))
    def feed(
        self, index: int | None, call_id: str | None, name: str | None, arguments: Any
    ) -> None:
        delta = Delta(index=index, id=call_id, name=name, arguments=arguments)
        events = self.asm.feed(delta)
        self.model.feed(delta)
        self._apply(events)

    @rule(
        index=st.integers(0, 3),
        size=st.integers(1, 12),
        header=st.booleans(),
        goal=st.sampled_from(VALID_TEXTS),
    )
    def continue_call(self, index: int, size: int, header: bool, goal: str) -> None:
        """The next piece of a valid text (so calls do complete), maybe with id and name."""
        call = self.model.calls.get(index)
        text = "" if call is None else call.text
        for candidate in (goal, *VALID_TEXTS):
            if candidate.startswith(text) and len(candidate) > len(text):
                fragment = candidate[len(text) : len(text) + size]
                break
        else:
            fragment = " "
        delta = Delta(
            index=index,
            id=f"call_{index}" if header else None,
            name="get" if header else None,
            arguments=fragment,
        )
        events = self.asm.feed(delta)
        self.model.feed(delta)
        self._apply(events)

    @rule(kind=st.sampled_from(["dict", "object"]), index=st.integers(0, 3), fragment=FRAGMENTS)
    def feed_wire_shapes(self, kind: str, index: int, fragment: str) -> None:
        delta: object
        if kind == "dict":
            delta = {"index": index, "function": {"arguments": fragment}}
        else:

            class Function:
                name = None
                arguments = fragment

            class ToolCallDelta:
                id = None
                type = "function"
                function = Function

            ToolCallDelta.index = index  # type: ignore[attr-defined]
            delta = ToolCallDelta()
        events = self.asm.feed(delta)
        self.model.feed(Delta(index=index, arguments=fragment))
        self._apply(events)

    @rule(thing=NOT_DELTAS)
    def feed_not_a_delta(self, thing: object) -> None:
        before = (self.asm.calls, self.asm.pending, self.asm.complete())
        with pytest.raises(InvalidDelta) as caught:
            self.asm.feed(thing)
        assert caught.value.code == "invalid-delta"
        assert isinstance(caught.value, TypeError)
        assert (self.asm.calls, self.asm.pending, self.asm.complete()) == before

    @rule(reason=st.sampled_from([None, "tool_calls", "stop", "length", "content_filter"]))
    def finish(self, reason: str | None) -> None:
        events = self.asm.finish(reason)
        self.model.finish(whole=reason in ("tool_calls", "stop"))
        self._apply(events)
        assert self.asm.pending == 0
        assert self.ledger.started == self.ledger.ended
        assert self.asm.finish() == []

    @rule(index=st.integers(0, 4))
    def end(self, index: int) -> None:
        events = self.asm.end(index)
        call = self.model.calls.get(index)
        if call is not None:
            self.model.resolve(call)
        self._apply(events)

    @rule(index=st.sampled_from([-1, True, "0", 1.0, None]))
    def end_not_an_index(self, index: Any) -> None:
        before = (self.asm.calls, self.asm.pending, self.asm.complete())
        try:
            self.asm.end(index)
        except InvalidDelta:
            pass
        else:
            # A negative int is an index that was never seen: nothing happens.
            assert type(index) is int
        assert (self.asm.calls, self.asm.pending, self.asm.complete()) == before

    @precondition(lambda self: self.model.calls)
    @rule()
    def reset(self) -> None:
        self.asm.reset()
        self.model = Model()
        self.ledger = Ledger()
        self.states = {}
        assert self.asm.calls == ()
        assert self.asm.pending == 0

    @invariant()
    def agrees_with_the_model(self) -> None:
        calls = self.asm.calls
        assert [c.index for c in calls] == sorted(self.model.calls)
        for snap in calls:
            want = self.model.calls[snap.index]
            assert snap.id == want.id
            assert snap.name == (want.name or None)
            # A discarded call keeps no text (its CallDiscarded event carried it).
            assert snap.arguments == ("" if want.end == "discarded" else want.text)
            final = {None: False, "ready": True, "discarded": True}[want.end]
            assert snap.state.is_final == final, (snap, want)
            if want.end == "ready":
                assert snap.state is CallState.COMPLETE
            elif want.end == "discarded":
                assert snap.state is CallState.DISCARDED

    @invariant()
    def states_only_move_forward(self) -> None:
        for snap in self.asm.calls:
            old = self.states.get(snap.index)
            if old is not None:
                assert RANK[snap.state] >= RANK[old]
                if old.is_final:
                    assert snap.state is old
            self.states[snap.index] = snap.state

    @invariant()
    def pending_is_calls_not_ended(self) -> None:
        assert self.asm.pending == self.ledger.open
        assert self.asm.pending == sum(1 for c in self.model.calls.values() if c.end is None)

    @invariant()
    def complete_is_sorted_and_valid(self) -> None:
        complete = self.asm.complete()
        assert [c.index for c in complete] == sorted(c.index for c in complete)
        assert complete == [self.ledger.ready[i] for i in sorted(self.ledger.ready)]
        for call in complete:
            assert isinstance(json.loads(joined(call.arguments)), dict)
            assert call.arguments == self.model.calls[call.index].ready_args


TestAssemblerMachine = AssemblerMachine.TestCase
TestAssemblerMachine.settings = STATEFUL_SETTINGS


# -- the provider layer ------------------------------------------------------------------------


def chat_event(index: int, call_id: str | None, name: str | None, arguments: str | None) -> bytes:
    entry: dict[str, Any] = {"index": index, "function": {}}
    if call_id is not None:
        entry["id"] = call_id
        entry["type"] = "function"
    if name is not None:
        entry["function"]["name"] = name
    if arguments is not None:
        entry["function"]["arguments"] = arguments
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"tool_calls": [entry]}, "finish_reason": None}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


FINISH = (
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":'
    b'[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
)


class StitcherMachine(RuleBasedStateMachine):
    """OpenAI Chat SSE bytes, cut anywhere, through ``Stitcher`` (decoder + quirks + core)."""

    def __init__(self) -> None:
        super().__init__()
        from toolstitch.stitch.stitcher import Stitcher

        self.stitcher = Stitcher("openai-chat")
        self.buffer = b""
        self.ledger = Ledger()
        self.closed = False
        self.failed = False

    def _take(self, events: list[Event]) -> None:
        from toolstitch.vocab.stream_events import StreamFailed

        self.ledger.take(events)
        for event in events:
            if isinstance(event, StreamFailed):
                self.failed = True

    @precondition(lambda self: not self.closed)
    @rule(
        index=st.integers(0, 2),
        call_id=st.sampled_from([None, "call_a", "call_b"]),
        name=st.sampled_from([None, "get", "run"]),
        arguments=st.one_of(st.none(), FRAGMENTS),
    )
    def event(self, index: int, call_id: str | None, name: str | None, arguments: Any) -> None:
        self.buffer += chat_event(index, call_id, name, arguments)

    @precondition(lambda self: not self.closed)
    @rule(garbage=st.binary(max_size=12))
    def garbage(self, garbage: bytes) -> None:
        self.buffer += garbage

    @precondition(lambda self: not self.closed and self.buffer)
    @rule(data=st.data())
    def send(self, data: st.DataObject) -> None:
        cut = data.draw(st.integers(1, len(self.buffer)))
        chunk, self.buffer = self.buffer[:cut], self.buffer[cut:]
        self._take(self.stitcher.feed(chunk))

    @precondition(lambda self: not self.closed)
    @rule(finish_reason=st.booleans())
    def close(self, finish_reason: bool) -> None:
        events = self.stitcher.feed(self.buffer + (FINISH if finish_reason else b""))
        self._take(events)
        self._take(self.stitcher.close())
        self.closed = True
        assert self.stitcher.assembler.pending == 0
        assert self.ledger.started == self.ledger.ended
        result = self.stitcher.result
        assert sorted(c.index for c in result.calls) == sorted(self.ledger.ready)
        for call in result.calls:
            assert isinstance(load(call.arguments), dict)

    @precondition(lambda self: self.closed)
    @rule()
    def close_again(self) -> None:
        assert self.stitcher.close() == []

    @invariant()
    def pending_is_calls_not_ended(self) -> None:
        assert self.stitcher.assembler.pending == self.ledger.open

    @invariant()
    def complete_is_sorted_and_valid(self) -> None:
        complete = self.stitcher.assembler.complete()
        assert [c.index for c in complete] == sorted(c.index for c in complete)
        for call in complete:
            assert isinstance(load(call.arguments), dict)


TestStitcherMachine = StitcherMachine.TestCase
TestStitcherMachine.settings = STATEFUL_SETTINGS


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_model_knows_the_documented_warnings() -> None:
    """The model's vocabulary is the core's (so a renamed code fails here, not silently)."""
    assert ConflictingId.code == "conflicting-id"
    assert UnexpectedDelta.code == "unexpected-delta"
    assert TrailingArguments.code == "trailing-arguments"
