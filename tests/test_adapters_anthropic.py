"""The Anthropic Messages adapter: blocks, explicit ends, server tools, errors, SDK objects."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from driven import Driven
from fixtures.expected import fixture_names, load, normalize, payloads
from strategies import PROPERTY_SETTINGS, per_pass
from toolstitch.adapters import AnthropicAdapter, detect
from toolstitch.core.assembler import Assembler
from toolstitch.stitch.driver import Driver
from toolstitch.stitch.stitcher import StitchResult, stitch
from toolstitch.testing import PythonStitcher
from toolstitch.testing.strategies import streams
from toolstitch.vocab.call_events import CallDiscarded, CallReady, CallStarted, CallWarning, Event
from toolstitch.vocab.errors import ProviderError
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.stream_events import (
    ReasoningBlock,
    ReasoningDelta,
    ServerToolCall,
    StreamFailed,
    StreamWarning,
)

CORPUS = Path(__file__).parents[2] / "shared" / "corpus"


def start(index: int, kind: str = "tool_use", name: str = "f") -> dict[str, object]:
    return {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": kind, "id": f"toolu_{index}", "name": name, "input": {}},
    }


def part(index: int, text: str) -> dict[str, object]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": text},
    }


def stop(index: int) -> dict[str, object]:
    return {"type": "content_block_stop", "index": index}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_detected_from_message_events() -> None:
    assert detect({"type": "message_start"}) == "anthropic"
    assert detect({}, "content_block_delta") == "anthropic"


def test_block_stop_is_an_explicit_end() -> None:
    adapter = Driven(AnthropicAdapter)
    adapter.feed(start(1))
    adapter.feed(part(1, '{"a": '))
    events = adapter.feed(stop(1))
    (discarded,) = [e for e in events if isinstance(e, CallDiscarded)]
    assert discarded.error.code == "truncated-arguments"
    assert adapter.close() == []


def test_no_argument_tool_gets_its_start_input() -> None:
    adapter = Driven(AnthropicAdapter)
    adapter.feed(start(0))
    adapter.feed(part(0, ""))
    events = adapter.feed(stop(0))
    assert [e.call.arguments for e in events if isinstance(e, CallReady)] == ["{}"]


def test_server_tool_is_never_a_call() -> None:
    adapter = Driven(AnthropicAdapter)
    events = adapter.feed(start(0, "server_tool_use", "web_search"))
    events += adapter.feed(part(0, '{"query": "x"}'))
    assert events == []
    (event,) = adapter.feed(stop(0))
    assert isinstance(event, ServerToolCall)
    assert (event.name, event.type, event.parsed_arguments) == (
        "web_search",
        "server_tool_use",
        {"query": "x"},
    )
    assert adapter.assembler.calls == ()


def test_server_tool_cut_off_is_reported_with_its_error() -> None:
    adapter = Driven(AnthropicAdapter)
    adapter.feed(start(0, "mcp_tool_use", "lookup"))
    adapter.feed(part(0, '{"q": '))
    (event,) = adapter.close()
    assert isinstance(event, ServerToolCall)
    assert event.error is not None
    assert event.error.code == "truncated-arguments"
    assert event.parsed_arguments is None


def test_error_event() -> None:
    adapter = Driven(AnthropicAdapter)
    (event,) = adapter.feed(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    assert isinstance(event, StreamFailed)
    assert isinstance(event.error, ProviderError)
    assert event.error.kind == "overloaded_error"


@pytest.mark.parametrize("name", fixture_names("anthropic"))
def test_sdk_event_objects(name: str) -> None:
    models = pytest.importorskip("anthropic._models")
    types = pytest.importorskip("anthropic.types")
    body, expected = load(name)
    objects = []
    for payload in payloads(body):
        if payload.get("type") == "error":
            objects.append(payload)  # the SDK raises for error events instead
        else:
            objects.append(models.construct_type(type_=types.RawMessageStreamEvent, value=payload))
    assert normalize(stitch(objects).result) == expected


def test_adapter_takes_sdk_objects_directly() -> None:
    types = pytest.importorskip("anthropic.types")
    adapter = Driven(AnthropicAdapter)
    events = adapter.feed(types.RawContentBlockStartEvent.model_validate(start(0)))
    events += adapter.feed(types.RawContentBlockDeltaEvent.model_validate(part(0, '{"a": 1}')))
    events += adapter.feed(types.RawContentBlockStopEvent.model_validate(stop(0)))
    assert [e.call.arguments for e in events if isinstance(e, CallReady)] == ['{"a": 1}']
    with pytest.raises(TypeError, match="anthropic event"):
        adapter.feed(42)


# -- reasoning blocks --------------------------------------------------------------------------


def thinking_delta(index: int, kind: str, value: str) -> dict[str, object]:
    key = "thinking" if kind == "thinking_delta" else "signature"
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, key: value}}


def blocks_of(events: list[Event]) -> list[ReasoningBlock]:
    return [e for e in events if isinstance(e, ReasoningBlock)]


def test_thinking_block_ends_as_a_reasoning_block_with_its_signature() -> None:
    adapter = Driven(AnthropicAdapter)
    events = adapter.feed(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        }
    )
    events += adapter.feed(thinking_delta(0, "thinking_delta", "Two "))
    events += adapter.feed(thinking_delta(0, "thinking_delta", "tools."))
    events += adapter.feed(thinking_delta(0, "signature_delta", "EqQB/x+=="))
    assert blocks_of(events) == []  # reported when the block ends
    events += adapter.feed(stop(0))
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Two ", "tools."]
    assert blocks_of(events) == [
        ReasoningBlock(text="Two tools.", signature="EqQB/x+==", kind="thinking")
    ]


def test_redacted_thinking_keeps_its_data_as_the_signature() -> None:
    adapter = Driven(AnthropicAdapter)
    start_event = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "redacted_thinking", "data": "EmwKAhgB=="},
    }
    events = adapter.feed(start_event) + adapter.feed(stop(0))
    assert blocks_of(events) == [
        ReasoningBlock(signature="EmwKAhgB==", redacted=True, kind="redacted_thinking")
    ]


def test_thinking_cut_off_by_the_end_of_the_stream_is_still_reported() -> None:
    adapter = Driven(AnthropicAdapter)
    adapter.feed({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}})
    adapter.feed(thinking_delta(0, "thinking_delta", "Hm"))
    assert blocks_of(adapter.close()) == [ReasoningBlock(text="Hm", kind="thinking")]


def test_reasoning_text_is_bounded_by_max_reasoning_chars() -> None:
    assembler = Assembler(limits=Limits(max_reasoning_chars=4))
    adapter = AnthropicAdapter(records=assembler)
    driver = Driver(assembler)
    out: list[Event] = []
    for payload in [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
        thinking_delta(0, "thinking_delta", "abc"),
        thinking_delta(0, "thinking_delta", "def"),
        thinking_delta(0, "thinking_delta", "ghi"),
        thinking_delta(0, "signature_delta", "sig"),
        stop(0),
    ]:
        driver.drive(adapter.feed(payload), out)
    warnings = [e.error.code for e in out if isinstance(e, StreamWarning)]
    assert warnings == ["quirk-reasoning-over-limit"]  # once, however much more comes
    assert blocks_of(out) == [ReasoningBlock(text="abcd", signature="sig", kind="thinking")]
    # The streamed deltas are not cut: only the kept copy is bounded.
    assert "".join(e.text for e in out if isinstance(e, ReasoningDelta)) == "abcdefghi"


# -- programmatic tool calling and several messages -------------------------------------------


def message_start(content: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {"type": "message_start", "message": {"id": "msg_2", "content": content or []}}


def test_tool_use_inside_message_start_is_a_call_ready_at_once() -> None:
    caller = {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}
    adapter = Driven(AnthropicAdapter)
    block = {"type": "tool_use", "id": "toolu_9", "name": "f", "input": {"a": 1}}
    events = adapter.feed(
        message_start([{"type": "text", "text": "Hi"}, {**block, "caller": caller}])
    )
    started = [e for e in events if isinstance(e, CallStarted)]
    ready = [e.call for e in events if isinstance(e, CallReady)]
    assert [(s.index, s.id, s.name) for s in started] == [(1, "toolu_9", "f")]
    assert [(c.index, c.id, c.parsed_arguments, c.caller) for c in ready] == [
        (1, "toolu_9", {"a": 1}, caller)
    ]
    codes = [e.error.code for e in events if isinstance(e, CallWarning)]
    assert codes == ["quirk-call-in-message-start"]
    assert adapter.close() == []


def test_server_tool_use_inside_message_start_is_a_server_call() -> None:
    adapter = Driven(AnthropicAdapter)
    block: dict[str, object] = {
        "type": "server_tool_use",
        "id": "srvtoolu_2",
        "name": "web_search",
        "input": {},
    }
    (event,) = adapter.feed(message_start([block]))
    assert isinstance(event, ServerToolCall)
    assert (event.index, event.id, event.arguments) == (0, "srvtoolu_2", "{}")
    assert adapter.close() == []  # ended once


def test_caller_of_a_streamed_tool_block_is_kept_on_the_call() -> None:
    caller = {"type": "code_execution_20260120", "tool_id": "srvtoolu_3"}
    adapter = Driven(AnthropicAdapter)
    first = start(0)
    first["content_block"] = {**first["content_block"], "caller": caller}  # type: ignore[dict-item]
    adapter.feed(first)
    events = adapter.feed(part(0, '{"q": 1}'))
    (ready,) = [e.call for e in events if isinstance(e, CallReady)]
    assert ready.caller == caller


def test_a_new_message_start_keys_its_blocks_afresh() -> None:
    adapter = Driven(AnthropicAdapter)
    events: list[Event] = []
    for payload in [message_start(), start(0), part(0, "{}"), stop(0), {"type": "message_stop"}]:
        events += adapter.feed(payload)
    for payload in [message_start(), start(0), part(0, '{"b": 2}'), stop(0)]:
        events += adapter.feed(payload)
    events += adapter.close()
    assert [e.index for e in events if isinstance(e, CallStarted)] == [0, 1]
    assert [(e.call.index, e.call.arguments) for e in events if isinstance(e, CallReady)] == [
        (0, "{}"),
        (1, '{"b": 2}'),
    ]
    warnings = [(e.index, e.error.code) for e in events if isinstance(e, CallWarning)]
    assert warnings == [(1, "quirk-index-reused")]
    assert not [e for e in events if isinstance(e, CallDiscarded)]


# -- events outside the protocol -------------------------------------------------------------


def test_unknown_event_and_delta_types_leave_a_stream_warning_once() -> None:
    adapter = Driven(AnthropicAdapter)
    events = adapter.feed({"type": "message_pause"}) + adapter.feed({"type": "message_pause"})
    events += adapter.feed(start(0))
    events += adapter.feed({"type": "content_block_delta", "index": 0, "delta": {"type": "x"}})
    codes = [e.error.code for e in events if isinstance(e, StreamWarning)]
    assert codes == ["quirk-unknown-event", "quirk-unknown-event"]
    assert "message_pause" in str(events[0])


def _message_stream(body: bytes) -> list[object]:
    """What the anthropic SDK's ``MessageStream`` yields for ``body``: each raw event and
    the helper events it builds from it (the SDK's own accumulation, as ``__stream__``)."""
    models = pytest.importorskip("anthropic._models")
    types = pytest.importorskip("anthropic.types")
    streaming = pytest.importorskip("anthropic.lib.streaming._messages")
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    out: list[object] = []
    for payload in payloads(body):
        event = models.construct_type(type_=types.RawMessageStreamEvent, value=payload)
        snapshot = streaming.accumulate_event(
            event=event, current_snapshot=snapshot, json_bufs=json_bufs
        )
        out += streaming.build_events(event=event, message_snapshot=snapshot)
    return out


@pytest.mark.parametrize(
    "name",
    ["anthropic/thinking-text-then-parallel-tools", "anthropic/server-tool-then-client-tool"],
)
def test_message_stream_helper_events_are_skipped_without_loss(name: str) -> None:
    body, expected = load(name)
    events = _message_stream(body)
    kinds = {getattr(e, "type", None) for e in events}
    assert {"text", "input_json"} & kinds  # the SDK's helpers are there...
    result = stitch(events).result
    assert normalize(result) == expected  # ...and change nothing: no warning, no double text
    assert summary(result) == summary(stitch(body).result)


def summary(result: StitchResult) -> tuple[object, ...]:
    return (result.calls, result.text, result.reasoning, result.warnings, result.usage)


def test_message_stream_thinking_and_signature_helpers_are_skipped() -> None:
    corpus = CORPUS / "anthropic-messages-thinking-then-tool-use.sse"
    if not corpus.is_file():
        pytest.skip("the shared corpus is not beside the clone")
    body = corpus.read_bytes()
    events = _message_stream(body)
    assert {"thinking", "signature"} <= {getattr(e, "type", None) for e in events}
    assert summary(stitch(events).result) == summary(stitch(body).result)
    assert stitch(events).result.warnings == ()


def test_a_block_repeated_in_a_later_message_start_is_not_a_second_call() -> None:
    adapter = Driven(AnthropicAdapter)
    events = adapter.feed(start(0)) + adapter.feed(part(0, "{}")) + adapter.feed(stop(0))
    repeat: dict[str, object] = {"type": "tool_use", "id": "toolu_0", "name": "f", "input": {}}
    events += adapter.feed(message_start([repeat]))
    assert [e.call.id for e in events if isinstance(e, CallReady)] == ["toolu_0"]
    (warning,) = [e for e in events if isinstance(e, StreamWarning)]
    assert warning.error.code == "quirk-call-in-message-start"


def _chunkings(body: bytes) -> list[object]:
    return [body, body.splitlines(keepends=True), [body[i : i + 1] for i in range(len(body))]]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "anthropic/thinking-text-then-parallel-tools",
            [ReasoningBlock(text="Two tools.", signature="EqQB", kind="thinking")],
        ),
        (
            "anthropic/redacted-thinking-then-tool",
            [
                ReasoningBlock(
                    signature="EmwKAhgBEgy3va3pzix/LafPsn4a",
                    redacted=True,
                    kind="redacted_thinking",
                )
            ],
        ),
    ],
)
def test_reasoning_blocks_of_fixtures_in_any_chunking(
    name: str, expected: list[ReasoningBlock]
) -> None:
    body, _ = load(name)
    for feed in _chunkings(body):
        assert [e for e in stitch(feed) if isinstance(e, ReasoningBlock)] == expected


