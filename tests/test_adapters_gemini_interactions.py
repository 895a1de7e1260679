"""The Gemini Interactions adapter: calls keyed by step index, the end rule by status, thoughts
and their signatures, server tool steps, the fixtures in every chunking, SDK event objects,
and the history converters (``to_gemini_interactions`` / ``from_gemini_interactions``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driven import Driven, assert_every_call_ends_once
from fixtures.build import (
    GI_THOUGHT_SIGNATURE,
    gi_args,
    gi_call,
    gi_completed,
    gi_delta,
    gi_start,
    gi_stop,
)
from fixtures.expected import cut, fixture_names, load, normalize, payloads
from strategies import loose_values, per_pass
from toolstitch.adapters import ADAPTERS, PROVIDERS, GeminiInteractionsAdapter, detect
from toolstitch.core.instructions import EndCall, Finish, Item
from toolstitch.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    Reasoning,
    SystemMessage,
    ToolResult,
    UserMessage,
    from_gemini_interactions,
    to_gemini_interactions,
    tool_result,
)
from toolstitch.stitch.stitcher import Stitcher, stitch
from toolstitch.vocab.call_events import (
    CallDiscarded,
    CallReady,
    CallStarted,
    CallWarning,
    Event,
)
from toolstitch.vocab.endings import Ending
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    ServerToolCall,
    StreamFailed,
    StreamWarning,
    TextDelta,
)

GI = "gemini-interactions"
FIXTURES = fixture_names(GI)


def run(*events: dict[str, Any]) -> list[Event]:
    """The events ``events`` lead to through a real core, the stream closed after them."""
    adapter = Driven(GeminiInteractionsAdapter)
    out: list[Event] = []
    for payload in events:
        kind = payload.get("event_type")
        out += adapter.feed(payload, event=kind if isinstance(kind, str) else None)
    return out + adapter.close()


def items(*events: dict[str, Any]) -> list[Item]:
    """The adapter's own items for ``events`` and its close, without a core."""
    adapter = GeminiInteractionsAdapter()
    out: list[Item] = []
    for payload in events:
        out += adapter.feed(payload)
    return out + list(adapter.close())


def ready(events: list[Event]) -> list[tuple[int, str | None, str | None, str]]:
    return [
        (e.call.index, e.call.id, e.call.name, e.call.arguments)
        for e in events
        if isinstance(e, CallReady)
    ]


def discarded(events: list[Event]) -> list[tuple[int, str]]:
    return [(e.index, e.error.code) for e in events if isinstance(e, CallDiscarded)]


def warnings(events: list[Event]) -> list[str]:
    return [e.error.code for e in events if isinstance(e, (CallWarning, StreamWarning))]


# -- registration and detection ---------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_registered_after_gemini() -> None:
    assert ADAPTERS[GI] is GeminiInteractionsAdapter
    assert PROVIDERS.index(GI) == PROVIDERS.index("gemini") + 1


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_detected_from_its_event_type_only() -> None:
    assert detect({"interaction": {"id": "v1_a"}, "event_type": "interaction.created"}) == GI
    assert detect({"index": 0, "step": {"type": "thought"}, "event_type": "step.start"}) == GI
    assert detect({"index": 0, "event_type": "step.stop"}, "step.stop") == GI
    # An error event could be anyone's: never detected from it alone.
    assert detect({"error": {"message": "x"}, "event_type": "error"}, "error") is None
    # The other providers' events stay theirs.
    assert detect({"type": "response.created"}) == "openai-responses"
    assert detect({"candidates": []}) == "gemini"
    assert detect({"type": "message_start"}) == "anthropic"
    assert detect({"event_type": 3}) is None
    assert detect({"event_type": "interactionX"}) is None


