"""``toolstitch.Assembler``: examples of every behaviour the spec names."""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
import tracemalloc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import ijson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolstitch
from reference import first_bad_offset, object_end
from strategies import per_pass
from toolstitch import (
    GENERATED_ID_PREFIX,
    ArgumentsDelta,
    Assembler,
    CallDiscarded,
    CallReady,
    CallStarted,
    CallState,
    CallWarning,
    Delta,
    Ending,
    Event,
    LimitExceeded,
    Limits,
    MalformedArguments,
    MissingName,
    ToolCall,
    TrailingArguments,
    TruncatedArguments,
)

# -- helpers ------------------------------------------------------------------------------


def wire(
    index: int | None = 0,
    call_id: str | None = None,
    name: str | None = None,
    arguments: str | None = None,
) -> dict[str, Any]:
    """One delta in the OpenAI wire shape."""
    return {
        "index": index,
        "id": call_id,
        "type": "function" if call_id else None,
        "function": {"name": name, "arguments": arguments},
    }


def run(
    fragments: Sequence[str],
    *,
    call_id: str | None = "call_1",
    name: str | None = "get_weather",
    assembler: Assembler | None = None,
) -> tuple[Assembler, list[list[Event]], list[Event]]:
    """Feed one call (header, then one delta per fragment); the events of each feed and of
    ``finish``."""
    asm = assembler or Assembler()
    per_feed = [asm.feed(wire(0, call_id, name, ""))]
    per_feed += [asm.feed(wire(0, None, None, fragment)) for fragment in fragments]
    return asm, per_feed, asm.finish("tool_calls")  # a response that ended normally


def of_type(events: Sequence[Event], kind: type[Event]) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


def feeds_with(per_feed: Sequence[Sequence[Event]], kind: type[Event]) -> list[int]:
    """The numbers of the feeds whose events include one of ``kind``."""
    return [k for k, events in enumerate(per_feed) if of_type(events, kind)]


def only(events: Sequence[Event], kind: type[Event]) -> Any:
    found = of_type(events, kind)
    assert len(found) == 1, events
    return found[0]


# -- one call, the happy path -------------------------------------------------------------


def test_openai_stream_gives_events_as_they_become_true() -> None:
    asm = Assembler()
    first = asm.feed(wire(0, "call_1", "get_weather", ""))
    assert first == [CallStarted(index=0, id="call_1", name="get_weather")]
    assert asm.feed(wire(0, None, None, '{"city"')) == [ArgumentsDelta(index=0, fragment='{"city"')]
    assert asm.feed(wire(0, None, None, ': "Paris"')) == [
        ArgumentsDelta(index=0, fragment=': "Paris"')
    ]
    expected = ToolCall(
        index=0,
        id="call_1",
        name="get_weather",
        arguments='{"city": "Paris"}',
        parsed_arguments={"city": "Paris"},
    )
    assert asm.feed(wire(0, None, None, "}")) == [
        ArgumentsDelta(index=0, fragment="}"),
        CallReady(call=expected),
    ]
    assert asm.pending == 0
    assert asm.complete() == [expected]
    assert asm.finish() == []
    (snapshot,) = asm.calls
    assert (snapshot.index, snapshot.id, snapshot.name) == (0, "call_1", "get_weather")
    assert (snapshot.arguments, snapshot.state, snapshot.error) == (
        '{"city": "Paris"}',
        CallState.COMPLETE,
        None,
    )


def test_tool_call_wire_form() -> None:
    _, per_feed, _ = run(['{"a": [1, 2.5, "x"]}'])
    call = only(per_feed[-1], CallReady).call
    assert call.type == "function"
    assert call.to_openai() == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"a": [1, 2.5, "x"]}'},
    }


def test_name_split_across_deltas_concatenates() -> None:
    asm = Assembler()
    started = asm.feed(wire(0, "call_1", "get_", None))
    assert started == [CallStarted(index=0, id="call_1", name="get_")]
    assert asm.feed(wire(0, None, "wea", None)) == []
    asm.feed(wire(0, None, "ther", None))
    assert asm.calls[0].state is CallState.ACCUMULATING_NAME
    ready = only(asm.feed(wire(0, None, None, "{}")), CallReady)
    assert ready.call.name == "get_weather"


def test_ids_never_concatenate() -> None:
    asm = Assembler()
    asm.feed(wire(0, "call_1", "f", None))
    asm.feed(wire(0, "call_1", None, '{"a":'))
    events = asm.feed(wire(0, "call_2", None, "1}"))
    ready = only(events, CallReady)
    assert ready.call.id == "call_1"
    assert asm.calls[0].id == "call_1"
    assert all(isinstance(e, (ArgumentsDelta, CallReady, CallWarning)) for e in events)
    warning = only(events, CallWarning)
    assert warning.error.code == "conflicting-id"
    assert warning.error.received == "call_2"


