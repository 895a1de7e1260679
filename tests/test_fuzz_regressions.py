"""Regression tests for what the fuzz campaign found (fuzz/README.md, "Findings").

Each bug is reproduced through the public API with the smallest input that shows it. Bugs
1-5 (commit 0c67d68) and 7 (commit e5ee4d1) are fixed and their tests guard the fixes. Bugs
still open in src/ are ``xfail(strict=True)``: the day one is fixed its test passes, strict
xfail turns that into a failure, and the marker must go - so a fix cannot go unnoticed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolstitch import (
    ArgumentsDelta,
    Assembler,
    CallDiscarded,
    CallReady,
    CallWarning,
    Delta,
    Event,
    LimitExceeded,
    Limits,
    MalformedArguments,
    StreamDecodeError,
    TrailingArguments,
)
from toolstitch.adapters import ADAPTERS, PROVIDERS
from toolstitch.decode.sse import SSEDecoder
from toolstitch.stitch.driver import Driver
from toolstitch.stitch.stitcher import stitch


def kinds(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def ready_then_more(fragment: str) -> tuple[Assembler, list[Event]]:
    """A call that ``finish`` made ready with empty arguments, then more arguments for it."""
    asm = Assembler()
    asm.feed(Delta(index=0, id="call_1", name="ping"))
    (ready,) = asm.finish("tool_calls")
    assert isinstance(ready, CallReady)
    assert ready.call.arguments == "{}"
    return asm, asm.feed(Delta(index=0, arguments=fragment))


# -- bug 1: arguments after a call was made ready with empty arguments -------------------------


def test_bug1_invalid_arguments_after_empty_ready_do_not_raise() -> None:
    asm, events = ready_then_more("x")  # raised IllegalTransition before the fix
    assert all(isinstance(e, CallWarning) for e in events)
    assert asm.complete()[0].arguments == "{}"


def test_bug1_valid_arguments_after_empty_ready_are_not_a_fragment() -> None:
    asm, events = ready_then_more('{"a": 1}')
    assert not [e for e in events if isinstance(e, ArgumentsDelta)]
    # Text for a call that is already complete is text after its arguments: one warning,
    # kept in the snapshot like any trailing text, never part of the ready call.
    warnings = [e for e in events if isinstance(e, CallWarning)]
    assert [w.error.code for w in warnings] == ["trailing-arguments"]
    assert asm.calls[0].arguments.endswith('{"a": 1}')


def test_bug1_the_ready_call_itself_never_changes() -> None:
    """Even with bug 1 open, the ToolCall that was dispatched stays what it was."""
    asm, _ = ready_then_more('{"a": 1}')
    assert asm.complete()[0].arguments == "{}"
    assert asm.complete()[0].parsed_arguments == {}


def test_bug1_through_the_openai_chat_adapter() -> None:
    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        body = {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    call = {"index": 0, "id": "call_1", "type": "function"}
    body = (
        chunk({"tool_calls": [{**call, "function": {"name": "ping", "arguments": ""}}]})
        + chunk({}, "stop")
        + chunk({"tool_calls": [{"index": 0, "function": {"arguments": "x"}}]})
    )
    events = list(stitch(body, "openai-chat"))
    assert kinds(events).count("CallReady") == 1
    assert "ArgumentsDelta" not in kinds(events)[kinds(events).index("CallReady") :]


# -- bug 2: id and name both past their limits in one delta -----------------------------------


def test_bug2_id_and_name_past_their_limits_in_one_delta() -> None:
    asm = Assembler(limits=Limits(max_id_chars=4, max_name_chars=4))
    events = asm.feed(
        Delta(index=0, id="abcdef", name="abcdef")
    )  # raised IllegalTransition before the fix
    (discard,) = [e for e in events if isinstance(e, CallDiscarded)]
    assert isinstance(discard.error, LimitExceeded)
    assert discard.error.limit == "max_id_chars"


def test_bug2_with_default_limits() -> None:
    asm = Assembler()
    events = asm.feed(Delta(index=0, id="i" * 300, name="n" * 300))
    assert kinds(events) == ["CallStarted", "CallDiscarded"]


# -- bug 3: which SSE limit error is reported depends on the chunking --------------------------


def _sse_error(chunks: list[bytes]) -> StreamDecodeError:
    decoder = SSEDecoder(max_line_bytes=20, max_event_bytes=5)
    try:
        for chunk in chunks:
            decoder.feed(chunk)
        decoder.close()
    except StreamDecodeError as exc:
        return exc
    raise AssertionError("no StreamDecodeError")


def test_bug3_sse_limit_error_does_not_depend_on_chunking() -> None:
    body = b"data: " + b"x" * 40 + b"\n\n"
    whole = _sse_error([body])
    bytewise = _sse_error([body[i : i + 1] for i in range(len(body))])
    # The event limit is passed first (at byte 11), the line limit later (at byte 20).
    assert whole.offset == bytewise.offset == 11


def test_bug3b_unterminated_line_passing_both_limits() -> None:
    body = b"data: " + b"x" * 40  # no line break: the line is still pending in the decoder
    whole = _sse_error([body])
    bytewise = _sse_error([body[i : i + 1] for i in range(len(body))])
    assert bytewise.offset == 11  # the event limit is passed first
    assert whole.offset == bytewise.offset  # 20 today: the line limit is checked first


# -- bug 5: a decoder whose close() raised is not "dead" as documented ----------------------


def test_bug5_close_raises_again_after_close_raised() -> None:
    decoder = SSEDecoder(max_line_bytes=100, max_event_bytes=5)
    decoder.feed(b"data: abcde\n")
    decoder.feed(b"data:")  # the joining newline passes the event limit, seen at close()
    first = _close_error(decoder)
    assert first.offset == 17
    again = _close_error(decoder)  # returned [] before the fix
    assert again.offset == first.offset


def _close_error(decoder: SSEDecoder) -> StreamDecodeError:
    try:
        decoder.close()
    except StreamDecodeError as exc:
        return exc
    raise AssertionError("close() did not raise")


# -- bug 4: yajl's extra whitespace (\v and \f) ------------------------------------------------


@pytest.mark.parametrize("junk", ["\x0b", "\x0c"])
def test_bug4_vertical_tab_after_the_object_is_trailing_text(junk: str) -> None:
    asm = Assembler()
    events = asm.feed(Delta(index=0, id="c", name="f", arguments='{"a": 1}' + junk))
    assert "CallReady" in kinds(events)
    assert any(
        isinstance(e, CallWarning) and isinstance(e.error, TrailingArguments) for e in events
    )


@pytest.mark.parametrize("junk", ["\x0b", "\x0c"])
def test_bug4_vertical_tab_inside_is_malformed_at_once(junk: str) -> None:
    asm = Assembler()
    events = asm.feed(Delta(index=0, id="c", name="f", arguments='{"a": [' + junk))
    (discard,) = [e for e in events if isinstance(e, CallDiscarded)]
    assert isinstance(discard.error, MalformedArguments)
    assert discard.error.offset == 7


@pytest.mark.parametrize("junk", ["\x0b", "\x0c"])
def test_bug4_never_reaches_dispatch(junk: str) -> None:
    """Such a call is never reported ready, whatever follows."""
    asm = Assembler()
    text = '{"a": [' + junk + "1]}"
    events = asm.feed(Delta(index=0, id="c", name="f", arguments=text)) + asm.finish()
    assert "CallReady" not in kinds(events)
    (discard,) = [e for e in events if isinstance(e, CallDiscarded)]
    assert isinstance(discard.error, MalformedArguments)
    assert discard.error.offset == 7


# -- bug 7: unhashable JSON values where the provider layer expects a string or an int ---------


@pytest.mark.parametrize("kind", [b"[]", b"{}"])
def test_bug7_an_event_type_that_is_not_a_string(kind: bytes) -> None:
    body = b'data: {"type": ' + kind + b"}\n\n"
    with pytest.raises(StreamDecodeError):  # unknown format (TypeError before the fix)
        list(stitch(body))


@pytest.mark.parametrize("kind", ["response.output_text.delta", "response.output_text.done"])
def test_bug7_responses_text_event_with_a_list_index(kind: str) -> None:
    created = {"type": "response.created", "response": {"id": "r", "status": "in_progress"}}
    event = {"type": kind, "output_index": [], "content_index": {}, "delta": "x", "text": "x"}
    body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in (created, event))
    events = list(stitch(body, "openai-responses"))  # raised TypeError before the fix
    assert events is not None


def test_bug7_replay_exits_cleanly(tmp_path: Path) -> None:
    from toolstitch import cli

    path = tmp_path / "stream.sse"
    path.write_bytes(b'data: {"type": []}\n\n')
    assert cli.main(["replay", str(path), "--json"]) == 2  # raised TypeError before the fix


# -- bug 8: a negative content-block index from Anthropic -------------------------------------


def _anthropic_body(index: int) -> bytes:
    events = [
        (
            "message_start",
            {"type": "message_start", "message": {"id": "m", "type": "message", "content": []}},
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
            },
        ),
    ]
    return b"".join(
        b"event: " + name.encode() + b"\ndata: " + json.dumps(payload).encode() + b"\n\n"
        for name, payload in events
    )


def test_bug8_negative_anthropic_block_index() -> None:
    result = stitch(_anthropic_body(-1)).result  # raises InvalidDelta today
    assert result.provider == "anthropic"
    assert len(result.calls) + len(result.discarded) == 1


def test_bug8_replay_exits_cleanly(tmp_path: Path) -> None:
    from toolstitch import cli

    path = tmp_path / "stream.sse"
    path.write_bytes(_anthropic_body(-1))
    # InvalidDelta today; now a clean exit: 1, since the body stops with the call open
    # (never dispatched: the stream was cut before its arguments arrived).
    assert cli.main(["replay", str(path), "--json"]) in (0, 1, 2)


# -- issue 11: the adapters' event-type sets, found by fuzz/fuzz_adapters.py ----------------


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if p != "text"])  # text: str only
@pytest.mark.parametrize("kind", [{"a": 1}, ["x"], 3])
def test_an_event_type_that_is_not_a_string_is_unknown_not_a_crash(
    provider: str, kind: object
) -> None:
    # Each adapter looked the type up in a frozenset: a dict there raised TypeError.
    assembler = Assembler()
    adapter = ADAPTERS[provider](records=assembler)
    out: list[Event] = []
    drive = Driver(assembler).drive
    drive(adapter.feed({"type": kind, "delta": {"type": kind}}), out)
    drive(adapter.close(), out)
    assert all(isinstance(event, Event) for event in out)


def test_the_openai_chat_adapter_refuses_none_as_an_event() -> None:
    # A None fed as an event was taken for a skipped SDK helper event and went unnoticed.
    with pytest.raises(TypeError):
        list(ADAPTERS["openai-chat"]().feed(None))


# -- bugs 9-11: the text layer, found by fuzz/fuzz_text.py (a text cut into pieces must give
# -- what the whole text gives) ---------------------------------------------------------------


def _text_outcome(chunks: list[str], fmt: str) -> tuple[object, ...]:
    result = stitch(chunks, text_format=fmt).collect()
    return (
        [(call.name, json.loads(call.arguments)) for call in result.calls],
        result.text,
        result.reasoning,
        [(d.error.code, getattr(d.error, "offset", None)) for d in result.discarded],
        sorted({warning.error.code for warning in result.warnings}),
    )


# Bug 9 (fixed, TextReader._lead_state): a lead state's marker cut across pieces was missed,
# and held text that was no marker was dropped (it looked past the part already held).
@pytest.mark.parametrize(
    ("fmt", "chunks"),
    [
        ("gemma4", ["<|channel>tho", "ught\nhmm<channel|>ok"]),  # reasoning 'thought\nhmm'
        ("gemma4", ["<|tool_call>call:f{}  <tool_", "call|>ok"]),  # text '  ok', stray-close
        ("pythonic", ["<|python_start|>[f()]<|python_", "end|>ok"]),  # stray-python-end
        ("pythonic", ["<", "["]),  # text '' instead of '<['
        ("gemma4", ["<|tool_call>call:f{}<", "<|tool_call>call:f{}<tool_call|>"]),  # '<' lost
    ],
)
def test_bug9_a_lead_state_marker_cut_across_pieces(fmt: str, chunks: list[str]) -> None:
    assert _text_outcome(chunks, fmt) == _text_outcome(["".join(chunks)], fmt)


# Bug 10 (fixed with the gemma body's 19:01 version): its _Finder.find returned the piece's
# length, not -1, when the piece ended before the string's delimiter.
@pytest.mark.parametrize(
    ("chunks", "value"),
    [
        (['<|tool_call>call:f{a:<|"|>x', 'y<|"|>}<tool_call|>'], "xy"),  # 'x"y', inner-delimiter
        (['<|tool_call>call:f{a:<|"|>x', ',y<|"|>}<tool_call|>'], "x,y"),  # malformed-arguments
    ],
)
def test_bug10_a_gemma_string_cut_across_pieces(chunks: list[str], value: str) -> None:
    whole = _text_outcome(["".join(chunks)], "gemma4")
    assert whole[0] == [("f", {"a": value})]
    assert _text_outcome(chunks, "gemma4") == whole


# Bug 11 (fixed): a header entered from a lead state's whitespace held from an earlier piece was
# placed after that whitespace (TextReader._enter read _base before it was moved back).
@pytest.mark.parametrize("cut", range(len("[TOOL_CALLS]   a b{}") + 1))
def test_bug11_a_malformed_call_header_placed_the_same_in_any_chunking(cut: int) -> None:
    text = "[TOOL_CALLS]   a b{}"  # a name with a space: malformed-call
    whole = _text_outcome([text], "mistral")
    assert whole[3] == [("malformed-call", 12)]
    assert _text_outcome([text[:cut], text[cut:]], "mistral") == whole  # cut at 13-15: 13


# Bug 12 (fixed in the reader of 19:13 UTC): a position in text held from an earlier piece got
# the line and column of the current piece's start, wrong when a line break came between.
def test_bug12_a_header_error_keeps_its_line_when_the_header_spans_pieces() -> None:
    text = "x\n<｜tool▁call▁begin｜>a\nb c<｜tool▁sep｜>{}"  # a name with a space
    for chunks in ([text], [text[:26], text[26:]]):
        (discarded,) = stitch(chunks, text_format="deepseek-v3.1").collect().discarded
        error = discarded.error
        assert isinstance(error, MalformedArguments)  # a MalformedCall
        assert (error.offset, error.line, error.column) == (21, 2, 20)  # cut: line 3, column 1


# Bug 13 (fixed with the reader and JSON bodies of 19:12-19:13 UTC): JSON arguments that are
# not an object, read whole in one piece, were not placed in the model's text (offset 0).
@pytest.mark.parametrize(
    ("fmt", "text", "offset"),
    [
        ("hermes", '<tool_call>{"name": "f", "arguments":t</tool_call>', 37),
        ("llama3-json", '{"name": "f", "parameters":t{}}', 27),
    ],
)
def test_bug13_arguments_that_are_no_object_are_placed_in_the_text(
    fmt: str, text: str, offset: int
) -> None:
    for chunks in (list(text), [text]):
        (discarded,) = stitch(chunks, text_format=fmt).collect().discarded
        assert isinstance(discarded.error, MalformedArguments)
        assert discarded.error.offset == offset, chunks  # whole: 0


# Bug 14 (fixed): a JSON body's until marker cut across pieces before the body's JSON
# (<tool_call>< + /tool_call>) was taken for malformed text: a malformed-call was discarded.
@pytest.mark.parametrize(
    ("fmt", "text", "discards"),
    [
        ("hermes", "<tool_call></tool_call>", []),  # an empty call: nothing at all
        ("hermes", "<tool_call> \n<tool_call>", [("missing-name", None)]),
        ("granite", "<|tool_call|>[ </tool_call>", [("malformed-call", 15)]),
        ("granite", '<|tool_call|>[{"name":"f"}, <tool_call>', [("malformed-call", 28)]),
    ],
)
def test_bug14_a_json_body_until_marker_cut_across_pieces(
    fmt: str, text: str, discards: list[tuple[str, int | None]]
) -> None:
    whole = _text_outcome([text], fmt)
    assert whole[3] == discards
    for cut in range(len(text) + 1):
        assert _text_outcome([text[:cut], text[cut:]], fmt) == whole, cut


# Bug 15 (fixed): a schema violation followed by a JSON fault in the same fragment was discarded
# as malformed-arguments (the tokenizer dropped the fragment's events, so the schema check never
# saw the violation); in two fragments, as schema-violation. The first fault by position wins.
def test_bug15_the_discard_code_does_not_depend_on_the_fragments() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    codes = []
    for fragments in (['{"city":["":'], ['{"city":["', '":']):
        asm = Assembler(tools=tools)
        events = asm.feed(Delta(index=0, id="c1", name="f", arguments=fragments[0]))
        for fragment in fragments[1:]:
            events += asm.feed(Delta(index=0, arguments=fragment))
        events += asm.finish("stop")
        codes.append(
            [
                (e.error.code, getattr(e.error, "offset", None))
                for e in events
                if isinstance(e, CallDiscarded)
            ]
        )
    assert codes[0] == codes[1] == [("schema-violation", 8)]  # at the '[' (was malformed, 11)


# Bug 16 (fixed): after a fault, a JSON body read in one piece went back to an until marker it
# had read inside a string (it read on from the value's start, not from the fault) and read a
# new call from there; cut after the marker, it could not.
@pytest.mark.parametrize(
    ("fmt", "text", "offset"),
    [
        ("granite", '<|tool_call|>[{"":"<tool_call>[{xyz\n', 35),
        ("hermes", '<tool_call>{"":"","":"<tool_call>\n', 33),
    ],
)
def test_bug16_a_json_body_does_not_go_back_to_a_marker_it_read(
    fmt: str, text: str, offset: int
) -> None:
    whole = _text_outcome([text], fmt)
    assert whole[3] == [("malformed-call", offset)]  # one discard, at the raw newline
    for cut in range(len(text) + 1):
        assert _text_outcome([text[:cut], text[cut:]], fmt) == whole, cut


# Bug 17 (fixed): a body that ends its call (mistral v11's ``[ARGS]{…}``) did not end it when it
# ended at the next call's marker (a fault in the arguments, or no arguments at all): the next
# call's header named the open call, and its arguments went to that call (read whole) or were
# dropped; cut after the marker, the next call stood.
@pytest.mark.parametrize(
    ("text", "calls", "discards"),
    [
        (
            '[TOOL_CALLS]add{"a""a": 3, [TOOL_CALLS]mul{"a": 1}',
            [("mul", {"a": 1})],
            [("malformed-arguments", 19)],
        ),
        (
            '[TOOL_CALLS]add[ARGS][TOOL_CALLS]mul[ARGS]{"a": 1}',
            [("add", {}), ("mul", {"a": 1})],
            [],
        ),
    ],
)
def test_bug17_a_call_that_ends_with_its_body_ends_at_the_next_calls_marker(
    text: str, calls: list[tuple[str, object]], discards: list[tuple[str, int]]
) -> None:
    whole = _text_outcome([text], "mistral")
    assert (whole[0], whole[3]) == (calls, discards)
    for cut in range(len(text) + 1):
        assert _text_outcome([text[:cut], text[cut:]], "mistral") == whole, cut


# Bug 18 (fixed): a call object with a second arguments value moved where the core's faults in
# the first are placed (the reader kept the last place the arguments began): read whole, a
# fault was placed from the second; fed in pieces, from the first.
def test_bug18_a_second_arguments_value_does_not_move_the_faults() -> None:
    text = '<tool_call>{"name": "f", "arguments": {"a": 1], "arguments": {}}</tool_call>'
    whole = _text_outcome([text], "hermes")
    assert whole[3] == [("malformed-arguments", text.index("]"))]
    for cut in range(len(text) + 1):
        assert _text_outcome([text[:cut], text[cut:]], "hermes") == whole, cut


# Bug 19 (fixed): arguments written as a JSON string (decoded, so not copied from the text)
# followed by an arguments object: read whole, the core's fault in the string's text was placed
# from where the object began; in pieces it stayed a position in the arguments.
def test_bug19_arguments_not_copied_from_the_text_are_never_placed_in_it() -> None:
    text = '<tool_call>{"name": "f", "arguments": "x", "arguments": {}}</tool_call>'
    whole = _text_outcome([text], "hermes")
    assert whole[3] == [("malformed-arguments", 0)]  # offset 0 of the arguments "x{}"
    for cut in range(len(text) + 1):
        assert _text_outcome([text[:cut], text[cut:]], "hermes") == whole, cut


# Bug 20 (fixed): a position in text held from earlier pieces got the line of the current
# piece's start: wrong when a line break lay between (lead whitespace with line breaks before a
# header; a pythonic name decided on after a line break). The reader now keeps where the lines
# start back to the oldest position it may still place a fault at.
@pytest.mark.parametrize(
    ("fmt", "text", "where"),
    [
        ("mistral", "[TOOL_CALLS]\n\n a b{}", ("malformed-call", 12, 1, 13)),
        ("pythonic", '[calc(json\n{"city": "SF"})]', ("malformed-arguments", 6, 1, 7)),
    ],
)
def test_bug20_a_fault_in_held_text_keeps_its_line(
    fmt: str, text: str, where: tuple[str, int, int, int]
) -> None:
    for chunks in [list(text)] + [[text[:cut], text[cut:]] for cut in range(len(text) + 1)]:
        (discarded,) = stitch(chunks, text_format=fmt).collect().discarded
        error = discarded.error
        assert isinstance(error, MalformedArguments)  # MalformedCall is one
        assert (error.code, error.offset, error.line, error.column) == where, chunks


# -- bugs 21-24: the core (review of 2026-12-05): the outcome of a call with declared tools must
# -- not depend on how its arguments are cut into fragments -----------------------------------


def _core_outcome(
    make: type[Assembler], schema: dict[str, Any], fragments: list[str], limits: Limits | None
) -> list[tuple[str, str, object]]:
    """Every event about the call but its deltas: (event, code or arguments, offset)."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    asm = make(tools=tools, limits=limits) if limits is not None else make(tools=tools)
    events = asm.feed(Delta(index=0, id="c1", name="f"))
    for fragment in fragments:
        events += asm.feed(Delta(index=0, arguments=fragment))
    events += asm.finish("tool_calls")
    outcome: list[tuple[str, str, object]] = []
    for e in events:
        if isinstance(e, (CallDiscarded, CallWarning)):
            outcome.append((type(e).__name__, e.error.code, getattr(e.error, "offset", None)))
        elif isinstance(e, CallReady):
            outcome.append(("CallReady", e.call.arguments, None))
    return outcome


