"""Bedrock ``InvokeModelWithResponseStream`` with Anthropic models: the binary fixtures in every
chunking, as boto3's event dicts, the adapter alone, detection, and the wire checked by
botocore.

The fixtures (tests/fixtures/anthropic-bedrock/*.eventstream, written by build.py with the
suite's one frame encoder, ``toolstitch.testing._eventstream``) are fed whole, frame by frame,
byte by byte and cut at random, with the provider detected and named, and as the dicts boto3
gives, decoded from the bytes by botocore's own event-stream parser with the service model of
``bedrock-runtime`` (what ``invoke_model_with_response_stream(...)["body"]`` and the
``anthropic`` SDK's Bedrock decoder read). Every expected outcome is written by hand.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
from functools import cache
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from botocore.loaders import Loader
from botocore.model import ServiceModel, Shape
from botocore.parsers import EventStreamJSONParser
from hypothesis import given, settings
from hypothesis import strategies as st

from chunks import aws_frames, byte_by_byte, split
from driven import Driven, assert_every_call_ends_once
from fixtures.expected import HERE, binary_fixture_names, load_binary, normalize
from toolstitch import cli
from toolstitch.adapters import ADAPTERS, PROVIDERS, detect, shared_by
from toolstitch.adapters.anthropic import AnthropicAdapter
from toolstitch.adapters.anthropic_bedrock import METRICS_KEY, AnthropicBedrockAdapter
from toolstitch.adapters.bedrock_converse import EVENTS, EXCEPTIONS, is_bedrock_event
from toolstitch.core.instructions import Finish
from toolstitch.messages import Message, UserMessage, to_anthropic
from toolstitch.runner import write_history
from toolstitch.stitch.stitcher import Stitcher, StitchResult, stitch
from toolstitch.testing import PythonStitcher
from toolstitch.testing._eventstream import bedrock_body, bedrock_event, bedrock_exception
from toolstitch.vocab.call_events import CallDiscarded, CallReady, CallWarning, Event
from toolstitch.vocab.errors import ProviderError, StreamDecodeError
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningBlock,
    StreamFailed,
    StreamWarning,
    TextDelta,
)

AB = "anthropic-bedrock"
FIXTURES = binary_fixture_names(AB)
W = '{"city": "Paris"}'
#: What build.py puts in every fixture's message_stop (by hand, as there).
METRICS = {
    "inputTokenCount": 100,
    "outputTokenCount": 42,
    "invocationLatency": 1840,
    "firstByteLatency": 420,
}
#: The in-stream exceptions of InvokeModelWithResponseStream (AWS's ResponseStream union).
RESPONSE_STREAM_EXCEPTIONS = (
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "modelTimeoutException",
    "serviceUnavailableException",
)


# -- botocore, the reference ------------------------------------------------------------------


@cache
def response_stream_shape() -> Shape:
    """botocore's ``ResponseStream`` shape of ``bedrock-runtime`` (what boto3 parses with)."""
    model = ServiceModel(Loader().load_service_model("bedrock-runtime", "service-2"))
    return model.shape_for("ResponseStream")


def botocore_messages(body: bytes) -> list[Any]:
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    return list(buffer)


def sdk_events(body: bytes) -> list[dict[str, Any]]:
    """The dicts boto3 yields for ``body``: each chunk as botocore's own parser makes it
    (``{"chunk": {"bytes": b"<the event's JSON>"}}``); an exception as ``{name: payload}``
    (botocore raises it, as ``EventStreamError``, instead of yielding it)."""
    parser = EventStreamJSONParser()
    out: list[dict[str, Any]] = []
    for message in botocore_messages(body):
        response = message.to_response_dict()
        if response["status_code"] == 200:
            out.append(parser.parse(response, response_stream_shape()))
        else:
            out.append({message.headers[":exception-type"]: json.loads(message.payload)})
    return out


def chunk(event: dict[str, Any]) -> dict[str, Any]:
    """One boto3-style chunk: the event's JSON as raw bytes."""
    return {"chunk": {"bytes": json.dumps(event).encode()}}


