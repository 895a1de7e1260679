"""Bedrock ConverseStream: the adapter alone, the binary fixtures in every chunking, and the
Stitcher's event-stream framing.

The fixtures (tests/fixtures/bedrock-converse/*.eventstream, written by build.py) are fed
whole, frame by frame, byte by byte, split at random, as the event dicts boto3 gives (decoded
from the bytes by botocore, the reference) and through ``toolstitch replay --json``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import given, settings
from hypothesis import strategies as st

from chunks import aws_frames, byte_by_byte, split
from driven import Driven
from fixtures.expected import HERE, binary_fixture_names, load_binary, normalize
from toolstitch import cli
from toolstitch.adapters import ADAPTERS, detect
from toolstitch.adapters.bedrock_converse import (
    EVENTS,
    EXCEPTIONS,
    BedrockConverseAdapter,
    is_bedrock_event,
)
from toolstitch.core.assembler import Assembler
from toolstitch.stitch.stitcher import Stitcher, StitchResult, astitch, stitch
from toolstitch.testing._eventstream import bedrock_body, bedrock_event, bedrock_exception, frame
from toolstitch.vocab.call_events import CallDiscarded, CallReady, CallStarted, CallWarning, Event
from toolstitch.vocab.errors import ProviderError, StreamDecodeError
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    StreamFailed,
    StreamWarning,
    TextDelta,
    Usage,
)

BR = "bedrock-converse"
FIXTURES = binary_fixture_names(BR)
W = '{"city": "Paris"}'


def sdk_events(body: bytes) -> list[dict[str, Any]]:
    """The event dicts boto3 hands over, decoded from ``body`` by botocore's own decoder."""
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    out = []
    for message in buffer:
        headers = message.headers
        name = headers.get(":event-type") or headers[":exception-type"]
        out.append({name: json.loads(message.payload)})
    return out


def codes(events: list[Event]) -> list[str]:
    return [e.error.code for e in events if isinstance(e, (StreamWarning, CallWarning))]


# -- the fixtures in every chunking ----------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_there_are_binary_fixtures() -> None:
    assert len(FIXTURES) >= 10
    assert all(name.startswith(f"{BR}/") for name in FIXTURES)


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_whole_by_frame_and_by_byte(name: str) -> None:
    body, expected = load_binary(name)
    for pieces in ([body], aws_frames(body), byte_by_byte(body), body.splitlines(keepends=True)):
        assert normalize(stitch(pieces).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_as_sdk_events(name: str) -> None:
    body, expected = load_binary(name)
    assert normalize(stitch(sdk_events(body)).result) == expected
    assert normalize(stitch(sdk_events(body), BR).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_with_named_provider(name: str) -> None:
    body, expected = load_binary(name)
    assert normalize(stitch(body, BR).result) == expected


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(FIXTURES), st.lists(st.integers(0, 4000), max_size=20))
def test_fixture_split_anywhere(name: str, cuts: list[int]) -> None:
    body, expected = load_binary(name)
    assert normalize(stitch(split(body, [c for c in cuts if c <= len(body)])).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_replayed(name: str) -> None:
    _, expected = load_binary(name)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(["replay", str(HERE / f"{name}.eventstream"), "--json"])
    report = json.loads(out.getvalue())
    # 1 when a call was discarded or the stream failed (docs/cli.md)
    assert status == (1 if report["discarded"] or report["stream_error"] else 0)
    assert report["provider"] == BR
    assert [(c["index"], c["id"], c["name"], c["arguments"]) for c in report["calls"]] == [
        (c["index"], c["id"], c["name"], c["arguments"]) for c in expected["calls"]
    ]


def test_async_sdk_stream() -> None:
    body, expected = load_binary(f"{BR}/text-then-call")

    async def events() -> AsyncIterator[dict[str, Any]]:  # what aioboto3's stream yields
        for event in sdk_events(body):
            yield event

    async def run() -> StitchResult:
        return await astitch(events()).collect()

    assert normalize(asyncio.run(run())) == expected


# -- the adapter ------------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_registered_and_detected() -> None:
    assert ADAPTERS[BR] is BedrockConverseAdapter
    for name in EVENTS | EXCEPTIONS:
        assert detect({name: {}}) == BR
    assert detect({"accessDeniedException": {}}) == BR
    assert detect({"someError": {}}, "exception") == BR
    assert detect({"messageStart": {}, "x": 1}) is None
    assert not is_bedrock_event({"choices": []})


def _start(index: int, tool_id: str = "t1", name: str = "f", **extra: Any) -> dict[str, Any]:
    tool = {"toolUseId": tool_id, "name": name, **extra}
    return {"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": tool}}}


