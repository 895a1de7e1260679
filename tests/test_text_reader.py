"""The text reader through the front doors: the JSON-bodied formats, the policies of
docs/text-formats.md, positions in the model's text, and the declarations' checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolstitch import (
    TEXT_FORMATS,
    ArgumentsDelta,
    CallDiscarded,
    CallReady,
    CallStarted,
    Limits,
    MalformedArguments,
    MalformedCall,
    StitchResult,
    StreamWarning,
    TextDelta,
    TruncatedArguments,
    astitch,
    cli,
    stitch,
)
from toolstitch.text.bodies import variants_of
from toolstitch.text.formats import FormatError, compile_format, text_format
from toolstitch.text.reader import MAX_LEAD_CHARS

KIMI_BEGIN = "<|tool_calls_section_begin|>"
KIMI_END = "<|tool_calls_section_end|>"


def read(fmt: str, text: str, *, step: int = 0, **options: Any) -> StitchResult:
    """``text`` read as ``fmt``, whole or ``step`` characters at a time."""
    chunks = [text] if not step else [text[i : i + step] for i in range(0, len(text), step)]
    return stitch(iter(chunks), text_format=fmt, **options).collect()


def calls(result: StitchResult) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.parsed_arguments) for c in result.calls]


def codes(result: StitchResult) -> list[str]:
    return [d.error.code for d in result.discarded]


def warnings(result: StitchResult) -> list[str]:
    return [w.error.code for w in result.warnings]


# -- the JSON-bodied formats --------------------------------------------------------------


@pytest.mark.parametrize("step", [0, 1, 3])
def test_hermes_calls_text_and_reasoning(step: int) -> None:
    text = (
        "<think>weather?</think>Sure. <tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "SF"}}\n</tool_call>'
        '<tool_call>{"arguments": {"n": [1, 2]}, "name": "count"}</tool_call> Done.'
    )
    result = read("hermes", text, step=step)
    assert calls(result) == [("get_weather", {"city": "SF"}), ("count", {"n": [1, 2]})]
    assert result.text == "Sure.  Done."
    assert result.reasoning == "weather?"
    assert [b.text for b in result.reasoning_blocks] == ["weather?"]
    assert not result.discarded
    assert not result.warnings


def test_a_marker_inside_a_json_string_does_not_end_the_call() -> None:
    text = '<tool_call>{"name": "write", "arguments": {"s": "</tool_call><tool_call>"}}</tool_call>'
    for step in (0, 1, 2, 5):
        assert calls(read("hermes", text, step=step)) == [
            ("write", {"s": "</tool_call><tool_call>"})
        ]


def test_a_call_is_ready_at_the_byte_that_closes_its_arguments() -> None:
    pieces = ['<tool_call>{"name": "f", "arguments": {"a": 1', "}", "}\n</tool_call>"]
    events = list(stitch(iter(pieces), text_format="hermes"))
    ready = [i for i, e in enumerate(events) if isinstance(e, CallReady)]
    deltas = [e for e in events if isinstance(e, ArgumentsDelta)]
    assert len(ready) == 1
    assert deltas[-1].fragment == "}"
    assert events.index(deltas[-1]) < ready[0]


def test_a_zero_argument_call_is_the_empty_object() -> None:
    assert calls(read("hermes", '<tool_call>{"name": "now"}</tool_call>')) == [("now", {})]
    kimi = (
        f"{KIMI_BEGIN}<|tool_call_begin|>functions.now:0<|tool_call_argument_begin|>"
        f"<|tool_call_end|>{KIMI_END}"
    )
    assert calls(read("kimi-k2", kimi)) == [("now", {})]


@pytest.mark.parametrize("step", [0, 1])
def test_a_malformed_body_is_discarded_where_it_broke_and_its_siblings_stand(step: int) -> None:
    text = (
        "Intro\n"
        '<tool_call>{"name": "a", "arguments": {"x": tru}}</tool_call>\n'
        '<tool_call>{"name": "b", "arguments": {"y": 2}}</tool_call>'
    )
    result = read("hermes", text, step=step)
    assert calls(result) == [("b", {"y": 2})]
    (discarded,) = result.discarded
    error = discarded.error
    assert isinstance(error, MalformedArguments)
    assert error.code == "malformed-arguments"
    bad = text.index("tru}") + 3  # the first character no JSON can have there
    assert (error.offset, error.line, error.column) == (bad, 2, bad - text.index("\n"))
    assert "of the model's text" in error.message


def test_a_close_marker_where_the_arguments_go_on_discards_that_call_only() -> None:
    text = (
        '<tool_call>{"name": "a", "arguments": {"x": 1</tool_call>'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    )
    for step in (0, 1, 4):
        result = read("hermes", text, step=step)
        assert calls(result) == [("b", {})]
        assert codes(result) == ["malformed-arguments"]
        error = result.discarded[0].error
        assert isinstance(error, MalformedArguments)
        assert error.offset == text.index("</tool_call>")


def test_markup_that_is_not_the_format_is_a_malformed_call() -> None:
    text = 'ok <tool_call>["get_weather"]</tool_call><tool_call>{"name": "b"}</tool_call>'
    result = read("hermes", text)
    assert calls(result) == [("b", {})]
    (discarded,) = result.discarded
    assert isinstance(discarded.error, MalformedCall)
    assert discarded.error.offset == text.index("[")
    assert discarded.error.expected == "{"


def test_a_raw_control_character_in_a_string_is_placed_and_the_next_call_stands() -> None:
    text = (
        '<tool_call>{"name": "a", "arguments": {"s": "two\nlines"}}</tool_call>'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    )
    result = read("hermes", text, step=1)
    assert calls(result) == [("b", {})]
    assert codes(result) == ["malformed-arguments"]
    error = result.discarded[0].error
    assert isinstance(error, MalformedArguments)
    assert error.offset == text.index("\n")


def test_a_call_cut_by_the_end_of_the_output_is_discarded_never_dispatched() -> None:
    result = read("hermes", '<tool_call>{"name": "f", "arguments": {"a": "x')
    assert not result.calls
    (discarded,) = result.discarded
    assert isinstance(discarded.error, TruncatedArguments)
    assert discarded.error.ending == "incomplete"
    # Cut before anything of the arguments came: still never the empty object.
    cut = read("qwen25", '<tool_call>{"name": "f"')
    assert not cut.calls
    assert codes(cut) == ["truncated-arguments"]


def _completions(pieces: list[str], finish: str) -> bytes:
    chunks = [
        {"object": "text_completion", "choices": [{"index": 0, "text": p, "finish_reason": None}]}
        for p in pieces
    ]
    chunks.append(
        {
            "object": "text_completion",
            "choices": [{"index": 0, "text": "", "finish_reason": finish}],
        }
    )
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + b"data: [DONE]\n\n"


def test_a_legacy_completions_stream_is_read_as_the_format() -> None:
    body = _completions(
        ['Hi <tool_call>{"name": "f", ', '"arguments": {"a": 1}}</tool_call>'], "stop"
    )
    result = stitch([body], text_format="hermes").collect()
    assert result.provider == "openai-completions"
    assert calls(result) == [("f", {"a": 1})]
    assert result.text == "Hi "
    assert result.finish_reason == "stop"
    cut = stitch(
        [_completions(['<tool_call>{"name": "f", "arguments": {'], "length")], text_format="hermes"
    ).collect()
    assert [(d.error.code, getattr(d.error, "ending", None)) for d in cut.discarded] == [
        ("truncated-arguments", "length")
    ]


def test_calls_in_a_provider_streams_text_are_calls() -> None:
    def chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
        delta = {} if content is None else {"content": content}
        return {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    stream = [
        chunk("Let me check. <tool_call>"),
        chunk('{"name": "f", "arguments": {}}</tool_call>'),
        chunk(None, "stop"),
    ]
    result = stitch(stream, text_format="hermes").collect()
    assert [(c.index, c.name) for c in result.calls] == [(65536, "f")]
    assert result.text == "Let me check. "
    assert warnings(result) == ["quirk-call-in-text"]
    # Without text_format the text is text, markup and all.
    plain = stitch(stream).collect()
    assert not plain.calls
    assert "<tool_call>" in plain.text


def test_a_tolerated_variant_is_read_and_reported_once() -> None:
    one = '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>'
    result = read("hermes", one + one)
    assert calls(result) == [("f", {"a": 1}), ("f", {"a": 1})]
    assert warnings(result) == ["quirk-text-variant"]
    assert "arguments-as-string" in result.warnings[0].error.message


def test_stray_text_between_markers_is_dropped_with_a_warning() -> None:
    result = read("hermes", '<tool_call>{"name": "f", "arguments": {}}}\n</tool_call>after')
    assert calls(result) == [("f", {})]
    assert result.text == "after"
    assert warnings(result) == ["quirk-text-stray"]
    assert "'}\\n'" in result.warnings[0].error.message


def test_primed_reasoning_starts_the_output_inside_reasoning() -> None:
    text = 'let me think</think>The answer.<tool_call>{"name": "f"}</tool_call>'
    primed = read("hermes", text, primed_reasoning=True)
    assert primed.reasoning == "let me think"
    assert primed.text == "The answer."
    assert calls(primed) == [("f", {})]
    unprimed = read("hermes", text)
    assert unprimed.reasoning == ""
    assert unprimed.text == "let me thinkThe answer."
    unterminated = read("hermes", "<think>still going", step=2)
    assert unterminated.reasoning == "still going"
    assert unterminated.text == ""


def test_a_call_inside_reasoning_ends_the_reasoning() -> None:
    result = read("hermes", '<think>I will call<tool_call>{"name": "f"}</tool_call>ok')
    assert result.reasoning == "I will call"
    assert calls(result) == [("f", {})]
    assert result.text == "ok"


def test_tools_bring_the_unknown_tool_and_schema_checks() -> None:
    tools = {"f": {"type": "object", "properties": {"a": {"type": "integer"}}}}
    text = (
        '<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "f", "arguments": {"a": "x"}}</tool_call>'
        '<tool_call>{"name": "f", "arguments": {"a": 3}}</tool_call>'
    )
    result = read("hermes", text, tools=tools)
    assert calls(result) == [("f", {"a": 3})]
    assert codes(result) == ["unknown-tool", "schema-violation"]


def test_id_factory_names_the_calls_of_a_text_format() -> None:
    result = read(
        "hermes",
        '<tool_call>{"name": "f"}</tool_call><tool_call>{"name": "g"}</tool_call>',
        id_factory=lambda index, position: f"call_{position:09d}",
    )
    assert [c.id for c in result.calls] == ["call_000000000", "call_000000001"]


def test_arguments_before_the_name_are_bounded() -> None:
    text = '<tool_call>{"arguments": {"s": "' + "x" * 200 + '"}, "name": "f"}</tool_call>'
    result = read("hermes", text, limits=Limits(max_argument_chars=100))
    assert not result.calls
    assert codes(result) == ["malformed-call"]
    assert calls(read("hermes", text)) == [("f", {"s": "x" * 200})]


def test_kimi_headers_are_the_call_ids_and_their_variants_are_named() -> None:
    def kimi(header: str, args: str = '{"a": 1}') -> str:
        return (
            f"{KIMI_BEGIN}<|tool_call_begin|>{header}<|tool_call_argument_begin|>{args}"
            f"<|tool_call_end|>{KIMI_END}"
        )

    result = read("kimi-k2", kimi("functions.get_weather:7") + "done", step=3)
    assert [(c.id, c.name) for c in result.calls] == [("functions.get_weather:7", "get_weather")]
    assert result.text == "done"
    odd = read("kimi-k2", kimi("functions_get_weather_1") + kimi("functionsexec5"))
    assert [c.name for c in odd.calls] == ["get_weather", "exec"]
    assert len(odd.warnings) == 2
    bare = read("kimi-k2", kimi("0"))
    assert not bare.calls
    assert codes(bare) == ["malformed-call"]
    singular = "<|tool_call_section_begin|>" + kimi("functions.f:0")[len(KIMI_BEGIN) :]
    assert calls(read("kimi-k2", singular)) == [("f", {"a": 1})]


def test_deepseek_formats() -> None:
    v3 = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"location": "Tokyo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    v31 = (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"location":"Paris"}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>完成 ✅"
    )
    for step in (0, 1):
        assert calls(read("deepseek-v3", v3, step=step)) == [("get_weather", {"location": "Tokyo"})]
        result = read("deepseek_v31", v31, step=step)
        assert calls(result) == [("get_weather", {"location": "Paris"})]
        assert result.text == "完成 ✅"


def test_mistral_both_forms() -> None:
    old = '[TOOL_CALLS][{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]'
    new = 'Hi[TOOL_CALLS]a[ARGS]{"x": 1}[TOOL_CALLS]b[CALL_ID]abc123xyz[ARGS]{}'
    for step in (0, 1):
        assert calls(read("mistral", old, step=step)) == [("a", {"x": 1}), ("b", {})]
        result = read("mistral", new, step=step)
        assert calls(result) == [("a", {"x": 1}), ("b", {})]
        assert result.text == "Hi"
        assert result.calls[1].id == "abc123xyz"


def test_marker_less_formats_say_what_counts_as_a_call() -> None:
    answer = read("llama3-json", 'The JSON is {"a": 1}')
    assert not answer.calls
    assert answer.text == 'The JSON is {"a": 1}'
    two = read(
        "llama3-json", '{"name": "a", "parameters": {"q": 1}}; {"name": "b", "parameters": {}}'
    )
    assert calls(two) == [("a", {"q": 1}), ("b", {})]
    tagged = read("llama3-json", 'x<|python_tag|>{"name": "a", "parameters": {}}')
    assert calls(tagged) == [("a", {})]
    assert tagged.text == "x"


def test_a_lead_holds_a_bounded_run_of_whitespace() -> None:
    """Whitespace before a marker-less call is held (and dropped before the call) up to
    ``MAX_LEAD_CHARS``; a longer run opens nothing, in any chunking: it is text."""
    call = '{"name": "a", "parameters": {"q": 1}}'
    short = " " * MAX_LEAD_CHARS + call
    long = " \n" * (MAX_LEAD_CHARS // 2) + " " + call
    for step in (0, 1, 7, MAX_LEAD_CHARS):
        assert calls(read("llama3-json", short, step=step)) == [("a", {"q": 1})]
        held = read("llama3-json", long, step=step)
        assert not held.calls
        assert held.text == long
        pythonic = read("pythonic", long.replace(call, "[f(a=1)]"), step=step)
        assert not pythonic.calls


def test_granite_and_phi4_lists() -> None:
    granite = '<|tool_call|>[{"arguments": {"city": "SF"}, "name": "get_weather"}]'
    assert calls(read("granite", granite, step=1)) == [("get_weather", {"city": "SF"})]
    phi = 'functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]'
    assert calls(read("phi4_mini_json", phi, step=1)) == [("get_weather", {"city": "Tokyo"})]
    assert read("phi4-mini", "use functools or itertools").text == "use functools or itertools"


def test_harmony_channels_and_recipients() -> None:
    text = (
        "<|channel|>analysis<|message|>User asks.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"location": "SF"}<|call|>'
    )
    for step in (0, 1):
        result = read("harmony", text, step=step)
        assert calls(result) == [("get_weather", {"location": "SF"})]
        assert result.reasoning == "User asks."
    final = read("openai", "<|channel|>final<|message|>Hello<|return|>")
    assert final.text == "Hello"
    assert not final.calls
    in_role = read(
        "harmony", ' to=functions.f<|channel|>commentary json<|message|>{"a": 1}<|call|>'
    )
    assert calls(in_role) == [("f", {"a": 1})]
    assert "harmony-recipient-in-role" in in_role.warnings[0].error.message


def test_every_started_call_ends_once_through_astitch() -> None:
    import asyncio

    async def pieces() -> Any:
        for piece in ['<tool_call>{"name": "f", "argu', 'ments": {"a": [1, 2]}}</tool_call>x']:
            yield piece

    async def main() -> list[Any]:
        return [event async for event in astitch(pieces(), text_format="hermes")]

    events = asyncio.run(main())
    started = [e.index for e in events if isinstance(e, CallStarted)]
    ended = [e.index for e in events if isinstance(e, (CallReady, CallDiscarded))]
    assert started == ended == [0]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "x"


# -- names and declarations -------------------------------------------------------------


def test_names_and_aliases() -> None:
    assert text_format("qwen25") is TEXT_FORMATS["hermes"]
    assert text_format("deepseek_v31") is TEXT_FORMATS["deepseek-v3.1"]
    with pytest.raises(ValueError, match=r"unknown text format 'nope'.*hermes"):
        stitch(iter(["x"]), text_format="nope")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_issue_names_every_format_and_alias() -> None:
    wanted = {
        "hermes": "hermes", "qwen3-coder": "qwen3_coder", "mistral": "mistral",
        "llama3-json": "llama3_json", "pythonic": "llama4_pythonic",
        "deepseek-v3": "deepseek_v3", "deepseek-v3.1": "deepseek_v31",
        "deepseek-v3.2": "deepseek_v32", "kimi-k2": "kimi_k2", "glm-4.5": "glm45",
        "glm-4.7": "glm47", "minimax-m2": "minimax_m2", "harmony": "openai",
        "granite": "granite", "seed-oss": "seed_oss", "gemma4": "gemma4",
        "phi4-mini": "phi4_mini_json",
    }  # fmt: skip
    for name, alias in wanted.items():
        assert text_format(alias) is TEXT_FORMATS[name]
    assert text_format("qwen3_xml") is TEXT_FORMATS["qwen3-coder"]
    assert text_format("pythonic") is TEXT_FORMATS["pythonic"]


def _declaration(**states: Any) -> dict[str, Any]:
    return {"name": "t", "states": states}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("states", "message"),
    [
        ({"content": {"text": "content", "on": {"<a>": "nowhere"}}}, "no state 'nowhere'"),
        ({"content": {"text": "content", "on": {"<a>": "content", "x<a>": "content"}}}, "inside"),
        ({"content": {"body": "nope", "then": "content"}}, "no body grammar"),
        ({"content": {"header": "nope", "on": {"a": "content"}}}, "no header rule"),
        (
            {"content": {"text": "content", "on": {"a": {"to": "content", "variant": "v"}}}},
            "not declared",
        ),
        ({"content": {"text": "lead", "on": {"a": "content"}}}, "'else'"),
        ({"content": {"text": "words"}}, "'text' is one of"),
    ],
)
def test_a_declaration_a_reader_could_not_follow_is_refused(
    states: dict[str, Any], message: str
) -> None:
    with pytest.raises(FormatError, match=message):
        compile_format(_declaration(**states))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_format_says_what_it_is_and_starts_in_a_state() -> None:
    for fmt in TEXT_FORMATS.values():
        assert fmt.summary, fmt.name
        assert fmt.models, fmt.name
        assert fmt.start in fmt.states


# -- the command line ---------------------------------------------------------------------


def test_replay_reads_a_models_raw_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "output.txt"
    path.write_text(
        '<think>hm</think>\nOK.\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>\n',
        encoding="utf-8",
    )
    status = cli.main(["replay", str(path), "--text-format", "hermes", "--json"])
    found = json.loads(capsys.readouterr().out)
    assert status == 0
    assert found["provider"] == "text"
    assert [(c["name"], json.loads(c["arguments"])) for c in found["calls"]] == [("f", {"a": 1})]


def test_replay_reads_a_stream_whose_text_holds_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "stream.sse"
    path.write_bytes(_completions(['<tool_call>{"name": "f", "arguments": {'], "length"))
    status = cli.main(["replay", str(path), "--text-format", "hermes", "--json"])
    found = json.loads(capsys.readouterr().out)
    assert status == 1
    assert found["provider"] == "openai-completions"
    assert [d["code"] for d in found["discarded"]] == ["truncated-arguments"]


def test_an_event_fed_to_a_text_stream_is_refused() -> None:
    with pytest.raises(TypeError, match="str pieces"):
        stitch(iter(["x", {"a": 1}]), "text", text_format="hermes").collect()


def test_a_stream_warning_is_a_warning_not_an_error() -> None:
    result = read("hermes", '<tool_call>{"name": "f"}}</tool_call>')
    assert all(isinstance(w, StreamWarning) for w in result.warnings)


def test_primed_reasoning_is_refused_by_a_format_without_reasoning() -> None:
    with pytest.raises(ValueError, match="has no reasoning"):
        read("phi4-mini", "functools[]", primed_reasoning=True)
    primed = read("glm-4.5", "thinking</think>ok", primed_reasoning=True)
    assert primed.reasoning == "thinking"
    assert primed.text == "ok"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_format_declares_the_variants_its_bodies_may_report() -> None:
    """A variant a body grammar reports is one the format declares (and its docs list)."""
    for fmt in TEXT_FORMATS.values():
        for state in fmt.states.values():
            if state.kind == "body":
                assert state.grammar is not None
                missing = variants_of(state.grammar, state.options) - set(fmt.variants)
                assert not missing, (fmt.name, state.name, missing)


@pytest.mark.parametrize(
    ("fmt", "text", "variant"),
    [
        ("mistral", '[TOOL_CALLS][{"name": "f", "arguments": "{}"}]', "arguments-as-string"),
        (
            "qwen3-coder",
            "<tool_call><function=f>\n<parameter=a>1</parameter></function>",
            "inline-value",
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</tool_call>",
            "missing-call-close",
        ),
    ],
)
def test_a_reported_variant_is_declared(fmt: str, text: str, variant: str) -> None:
    warnings = [str(w.error) for w in stitch([text], text_format=fmt).collect().warnings]
    assert any(f"variant {variant!r}" in w for w in warnings), warnings
    assert variant in TEXT_FORMATS[fmt].variants
