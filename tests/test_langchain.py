"""LangChain chat model streams: langchain-core's own ``AIMessageChunk`` objects, built in the
shapes the integrations stream (langchain-openai's Chat Completions and Responses paths,
langchain-anthropic's content blocks, Gemini's and Ollama's whole calls), and a real
``ChatOpenAI`` model's ``stream()`` and ``astream()`` over the scripted loopback server.

langchain is imported by the tests that use it, not when the module is collected (see
tests/sdks.py for why).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from toolstitch import Stitcher, astitch, stitch
from toolstitch.adapters import as_mapping, detect
from toolstitch.testing import OpenAIChatScript, ScriptedServer
from toolstitch.vocab.call_events import (
    ArgumentsDelta,
    CallDiscarded,
    CallReady,
    CallStarted,
    CallWarning,
    Event,
)
from toolstitch.vocab.errors import StreamDecodeError, TruncatedArguments
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    StreamWarning,
    TextDelta,
    Usage,
)

if TYPE_CHECKING:
    from langchain_core.messages import AIMessageChunk, ToolCallChunk

ARGS = '{"city": "Paris"}'
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def chunk(content: Any = "", **fields: Any) -> AIMessageChunk:
    """A langchain-core ``AIMessageChunk`` (imported on first use)."""
    from langchain_core.messages import AIMessageChunk

    return AIMessageChunk(content=content, **fields)


def tcc(
    name: str | None = None, args: str | None = None, id: str | None = None, index: Any = None
) -> ToolCallChunk:
    """One ``tool_call_chunk``, as langchain-core's own factory makes it."""
    from langchain_core.messages.tool import tool_call_chunk

    return tool_call_chunk(name=name, args=args, id=id, index=index)


def pieces(text: str, cuts: tuple[int, ...]) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def chunkings(text: str) -> Iterator[list[str]]:
    """``text`` whole, in every split in two, and in every split in three."""
    for count in (0, 1, 2):
        for cuts in itertools.combinations(range(1, len(text)), count):
            yield pieces(text, cuts)


def openai_chunks(fragments: Iterable[str], *, finish: str | None = "tool_calls") -> list[Any]:
    """What ``ChatOpenAI.stream()`` yields for text, then one call in ``fragments``, the
    finish chunk, the usage chunk and the last chunk (the shapes of langchain-openai 1.x)."""
    meta = {"model_provider": "openai"}
    out = [
        chunk(additional_kwargs={}, response_metadata=meta, id="lc_run--1"),
        chunk("Let me check.", response_metadata=meta, id="lc_run--1"),
        chunk(tool_call_chunks=[tcc("get_weather", "", "call_1", 0)], response_metadata=meta),
    ]
    out += [
        chunk(tool_call_chunks=[tcc(args=f, index=0)], response_metadata=meta) for f in fragments
    ]
    if finish is not None:
        out.append(chunk(response_metadata={"finish_reason": finish, "model_name": "gpt-4o"}))
    usage = {"input_tokens": 12, "output_tokens": 34, "total_tokens": 46}
    out.append(chunk(usage_metadata=usage, response_metadata={}))
    out.append(chunk(chunk_position="last", id="lc_run--1"))
    return out


def ready(events: Iterable[Event]) -> list[tuple[int, str | None, str | None, str]]:
    return [
        (e.call.index, e.call.id, e.call.name, e.call.arguments)
        for e in events
        if isinstance(e, CallReady)
    ]


def codes(events: Iterable[Event]) -> list[str]:
    return [e.error.code for e in events if isinstance(e, (CallWarning, StreamWarning))]


