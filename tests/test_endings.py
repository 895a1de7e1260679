"""How a response ends decides what a call whose arguments never arrived becomes.

docs/concepts.md, "How a response ends": the empty-arguments object only when the provider
closed the call itself or the response ended normally; after a cut (the token limit, a
content filter, an error event, bytes that are not the format, a cancelled or abandoned
stream) the call is discarded (``truncated-arguments``, its ``ending`` saying which), for
every provider and every chunking. The bodies below are written by hand in each API's wire
shape; their outcomes too.

The last tests are the property of the generated streams of every provider
(``toolstitch.testing.strategies``): a stream cut at any byte never readies a call whose
arguments had not closed, or that its provider had not closed, and every started call ends
once.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunks import byte_by_byte, split
from toolstitch import (
    CallDiscarded,
    CallReady,
    CallStarted,
    Ending,
    Stitcher,
    StitchResult,
    StreamFailed,
    TruncatedArguments,
    stitch,
)
from toolstitch.adapters import ADAPTERS
from toolstitch.testing._eventstream import bedrock_body
from toolstitch.testing.strategies import PROVIDERS, streams
from toolstitch.vocab.endings import FINISH_REASONS, ending_of

# -- bodies, by hand ----------------------------------------------------------------------------


def sse(*events: Any) -> bytes:
    """SSE: ``(name, data)`` for a named event, ``"[DONE]"``, or ``data`` alone."""
    out = b""
    for event in events:
        if event == "[DONE]":
            out += b"data: [DONE]\n\n"
        elif isinstance(event, tuple):
            name, data = event
            out += f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        else:
            out += f"data: {json.dumps(event)}\n\n".encode()
    return out


def chat(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "c", "object": "chat.completion.chunk", "choices": [choice]}


CHAT_START = chat(
    {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": "delete_all", "arguments": ""},
            }
        ]
    }
)

MESSAGE_START = (
    "message_start",
    {
        "type": "message_start",
        "message": {"id": "m", "type": "message", "role": "assistant", "content": []},
    },
)
TOOL_USE = (
    "content_block_start",
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "delete_all", "input": {}},
    },
)
BLOCK_STOP = ("content_block_stop", {"type": "content_block_stop", "index": 0})


def message_delta(reason: str) -> tuple[str, dict[str, Any]]:
    return (
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 3}},
    )


MESSAGE_STOP = ("message_stop", {"type": "message_stop"})

RESPONSE_ITEM = (
    "response.output_item.added",
    {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "delete_all",
            "arguments": "",
        },
    },
)


def response_end(kind: str, status: str, reason: str | None = None) -> tuple[str, dict[str, Any]]:
    response: dict[str, Any] = {"id": "r", "status": status}
    if reason is not None:
        response["incomplete_details"] = {"reason": reason}
    return (kind, {"type": kind, "response": response})


COHERE_START = (
    "tool-call-start",
    {
        "type": "tool-call-start",
        "index": 0,
        "delta": {
            "message": {
                "tool_calls": {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "delete_all", "arguments": ""},
                }
            }
        },
    },
)


def cohere_end(reason: str) -> tuple[str, dict[str, Any]]:
    return ("message-end", {"type": "message-end", "delta": {"finish_reason": reason}})


BEDROCK_START: list[dict[str, Any]] = [
    {"messageStart": {"role": "assistant"}},
    {
        "contentBlockStart": {
            "contentBlockIndex": 0,
            "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "delete_all"}},
        }
    },
]


def bedrock(*more: dict[str, Any]) -> bytes:
    return bedrock_body([*BEDROCK_START, *more])


CUT = "cut"  # the call is discarded as truncated
READY = "ready"  # the call is ready with the empty-arguments object

#: (provider, body, what becomes of the call, the ending a discard names, a stream error?)
CASES: dict[str, tuple[bytes, str, str | None, bool]] = {
    "openai-chat length": (sse(CHAT_START, chat(finish="length"), "[DONE]"), CUT, "length", False),
    "openai-chat content_filter": (
        sse(CHAT_START, chat(finish="content_filter"), "[DONE]"),
        CUT,
        "content-filter",
        False,
    ),
    "openai-chat error event": (
        sse(CHAT_START, {"error": {"message": "boom", "type": "server_error"}}),
        CUT,
        "error",
        True,
    ),
    "openai-chat body stops": (sse(CHAT_START), CUT, "abandoned", False),
    "openai-chat [DONE] without a reason": (sse(CHAT_START, "[DONE]"), CUT, "abandoned", False),
    "openai-chat tool_calls": (
        sse(CHAT_START, chat(finish="tool_calls"), "[DONE]"),
        READY,
        None,
        False,
    ),
    "openai-chat stop": (sse(CHAT_START, chat(finish="stop"), "[DONE]"), READY, None, False),
    "anthropic error event": (
        sse(
            MESSAGE_START,
            TOOL_USE,
            ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "x"}}),
        ),
        CUT,
        "error",
        True,
    ),
    "anthropic max_tokens before the block stop": (
        sse(MESSAGE_START, TOOL_USE, message_delta("max_tokens"), MESSAGE_STOP),
        CUT,
        "length",
        False,
    ),
    "anthropic body stops": (sse(MESSAGE_START, TOOL_USE), CUT, "abandoned", False),
    "anthropic block stop": (
        sse(MESSAGE_START, TOOL_USE, BLOCK_STOP, message_delta("tool_use"), MESSAGE_STOP),
        READY,
        None,
        False,
    ),
    "anthropic block stop, then max_tokens": (
        sse(MESSAGE_START, TOOL_USE, BLOCK_STOP, message_delta("max_tokens"), MESSAGE_STOP),
        READY,  # the provider closed the call itself: nothing after it cuts it
        None,
        False,
    ),
    "openai-responses incomplete": (
        sse(RESPONSE_ITEM, response_end("response.incomplete", "incomplete", "max_output_tokens")),
        CUT,
        "length",
        False,
    ),
    "openai-responses body stops": (sse(RESPONSE_ITEM), CUT, "abandoned", False),
    "cohere-chat MAX_TOKENS": (sse(COHERE_START, cohere_end("MAX_TOKENS")), CUT, "length", False),
    "cohere-chat tool-call-end": (
        sse(
            COHERE_START,
            ("tool-call-end", {"type": "tool-call-end", "index": 0}),
            cohere_end("TOOL_CALL"),
        ),
        READY,
        None,
        False,
    ),
    "bedrock-converse max_tokens": (
        bedrock({"messageStop": {"stopReason": "max_tokens"}}),
        CUT,
        "length",
        False,
    ),
    "bedrock-converse body stops": (bedrock(), CUT, "abandoned", False),
    "bedrock-converse block stop": (
        bedrock(
            {"contentBlockStop": {"contentBlockIndex": 0}},
            {"messageStop": {"stopReason": "tool_use"}},
        ),
        READY,
        None,
        False,
    ),
}


def outcome(result: StitchResult) -> tuple[str, str | None, bool]:
    """What became of the one call: ``READY`` (with ``{}``) or ``CUT`` and its ending."""
    assert len(result.calls) + len(result.discarded) == 1, result
    stream_error = result.stream_error is not None
    if result.calls:
        assert result.calls[0].name == "delete_all"
        assert result.calls[0].parsed_arguments == {}
        return READY, None, stream_error
    (discarded,) = result.discarded
    assert discarded.name == "delete_all"
    assert isinstance(discarded.error, TruncatedArguments)
    return CUT, discarded.error.ending, stream_error


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_end_condition_whole_and_byte_by_byte(name: str) -> None:
    body, what, ending, failed = CASES[name]
    for chunks in ([body], byte_by_byte(body)):
        assert outcome(stitch(chunks).result) == (what, ending, failed), name


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(sorted(CASES)), cuts=st.lists(st.integers(0, 2000), max_size=8))
def test_each_end_condition_in_any_chunking(name: str, cuts: list[int]) -> None:
    body, what, ending, failed = CASES[name]
    assert outcome(stitch(split(body, cuts)).result) == (what, ending, failed)


def test_the_empty_arguments_option_is_honoured_by_every_front_door() -> None:
    body = CASES["anthropic block stop"][0]
    (call,) = stitch(body, "anthropic", empty_arguments='{"x": 1}').result.calls
    assert call.parsed_arguments == {"x": 1}
    body = CASES["openai-chat tool_calls"][0]
    (call,) = stitch(body, empty_arguments='{"x": 1}').result.calls
    assert call.parsed_arguments == {"x": 1}


def test_an_error_inside_a_chunk_is_a_stream_failure() -> None:
    # OpenRouter: a top-level error object inside an ordinary chunk, beside choices and usage.
    broken = {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "error": {"code": 502, "message": "Upstream error from provider"},
        "choices": [{"index": 0, "delta": {"content": "par"}, "finish_reason": "error"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
    }
    for chunks in ([sse(CHAT_START, broken)], byte_by_byte(sse(CHAT_START, broken))):
        run = stitch(chunks)
        events = list(run)
        result = run.result
        assert result.stream_error is not None
        assert result.stream_error.code == "provider-error"
        assert "Upstream error" in str(result.stream_error)
        assert [w.error.code for w in result.warnings] == ["quirk-error-in-chunk"]
        assert result.text == "par"  # the rest of the chunk is read
        assert result.usage == {"prompt_tokens": 5, "completion_tokens": 1}
        assert outcome(result) == (CUT, "error", True)
        failed = next(n for n, e in enumerate(events) if isinstance(e, StreamFailed))
        ended = next(n for n, e in enumerate(events) if isinstance(e, CallDiscarded))
        assert failed < ended


def test_a_corrupted_bedrock_frame_cuts_the_call_in_every_chunking() -> None:
    # A bad CRC right after the toolUse start: fed whole, the frames before the fault are
    # kept (they were once lost with it, and the call vanished); in pieces the same.
    body = bytearray(bedrock({"messageStop": {"stopReason": "tool_use"}}))
    body[-1] ^= 0xFF  # the last frame's message CRC
    for chunks in ([bytes(body)], byte_by_byte(bytes(body)), split(bytes(body), [40, 90])):
        result = stitch(chunks).result
        assert outcome(result) == (CUT, "decode-error", True)


def test_a_stitch_closed_before_the_stream_ends_is_cancelled() -> None:
    body = CASES["openai-chat tool_calls"][0]
    run = stitch(byte_by_byte(body))
    for event in run:
        if isinstance(event, CallStarted):
            break
    run.close()  # the reader stops: what was read is all there is
    assert outcome(run.result) == (CUT, "cancelled", False)
    # Read to its end, the same body is a normal end.
    assert outcome(stitch(byte_by_byte(body)).result) == (READY, None, False)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_finish_reason_table_names_every_ending_it_uses() -> None:
    assert ending_of("tool_calls") is Ending.COMPLETE
    assert ending_of("STOP") is Ending.COMPLETE
    assert ending_of("max-tokens") is Ending.LENGTH
    assert ending_of("a reason nobody sent") is Ending.INCOMPLETE
    assert ending_of(None) is ending_of("") is Ending.ABANDONED
    assert all(key == key.lower() and "-" not in key for key in FINISH_REASONS)
    assert {Ending.CLOSED, Ending.COMPLETE} == {e for e in Ending if not e.cut}


# -- the property: a stream cut at any byte ----------------------------------------------------

#: A sentinel for the empty-arguments object: a call ready with it got no arguments text.
EMPTY = '{"_toolstitch_empty": true}'


def _ready_bytes(body: bytes, provider: str) -> dict[int, int]:
    """The number of bytes after which the whole stream, fed byte by byte, readied each call
    with the empty-arguments object (by index; its close counts as the last byte)."""
    stitcher = Stitcher(provider, empty_arguments=EMPTY)
    out: dict[int, int] = {}
    for seen, chunk in enumerate(byte_by_byte(body), 1):
        for event in stitcher.feed(chunk):
            if isinstance(event, CallReady) and event.call.arguments == EMPTY:
                out[event.call.index] = seen
    for event in stitcher.close():
        if isinstance(event, CallReady) and event.call.arguments == EMPTY:
            out[event.call.index] = len(body)
    return out


def _check_prefix(body: bytes, provider: str, cut: int) -> None:
    """``body`` cut after ``cut`` bytes: every started call ends once; a ready call's
    arguments had closed (a complete object, as the whole stream has it), or it had none and
    its provider had closed it, or the response had ended normally, inside the prefix."""
    prefix = body[:cut]
    run = stitch([prefix] if prefix else [], provider, empty_arguments=EMPTY)
    events = list(run)
    started = Counter(e.index for e in events if isinstance(e, CallStarted))
    ended = Counter(e.index for e in events if isinstance(e, (CallReady, CallDiscarded)))
    assert started == ended
    assert set(ended.values()) <= {1}
    ready = [e.call for e in events if isinstance(e, CallReady)]
    if not ready:
        return
    whole = {
        call.index: call for call in stitch([body], provider, empty_arguments=EMPTY).result.calls
    }
    empty_at = _ready_bytes(body, provider) if any(c.arguments == EMPTY for c in ready) else {}
    for call in ready:
        if call.arguments == EMPTY:
            assert call.index in empty_at, (call, cut)
            assert empty_at[call.index] <= cut, (call, cut)
        else:
            assert isinstance(json.loads(call.arguments), dict)
            assert call.arguments == whole[call.index].arguments


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_a_stream_cut_at_any_byte_never_readies_what_had_not_closed(data: st.DataObject) -> None:
    provider = data.draw(st.sampled_from(PROVIDERS), label="provider")
    stream = data.draw(streams(provider, quirks=True, faults=True), label="stream")
    body = stream.body
    _check_prefix(body, provider, data.draw(st.integers(0, len(body)), label="cut"))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_byte_format_is_generated() -> None:
    # The property above covers every provider whose stream is bytes; LangChain's is objects
    # (its cuts: tests/test_langchain.py); a model's raw text and a legacy completions stream
    # carry calls only in their text (their cuts: tests/test_text_properties.py).
    assert set(PROVIDERS) | {"langchain", "text", "openai-completions"} == set(ADAPTERS)
