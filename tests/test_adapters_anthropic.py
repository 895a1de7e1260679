"""The Anthropic Messages adapter: blocks, explicit ends, server tools, errors, SDK objects."""

from __future__ import annotations

import pytest

from driven import Driven
from fixtures.expected import fixture_names, load, normalize, payloads
from toolstitch.adapters import AnthropicAdapter, detect
from toolstitch.stitch.stitcher import stitch
from toolstitch.vocab.call_events import CallDiscarded, CallReady
from toolstitch.vocab.errors import ProviderError
from toolstitch.vocab.stream_events import ServerToolCall, StreamFailed


def start(index: int, kind: str = "tool_use", name: str = "f") -> dict[str, object]:
    return {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": kind, "id": f"toolu_{index}", "name": name, "input": {}},
    }


def part(index: int, text: str) -> dict[str, object]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": text},
    }


def stop(index: int) -> dict[str, object]:
    return {"type": "content_block_stop", "index": index}


def test_detected_from_message_events() -> None:
    assert detect({"type": "message_start"}) == "anthropic"
    assert detect({}, "content_block_delta") == "anthropic"


def test_block_stop_is_an_explicit_end() -> None:
    adapter = Driven(AnthropicAdapter)
    adapter.feed(start(1))
    adapter.feed(part(1, '{"a": '))
    events = adapter.feed(stop(1))
    (discarded,) = [e for e in events if isinstance(e, CallDiscarded)]
    assert discarded.error.code == "truncated-arguments"
    assert adapter.close() == []


def test_no_argument_tool_gets_its_start_input() -> None:
    adapter = Driven(AnthropicAdapter)
    adapter.feed(start(0))
    adapter.feed(part(0, ""))
    events = adapter.feed(stop(0))
    assert [e.call.arguments for e in events if isinstance(e, CallReady)] == ["{}"]


def test_server_tool_is_never_a_call() -> None:
    adapter = Driven(AnthropicAdapter)
    events = adapter.feed(start(0, "server_tool_use", "web_search"))
    events += adapter.feed(part(0, '{"query": "x"}'))
    assert events == []
    (event,) = adapter.feed(stop(0))
    assert isinstance(event, ServerToolCall)
    assert (event.name, event.type, event.parsed_arguments) == (
        "web_search",
        "server_tool_use",
        {"query": "x"},
    )
    assert adapter.assembler.calls == ()


def test_server_tool_cut_off_is_reported_with_its_error() -> None:
    adapter = Driven(AnthropicAdapter)
    adapter.feed(start(0, "mcp_tool_use", "lookup"))
    adapter.feed(part(0, '{"q": '))
    (event,) = adapter.close()
    assert isinstance(event, ServerToolCall)
    assert event.error is not None
    assert event.error.code == "truncated-arguments"
    assert event.parsed_arguments is None


def test_error_event() -> None:
    adapter = Driven(AnthropicAdapter)
    (event,) = adapter.feed(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    assert isinstance(event, StreamFailed)
    assert isinstance(event.error, ProviderError)
    assert event.error.kind == "overloaded_error"


@pytest.mark.parametrize("name", fixture_names("anthropic"))
def test_sdk_event_objects(name: str) -> None:
    models = pytest.importorskip("anthropic._models")
    types = pytest.importorskip("anthropic.types")
    body, expected = load(name)
    objects = []
    for payload in payloads(body):
        if payload.get("type") == "error":
            objects.append(payload)  # the SDK raises for error events instead
        else:
            objects.append(models.construct_type(type_=types.RawMessageStreamEvent, value=payload))
    assert normalize(stitch(objects).result) == expected


def test_adapter_takes_sdk_objects_directly() -> None:
    types = pytest.importorskip("anthropic.types")
    adapter = Driven(AnthropicAdapter)
    events = adapter.feed(types.RawContentBlockStartEvent.model_validate(start(0)))
    events += adapter.feed(types.RawContentBlockDeltaEvent.model_validate(part(0, '{"a": 1}')))
    events += adapter.feed(types.RawContentBlockStopEvent.model_validate(stop(0)))
    assert [e.call.arguments for e in events if isinstance(e, CallReady)] == ['{"a": 1}']
    with pytest.raises(TypeError, match="anthropic event"):
        adapter.feed(42)