def _core_cuts(
    schema: dict[str, Any], text: str, limits: Limits | None = None
) -> list[tuple[str, str, object]]:
    """The whole text's outcome, after checking that every cut into two fragments and the cut
    into one-character fragments give it too, on the native and the pure-Python assembler."""
    from toolstitch.testing import PythonAssembler

    whole = _core_outcome(PythonAssembler, schema, [text], limits)
    cuts = [[text[:cut], text[cut:]] for cut in range(1, len(text))] + [list(text), [text]]
    for make in dict.fromkeys((Assembler, PythonAssembler)):
        for fragments in cuts:
            assert _core_outcome(make, schema, fragments, limits) == whole, (make, fragments)
    return whole


# Bug 21 (fixed, json.pointer.locate_pointer): a complete key that ended the text before its
# value started was not located: a refused key (``additionalProperties: false``) cut after it
# (``{"mood"`` + ``:1}``) had offset None, read whole offset 1.
@pytest.mark.parametrize(
    ("text", "offset"), [('{"mood":1}', 1), ('{"a": {"mood" : [1]}}', 7), ('{"x": 1, "mood":1}', 9)]
)
def test_bug21_a_refused_key_is_placed_when_the_text_ends_after_it(text: str, offset: int) -> None:
    closed = {"type": "object", "properties": {"x": {}}, "additionalProperties": False}
    schema = {"type": "object", "properties": {"x": {}, "a": closed}, "additionalProperties": False}
    assert _core_cuts(schema, text) == [("CallDiscarded", "schema-violation", offset)]