def test_ready_comes_with_the_delta_that_brings_the_missing_id() -> None:
    asm = Assembler()
    assert of_type(asm.feed(wire(0, None, "f", "{}")), CallReady) == []
    assert asm.calls[0].state is CallState.AWAITING_ID
    assert asm.pending == 1
    ready = only(asm.feed(wire(0, "call_9", None, None)), CallReady)
    assert (ready.call.id, ready.call.arguments) == ("call_9", "{}")
    assert asm.pending == 0


def test_ready_comes_with_the_delta_that_brings_the_missing_name() -> None:
    asm = Assembler()
    assert of_type(asm.feed(wire(0, "call_1", None, '{"x": null}')), CallReady) == []
    ready = only(asm.feed(wire(0, None, "lookup", None)), CallReady)
    assert ready.call.name == "lookup"
    assert ready.call.parsed_arguments == {"x": None}


# -- parallel calls -----------------------------------------------------------------------


def test_parallel_calls_interleave_and_higher_index_may_come_first() -> None:
    asm = Assembler()
    asm.feed(wire(2, "call_c", "third", '{"n":'))
    asm.feed(wire(0, "call_a", "first", '{"n"'))
    ready_c = only(asm.feed(wire(2, None, None, " 3}")), CallReady)
    asm.feed(wire(1, "call_b", "second", "{}"))
    ready_a = only(asm.feed(wire(0, None, None, ": 1}")), CallReady)
    assert (ready_c.call.index, ready_c.call.parsed_arguments) == (2, {"n": 3})
    assert (ready_a.call.index, ready_a.call.parsed_arguments) == (0, {"n": 1})
    assert [c.index for c in asm.calls] == [0, 1, 2]
    assert [(c.index, c.id, c.name) for c in asm.complete()] == [
        (0, "call_a", "first"),
        (1, "call_b", "second"),
        (2, "call_c", "third"),
    ]


def test_a_discarded_call_ignores_later_deltas_and_disturbs_no_other() -> None:
    alone, _, _ = run(['{"q": ', '"tea"', "}"])
    asm = Assembler()
    asm.feed(wire(0, "call_1", "get_weather", ""))
    asm.feed(wire(1, "call_2", "broken", '{"a": '))
    asm.feed(wire(0, None, None, '{"q": '))
    discarded = only(asm.feed(wire(1, None, None, "nope")), CallDiscarded)
    before = asm.calls[1]
    assert asm.feed(wire(1, None, None, '"fine"}')) == []
    assert asm.feed(wire(1, "call_3", "renamed", "{}")) == []
    assert asm.calls[1] == before
    asm.feed(wire(0, None, None, '"tea"'))
    asm.feed(wire(0, None, None, "}"))
    assert asm.finish() == []
    assert asm.complete() == alone.complete()
    assert discarded.index == 1
    assert before.state is CallState.DISCARDED
    assert before.error is discarded.error


# -- errors and their details -------------------------------------------------------------


def test_malformed_arguments_carry_offset_line_column_snippet_and_expected() -> None:
    text = '{\n  "city": "Paris",\n  "days": 01\n}'
    bad = text.index("01") + 1
    asm, per_feed, _ = run([text[:20], text[20:]])
    discarded = only(per_feed[2], CallDiscarded)
    error = discarded.error
    assert isinstance(error, MalformedArguments)
    assert error.code == "malformed-arguments"
    assert error.offset == bad
    assert (error.line, error.column) == (3, len('  "days": 0') + 1)
    shown, caret = error.snippet.split("\n")
    assert caret.strip() == "^"
    assert shown[len(caret) - 1] == "1"
    assert '"days": 01' in shown
    assert isinstance(error.expected, str)
    assert error.expected
    assert (error.index, error.call_id, error.name) == (0, "call_1", "get_weather")
    assert (discarded.id, discarded.name, discarded.arguments) == (
        "call_1",
        "get_weather",
        text,
    )
    assert asm.calls[0].error == error
    assert asm.complete() == []


