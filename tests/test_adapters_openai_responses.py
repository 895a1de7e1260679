"""The OpenAI Responses adapter: keyed by output_index, .done checked, SDK event objects."""

from __future__ import annotations

from typing import Any

import pytest

from driven import Driven
from fixtures.expected import fixture_names, load, normalize, payloads
from toolstitch.adapters import OpenAIResponsesAdapter, detect
from toolstitch.stitch.stitcher import stitch
from toolstitch.vocab.call_events import CallReady, CallWarning
from toolstitch.vocab.stream_events import FinishReason, ReasoningDelta, StreamFailed, TextDelta


def item(call_id: str = "call_1", arguments: str = "", index: int = 0) -> dict[str, Any]:
    return {
        "type": "response.output_item.added",
        "output_index": index,
        "item": {
            "id": f"fc_{index}",
            "type": "function_call",
            "call_id": call_id,
            "name": "f",
            "arguments": arguments,
        },
    }


def delta(text: str, index: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.delta",
        "output_index": index,
        "item_id": f"fc_{index}",
        "delta": text,
        **extra,
    }


def done(text: str, index: int = 0) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.done",
        "output_index": index,
        "item_id": f"fc_{index}",
        "arguments": text,
    }


def test_detected_from_response_events() -> None:
    assert detect({"type": "response.created"}) == "openai-responses"


def test_done_ends_the_call() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    adapter.feed(item())
    # an empty object that the deltas do not close: .done is the explicit end
    events = adapter.feed(delta("{"))
    events += adapter.feed(done("{"))
    assert [
        e.error.code for e in events if not isinstance(e, CallWarning) and hasattr(e, "error")
    ] == ["truncated-arguments"]


def test_done_without_deltas_yields_the_call() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    adapter.feed(item())
    events = adapter.feed(done('{"a": 1}'))
    ready = [e.call for e in events if isinstance(e, CallReady)]
    assert [(c.id, c.arguments) for c in ready] == [("call_1", '{"a": 1}')]
    assert [e.error.code for e in events if isinstance(e, CallWarning)] == [
        "quirk-no-argument-deltas"
    ]


def test_done_with_the_same_text_is_silent() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    adapter.feed(item())
    events = (
        adapter.feed(delta('{"a":')) + adapter.feed(delta(" 1}")) + adapter.feed(done('{"a": 1}'))
    )
    assert not [e for e in events if isinstance(e, CallWarning)]
    finished = {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {
            "id": "fc_0",
            "type": "function_call",
            "call_id": "call_1",
            "name": "f",
            "arguments": '{"a": 1}',
        },
    }
    assert adapter.feed(finished) == []


def test_delta_found_by_item_id_when_output_index_is_missing() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    adapter.feed(item())
    events = adapter.feed(
        {"type": "response.function_call_arguments.delta", "item_id": "fc_0", "delta": "{}"}
    )
    assert [e.call.arguments for e in events if isinstance(e, CallReady)] == ["{}"]


def test_text_reasoning_and_text_done_without_deltas() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    events = adapter.feed({"type": "response.reasoning_text.delta", "delta": "think"})
    events += adapter.feed(
        {
            "type": "response.output_text.done",
            "output_index": 1,
            "content_index": 0,
            "text": "Hello",
        }
    )
    assert events == [ReasoningDelta(text="think"), TextDelta(text="Hello")]


def test_failed_response_is_a_stream_error() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    events = adapter.feed(
        {
            "type": "response.failed",
            "response": {
                "status": "failed",
                "error": {"code": "server_error", "message": "oops"},
                "output": [],
            },
        }
    )
    assert events[0] == FinishReason(reason="failed")
    assert isinstance(events[1], StreamFailed)
    assert events[1].error.message.endswith("oops")


@pytest.mark.parametrize("name", fixture_names("openai-responses"))
def test_sdk_event_objects(name: str) -> None:
    openai_models = pytest.importorskip("openai._models")
    responses = pytest.importorskip("openai.types.responses")
    body, expected = load(name)
    objects = [
        openai_models.construct_type(type_=responses.ResponseStreamEvent, value=p)
        for p in payloads(body)
    ]
    assert normalize(stitch(objects).result) == expected
