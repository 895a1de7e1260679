"""toolstitch.messages: the neutral shape and its round trips through each wire form."""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolstitch.messages as messages_package
from strategies import per_pass
from toolstitch import (
    GENERATED_ID_PREFIX,
    CallDiscarded,
    CustomToolCall,
    MalformedArguments,
    ToolCall,
)
from toolstitch.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    Reasoning,
    SystemMessage,
    ToolResult,
    UserMessage,
    custom_call_item,
    custom_call_output,
    from_anthropic,
    from_gemini,
    from_ollama,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_gemini,
    to_ollama,
    to_openai_chat,
    to_openai_responses,
    tool_error,
    tool_result,
)

PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama")

ids = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=1, max_size=12
)
texts = st.text(max_size=20)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(texts, json_values, max_size=4)
ok_content = texts.filter(lambda t: not t.startswith(("Error:", "Error [")))
nonempty_texts = texts.filter(bool)
maybe_texts = st.none() | texts


@cache  # one strategy per provider, not a new one (with new lambdas) per drawn message
def reasoning_for(provider: str) -> st.SearchStrategy[tuple[Reasoning, ...]]:
    if provider in ("openai-chat", "ollama"):  # one reasoning text, no signature
        return st.one_of(st.just(()), nonempty_texts.map(lambda t: (Reasoning(text=t),)))
    if provider == "openai-responses":
        one = st.builds(Reasoning, text=texts, signature=st.none() | texts, id=st.none() | ids)
    elif provider == "anthropic":
        one = st.builds(Reasoning, text=texts, signature=texts) | st.builds(
            Reasoning, signature=texts, redacted=st.just(True)
        )
    else:
        one = st.builds(Reasoning, text=texts, signature=st.none() | texts)
    return st.lists(one, max_size=2).map(tuple)


@st.composite
def conversations(draw: Callable[..., Any], provider: str) -> list[Message]:
    gemini = provider == "gemini"
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(SystemMessage(draw(nonempty_texts)))
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 3))):
        out.append(UserMessage(draw(texts)))
        for step in range(draw(st.integers(1, 2))):
            calls = []
            for _ in range(draw(st.integers(0, 3))):
                call_id = draw(ids.filter(lambda i: i not in used))
                used.add(call_id)
                calls.append(
                    FunctionCall(
                        id=call_id,
                        name=draw(ids),
                        arguments=draw(arguments),
                        signature=draw(maybe_texts) if gemini else None,
                    )
                )
            message = AssistantMessage(
                text=draw(texts),
                tool_calls=tuple(calls),
                reasoning=draw(reasoning_for(provider)),
                signature=draw(maybe_texts) if gemini else None,
            )
            if not (message.text or message.tool_calls or message.reasoning):
                message = AssistantMessage(text="answer")
            if (
                gemini
                and not message.text
                and message.signature is None
                and not (message.tool_calls or message.reasoning)
            ):
                message = AssistantMessage(text="answer")
            out.append(message)
            for call in calls:
                is_error = draw(st.booleans())
                content = "Error: " + draw(texts) if is_error else draw(ok_content)
                out.append(
                    ToolResult(call_id=call.id, name=call.name, content=content, is_error=is_error)
                )
            if not calls:
                break
            del step
    return out


def round_trip(provider: str, messages: list[Message]) -> list[Message]:
    if provider == "openai-chat":
        wire = json.loads(json.dumps(to_openai_chat(messages, include_reasoning=True)))
        return from_openai_chat(wire)
    if provider == "openai-responses":
        return from_openai_responses(json.loads(json.dumps(to_openai_responses(messages))))
    if provider == "anthropic":
        system, wire = to_anthropic(messages)
        return from_anthropic(json.loads(json.dumps(wire)), system)
    if provider == "ollama":
        return from_ollama(json.loads(json.dumps(to_ollama(messages))))
    instruction, contents = to_gemini(messages)
    return from_gemini(json.loads(json.dumps(contents)), instruction)