# -- detection and reading ---------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_dumped_chunk_keeps_its_type_and_is_detected_before_gemini() -> None:
    usage = {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
    data = as_mapping(chunk("hi", usage_metadata=usage))
    assert data is not None
    assert data["type"] == "AIMessageChunk"  # a default, kept: it says what the object is
    assert "usage_metadata" in data  # which alone would read as Gemini's
    assert detect(data) == "langchain"
    assert detect({"usage_metadata": {"promptTokenCount": 1}}) == "gemini"
    assert detect({"type": "ai", "content": ""}) == "langchain"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    "payload",
    [
        {"type": "message_start", "message": {}},
        {"type": "response.created", "response": {}},
        {"type": "content-delta", "index": 0},
        {"type": "HumanMessageChunk", "content": "hi"},
        {"model": "m", "created_at": "t", "message": {}, "done": False},
        {"id": "c", "object": "chat.completion.chunk", "choices": []},
    ],
)
def test_detection_takes_no_other_providers_event(payload: dict[str, Any]) -> None:
    assert detect(payload) != "langchain"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_an_sdk_object_without_a_type_field_gains_none() -> None:
    from openai.types.chat import ChatCompletionChunk

    sdk = ChatCompletionChunk.model_validate(
        {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": []}
    )
    assert as_mapping(sdk) == {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [],
    }


# -- calls: every chunking, ready at the closing chunk --------------------------------------------


def test_every_chunking_of_the_arguments_is_ready_at_the_chunk_that_closes_them() -> None:
    for fragments in chunkings(ARGS):
        stitcher = Stitcher()
        batches = [stitcher.feed(c) for c in openai_chunks(fragments)]
        batches.append(stitcher.close())
        closing = 2 + len(fragments)  # the chunk of the last fragment
        assert [ready(b) for b in batches].index([(0, "call_1", "get_weather", ARGS)]) == closing
        events = [e for b in batches for e in b]
        assert [e.fragment for e in events if isinstance(e, ArgumentsDelta)] == fragments
        assert isinstance(batches[closing + 1][0], FinishReason)  # later chunks still come
        assert [(e.index, e.id, e.name) for e in events if isinstance(e, CallStarted)] == [
            (0, "call_1", "get_weather")
        ]
        result = stitcher.result
        assert result.provider == "langchain"
        assert result.text == "Let me check."
        assert result.finish_reason == "tool_calls"
        assert result.usage == {"input_tokens": 12, "output_tokens": 34, "total_tokens": 46}
        assert result.warnings == ()
        assert result.discarded == ()


def test_plain_dumps_read_as_the_objects() -> None:
    chunks = openai_chunks(['{"city": ', '"Paris"}'])
    from_objects = stitch(chunks).result
    from_dicts = stitch([c.model_dump() for c in chunks]).result
    assert from_dicts.calls == from_objects.calls
    assert (from_dicts.text, from_dicts.finish_reason, from_dicts.usage) == (
        "Let me check.",
        "tool_calls",
        {"input_tokens": 12, "output_tokens": 34, "total_tokens": 46},
    )
    assert from_dicts.warnings == ()


def test_named_provider_is_confirmed_and_another_is_refused() -> None:
    chunks = openai_chunks([ARGS])
    assert stitch(chunks, "langchain").result.calls[0].arguments == ARGS
    with pytest.raises(StreamDecodeError, match="the stream is langchain, not openai-chat"):
        list(stitch(chunks, "openai-chat"))


def test_parallel_calls_interleaved_by_index() -> None:
    chunks = [
        chunk(tool_call_chunks=[tcc("a", "", "c1", 0), tcc("b", '{"y"', "c2", 1)]),
        chunk(tool_call_chunks=[tcc(args='{"x": 1}', index=0)]),
        chunk(tool_call_chunks=[tcc(args=": 2}", index=1)]),
        chunk(response_metadata={"finish_reason": "tool_calls"}),
    ]
    stitcher = Stitcher()
    batches = [stitcher.feed(c) for c in chunks]
    assert [ready(b) for b in batches] == [
        [],
        [(0, "c1", "a", '{"x": 1}')],
        [(1, "c2", "b", '{"y": 2}')],
        [],
    ]


# -- the end rule ----------------------------------------------------------------------------------


def named_call_without_arguments(finish: str | None) -> list[Any]:
    out = [chunk(tool_call_chunks=[tcc("get_time", "", "call_9", 0)])]
    if finish is not None:
        out.append(chunk(response_metadata={"finish_reason": finish}))
    return out


@pytest.mark.parametrize(("finish", "ending"), [("length", "length"), (None, "abandoned")])
def test_after_a_cut_a_call_whose_arguments_never_arrived_is_not_dispatched(
    finish: str | None, ending: str
) -> None:
    events = list(stitch(named_call_without_arguments(finish)))
    assert ready(events) == []
    (discarded,) = [e for e in events if isinstance(e, CallDiscarded)]
    assert (discarded.index, discarded.id, discarded.name) == (0, "call_9", "get_time")
    assert isinstance(discarded.error, TruncatedArguments)
    assert discarded.error.ending == ending


@pytest.mark.parametrize("finish", ["tool_calls", "stop", "tool_use", "STOP", "end_turn"])
def test_after_a_normal_end_it_gets_the_empty_object(finish: str) -> None:
    events = list(stitch(named_call_without_arguments(finish)))
    assert ready(events) == [(0, "call_9", "get_time", "{}")]


def test_the_last_finish_reason_read_decides() -> None:
    chunks = [
        *named_call_without_arguments("tool_calls"),
        chunk(response_metadata={"finish_reason": "length"}),
    ]
    result = stitch(chunks).result
    assert result.finish_reason == "tool_calls"  # the result keeps the first, as sent
    assert [d.error.code for d in result.discarded] == ["truncated-arguments"]


def test_an_unclosed_prefix_is_truncated_even_after_a_normal_end() -> None:
    chunks = [
        chunk(tool_call_chunks=[tcc("get_weather", '{"city": "Pa', "call_1", 0)]),
        chunk(response_metadata={"finish_reason": "tool_calls"}),
    ]
    result = stitch(chunks).result
    assert result.calls == ()
    assert [(d.index, d.error.code) for d in result.discarded] == [(0, "truncated-arguments")]


# -- calls without index ---------------------------------------------------------------------------


def test_whole_calls_from_tool_calls_are_separate_calls() -> None:
    # langchain-core makes tool_call_chunks (index None, whole args) from whole tool_calls:
    # what Ollama's and Gemini's integrations stream.
    message = chunk(
        tool_calls=[
            {"name": "read", "args": {"p": "a"}, "id": "c1"},
            {"name": "read", "args": {"p": "b"}, "id": "c2"},
        ]
    )
    assert [c["index"] for c in message.tool_call_chunks] == [None, None]
    result = stitch([message, chunk(response_metadata={"done_reason": "stop"})]).result
    assert [(c.index, c.id, c.name, c.arguments) for c in result.calls] == [
        (0, "c1", "read", '{"p": "a"}'),
        (1, "c2", "read", '{"p": "b"}'),
    ]
    assert result.warnings == ()


def test_whole_calls_without_ids_are_not_merged() -> None:
    chunks = [
        chunk(tool_call_chunks=[tcc("a", '{"x": 1}')]),
        chunk(tool_call_chunks=[tcc("b", '{"y": 2}')]),
    ]
    result = stitch(chunks).result
    assert [(c.index, c.id, c.name, c.arguments) for c in result.calls] == [
        (0, "toolstitch_call_0", "a", '{"x": 1}'),
        (1, "toolstitch_call_1", "b", '{"y": 2}'),
    ]


def test_fragments_without_index_continue_the_latest_call_with_one_warning() -> None:
    chunks = [
        chunk(tool_call_chunks=[tcc("f", "", "call_1")]),
        chunk(tool_call_chunks=[tcc(args='{"a": ')]),
        chunk(tool_call_chunks=[tcc(args="1}")]),
        chunk(response_metadata={"finish_reason": "tool_calls"}),
    ]
    events = list(stitch(chunks))
    assert ready(events) == [(0, "call_1", "f", '{"a": 1}')]
    (warning,) = [e for e in events if isinstance(e, CallWarning)]
    assert (warning.index, warning.error.code) == (0, "quirk-index-missing")


def test_a_new_id_without_index_goes_to_the_latest_call_that_has_none() -> None:
    chunks = [
        chunk(tool_call_chunks=[tcc("f", "")]),
        chunk(tool_call_chunks=[tcc(args="{}", id="call_7")]),
        chunk(tool_call_chunks=[tcc(args="{}", id="call_8")]),
    ]
    result = stitch(chunks).result
    assert [(c.index, c.id, c.name) for c in result.calls] == [(0, "call_7", "f")]
    assert [(d.index, d.id, d.error.code) for d in result.discarded] == [
        (1, "call_8", "missing-name")
    ]


def test_a_new_id_on_a_used_index_is_another_call_as_langchain_merges() -> None:
    chunks = [
        chunk(tool_call_chunks=[tcc("a", "{}", "c1", 0)]),
        chunk(tool_call_chunks=[tcc("b", '{"k": 1}', "c2", 0)]),
    ]
    events = list(stitch(chunks))
    assert ready(events) == [(0, "c1", "a", "{}"), (1, "c2", "b", '{"k": 1}')]
    assert codes(events) == ["quirk-index-reused"]


def test_an_index_taken_by_a_call_without_index_moves_on() -> None:
    chunks = [
        chunk(tool_call_chunks=[tcc("a", "{}", "c1")]),
        chunk(tool_call_chunks=[tcc("b", "{}", "c2", 0)]),
    ]
    events = list(stitch(chunks))
    assert ready(events) == [(0, "c1", "a", "{}"), (1, "c2", "b", "{}")]
    assert codes(events) == ["quirk-index-moved"]


@pytest.mark.parametrize(
    ("index", "code"), [(-1, "quirk-index-negative"), ("0", "quirk-index-invalid")]
)
def test_an_index_that_is_not_one_is_read_as_missing(index: object, code: str) -> None:
    payload = {
        "type": "AIMessageChunk",
        "content": "",
        "tool_call_chunks": [{"name": "f", "args": "{}", "id": "c1", "index": index}],
    }
    events = list(stitch([payload]))
    assert ready(events) == [(0, "c1", "f", "{}")]
    assert codes(events) == [code]


# -- text, reasoning, usage ------------------------------------------------------------------------


def anthropic_chunks(*, old: bool = False) -> list[Any]:
    """What ``ChatAnthropic.stream()`` yields with thinking and a tool (langchain-anthropic
    1.x content blocks; ``old``: 0.3's, with usage in two chunks and ``tool_use`` pieces)."""
    piece = "tool_use" if old else "input_json_delta"
    out = [
        chunk([], response_metadata={"model_name": "claude"}, id="lc_run--2"),
        chunk([{"type": "thinking", "thinking": "The user wants ", "index": 0}]),
        chunk([{"type": "thinking", "thinking": "weather.", "index": 0}]),
        chunk([{"type": "thinking", "thinking": "", "signature": "EqQB", "index": 0}]),
        chunk([{"type": "text", "text": "I'll look.", "index": 1}]),
        chunk(
            [{"id": "toolu_1", "input": {}, "name": "get_weather", "type": "tool_use", "index": 2}],
            tool_call_chunks=[tcc("get_weather", "", "toolu_1", 2)],
        ),
    ]
    for fragment in ('{"city": ', '"Paris"}'):
        block = {"type": piece, "partial_json": fragment, "index": 2}
        out.append(chunk([block], tool_call_chunks=[tcc(args=fragment, index=2)]))
    usage = {"input_tokens": 0, "output_tokens": 40, "total_tokens": 40}
    if old:
        out[0] = chunk(
            "", usage_metadata={"input_tokens": 25, "output_tokens": 0, "total_tokens": 25}
        )
    else:
        usage = {"input_tokens": 25, "output_tokens": 40, "total_tokens": 65}
    metadata = {"stop_reason": "tool_use", "stop_sequence": None}
    out.append(chunk([], usage_metadata=usage, response_metadata=metadata, chunk_position="last"))
    return out


@pytest.mark.parametrize("old", [False, True])
def test_anthropic_blocks_thinking_signature_text_and_one_call(old: bool) -> None:
    run = stitch(anthropic_chunks(old=old))
    events = list(run)
    result = run.result
    assert ready(events) == [(2, "toolu_1", "get_weather", ARGS)]  # never read twice
    kinds = [type(e) for e in events if not isinstance(e, (ArgumentsDelta, CallStarted))]
    assert kinds == [
        *([Usage] if old else []),  # 0.3 sent the input tokens at the start
        ReasoningDelta,
        ReasoningDelta,
        ReasoningBlock,
        TextDelta,
        CallReady,
        Usage,
        FinishReason,
    ]
    assert result.reasoning_blocks == (
        ReasoningBlock(text="The user wants weather.", signature="EqQB", kind="thinking"),
    )
    assert result.text == "I'll look."
    assert result.finish_reason == "tool_use"
    assert result.usage == {"input_tokens": 25, "output_tokens": 40, "total_tokens": 65}
    assert result.warnings == ()


def test_bedrock_converse_blocks() -> None:
    # What ChatBedrockConverse (langchain-aws) streams: reasoning_content blocks with the text
    # or the signature nested, tool_use blocks mirroring tool_call_chunks (whose first args is
    # None), empty blocks at each block's end, stopReason, then the usage.
    reasoning = [
        {"type": "reasoning_content", "reasoning_content": {"text": "Paris, "}, "index": 0},
        {"type": "reasoning_content", "reasoning_content": {"text": "then."}, "index": 0},
        {"type": "reasoning_content", "reasoning_content": {"signature": "c2ln"}, "index": 0},
    ]
    chunks = [chunk([])]
    chunks += [chunk([block]) for block in reasoning]
    chunks.append(chunk([{"index": 0}]))
    chunks.append(chunk([{"text": "Looking.", "index": 1}]))  # untyped, as older versions
    start = {"type": "tool_use", "name": "get_weather", "id": "tooluse_1", "index": 2}
    chunks.append(chunk([start], tool_call_chunks=[tcc("get_weather", None, "tooluse_1", 2)]))
    for fragment in ('{"city":', ' "Paris"}'):
        block = {"type": "tool_use", "input": fragment, "id": None, "index": 2}
        chunks.append(chunk([block], tool_call_chunks=[tcc(args=fragment, index=2)]))
    chunks.append(chunk(response_metadata={"stopReason": "tool_use"}))
    usage = {"input_tokens": 30, "output_tokens": 9, "total_tokens": 39}
    chunks.append(chunk(response_metadata={"metrics": {"latencyMs": [581]}}, usage_metadata=usage))
    result = stitch(chunks).result
    assert [(c.index, c.id, c.name, c.arguments) for c in result.calls] == [
        (2, "tooluse_1", "get_weather", '{"city": "Paris"}')
    ]
    assert result.reasoning_blocks == (
        ReasoningBlock(text="Paris, then.", signature="c2ln", kind="reasoning_content"),
    )
    assert result.text == "Looking."
    assert (result.finish_reason, result.usage) == ("tool_use", usage)
    assert result.warnings == ()


def test_usage_details_are_summed_as_langchain_adds_them() -> None:
    first = {
        "input_tokens": 10,
        "output_tokens": 0,
        "total_tokens": 10,
        "input_token_details": {"cache_read": 4},
    }
    second = {
        "input_tokens": 0,
        "output_tokens": 7,
        "total_tokens": 7,
        "input_token_details": {"cache_read": 1, "cache_creation": 2},
        "output_token_details": {"reasoning": 3},
    }
    events = list(stitch([chunk(usage_metadata=first), chunk(usage_metadata=second)]))
    assert [e.usage for e in events if isinstance(e, Usage)] == [
        first,
        {
            "input_tokens": 10,
            "output_tokens": 7,
            "total_tokens": 17,
            "input_token_details": {"cache_read": 5, "cache_creation": 2},
            "output_token_details": {"reasoning": 3},
        },
    ]


def test_reasoning_content_ends_at_the_text() -> None:
    chunks = [
        chunk(additional_kwargs={"reasoning_content": "Two "}),
        chunk(additional_kwargs={"reasoning_content": "cities."}),
        chunk("Paris and Rome."),
        chunk(response_metadata={"done_reason": "stop"}),
    ]
    result = stitch(chunks).result
    assert result.reasoning == "Two cities."
    assert [(type(p).__name__, getattr(p, "text", None)) for p in result.parts] == [
        ("ReasoningBlock", "Two cities."),
        ("TextPart", "Paris and Rome."),
    ]
    assert result.reasoning_blocks[0].kind == "reasoning_content"
    assert result.finish_reason == "stop"


def test_standard_v1_blocks_and_responses_reasoning() -> None:
    chunks = [
        chunk([{"type": "reasoning", "id": "rs_1", "summary": [], "index": 0}]),
        chunk(
            [
                {
                    "type": "reasoning",
                    "summary": [{"index": 0, "type": "summary_text", "text": "Look it up."}],
                    "index": 0,
                }
            ]
        ),
        chunk([{"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA", "index": 0}]),
        chunk([{"type": "reasoning", "reasoning": "Step.", "extras": {"signature": "s1"}}]),
        chunk([{"type": "text", "text": "Done.", "index": 2}]),
        chunk([{"type": "tool_call_chunk", "name": "f", "args": "{}", "id": "c1", "index": 3}]),
        chunk(response_metadata={"status": "completed"}),
    ]
    result = stitch(chunks).result
    assert result.reasoning_blocks == (
        ReasoningBlock(summary=("Look it up.",), signature="gAAA", id="rs_1", kind="reasoning"),
        ReasoningBlock(text="Step.", signature="s1", kind="reasoning"),
    )
    assert result.reasoning == "Look it up.Step."
    assert result.text == "Done."
    assert result.calls == ()  # a content block only mirrors tool_call_chunks: none here
    assert result.finish_reason == "completed"
    assert result.warnings == ()


def test_redacted_thinking_and_refusal() -> None:
    chunks = [
        chunk([{"type": "redacted_thinking", "data": "EmwK", "index": 0}]),
        chunk([{"type": "refusal", "refusal": "I can't help with that."}]),
        chunk(response_metadata={"finish_reason": "content_filter"}),
    ]
    result = stitch(chunks).result
    assert result.reasoning_blocks == (
        ReasoningBlock(signature="EmwK", redacted=True, kind="redacted_thinking"),
    )
    assert result.refusal == "I can't help with that."
    assert result.text == ""


def test_gemini_whole_calls_carry_their_signatures() -> None:
    message = chunk(
        tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "uuid-1"}],
        additional_kwargs={"__gemini_function_call_thought_signatures__": {"uuid-1": "CiQB"}},
        response_metadata={"finish_reason": "STOP"},
    )
    result = stitch([message]).result
    ((call_id, signature, arguments),) = [(c.id, c.signature, c.arguments) for c in result.calls]
    assert (call_id, signature, arguments) == ("uuid-1", "CiQB", ARGS)
    assert result.finish_reason == "STOP"