# -- the fixtures, in every chunking ----------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_there_are_fixtures() -> None:
    assert len(FIXTURES) == 9


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_whole_and_named(name: str) -> None:
    body, expected = load(name)
    assert normalize(stitch(body).result) == expected
    assert normalize(stitch(body, GI).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_byte_by_byte_and_line_by_line(name: str) -> None:
    body, expected = load(name)
    assert normalize(stitch(body[i : i + 1] for i in range(len(body))).result) == expected
    assert normalize(stitch(body.splitlines(keepends=True)).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_as_event_dicts(name: str) -> None:
    body, expected = load(name)
    assert normalize(stitch(payloads(body)).result) == expected


# 8 random chunkings a fixture a pass, beside the fixed chunkings of tests/test_stitch.py.
@pytest.mark.parametrize("name", FIXTURES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fixture_split_at_random(name: str, data: st.DataObject) -> None:
    body, expected = load(name)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=40), label="cuts")
    assert normalize(stitch(cut(body, cuts)).result) == expected


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_every_started_call_ends_once(name: str) -> None:
    body, _ = load(name)
    assert_every_call_ends_once(list(stitch(body)))


@pytest.mark.parametrize("name", FIXTURES)
def test_sdk_event_objects(name: str) -> None:
    """The google-genai SDK's ``InteractionSSEEvent`` objects, read through their dump. The
    events the SDK refuses go as dicts: the docs' ``google_search_call`` and
    ``google_search_result`` steps lack the ``arguments`` and ``result`` the SDK requires."""
    pydantic = pytest.importorskip("pydantic")
    interactions = pytest.importorskip("google.genai.interactions")
    adapter = pydantic.TypeAdapter(interactions.InteractionSSEEvent)
    body, expected = load(name)
    objects: list[object] = []
    refused: set[object] = set()
    for payload in payloads(body):
        event = {k: v for k, v in payload.items() if k != "type"}  # payloads()' error tag
        try:
            objects.append(adapter.validate_python(event))
        except pydantic.ValidationError:
            objects.append(event)
            refused.add(dict(event.get("step") or event.get("delta") or {}).get("type"))
    assert refused <= {"google_search_call", "google_search_result"}
    assert normalize(stitch(objects).result) == expected


def test_a_call_is_ready_at_the_delta_that_closes_it_before_its_step_stops() -> None:
    body, _ = load(f"{GI}/text-then-call")
    stitcher = Stitcher()
    ready_at: list[int] = []
    for line in body.splitlines(keepends=True):
        ready_at += [stitcher.events_read for e in stitcher.feed(line) if isinstance(e, CallReady)]
    stitcher.close()
    # created, status, 4 text-step events, the call's start, its 2 deltas: the 9th event
    assert ready_at == [9]


def test_the_cut_fixtures_never_dispatch_at_any_chunking() -> None:
    for name in ("call-cut-by-error", "stream-cut-after-call-start", "failed-status"):
        body, _ = load(f"{GI}/{name}")
        for source in (body, [body[i : i + 1] for i in range(len(body))], payloads(body)):
            events = list(stitch(source))
            assert not [e for e in events if isinstance(e, CallReady)], name
            assert [e.error.code for e in events if isinstance(e, CallDiscarded)] == [
                "truncated-arguments"
            ], name


# -- the end rule: Finish(ending_of(status)) --------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("status", "ending"),
    [
        ("completed", Ending.COMPLETE),
        ("requires_action", Ending.COMPLETE),
        ("failed", Ending.ERROR),
        ("incomplete", Ending.INCOMPLETE),
        ("cancelled", Ending.INCOMPLETE),
        ("budget_exceeded", Ending.INCOMPLETE),
    ],
)
def test_close_ends_with_the_ending_of_the_final_status(status: str, ending: Ending) -> None:
    out = items(gi_completed(status))
    assert out[-1] == Finish(ending)
    assert FinishReason(reason=status) in out


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_stream_without_interaction_completed_is_abandoned() -> None:
    assert items(gi_call(0, "c1", "f"))[-1] == Finish(Ending.ABANDONED)
    assert GeminiInteractionsAdapter().close() == [Finish(Ending.ABANDONED)]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_only_the_first_completed_event_gives_the_status() -> None:
    out = items(gi_completed("requires_action"), gi_completed("failed"))
    assert [e for e in out if isinstance(e, FinishReason)] == [
        FinishReason(reason="requires_action")
    ]
    assert not [e for e in out if isinstance(e, StreamFailed)]
    assert out[-1] == Finish(Ending.COMPLETE)