# (A second property drew the same conversations and asserted that ``round_trip`` of
# ``round_trip(messages)`` equals ``round_trip(messages)``: both sides are neutral messages, so
# wherever this one holds (``round_trip(messages) == messages``) that one holds too; it could
# fail only where this one fails, and is not kept.)
@pytest.mark.parametrize("provider", PROVIDERS)
@per_pass(100)
@given(data=st.data())
def test_neutral_round_trips_through_every_wire_form(provider: str, data: st.DataObject) -> None:
    messages = data.draw(conversations(provider))
    assert round_trip(provider, messages) == messages


# -- wire shapes ------------------------------------------------------------------------------

CONVERSATION: list[Message] = [
    SystemMessage("Be brief."),
    UserMessage("Weather in Paris and Rome?"),
    AssistantMessage(
        text="Checking.",
        tool_calls=(
            FunctionCall(id="c1", name="weather", arguments={"city": "Paris"}),
            FunctionCall(id="c2", name="weather", arguments={"city": "Rome"}),
        ),
        reasoning=(Reasoning(text="two calls", signature="sig"),),
    ),
    ToolResult(call_id="c1", name="weather", content="18C"),
    ToolResult(call_id="c2", name="weather", content="Error: timeout", is_error=True),
    AssistantMessage(text="Paris 18C; Rome unknown."),
]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_openai_chat_shape() -> None:
    wire = to_openai_chat(CONVERSATION)
    assert wire[0] == {"role": "system", "content": "Be brief."}
    assert wire[2] == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Rome"}'},
            },
        ],
    }
    assert wire[3] == {"role": "tool", "tool_call_id": "c1", "content": "18C"}
    assert wire[4] == {"role": "tool", "tool_call_id": "c2", "content": "Error: timeout"}
    assert to_openai_chat(CONVERSATION, include_reasoning=True)[2]["reasoning_content"] == (
        "two calls"
    )
    calls_only = to_openai_chat([AssistantMessage(tool_calls=CONVERSATION[2].tool_calls)])  # type: ignore[union-attr]
    assert calls_only[0]["content"] is None


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_openai_responses_shape() -> None:
    wire = to_openai_responses(CONVERSATION)
    kinds = [item["type"] for item in wire]
    assert kinds == [
        "message",
        "message",
        "reasoning",
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
        "message",
    ]
    assert wire[4] == {
        "type": "function_call",
        "call_id": "c1",
        "name": "weather",
        "arguments": '{"city": "Paris"}',
    }
    assert wire[7] == {"type": "function_call_output", "call_id": "c2", "output": "Error: timeout"}
    assert wire[2]["encrypted_content"] == "sig"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_anthropic_shape() -> None:
    system, wire = to_anthropic(CONVERSATION)
    assert system == "Be brief."
    assert wire[1]["content"] == [
        {"type": "thinking", "thinking": "two calls", "signature": "sig"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "c2", "name": "weather", "input": {"city": "Rome"}},
    ]
    assert wire[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "18C"},
            {
                "type": "tool_result",
                "tool_use_id": "c2",
                "content": "Error: timeout",
                "is_error": True,
            },
        ],
    }
    # Unsigned reasoning is not sent (Anthropic refuses it).
    _, unsigned = to_anthropic([AssistantMessage(text="x", reasoning=(Reasoning(text="r"),))])
    assert unsigned[0]["content"] == [{"type": "text", "text": "x"}]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_gemini_shape_and_pairing_by_position() -> None:
    contents: list[dict[str, Any]] = [
        {"role": "user", "parts": [{"text": "Weather?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "thinking", "thought": True},
                {
                    "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                    "thoughtSignature": "s1",
                },
                {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "weather", "response": {"output": "18C"}}},
                {"functionResponse": {"name": "weather", "response": {"error": "timeout"}}},
            ],
        },
    ]
    messages = from_gemini(contents, {"parts": [{"text": "Be brief."}]})
    assert messages[0] == SystemMessage("Be brief.")
    assistant = messages[2]
    assert isinstance(assistant, AssistantMessage)
    first, second = assistant.tool_calls
    assert first.id == f"{GENERATED_ID_PREFIX}0"
    assert first.signature == "s1"
    assert second.id == f"{GENERATED_ID_PREFIX}1"
    assert messages[3:] == [
        ToolResult(call_id=first.id, name="weather", content="18C"),
        ToolResult(call_id=second.id, name="weather", content="timeout", is_error=True),
    ]
    instruction, back = to_gemini(messages)
    assert instruction == {"parts": [{"text": "Be brief."}]}
    assert back == contents  # generated ids are left out again, signatures kept


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_gemini_ids_and_snake_case() -> None:
    contents = [
        {
            "role": "model",
            "parts": [
                {"function_call": {"id": "g1", "name": "f", "args": {}}, "thought_signature": "s"}
            ],
        },
        {
            "role": "user",
            "parts": [{"function_response": {"id": "g1", "name": "f", "response": {"x": 1}}}],
        },
    ]
    messages = from_gemini(contents)
    assert messages == [
        AssistantMessage(tool_calls=(FunctionCall(id="g1", name="f", signature="s"),)),
        ToolResult(call_id="g1", name="f", content='{"x": 1}'),
    ]
    _, back = to_gemini(messages)
    assert back[0]["parts"][0]["functionCall"]["id"] == "g1"
    assert back[1]["parts"][0]["functionResponse"]["response"] == {"output": '{"x": 1}'}


