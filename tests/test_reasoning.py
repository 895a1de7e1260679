"""Reasoning state, carried end to end: what the adapters capture (signatures, thought
parts, reasoning text), how ``StitchResult`` keeps the turn's order, and what
``StitchResult.message()`` gives each wire form for the next request."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driven import Driven
from strategies import per_pass
from toolstitch import stitch, tool_error_reply
from toolstitch.adapters import GeminiAdapter, OpenAIChatAdapter
from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import CallNote
from toolstitch.messages import (
    AssistantMessage,
    FunctionCall,
    Reasoning,
    TextPart,
    from_anthropic,
    from_gemini,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_gemini,
    to_openai_chat,
    to_openai_responses,
    tool_error,
)
from toolstitch.vocab.call_events import CallDiscarded, CallReady, CallWarning
from toolstitch.vocab.errors import ProviderQuirk
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    TextDelta,
    TextSignature,
)

# -- Gemini ---------------------------------------------------------------------------------


def gemini(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in payloads)


def test_gemini_call_signature_is_noted_before_the_arguments() -> None:
    adapter = GeminiAdapter()
    part = {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "Sig+/=="}
    items = list(adapter.feed(gemini(part)))
    assert items[:2] == [
        CallNote(index=0, signature="Sig+/=="),
        Delta(index=0, id=None, name="f", arguments='{"a":1}'),
    ]
    (call,) = stitch(sse(gemini(part, finish="STOP"))).result.calls
    assert call.signature == "Sig+/=="


def test_gemini_streamed_call_keeps_the_signature_of_its_opening_part() -> None:
    opening = {"functionCall": {"name": "f", "willContinue": True}, "thoughtSignature": "S1"}
    partial = [{"jsonPath": "$.a", "numberValue": 1}]
    value = {"functionCall": {"partialArgs": partial, "willContinue": True}}
    body = sse(gemini(opening), gemini(value), gemini({"functionCall": {}}, finish="STOP"))
    (call,) = stitch(body).result.calls
    assert (call.arguments, call.signature) == ('{"a":1}', "S1")


def test_a_thought_spans_chunks_and_ends_at_its_signature() -> None:
    adapter = Driven(GeminiAdapter)
    events = adapter.feed(gemini({"text": "Let me ", "thought": True}))
    events += adapter.feed(gemini({"text": "think.", "thought": True}))
    events += adapter.feed(gemini({"text": "", "thought": True, "thoughtSignature": "T"}))
    events += adapter.feed(gemini({"text": "more", "thought": True}))
    events += adapter.feed(gemini({"text": "Done."}, finish="STOP"))
    assert events == [
        ReasoningDelta(text="Let me "),
        ReasoningDelta(text="think."),
        ReasoningBlock(text="Let me think.", signature="T", kind="thought"),
        ReasoningDelta(text="more"),
        ReasoningBlock(text="more", kind="thought"),  # ended by the text part
        TextDelta(text="Done."),
        FinishReason(reason="STOP"),
    ]


def test_a_thought_open_at_the_finish_or_the_end_is_reported() -> None:
    adapter = Driven(GeminiAdapter)
    events = adapter.feed(gemini({"text": "a", "thought": True}, finish="STOP"))
    assert events[1:] == [ReasoningBlock(text="a", kind="thought"), FinishReason(reason="STOP")]
    adapter = Driven(GeminiAdapter)
    adapter.feed(gemini({"text": "b", "thought": True}))
    assert adapter.close()[0] == ReasoningBlock(text="b", kind="thought")


def test_a_signature_alone_on_a_thought_part_is_a_block_of_its_own() -> None:
    adapter = Driven(GeminiAdapter)
    events = adapter.feed(gemini({"thought": True, "thoughtSignature": "only"}))
    assert events == [ReasoningBlock(signature="only", kind="thought")]


def test_text_part_signatures_even_on_empty_text() -> None:
    adapter = Driven(GeminiAdapter)
    events = adapter.feed(gemini({"text": "Hi", "thoughtSignature": "A"}))
    events += adapter.feed(gemini({"text": "", "thoughtSignature": "B"}))
    events += adapter.feed(gemini({"text": ""}, finish="STOP"))  # nothing: no text, no signature
    assert events == [
        TextDelta(text="Hi"),
        TextSignature(signature="A"),
        TextSignature(signature="B"),
        FinishReason(reason="STOP"),
    ]
    body = sse(
        gemini({"text": "Hi", "thoughtSignature": "A"}),
        gemini({"text": "", "thoughtSignature": "B"}, finish="STOP"),
    )
    _, contents = to_gemini([stitch(body).result.message()])
    assert contents == [
        {
            "role": "model",
            "parts": [
                {"text": "Hi", "thoughtSignature": "A"},
                {"text": "", "thoughtSignature": "B"},
            ],
        }
    ]


def test_gemini_sdk_objects_give_the_sdks_base64_of_the_signature() -> None:
    types = pytest.importorskip("google.genai.types")
    chunk = types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(
                    role="model",
                    parts=[
                        types.Part(
                            function_call=types.FunctionCall(name="f", args={}),
                            thought_signature=b"\x12\xfe\xff",
                        )
                    ],
                ),
                finish_reason=types.FinishReason.STOP,
            )
        ]
    )
    (call,) = stitch([chunk]).result.calls
    # The SDK dumps bytes as URL-safe base64; Gemini reads either alphabet.
    assert call.signature == "Ev7_"
    adapter = Driven(GeminiAdapter)
    raw = {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": b"\x12\xfe\xff"}
    (ready,) = [e for e in adapter.feed(gemini(raw, finish="STOP")) if isinstance(e, CallReady)]
    assert ready.call.signature == "Ev7/"  # raw bytes (a hand-made dict): standard base64


# -- OpenAI-compatible chat -----------------------------------------------------------------


def chat(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def signed_entry(signature: str, **function: Any) -> dict[str, Any]:
    return {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": function,
        "extra_content": {"google": {"thought_signature": signature}},
    }


def test_chat_extra_content_signature_is_noted_before_the_fragment() -> None:
    adapter = OpenAIChatAdapter()
    entry = signed_entry("G+s/ig==", name="f", arguments='{"a": 1}')
    items = list(adapter.feed(chat({"tool_calls": [entry]})))
    assert isinstance(items[0], CallNote)
    assert items[0] == CallNote(index=0, signature="G+s/ig==")
    assert isinstance(items[1], Delta)
    assert items[1].arguments == '{"a": 1}'
    body = sse(chat({"tool_calls": [entry]}), chat({}, "tool_calls"))
    result = stitch(body).result
    (call,) = result.calls
    assert call.signature == "G+s/ig=="
    (wire,) = to_openai_chat([result.message()])
    assert wire["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "G+s/ig=="}}
    assert from_openai_chat([wire])[0] == result.message()


def test_late_thought_signature_is_a_warning() -> None:
    first = {"index": 0, "id": "c1", "type": "function"}
    first["function"] = {"name": "f", "arguments": "{}"}
    late = {"index": 0, "extra_content": {"google": {"thought_signature": "late"}}}
    result = stitch(sse(chat({"tool_calls": [first]}), chat({"tool_calls": [late]}))).result
    (call,) = result.calls
    assert call.signature is None
    (warning,) = result.warnings
    assert isinstance(warning, CallWarning)
    assert isinstance(warning.error, ProviderQuirk)
    assert warning.error.code == "quirk-signature-late"


def test_chat_reasoning_becomes_a_block_that_message_carries() -> None:
    entry = {"index": 0, "id": "c1", "type": "function"}
    entry["function"] = {"name": "f", "arguments": "{}"}
    body = sse(
        chat({"reasoning_content": "Think"}),
        chat({"reasoning_content": "ing."}),
        chat({"tool_calls": [entry]}),
        chat({}, "tool_calls"),
    )
    result = stitch(body).result
    assert result.reasoning_blocks == (ReasoningBlock(text="Thinking.", kind="reasoning_content"),)
    (plain,) = to_openai_chat([result.message()])
    assert "reasoning_content" not in plain
    (deepseek,) = to_openai_chat([result.message()], include_reasoning=True)
    assert deepseek["reasoning_content"] == "Thinking."


# -- StitchResult.message() -----------------------------------------------------------------

SIGNED_TURN = sse(
    gemini({"text": "plan", "thought": True, "thoughtSignature": "T1"}),
    gemini({"text": "Calling."}),
    gemini({"functionCall": {"name": "f", "args": {"x": 1}, "id": "a"}, "thoughtSignature": "C1"}),
    gemini({"text": "then", "thought": True}),
    gemini({"functionCall": {"name": "g", "args": {}, "id": "b"}}),
    gemini({"text": "", "thoughtSignature": "E"}, finish="STOP"),
)


def test_message_keeps_the_stream_order_and_every_signature() -> None:
    message = stitch(SIGNED_TURN).result.message()
    assert message.parts == (
        Reasoning(text="plan", signature="T1"),
        TextPart(text="Calling."),
        FunctionCall(id="a", name="f", arguments={"x": 1}, signature="C1"),
        Reasoning(text="then"),
        FunctionCall(id="b", name="g"),
        TextPart(text="", signature="E"),
    )
    assert (message.text, message.signature) == ("Calling.", "E")
    _, contents = to_gemini([message])
    assert contents[0]["parts"] == [
        {"text": "plan", "thought": True, "thoughtSignature": "T1"},
        {"text": "Calling."},
        {"functionCall": {"id": "a", "name": "f", "args": {"x": 1}}, "thoughtSignature": "C1"},
        {"text": "then", "thought": True},
        {"functionCall": {"id": "b", "name": "g", "args": {}}},
        {"text": "", "thoughtSignature": "E"},
    ]
    assert from_gemini(contents) == [message]


def test_discarded_calls_appear_with_empty_arguments_and_their_reply_id() -> None:
    body = sse(
        gemini({"functionCall": {"name": "f", "args": {"x": 1}}, "thoughtSignature": "S"}),
        gemini({"functionCall": {"name": "nope", "args": {}}}, finish="STOP"),
    )
    run = stitch(body, tools={"f": {"type": "object", "properties": {"x": {"type": "string"}}}})
    result = run.result
    discarded = result.discarded
    assert len(discarded) == 2
    assert not result.calls
    assert discarded[0].signature == "S"
    message = result.message()
    replies = [tool_error_reply(d) for d in discarded]
    assert message.tool_calls == tuple(
        FunctionCall(id=r.call_id, name=r.name, arguments={}, signature=d.signature)
        for r, d in zip(replies, discarded, strict=True)
    )
    results = [tool_error(r, r.content) for r in replies]
    _, contents = to_gemini([message, *results])
    assert contents[0]["parts"][0]["thoughtSignature"] == "S"
    assert len(contents[1]["parts"]) == 2  # one functionResponse per call


def test_a_result_without_reasoning_gives_the_neutral_message() -> None:
    entry = {"index": 0, "id": "c1", "type": "function"}
    entry["function"] = {"name": "f", "arguments": '{"a": 1}'}
    body = sse(chat({"content": "Hi"}), chat({"tool_calls": [entry]}), chat({}, "tool_calls"))
    message = stitch(body).result.message()
    assert message == AssistantMessage(
        text="Hi", tool_calls=(FunctionCall(id="c1", name="f", arguments={"a": 1}),)
    )
    assert message.parts == ()  # nothing beyond the neutral order


# -- the neutral shape and the writers ------------------------------------------------------

INTERLEAVED = AssistantMessage(
    parts=(
        Reasoning(text="first", signature="s1"),
        FunctionCall(id="t1", name="f", arguments={"a": 1}),
        Reasoning(signature="r2", redacted=True),
        TextPart(text="and"),
        FunctionCall(id="t2", name="g", caller={"type": "code_execution_20250825"}),
    )
)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_parts_give_the_fields_and_the_fields_give_the_neutral_parts() -> None:
    assert INTERLEAVED.text == "and"
    assert [c.id for c in INTERLEAVED.tool_calls] == ["t1", "t2"]
    assert [r.signature for r in INTERLEAVED.reasoning] == ["s1", "r2"]
    neutral = AssistantMessage(parts=(Reasoning(text="r"), TextPart(text="t")))
    assert neutral == AssistantMessage(text="t", reasoning=(Reasoning(text="r"),))
    assert neutral.ordered_parts() == (Reasoning(text="r"), TextPart(text="t"))
    with pytest.raises(ValueError, match="disagrees with its parts"):
        AssistantMessage(text="other", parts=(TextPart(text="t"),))
    with pytest.raises(TypeError):
        AssistantMessage(parts=("text",))  # type: ignore[arg-type]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_anthropic_blocks_keep_the_interleaved_order() -> None:
    _, messages = to_anthropic([INTERLEAVED])
    assert messages[0]["content"] == [
        {"type": "thinking", "thinking": "first", "signature": "s1"},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
        {"type": "redacted_thinking", "data": "r2"},
        {"type": "text", "text": "and"},
        {
            "type": "tool_use",
            "id": "t2",
            "name": "g",
            "input": {},
            "caller": {"type": "code_execution_20250825"},
        },
    ]
    assert from_anthropic(messages) == [INTERLEAVED]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_responses_items_put_each_reasoning_item_before_its_calls() -> None:
    message = AssistantMessage(
        parts=(
            Reasoning(id="rs_1", summary=("a", "b"), signature="enc"),
            FunctionCall(id="call_1", name="f"),
        )
    )
    assert to_openai_responses([message]) == [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [
                {"type": "summary_text", "text": "a"},
                {"type": "summary_text", "text": "b"},
            ],
            "encrypted_content": "enc",
        },
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
    ]
    (read,) = from_openai_responses(to_openai_responses([message]))
    assert isinstance(read, AssistantMessage)
    assert read.reasoning == (Reasoning(text="ab", id="rs_1", summary=("a", "b"), signature="enc"),)


# -- the property: any interleaving keeps its order and its signatures ----------------------

_SIG = st.none() | st.text("ABCabc+/=_-0123", min_size=1, max_size=12)
_TEXT = st.text("xyz .", min_size=1, max_size=6)
_ELEMENT = st.one_of(
    st.tuples(st.just("thought"), _TEXT, _SIG),
    st.tuples(st.just("text"), _TEXT, _SIG),
    st.tuples(st.just("call"), st.sampled_from(["f", "g"]), _SIG),
)


def _wire_part(element: tuple[str, str, str | None], position: int) -> dict[str, Any]:
    kind, value, signature = element
    if kind == "thought":
        part: dict[str, Any] = {"text": value, "thought": True}
    elif kind == "text":
        part = {"text": value}
    else:
        part = {"functionCall": {"name": value, "args": {"n": position}, "id": f"id{position}"}}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def _expected_parts(elements: list[tuple[str, str, str | None]]) -> list[dict[str, Any]]:
    """The reference: the wire parts, with the text of unsigned neighbours of one kind joined
    (a signature ends its part; nothing else moves)."""
    out: list[dict[str, Any]] = []
    open_kind: str | None = None
    for position, element in enumerate(elements):
        kind = element[0]
        part = _wire_part(element, position)
        if kind != "call" and open_kind == kind:
            out[-1]["text"] += part["text"]
            if "thoughtSignature" in part:
                out[-1]["thoughtSignature"] = part["thoughtSignature"]
        else:
            out.append(part)
        open_kind = kind if kind != "call" and "thoughtSignature" not in part else None
    return out


@settings(max_examples=150, deadline=None)
@given(elements=st.lists(_ELEMENT, max_size=10), per_chunk=st.integers(1, 3))
def test_any_interleaving_keeps_its_order_and_every_signature(
    elements: list[tuple[str, str, str | None]], per_chunk: int
) -> None:
    wire = [_wire_part(e, i) for i, e in enumerate(elements)]
    chunks = [gemini(*wire[i : i + per_chunk]) for i in range(0, len(wire), per_chunk)]
    result = stitch(sse(*chunks, gemini(finish="STOP"))).result
    message = result.message()
    _, contents = to_gemini([message])
    parts = contents[0]["parts"] if contents else []
    assert parts == _expected_parts(elements)
    signatures = [e[2] for e in elements if e[2] is not None]
    written = [p["thoughtSignature"] for p in parts if "thoughtSignature" in p]
    assert written == signatures  # every one, byte for byte, in order
    # The Anthropic and Responses writers keep the same order of what they carry.
    item_type = {Reasoning: "reasoning", FunctionCall: "function_call", TextPart: "message"}
    items = to_openai_responses([message])
    expected_items = [
        item_type[type(p)]
        for p in message.ordered_parts()
        if not (isinstance(p, TextPart) and not p.text)
    ]
    assert [item["type"] for item in items] == expected_items
    if result.discarded == () and elements:
        assert [c.id for c in message.tool_calls] == [c.id for c in result.calls]


def test_discarded_parts_are_stream_events_too() -> None:
    """A call discarded before it started (no name ever) still takes its place."""
    body = sse(
        gemini({"text": "a"}),
        gemini({"functionCall": {"args": {"x": 1}}}),
        gemini({"text": "b"}, finish="STOP"),
    )
    result = stitch(body).result
    assert [type(p) for p in result.parts] == [TextPart, CallDiscarded, TextPart]


# -- the property, on the neutral shape: the ordered writers and readers agree --------------

_WORD = st.text("abc xyz", min_size=1, max_size=5)


@st.composite
def _ordered_turns(draw: st.DrawFn, provider: str) -> AssistantMessage:
    """An assistant turn with parts in any order, as ``provider`` can carry them."""
    anthropic = provider == "anthropic"
    parts: list[Reasoning | TextPart | FunctionCall] = []
    for position in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["reasoning", "text", "call"]))
        signature = draw(_SIG)
        if kind == "reasoning" and anthropic:
            redacted = draw(st.booleans())
            text = "" if redacted else draw(_WORD)
            parts.append(Reasoning(text=text, signature=signature or "s", redacted=redacted))
        elif kind == "reasoning":
            parts.append(Reasoning(text=draw(_WORD), signature=signature))
        elif kind == "text":
            parts.append(TextPart(text=draw(_WORD), signature=None if anthropic else signature))
        else:
            caller = draw(st.none() | st.just({"type": "direct"})) if anthropic else None
            parts.append(
                FunctionCall(
                    id=f"call{position}",
                    name=draw(st.sampled_from(["f", "g"])),
                    arguments={"n": position},
                    signature=None if anthropic else signature,
                    caller=caller,
                )
            )
    return AssistantMessage(parts=tuple(parts))


# Same code on either path (no assembler, no C): half the examples on each pass.
@per_pass(100, settings(deadline=None))
@given(data=st.data())
@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_ordered_turns_round_trip_with_every_signature(provider: str, data: st.DataObject) -> None:
    message = data.draw(_ordered_turns(provider))
    if provider == "anthropic":
        _, wire = to_anthropic([message])
        assert from_anthropic(wire) == [message]
        blocks = wire[0]["content"]
        written = [b.get("signature", b.get("data")) for b in blocks if "thinking" in b["type"]]
    else:
        _, wire = to_gemini([message])
        assert from_gemini(wire) == [message]
        written = [p["thoughtSignature"] for p in wire[0]["parts"] if "thoughtSignature" in p]
    expected = [
        p.signature
        for p in message.ordered_parts()
        if p.signature is not None and (provider == "gemini" or isinstance(p, Reasoning))
    ]
    assert written == expected