def _delta(index: int, **delta: Any) -> dict[str, Any]:
    return {"contentBlockDelta": {"contentBlockIndex": index, "delta": delta, "p": "abc"}}


def _stop(index: int) -> dict[str, Any]:
    return {"contentBlockStop": {"contentBlockIndex": index}}


def run_events(*events: dict[str, Any], limits: Limits | None = None) -> list[Event]:
    stitcher = Stitcher(BR, limits=limits)
    out = [e for event in events for e in stitcher.feed(event)]
    return out + stitcher.close()


def test_a_call_and_its_stream_events() -> None:
    events = run_events(
        {"messageStart": {"role": "assistant", "p": "abcd"}},
        _delta(0, text="Hi"),
        _stop(0),
        _start(1, "tooluse_1", "get_weather", type="tool_use"),
        _delta(1, toolUse={"input": ""}),
        _delta(1, toolUse={"input": W}),
        _stop(1),
        {"messageStop": {"stopReason": "tool_use", "p": "ab"}},
        {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 4}, "metrics": {}}},
    )
    kinds = [type(e) for e in events]
    ready = [e for e in events if isinstance(e, CallReady)]
    assert [(c.call.index, c.call.id, c.call.name, c.call.arguments) for c in ready] == [
        (1, "tooluse_1", "get_weather", W)
    ]
    # Ready at its contentBlockStop, before the finish reason.
    assert kinds.index(CallReady) < kinds.index(FinishReason)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hi"]
    assert [e.usage for e in events if isinstance(e, Usage)] == [
        {"inputTokens": 3, "outputTokens": 4}
    ]
    assert codes(events) == []


def test_signed_reasoning_block() -> None:
    events = run_events(
        _delta(0, reasoningContent={"text": "Think"}),
        _delta(0, reasoningContent={"text": "ing."}),
        _delta(0, reasoningContent={"signature": "sig=="}),
        _stop(0),
    )
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Think", "ing."]
    assert [e for e in events if isinstance(e, ReasoningBlock)] == [
        ReasoningBlock(text="Thinking.", signature="sig==", kind="reasoningContent")
    ]


@pytest.mark.parametrize(
    ("content", "signature"),
    [("QUJD", "QUJD"), (b"ABC", base64.b64encode(b"ABC").decode())],  # wire text; boto3 bytes
)
def test_redacted_reasoning_block(content: object, signature: str) -> None:
    events = run_events(_delta(0, reasoningContent={"redactedContent": content}), _stop(0))
    assert [e for e in events if isinstance(e, ReasoningBlock)] == [
        ReasoningBlock(signature=signature, redacted=True, kind="reasoningContent")
    ]


def test_a_reasoning_block_without_its_stop_is_reported_at_close() -> None:
    events = run_events(_delta(2, reasoningContent={"text": "a"}))
    assert [e.text for e in events if isinstance(e, ReasoningBlock)] == ["a"]


@pytest.mark.parametrize("name", sorted(EXCEPTIONS))
def test_exceptions_are_stream_errors_of_their_kind(name: str) -> None:
    events = run_events(
        _start(0),
        _delta(0, toolUse={"input": '{"a": '}),
        {name: {"message": "boom", "p": "abc"}},
    )
    (failed,) = [e for e in events if isinstance(e, StreamFailed)]
    assert isinstance(failed.error, ProviderError)
    assert failed.error.kind == name
    assert "boom" in failed.error.message
    assert failed.error.payload == {"message": "boom", "code": name}
    assert [e.error.code for e in events if isinstance(e, CallDiscarded)] == ["truncated-arguments"]


def test_server_tool_and_its_result_block() -> None:
    events = run_events(
        _start(0, "s1", "nova_grounding", type="server_tool_use"),
        _delta(0, toolUse={"input": '{"q": 1}'}),
        _stop(0),
        {
            "contentBlockStart": {
                "contentBlockIndex": 1,
                "start": {"toolResult": {"toolUseId": "s1", "status": "success"}},
            }
        },
        _delta(1, toolResult=[{"json": {"x": 1}}]),
        _stop(1),
    )
    assert not [e for e in events if isinstance(e, CallReady)]
    assert codes(events) == ["quirk-tool-result-block"]
    stitcher = Stitcher(BR)
    stitcher.feed(_start(0, "s1", "nova_grounding", type="server_tool_use"))
    stitcher.feed(_stop(0))
    stitcher.close()
    (server,) = stitcher.result.server_calls
    assert (server.id, server.name, server.type, server.arguments) == (
        "s1",
        "nova_grounding",
        "server_tool_use",
        "{}",  # empty input, as for a client call
    )