def test_a_call_without_arguments_text_is_settled_by_the_end_rule() -> None:
    # Its step stopped: the provider closed it, so it is whole.
    assert ready(run(gi_call(0, "c1", "f"), gi_stop(0))) == [(0, "c1", "f", "{}")]
    # Never stopped, but the interaction ended normally: whole too.
    events = run(gi_call(0, "c1", "f"), gi_completed("requires_action"))
    assert ready(events) == [(0, "c1", "f", "{}")]
    # Never stopped, and the interaction was cut or never ended: truncated.
    events = run(gi_call(0, "c1", "f"), gi_completed("incomplete"))
    assert discarded(events) == [(0, "truncated-arguments")]
    assert discarded(run(gi_call(0, "c1", "f"))) == [(0, "truncated-arguments")]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_placeholder_arguments_of_the_start_are_not_fed() -> None:
    out = list(GeminiInteractionsAdapter().feed(gi_call(0, "c1", "f")))
    assert [type(i).__name__ for i in out] == ["Delta"]
    assert getattr(out[0], "arguments", None) is None


def test_arguments_given_on_the_start_are_fed_compactly_when_no_delta_came() -> None:
    start = gi_start(0, type="function_call", id="c1", name="f", arguments={"b": "é", "a": 1})
    assert ready(run(start, gi_stop(0))) == [(0, "c1", "f", '{"b":"é","a":1}')]
    # The same when the stream ends without the step's stop.
    assert ready(run(start)) == [(0, "c1", "f", '{"b":"é","a":1}')]
    # Deltas, when they come, are the arguments.
    assert ready(run(start, gi_args(0, '{"a": 2}'), gi_stop(0))) == [(0, "c1", "f", '{"a": 2}')]


def test_step_stop_ends_the_call_as_closed_by_the_provider() -> None:
    out = items(gi_call(0, "c1", "f"), gi_args(0, '{"a": '), gi_stop(0))
    assert EndCall(0) in out
    assert discarded(run(gi_call(0, "c1", "f"), gi_args(0, '{"a": '), gi_stop(0))) == [
        (0, "truncated-arguments")
    ]


def test_an_error_event_cuts_the_open_call_and_fails_the_stream() -> None:
    error = {"error": {"message": "overloaded", "code": "unavailable"}, "event_type": "error"}
    events = run(gi_call(0, "c1", "f"), error)
    failed = [e for e in events if isinstance(e, StreamFailed)]
    assert [(f.error.code, f.error.kind) for f in failed] == [  # type: ignore[attr-defined]
        ("provider-error", "unavailable")
    ]
    assert discarded(events) == [(0, "truncated-arguments")]


def test_a_failed_status_is_a_stream_failure_too() -> None:
    events = run(gi_completed("failed"))
    assert [type(e) for e in events if isinstance(e, (FinishReason, StreamFailed))] == [
        FinishReason,
        StreamFailed,
    ]


# -- calls --------------------------------------------------------------------------------------


def test_calls_are_keyed_by_step_index_and_keep_their_signature() -> None:
    start = gi_start(2, type="function_call", id="c2", name="f", arguments={}, signature="s/+=")
    events = run(start, gi_args(2, '{"x": true}'), gi_stop(2))
    (call,) = [e.call for e in events if isinstance(e, CallReady)]
    assert (call.index, call.id, call.signature) == (2, "c2", "s/+=")


def test_older_sdks_partial_arguments_key_is_read() -> None:
    delta = gi_delta(0, type="arguments_delta", partial_arguments='{"a": 1}')
    assert ready(run(gi_call(0, "c1", "f"), delta, gi_stop(0))) == [(0, "c1", "f", '{"a": 1}')]


def test_arguments_of_a_step_that_is_no_call_are_a_call_without_a_name() -> None:
    events = run(gi_start(0, type="thought"), gi_args(0, '{"a": 1}'), gi_stop(0))
    assert [(e.index, e.error.code) for e in events if isinstance(e, CallDiscarded)] == [
        (0, "missing-name")
    ]


def test_usage_comes_from_every_event_that_carries_it() -> None:
    stop = {**gi_stop(0), "usage": {"total_tokens": 7}}
    result = stitch(
        [gi_call(0, "c1", "f"), stop, gi_completed("requires_action")], provider=GI
    ).result
    assert result.usage is not None
    assert result.usage["total_tokens"] == 299  # interaction.completed's, the last


# -- thoughts -----------------------------------------------------------------------------------


