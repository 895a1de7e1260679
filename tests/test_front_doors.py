"""Every front door has every ability: ``stitch``, ``astitch`` and ``Stitcher`` with declared tools.

The checks themselves are the assembler's (test_assembler_tools); these show that the front
doors pass ``tools``, ``on_schema_violation``, ``watch_strings`` and ``partial_arguments`` on
unchanged, on real recorded-style streams of every provider (tests/fixtures), and that the
events are the ones a bare ``Assembler`` gives for the same deltas, however the bytes are cut.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunks import split
from fixtures.expected import load, payloads
from toolstitch import (
    ArgumentsDelta,
    ArgumentsValue,
    Assembler,
    CallDiscarded,
    CallReady,
    CallStarted,
    CallWarning,
    Delta,
    Event,
    ProviderQuirk,
    SchemaViolation,
    Stitcher,
    UnknownTool,
    astitch,
    stitch,
)
from toolstitch.testing import AnthropicScript, cut

#: A fixture with two client calls, per provider.
TWO_CALLS = {
    "openai-chat": "openai-chat/parallel-calls",
    "openai-responses": "openai-responses/parallel-rotating-item-ids",
    "anthropic": "anthropic/thinking-text-then-parallel-tools",
    "gemini": "gemini/text-thought-and-calls-with-ids",
}
#: Fixtures with a client call that has a string argument: (fixture, tool, JSON Pointer).
STRINGS = {
    "openai-chat": ("openai-chat/parallel-calls", "get_weather", "/city"),
    "openai-responses": ("openai-responses/text-then-call", "get_weather", "/city"),
    "anthropic": ("anthropic/server-tool-then-client-tool", "convert", "/from"),
    "gemini": ("gemini/partial-args-nested", "plan", "/trip/city"),
}
CORE = (CallStarted, ArgumentsDelta, ArgumentsValue, CallReady, CallDiscarded, CallWarning)

Door = Callable[..., list[Event]]


def via_stitch(body: bytes, **options: Any) -> list[Event]:
    return list(stitch(body.splitlines(keepends=True), **options))


def via_astitch(body: bytes, **options: Any) -> list[Event]:
    async def chunks() -> AsyncIterator[bytes]:
        for piece in split(body, range(7, len(body), 13)):
            yield piece

    async def main() -> list[Event]:
        return [event async for event in astitch(chunks(), **options)]

    return asyncio.run(main())


def via_stitcher(body: bytes, **options: Any) -> list[Event]:
    """One provider event at a time, as dicts (what an SDK hands over)."""
    stitcher = Stitcher(**options)
    events: list[Event] = []
    for payload in payloads(body):
        events.extend(stitcher.feed(payload))
    return events + stitcher.close()


DOORS = {"stitch": via_stitch, "astitch": via_astitch, "Stitcher": via_stitcher}


def two_calls(provider: str) -> tuple[bytes, dict[str, Any], dict[str, Any]]:
    body, expected = load(TWO_CALLS[provider])
    first, second = expected["calls"]
    return body, first, second


def wrong_type_schema(call: dict[str, Any]) -> tuple[dict[str, Any], str, Any]:
    """A schema that the call's first argument breaks by its type: (schema, key, value)."""
    key, value = next(iter(json.loads(call["arguments"]).items()))
    wrong = "integer" if isinstance(value, str) else "string"
    schema = {"type": "object", "properties": {key: {"type": wrong}}}
    return schema, key, value


def fragments(events: list[Event], index: int) -> list[str]:
    """The argument fragments of call ``index`` that came before its end."""
    out: list[str] = []
    for event in events:
        if isinstance(event, ArgumentsDelta) and event.index == index:
            out.append(event.fragment)
        elif isinstance(event, (CallReady, CallDiscarded)) and _index(event) == index:
            break
    return out


def _index(event: Event) -> int:
    return event.call.index if isinstance(event, CallReady) else getattr(event, "index", -1)


