"""The Cohere v2 chat adapter: calls keyed by index, the tool plan as reasoning, message-end,
failures, the corpus recording, and SDK-shaped event objects."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import formats_next
from driven import Driven, assert_every_call_ends_once
from fixtures.build import (
    co_call_delta,
    co_call_end,
    co_call_start,
    co_content,
    co_message_end,
    co_plan,
)
from fixtures.expected import fixture_names, load, normalize, payloads
from strategies import loose_values
from toolstitch.adapters import CohereChatAdapter, detect
from toolstitch.adapters.cohere_chat import EVENT_TYPES, FAILED_REASONS
from toolstitch.stitch.stitcher import stitch
from toolstitch.vocab.call_events import CallDiscarded, CallReady, CallStarted, CallWarning, Event
from toolstitch.vocab.errors import ProviderError
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    StreamFailed,
    StreamWarning,
    TextDelta,
    Usage,
)

RECORDING = "cohere-chat-command-r-tool-plan-then-call.sse"


def run(*payloads: dict[str, Any]) -> list[Event]:
    adapter = Driven(CohereChatAdapter)
    events: list[Event] = []
    for payload in payloads:
        kind = payload.get("type")  # the SSE event name, as the Stitcher passes it
        events += adapter.feed(payload, event=kind if isinstance(kind, str) else None)
    return events + adapter.close()


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_detected_from_its_own_event_types_or_event_lines() -> None:
    assert detect({"type": "tool-call-start", "index": 0}) == "cohere-chat"
    assert detect({"type": "message-start", "id": "x"}) == "cohere-chat"
    assert detect({"index": 0}, "tool-call-end") == "cohere-chat"
    # Anthropic's types use underscores; they stay Anthropic's
    assert detect({"type": "message_start"}) == "anthropic"
    assert detect({"type": "tool-call-pause"}) is None


# -- the recording ----------------------------------------------------------------------------


def test_the_recording_gives_its_call_and_plan_whole_and_byte_by_byte() -> None:
    item = formats_next.entry(RECORDING)
    body = formats_next.body(item)
    for source in (body, [body[i : i + 1] for i in range(len(body))]):
        run_ = stitch(source)
        events = list(run_)
        result = run_.result
        assert result.provider == "cohere-chat"
        assert formats_next.calls_of(result) == formats_next.expected_calls(item)
        assert result.text == item["expected_text"]
        assert result.reasoning == item["expected_tool_plan"]
        blocks = [e for e in events if isinstance(e, ReasoningBlock)]
        assert blocks == [ReasoningBlock(text=item["expected_tool_plan"], kind="tool_plan")]
        # the plan ends before the call starts
        kinds = [type(e) for e in events]
        assert kinds.index(ReasoningBlock) < kinds.index(CallStarted)
        assert result.finish_reason == "TOOL_CALL"
        assert result.usage == {
            "billed_units": {"input_tokens": 23, "output_tokens": 41},
            "tokens": {"input_tokens": 906, "output_tokens": 77},
        }
        assert result.warnings == ()
        assert result.stream_error is None


def test_the_recording_through_replay_json() -> None:
    item = formats_next.entry(RECORDING)
    report = formats_next.check_replay(item, "cohere-chat")
    assert report["finish_reason"] == "TOOL_CALL"


# -- calls ------------------------------------------------------------------------------------


def test_a_call_is_ready_when_its_object_closes_and_ends_at_its_end_event() -> None:
    adapter = Driven(CohereChatAdapter)
    adapter.feed(co_call_start(0, "f_abc", "f"))
    ready = [e.call for e in adapter.feed(co_call_delta(0, '{"a": 1}')) if isinstance(e, CallReady)]
    assert [(c.index, c.id, c.name, c.arguments) for c in ready] == [(0, "f_abc", "f", '{"a": 1}')]
    # an object that never closed is over at tool-call-end, not at the end of the stream
    adapter.feed(co_call_start(1, "g_abc", "g"))
    adapter.feed(co_call_delta(1, '{"a": '))
    ended = adapter.feed(co_call_end(1))
    assert [(e.index, e.error.code) for e in ended if isinstance(e, CallDiscarded)] == [
        (1, "truncated-arguments")
    ]


def test_a_call_with_no_delta_gets_an_empty_object() -> None:
    events = run(co_call_start(0, "f_abc", "f"), co_call_end(0))
    ready = [e.call for e in events if isinstance(e, CallReady)]
    assert [(c.arguments, c.parsed_arguments) for c in ready] == [("{}", {})]


def test_an_index_already_used_moves_to_the_next_free_one() -> None:
    events = run(
        co_call_start(0, "f_1", "f"),
        co_call_delta(0, "{}"),
        co_call_end(0),
        co_call_start(0, "g_2", "g"),
        co_call_delta(0, '{"b": 2}'),
        co_call_end(0),
    )
    ready = [
        (e.call.index, e.call.id, e.call.arguments) for e in events if isinstance(e, CallReady)
    ]
    assert ready == [(0, "f_1", "{}"), (1, "g_2", '{"b": 2}')]
    warned = [(e.index, e.error.code) for e in events if isinstance(e, CallWarning)]
    assert warned == [(1, "quirk-tool-call-index-reused")]


def test_events_without_a_usable_index_go_to_the_latest_call() -> None:
    start = co_call_start(0, "f_1", "f")
    del start["index"]
    delta = co_call_delta(0, '{"a": 1}')
    delta["index"] = "0"
    events = run(start, delta, co_call_end(0))
    ready = [(e.call.index, e.call.arguments) for e in events if isinstance(e, CallReady)]
    assert ready == [(0, '{"a": 1}')]
    codes = [e.error.code for e in events if isinstance(e, CallWarning)]
    assert codes == ["quirk-index-invalid"]  # once per call


def test_tool_calls_as_one_object_is_read_from_the_sdk_shape_too() -> None:
    """``delta.message.tool_calls`` is one object, never a list, on the wire and in the SDK."""
    start = co_call_start(2, "f_x", "f")
    assert isinstance(start["delta"]["message"]["tool_calls"], dict)
    events = run(start, co_call_delta(2, "{}"), co_call_end(2))
    assert [e.call.index for e in events if isinstance(e, CallReady)] == [2]
    # a list holding the one object is read the same way
    start["delta"]["message"]["tool_calls"] = [start["delta"]["message"]["tool_calls"]]
    events = run(start, co_call_delta(2, "{}"), co_call_end(2))
    assert [(e.call.index, e.call.id) for e in events if isinstance(e, CallReady)] == [(2, "f_x")]


# -- reasoning, text, the end -----------------------------------------------------------------


def test_the_plan_ends_at_the_first_content_or_at_the_end() -> None:
    events = run(co_plan("Plan"), co_plan(" A."), co_content("content-delta", 0, text="Hi"))
    reasoning = [e for e in events if isinstance(e, (ReasoningDelta, ReasoningBlock, TextDelta))]
    assert reasoning == [
        ReasoningDelta(text="Plan"),
        ReasoningDelta(text=" A."),
        ReasoningBlock(text="Plan A.", kind="tool_plan"),
        TextDelta(text="Hi"),
    ]
    events = run(co_plan("Only a plan."))
    assert [e for e in events if isinstance(e, ReasoningBlock)] == [
        ReasoningBlock(text="Only a plan.", kind="tool_plan")
    ]


def test_thinking_content_is_reasoning_and_ends_with_its_block() -> None:
    events = run(
        co_content("content-start", 0, type="thinking", thinking=""),
        co_content("content-delta", 0, thinking="Hmm, "),
        co_content("content-delta", 0, thinking="yes."),
        {"type": "content-end", "index": 0},
        co_content("content-delta", 1, text="Yes."),
    )
    shown = [e for e in events if isinstance(e, (ReasoningDelta, ReasoningBlock, TextDelta))]
    assert shown == [
        ReasoningDelta(text="Hmm, "),
        ReasoningDelta(text="yes."),
        ReasoningBlock(text="Hmm, yes.", kind="thinking"),
        TextDelta(text="Yes."),
    ]


def test_message_end_gives_the_finish_reason_and_the_usage_as_sent() -> None:
    end = co_message_end("COMPLETE")
    end["delta"]["usage"]["cached_tokens"] = 1504
    events = run(end)
    assert [e for e in events if isinstance(e, FinishReason)] == [FinishReason(reason="COMPLETE")]
    usage = [e.usage for e in events if isinstance(e, Usage)]
    assert usage == [{**co_message_end("COMPLETE")["delta"]["usage"], "cached_tokens": 1504}]
    assert not any(isinstance(e, StreamFailed) for e in events)


@pytest.mark.parametrize("reason", ["ERROR", "ERROR_TOXIC", "ERROR_LIMIT", "TIMEOUT"])
def test_a_failed_finish_is_also_a_stream_failure(reason: str) -> None:
    events = run(co_message_end(reason, error="the model failed"))
    assert [e.reason for e in events if isinstance(e, FinishReason)] == [reason]
    failed = [e.error for e in events if isinstance(e, StreamFailed)]
    assert len(failed) == 1
    assert isinstance(failed[0], ProviderError)
    assert failed[0].kind == reason
    assert "the model failed" in failed[0].message


def test_max_tokens_is_no_failure_the_core_judges_the_truncation() -> None:
    events = run(
        co_call_start(0, "f_1", "f"), co_call_delta(0, '{"a": '), co_message_end("MAX_TOKENS")
    )
    assert not any(isinstance(e, StreamFailed) for e in events)
    assert not any(isinstance(e, CallReady) for e in events)


def test_citations_are_understood_and_unknown_events_warn_once_per_type() -> None:
    events = run(
        {"type": "citation-start", "index": 0, "delta": {"message": {"citations": {}}}},
        {"type": "citation-end", "index": 0},
        {"type": "debug", "prompt": "…"},
        {"type": "tool-call-pause"},
        {"type": "tool-call-pause"},
        {"type": "something-else"},
    )
    warnings = [e.error for e in events if isinstance(e, StreamWarning)]
    assert [w.code for w in warnings] == ["quirk-unknown-event", "quirk-unknown-event"]
    assert "'tool-call-pause'" in warnings[0].message


# -- SDK objects ------------------------------------------------------------------------------
# Models of the shape of the SDK's ``client.v2.chat_stream`` events (pydantic, unset fields
# left out of ``model_dump``), for shapes the recordings lack; the real SDK's own objects are
# tested in tests/test_cohere_sdk.py.


class _SDKModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")


class _Function(_SDKModel):
    name: str | None = None
    arguments: str | None = None


class _ToolCall(_SDKModel):
    id: str | None = None
    type: str | None = None
    function: _Function | None = None


class _Message(_SDKModel):
    tool_calls: _ToolCall | list[Any] | None = None  # a list only in message-start
    tool_plan: str | None = None
    content: Any = None


class _Delta(_SDKModel):
    message: _Message | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    error: str | None = None


class _StreamEvent(_SDKModel):
    type: str
    index: int | None = None
    id: str | None = None
    delta: _Delta | None = None


@pytest.mark.parametrize("name", fixture_names("cohere-chat"))
def test_sdk_shaped_event_objects(name: str) -> None:
    body, expected = load(name)
    objects = [_StreamEvent.model_validate(p) for p in payloads(body)]
    assert normalize(stitch(objects).result) == expected


# -- anything at all --------------------------------------------------------------------------

_values = loose_values
_calls = st.fixed_dictionaries(
    {},
    optional={
        "id": _values,
        "function": st.fixed_dictionaries({}, optional={"name": _values, "arguments": _values}),
    },
)
_events = st.fixed_dictionaries(
    {"type": st.sampled_from(sorted(EVENT_TYPES)) | _values},
    optional={
        "index": st.integers(-1, 3) | _values,
        "delta": st.fixed_dictionaries(
            {},
            optional={
                "message": st.fixed_dictionaries(
                    {},
                    optional={
                        "tool_calls": _calls | _values,
                        "tool_plan": _values,
                        "content": st.fixed_dictionaries(
                            {}, optional={"type": _values, "text": _values, "thinking": _values}
                        ),
                    },
                ),
                "finish_reason": st.sampled_from(sorted(FAILED_REASONS)) | _values,
                "usage": _values,
            },
        ),
    },
)


@settings(max_examples=150, deadline=None)
@given(events=st.lists(_events, max_size=12))
def test_any_events_never_raise_and_every_call_ends_once(events: list[dict[str, Any]]) -> None:
    assert_every_call_ends_once(run(*events))