def test_unknown_keys_warn_once_each() -> None:
    events = run_events(
        {"somethingNew": {}},
        {"somethingNew": {}},
        _delta(0, citation={}),
        {"contentBlockStart": {"contentBlockIndex": 0, "start": {"image": {}}}},
        _delta(0, toolResult=[]),  # outside a toolResult block
    )
    assert codes(events) == ["quirk-unknown-event"] * 4


def test_block_indices_that_cannot_be_call_indices() -> None:
    events = run_events(
        _start(0, "a", "f"),
        _stop(0),
        _start(0, "b", "g"),  # the same block index again
        _stop(0),
        _start(-1, "c", "h"),
        _stop(-1),
        {"contentBlockStart": {"contentBlockIndex": "1", "start": {"toolUse": {}}}},
    )
    ready = [(e.call.index, e.call.id) for e in events if isinstance(e, CallReady)]
    assert ready == [(0, "a"), (1, "b"), (2, "c")]
    assert codes(events) == [
        "quirk-block-index-reused",
        "quirk-index-negative",
        "quirk-index-invalid",
    ]


def test_input_without_a_block_start_is_a_call_without_a_name() -> None:
    events = run_events(_delta(4, toolUse={"input": W}), _stop(4))
    (discarded,) = [e for e in events if isinstance(e, CallDiscarded)]
    assert (discarded.index, discarded.error.code) == (4, "missing-name")


def test_reasoning_text_is_bounded() -> None:
    events = run_events(
        _delta(0, reasoningContent={"text": "12345"}),
        _delta(0, reasoningContent={"text": "67890X"}),
        _stop(0),
        limits=Limits(max_reasoning_chars=10),
    )
    assert codes(events) == ["quirk-reasoning-over-limit"]
    # The one bound of every adapter (BoundedText): the first max_reasoning_chars characters.
    assert [e.text for e in events if isinstance(e, ReasoningBlock)] == ["1234567890"]


def test_open_blocks_are_bounded() -> None:
    events = run_events(
        *[_delta(i, reasoningContent={"text": "x"}) for i in range(5)],
        limits=Limits(max_calls=2),
    )
    assert codes(events) == ["quirk-too-many-open-blocks"]
    assert len([e for e in events if isinstance(e, ReasoningBlock)]) == 2


def test_adapter_alone_returns_items() -> None:
    adapter = BedrockConverseAdapter()
    assert list(adapter.feed({"messageStop": {"stopReason": "end_turn"}})) == [
        FinishReason(reason="end_turn")
    ]
    driven = Driven(BedrockConverseAdapter)
    driven.feed(_start(0))
    driven.feed(_delta(0, toolUse={"input": "{"}))
    assert [type(e) for e in driven.feed(_stop(0))] == [CallDiscarded]
    assert isinstance(driven.assembler, Assembler)


# -- the Stitcher's event-stream framing ------------------------------------------------------


def test_an_exception_frame_of_any_name() -> None:
    body = bedrock_event("messageStart", {"role": "assistant"}) + frame(
        {":exception-type": "accessDenied", ":message-type": "exception"}, b'{"message": "no"}'
    )
    result = stitch(body).result
    assert isinstance(result.stream_error, ProviderError)
    assert result.stream_error.kind == "accessDenied"


def test_an_error_frame_with_its_headers() -> None:
    body = frame(
        {":message-type": "error", ":error-code": "InternalFailure", ":error-message": "oops"},
        b"",
    )
    result = stitch(body).result
    assert result.provider == BR
    assert isinstance(result.stream_error, ProviderError)
    assert (result.stream_error.kind, result.stream_error.payload) == (
        "InternalFailure",
        {"message": "oops", "code": "InternalFailure"},
    )


def test_a_frame_whose_payload_is_not_json_after_detection() -> None:
    body = bedrock_event("messageStart", {"role": "assistant"}) + frame(
        {":event-type": "contentBlockDelta", ":message-type": "event"}, b"{nope"
    )
    result = stitch(body).result
    assert result.stream_error is not None
    assert result.stream_error.code == "stream-decode-error"
    headless = bedrock_event("messageStart", {}) + frame({":message-type": "event"}, b"{}")
    assert "no event type" in str(stitch(headless).result.stream_error)


def test_a_bad_crc_after_detection_is_a_stream_failure() -> None:
    body = bytearray(bedrock_body([_start(0), _delta(0, toolUse={"input": "{"}), _stop(0)]))
    body[-1] ^= 1
    # Frame by frame: the frames before the bad one are read (a decoder error loses the
    # frames completed in the same chunk, as every decoder documents).
    result = stitch([*aws_frames(bytes(body[:-4])), bytes(body[-4:])]).result
    assert result.stream_error is not None
    assert result.stream_error.code == "stream-decode-error"
    assert "message CRC32" in result.stream_error.message
    assert [d.error.code for d in result.discarded] == ["truncated-arguments"]