def discards(events: list[Event]) -> dict[int, CallDiscarded]:
    return {e.index: e for e in events if isinstance(e, CallDiscarded)}


def ready(events: list[Event]) -> dict[int, CallReady]:
    return {e.call.index: e for e in events if isinstance(e, CallReady)}


# -- unknown tools ----------------------------------------------------------------------------


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("provider", TWO_CALLS)
def test_an_unknown_tool_is_discarded_before_its_arguments(provider: str, door: str) -> None:
    body, first, second = two_calls(provider)
    tools = {first["name"]: {"type": "object"}}  # the second tool is not declared
    events = DOORS[door](body, tools=tools)
    [gone] = discards(events).values()
    assert gone.index == second["index"]
    assert gone.id == second["id"]
    assert isinstance(gone.error, UnknownTool)
    assert gone.error.declared == (first["name"],)
    # Early: at the delta that carried the name, before any of its arguments.
    assert gone.arguments == ""
    assert not [e for e in events if isinstance(e, ArgumentsDelta) and e.index == gone.index]
    started = [n for n, e in enumerate(events) if isinstance(e, CallStarted)]
    assert events.index(gone) > started[-1]
    # The declared call is untouched.
    kept = ready(events)[first["index"]].call
    assert (kept.id, kept.name, kept.arguments) == (first["id"], first["name"], first["arguments"])


# -- schema violations ------------------------------------------------------------------------


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("provider", TWO_CALLS)
def test_a_schema_violation_is_discarded_at_the_fragment_that_made_it_certain(
    provider: str, door: str
) -> None:
    body, first, second = two_calls(provider)
    schema, key, value = wrong_type_schema(first)
    tools = {first["name"]: schema, second["name"]: {}}
    events = DOORS[door](body, tools=tools)
    [gone] = discards(events).values()
    assert gone.index == first["index"]
    error = gone.error
    assert isinstance(error, SchemaViolation)
    assert (error.path, error.keyword) == (f"/{key}", "type")
    assert error.offset is not None
    # The offset is the value's first character, and the discard came with the fragment
    # that carried it: not before, not after.
    assert gone.arguments[error.offset] == json.dumps(value)[0]
    pieces = fragments(events, gone.index)
    text = "".join(pieces)
    assert text == gone.arguments
    assert len(text) - len(pieces[-1]) <= error.offset < len(text)
    assert first["index"] not in ready(events)
    assert ready(events)[second["index"]].call.arguments == second["arguments"]


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("provider", TWO_CALLS)
def test_warn_policy_reports_the_violation_and_keeps_the_call(provider: str, door: str) -> None:
    body, first, second = two_calls(provider)
    schema, key, _ = wrong_type_schema(first)
    tools = {first["name"]: schema, second["name"]: {}}
    events = DOORS[door](body, tools=tools, on_schema_violation="warn")
    assert discards(events) == {}
    warnings = [e for e in events if isinstance(e, CallWarning)]
    assert [(w.index, w.error.code) for w in warnings] == [(first["index"], "schema-violation")]
    assert isinstance(warnings[0].error, SchemaViolation)
    assert warnings[0].error.path == f"/{key}"
    calls = ready(events)
    assert calls[first["index"]].call.arguments == first["arguments"]
    assert events.index(warnings[0]) < events.index(calls[first["index"]])


@pytest.mark.parametrize("provider", TWO_CALLS)
def test_the_result_holds_the_discards_and_warnings(provider: str) -> None:
    body, first, second = two_calls(provider)
    schema, _, _ = wrong_type_schema(first)
    result = stitch(body, tools={first["name"]: schema}).result
    assert sorted((d.index, d.error.code) for d in result.discarded) == [
        (first["index"], "schema-violation"),
        (second["index"], "unknown-tool"),
    ]
    assert result.calls == ()
    warned = stitch(body, tools={first["name"]: schema}, on_schema_violation="warn").result
    assert [c.index for c in warned.calls] == [first["index"]]
    assert [(w.index, w.error.code) for w in warned.warnings if isinstance(w, CallWarning)] == [
        (first["index"], "schema-violation")
    ]