def test_a_signature_for_an_open_call_reaches_it_and_a_late_one_warns() -> None:
    key = "__gemini_function_call_thought_signatures__"
    chunks = [
        chunk(tool_call_chunks=[tcc("f", '{"a": ', "c1", 0), tcc("g", "{}", "c2", 1)]),
        chunk(
            tool_call_chunks=[tcc(args="1}", index=0)],
            additional_kwargs={key: {"c1": "SIG1", "c2": "SIG2"}},
        ),
    ]
    events = list(stitch(chunks))
    assert [(e.call.id, e.call.signature) for e in events if isinstance(e, CallReady)] == [
        ("c2", None),  # ready at the first chunk, before its signature came
        ("c1", "SIG1"),
    ]
    (warning,) = [e for e in events if isinstance(e, CallWarning)]
    assert (warning.index, warning.error.code) == (1, "quirk-signature-late")


def test_max_tokens_from_gemini_discards_a_call_without_arguments() -> None:
    chunks = [
        chunk(tool_call_chunks=[tcc("get_weather", None, "uuid-1")]),
        chunk(response_metadata={"finish_reason": "MAX_TOKENS"}),
    ]
    result = stitch(chunks).result
    assert [(d.id, d.error.code) for d in result.discarded] == [("uuid-1", "truncated-arguments")]