def test_a_body_cut_inside_a_frame() -> None:
    body = bedrock_body([_start(0), _delta(0, toolUse={"input": W}), _stop(0)])
    result = stitch(body[:-5]).result
    assert result.stream_error is not None
    assert "ends inside a frame" in result.stream_error.message


def test_a_first_frame_with_a_bad_crc_is_no_known_format() -> None:
    body = bytearray(bedrock_exception("throttlingException", {"message": "slow"}))
    body[-1] ^= 1
    with pytest.raises(StreamDecodeError):
        stitch(bytes(body)).result  # noqa: B018


def test_short_binary_heads_wait_for_a_whole_prelude() -> None:
    body = bedrock_body([_start(0, "t", "f"), _stop(0)])
    stitcher = Stitcher()
    for byte in byte_by_byte(body[:11]):
        assert stitcher.feed(byte) == []
    stitcher.feed(body[11:])
    stitcher.close()
    assert [c.id for c in stitcher.result.calls] == ["t"]
    with pytest.raises(StreamDecodeError):
        stitch(b"\x00\x00\x00").result  # noqa: B018


def test_text_bodies_are_not_mistaken_for_event_streams() -> None:
    sse = Path(HERE / "anthropic" / "error-event.sse").read_bytes()
    assert stitch(sse).result.provider == "anthropic"


def test_bedrock_tool_config_declares_the_tools() -> None:
    tools = [
        {
            "toolSpec": {
                "name": "get_weather",
                "inputSchema": {"json": {"type": "object", "required": ["city"]}},
            }
        },
        {"cachePoint": {"type": "default"}},
    ]
    body = bedrock_body(
        [
            _start(0, "t1", "get_weather"),
            _delta(0, toolUse={"input": "{}"}),
            _stop(0),
            _start(1, "t2", "get_time"),
            _stop(1),
        ]
    )
    result = stitch(body, tools=tools).result
    assert sorted((d.id, d.error.code) for d in result.discarded) == [
        ("t1", "schema-violation"),
        ("t2", "unknown-tool"),
    ]


# -- any events at all: nothing escapes, every call ends once ----------------------------------

_KEYS = [
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
    "throttlingException",
    "contentBlockIndex",
    "start",
    "delta",
    "toolUse",
    "toolUseId",
    "name",
    "type",
    "input",
    "text",
    "reasoningContent",
    "signature",
    "redactedContent",
    "toolResult",
    "stopReason",
    "usage",
    "p",
]
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-2, 4)
    | st.sampled_from(["", "{", '"a": 1}', "server_tool_use", "f", "t1"])
    | st.binary(max_size=4)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(_KEYS), _VALUES, min_size=1, max_size=2)))
def test_any_events_never_raise_and_every_call_ends_once(events: list[dict[str, Any]]) -> None:
    driven = Driven(BedrockConverseAdapter)
    out = [e for event in events for e in driven.feed(event)] + driven.close()
    started = [e.index for e in out if isinstance(e, CallStarted)]
    ended = [e.index for e in out if isinstance(e, (CallReady, CallDiscarded))]
    assert sorted(started) == sorted(ended)
    assert len(set(ended)) == len(ended)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(FIXTURES),
    st.lists(st.tuples(st.integers(0, 4000), st.integers(1, 255)), max_size=3),
    st.integers(1, 4000),
    st.lists(st.integers(0, 4000), max_size=6),
)
def test_damaged_bodies_are_stream_errors(
    name: str, flips: list[tuple[int, int]], keep: int, cuts: list[int]
) -> None:
    """A flipped byte or a cut inside a frame is always noticed: a ``StreamDecodeError``
    before the format is known, a ``stream-decode-error`` after; nothing else escapes."""
    original = load_binary(name)[0]
    body = bytearray(original[:keep])
    for at, mask in flips:
        if at < len(body):
            body[at] ^= mask
    boundaries = set(itertools.accumulate((len(f) for f in aws_frames(original)), initial=0))
    damaged = bytes(body) != original[: len(body)] or len(body) not in boundaries
    try:
        result = stitch(split(bytes(body), [c for c in cuts if c <= len(body)])).result
    except StreamDecodeError:
        assert damaged
        return
    if damaged:
        assert result.stream_error is not None
        assert result.stream_error.code == "stream-decode-error"
    else:
        error = result.stream_error
        # Whole frames, none of which meant anything yet (a body cut just after its first
        # frame), is a stream nothing was understood of: that StreamDecodeError, no other.
        nothing = not (result.calls or result.text or result.finish_reason or result.usage)
        assert (
            error is None
            or isinstance(error, ProviderError)
            or (nothing and error.code == "stream-decode-error")
        )
