"""The native assembler's start path and first fragment (docs/native.md, "The start path"),
and the native Stitcher's Anthropic block start and message delta in C (docs/native.md, "The
event fast path"), against the pure-Python reference.

A call's first delta with its id and whole name and no arguments text starts the call in C,
and the call's first fragment after it moves it to ``accumulating-args`` in C; everything
else goes to the Python methods. Here any mix of such starts and their near misses (an index
seen before, an empty or odd id or name, a type or none, arguments ``""`` or text, no index,
small ``max_calls`` / ``max_id_chars`` / ``max_name_chars``, declared tools, a JSON listener)
is fed to both assemblers, comparing the events, and after every delta the whole record of
every call and the assembler's own bookkeeping (``_by_id``, ``_last``, ``_open``); and the
paths are checked to be taken in C where they should. Skipped where the extension is not
active.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import PROPERTY_SETTINGS
from toolstitch import (
    NATIVE,
    ArgumentsDelta,
    Assembler,
    FinishReason,
    Limits,
    ProviderQuirk,
    StreamWarning,
    TextDelta,
    Usage,
)
from toolstitch.adapters.anthropic import AnthropicAdapter
from toolstitch.core.assembler import _AssemblerBody
from toolstitch.stitch.stitcher import Stitcher
from toolstitch.testing import PythonAssembler, PythonStitcher

pytestmark = pytest.mark.skipif(not NATIVE, reason="the C extension is not active")

FAST = settings(PROPERTY_SETTINGS, max_examples=80)
TOOLS = [{"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}}]
OPTIONS: list[dict[str, Any]] = [
    {},
    {},
    {"limits": Limits(max_calls=2)},
    {"limits": Limits(max_id_chars=4, max_name_chars=3)},
    {"tools": TOOLS},
    {"json_listener": lambda index, batch: None},
]

_ids = st.sampled_from(["call_0", "call_1", "c", "", "toolong_id", None])
_names = st.sampled_from(["get", "g", "", "getter", None])
_kinds = st.sampled_from([None, None, "function", ""])
_arguments = st.sampled_from([None, None, "", "{", '{"a": 1}', "}", " "])


@st.composite
def deltas(draw: st.DrawFn) -> dict[str, Any]:
    """One delta: most of them a start's shape, many near misses."""
    delta: dict[str, Any] = {"function": {}}
    index = draw(st.sampled_from([0, 1, 2, 3, None]))
    if index is not None:
        delta["index"] = index
    for key, value in (("id", draw(_ids)), ("type", draw(_kinds))):
        if value is not None:
            delta[key] = value
    for key, value in (("name", draw(_names)), ("arguments", draw(_arguments))):
        if value is not None:
            delta["function"][key] = value
    return delta


def _record(call: Any) -> tuple[Any, ...]:
    return (
        call.index,
        call.position,
        call.id,
        call.type,
        call.name,
        call.state,
        call.closed,
        call.text(),
        call.tokenizer.fed,
        call.result,
    )


def _state(asm: Any) -> tuple[Any, ...]:
    """Everything the assembler keeps about its calls, comparable across the two paths."""
    calls = {index: _record(call) for index, call in asm._calls.items()}
    by_id = {key: call.index for key, call in asm._by_id.items()}
    last = None if asm._last is None else asm._last.index
    return calls, by_id, last, asm._open, asm.calls


def _run(cls: Any, steps: list[dict[str, Any]], options: dict[str, Any]) -> list[Any]:
    asm = cls(**options)
    out: list[Any] = []
    for delta in steps:
        try:
            out.append(list(asm.feed(delta)))
        except Exception as exc:  # the same error on both paths, compared
            out.append((type(exc), str(exc)))
        out.append(_state(asm))
    out.append(asm.finish())
    out.append(_state(asm))
    return out


@FAST
@given(st.lists(deltas(), min_size=1, max_size=8), st.sampled_from(OPTIONS))
def test_starts_agree_with_python(steps: list[dict[str, Any]], options: dict[str, Any]) -> None:
    assert _run(Assembler, steps, options) == _run(PythonAssembler, steps, options)