# Bug 22 (fixed, the streaming check numbers each key's occurrences and locate_pointer takes
# the one numbered): with a duplicate key, the violation was placed at the key's last
# occurrence in the text seen so far - its last one read whole, the violating one when the text
# was cut after it. The rule: a violation is placed at the value (or key) that violates.
@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ('{"a":"x","a":1}', 13),  # the second value violates
        ('{"a":1,"a":"x"}', 5),  # the first value violates
        ('{"o":{"a":1},"o":{"a":"x"}}', 10),  # in the first of two objects under one key
        ('{"o":{"a":"x"},"o":{"a":"y","a":[]}}', 32),  # the second "a" of the second "o"
        ('{"b":1,"b":2}', 1),  # a refused key: its first occurrence
    ],
)
def test_bug22_a_violation_is_placed_at_the_duplicate_that_violates(text: str, offset: int) -> None:
    inner = {"type": "object", "properties": {"a": {"type": "string"}}}
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "o": inner},
        "additionalProperties": False,
    }
    assert _core_cuts(schema, text) == [("CallDiscarded", "schema-violation", offset)]


# Bug 23 (fixed, Assembler._trailing): text after the object in the fragment that closed it
# gave a trailing-arguments warning after the final check's discard; cut before the text, the
# discarded call heard nothing more. The rule (the core's, and the fuzz harness's "nothing
# about a call comes after its end"): a discarded call's text is not read any further, so no
# warning about it follows its CallDiscarded. (A call that stands still gets its warning.)
@pytest.mark.parametrize(
    ("text", "outcome"),
    [
        ('{"path":"A"}x', [("CallDiscarded", "schema-violation", 8)]),
        ('{"path":"A"} {"x"', [("CallDiscarded", "schema-violation", 8)]),
        (
            '{"path":"a"}x',
            [("CallReady", '{"path":"a"}', None), ("CallWarning", "trailing-arguments", 12)],
        ),
    ],
)
def test_bug23_no_warning_after_a_discard(text: str, outcome: list[object]) -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string", "pattern": "^[a-z]+$"}}}
    assert _core_cuts(schema, text) == outcome