def test_the_thought_fixture_gives_its_block_signed_byte_for_byte_before_the_call() -> None:
    body, _ = load(f"{GI}/thought-signature-then-call")
    for source in (body, [body[i : i + 1] for i in range(len(body))]):
        run_ = stitch(source)
        events = list(run_)
        block = ReasoningBlock(
            text="**Checking the weather**\n\nI need Paris.",
            signature=GI_THOUGHT_SIGNATURE,
            kind="thought",
        )
        assert [e for e in events if isinstance(e, ReasoningBlock)] == [block]
        assert [e.text for e in events if isinstance(e, ReasoningDelta)] == [block.text]
        kinds = [type(e) for e in events]
        assert kinds.index(ReasoningBlock) < kinds.index(CallStarted)
        assert run_.result.reasoning_blocks == (block,)


def test_a_signed_thought_without_summary_is_still_a_block() -> None:
    events = run(
        gi_start(0, type="thought", signature=""),
        gi_delta(0, signature="EvEF", type="thought_signature"),
        gi_stop(0),
    )
    assert [e for e in events if isinstance(e, ReasoningBlock)] == [
        ReasoningBlock(text="", signature="EvEF", kind="thought")
    ]


def test_a_summary_on_the_start_and_an_unsigned_thought() -> None:
    start = gi_start(0, type="thought", summary=[{"type": "text", "text": "Hm. "}])
    summary = gi_delta(0, type="thought_summary", content={"type": "text", "text": "Yes."})
    events = run(start, summary, gi_stop(0))
    assert [e for e in events if isinstance(e, ReasoningBlock)] == [
        ReasoningBlock(text="Hm. Yes.", kind="thought")
    ]


def test_a_second_signature_in_one_step_ends_the_block_never_joined() -> None:
    events = run(
        gi_start(0, type="thought"),
        gi_delta(0, type="thought_summary", content={"type": "text", "text": "a"}),
        gi_delta(0, signature="S1", type="thought_signature"),
        gi_delta(0, type="thought_summary", content={"type": "text", "text": "b"}),
        gi_delta(0, signature="S2", type="thought_signature"),
        gi_stop(0),
    )
    assert [e for e in events if isinstance(e, ReasoningBlock)] == [
        ReasoningBlock(text="a", signature="S1", kind="thought"),
        ReasoningBlock(text="b", signature="S2", kind="thought"),
    ]


def test_a_thought_open_at_the_end_is_reported_at_close() -> None:
    events = run(gi_start(0, type="thought"), gi_delta(0, signature="S", type="thought_signature"))
    assert [e for e in events if isinstance(e, ReasoningBlock)] == [
        ReasoningBlock(text="", signature="S", kind="thought")
    ]


def test_a_thought_past_the_reasoning_limit_keeps_its_first_characters() -> None:
    events = [
        gi_start(0, type="thought"),
        gi_delta(0, type="thought_summary", content={"type": "text", "text": "abcdefgh"}),
        gi_delta(0, signature="S", type="thought_signature"),
        gi_stop(0),
    ]
    run_ = stitch(events, provider=GI, limits=Limits(max_reasoning_chars=5))
    list(run_)
    result = run_.result
    assert result.reasoning_blocks == (ReasoningBlock(text="abcde", signature="S", kind="thought"),)
    assert [w.error.code for w in result.warnings] == ["quirk-reasoning-over-limit"]


# -- text, server tools, what is not read -------------------------------------------------------


def test_model_output_text_on_the_start_and_in_deltas() -> None:
    start = gi_start(0, type="model_output", content=[{"type": "text", "text": "Based "}])
    events = run(start, gi_delta(0, type="text", text="on it."), gi_stop(0))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Based on it."


def test_server_tool_steps_are_server_calls_never_calls_to_dispatch() -> None:
    body, _ = load(f"{GI}/search-then-call-requires-action")
    result = stitch(body).result
    (server,) = result.server_calls
    assert isinstance(server, ServerToolCall)
    assert server.parsed_arguments == {"queries": ["largest mountain in Europe"]}
    assert [c.name for c in result.calls] == ["get_weather"]
    assert [p.name for p in result.message().tool_calls] == ["get_weather"]


def test_an_mcp_call_takes_its_own_name_and_arguments_on_the_start() -> None:
    start = gi_start(
        0, type="mcp_server_tool_call", id="m1", name="lookup", server_name="kb", arguments={"q": 1}
    )
    (server,) = [e for e in run(start, gi_stop(0)) if isinstance(e, ServerToolCall)]
    assert (server.id, server.name, server.type, server.arguments) == (
        "m1",
        "lookup",
        "mcp_server_tool_call",
        '{"q":1}',
    )


