"""The Gemini adapter: whole calls, generated ids, Vertex partialArgs, SDK objects."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from driven import Driven
from fixtures.expected import fixture_names, load, normalize, payloads
from strategies import per_pass
from toolstitch.adapters import GeminiAdapter, detect
from toolstitch.adapters.gemini import PathError, _PathWriter, parse_json_path
from toolstitch.stitch.stitcher import stitch
from toolstitch.vocab.call_events import CallReady, CallWarning


def chunk(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts)}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_detected_from_candidates() -> None:
    assert detect({"candidates": []}) == "gemini"
    assert detect({"usage_metadata": {}}) == "gemini"


def test_parallel_calls_to_one_tool_get_distinct_ids_in_order() -> None:
    adapter = Driven(GeminiAdapter)
    events = adapter.feed(
        chunk(
            {"functionCall": {"name": "read", "args": {"p": "a"}}},
            {"functionCall": {"name": "read", "args": {"p": "b"}}},
            {"functionCall": {"name": "read", "args": {"p": "c"}}},
        )
    )
    ready = [e.call for e in events if isinstance(e, CallReady)]
    assert [(c.index, c.id, c.arguments) for c in ready] == [
        (0, "toolstitch_call_0", '{"p":"a"}'),
        (1, "toolstitch_call_1", '{"p":"b"}'),
        (2, "toolstitch_call_2", '{"p":"c"}'),
    ]


def test_snake_case_keys_as_some_sdks_dump_them() -> None:
    adapter = Driven(GeminiAdapter)
    events = adapter.feed(
        {
            "candidates": [
                {"content": {"parts": [{"function_call": {"name": "f", "will_continue": True}}]}}
            ]
        }
    )
    events += adapter.feed(
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {
                                "function_call": {
                                    "partial_args": [{"json_path": "$.a", "number_value": 1}],
                                    "will_continue": True,
                                }
                            }
                        ]
                    }
                }
            ]
        }
    )
    events += adapter.feed(
        {"candidates": [{"content": {"parts": [{"function_call": {}}]}, "finish_reason": "STOP"}]}
    )
    assert [e.call.arguments for e in events if isinstance(e, CallReady)] == ['{"a":1}']


def test_a_new_call_closes_an_unterminated_streamed_one() -> None:
    adapter = Driven(GeminiAdapter)
    events = adapter.feed(chunk({"functionCall": {"name": "f", "willContinue": True}}))
    events += adapter.feed(
        chunk(
            {
                "functionCall": {
                    "partialArgs": [{"jsonPath": "$.x", "stringValue": "1"}],
                    "willContinue": True,
                }
            }
        )
    )
    events += adapter.feed(chunk({"functionCall": {"name": "g", "args": {}}}))
    assert [e.call.name for e in events if isinstance(e, CallReady)] == ["f", "g"]
    assert [e.error.code for e in events if isinstance(e, CallWarning)] == [
        "quirk-partial-args-unterminated"
    ]


def test_arguments_given_whole_on_the_opening_part() -> None:
    adapter = Driven(GeminiAdapter)
    adapter.feed(chunk({"functionCall": {"name": "f", "args": {"a": 1}, "willContinue": True}}))
    adapter.feed(
        chunk(
            {
                "functionCall": {
                    "partialArgs": [{"jsonPath": "$.b", "boolValue": False}],
                    "willContinue": True,
                }
            }
        )
    )
    events = adapter.feed(chunk({"functionCall": {}}))
    assert [e.call.arguments for e in events if isinstance(e, CallReady)] == ['{"a":1,"b":false}']


def test_arguments_without_a_call_are_missing_a_name() -> None:
    adapter = Driven(GeminiAdapter)
    events = adapter.feed(chunk({"functionCall": {"args": {"a": 1}}}))
    assert [e.error.code for e in events if hasattr(e, "error")] == ["missing-name"]


def test_stray_terminator_is_ignored() -> None:
    assert Driven(GeminiAdapter).feed(chunk({"functionCall": {}})) == []


def test_max_tokens_leaves_a_streamed_call_truncated() -> None:
    adapter = Driven(GeminiAdapter)
    adapter.feed(chunk({"functionCall": {"name": "f", "willContinue": True}}))
    adapter.feed(
        chunk(
            {
                "functionCall": {
                    "partialArgs": [{"jsonPath": "$.x", "stringValue": "ab", "willContinue": True}],
                    "willContinue": True,
                }
            },
            finish="MAX_TOKENS",
        )
    )
    (event,) = adapter.close()
    assert event.error.code == "truncated-arguments"  # type: ignore[attr-defined]


# -- the JSON path writer ----------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_parse_json_path() -> None:
    assert parse_json_path("$") == []
    assert parse_json_path("$.a.b[0]['c d'][12][\"e\"]") == ["a", "b", 0, "c d", 12, "e"]
    with pytest.raises(PathError):
        parse_json_path("a.b")
    with pytest.raises(PathError):
        parse_json_path("$.a[")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_writer_refuses_what_text_cannot_express() -> None:
    writer = _PathWriter()
    writer.write(["a"], 1, False)
    with pytest.raises(PathError, match="already written"):
        writer.write(["a"], 2, False)
    writer = _PathWriter()
    writer.write(["xs", 0], 1, False)
    with pytest.raises(PathError, match="not the next one"):
        writer.write(["xs", 2], 1, False)
    with pytest.raises(PathError):
        _PathWriter().write([], 1, False)


def _leaves(value: Any, path: list[str | int]) -> list[tuple[list[str | int], Any]]:
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _leaves(v, [*path, k])]
    if isinstance(value, list) and value:
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, [*path, i])]
    return [(path, value)]


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3),
        st.dictionaries(st.text(max_size=4), inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
)


# Same code on either path (no assembler, no C): half the examples on each pass.
@per_pass(100)
@given(st.dictionaries(st.text(max_size=4), values, min_size=1, max_size=4), st.data())
def test_writer_rebuilds_any_object_from_its_leaves(
    obj: dict[str, Any], data: st.DataObject
) -> None:
    writer = _PathWriter()
    text = ""
    for path, value in _leaves(obj, []):
        if isinstance(value, str) and value:
            cut = data.draw(st.integers(0, len(value)))
            text += writer.write(path, value[:cut], True)
            text += writer.write(path, value[cut:], False)
        else:
            text += writer.write(path, value, False)
    text += writer.close()
    assert json.loads(text) == obj


@pytest.mark.parametrize("name", fixture_names("gemini"))
def test_sdk_response_objects(name: str) -> None:
    genai = pytest.importorskip("google.genai.types")
    body, expected = load(name)
    objects = []
    for payload in payloads(body):
        if "error" in payload:
            objects.append(payload)  # the SDK raises an APIError instead
        else:
            objects.append(genai.GenerateContentResponse.model_validate(payload))
    assert normalize(stitch(objects).result) == expected


def test_events_and_parts_it_does_not_read_leave_a_warning_once_per_kind() -> None:
    result = stitch(
        [
            {"candidates": [{"content": {"parts": [{"text": "hi"}]}}]},
            {"somethingNew": 1},
            {"candidates": [{"content": {"parts": [{"executableCode": {"code": "1+1"}}]}}]},
            {"candidates": [{"content": {"parts": [{"executableCode": {"code": "2"}}]}}]},
            {"candidates": [{"finishReason": "STOP"}]},
        ],
        provider="gemini",
    ).result
    messages = [w.error.message for w in result.warnings]
    assert [w.error.code for w in result.warnings] == ["quirk-unknown-event"] * 2
    assert "somethingNew" in messages[0]
    assert "executableCode" in messages[1]
    assert (result.text, result.finish_reason) == ("hi", "STOP")


def test_a_blocked_prompt_gives_its_block_reason_as_the_finish_reason() -> None:
    events = [
        {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 3}}
    ]
    result = stitch(events, provider="gemini").result
    assert (result.finish_reason, result.usage, result.warnings) == (
        "SAFETY",
        {"promptTokenCount": 3},
        (),
    )