STRICT_REJECTIONS = [
    # (arguments, offset of the first character no valid object text has there)
    ('{"a": NaN}', 6),
    ('{"a": Infinity}', 6),
    ('{"a": -Infinity}', 7),
    ('{"a": 1} // c', 9),
    ('{/* c */ "a": 1}', 1),
    ("{'a': 1}", 1),
    ('{"a": 1,}', 8),
    ('{"a": [1, 2,]}', 12),
    ('{"a": 012}', 7),
    ('{"a": -01}', 8),
    ('{"a": +1}', 6),
    ('{"a": .5}', 6),
    ('{"a": 1.}', 8),
    ('{"a": 1.e5}', 8),
    ('{"a": 1e}', 8),
    ('{"a": 1e+}', 9),
    ('{"a": tru}', 9),
    ('{"a": True}', 6),
    ('{"a": nul}', 9),
    ("{a: 1}", 1),
    ('{"a" 1}', 5),
    ('{"a":: 1}', 5),
    ('{"a": 1 "b": 2}', 8),
    ('{"a":\x0b1}', 5),
    ('{"a": "tab\there"}', 10),
    ('{"a": "nl\n"}', 9),
    ('{"a": "\x00"}', 7),
    ('{"a": "\\x41"}', 8),
    ('{"a": "\\u12G4"}', 11),
    ('{"a": "\\U1234"}', 8),
    ('{"a": "\ude80"}', 7),
    ('{"a": "\ud83d"}', 8),
    ('{"a": "\ud83dx"}', 8),
    # Escaped surrogates only in pairs (I-JSON, as documented):
    ('{"a": "\\udc00"}', 10),
    ('{"a": "\\ud800"}', 13),
    ('{"a": "\\ud800\\u0041"}', 15),
    ('{"a": "\\uD800\\n"}', 14),
    ('{"a": "\\ud800\\udbff"}', 16),
    ("[1, 2]", 0),
    ('"text"', 0),
    ("42", 0),
    ("null", 0),
    ("  \n]", 3),
    ('{"a": 1}}', 8),
    ('{"a": 1}]', 8),
    ("\ufeff{}", 0),
    ("{\u00a0}", 1),
]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(("text", "offset"), STRICT_REJECTIONS)
def test_reference_locates_the_strict_rejections(text: str, offset: int) -> None:
    # The hand-computed offsets check the reference the property tests rely on.
    assert first_bad_offset(text) == offset


@pytest.mark.parametrize(("text", "offset"), STRICT_REJECTIONS)
def test_strict_rfc8259(text: str, offset: int) -> None:
    asm, per_feed, finish = run([text])
    end = object_end(text)
    if end is not None:
        # The object closed before the bad text: the call stands, with a warning.
        ready = only(per_feed[1], CallReady)
        assert ready.call.arguments == text[:end]
        warning = only(per_feed[1], CallWarning)
        assert isinstance(warning.error, TrailingArguments)
        assert warning.error.offset == offset
    else:
        discarded = only(per_feed[1], CallDiscarded)
        assert isinstance(discarded.error, MalformedArguments)
        assert discarded.error.offset == offset
        assert finish == []
        assert asm.complete() == []


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1e5, "b": -0.0, "c": 1E-2, "d": 0, "e": [true, false, null]}',
        '{"é": "\\u00e9", "s": "\\ud83d\\ude80", "raw": "🚀", "esc": "\\"\\\\\\/\\b\\f\\n\\r\\t"}',
        " \t\r\n{ } ",
        '{"nested": {"a": [[], {}, [{"b": [1]}]]}}',
        '{"escaped-pair": "\\uD83D\\uDE80", "bmp-ends": "\\uD7FF\\uE000\\uffff"}',
        '{"del": "\x7f", "nbsp": "\u00a0"}',
    ],
)
def test_valid_texts_are_accepted(text: str) -> None:
    _, per_feed, _ = run([text])
    ready = only(per_feed[1], CallReady)
    end = object_end(text)
    assert end is not None
    assert ready.call.arguments == text[:end]
    assert ready.call.parsed_arguments == json.loads(text)


# -- the end of the object and what follows it --------------------------------------------


@pytest.mark.parametrize(
    "fragments",
    [
        ['{"a":1}', " x"],
        ['{"a":1} x'],
        ['{"a":', "1} x", "y", "}"],
        ['{"a":1}', "\n", "oops", " more"],
        ['{"a":1} {"b":2}'],
        ['{"a":1}"xyz'],
        ['{"a":1} t'],
        ['{"a":1}1'],
        ['{"a":1}-'],
        ['{"a":1}', '"'],
        ['{"a":1}', " tr", "ue"],
    ],
)
def test_text_after_the_object_warns_once_and_the_call_stands(fragments: list[str]) -> None:
    text = "".join(fragments)
    end = object_end(text)
    bad = first_bad_offset(text)
    assert end is not None
    assert bad is not None
    asm, per_feed, finish = run(fragments)
    ready = only([e for events in per_feed for e in events], CallReady)
    assert ready.call == ToolCall(
        index=0,
        id="call_1",
        name="get_weather",
        arguments=text[:end],
        parsed_arguments={"a": 1},
    )
    assert feeds_with(per_feed, CallReady) == [1 + _holding(fragments, end - 1)]
    warning = only([e for events in per_feed for e in events], CallWarning)
    assert isinstance(warning.error, TrailingArguments)
    assert warning.error.code == "trailing-arguments"
    assert warning.error.offset == bad
    assert feeds_with(per_feed, CallWarning) == [1 + _holding(fragments, bad)]
    assert of_type(finish, CallDiscarded) == []
    assert asm.complete() == [ready.call]