def test_a_server_step_open_at_the_end_gets_the_ending_of_the_interaction() -> None:
    start = gi_start(0, type="code_execution_call", id="x1", arguments={})
    assert next(e for e in run(start) if isinstance(e, ServerToolCall)).error is not None
    done = run(start, gi_completed("completed"))
    assert next(e for e in done if isinstance(e, ServerToolCall)).arguments == "{}"


def test_unknown_and_unread_kinds_leave_a_warning_once_each() -> None:
    events = run(
        {"event_type": "interaction.brand_new"},
        {"event_type": "interaction.brand_new"},
        {"type": "no event type"},
        gi_start(0, type="hologram"),
        gi_start(1, type="model_output", content=[{"type": "image", "data": "iVBO"}]),
        gi_delta(1, type="image", mime_type="image/png", data="iVBO"),
        gi_delta(1, type="image", mime_type="image/png", data="iVBO"),
        gi_delta(1, type="sparkle"),
        gi_delta(2, type="thought_summary", content={"type": "image", "data": "iVBO"}),
        {"index": "0", "event_type": "step.stop"},
        gi_start(0, type="model_output"),  # a second start of step 0
    )
    assert warnings(events) == ["quirk-unknown-event"] * 9


def test_the_protocols_own_events_and_steps_need_no_warning() -> None:
    body, _ = load(f"{GI}/search-then-call-requires-action")
    events = run(*(p for p in payloads(body)))
    events += run(
        gi_start(0, type="function_result", call_id="c1", result="ok"),
        gi_start(1, type="code_execution_result", call_id="x", result="1"),
        gi_delta(1, type="code_execution_result", result="1"),
        gi_delta(2, type="text_annotation_delta", annotations=[]),
        {
            "interaction_id": "v1",
            "status": "in_progress",
            "event_type": "interaction.status_update",
        },
    )
    assert warnings(events) == []


# -- anything at all ----------------------------------------------------------------------------

_steps = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["function_call", "thought", "model_output", "google_search_call"])
        | loose_values
    },
    optional={"id": loose_values, "name": loose_values, "arguments": loose_values},
)
_deltas = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["arguments_delta", "text", "thought_summary", "thought_signature", "image"]
        )
        | loose_values
    },
    optional={
        "arguments": loose_values,
        "text": loose_values,
        "signature": loose_values,
        "content": loose_values,
    },
)
_events = st.fixed_dictionaries(
    {
        "event_type": st.sampled_from(
            ["step.start", "step.delta", "step.stop", "interaction.completed", "error"]
        )
        | loose_values
    },
    optional={
        "index": st.integers(-1, 3) | loose_values,
        "step": _steps | loose_values,
        "delta": _deltas | loose_values,
        "interaction": st.fixed_dictionaries(
            {}, optional={"status": st.sampled_from(["completed", "failed"]) | loose_values}
        )
        | loose_values,
        "error": loose_values,
    },
)


@settings(max_examples=60, deadline=None)
@given(events=st.lists(_events, max_size=12))
def test_any_events_never_raise_and_every_call_ends_once(events: list[dict[str, Any]]) -> None:
    assert_every_call_ends_once(run(*events))


# -- the history: to_gemini_interactions / from_gemini_interactions -----------------------------


