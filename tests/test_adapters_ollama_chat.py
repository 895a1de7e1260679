"""The Ollama /api/chat adapter: whole calls, ids and indices, thinking, done, usage, errors,
the corpus body, and the ``ollama`` SDK's ``ChatResponse`` objects."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import formats_next
from driven import Driven, assert_every_call_ends_once
from fixtures.build import OLLAMA_DONE, ocall
from fixtures.expected import fixture_names, load, normalize, payloads
from strategies import loose_values
from toolstitch.adapters import OllamaChatAdapter, detect
from toolstitch.stitch.stitcher import stitch
from toolstitch.vocab.call_events import CallReady, CallWarning, Event
from toolstitch.vocab.errors import ProviderError
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    StreamFailed,
    TextDelta,
    Usage,
)

RECORDING = "ollama-chat-cloud-gpt-oss-single-object-tool-call.ndjson"


def line(message: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": "qwen3:8b",
        "created_at": "2026-01-05T10:00:00Z",
        "message": {"role": "assistant", "content": "", **(message or {})},
        "done": False,
    }
    out.update(top)
    return out


def run(*lines: dict[str, Any]) -> list[Event]:
    adapter = Driven(OllamaChatAdapter)
    events: list[Event] = []
    for payload in lines:
        events += adapter.feed(payload)
    return events + adapter.close()


def ready(events: list[Event]) -> list[tuple[int, str | None, str | None, str]]:
    return [
        (e.call.index, e.call.id, e.call.name, e.call.arguments)
        for e in events
        if isinstance(e, CallReady)
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_detected_from_the_shape_of_a_line() -> None:
    assert detect(line()) == "ollama-chat"
    partial = line()
    del partial["created_at"]
    assert detect(partial) is None
    assert detect({"model": "m", "created_at": "t", "response": "", "done": False}) is None


# -- the recording ----------------------------------------------------------------------------


def test_the_recording_gives_its_call_whole_and_byte_by_byte() -> None:
    item = formats_next.entry(RECORDING)
    body = formats_next.body(item)
    for source in (body, [body[i : i + 1] for i in range(len(body))], body.splitlines(True)):
        run_ = stitch(source)
        events = list(run_)
        result = run_.result
        assert result.provider == "ollama-chat"
        assert formats_next.calls_of(result) == formats_next.expected_calls(item)
        assert [c.arguments for c in result.calls] == [
            c["arguments_json"] for c in item["expected_tool_calls"]
        ]
        assert result.text == item["expected_text"]
        assert result.reasoning == (
            "User asks about weather in San Francisco. Use function getWeather."
        )
        assert [e.kind for e in events if isinstance(e, ReasoningBlock)] == ["thinking"]
        assert result.finish_reason == "stop"
        assert result.usage == {
            "prompt_eval_count": 145,
            "eval_count": 44,
            "total_duration": 603200867,
        }
        assert result.warnings == ()


def test_the_recording_through_replay_json() -> None:
    item = formats_next.entry(RECORDING)
    formats_next.check_replay(item, "ollama-chat")


# -- calls ------------------------------------------------------------------------------------


def test_whole_calls_without_ids_get_the_cores_ids_per_position() -> None:
    events = run(
        line({"tool_calls": [ocall("read", {"p": "a"}), ocall("read", {"p": "b"})]}),
        line({"tool_calls": [ocall("read", {"p": "c"})]}),
    )
    assert ready(events) == [
        (0, "toolstitch_call_0", "read", '{"p":"a"}'),
        (1, "toolstitch_call_1", "read", '{"p":"b"}'),
        (2, "toolstitch_call_2", "read", '{"p":"c"}'),
    ]


def test_arguments_are_compact_in_the_order_received_with_non_ascii_kept() -> None:
    events = run(line({"tool_calls": [ocall("f", {"z": "é", "a": [1, {"b": None}]})]}))
    assert ready(events) == [(0, "toolstitch_call_0", "f", '{"z":"é","a":[1,{"b":null}]}')]


def test_no_arguments_at_all_is_an_empty_object() -> None:
    assert ready(run(line({"tool_calls": [ocall("f", None)]}))) == [
        (0, "toolstitch_call_0", "f", "{}")
    ]


def test_function_index_is_the_call_index_when_it_can_be() -> None:
    events = run(
        line({"tool_calls": [ocall("f", {}, id="c1", index=1)]}),
        line({"tool_calls": [ocall("g", {}, id="c2", index=1)]}),
        line({"tool_calls": [ocall("h", {}, id="c3", index="2")]}),
        line({"tool_calls": [ocall("k", {}, id="c4")]}),
    )
    assert [(i, c) for i, c, _, _ in ready(events)] == [(1, "c1"), (2, "c2"), (3, "c3"), (4, "c4")]
    warned = [(e.index, e.error.code) for e in events if isinstance(e, CallWarning)]
    assert warned == [(2, "quirk-index-taken"), (3, "quirk-index-invalid")]


def test_arguments_sent_as_text_are_used_as_sent_with_a_warning() -> None:
    events = run(
        line(
            {
                "tool_calls": [
                    ocall("f", None) | {"function": {"name": "f", "arguments": '{"a": 1}'}}
                ]
            }
        )
    )
    assert ready(events) == [(0, "toolstitch_call_0", "f", '{"a": 1}')]
    assert [e.error.code for e in events if isinstance(e, CallWarning)] == [
        "quirk-arguments-as-text"
    ]


# -- text, thinking, the end ------------------------------------------------------------------


def test_thinking_is_reasoning_and_ends_as_a_block_before_text_or_calls() -> None:
    events = run(
        line({"thinking": "Let me "}),
        line({"thinking": "think."}),
        line({"content": "Done."}),
        line({"thinking": "More."}),
        line(done=True, done_reason="stop"),
    )
    shown = [e for e in events if isinstance(e, (ReasoningDelta, ReasoningBlock, TextDelta))]
    assert shown == [
        ReasoningDelta(text="Let me "),
        ReasoningDelta(text="think."),
        ReasoningBlock(text="Let me think.", kind="thinking"),
        TextDelta(text="Done."),
        ReasoningDelta(text="More."),
        ReasoningBlock(text="More.", kind="thinking"),
    ]


def test_done_gives_the_reason_and_the_counters_as_sent() -> None:
    events = run(line({"content": "Hi"}), line(**OLLAMA_DONE))
    assert [e for e in events if isinstance(e, FinishReason)] == [FinishReason(reason="stop")]
    assert [e.usage for e in events if isinstance(e, Usage)] == [
        {k: v for k, v in OLLAMA_DONE.items() if k not in ("done", "done_reason")}
    ]


def test_a_final_line_without_message_is_read() -> None:
    """Older servers end the stream with a line that has no ``message``."""
    final = {"model": "llama3.2", "created_at": "t", "done": True, "done_reason": "stop"}
    events = run(line({"content": "Hi"}), final)
    assert [e.reason for e in events if isinstance(e, FinishReason)] == ["stop"]


def test_an_error_line_is_a_stream_failure_with_its_message() -> None:
    events = run(line({"content": "Hi"}), {"error": "model runner has unexpectedly stopped"})
    failed = [e.error for e in events if isinstance(e, StreamFailed)]
    assert len(failed) == 1
    assert isinstance(failed[0], ProviderError)
    assert "model runner has unexpectedly stopped" in failed[0].message


def test_an_error_body_is_a_stream_failure_before_detection_too() -> None:
    result = stitch(b'{"error":"registry.ollama.ai/library/gemma3:1b does not support tools"}\n')
    error = result.result.stream_error
    assert isinstance(error, ProviderError)
    assert "does not support tools" in error.message


def test_a_bad_line_after_detection_is_a_stream_failure_and_the_stream_goes_on() -> None:
    body = (
        b'{"model":"m","created_at":"t","message":{"role":"assistant","content":"A"},"done":false}\n'
        b"not json\n"
        b'{"model":"m","created_at":"t","message":{"role":"assistant","content":"B"},"done":true}\n'
    )
    result = stitch(body).result
    assert result.text == "AB"
    assert result.stream_error is not None
    assert result.stream_error.code == "stream-decode-error"


# -- the ollama SDK ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", fixture_names("ollama-chat"))
def test_sdk_chat_response_objects(name: str) -> None:
    ollama = pytest.importorskip("ollama")
    body, expected = load(name)
    objects: list[object] = []
    for payload in payloads(body):
        if "error" in payload:
            objects.append(payload)  # the SDK raises ResponseError instead
        else:
            objects.append(ollama.ChatResponse.model_validate(payload))
    result = normalize(stitch(objects).result)
    # The SDK's Message.ToolCall has no id and no index: it drops both, so calls read from
    # its objects get the core's generated ids.
    for call in expected["calls"]:
        call["id"] = f"toolstitch_call_{call['index']}"
    assert result == expected


def test_sdk_objects_built_by_hand() -> None:
    ollama = pytest.importorskip("ollama")
    message = ollama.Message
    chunks = [
        ollama.ChatResponse(
            model="qwen3:8b",
            created_at="2026-01-05T10:00:00Z",
            done=False,
            message=message(role="assistant", content="", thinking="Paris, then Rome."),
        ),
        ollama.ChatResponse(
            model="qwen3:8b",
            created_at="2026-01-05T10:00:01Z",
            done=False,
            message=message(
                role="assistant",
                content="",
                tool_calls=[
                    message.ToolCall(
                        function=message.ToolCall.Function(
                            name="get_weather", arguments={"city": c}
                        )
                    )
                    for c in ("Paris", "Rome")
                ],
            ),
        ),
        ollama.ChatResponse(
            model="qwen3:8b",
            created_at="2026-01-05T10:00:02Z",
            done=True,
            done_reason="stop",
            prompt_eval_count=12,
            eval_count=7,
            message=message(role="assistant", content=""),
        ),
    ]
    result = stitch(chunks).result
    assert result.provider == "ollama-chat"
    assert [(c.id, c.name, c.arguments) for c in result.calls] == [
        ("toolstitch_call_0", "get_weather", '{"city":"Paris"}'),
        ("toolstitch_call_1", "get_weather", '{"city":"Rome"}'),
    ]
    assert result.reasoning == "Paris, then Rome."
    assert result.finish_reason == "stop"
    assert result.usage == {"prompt_eval_count": 12, "eval_count": 7}


# -- anything at all --------------------------------------------------------------------------

_values = loose_values
_entries = st.fixed_dictionaries(
    {},
    optional={
        "id": _values,
        "function": st.fixed_dictionaries(
            {}, optional={"name": _values, "index": _values, "arguments": _values}
        ),
    },
)
_lines = st.fixed_dictionaries(
    {},
    optional={
        "message": st.fixed_dictionaries(
            {},
            optional={
                "content": _values,
                "thinking": _values,
                "tool_calls": st.lists(_entries | _values, max_size=3) | _values,
            },
        )
        | _values,
        "done": _values,
        "done_reason": _values,
        "eval_count": _values,
        "error": _values,
    },
)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_lines, max_size=8))
def test_any_lines_never_raise_and_every_call_ends_once(lines: list[dict[str, Any]]) -> None:
    assert_every_call_ends_once(run(*lines))