def test_trailing_text_before_the_name_arrives_still_warns_once() -> None:
    asm = Assembler()
    asm.feed(wire(0, "call_1", None, '{"a": 1}'))
    warned = asm.feed(wire(0, None, None, " junk"))
    assert of_type(warned, CallReady) == []
    assert only(warned, CallWarning).error.offset == len('{"a": 1} ')
    events = asm.feed(wire(0, None, "late_name", " more"))
    ready = only(events, CallReady)
    assert (ready.call.name, ready.call.arguments) == ("late_name", '{"a": 1}')
    assert of_type(events, CallWarning) == []
    assert asm.finish() == []


@pytest.mark.parametrize(
    "fragments",
    [['{"a":1} \n'], ['{"a":1}', " \n"], ['{"a":1}', " ", "\n"], ['{"a":1}  ', "\t"]],
)
def test_whitespace_after_the_object_is_fine_and_changes_nothing(fragments: list[str]) -> None:
    asm, per_feed, finish = run(fragments)
    ready = only(per_feed[1], CallReady)
    # The call is ready at the closing brace, before any later whitespace can arrive, so the
    # only text that is the same for every split is the text up to that brace.
    assert ready.call.arguments == '{"a":1}'
    assert [e for events in per_feed for e in events if isinstance(e, CallWarning)] == []
    assert finish == []
    assert asm.complete() == [ready.call]


@pytest.mark.parametrize(
    "fragments",
    [
        ['{"a":', "1} x"],
        ['{"a":', '1}"x'],
        ["{", '"a":1', "} ", "zz"],
        ["{", "}1"],
    ],
)
def test_arguments_delta_carries_the_fragment_that_was_fed(fragments: list[str]) -> None:
    _, per_feed, _ = run(fragments)
    for k, fragment in enumerate(fragments, start=1):
        deltas = of_type(per_feed[k], ArgumentsDelta)
        assert [d.fragment for d in deltas] in ([fragment], [])
    shown = "".join(d.fragment for events in per_feed for d in of_type(events, ArgumentsDelta))
    assert "".join(fragments).startswith(shown)


def _holding(fragments: Sequence[str], offset: int) -> int:
    start = 0
    for k, fragment in enumerate(fragments):
        if start <= offset < start + len(fragment):
            return k
        start += len(fragment)
    raise AssertionError(offset)


# -- finish -------------------------------------------------------------------------------


def test_finish_resolves_every_open_call_exactly_once() -> None:
    asm = Assembler(empty_arguments='{"default": true}')
    asm.feed(wire(0, "call_a", None, '{"a": 1}'))  # no name
    asm.feed(wire(1, "call_b", "trunc", '{"b": [1, 2'))  # valid prefix
    asm.feed(wire(2, "call_c", "empty", None))  # no arguments
    asm.feed(wire(3, "call_d", "blank", " \n\t "))  # whitespace only
    asm.feed(wire(4, None, "no_id", '{"d": 4}'))  # never got an id
    asm.feed(wire(5, "call_f", "done", "{}"))  # already complete
    assert asm.pending == 5
    events = asm.finish("tool_calls")
    assert asm.pending == 0
    assert asm.finish() == []
    by_index = {e.index: e for e in events if isinstance(e, (CallReady, CallDiscarded))}
    assert sorted(by_index) == [0, 1, 2, 3, 4]
    assert len(events) == 5
    _check_finish_discards(by_index)
    _check_finish_readies(by_index)
    assert [c.state for c in asm.calls] == [
        CallState.DISCARDED,
        CallState.DISCARDED,
        CallState.COMPLETE,
        CallState.COMPLETE,
        CallState.COMPLETE,
        CallState.COMPLETE,
    ]


def _check_finish_discards(by_index: dict[int, CallReady | CallDiscarded]) -> None:
    """Call 0 had no name, call 1 a truncated text: both discarded, with their errors."""
    missing = by_index[0]
    assert isinstance(missing, CallDiscarded)
    assert isinstance(missing.error, MissingName)
    assert missing.error.code == "missing-name"
    assert (missing.id, missing.arguments) == ("call_a", '{"a": 1}')
    truncated = by_index[1]
    assert isinstance(truncated, CallDiscarded)
    assert isinstance(truncated.error, TruncatedArguments)
    assert truncated.error.code == "truncated-arguments"
    assert truncated.error.index == 1