# -- reading other shapes ---------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_readers_accept_content_parts_and_developer_role() -> None:
    messages = from_openai_chat(
        [
            {"role": "developer", "content": [{"type": "text", "text": "Rules."}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {"role": "assistant", "content": "x", "reasoning": "because"},
        ]
    )
    assert messages == [
        SystemMessage("Rules."),
        UserMessage("ab"),
        AssistantMessage(text="x", reasoning=(Reasoning(text="because"),)),
    ]
    anthropic = from_anthropic(
        [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        [{"type": "text", "text": "sys"}],
    )
    assert anthropic == [SystemMessage("sys"), UserMessage("hi")]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_readers_refuse_invalid_json_arguments_and_unknown_roles() -> None:
    bad_call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}
        ],
    }
    with pytest.raises(ValueError, match="not valid JSON"):
        from_openai_chat([bad_call])
    with pytest.raises(ValueError, match="not a JSON object"):
        from_openai_responses(
            [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "[]"}]
        )
    with pytest.raises(ValueError, match="unknown role"):
        from_openai_chat([{"role": "robot", "content": ""}])
    with pytest.raises(TypeError, match="not a message"):
        to_openai_chat(["hello"])  # type: ignore[list-item]


# -- helpers ----------------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_tool_result_and_tool_error_helpers() -> None:
    call = ToolCall(index=0, id="c1", name="f", arguments="{}", parsed_arguments={})
    assert tool_result(call, {"a": [1, "é"]}) == ToolResult(
        call_id="c1", name="f", content='{"a": [1, "é"]}'
    )
    assert tool_result(FunctionCall(id="c2", name="g"), "plain").content == "plain"
    error = tool_error(call, "it broke; retry with a smaller range")
    assert error.is_error
    assert error.content == "Error: it broke; retry with a smaller range"
    assert tool_error(call, "Error [x]: already prefixed").content == "Error [x]: already prefixed"
    discarded = CallDiscarded(
        index=0,
        id="c3",
        name="f",
        arguments="{,",
        error=MalformedArguments(
            "m", offset=1, line=1, column=2, snippet="{,\n ^", expected="a key"
        ),
    )
    assert tool_error(discarded, "bad").call_id == "c3"
    # An error result without the prefix still reads as an error on the OpenAI wire.
    bare = ToolResult(call_id="c", name="f", content="nope", is_error=True)
    assert to_openai_chat([bare])[0]["content"] == "Error: nope"
    assert to_openai_responses([bare])[0]["output"] == "Error: nope"


# -- the public surface -----------------------------------------------------------------------

