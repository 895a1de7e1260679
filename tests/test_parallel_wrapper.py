"""The ``multi_tool_use.parallel`` wrapper: expanded into its calls when the declared tools
show it is not a real tool (OpenAI Chat and Responses), left alone otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from fixtures.expected import load, payloads
from toolstitch.adapters._parallel import expand, is_wrapper
from toolstitch.stitch.stitcher import Stitcher, StitchResult, stitch
from toolstitch.vocab.call_events import CallReady, CallStarted, CallWarning

pytest.importorskip("jsonschema")  # tools= checks arguments with it

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
        },
    },
]
CHAT = "openai-chat/parallel-wrapper"
RESPONSES = "openai-responses/parallel-wrapper-then-call"


def feeds(body: bytes) -> list[object]:
    return [
        body,
        body.splitlines(keepends=True),
        [body[i : i + 1] for i in range(len(body))],
        payloads(body),
    ]


def calls(result: StitchResult) -> list[tuple[int, str, str, str]]:
    return [(c.index, c.id, c.name, c.arguments) for c in result.calls]


def codes(result: StitchResult) -> list[tuple[int | None, str]]:
    return sorted(
        (w.index if isinstance(w, CallWarning) else None, w.error.code) for w in result.warnings
    )


def test_chat_wrapper_becomes_its_calls_in_any_chunking() -> None:
    body, _ = load(CHAT)
    for feed in feeds(body):
        result = stitch(feed, tools=TOOLS).result
        assert calls(result) == [
            (0, "call_w1_0", "get_weather", '{"city": "Paris"}'),
            (1, "call_w1_1", "get_time", '{"tz": "Europe/Paris"}'),
        ]
        assert codes(result) == [(0, "quirk-parallel-wrapper"), (1, "quirk-parallel-wrapper")]
        assert result.discarded == ()


def test_each_expanded_call_starts_and_ends_once() -> None:
    body, _ = load(CHAT)
    events = list(stitch(body, tools=TOOLS))
    assert [e.index for e in events if isinstance(e, CallStarted)] == [0, 1]
    assert [e.call.index for e in events if isinstance(e, CallReady)] == [0, 1]


def test_responses_wrapper_and_a_later_call_that_must_move() -> None:
    body, _ = load(RESPONSES)
    for feed in feeds(body):
        result = stitch(feed, tools=TOOLS).result
        assert calls(result) == [
            (0, "call_w2_0", "get_weather", '{"city": "Paris"}'),
            (1, "call_w2_1", "get_time", '{"tz": "Europe/Paris"}'),
            (2, "call_n3", "get_time", '{"tz": "UTC"}'),
        ]
        # The later call's output_index 1 was taken: it moved. Its .done was checked against
        # its own text (no quirk-done-mismatch), through the translated records.
        assert codes(result) == [
            (0, "quirk-parallel-wrapper"),
            (1, "quirk-parallel-wrapper"),
            (2, "quirk-index-moved"),
        ]


def test_without_tools_the_wrapper_is_an_ordinary_call() -> None:
    body, expected = load(CHAT)
    (call,) = stitch(body).result.calls
    assert (call.name, call.arguments) == (
        "multi_tool_use.parallel",
        expected["calls"][0]["arguments"],
    )


def test_a_declared_wrapper_name_is_a_real_tool() -> None:
    body, _ = load(CHAT)
    tools = [*TOOLS, {"type": "function", "function": {"name": "multi_tool_use.parallel"}}]
    result = stitch(body, tools=tools).result
    assert [c.name for c in result.calls] == ["multi_tool_use.parallel"]
    assert codes(result) == []


def test_a_wrapper_of_another_shape_is_handed_on_and_discarded_as_unknown() -> None:
    body = load(CHAT)[0].replace(b"tool_uses", b"tool_usez")
    result = stitch(body, tools=TOOLS).result
    assert result.calls == ()
    assert [(d.name, d.error.code) for d in result.discarded] == [
        ("multi_tool_use.parallel", "unknown-tool")
    ]


def test_expanded_calls_are_checked_against_their_tools() -> None:
    body = load(CHAT)[0].replace(b'\\"Paris\\"', b"7")
    result = stitch(body, tools=TOOLS).result
    assert [c.name for c in result.calls] == ["get_time"]
    assert [(d.name, d.error.code) for d in result.discarded] == [
        ("get_weather", "schema-violation")
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_rule() -> None:
    assert is_wrapper("multi_tool_use.parallel", {"get_weather"})
    assert not is_wrapper("multi_tool_use.parallel", None)  # no tools: cannot tell
    assert not is_wrapper("get_weather", {"get_weather"})
    assert expand({"tool_uses": [{"recipient_name": "functions.f", "parameters": {"a": 1}}]}) == [
        ("f", {"a": 1})
    ]
    assert expand({"tool_uses": [{"recipient_name": "f"}]}) == [("f", {})]
    assert expand({"tool_uses": []}) is None
    assert expand({"tool_uses": [{"recipient_name": 3}]}) is None
    assert expand({"tool_uses": [{"recipient_name": "f"}], "extra": 1}) is None


def test_a_whole_wrapper_in_one_chunk_is_expanded_at_once() -> None:
    wrapper = (
        '{"tool_uses": [{"recipient_name": "functions.get_time", "parameters": {}},'
        ' {"recipient_name": "functions.get_time", "parameters": {"tz": "UTC"}}]}'
    )
    chunk = {
        "object": "chat.completion.chunk",
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_x",
                            "type": "function",
                            "function": {"name": "multi_tool_use.parallel", "arguments": wrapper},
                        }
                    ]
                },
            }
        ],
    }
    stitcher = Stitcher(tools=TOOLS)
    first = [e for e in stitcher.feed(chunk) if isinstance(e, CallReady)]  # before the end
    assert [(c.call.id, c.call.arguments) for c in first] == [
        ("call_x_0", "{}"),
        ("call_x_1", '{"tz": "UTC"}'),
    ]