def _check_finish_readies(by_index: dict[int, CallReady | CallDiscarded]) -> None:
    """Calls 2 and 3 ready with the empty-arguments default, call 4 with a generated id."""
    for index in (2, 3):
        empty = by_index[index]
        assert isinstance(empty, CallReady)
        assert empty.call.arguments == '{"default": true}'
        assert empty.call.parsed_arguments == {"default": True}
    generated = by_index[4]
    assert isinstance(generated, CallReady)
    assert generated.call.id.startswith(GENERATED_ID_PREFIX)


def test_empty_arguments_default_to_an_empty_object() -> None:
    _, _, finish = run([])
    ready = only(finish, CallReady)
    assert (ready.call.arguments, ready.call.parsed_arguments) == ("{}", {})


@pytest.mark.parametrize(
    ("reason", "ending"),
    [
        (None, "abandoned"),
        ("length", "length"),
        ("max_tokens", "length"),
        ("MAX_TOKENS", "length"),
        ("content_filter", "content-filter"),
        ("SAFETY", "content-filter"),
        ("error", "error"),
        ("something_new", "incomplete"),
        (Ending.CANCELLED, "cancelled"),
    ],
)
def test_a_call_whose_arguments_never_arrived_is_never_dispatched_after_a_cut(
    reason: str | Ending | None, ending: str
) -> None:
    asm = Assembler()
    asm.feed(wire(0, "call_1", "delete_all", ""))
    asm.feed(wire(1, "call_2", "blank", " \n"))
    asm.feed(wire(2, "call_3", "whole", "{}"))
    events = asm.finish(reason)
    assert [e.call.name for e in events if isinstance(e, CallReady)] == []
    discarded = [e for e in events if isinstance(e, CallDiscarded)]
    assert [d.name for d in discarded] == ["delete_all", "blank"]
    for event in discarded:
        assert isinstance(event.error, TruncatedArguments)
        assert event.error.ending == ending
        assert "arguments arrived" in str(event.error)
    assert [c.name for c in asm.complete()] == ["whole"]


@pytest.mark.parametrize(
    "reason", ["tool_calls", "stop", "end_turn", "tool_use", "STOP", "completed", Ending.COMPLETE]
)
def test_a_call_without_arguments_is_complete_after_a_normal_end(
    reason: str | Ending,
) -> None:
    asm = Assembler(empty_arguments='{"x": 1}')
    asm.feed(wire(0, "call_1", "ping", ""))
    (ready,) = asm.finish(reason)
    assert isinstance(ready, CallReady)
    assert ready.call.parsed_arguments == {"x": 1}


def test_a_call_the_provider_closed_gets_the_empty_object_whatever_comes_after() -> None:
    asm = Assembler()
    asm.feed(wire(0, "call_1", "ping", ""))
    (ready,) = asm.end(0)  # the provider closed it (a block stop)
    assert isinstance(ready, CallReady)
    asm.feed(wire(1, "call_2", "delete_all", ""))
    (cut,) = asm.end(1, Ending.LENGTH)  # the response's cut reached it
    assert isinstance(cut, CallDiscarded)
    assert isinstance(cut.error, TruncatedArguments)
    assert cut.error.ending == "length"


@pytest.mark.parametrize("bad", ["[]", "", "{", "null", '{"a": NaN}'])
def test_empty_arguments_must_be_an_object_text(bad: str) -> None:
    with pytest.raises(ValueError, match="empty_arguments"):
        Assembler(empty_arguments=bad)


def test_generated_ids_are_unique_in_the_stream() -> None:
    asm = Assembler()
    asm.feed(wire(1, f"{GENERATED_ID_PREFIX}0", "taken", "{}"))
    asm.feed(wire(2, f"{GENERATED_ID_PREFIX}3", "taken_too", "{}"))
    for index in (0, 3, 4):
        asm.feed(wire(index, None, "anon", "{}"))
    asm.finish()
    ids = [call.id for call in asm.complete()]
    assert len(ids) == 5
    assert len(set(ids)) == 5
    assert all(i.startswith(GENERATED_ID_PREFIX) for i in ids)


def test_truncation_at_finish_inside_every_kind_of_token() -> None:
    for text in ['{"a": "unterminated', '{"a": tr', '{"a": -', '{"a": 1.', '{"a"', '{"a": "\\u00']:
        _, per_feed, finish = run([text])
        assert of_type(per_feed[1], CallDiscarded) == []
        discarded = only(finish, CallDiscarded)
        assert isinstance(discarded.error, TruncatedArguments), text


@pytest.mark.parametrize("text", ['{"a":01', "{t", '{"a":1 2', '{"a": true 1', '{"a": [1 2'])
def test_finish_does_not_call_an_invalid_text_truncated(text: str) -> None:
    bad = first_bad_offset(text)
    assert bad is not None
    _, per_feed, finish = run([text])
    discarded = only([*per_feed[1], *finish], CallDiscarded)
    assert isinstance(discarded.error, MalformedArguments)
    assert discarded.error.offset == bad