PUBLIC = {
    "ERROR_PREFIX": None,
    "AssistantMessage": "(*, text: 'str' = '', tool_calls: 'tuple[FunctionCall, ...]' = (), "
    "reasoning: 'tuple[Reasoning, ...]' = (), signature: 'str | None' = None, "
    "parts: 'tuple[AssistantPart, ...]' = ()) -> None",
    "AssistantPart": None,
    "FunctionCall": "(*, id: 'str', name: 'str', arguments: 'dict[str, Any]' = <factory>, "
    "signature: 'str | None' = None, caller: 'Mapping[str, Any] | None' = None) -> None",
    "Message": None,
    "Reasoning": "(*, text: 'str' = '', signature: 'str | None' = None, id: 'str | None' = None, "
    "redacted: 'bool' = False, summary: 'tuple[str, ...]' = ()) -> None",
    "SystemMessage": "(text: 'str') -> None",
    "TextPart": "(*, text: 'str', signature: 'str | None' = None) -> None",
    "ToolResult": "(*, call_id: 'str', name: 'str', content: 'str', is_error: 'bool' = False) "
    "-> None",
    "UserMessage": "(text: 'str') -> None",
    "custom_call_item": "(call: 'CustomToolCall') -> 'dict[str, Any]'",
    "custom_call_output": "(call_id: 'str', output: 'str') -> 'dict[str, Any]'",
    "from_anthropic": "(messages: 'Iterable[Mapping[str, Any]]', "
    "system: 'str | Sequence[Mapping[str, Any]] | None' = None) -> 'list[Message]'",
    "from_bedrock": "(system: 'Sequence[Mapping[str, Any]] | str | None', "
    "messages: 'Iterable[Mapping[str, Any]]') -> 'list[Message]'",
    "from_gemini": "(contents: 'Iterable[Mapping[str, Any]]', "
    "system_instruction: 'Mapping[str, Any] | str | None' = None) -> 'list[Message]'",
    "from_gemini_interactions": "(steps: 'Iterable[Mapping[str, Any]]', "
    "system_instruction: 'str | None' = None) -> 'list[Message]'",
    "from_ollama": "(messages: 'Iterable[Mapping[str, Any]]') -> 'list[Message]'",
    "from_openai_chat": "(messages: 'Iterable[Mapping[str, Any]]') -> 'list[Message]'",
    "from_openai_responses": "(items: 'Iterable[Mapping[str, Any]]') -> 'list[Message]'",
    "to_anthropic": "(messages: 'Iterable[Message]') -> 'tuple[str | None, list[dict[str, Any]]]'",
    "to_bedrock": "(messages: 'Iterable[Message]', *, binary: 'bool' = False, "
    "tool_result_status: 'bool' = True) -> 'tuple[list[dict[str, Any]], list[dict[str, Any]]]'",
    "to_gemini": "(messages: 'Iterable[Message]') "
    "-> 'tuple[dict[str, Any] | None, list[dict[str, Any]]]'",
    "to_gemini_interactions": "(messages: 'Iterable[Message]') "
    "-> 'tuple[str | None, list[dict[str, Any]]]'",
    "to_ollama": "(messages: 'Iterable[Message]') -> 'list[dict[str, Any]]'",
    "to_openai_chat": "(messages: 'Iterable[Message]', *, include_reasoning: 'bool' = False) "
    "-> 'list[dict[str, Any]]'",
    "to_openai_responses": "(messages: 'Iterable[Message]') -> 'list[dict[str, Any]]'",
    "tool_error": "(call: '_CallLike', message: 'str') -> 'ToolResult'",
    "tool_result": "(call: '_CallLike', content: 'object') -> 'ToolResult'",
}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_package_exports_exactly_its_all_with_the_same_signatures() -> None:
    """``toolstitch.messages`` is a package of one module per wire form; what it exports, and
    how each name is called, is what the single module exported."""
    assert messages_package.__all__ == list(PUBLIC)
    reachable = {
        name
        for name, value in vars(messages_package).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"
    }
    assert reachable == set(PUBLIC)
    for name, signature in PUBLIC.items():
        if signature is not None:
            assert str(inspect.signature(getattr(messages_package, name))) == signature, name
    assert messages_package.ERROR_PREFIX == "Error: "
    assert typing.get_args(Message) == (SystemMessage, UserMessage, AssistantMessage, ToolResult)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_custom_tool_call_goes_back_as_its_item_and_output() -> None:
    call = CustomToolCall(index=1, id="ctc_1", call_id="call_C", name="apply_patch", input="*** x")
    assert custom_call_item(call) == {
        "type": "custom_tool_call",
        "call_id": "call_C",
        "name": "apply_patch",
        "input": "*** x",
        "id": "ctc_1",
    }
    assert custom_call_output("call_C", "done") == {
        "type": "custom_tool_call_output",
        "call_id": "call_C",
        "output": "done",
    }