# -- watched strings and the partial view -----------------------------------------------------


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("provider", STRINGS)
def test_watched_strings_stream_as_arguments_values(provider: str, door: str) -> None:
    name, pointer = STRINGS[provider][1:]
    body, expected = load(STRINGS[provider][0])
    [call] = [c for c in expected["calls"] if c["name"] == name]
    value: Any = json.loads(call["arguments"])
    for key in pointer.split("/")[1:]:
        value = value[key]
    events = DOORS[door](body, watch_strings={name: [pointer]})
    values = [e for e in events if isinstance(e, ArgumentsValue) and e.index == call["index"]]
    grown = "".join(v.value for v in values if v.path == pointer and not v.done)
    assert value.startswith(grown)  # a string that arrives in one fragment is only done
    if provider in ("openai-chat", "gemini"):  # these fixtures split the string
        assert grown == value
    done = {v.path: v.value for v in values if v.done}
    assert done[pointer] == value
    assert done[""] == json.loads(call["arguments"])
    # Each value follows the fragment that carried it.
    first_value = events.index(values[0])
    assert any(isinstance(e, ArgumentsDelta) for e in events[:first_value])


@pytest.mark.parametrize("provider", TWO_CALLS)
def test_the_partial_view_grows_through_the_stitcher(provider: str) -> None:
    body, first, second = two_calls(provider)
    tools: dict[str, Any] = {first["name"]: {}, second["name"]: {}}
    stitcher = Stitcher(tools=tools)
    seen: list[str] = []
    pieces = 0
    for payload in payloads(body):
        events = stitcher.feed(payload)
        pieces += sum(isinstance(e, ArgumentsDelta) and e.index == first["index"] for e in events)
        snapshot = {s.index: s for s in stitcher.calls}.get(first["index"])
        if snapshot is not None and snapshot.partial_arguments is not None:
            seen.append(json.dumps(snapshot.partial_arguments))
    stitcher.close()
    assert json.loads(seen[-1]) == json.loads(first["arguments"])
    if pieces > 1:
        assert len(set(seen)) > 1  # it grew with the fragments
    plain = Stitcher(tools=tools, partial_arguments=False)
    for payload in payloads(body):
        plain.feed(payload)
    assert all(s.partial_arguments is None for s in plain.calls)
    assert all(s.partial_arguments is None for s in Stitcher().calls)


def test_bad_options_are_refused_by_every_door() -> None:
    body, _ = load(TWO_CALLS["openai-chat"])
    with pytest.raises(ValueError, match="on_schema_violation"):
        Stitcher(tools={}, on_schema_violation="ignore")
    with pytest.raises(ValueError, match="on_schema_violation"):
        stitch(body, on_schema_violation="ignore")
    with pytest.raises(ValueError, match="on_schema_violation"):
        astitch(body, on_schema_violation="ignore")
    with pytest.raises(TypeError):
        stitch(body, tools="get_weather")
    with pytest.raises(TypeError):
        Stitcher(watch_strings={"get_weather": "/city"})


# -- the same events as a bare Assembler ------------------------------------------------------

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"],
    "additionalProperties": False,
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
]
NAMES = ["get_weather", "get_time", "get_", "get_weather_now", "search"]
ARGUMENTS = [
    '{"city": "Paris"}',
    '{"city": "Paris", "days": 3}',
    '{"city": 7}',
    '{"days": 0}',
    '{"city": "Rome", "extra": true}',
    '{"city": "Par',
    '{"city" "Paris"}',
    "{}",
    "",
]


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-eq",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