@pytest.mark.parametrize(
    "fragments", [['{"a":0', "1", "}"], ["{", "t", "rue}"], ['{"a":1 ', "2", "}"]]
)
def test_discarded_by_the_feed_that_delivered_the_bad_character(fragments: list[str]) -> None:
    text = "".join(fragments)
    bad = first_bad_offset(text)
    assert bad is not None
    _, per_feed, _ = run(fragments)
    assert feeds_with(per_feed, CallDiscarded) == [1 + _holding(fragments, bad)]


# -- deltas without an index --------------------------------------------------------------


def test_index_less_deltas_open_a_call_per_new_id_and_continue_otherwise() -> None:
    asm = Assembler()
    events = asm.feed({"id": "a", "function": {"name": "first", "arguments": '{"x"'}})
    assert events[0] == CallStarted(index=0, id="a", name="first")
    asm.feed({"function": {"arguments": ": 1}"}})
    started = asm.feed({"id": "b", "function": {"name": "second", "arguments": ""}})
    assert started == [CallStarted(index=1, id="b", name="second")]
    asm.feed(Delta(arguments="{}"))
    asm.finish()
    assert [(c.index, c.id, c.name, c.parsed_arguments) for c in asm.complete()] == [
        (0, "a", "first", {"x": 1}),
        (1, "b", "second", {}),
    ]


def test_index_less_delta_continues_the_most_recent_call() -> None:
    asm = Assembler()
    asm.feed(wire(0, "a", "first", '{"v": '))
    asm.feed(wire(1, "b", "second", '{"w": '))
    asm.feed(wire(0, None, None, "1"))
    asm.feed(Delta(arguments="}"))  # the most recent call is 0
    asm.feed(wire(1, None, None, "2}"))
    assert [c.parsed_arguments for c in asm.complete()] == [{"v": 1}, {"w": 2}]


def test_index_less_new_id_goes_to_the_most_recent_call_if_it_has_none() -> None:
    asm = Assembler()
    asm.feed(Delta(name="first", arguments='{"x": 1}'))
    assert asm.calls[0].state is CallState.AWAITING_ID
    ready = only(asm.feed(Delta(id="late")), CallReady)
    assert (ready.call.index, ready.call.id) == (0, "late")
    started = asm.feed(Delta(id="other", name="second"))
    assert started == [CallStarted(index=1, id="other", name="second")]


def test_index_less_delta_with_a_known_id_goes_to_that_call() -> None:
    asm = Assembler()
    asm.feed(wire(0, "a", "first", '{"v": '))
    asm.feed(wire(1, "b", "second", '{"w": 2}'))
    assert len(asm.calls) == 2
    ready = only(asm.feed(Delta(id="a", arguments="1}")), CallReady)
    assert (ready.call.index, ready.call.parsed_arguments) == (0, {"v": 1})


# -- limits -------------------------------------------------------------------------------


def limited(**fields: int) -> Assembler:
    return Assembler(limits=Limits(**fields))


def discarded_limit(per_feed: Sequence[Sequence[Event]]) -> tuple[int, LimitExceeded]:
    (k,) = feeds_with(per_feed, CallDiscarded)
    error = only(per_feed[k], CallDiscarded).error
    assert isinstance(error, LimitExceeded)
    assert error.code == "limit-exceeded"
    return k, error


def test_max_argument_chars() -> None:
    asm = limited(max_argument_chars=10)
    _, per_feed, _ = run(['{"a": ', '"1"}'], assembler=asm)
    assert of_type(per_feed[2], CallReady)
    asm = limited(max_argument_chars=10)
    _, per_feed, _ = run(['{"a": ', '"12"}'], assembler=asm)
    k, error = discarded_limit(per_feed)
    assert (k, error.limit) == (2, "max_argument_chars")


def test_max_name_chars() -> None:
    asm = limited(max_name_chars=5)
    asm.feed(wire(0, "c", "abc", None))
    assert asm.feed(wire(0, None, "de", None)) == []
    _, error = discarded_limit([[], asm.feed(wire(0, None, "f", None))])
    assert error.limit == "max_name_chars"


def test_max_id_chars() -> None:
    asm = limited(max_id_chars=4)
    assert of_type(asm.feed(wire(0, "abcd", "f", "{}")), CallReady)
    _, error = discarded_limit([asm.feed(wire(1, "abcde", "f", "{}"))])
    assert error.limit == "max_id_chars"


def test_max_number_digits() -> None:
    asm = limited(max_number_digits=5)
    text = '{"a": 12345, "b": 123456}'
    _, per_feed, _ = run([text], assembler=asm)
    _, error = discarded_limit(per_feed)
    assert error.limit == "max_number_digits"
    assert error.offset == text.index("6")


