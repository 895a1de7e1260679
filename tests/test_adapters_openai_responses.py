"""The OpenAI Responses adapter: keyed by output_index, .done checked, SDK event objects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from driven import Driven
from fixtures.expected import fixture_names, load, normalize, payloads
from toolstitch.adapters import OpenAIResponsesAdapter, detect
from toolstitch.adapters.openai_responses import IGNORED
from toolstitch.stitch.stitcher import StitchResult, stitch
from toolstitch.vocab.call_events import CallReady, CallWarning
from toolstitch.vocab.stream_events import (
    CustomToolCall,
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    StreamFailed,
    StreamWarning,
    TextDelta,
)


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


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
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


# -- reasoning items ---------------------------------------------------------------------------


def test_finished_reasoning_item_is_a_reasoning_block_as_sent() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    reasoning = {
        "id": "rs_7",
        "type": "reasoning",
        "summary": [
            {"type": "summary_text", "text": "**One** "},
            {"type": "summary_text", "text": "two\u00e9"},
        ],
        "content": [
            {"type": "reasoning_text", "text": "a"},
            {"type": "reasoning_text", "text": "b"},
        ],
        "encrypted_content": "gAAA+/==",
    }
    events = adapter.feed(
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning}
    )
    # The same item again in response.completed is not a second block.
    events += adapter.feed(
        {"type": "response.completed", "response": {"status": "completed", "output": [reasoning]}}
    )
    assert [e for e in events if isinstance(e, ReasoningBlock)] == [
        ReasoningBlock(
            id="rs_7",
            summary=("**One** ", "two\u00e9"),
            text="ab",
            signature="gAAA+/==",
            kind="reasoning",
        )
    ]


def test_reasoning_item_without_encrypted_content_has_no_signature() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    (block,) = adapter.feed(
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {"id": "rs_8", "type": "reasoning", "summary": [], "content": []},
        }
    )
    assert block == ReasoningBlock(id="rs_8", kind="reasoning")


# -- custom tool calls -------------------------------------------------------------------------

CUSTOM_FIXTURE = "openai-responses/reasoning-then-custom-tool-call"
PATCH = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch"


def _custom_calls(feed: object) -> tuple[tuple[CustomToolCall, ...], StitchResult]:
    result = stitch(feed).result
    return result.custom_calls, result


def test_custom_tool_call_is_reported_once_in_any_chunking() -> None:
    body, _ = load(CUSTOM_FIXTURE)
    expected = (
        CustomToolCall(index=1, id="ctc_1", call_id="call_C1", name="apply_patch", input=PATCH),
    )
    for feed in (
        body,
        body.splitlines(keepends=True),
        [body[i : i + 1] for i in range(len(body))],
        payloads(body),
    ):
        custom, result = _custom_calls(feed)
        assert custom == expected
        assert result.calls == ()  # never passed off as JSON
        assert result.discarded == ()
        assert result.warnings == ()  # every event of the fixture is known


def test_custom_tool_call_from_deltas_when_no_final_text_comes() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    adapter.feed(
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"id": "ctc_2", "type": "custom_tool_call", "call_id": "c", "name": "sh"},
        }
    )
    for piece in ("ls ", "-la"):
        adapter.feed(
            {"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": piece}
        )
    (event,) = adapter.feed(
        {"type": "response.custom_tool_call_input.done", "output_index": 0, "item_id": "ctc_2"}
    )
    assert event == CustomToolCall(index=0, id="ctc_2", call_id="c", name="sh", input="ls -la")
    assert adapter.close() == []


def test_custom_tool_call_only_in_completed_is_reported() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    item_ = {"id": "ctc_3", "type": "custom_tool_call", "call_id": "c3", "name": "sh", "input": "x"}
    events = adapter.feed(
        {"type": "response.completed", "response": {"status": "completed", "output": [item_]}}
    )
    assert [e for e in events if isinstance(e, CustomToolCall)] == [
        CustomToolCall(index=0, id="ctc_3", call_id="c3", name="sh", input="x")
    ]


def test_unfinished_custom_tool_call_leaves_a_warning() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    adapter.feed(
        {
            "type": "response.custom_tool_call_input.delta",
            "output_index": 2,
            "item_id": "ctc_4",
            "delta": "partial",
        }
    )
    (warning,) = adapter.close()
    assert isinstance(warning, StreamWarning)
    assert warning.error.code == "quirk-custom-call-unfinished"
    assert "7 characters" in warning.error.message


# -- events outside the protocol ---------------------------------------------------------------


def test_unknown_response_event_leaves_a_stream_warning_once() -> None:
    adapter = Driven(OpenAIResponsesAdapter)
    events = adapter.feed({"type": "response.hologram.delta", "delta": "x"})
    events += adapter.feed({"type": "response.hologram.delta", "delta": "y"})
    events += adapter.feed({"type": "response.web_search_call.searching", "output_index": 0})
    assert [(type(e), e.error.code) for e in events if isinstance(e, StreamWarning)] == [
        (StreamWarning, "quirk-unknown-event")
    ]
    assert "response.hologram.delta" in events[0].error.message  # type: ignore[attr-defined]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_ignored_event_types_are_documented() -> None:
    page = (Path(__file__).parents[1] / "docs" / "providers" / "openai-responses.md").read_text()
    missing = [kind for kind in sorted(IGNORED) if f"`{kind}`" not in page]
    assert missing == []


# -- xAI's named server calls ---------------------------------------------------------------


def _event(kind: str, **data: Any) -> bytes:
    data["type"] = kind
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


_XAI_SEARCH = {
    "type": "web_search_call",
    "id": "ws_1",
    "call_id": "ws_1",
    "name": "web_search",
    "arguments": '{"query":"toolstitch"}',
    "status": "completed",
}


@pytest.mark.parametrize("announced", [True, False])
def test_an_xai_named_web_search_call_is_a_server_call(announced: bool) -> None:
    # xAI's built-in tool items carry a name and JSON arguments (OpenAI's carry an action):
    # reported once as a ServerToolCall, never dispatched.
    body = _event("response.created", response={"id": "r", "status": "in_progress"})
    if announced:
        added = dict(_XAI_SEARCH, status="in_progress")
        body += _event("response.output_item.added", output_index=0, item=added)
        body += _event("response.output_item.done", output_index=0, item=_XAI_SEARCH)
    else:  # only announced, already finished
        body += _event("response.output_item.added", output_index=0, item=_XAI_SEARCH)
    body += _event("response.output_item.done", output_index=0, item=_XAI_SEARCH)  # a repeat
    body += _event("response.output_text.delta", output_index=1, content_index=0, delta="Found.")
    body += _event("response.completed", response={"id": "r", "status": "completed"})
    for chunks in ([body], [body[i : i + 7] for i in range(0, len(body), 7)]):
        result = stitch(chunks).result
        (server,) = result.server_calls
        assert (server.index, server.id, server.name, server.type) == (
            0,
            "ws_1",
            "web_search",
            "web_search_call",
        )
        assert server.parsed_arguments == {"query": "toolstitch"}
        assert result.calls == ()
        assert result.text == "Found."
        assert result.warnings == ()


def test_an_openai_web_search_call_is_progress_only() -> None:
    item = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {}}
    body = _event("response.output_item.done", output_index=0, item=item)
    body += _event("response.completed", response={"id": "r", "status": "completed"})
    assert stitch(body).result.server_calls == ()