@FAST
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from(["{", '"a"', ": 1", "}", "x"])), max_size=8
    ),
    st.sampled_from(OPTIONS),
    st.booleans(),
)
def test_first_fragments_agree_with_python(
    fragments: list[tuple[int, str]], options: dict[str, Any], typed: bool
) -> None:
    """Started calls, then fragments by ``feed`` and ``feed_arguments``, some with a type."""
    steps: list[dict[str, Any]] = [
        {"index": i, "id": f"call_{i}", "function": {"name": "get"}} for i in range(3)
    ]
    for index, fragment in fragments:
        delta: dict[str, Any] = {"index": index, "function": {"arguments": fragment}}
        if typed:
            delta["type"] = "function"
        steps.append(delta)
    assert _run(Assembler, steps, options) == _run(PythonAssembler, steps, options)


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count the calls of the Python method ``name`` of the native Assembler."""
    method = getattr(_AssemblerBody, name)
    seen: list[int] = []

    def counted(self: Any, *args: Any) -> Any:
        seen.append(1)
        return method(self, *args)

    monkeypatch.setattr(Assembler, name, counted)
    return seen


def test_a_plain_start_and_first_fragment_are_taken_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    applied = _counting(monkeypatch, "_apply")
    asm = Assembler()
    started = asm.feed({"index": 0, "id": "call_0", "type": "function", "function": {"name": "f"}})
    assert [type(e).__name__ for e in started] == ["CallStarted"]
    assert asm.feed_arguments(0, '{"a": ') == [ArgumentsDelta(index=0, fragment='{"a": ')]
    assert [type(e).__name__ for e in asm.feed_arguments(0, "1}")] == [
        "ArgumentsDelta",
        "CallReady",
    ]
    assert applied == []
    assert asm._calls[0].type == "function"
    assert asm.complete()[0].parsed_arguments == {"a": 1}


@pytest.mark.parametrize(
    ("options", "delta"),
    [
        ({"tools": TOOLS}, {"index": 0, "id": "a", "function": {"name": "get"}}),
        ({"json_listener": lambda i, b: None}, {"index": 0, "id": "a", "function": {"name": "f"}}),
        ({"limits": Limits(max_id_chars=1)}, {"index": 0, "id": "ab", "function": {"name": "f"}}),
        ({}, {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{"}}),
        ({}, {"index": 0, "function": {"name": "f"}}),
        ({}, {"id": "a", "function": {"name": "f"}}),
    ],
)
def test_the_rest_goes_to_python(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], delta: dict[str, Any]
) -> None:
    applied = _counting(monkeypatch, "_apply")
    Assembler(**options).feed(delta)
    assert applied == [1]


def test_a_typed_first_fragment_goes_to_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_apply_slow`` sets the type of a call that has none: C leaves that to it."""
    asm = Assembler()
    asm.feed({"index": 0, "id": "a", "function": {"name": "f"}})
    applied = _counting(monkeypatch, "_apply")
    asm.feed({"index": 0, "type": "function", "function": {"arguments": "{"}})
    assert applied == [1]
    assert asm._calls[0].type == "function"


# -- the Anthropic block start and message delta in C (docs/native.md, "The event fast path") --


class _Text(str):
    """A str subclass: its comparisons are its own, so C leaves it to Python."""


_block_ids = st.sampled_from(["toolu_1", "toolu_2", "", None, 7, _Text("toolu_3")])
_block_names = st.sampled_from(["get", "", None, _Text("get")])
_block_kinds = st.sampled_from(["tool_use", "tool_use", "server_tool_use", "text", "thinking", 3])
_extras: st.SearchStrategy[dict[str, Any]] = st.sampled_from(
    [{}, {}, {"caller": {"type": "direct"}}, {"caller": None}, {"input": {"a": 1}}]
)
_whole = {"type": "tool_use", "id": "toolu_9", "name": "get", "input": {"a": 1}}
_messages: st.SearchStrategy[object] = st.sampled_from(
    [
        {"usage": {"input_tokens": 1}},
        {"usage": {"input_tokens": 1}, "content": []},
        {"usage": {}, "content": None},
        {"usage": None},
        {"usage": [("input_tokens", 1)]},
        {"content": [_whole]},
        {"content": ()},
        {},
        None,
        [],
    ]
)
_reasons = st.sampled_from(["tool_use", "end_turn", "", None, 5, _Text("tool_use")])
_usages = st.sampled_from([None, {}, {"output_tokens": 3}, [("output_tokens", 3)]])