# -- what is not read leaves a trace ---------------------------------------------------------------


def test_unknown_fields_blocks_and_kwargs_warn_once_per_kind() -> None:
    chunks: list[Any] = [
        {"type": "AIMessageChunk", "content": "a", "novel_field": 1},
        {"type": "AIMessageChunk", "content": "b", "novel_field": 2},
        chunk([{"type": "image", "url": "http://x"}, {"type": "server_tool_use", "id": "s"}]),
        chunk([{"type": "image", "url": "http://y"}]),
        chunk(additional_kwargs={"function_call": {"name": "f", "arguments": "{}"}}),
        {"type": "HumanMessageChunk", "content": "not ours"},
    ]
    run = stitch(chunks, "langchain")
    events = list(run)
    messages = [e.error.message for e in events if isinstance(e, StreamWarning)]
    assert messages == [
        "a message field 'novel_field' was ignored",
        "a content block of type 'image' was skipped",
        "a content block of type 'server_tool_use' was skipped",
        "an additional_kwargs key 'function_call' was ignored",
        "a message of type 'HumanMessageChunk' (not an AI message) was skipped",
    ]
    assert set(codes(events)) == {"quirk-unknown-event"}
    assert run.result.text == "ab"


def test_a_value_json_cannot_hold_does_not_stop_the_stream() -> None:
    # model_dump(mode="json") raises on bytes that are not UTF-8: the dump is taken as it is.
    message = chunk("Hi.", additional_kwargs={"raw": b"\xff\x00"})
    data = as_mapping(message)
    assert data is not None
    assert data["additional_kwargs"] == {"raw": b"\xff\x00"}
    run = stitch([message])
    assert [type(e) for e in run] == [StreamWarning, TextDelta]
    assert run.result.text == "Hi."