def test_the_streamed_turn_goes_back_with_its_signatures_and_ids_byte_for_byte() -> None:
    body, _ = load(f"{GI}/thought-signature-then-call")
    result = stitch(body).result
    (call,) = result.calls
    history: list[Message] = [
        SystemMessage("Be brief."),
        UserMessage("Weather in Paris?"),
        result.message(),
        tool_result(call, {"temp_c": 18}),
    ]
    system, steps = to_gemini_interactions(history)
    assert system == "Be brief."
    assert steps == [
        {"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {
            "type": "thought",
            "signature": GI_THOUGHT_SIGNATURE,
            "summary": [{"type": "text", "text": "**Checking the weather**\n\nI need Paris."}],
        },
        {
            "type": "function_call",
            "id": "sf9vftls",
            "name": "get_weather",
            "arguments": {"location": "Paris, FR"},
        },
        {
            "type": "function_result",
            "call_id": "sf9vftls",
            "name": "get_weather",
            "result": '{"temp_c": 18}',
        },
    ]
    assert from_gemini_interactions(json.loads(json.dumps(steps)), system) == history


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_call_signature_and_an_error_result_go_back() -> None:
    call = FunctionCall(id="c1", name="f", arguments={"a": 1}, signature="Sig/+=")
    error = ToolResult(call_id="c1", name="f", content="Error: boom", is_error=True)
    _, steps = to_gemini_interactions([AssistantMessage(tool_calls=(call,)), error])
    assert steps == [
        {
            "type": "function_call",
            "id": "c1",
            "name": "f",
            "arguments": {"a": 1},
            "signature": "Sig/+=",
        },
        {
            "type": "function_result",
            "call_id": "c1",
            "name": "f",
            "result": "Error: boom",
            "is_error": True,
        },
    ]
    assert from_gemini_interactions(steps) == [AssistantMessage(tool_calls=(call,)), error]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_results_in_every_documented_form_are_read() -> None:
    turn = {"type": "function_call", "id": "c1", "name": "get_weather", "arguments": {}}
    texts = [{"type": "text", "text": '{"weather": "Sunny"}'}]
    forms: list[object] = ["Sunny", texts, {"content": texts}, {"weather": "Sunny"}]
    contents = []
    for form in forms:
        read = from_gemini_interactions(
            [turn, {"type": "function_result", "call_id": "c1", "result": form}]
        )
        result = read[-1]
        assert isinstance(result, ToolResult)
        assert (result.name, result.is_error) == ("get_weather", False)  # the call's name
        contents.append(result.content)
    assert contents == ["Sunny", '{"weather": "Sunny"}', '{"weather": "Sunny"}', texts[0]["text"]]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_several_summary_items_are_read_as_the_summary() -> None:
    thought = {
        "type": "thought",
        "signature": "S",
        "summary": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
    }
    (message,) = from_gemini_interactions([thought])
    assert isinstance(message, AssistantMessage)
    assert message.reasoning == (Reasoning(text="ab", summary=("a", "b"), signature="S"),)
    assert to_gemini_interactions([message])[1] == [thought]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_what_is_not_history_is_refused() -> None:
    with pytest.raises(ValueError, match="step 0: unsupported step type 'google_search_call'"):
        from_gemini_interactions([{"type": "google_search_call", "id": "s"}])
    with pytest.raises(TypeError):
        to_gemini_interactions(["hello"])  # type: ignore[list-item]


ids = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=10)
texts = st.text(max_size=16)
arguments = st.dictionaries(
    texts,
    st.none() | st.booleans() | st.integers() | texts | st.lists(texts, max_size=2),
    max_size=3,
)


@st.composite
def conversations(draw: Callable[..., Any]) -> list[Message]:
    """Histories as the Interactions API holds them: every call with an id, signatures on
    thoughts and calls, results that name their call."""
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
            signature = draw(st.none() | texts)
            calls.append(
                FunctionCall(
                    id=call_id, name=draw(ids), arguments=draw(arguments), signature=signature
                )
            )
        thoughts = draw(
            st.lists(st.builds(Reasoning, text=texts, signature=st.none() | texts), max_size=2)
        )
        message = AssistantMessage(
            text=draw(texts), tool_calls=tuple(calls), reasoning=tuple(thoughts)
        )
        if not (message.text or message.tool_calls or message.reasoning):
            message = AssistantMessage(text="answer")
        out.append(message)
        for call in calls:
            is_error = draw(st.booleans())
            out.append(
                ToolResult(call_id=call.id, name=call.name, content=draw(texts), is_error=is_error)
            )
    return out


def round_trip(messages: list[Message]) -> list[Message]:
    system, steps = to_gemini_interactions(messages)
    return from_gemini_interactions(json.loads(json.dumps(steps)), system)


@per_pass(100)
@given(messages=conversations())
def test_neutral_round_trips_through_the_steps(messages: list[Message]) -> None:
    assert round_trip(messages) == messages


@per_pass(30)
@given(messages=conversations())
def test_the_steps_round_trip_too(messages: list[Message]) -> None:
    system, steps = to_gemini_interactions(messages)
    assert to_gemini_interactions(from_gemini_interactions(steps, system)) == (system, steps)
