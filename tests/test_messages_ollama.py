"""``to_ollama`` / ``from_ollama``: the /api/chat request shape, ids, pairing of results, and a
stream's calls sent back. (The round trip of every conversation is in test_messages.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from toolstitch import GENERATED_ID_PREFIX, stitch
from toolstitch.messages import (
    AssistantMessage,
    FunctionCall,
    Reasoning,
    SystemMessage,
    ToolResult,
    UserMessage,
    from_ollama,
    to_ollama,
    tool_error,
    tool_result,
)

WIRE: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {
        "role": "assistant",
        "content": "",
        "thinking": "Two cities.",
        "tool_calls": [
            {"function": {"name": "weather", "arguments": {"city": "Paris"}}},
            {"id": "call_r2", "function": {"name": "weather", "arguments": {"city": "Rome"}}},
        ],
    },
    {"role": "tool", "content": "18C", "tool_name": "weather"},
    {"role": "tool", "content": "Error: timeout", "tool_name": "weather"},
    {"role": "assistant", "content": "Paris 18C; Rome unknown."},
]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_request_shape_and_back() -> None:
    messages = from_ollama(WIRE)
    first = FunctionCall(id=f"{GENERATED_ID_PREFIX}0", name="weather", arguments={"city": "Paris"})
    second = FunctionCall(id="call_r2", name="weather", arguments={"city": "Rome"})
    assert messages == [
        SystemMessage("Be brief."),
        UserMessage("Weather in Paris and Rome?"),
        AssistantMessage(tool_calls=(first, second), reasoning=(Reasoning(text="Two cities."),)),
        ToolResult(call_id=first.id, name="weather", content="18C"),
        ToolResult(call_id="call_r2", name="weather", content="Error: timeout", is_error=True),
        AssistantMessage(text="Paris 18C; Rome unknown."),
    ]
    # generated ids are left out again; real ones kept
    assert to_ollama(messages) == WIRE


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_results_pair_by_tool_name_before_position() -> None:
    wire: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "a", "arguments": {}}},
                {"function": {"name": "b", "arguments": {}}},
            ],
        },
        {"role": "tool", "content": "B", "tool_name": "b"},
        {"role": "tool", "content": "A"},
    ]
    _, to_b, to_a = from_ollama(wire)
    assert isinstance(to_b, ToolResult)
    assert isinstance(to_a, ToolResult)
    assert (to_b.call_id, to_b.name) == (f"{GENERATED_ID_PREFIX}1", "b")
    assert (to_a.call_id, to_a.name) == (f"{GENERATED_ID_PREFIX}0", "a")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_tool_call_id_wins_when_a_server_sends_one() -> None:
    wire: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "function": {"name": "f", "arguments": {}}},
                {"id": "c2", "function": {"name": "f", "arguments": {}}},
            ],
        },
        {"role": "tool", "content": "second", "tool_call_id": "c2"},
        {"role": "tool", "content": "first", "tool_name": "f"},
    ]
    _, second, first = from_ollama(wire)
    assert isinstance(second, ToolResult)
    assert isinstance(first, ToolResult)
    assert (second.call_id, second.name) == ("c2", "f")
    assert first.call_id == "c1"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_error_results_say_so_in_their_content() -> None:
    call = FunctionCall(id="c1", name="f")
    assert to_ollama([tool_error(call, "no such file")]) == [
        {"role": "tool", "content": "Error: no such file", "tool_name": "f"}
    ]
    assert to_ollama([ToolResult(call_id="c1", name="f", content="bad", is_error=True)]) == [
        {"role": "tool", "content": "Error: bad", "tool_name": "f"}
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_arguments_as_json_text_are_read_and_bad_ones_refused() -> None:
    wire = [
        {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": '{"a": 1}'}}]}
    ]
    (message,) = from_ollama(wire)
    assert isinstance(message, AssistantMessage)
    assert message.tool_calls[0].arguments == {"a": 1}
    with pytest.raises(ValueError, match="message 0"):
        from_ollama([{"role": "assistant", "tool_calls": [{"function": {"arguments": "[1]"}}]}])
    with pytest.raises(ValueError, match="unknown role"):
        from_ollama([{"role": "developer", "content": "x"}])


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_sdk_message_objects_are_read() -> None:
    ollama = pytest.importorskip("ollama")
    call = ollama.Message.ToolCall(
        function=ollama.Message.ToolCall.Function(name="f", arguments={"a": 1})
    )
    messages = from_ollama(
        [
            ollama.Message(role="assistant", content="", thinking="t", tool_calls=[call]),
            ollama.Message(role="tool", content="ok", tool_name="f"),
        ]
    )
    assert messages == [
        AssistantMessage(
            tool_calls=(FunctionCall(id=f"{GENERATED_ID_PREFIX}0", name="f", arguments={"a": 1}),),
            reasoning=(Reasoning(text="t"),),
        ),
        ToolResult(call_id=f"{GENERATED_ID_PREFIX}0", name="f", content="ok"),
    ]


def test_a_streamed_calls_go_back_as_the_next_request_wants_them() -> None:
    body = (
        b'{"model":"m","created_at":"t","message":{"role":"assistant","content":"",'
        b'"tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}},'
        b'{"id":"call_9","function":{"index":1,"name":"get_weather","arguments":{"city":"Rome"}}}'
        b']},"done":true,"done_reason":"stop"}\n'
    )
    result = stitch(body).result
    turn = AssistantMessage(
        tool_calls=tuple(
            FunctionCall(id=c.id or "", name=c.name or "", arguments=c.parsed_arguments or {})
            for c in result.calls
        )
    )
    wire = to_ollama([turn, *(tool_result(c, "18C") for c in result.calls)])
    assert wire == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {
                    "id": "call_9",
                    "function": {"name": "get_weather", "arguments": {"city": "Rome"}},
                },
            ],
        },
        {"role": "tool", "content": "18C", "tool_name": "get_weather"},
        {"role": "tool", "content": "18C", "tool_name": "get_weather"},
    ]