def test_programmatic_caller_survives_any_chunking() -> None:
    body, _ = load("anthropic/programmatic-call-in-message-start")
    for feed in _chunkings(body):
        (call,) = stitch(feed).result.calls
        assert call.caller == {"type": "code_execution_20250825", "tool_id": "srvtoolu_01P"}


def test_reasoning_given_whole_at_block_start_is_bounded_too() -> None:
    assembler = Assembler(limits=Limits(max_reasoning_chars=2))
    adapter = AnthropicAdapter(records=assembler)
    out: list[Event] = []
    redacted: dict[str, object] = {"type": "redacted_thinking", "data": "abcdef"}
    Driver(assembler).drive(adapter.feed(message_start([redacted])), out)
    assert [e.error.code for e in out if isinstance(e, StreamWarning)] == [
        "quirk-reasoning-over-limit"
    ]
    assert blocks_of(out) == [
        ReasoningBlock(signature="ab", redacted=True, kind="redacted_thinking")
    ]


# -- the quiet shortcut (``AnthropicAdapter._quiet``) --------------------------------------------


class _LongWay(PythonStitcher):
    """A stitcher that never takes the adapter's shortcut: every event through ``_feed``,
    the driver and ``_observe`` (a quiet ``()`` is read as declined there)."""

    def _shortcut(self, adapter: Any) -> None:
        return None