# -- a real chat model -----------------------------------------------------------------------------


def script(hold: Any) -> OpenAIChatScript:
    """A Chat Completions stream: text, a call in three pieces, a hold until ``hold`` is set
    (the consumer saw the call ready), more text, the finish and the usage."""
    return (
        OpenAIChatScript()
        .text("Let me check.")
        .call("call_1", "get_weather", ARGS, pieces=3)
        .hold(hold, label="call ready", timeout=5)
        .text(" One moment.")
        .finish("tool_calls")
        .usage(12, 34)
    )


def chat_model(base_url: str) -> Any:
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    model = ChatOpenAI(
        model="gpt-4o-mini",
        base_url=base_url,
        api_key=SecretStr("test"),
        stream_usage=True,
        max_retries=0,
    )
    return model.bind_tools([WEATHER_TOOL])


def test_chat_openai_stream_dispatches_the_call_while_the_model_still_streams() -> None:
    seen = threading.Event()
    order: list[str] = []
    with ScriptedServer([script(seen).reply()]) as server:
        run = stitch(chat_model(server.openai_base_url).stream("Weather in Paris?"))
        for event in run:
            if isinstance(event, CallReady):
                order.append(f"ready {event.call.name} {event.call.parsed_arguments}")
                seen.set()  # the server goes on only now
            elif isinstance(event, TextDelta):
                order.append(f"text {event.text!r}")
        assert server.timeouts == []
        (request,) = server.requests
    assert request.json["stream"] is True
    assert order == [
        "text 'Let me check.'",
        "ready get_weather {'city': 'Paris'}",
        "text ' One moment.'",
    ]
    result = run.result
    assert result.provider == "langchain"
    assert [(c.index, c.id, c.name, c.arguments) for c in result.calls] == [
        (0, "call_1", "get_weather", ARGS)
    ]
    assert result.finish_reason == "tool_calls"
    assert result.usage == {
        "input_tokens": 12,
        "output_tokens": 34,
        "total_tokens": 46,
        "input_token_details": {},
        "output_token_details": {},
    }
    assert result.warnings == ()


def test_chat_openai_astream_through_astitch() -> None:
    async def main() -> tuple[list[str], Any, list[str]]:
        seen = asyncio.Event()
        order: list[str] = []
        async with ScriptedServer([script(seen).reply()]) as server:
            run = astitch(chat_model(server.openai_base_url).astream("Weather in Paris?"))
            async for event in run:
                if isinstance(event, CallReady):
                    order.append(f"ready {event.call.id}")
                    seen.set()
                elif isinstance(event, FinishReason):
                    order.append(f"finish {event.reason}")
            return order, run.result, server.timeouts

    order, result, timeouts = asyncio.run(asyncio.wait_for(main(), 20))
    assert timeouts == []
    assert order == ["ready call_1", "finish tool_calls"]
    assert result.text == "Let me check. One moment."
    assert [c.arguments for c in result.calls] == [ARGS]
    assert result.usage["total_tokens"] == 46