# Bug 24 (fixed, json.diagnose.diagnose with ``exponents``): a number whose exponent Decimal
# cannot hold (limit-exceeded, "number_exponent") had no offset, so a violation before it in
# the same fragment was lost. The fault is placed where the number ends (where the exponent is
# known out of range; a digit past max_number_digits inside it comes first), and the first
# fault by position wins, as for the other limits.
_HUGE = "1e99999999999999999999"


@pytest.mark.parametrize(
    ("text", "limits", "outcome"),
    [
        ('{"a":1,"b":' + _HUGE + "}", None, ("schema-violation", 5)),
        ('{"a":' + _HUGE + "}", None, ("schema-violation", 5)),
        ('{"b":' + _HUGE + ',"a":1}', None, ("limit-exceeded", 27)),
        ('{"b":' + _HUGE + "x", None, ("limit-exceeded", 27)),
        # A digit past max_number_digits in the exponent is a fault before the number's end.
        ('{"b":' + _HUGE + "}", Limits(max_number_digits=10), ("limit-exceeded", 17)),
    ],
)
def test_bug24_a_number_out_of_range_is_placed_and_the_first_fault_wins(
    text: str, limits: Limits | None, outcome: tuple[str, int]
) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {}}}
    assert _core_cuts(schema, text, limits) == [("CallDiscarded", *outcome)]