def wire_chunk(event: dict[str, Any]) -> dict[str, Any]:
    """One wire-style chunk (what the Stitcher builds from a frame): base64 text, padded."""
    return {"chunk": {"bytes": base64.b64encode(json.dumps(event).encode()).decode(), "p": "ab"}}


def codes(events: list[Event]) -> list[str]:
    return [e.error.code for e in events if isinstance(e, (StreamWarning, CallWarning))]


def run_events(*payloads: dict[str, Any], provider: str = AB) -> list[Event]:
    stitcher = Stitcher(provider)
    out = [e for payload in payloads for e in stitcher.feed(payload)]
    return out + stitcher.close()


def run_pieces(pieces: list[bytes], provider: str = "auto") -> tuple[list[Event], StitchResult]:
    stitcher = Stitcher(provider)
    out = [e for piece in pieces for e in stitcher.feed(piece)]
    out += stitcher.close()
    return out, stitcher.result


MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_bdrk_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 7, "output_tokens": 1},
    },
}


def tool_start(index: int, tool_id: str, name: str) -> dict[str, Any]:
    return {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
    }


def json_delta(index: int, fragment: str) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": fragment},
    }


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


# -- the fixtures in every chunking -------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_there_are_fixtures() -> None:
    assert [name.split("/")[1] for name in FIXTURES] == [
        "cut-after-tool-start",
        "model-stream-error-mid-call",
        "parallel-tools",
        "text-then-tool",
        "thinking-signed-then-tool",
    ]


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_whole_by_frame_and_by_byte(name: str) -> None:
    body, expected = load_binary(name)
    for pieces in ([body], aws_frames(body), byte_by_byte(body)):
        assert normalize(stitch(pieces).result) == expected
        assert normalize(stitch(pieces, AB).result) == expected


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FIXTURES), st.lists(st.integers(0, 3000), max_size=24))
def test_fixture_split_anywhere(name: str, cuts: list[int]) -> None:
    body, expected = load_binary(name)
    assert normalize(stitch(split(body, cuts)).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_as_boto3_events(name: str) -> None:
    body, expected = load_binary(name)
    events = sdk_events(body)
    assert all(isinstance(e["chunk"]["bytes"], bytes) for e in events if "chunk" in e)
    assert normalize(stitch(events).result) == expected
    assert normalize(stitch(events, AB).result) == expected


# PythonStitcher is the same code on either pass (the pure-Python pass runs it in every other
# test): on the native pass only.
@pytest.mark.once
@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_on_the_pure_python_path(name: str) -> None:
    body, expected = load_binary(name)
    for source in (body, sdk_events(body)):
        stitcher = PythonStitcher()
        for piece in [source] if isinstance(source, bytes) else source:
            stitcher.feed(piece)
        stitcher.close()
        assert normalize(stitcher.result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_replayed(name: str) -> None:
    _, expected = load_binary(name)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(["replay", str(HERE / f"{name}.eventstream"), "--json"])
    report = json.loads(out.getvalue())
    assert status == (1 if expected["discarded"] or expected["stream_error"] else 0)
    assert report["provider"] == AB
    assert [(c["index"], c["id"], c["name"], c["arguments"]) for c in report["calls"]] == [
        (c["index"], c["id"], c["name"], c["arguments"]) for c in expected["calls"]
    ]


# -- the wire, checked by botocore --------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("name", FIXTURES)
def test_the_frames_are_what_botocore_reads(name: str) -> None:
    body, _ = load_binary(name)
    messages = botocore_messages(body)
    assert sum(m.prelude.total_length for m in messages) == len(body)  # nothing left over
    for message in messages:
        headers = dict(message.headers)
        if headers[":message-type"] == "exception":
            assert headers[":exception-type"] in RESPONSE_STREAM_EXCEPTIONS
            continue
        assert headers == {
            ":event-type": "chunk",
            ":content-type": "application/json",
            ":message-type": "event",
        }
        payload = json.loads(message.payload)
        assert sorted(payload) == ["bytes", "p"]  # the PayloadPart and its padding
        event = json.loads(base64.b64decode(payload["bytes"], validate=True))
        assert event["type"] in {
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        }


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_exceptions_are_those_of_the_service_model() -> None:
    members = set(response_stream_shape().members)
    assert members == {"chunk", *RESPONSE_STREAM_EXCEPTIONS}
    assert set(EXCEPTIONS) < set(RESPONSE_STREAM_EXCEPTIONS)  # ConverseStream's, less one


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_boto3_gives_the_event_json_as_raw_bytes() -> None:
    body = bedrock_body([wire_chunk({"type": "ping"})])
    assert sdk_events(body) == [{"chunk": {"bytes": b'{"type": "ping"}'}}]


# -- what the fixtures hold, beyond their summary -----------------------------------------------


def test_the_call_is_ready_before_the_message_ends_and_the_metrics_are_usage() -> None:
    body, _ = load_binary(f"{AB}/text-then-tool")
    for pieces in ([body], byte_by_byte(body)):
        events, result = run_pieces(pieces)
        kinds = [type(e) for e in events]
        assert kinds.index(CallReady) < kinds.index(FinishReason)
        assert [e.text for e in events if isinstance(e, TextDelta)] == ["Let me ", "check."]
        assert result.usage == {"input_tokens": 100, "output_tokens": 42, METRICS_KEY: METRICS}
        assert codes(events) == []


def test_a_thinking_block_with_its_signature_then_the_call() -> None:
    body, _ = load_binary(f"{AB}/thinking-signed-then-tool")
    result = stitch(body).result
    assert result.reasoning == "The user wants the weather."
    assert result.reasoning_blocks == (
        ReasoningBlock(
            text="The user wants the weather.",
            signature="EqoBCkgIBxABGAIiQL2sig==",
            kind="thinking",
        ),
    )
    # The history to send back: the Anthropic shape, thinking first and signed.
    system, messages = to_anthropic([UserMessage("Weather in Paris?"), result.message()])
    assert system is None
    assert messages[1] == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "The user wants the weather.",
                "signature": "EqoBCkgIBxABGAIiQL2sig==",
            },
            {
                "type": "tool_use",
                "id": "toolu_bdrk_01T",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
    }


def test_the_runner_writes_the_anthropic_history_for_this_provider() -> None:
    body, _ = load_binary(f"{AB}/thinking-signed-then-tool")
    conversation: list[Message] = [UserMessage("Weather in Paris?"), stitch(body).result.message()]
    assert write_history(conversation, AB) == write_history(conversation, "anthropic")


@pytest.mark.parametrize("boto3", [False, True])
@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(0, 3000), max_size=24))
def test_an_exception_mid_call_discards_it_at_every_cut(boto3: bool, cuts: list[int]) -> None:
    body, _ = load_binary(f"{AB}/model-stream-error-mid-call")
    if boto3:
        stitcher = Stitcher()
        events = [e for event in sdk_events(body) for e in stitcher.feed(event)]
        events += stitcher.close()
        result = stitcher.result
    else:
        events, result = run_pieces(split(body, cuts))
    assert not [e for e in events if isinstance(e, CallReady)]
    assert [(d.id, d.error.code) for d in result.discarded] == [
        ("toolu_bdrk_01E", "truncated-arguments")
    ]
    error = result.stream_error
    assert isinstance(error, ProviderError)
    assert error.kind == "modelStreamErrorException"
    assert error.payload == {
        "message": "Model Stream Error",
        "originalStatusCode": 500,
        "originalMessage": "The model stream failed.",
        "code": "modelStreamErrorException",
    }


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(0, 3000), max_size=24))
def test_a_stream_cut_after_the_tool_start_never_makes_a_call_ready(cuts: list[int]) -> None:
    body, _ = load_binary(f"{AB}/cut-after-tool-start")
    for pieces in (split(body, cuts), byte_by_byte(body), [body]):
        for provider in ("auto", AB):
            events, result = run_pieces(pieces, provider)
            assert not [e for e in events if isinstance(e, CallReady)]
            assert [(d.index, d.error.code) for d in result.discarded] == [
                (1, "truncated-arguments")
            ]
            assert result.calls == ()


