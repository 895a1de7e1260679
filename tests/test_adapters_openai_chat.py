"""The OpenAI Chat Completions adapter: chunk shapes, errors, and the ``openai`` SDK's objects."""

from __future__ import annotations

from typing import Any

import pytest

from driven import Driven
from fixtures.expected import fixture_names, load, normalize, payloads
from toolstitch.adapters import OpenAIChatAdapter, detect
from toolstitch.stitch.stitcher import stitch
from toolstitch.vocab.call_events import CallReady
from toolstitch.vocab.errors import ProviderError
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    StreamFailed,
    TextDelta,
    Usage,
)


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_detected_from_choices_or_object() -> None:
    assert detect({"choices": []}) == "openai-chat"
    assert detect({"object": "chat.completion.chunk"}) == "openai-chat"
    assert detect({"error": {"message": "x"}}) is None


def test_text_reasoning_finish_and_usage() -> None:
    adapter = Driven(OpenAIChatAdapter)
    events = adapter.feed(chunk({"role": "assistant", "content": "Hi", "reasoning_content": "R"}))
    events += adapter.feed(chunk({"reasoning": "S"}))  # OpenRouter / Groq spelling
    events += adapter.feed(chunk({}, "stop"))
    events += adapter.feed(
        {"object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 3}}
    )
    assert events == [
        ReasoningDelta(text="R"),
        ReasoningBlock(text="R", kind="reasoning_content"),  # ended by the text after it
        TextDelta(text="Hi"),
        ReasoningDelta(text="S"),
        ReasoningBlock(text="S", kind="reasoning"),  # ended by the finish
        FinishReason(reason="stop"),
        Usage(usage={"total_tokens": 3}),
    ]
    assert adapter.close() == []


def test_error_object_in_place_of_a_chunk() -> None:
    adapter = Driven(OpenAIChatAdapter)
    (event,) = adapter.feed({"error": {"message": "boom", "type": "server_error", "code": None}})
    assert isinstance(event, StreamFailed)
    assert isinstance(event.error, ProviderError)
    assert event.error.kind == "server_error"
    assert "boom" in event.error.message
    (event,) = adapter.feed({"message": "bare"}, event="error")
    assert isinstance(event, StreamFailed)
    assert adapter.feed({"error": None, "choices": []}) == []


def test_whole_message_instead_of_delta() -> None:
    adapter = Driven(OpenAIChatAdapter)
    events = adapter.feed(
        {
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c",
                                "type": "function",
                                "function": {"name": "f", "arguments": "{}"},
                            }
                        ]
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    assert [e.call.name for e in events if isinstance(e, CallReady)] == ["f"]


def test_other_choices_are_ignored() -> None:
    adapter = Driven(OpenAIChatAdapter, choice=1)
    assert adapter.feed(chunk({"content": "zero"})) == []


OPENAI_FIXTURES = fixture_names("openai-chat")


@pytest.mark.parametrize("name", OPENAI_FIXTURES)
def test_sdk_chunk_objects(name: str) -> None:
    openai_models = pytest.importorskip("openai._models")
    chat_types = pytest.importorskip("openai.types.chat")
    body, expected = load(name)
    objects = []
    for payload in payloads(body):
        if "choices" in payload:
            objects.append(
                openai_models.construct_type(type_=chat_types.ChatCompletionChunk, value=payload)
            )
        else:
            objects.append(payload)  # an error object: the SDK raises instead of yielding one
    assert normalize(stitch(objects).result) == expected


def test_sdk_objects_keep_null_apart_from_absent() -> None:
    openai_models = pytest.importorskip("openai._models")
    chat_types = pytest.importorskip("openai.types.chat")
    body, _ = load("openai-chat/null-arguments-and-function")
    objects = [
        openai_models.construct_type(type_=chat_types.ChatCompletionChunk, value=p)
        for p in payloads(body)
    ]
    codes = {w.error.code for w in stitch(objects).result.warnings}
    assert "quirk-arguments-null" in codes
    # and a plain SDK stream with absent fields raises no null warnings
    body, _ = load("openai-chat/parallel-calls")
    objects = [
        openai_models.construct_type(type_=chat_types.ChatCompletionChunk, value=p)
        for p in payloads(body)
    ]
    assert stitch(objects).result.warnings == ()