@st.composite
def anthropic_events(draw: st.DrawFn) -> list[dict[str, Any]]:
    """message_start (plain, or with whole blocks, odd usage or content), then block starts
    (plain or near misses), fragments, stops and message deltas in any order; a second
    message_start now and then (block indexes reused)."""
    events: list[dict[str, Any]] = [{"type": "message_start", "message": draw(_messages)}]
    for _ in range(draw(st.integers(1, 6))):
        what = draw(st.sampled_from(["start", "start", "fragment", "stop", "finish", "message"]))
        index = draw(st.sampled_from([0, 1, 2, -1, True]))
        if what == "start":
            block: dict[str, Any] = {"type": draw(_block_kinds), **draw(_extras)}
            for key, value in (("id", draw(_block_ids)), ("name", draw(_block_names))):
                if value is not None:
                    block[key] = value
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        elif what == "fragment":
            delta = {"type": "input_json_delta", "partial_json": draw(st.sampled_from(["{", "}"]))}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        elif what == "stop":
            events.append({"type": "content_block_stop", "index": index})
        elif what == "finish":
            event: dict[str, Any] = {"type": "message_delta"}
            reason = draw(_reasons)
            if reason is not None or draw(st.booleans()):
                event["delta"] = {"stop_reason": reason} if draw(st.booleans()) else reason
            usage = draw(_usages)
            if usage is not None or draw(st.booleans()):
                event["usage"] = usage
            events.append(event)
        else:
            events.append({"type": "message_start", "message": draw(_messages)})
    return events


def _stitched(cls: Any, events: list[dict[str, Any]]) -> list[Any]:
    stitcher = cls(provider="anthropic")
    out: list[Any] = []
    for event in events:
        try:
            out.append(stitcher.feed(event))
        except Exception as exc:  # the same error on both paths, compared
            out.append((type(exc), str(exc)))
        adapter = stitcher.adapter
        assert isinstance(adapter, AnthropicAdapter)
        blocks = {
            i: (b.kind, b.id, b.name, b.client, b.core, b.streamed, b.input)
            for i, b in adapter._blocks.items()
        }
        out.append((blocks, sorted(adapter._ids), sorted(adapter._cores), stitcher.events_read))
        out.append(_state(stitcher.assembler))
    out.append(stitcher.close())
    out.append(stitcher.result)
    return out


@FAST
@given(anthropic_events())
def test_block_events_agree_with_python(events: list[dict[str, Any]]) -> None:
    assert _stitched(Stitcher, events) == _stitched(PythonStitcher, events)


def test_plain_block_events_are_taken_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    read = AnthropicAdapter._feed_declined
    seen: list[object] = []

    def counted(self: Any, payload: Any, event: Any) -> Any:
        seen.append(payload.get("type"))
        return read(self, payload, event)

    monkeypatch.setattr(AnthropicAdapter, "_feed_declined", counted)
    stitcher = Stitcher(provider="anthropic")
    block = {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 5}}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}'},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    fed = [e for event in events for e in stitcher.feed(event)]
    out = [type(e).__name__ for e in fed]
    usage = fed[-1]
    assert isinstance(usage, Usage)
    assert usage.usage == events[4]["usage"]
    assert usage.usage is not events[4]["usage"]  # a copy, as usage_event(dict(usage))
    assert out == ["Usage", "CallStarted", "ArgumentsDelta", "CallReady", "FinishReason", "Usage"]
    assert seen == []
    result = stitcher.result
    assert (result.finish_reason, result.usage) == (
        "tool_use",
        {"input_tokens": 5, "output_tokens": 9},
    )
    adapter = stitcher.adapter
    assert isinstance(adapter, AnthropicAdapter)
    assert adapter._blocks[0].core == 0
    assert adapter._ids == {"toolu_1"}


# -- the Stitcher's notes, looped in C ---------------------------------------------------------


class _Later(TextDelta):
    """A subclass of an event type: noted as its nearest base is."""


def test_observe_is_c_and_notes_as_python_does() -> None:
    native, python = Stitcher(provider="anthropic"), PythonStitcher(provider="anthropic")
    assert type(native).__dict__.get("_observe") is None  # the C base's, not a Python method
    warning = StreamWarning(error=ProviderQuirk("quirk-unknown-event", "odd"))
    batches: list[list[Any]] = [
        [warning],
        [TextDelta(text="a"), _Later(text="b"), ArgumentsDelta(index=0, fragment="{")],
        [FinishReason(reason="stop"), Usage(usage={"n": 1}), warning],
    ]
    for batch in batches:
        got, want = native._observe(list(batch)), python._observe(list(batch))
        assert got == want == batch
        assert native._understood == python._understood
    assert native.result == python.result
    events: Any = ()  # not a list: the Python method reads it
    assert native._observe(events) is events
    assert native._observe([]) == []


def test_only_warnings_leave_the_stream_not_understood() -> None:
    native = Stitcher(provider="anthropic")
    native._observe([StreamWarning(error=ProviderQuirk("quirk-unknown-event", "odd"))])
    assert native._understood is False
    native._observe([TextDelta(text="a")])
    assert native._understood is True