def test_max_number_digits_in_a_later_fragment() -> None:
    # The same limit, reached by a fragment that streams in after the call is under way.
    asm = limited(max_number_digits=5)
    fragments = ['{"a": 1', "2", "34", "56}"]
    _, per_feed, _ = run(fragments, assembler=asm)
    k, error = discarded_limit(per_feed)
    assert (k, error.limit, error.offset) == (4, "max_number_digits", "".join(fragments).index("6"))


@pytest.mark.parametrize(
    "fragments",
    [['{"a": 1e1000000000000000000}'], ['{"a": 0E', "-1000000000000000000", "0}"]],
)
def test_an_exponent_past_decimal_range(fragments: list[str]) -> None:
    # RFC-valid, and json.loads loads it (inf, 0.0). Either the call is ready with what
    # json.loads makes of it, or it is discarded with a LimitExceeded naming a Limits field
    # or the one documented bound that is not a field, "number_exponent".
    text = "".join(fragments)
    _, per_feed, finish = run(fragments)
    ended = [e for events in [*per_feed, finish] for e in events]
    ready = of_type(ended, CallReady)
    if ready:
        assert ready[0].call.parsed_arguments == json.loads(text)
    else:
        error = only(ended, CallDiscarded).error
        assert isinstance(error, LimitExceeded)
        assert error.limit in {f.name for f in dataclasses.fields(Limits)} | {"number_exponent"}


def test_max_depth() -> None:
    ok = '{"a": [[{}]]}'
    _, per_feed, _ = run([ok], assembler=limited(max_depth=4))
    assert of_type(per_feed[1], CallReady)
    text = '{"a": [[{"b": []}]]}'
    _, per_feed, _ = run([text[:9], text[9:]], assembler=limited(max_depth=4))
    k, error = discarded_limit(per_feed)
    assert (k, error.limit, error.offset) == (2, "max_depth", text.index("[]"))


def test_max_depth_is_a_limit_even_when_bad_text_follows_in_the_same_fragment() -> None:
    # Depth 3 is passed at offset 7, before the bad 'x' at offset 12: whatever the split,
    # the call passed the limit first.
    text = '{"a":[[[1]] x'
    for fragments in ([text], [text[:8], text[8:]]):
        _, per_feed, _ = run(fragments, assembler=limited(max_depth=3))
        _, error = discarded_limit(per_feed)
        assert (error.limit, error.offset) == ("max_depth", 7), fragments


def test_max_calls() -> None:
    asm = limited(max_calls=2)
    asm.feed(wire(0, "a", "f", "{}"))
    asm.feed(wire(1, "b", "f", "{"))
    over = asm.feed(wire(2, "c", "g", '{"big": "text"}'))
    assert over[0] == CallStarted(index=2, id="c", name="g")
    discarded = only(over, CallDiscarded)
    assert isinstance(discarded.error, LimitExceeded)
    assert discarded.error.limit == "max_calls"
    assert asm.feed(wire(2, None, None, "more")) == []
    assert [c.index for c in asm.calls] == [0, 1]
    asm.feed(wire(1, None, None, "}"))
    assert [c.index for c in asm.complete()] == [0, 1]
    assert asm.finish() == []


# Same code on either path (no assembler, no C): half the examples on each pass.
@per_pass(200, settings(deadline=None))
@given(st.lists(st.integers(0, 40), max_size=60))
def test_refused_indices_are_kept_as_ranges_that_behave_as_a_set(indices: list[int]) -> None:
    from toolstitch.core.assembler import _IndexSet

    ranges, reference = _IndexSet(), set()
    for index in indices:
        ranges.add(index)
        reference.add(index)
        assert ranges.highest == max(reference)
    assert [i for i in range(-1, 45) if i in ranges] == sorted(reference)
    assert bool(ranges) == bool(reference)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    "fields",
    [
        {"max_calls": 0},
        {"max_depth": -1},
        {"max_argument_chars": 0},
        {"max_name_chars": True},
        {"max_number_digits": 4301},
    ],
)
def test_limits_reject_nonsense(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="Limits"):
        Limits(**fields)