@st.composite
def chat_streams(draw: st.DrawFn) -> tuple[list[dict[str, Any]], bytes]:
    """Tool-call deltas as OpenAI streams them, and the SSE body that carries them."""
    deltas: list[dict[str, Any]] = []
    for index in range(draw(st.integers(1, 3))):
        text = draw(st.sampled_from(ARGUMENTS))
        cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=4)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        head = {
            "index": index,
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": draw(st.sampled_from(NAMES)), "arguments": pieces[0]},
        }
        deltas.append(head)
        deltas += [{"index": index, "function": {"arguments": p}} for p in pieces[1:] if p]
    body = _chunk({"role": "assistant", "content": None})
    body += b"".join(_chunk({"tool_calls": [d]}) for d in deltas)
    body += _chunk({}, "tool_calls") + b"data: [DONE]\n\n"
    return deltas, body


@settings(max_examples=60, deadline=None)
@given(
    chat_streams(),
    st.lists(st.integers(0, 4000), max_size=12),
    st.sampled_from(["discard", "warn"]),
    st.booleans(),
)
def test_stitch_gives_the_core_events_of_a_bare_assembler(
    stream: tuple[list[dict[str, Any]], bytes], cuts: list[int], policy: str, watch: bool
) -> None:
    deltas, body = stream
    options: dict[str, Any] = {"tools": TOOLS, "on_schema_violation": policy}
    if watch:
        options["watch_strings"] = {"get_weather": ["/city"]}
    assembler = Assembler(**options)
    expected: list[Event] = []
    for delta in deltas:
        expected += assembler.feed(delta)
    expected += assembler.finish("tool_calls")  # the body's finish reason
    run = stitch(split(body, cuts), **options)
    # Quirk warnings are the stream's (a truncated call under finish_reason "tool_calls").
    got = [
        e
        for e in run
        if isinstance(e, CORE) and not isinstance(getattr(e, "error", None), ProviderQuirk)
    ]
    assert got == expected
    snapshots = {s.index: s for s in run.stitcher.calls}
    for snapshot in assembler.calls:
        assert snapshots[snapshot.index].partial_arguments == snapshot.partial_arguments


@st.composite
def anthropic_streams(draw: st.DrawFn) -> tuple[list[tuple[str, int, Any]], bytes]:
    """``tool_use`` blocks as Anthropic streams them, after a text block, and the SSE body;
    with the same moves for a bare Assembler: ``("start", block, (id, name))``,
    ``("arguments", block, fragment)``, ``("end", block, None)``."""
    script = AnthropicScript().text("Let me see.")
    moves: list[tuple[str, int, Any]] = []
    for n in range(draw(st.integers(1, 3))):
        block = n + 1
        name = draw(st.sampled_from(NAMES))
        text = draw(st.sampled_from(ARGUMENTS))
        pieces = draw(st.integers(1, 5))
        script.call(f"toolu_{n}", name, text, pieces=pieces)
        moves.append(("start", block, (f"toolu_{n}", name)))
        # A block with no input at all is a call without parameters: its stop closes it,
        # and the core's end rule gives it the empty object.
        fragments = [piece for piece in cut(text, pieces) if piece]
        moves += [("arguments", block, piece) for piece in fragments]
        moves.append(("end", block, None))
    steps = script.finish("tool_use").reply().steps
    return moves, b"".join(step for step in steps if isinstance(step, bytes))


@settings(max_examples=40, deadline=None)
@given(anthropic_streams(), st.lists(st.integers(0, 3000), max_size=12))
def test_stitch_gives_the_core_events_of_a_bare_assembler_for_anthropic(
    stream: tuple[list[tuple[str, int, Any]], bytes], cuts: list[int]
) -> None:
    moves, body = stream
    options: dict[str, Any] = {"tools": TOOLS, "watch_strings": {"get_weather": ["/city"]}}
    assembler = Assembler(**options)
    expected: list[Event] = []
    for move, block, value in moves:
        if move == "start":
            expected += assembler.feed(Delta(index=block, id=value[0], name=value[1]))
        elif move == "arguments":
            expected += assembler.feed_arguments(block, value)
        else:
            expected += assembler.end(block)
    expected += assembler.finish("tool_use")
    got = [e for e in stitch(split(body, cuts), **options) if isinstance(e, CORE)]
    assert got == expected
