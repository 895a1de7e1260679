"""``read_history`` / ``write_history``: the histories a run accepts, and the way back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from toolstitch.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    SystemMessage,
    ToolResult,
    UserMessage,
)
from toolstitch.runner._history import WIRE_FORMS, read_history, write_history

if TYPE_CHECKING:
    from google.genai import types as genai_types
    from openai.types import chat as openai_chat_types
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import genai_types, openai_chat_types

CALL = FunctionCall(id="c1", name="get_weather", arguments={"city": "Paris"})
CONVERSATION: list[Message] = [
    SystemMessage("Be brief."),
    UserMessage("Weather in Paris?"),
    AssistantMessage(text="Looking.", tool_calls=(CALL,)),
    ToolResult(call_id="c1", name="get_weather", content="sunny"),
    AssistantMessage(text="Sunny."),
]
BODY = CONVERSATION[1:]  # without the system message


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_string_is_one_user_message() -> None:
    assert read_history("hi", "openai-chat") == [UserMessage("hi")]
    assert read_history("hi", "anthropic", system="Be brief.") == [
        SystemMessage("Be brief."),
        UserMessage("hi"),
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_neutral_messages_and_strings_are_kept() -> None:
    given: list[Any] = [*CONVERSATION[:1], "Weather in Paris?", *CONVERSATION[2:]]
    out = read_history(given, "auto")
    assert out == CONVERSATION
    assert out is not given
    assert read_history(BODY, "gemini", system="Be brief.") == CONVERSATION


OPENAI_CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "assistant", "content": "Sunny."},
]

RESPONSES: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Looking."}],
    },
    {
        "type": "function_call",
        "call_id": "c1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    },
    {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    {"role": "assistant", "content": "Sunny."},
]

ANTHROPIC: list[dict[str, Any]] = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}},
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "sunny"}],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Sunny."}]},
]

GEMINI: list[dict[str, Any]] = [
    {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
    {
        "role": "model",
        "parts": [
            {"text": "Looking."},
            {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}},
        ],
    },
    {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "c1",
                    "name": "get_weather",
                    "response": {"output": "sunny"},
                }
            }
        ],
    },
    {"role": "model", "parts": [{"text": "Sunny."}]},
]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("provider", "history", "system"),
    [
        ("openai-chat", OPENAI_CHAT, None),
        ("openai-responses", RESPONSES, None),
        ("anthropic", ANTHROPIC, "Be brief."),
        ("anthropic", ANTHROPIC, [{"type": "text", "text": "Be brief."}]),
        ("gemini", GEMINI, "Be brief."),
        ("gemini", GEMINI, {"parts": [{"text": "Be brief."}]}),
    ],
)
def test_wire_histories_as_users_hold_them(provider: str, history: Any, system: Any) -> None:
    assert read_history(history, provider, system=system) == CONVERSATION


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_system_for_a_form_without_a_system_field_comes_first() -> None:
    out = read_history(OPENAI_CHAT[1:], "openai-chat", system="Be brief.")
    assert out == CONVERSATION


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_sdk_objects_are_read_through_their_dump() -> None:
    assistant = openai_chat_types.ChatCompletionMessage(role="assistant", content="Sunny.")
    out = read_history([*OPENAI_CHAT[:-1], assistant], "openai-chat")
    assert out == CONVERSATION
    contents = [genai_types.Content.model_validate(c) for c in GEMINI]
    assert read_history(contents, "gemini", system="Be brief.") == CONVERSATION


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("provider", list(WIRE_FORMS))
def test_write_then_read_gives_the_conversation_back(provider: str) -> None:
    wire = write_history(CONVERSATION, provider)
    if isinstance(wire, tuple):  # (system, messages) / (system_instruction, contents)
        system, items = wire
        assert read_history(items, provider, system=system) == CONVERSATION
    else:
        assert read_history(wire, provider) == CONVERSATION


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_write_history_forms_and_options() -> None:
    assert write_history(CONVERSATION, "openai-chat")[0] == {
        "role": "system",
        "content": "Be brief.",
    }
    system, messages = write_history(CONVERSATION, "anthropic")
    assert system == "Be brief."
    assert messages[0] == {"role": "user", "content": "Weather in Paris?"}
    instruction, contents = write_history(CONVERSATION, "gemini")
    assert instruction == {"parts": [{"text": "Be brief."}]}
    assert contents[1]["role"] == "model"
    with_reasoning = [AssistantMessage(text="x", reasoning=())]
    assert write_history(with_reasoning, "openai-chat", include_reasoning=True) == [
        {"role": "assistant", "content": "x"}
    ]
    with pytest.raises(ValueError, match="no wire format for provider 'auto'"):
        write_history(CONVERSATION, "auto")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("history", "provider", "match"),
    [
        (42, "openai-chat", "got int, not a list"),
        ({"role": "user", "content": "hi"}, "openai-chat", "got dict, not a list"),
        ([42], "openai-chat", "item 0 is 42"),
        ([UserMessage("a"), {"role": "user", "content": "b"}], "openai-chat", "one form"),
        ([{"role": "user", "content": "b"}, "c"], "anthropic", "item 1 is a str"),
        ([{"role": "user", "content": "hi"}], "auto", "has no wire format here"),
    ],
)
def test_other_forms_are_refused_naming_the_accepted_ones(
    history: Any, provider: str, match: str
) -> None:
    with pytest.raises(TypeError, match=match) as caught:
        read_history(history, provider)
    assert "A history is a str (one user message)" in str(caught.value)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_error_names_the_models_own_form() -> None:
    with pytest.raises(TypeError, match=r"or Anthropic messages \(the system prompt as system="):
        read_history([3.5], "anthropic")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_wire_history_its_reader_cannot_read_says_where() -> None:
    with pytest.raises(ValueError, match="as OpenAI Chat messages: message 1: unknown role"):
        read_history([{"role": "user", "content": "a"}, {"role": "robot"}], "openai-chat")
    with pytest.raises(ValueError, match="as Gemini contents"):
        read_history([{"role": "narrator", "parts": []}], "gemini")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_neutral_history_with_a_system_that_is_not_text() -> None:
    with pytest.raises(TypeError, match="system= is a str"):
        read_history([UserMessage("a")], "openai-chat", system=[{"text": "x"}])
