"""``stitch`` / ``astitch`` / ``Stitcher``: the fixtures in every chunking, sources, detection.

Every fixture of tests/fixtures is fed whole, line by line, byte by byte, split at random
(hypothesis) and as decoded event dicts; each must give exactly its hand-written expectation.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures.expected import cut, fixture_names, load, normalize, payloads
from toolstitch.stitch.stitcher import (
    MAX_REFUSED_KEPT,
    AsyncStitch,
    Stitch,
    Stitcher,
    StitchResult,
    astitch,
    stitch,
)
from toolstitch.vocab.call_events import (
    ArgumentsDelta,
    CallDiscarded,
    CallReady,
    CallStarted,
    Event,
)
from toolstitch.vocab.errors import ProviderError, StreamDecodeError
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.stream_events import (
    FinishReason,
    StreamFailed,
    StreamWarning,
    TextDelta,
    Usage,
)

FIXTURES = fixture_names()


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_there_are_fixtures_for_every_api() -> None:
    apis = {name.split("/")[0] for name in FIXTURES}
    assert apis == {
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
        "gemini-interactions",
        "cohere-chat",
        "ollama-chat",
    }
    assert len(FIXTURES) >= 50


# -- fixtures in every chunking ---------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_whole(name: str) -> None:
    body, expected = load(name)
    assert normalize(stitch(body).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_byte_by_byte(name: str) -> None:
    body, expected = load(name)
    assert normalize(stitch(body[i : i + 1] for i in range(len(body))).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_line_by_line(name: str) -> None:
    body, expected = load(name)
    assert normalize(stitch(body.splitlines(keepends=True)).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_as_event_dicts(name: str) -> None:
    body, expected = load(name)
    assert normalize(stitch(payloads(body)).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_with_named_provider(name: str) -> None:
    body, expected = load(name)
    assert normalize(stitch(body, expected["provider"]).result) == expected


# Beside whole, line by line, byte by byte (every byte a cut) and as event dicts above: 8
# random chunkings a fixture a pass (640 over the fixtures; 15 proved no more), up to 41
# pieces each, for what the fixed ones lack (cuts of several sizes at once).
@pytest.mark.parametrize("name", FIXTURES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fixture_split_at_random(name: str, data: st.DataObject) -> None:
    body, expected = load(name)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=40), label="cuts")
    assert normalize(stitch(cut(body, cuts)).result) == expected


def comparable(events: list[Event]) -> list[object]:
    """Events with stream errors as ``(code, message)``: ``StreamError``, unlike the call
    errors, compares by identity."""
    return [(e.error.code, e.error.message) if isinstance(e, StreamFailed) else e for e in events]


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_events_are_the_same_in_any_chunking(name: str) -> None:
    body, _ = load(name)
    whole = comparable(list(stitch(body)))
    assert comparable(list(stitch(body[i : i + 1] for i in range(len(body))))) == whole
    assert comparable(list(stitch(payloads(body)))) == whole


@pytest.mark.parametrize("name", FIXTURES)
def test_every_started_call_ends_exactly_once(name: str) -> None:
    body, _ = load(name)
    events = list(stitch(body))
    started = [e.index for e in events if isinstance(e, CallStarted)]
    ended = [e.call.index for e in events if isinstance(e, CallReady)]
    ended += [e.index for e in events if isinstance(e, CallDiscarded)]
    assert sorted(started) == sorted(ended)
    assert len(set(started)) == len(started)


# -- readiness comes as early as it can -------------------------------------------------------


def test_calls_are_ready_before_the_stream_ends() -> None:
    body, _ = load("openai-chat/parallel-calls")
    stitcher = Stitcher()
    ready_at: dict[int, int] = {}
    for line in body.splitlines(keepends=True):
        for event in stitcher.feed(line):
            if isinstance(event, CallReady):
                ready_at[event.call.index] = stitcher.events_read
    stitcher.close()
    # call 0 closes with its 5th chunk, call 1 with its 7th; the stream has 10 events
    assert ready_at == {0: 5, 1: 7}
    assert stitcher.events_read == 10


# -- sources ----------------------------------------------------------------------------------


def test_source_bytes_str_file_and_iter_bytes() -> None:
    body, expected = load("openai-chat/parallel-calls")
    assert normalize(stitch(body).result) == expected
    assert normalize(stitch(bytearray(body)).result) == expected
    assert normalize(stitch(memoryview(body)).result) == expected
    assert normalize(stitch(body.decode()).result) == expected
    assert normalize(stitch(io.BytesIO(body)).result) == expected
    assert normalize(stitch(body.decode().splitlines(keepends=True)).result) == expected

    class Response:  # httpx.Response-like: iter_bytes(), not iterable itself
        def iter_bytes(self) -> Iterator[bytes]:
            yield body[:100]
            yield body[100:]

    assert normalize(stitch(Response()).result) == expected


def test_source_that_is_not_a_stream() -> None:
    with pytest.raises(TypeError, match="iterable"):
        list(stitch(42))
    with pytest.raises(TypeError, match="stream event"):
        list(stitch([42]))


def test_feeding_bytes_then_events_is_refused() -> None:
    stitcher = Stitcher()
    stitcher.feed(b"data: ")
    with pytest.raises(TypeError, match="either bytes or events"):
        stitcher.feed({"choices": []})


def test_unknown_provider_name() -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        Stitcher("cohere")


# -- the iterator and its result -------------------------------------------------------------


def test_result_consumes_the_rest_of_the_stream() -> None:
    body, expected = load("anthropic/thinking-text-then-parallel-tools")
    run = stitch(body)
    assert isinstance(run, Stitch)
    first = next(run)
    assert isinstance(first, Event)
    result = run.result
    assert isinstance(result, StitchResult)
    assert result.finished
    assert normalize(result) == expected
    assert list(run) == []
    assert run.collect() == result
    assert run.provider == "anthropic"
    assert run.events_read == result.events
    assert run.bytes_read == len(body) == result.bytes


def test_result_fields() -> None:
    body, _ = load("openai-chat/text-reasoning-then-call")
    result = stitch(body).result
    assert result.reasoning == "The user wants the weather."
    assert result.text == "Checking now."
    assert result.usage is None
    body, _ = load("openai-chat/parallel-calls")
    result = stitch(body).result
    assert result.usage == {"prompt_tokens": 50, "completion_tokens": 30, "total_tokens": 80}
    body, _ = load("anthropic/no-argument-tool")
    usage = stitch(body).result.usage
    assert usage == {"input_tokens": 100, "output_tokens": 42}  # merged, in arrival order


def test_stream_events_are_yielded_in_order() -> None:
    body, _ = load("openai-chat/text-reasoning-then-call")
    kinds = [type(e).__name__ for e in stitch(body)]
    assert kinds == [
        "ReasoningDelta",
        "ReasoningDelta",
        "ReasoningBlock",
        "TextDelta",
        "TextDelta",
        "CallStarted",
        "ArgumentsDelta",
        "CallReady",
        "FinishReason",
    ]


def test_stitcher_is_sans_io() -> None:
    body, expected = load("gemini/partial-args-nested")
    stitcher = Stitcher(limits=Limits(max_calls=8))
    events: list[Event] = []
    for piece in cut(body, list(range(0, len(body), 13))):
        events += stitcher.feed(piece)
    assert stitcher.provider == "gemini"
    assert not stitcher.result.finished
    assert [s.state.value for s in stitcher.calls] == ["complete"]
    events += stitcher.close()
    assert stitcher.close() == []
    assert normalize(stitcher.result) == expected
    assert any(isinstance(e, ArgumentsDelta) for e in events)
    with pytest.raises(RuntimeError, match="after close"):
        stitcher.feed(b"")


def test_limits_reach_the_assembler() -> None:
    body, _ = load("openai-chat/parallel-calls")
    result = stitch(body, limits=Limits(max_calls=1)).result
    assert [c.name for c in result.calls] == ["get_weather"]
    assert [d.error.code for d in result.discarded] == ["limit-exceeded"]


def test_empty_arguments_option() -> None:
    body, _ = load("openai-chat/empty-arguments-no-parameters")
    result = stitch(body, empty_arguments='{"_": null}').result
    assert result.calls[0].arguments == '{"_": null}'


def test_choice_selects_the_choice_to_follow() -> None:
    def chunk(index: int, text: str) -> dict[str, Any]:
        return {
            "object": "chat.completion.chunk",
            "choices": [{"index": index, "delta": {"content": text}}],
        }

    source = [chunk(0, "zero"), chunk(1, "one"), chunk(0, "!")]
    assert stitch(source).result.text == "zero!"
    assert stitch(source, choice=1).result.text == "one"


# -- framing and detection -------------------------------------------------------------------


def test_bom_and_leading_whitespace() -> None:
    body, expected = load("openai-chat/parallel-calls")
    bom = b"\xef\xbb\xbf"
    assert normalize(stitch(bom + body).result) == expected
    assert normalize(stitch([bom[:1], bom[1:], body]).result) == expected
    body, expected = load("gemini/json-array-body")
    assert normalize(stitch([bom, b"\r\n  ", body]).result) == expected
    assert normalize(stitch([b" ", b"\n", body]).result) == expected


@pytest.mark.parametrize(
    "body",
    [b"", b"   \n", b"hello world\n", b": just a comment\n\n", b'data: {"unrelated": 1}\n\n'],
)
def test_unknown_format_raises(body: bytes) -> None:
    with pytest.raises(StreamDecodeError, match="cannot tell the stream format"):
        list(stitch(body))


def test_not_json_before_detection_raises() -> None:
    with pytest.raises(StreamDecodeError, match="not JSON"):
        list(stitch(b"data: {oops\n\n"))
    with pytest.raises(StreamDecodeError, match="not a JSON object"):
        list(stitch(b"data: [1, 2]\n\n"))


def test_too_many_unknown_events_raise_early() -> None:
    body = b'data: {"x": 1}\n\n' * 100
    with pytest.raises(StreamDecodeError, match="belong to no known provider"):
        list(stitch(body))


def test_named_provider_that_does_not_match_raises() -> None:
    body, _ = load("anthropic/no-argument-tool")
    with pytest.raises(StreamDecodeError, match="is anthropic, not openai-chat"):
        list(stitch(body, "openai-chat"))
    with pytest.raises(StreamDecodeError, match="is anthropic, not gemini"):
        list(stitch(payloads(body), "gemini"))


def test_bad_event_after_detection_is_a_stream_error() -> None:
    body, _ = load("openai-chat/parallel-calls")
    lines = body.split(b"\n\n")
    broken = b"\n\n".join([*lines[:3], b"data: {not json", *lines[3:]])
    result = stitch(broken).result
    assert isinstance(result.stream_error, StreamDecodeError)
    assert "not JSON" in result.stream_error.message
    assert [c.name for c in result.calls] == ["get_weather", "get_time"]


def test_broken_json_array_after_detection() -> None:
    body, _ = load("gemini/json-array-body")
    head = body[: body.index(b"\n,\r\n") + 4]
    run = stitch([head, b"{ nope"])
    events = list(run)
    failed = [e for e in events if isinstance(e, StreamFailed)]
    assert len(failed) == 1
    assert isinstance(failed[0].error, StreamDecodeError)
    assert run.result.text == "Adding."


def test_unclosed_json_array_is_a_stream_error() -> None:
    body, _ = load("gemini/json-array-body")
    result = stitch(body[:-2]).result
    assert isinstance(result.stream_error, StreamDecodeError)
    assert [c.name for c in result.calls] == ["add_person"]


def test_error_before_any_provider_event() -> None:
    body = b'event: error\ndata: {"error": {"message": "quota", "type": "rate_limit"}}\n\n'
    result = stitch(body).result
    assert result.provider is None
    assert isinstance(result.stream_error, ProviderError)
    assert result.stream_error.kind == "rate_limit"
    # ... and a stream that goes on after it is still read
    body2, _ = load("openai-chat/parallel-calls")
    result = stitch(body + body2).result
    assert result.provider == "openai-chat"
    assert len(result.calls) == 2


def test_stream_warning_for_a_quirk_without_calls() -> None:
    body, _ = load("openai-chat/finish-twice-no-calls")
    events = list(stitch(body))
    warnings = [e for e in events if isinstance(e, StreamWarning)]
    assert [w.error.code for w in warnings] == ["quirk-finish-repeated"]
    assert [e.reason for e in events if isinstance(e, FinishReason)] == ["stop", "stop"]


def test_sdk_like_objects_with_to_dict() -> None:
    body, expected = load("gemini/parallel-same-tool-one-chunk")

    class Response:
        def __init__(self, data: dict[str, Any]) -> None:
            self.data = data

        def to_dict(self) -> dict[str, Any]:
            return self.data

    assert normalize(stitch([Response(p) for p in payloads(body)]).result) == expected


# -- async -------------------------------------------------------------------------------------


async def _achunks(body: bytes, size: int) -> AsyncIterator[bytes]:
    for i in range(0, len(body), size):
        await asyncio.sleep(0)
        yield body[i : i + size]


@pytest.mark.parametrize("name", FIXTURES[::5])
def test_astitch_matches_stitch(name: str) -> None:
    body, expected = load(name)

    async def run() -> tuple[list[Event], StitchResult, StitchResult]:
        stream = astitch(_achunks(body, 11))
        assert isinstance(stream, AsyncStitch)
        events = [event async for event in stream]
        other = await astitch(payloads(body)).collect()
        return events, stream.result, other

    events, result, other = asyncio.run(run())
    assert comparable(events) == comparable(list(stitch(body)))
    assert normalize(result) == expected
    assert normalize(other) == expected


def test_astitch_sources_and_result_guard() -> None:
    body, expected = load("anthropic/no-argument-tool")

    class Response:  # httpx.Response-like: aiter_bytes()
        def aiter_bytes(self) -> AsyncIterator[bytes]:
            return _achunks(body, 64)

    async def run() -> None:
        stream = astitch(Response())
        with pytest.raises(RuntimeError, match="not been read to the end"):
            _ = stream.result
        assert normalize(await stream.collect()) == expected
        assert stream.provider == "anthropic"
        assert normalize(await astitch(body).collect()) == expected

    asyncio.run(run())


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_events_are_frozen_value_objects() -> None:
    event = TextDelta(text="a")
    with pytest.raises(AttributeError):
        event.text = "b"  # type: ignore[misc]
    assert TextDelta(text="a") == event
    with pytest.raises(TypeError):
        TextDelta("a")  # type: ignore[call-arg]  # keyword-only
    usage = Usage(usage={"a": 1})
    assert json.dumps(usage.usage) == '{"a": 1}'


def test_indices_past_max_calls_keep_almost_nothing_through_stitch() -> None:
    # Through the OpenAI-Chat adapter and its quirk layer: neither keeps anything for an
    # index the core refused (the quirk layer used to keep ~3 KB of mirror per index). What
    # stays is the result's record of each discard (StitchResult.discarded, by design) and
    # the core's record of refused indices (ranges: a few bytes for a run).
    import tracemalloc

    # 2,000 refused indices: per index the same ~45 B kept and ~630 B with the result's record
    # as 20,000 (both paths), so a leak of even 100 B per index shows; 10x cheaper.
    extra = 2_000

    def chunks() -> Iterator[dict[str, Any]]:
        for i in range(8 + extra):
            entry = {"index": i, "id": f"c{i}", "type": "function"}
            entry["function"] = {"name": "f", "arguments": "{}"}
            yield {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]}

    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        run = stitch(chunks(), "openai-chat", limits=Limits(max_calls=8))
        for _ in run:
            pass
        with_result, _ = tracemalloc.get_traced_memory()
        result = run.result
    finally:
        tracemalloc.stop()
    # The result keeps the first MAX_REFUSED_KEPT refused calls and counts the rest.
    assert len(result.discarded) == MAX_REFUSED_KEPT
    assert result.discarded_omitted == extra - MAX_REFUSED_KEPT
    assert {d.error.code for d in result.discarded} == {"limit-exceeded"}
    assert len(result.calls) == 8
    assert len(result.parts) == 8 + MAX_REFUSED_KEPT
    # docs/safety.md: at most 100 B per extra index, the result included (the core keeps
    # runs of refused indices as ranges; the layers above it keep nothing per index).
    assert (with_result - base) / extra <= 100, (with_result - base) / extra


def test_the_confirmed_event_path_still_refuses_bytes_after_events_and_feeds_after_close() -> None:
    # The Stitcher reads a confirmed provider's dicts straight through its adapter: that
    # shortcut must keep both refusals of the long way.
    stitcher = Stitcher(provider="anthropic")
    stitcher.feed({"type": "message_start", "message": {"id": "m", "content": []}})
    stitcher.feed({"type": "ping"})
    with pytest.raises(TypeError):
        stitcher.feed(b"data: {}\n\n")
    stitcher.close()
    with pytest.raises(RuntimeError):
        stitcher.feed({"type": "ping"})
    body = Stitcher(provider="anthropic")
    body.feed(b'data: {"type": "message_start", "message": {"id": "m", "content": []}}\n\n')
    with pytest.raises(TypeError):
        body.feed({"type": "ping"})


# -- each path's stitcher makes its own path's assemblers --------------------------------------


def _assembler_classes(make: Any) -> set[type]:
    """The classes of every assembler a stitcher from ``make`` uses: its calls', a server
    call's (Anthropic ``server_tool_use``) and a parallel wrapper's (declared tools)."""
    anthropic = make(provider="anthropic")
    block = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}
    anthropic.feed({"type": "content_block_start", "index": 0, "content_block": block})
    tools = {"get_weather": {"type": "object"}}
    wrapped = make(provider="openai-chat", tools=tools)
    return {
        type(anthropic.assembler),
        type(anthropic._drive.__self__._server_assembler),
        type(wrapped.assembler),
        type(wrapped._wrappers.private),
    }


def test_each_path_makes_only_its_own_assemblers() -> None:
    from toolstitch import Assembler
    from toolstitch.testing import PythonAssembler, PythonStitcher

    assert _assembler_classes(PythonStitcher) == {PythonAssembler}
    assert _assembler_classes(Stitcher) == {Assembler}


def test_a_subclass_of_an_event_type_is_noted_as_its_base_and_an_unknown_type_as_nothing() -> None:
    # ``_observe`` finds what to note by the event's exact type, then by its nearest base.
    class MyFinish(FinishReason):
        pass

    class MyUsage(Usage):
        pass

    class MyText(TextDelta):
        pass

    class MyEvent(Event):
        pass

    stitcher = Stitcher(provider="anthropic")
    events: list[Event] = [
        MyText(text="a"),
        MyFinish(reason="tool_use"),
        MyFinish(reason="later"),
        MyUsage(usage={"output_tokens": 3}),
        TextDelta(text="b"),
        MyEvent(),
    ]
    assert stitcher._observe(events) is events
    result = stitcher.result
    assert (result.text, result.finish_reason, result.usage) == (
        "ab",
        "tool_use",
        {"output_tokens": 3},
    )
    assert result.warnings == ()