def test_a_huge_index_allocates_nothing_large() -> None:
    asm = Assembler()
    tracemalloc.start()
    try:
        asm.feed(wire(10**12, "call_big", "f", '{"a": 1'))
        asm.feed(wire(10**12, None, None, "}"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024
    assert [c.index for c in asm.complete()] == [10**12]


@contextmanager
def shallow_stack(frames: int = 60) -> Iterator[None]:
    """Allow only ``frames`` Python frames beyond the current depth."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def test_100000_nested_brackets_hit_max_depth_without_recursion() -> None:
    text = '{"a":' + "[" * 100_000
    asm = Assembler()
    asm.feed(wire(0, "c", "f", None))
    with shallow_stack():
        events = asm.feed(wire(0, None, None, text))
    error = only(events, CallDiscarded).error
    assert isinstance(error, LimitExceeded)
    assert error.limit == "max_depth"
    # The top-level '{' is depth 1: the 256th '[' is the first bracket past 256.
    assert error.offset == 5 + 255


def test_100000_nested_brackets_under_a_huge_depth_limit_do_not_crash() -> None:
    deep = '{"a":' + "[" * 100_000
    asm = limited(max_depth=10**6)
    asm.feed(wire(0, "c", "f", None))
    asm.feed(wire(1, "d", "g", None))
    with shallow_stack():
        for k in range(0, len(deep), 4096):
            asm.feed(wire(0, None, None, deep[k : k + 4096]))
        asm.feed(wire(1, None, None, deep + "]" * 100_000 + "}"))
        events = asm.finish()
    truncated = [e for e in events if isinstance(e, CallDiscarded) and e.index == 0]
    assert isinstance(truncated[0].error, TruncatedArguments)
    # Call 1 is a valid object that json.loads cannot load: it must end, and never be
    # reported ready with arguments that do not load.
    assert len(asm.calls) == 2
    assert asm.calls[1].state.is_final
    assert [c.index for c in asm.complete()] == []


# -- reset, pending, snapshots ------------------------------------------------------------


def test_states_pending_and_reset() -> None:
    asm = Assembler(limits=Limits(max_calls=3))
    asm.feed(wire(0, None, None, None))
    asm.feed(wire(1, "b", "f", None))
    asm.feed(wire(2, "c", "f", "{"))
    assert [c.state for c in asm.calls] == [
        CallState.AWAITING_ID,
        CallState.ACCUMULATING_NAME,
        CallState.ACCUMULATING_ARGS,
    ]
    assert asm.pending == 3
    asm.reset()
    assert (asm.calls, asm.pending, asm.complete(), asm.finish()) == ((), 0, [], [])
    assert asm.limits == Limits(max_calls=3)
    events = asm.feed(wire(0, "b", "again", "{}"))
    assert events[0] == CallStarted(index=0, id="b", name="again")
    assert only(events, CallReady).call.id == "b"


# -- ijson backends -----------------------------------------------------------------------


def test_pure_python_backend_gives_the_same_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where ijson could not build its C extension it falls back to a slower backend.

    ``toolstitch.json.tokenizer.default_backend`` is the tokenizer's hook for that: this runs one
    mixed scenario on ijson's pure-Python backend and on yajl2_c and compares the results.
    """
    from toolstitch.json import tokenizer as _tokenizer

    def scenario() -> tuple[list[Event], list[ToolCall], list[tuple[int, str, int | None]]]:
        asm = Assembler()
        events = asm.feed(wire(0, "a", "f", '{"s": "\\u00'))
        events += asm.feed(wire(1, "b", "g", '{"n": 1'))
        events += asm.feed(wire(0, None, None, "e9 \ud83d"))
        events += asm.feed(wire(1, None, None, ".5e1, 01}"))
        events += asm.feed(wire(0, None, None, '\ude80", "l": [true, null]} x'))
        events += asm.feed(wire(2, "c", "h", '{"t": [1, 2'))
        events += asm.finish()
        outcomes = [(c.index, c.state.value, getattr(c.error, "offset", None)) for c in asm.calls]
        return events, asm.complete(), outcomes

    native = scenario()
    assert native[1][0].parsed_arguments == {"s": "é 🚀", "l": [True, None]}
    monkeypatch.setattr(_tokenizer, "default_backend", ijson.get_backend("python"))
    assert scenario() == native


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_json_backend_is_reported() -> None:
    assert ijson.backend == toolstitch.JSON_BACKEND


def test_the_record_view_is_the_core_s_own_and_ids_are_made_in_one_place() -> None:
    asm = Assembler()
    assert asm.record(0) is None
    asm.feed(Delta(index=0, name="f", arguments='{"a": '))
    record = asm.record(0)
    assert record is not None
    assert (record.index, record.id, record.name, record.closed, record.started) == (
        0,
        None,
        "f",
        False,
        True,
    )
    assert (record.length, record.text()) == (6, '{"a": ')
    assert record.close_offset("1} ") == 2  # a lookahead: nothing changes
    assert record.closed is False
    assert record.length == 6
    asm.feed(Delta(index=0, arguments="1}"))
    predicted = asm.generated_id(0)
    assert predicted == f"{GENERATED_ID_PREFIX}0"
    (ready,) = [e for e in asm.finish() if isinstance(e, CallReady)]
    assert ready.call.id == predicted == record.id
    assert record.state is CallState.COMPLETE
    assert record.result == ready.call
    assert asm.generated_id(0) == f"{GENERATED_ID_PREFIX}0-2"  # that id is taken now
