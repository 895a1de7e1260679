"""toolstitch.messages for Bedrock Converse: round trips, the wire shapes, and a stream's
assistant turn written back as the next request wants it."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import per_pass
from test_messages import CONVERSATION, arguments, ids, ok_content, texts
from toolstitch.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    Reasoning,
    SystemMessage,
    ToolResult,
    UserMessage,
    from_bedrock,
    to_bedrock,
)
from toolstitch.stitch.stitcher import Stitcher
from toolstitch.testing._eventstream import bedrock_body
from toolstitch.vocab.stream_events import ReasoningBlock

reasoning = st.builds(Reasoning, text=texts, signature=texts) | st.builds(
    Reasoning,
    signature=st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode()),
    redacted=st.just(True),
)


@st.composite
def conversations(draw: Callable[..., Any]) -> list[Message]:
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(SystemMessage(draw(texts.filter(bool))))
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 3))):
        out.append(UserMessage(draw(texts)))
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            call_id = draw(ids.filter(lambda i: i not in used))
            used.add(call_id)
            calls.append(FunctionCall(id=call_id, name=draw(ids), arguments=draw(arguments)))
        message = AssistantMessage(
            text=draw(texts),
            tool_calls=tuple(calls),
            reasoning=tuple(draw(st.lists(reasoning, max_size=2))),
        )
        if not (message.text or message.tool_calls or message.reasoning):
            message = AssistantMessage(text="answer")
        out.append(message)
        for call in calls:
            is_error = draw(st.booleans())
            content = "Error: " + draw(texts) if is_error else draw(ok_content)
            out.append(
                ToolResult(call_id=call.id, name=call.name, content=content, is_error=is_error)
            )
    return out


def round_trip(messages: list[Message], **options: bool) -> list[Message]:
    system, wire = to_bedrock(messages, **options)
    if not options.get("binary"):
        system, wire = json.loads(json.dumps([system, wire]))
    return from_bedrock(system, wire)


# (Not kept: a property that ``round_trip(round_trip(m)) == round_trip(m)`` on the same
# conversations. Both sides are neutral messages, so it holds wherever this one holds.)
# Same code on either path (no assembler, no C): half the examples on each pass.
@per_pass(50, settings(deadline=None))
@given(conversations())
def test_neutral_round_trips(messages: list[Message]) -> None:
    assert round_trip(messages) == messages
    assert round_trip(messages, binary=True) == messages
    assert round_trip(messages, tool_result_status=False) == messages


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_bedrock_shape() -> None:
    system, wire = to_bedrock(CONVERSATION)
    assert system == [{"text": "Be brief."}]
    assert wire[0] == {"role": "user", "content": [{"text": "Weather in Paris and Rome?"}]}
    assert wire[1] == {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": "two calls", "signature": "sig"}}},
            {"text": "Checking."},
            {"toolUse": {"toolUseId": "c1", "name": "weather", "input": {"city": "Paris"}}},
            {"toolUse": {"toolUseId": "c2", "name": "weather", "input": {"city": "Rome"}}},
        ],
    }
    assert wire[2] == {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "c1", "content": [{"text": "18C"}], "status": "success"}},
            {
                "toolResult": {
                    "toolUseId": "c2",
                    "content": [{"text": "Error: timeout"}],
                    "status": "error",
                }
            },
        ],
    }
    # Unsigned reasoning is not sent (Claude refuses it).
    _, unsigned = to_bedrock([AssistantMessage(text="x", reasoning=(Reasoning(text="r"),))])
    assert unsigned[0]["content"] == [{"text": "x"}]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_redacted_content_as_base64_text_or_bytes() -> None:
    message = AssistantMessage(reasoning=(Reasoning(signature="QUJD", redacted=True),))
    _, text = to_bedrock([message])
    _, raw = to_bedrock([message], binary=True)
    assert text[0]["content"] == [{"reasoningContent": {"redactedContent": "QUJD"}}]
    assert raw[0]["content"] == [{"reasoningContent": {"redactedContent": b"ABC"}}]
    assert from_bedrock(None, raw) == from_bedrock(None, text) == [message]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_results_without_status_say_error_in_their_content() -> None:
    bare = ToolResult(call_id="c", name="f", content="nope", is_error=True)
    _, wire = to_bedrock([bare], tool_result_status=False)
    assert wire[0]["content"] == [
        {"toolResult": {"toolUseId": "c", "content": [{"text": "Error: nope"}]}}
    ]
    assert from_bedrock(None, wire)[0] == ToolResult(
        call_id="c", name="", content="Error: nope", is_error=True
    )


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_reading_json_result_blocks_and_text_system() -> None:
    wire = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": {"a": 1}}}],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t", "content": [{"json": {"x": 1}}, {"text": "!"}]}}
            ],
        },
    ]
    assert from_bedrock("Be brief.", wire) == [
        SystemMessage("Be brief."),
        AssistantMessage(tool_calls=(FunctionCall(id="t", name="f", arguments={"a": 1}),)),
        ToolResult(call_id="t", name="f", content='{"x": 1}!'),
    ]


def test_a_streamed_turn_goes_back_with_its_signature() -> None:
    """A Claude-on-Bedrock turn (signed reasoning, then a call) read from the wire, written as
    the next request's assistant message."""
    body = bedrock_body(
        [
            {"messageStart": {"role": "assistant"}},
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 0,
                    "delta": {"reasoningContent": {"text": "Need the weather."}},
                }
            },
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 0,
                    "delta": {"reasoningContent": {"signature": "c2lnbmVk"}},
                }
            },
            {"contentBlockStop": {"contentBlockIndex": 0}},
            {
                "contentBlockStart": {
                    "contentBlockIndex": 1,
                    "start": {"toolUse": {"toolUseId": "tooluse_x", "name": "weather"}},
                }
            },
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 1,
                    "delta": {"toolUse": {"input": '{"city": "Paris"}'}},
                }
            },
            {"contentBlockStop": {"contentBlockIndex": 1}},
            {"messageStop": {"stopReason": "tool_use"}},
        ]
    )
    stitcher = Stitcher()
    events = stitcher.feed(body) + stitcher.close()
    (block,) = [e for e in events if isinstance(e, ReasoningBlock)]
    (call,) = stitcher.result.calls
    turn = AssistantMessage(
        tool_calls=(FunctionCall(id=call.id, name=call.name, arguments=call.parsed_arguments),),
        reasoning=(Reasoning(text=block.text, signature=block.signature),),
    )
    _, wire = to_bedrock([turn])
    assert wire == [
        {
            "role": "assistant",
            "content": [
                {
                    "reasoningContent": {
                        "reasoningText": {"text": "Need the weather.", "signature": "c2lnbmVk"}
                    }
                },
                {
                    "toolUse": {
                        "toolUseId": "tooluse_x",
                        "name": "weather",
                        "input": {"city": "Paris"},
                    }
                },
            ],
        }
    ]