# -- the adapter --------------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_registered_after_converse_and_detected() -> None:
    assert ADAPTERS[AB] is AnthropicBedrockAdapter
    assert PROVIDERS.index(AB) == PROVIDERS.index("bedrock-converse") + 1
    assert detect({"chunk": {"bytes": "eyJ0eXBlIjoicGluZyJ9", "p": "abc"}}) == AB
    assert detect({"chunk": {"bytes": b'{"type":"ping"}'}}) == AB
    assert not is_bedrock_event({"chunk": {"bytes": "e30="}})


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_other_providers_are_detected_as_before() -> None:
    for name in EVENTS | EXCEPTIONS:
        assert detect({name: {}}) == "bedrock-converse"
    assert detect({"someError": {}}, "exception") == "bedrock-converse"
    assert detect({"type": "content_block_start"}) == "anthropic"
    assert detect({"type": "message_stop"}) == "anthropic"
    # The openai SDK's ChunkEvent, dumped, has a type beside its chunk.
    assert detect({"type": "chunk", "chunk": {"choices": []}}) == "openai-chat"
    assert detect({"chunk": {"bytes": "e30="}, "other": 1}) is None
    assert detect({"chunk": {"text": "x"}}) is None
    assert detect({"chunk": "e30="}) is None


def test_boto3_dicts_written_by_hand() -> None:
    events = run_events(
        chunk(MESSAGE_START),
        chunk(tool_start(0, "toolu_1", "get_weather")),
        chunk(json_delta(0, "")),
        chunk(json_delta(0, '{"city": ')),
        chunk(json_delta(0, '"Paris"}')),
        chunk(block_stop(0)),
        chunk({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        chunk({"type": "message_stop", METRICS_KEY: {"inputTokenCount": 7}}),
    )
    ready = [e.call for e in events if isinstance(e, CallReady)]
    assert [(c.index, c.id, c.name, c.arguments) for c in ready] == [
        (0, "toolu_1", "get_weather", W)
    ]
    assert codes(events) == []


def test_wire_chunks_with_their_padding() -> None:
    events = run_events(
        wire_chunk(MESSAGE_START),
        wire_chunk(tool_start(0, "toolu_1", "get_weather")),
        wire_chunk(json_delta(0, W)),
        wire_chunk(block_stop(0)),
    )
    ready = [e.call for e in events if isinstance(e, CallReady)]
    assert [(c.id, c.arguments) for c in ready] == [("toolu_1", W)]


def test_the_inner_adapter_gives_the_same_events_as_anthropic_alone() -> None:
    anthropic: list[dict[str, Any]] = [
        MESSAGE_START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        block_stop(0),
        tool_start(1, "toolu_1", "f"),
        json_delta(1, '{"a": [1, 2'),
        json_delta(1, "]}"),
        block_stop(1),
        tool_start(2, "toolu_2", "g"),
        json_delta(2, '{"b": tru'),
        {"type": "new_event"},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"x": 1}},
        {"type": "message_stop"},
    ]
    alone, wrapped = Driven(AnthropicAdapter), Driven(AnthropicBedrockAdapter)
    expected = [e for event in anthropic for e in alone.feed(event)] + alone.close()
    got = [e for event in anthropic for e in wrapped.feed(chunk(event))] + wrapped.close()
    assert got == expected
    assert [type(e).__name__ for e in got if isinstance(e, (CallReady, CallDiscarded))] == [
        "CallReady",
        "CallDiscarded",
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_close_is_the_inner_adapters_close() -> None:
    adapter = AnthropicBedrockAdapter()
    inner = AnthropicAdapter()
    for event in (MESSAGE_START, tool_start(0, "t", "f")):
        list(adapter.feed(chunk(event)))
        list(inner.feed(event))
    items = list(adapter.close())
    assert items == list(inner.close())
    assert isinstance(items[-1], Finish)


@pytest.mark.parametrize("name", RESPONSE_STREAM_EXCEPTIONS)
def test_exceptions_are_stream_errors_of_their_kind(name: str) -> None:
    # As a dict (what boto3's form would be), with the padding the wire has.
    events = run_events(
        chunk(MESSAGE_START),
        chunk(tool_start(0, "t1", "f")),
        chunk(json_delta(0, '{"a": ')),
        {name: {"message": "boom", "p": "abcd"}},
    )
    (failed,) = [e for e in events if isinstance(e, StreamFailed)]
    assert isinstance(failed.error, ProviderError)
    assert (failed.error.kind, failed.error.payload) == (name, {"message": "boom", "code": name})
    assert [e.error.code for e in events if isinstance(e, CallDiscarded)] == ["truncated-arguments"]
    # As an exception frame of the wire, after a chunk.
    body = bedrock_event("chunk", {"bytes": base64.b64encode(b'{"type":"ping"}').decode()})
    body += bedrock_exception(name, {"message": "boom"})
    result = stitch(body).result
    assert result.provider == AB
    assert isinstance(result.stream_error, ProviderError)
    assert result.stream_error.kind == name
    assert result.stream_error.payload == {"message": "boom", "code": name}


@pytest.mark.parametrize(
    ("part", "what"),
    [
        ({"bytes": "not base64!"}, "not base64"),
        ({"bytes": "é"}, "not base64"),
        ({"bytes": base64.b64encode(b"{nope").decode()}, "not JSON"),
        ({"bytes": b"\xff\xfe{"}, "not JSON"),
        ({"bytes": b"[1, 2]"}, "not a JSON object"),
        ({"bytes": 42}, "a int, not base64 text or bytes"),
        ("eyJ0eXBlIjoicGluZyJ9", "the chunk is a str"),
    ],
)
def test_a_bad_chunk_is_a_decode_failure_and_the_stream_goes_on(part: object, what: str) -> None:
    events = run_events(
        chunk(MESSAGE_START),
        {"chunk": part},
        chunk(tool_start(0, "t1", "f")),
        chunk(json_delta(0, W)),
        chunk(block_stop(0)),
    )
    (failed,) = [e for e in events if isinstance(e, StreamFailed)]
    assert isinstance(failed.error, StreamDecodeError)
    assert failed.error.code == "stream-decode-error"
    assert failed.error.message.startswith("chunk 2: ")
    assert what in failed.error.message
    assert [e.call.id for e in events if isinstance(e, CallReady)] == ["t1"]


def test_a_bad_chunk_on_the_wire_after_detection() -> None:
    body = bedrock_body(
        [
            wire_chunk(MESSAGE_START),
            wire_chunk(tool_start(0, "t1", "f")),
            {"chunk": {"bytes": "%%%"}},
            wire_chunk(json_delta(0, "{")),
        ]
    )
    result = stitch(body).result
    assert result.stream_error is not None
    assert result.stream_error.code == "stream-decode-error"
    assert [(d.id, d.error.code) for d in result.discarded] == [("t1", "truncated-arguments")]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_empty_chunks_carry_nothing() -> None:
    assert list(AnthropicBedrockAdapter().feed({"chunk": {"bytes": b""}})) == []
    assert list(AnthropicBedrockAdapter().feed({"chunk": {"p": "abc"}})) == []


def test_unknown_events_warn_once_each() -> None:
    events = run_events(
        chunk(MESSAGE_START),
        {"initial-response": {}},
        {"initial-response": {}},
        {"somethingNew": {}},
        chunk({"type": "brand_new_event"}),  # the inner adapter's own report
        chunk({"type": "brand_new_event"}),
    )
    assert codes(events) == ["quirk-unknown-event"] * 3


def test_the_native_fast_path_of_plain_anthropic_is_untouched() -> None:
    # Plain Anthropic dicts: the adapter's shortcut is set once the provider is confirmed.
    anthropic = Stitcher("anthropic")
    anthropic.feed(MESSAGE_START)
    assert anthropic._fragment is not None
    # This provider's chunks are read by its own _feed, with no shortcut.
    bedrock = Stitcher(AB)
    bedrock.feed(chunk(MESSAGE_START))
    assert bedrock._fragment is None
    assert bedrock._direct is not None
    assert type(bedrock.adapter) is AnthropicBedrockAdapter


def test_an_exception_before_any_chunk_with_the_provider_named() -> None:
    # The frame is ConverseStream's too (``shared_by``): it neither confirms nor contradicts.
    body = bedrock_exception("throttlingException", {"message": "Too many requests"})
    for source in (body, [{"throttlingException": {"message": "Too many requests"}}]):
        result = stitch(source, AB).result
        assert result.provider == AB
        assert isinstance(result.stream_error, ProviderError)
        assert result.stream_error.kind == "throttlingException"
    assert shared_by({"throttlingException": {}}) == {AB}
    assert shared_by({"anyError": {}}, "exception") == {AB}
    assert shared_by({"messageStart": {}}) == set()
    assert shared_by({"chunk": {"bytes": "e30="}}) == set()


def test_the_named_provider_is_still_checked() -> None:
    chunk_frame = bedrock_event("chunk", {"bytes": base64.b64encode(b'{"type":"ping"}').decode()})
    with pytest.raises(StreamDecodeError, match="anthropic-bedrock, not bedrock-converse"):
        stitch(chunk_frame, "bedrock-converse").result  # noqa: B018
    converse = bedrock_body([{"messageStart": {"role": "assistant"}}])
    with pytest.raises(StreamDecodeError, match="bedrock-converse, not anthropic-bedrock"):
        stitch(converse, AB).result  # noqa: B018
    exception = bedrock_exception("throttlingException", {"message": "slow"})
    with pytest.raises(StreamDecodeError, match="bedrock-converse, not anthropic \\("):
        stitch(exception, "anthropic").result  # noqa: B018


def test_an_exception_before_any_chunk_detected() -> None:
    # Nothing tells the two Bedrock streams apart then: read as ConverseStream's, the same error.
    body = bedrock_exception("throttlingException", {"message": "Too many requests"})
    result = stitch(body).result
    assert result.provider == "bedrock-converse"
    assert isinstance(result.stream_error, ProviderError)
    assert result.stream_error.kind == "throttlingException"


# -- any events at all: nothing escapes, every call ends once ----------------------------------

_TYPES = st.sampled_from(
    ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "x"]
)
_ANTHROPIC = st.fixed_dictionaries(
    {"type": _TYPES},
    optional={
        "index": st.integers(-1, 3) | st.none() | st.just("1"),
        "content_block": st.fixed_dictionaries(
            {"type": st.sampled_from(["tool_use", "text", "thinking", "server_tool_use"])},
            optional={"id": st.sampled_from(["a", "b"]), "name": st.sampled_from(["f", ""])},
        ),
        "delta": st.fixed_dictionaries(
            {"type": st.sampled_from(["input_json_delta", "text_delta", "signature_delta"])},
            optional={"partial_json": st.sampled_from(["", "{", '"a": 1}', "}"])},
        ),
    },
)
_PAYLOADS = st.one_of(
    _ANTHROPIC.map(chunk),
    _ANTHROPIC.map(wire_chunk),
    st.builds(lambda part: {"chunk": part}, st.binary(max_size=6) | st.text(max_size=6)),
    st.builds(lambda raw: {"chunk": {"bytes": raw}}, st.binary(max_size=6) | st.text(max_size=6)),
    st.sampled_from([{"throttlingException": {}}, {"other": 1}, {"chunk": {}, "x": 2}]),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_PAYLOADS, max_size=12))
def test_any_events_never_raise_and_every_call_ends_once(payloads: list[dict[str, Any]]) -> None:
    driven = Driven(AnthropicBedrockAdapter)
    out = [e for payload in payloads for e in driven.feed(payload)] + driven.close()
    assert_every_call_ends_once(out)