def _each_feed(stitcher: Any, events: list[Any]) -> list[Any]:
    out: list[Any] = []
    for event in events:
        try:
            out.append(stitcher.feed(event))
        except Exception as exc:
            out.append((type(exc), str(exc)))
    return [*out, stitcher.close(), stitcher.result, stitcher.events_read]


# Both stitchers are the pure-Python reference (no C of toolstitch's own): the same code on
# either pass, so half the examples on each (tests/conftest.py checks it).
@per_pass(60, PROPERTY_SETTINGS)
@given(
    streams("anthropic", quirks=True, faults=True),
    st.lists(st.tuples(st.integers(0, 99), st.integers(0, 2)), max_size=3),
)
def test_a_quiet_event_is_one_the_long_way_gives_nothing_for(
    stream: Any, stops: list[tuple[int, int]]
) -> None:
    events = [copy.deepcopy(dict(event)) for event in stream.events]
    for at, index in stops:  # a block's stop anywhere, an early one mid-arguments included
        events.insert(at % (len(events) + 1), {"type": "content_block_stop", "index": index})
    shortcut = PythonStitcher(provider="anthropic")
    assert _each_feed(shortcut, copy.deepcopy(events)) == _each_feed(
        _LongWay(provider="anthropic"), events
    )


def test_the_stop_of_a_ready_call_and_message_stop_are_quiet_and_others_not() -> None:
    adapter = AnthropicAdapter(records=Assembler())
    stitcher = PythonStitcher(provider="anthropic")
    assert stitcher.adapter is not None
    block = {"type": "tool_use", "id": "t", "name": "f", "input": {}}
    start = {"type": "content_block_start", "index": 0, "content_block": block}
    fragment = {"type": "content_block_delta", "index": 0}
    stop = {"type": "content_block_stop", "index": 0}
    for event in ({"type": "message_start", "message": {"id": "m"}}, start):
        stitcher.feed(event)
    quiet = stitcher.adapter._fragment
    assert quiet is not None
    assert quiet(stop) is None  # nothing streamed yet: the stop reads the start's input
    stitcher.feed({**fragment, "delta": {"type": "input_json_delta", "partial_json": "{"}})
    assert quiet(stop) is None  # streamed, still open: its stop resolves it
    stitcher.feed({**fragment, "delta": {"type": "input_json_delta", "partial_json": "}"}})
    assert quiet(stop) == ()
    assert quiet({"type": "message_stop"}) == ()
    assert quiet({"type": "message_delta"}) is None
    assert AnthropicAdapter._fragment(adapter, stop) is None  # no block 0 here
