"""The ``gemma`` body grammar (toolstitch.text.bodies.gemma) and the ``gemma4`` text format.

The grammar is driven directly through a recording ``CallSink``; positions are recorded as
offsets into the whole text, so every chunking must report exactly the same thing. A body's
text is what follows ``<|tool_call>`` and runs past its end: what follows the call's ``}`` must
be left to the reader (``feed`` returns where the body ended).

The reference for generated calls is the JSON value they were written from: any value written
as Gemma's syntax (delimited, bare or JSON-quoted strings, bare scalars, nested objects and
arrays, whitespace drawn) must read back as that value, in any chunking.

End to end, through ``toolstitch.stitch(..., text_format="gemma4")``, at the bottom. Cases
ported as data from the peers name their source: Ollama ``model/parsers/gemma4_test.go``
(``TestGemma4Parser``, ``TestGemma4ArgsToJSON`` and the named tests), vLLM
``tests/tool_parsers/test_gemma4_tool_parser.py`` and vllm-project/vllm#48678.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolstitch
from strategies import per_pass
from text_sink import Event, Recorder, cut, expanded, joined, same
from toolstitch.text.bodies import BODIES
from toolstitch.text.bodies.gemma import MAX_DEPTH, VARIANTS
from toolstitch.text.formats import TEXT_FORMATS, text_format

FORMATS = Path(__file__).resolve().parents[1] / "grammars" / "text-formats"
Q = '<|"|>'  # Gemma 4's string delimiter
CLOSE = "<tool_call|>"
OPEN = "<|tool_call>"
OPTIONS: dict[str, Any] = {"delimiter": Q, "until": [CLOSE, OPEN]}


def read(
    pieces: Iterable[str], options: dict[str, Any] | None = None, limit: int = 10_000
) -> tuple[list[Event], int | None]:
    """Feed ``pieces`` to a body: its joined reports and where it ended in the whole text
    (``None``: it did not end, and was closed; text it held from earlier pieces and gives
    back, ``returned``, counts as not read)."""
    sink = Recorder(VARIANTS, limit=limit)
    body = BODIES["gemma"](sink, OPTIONS if options is None else options)
    for piece in pieces:
        end = body.feed(piece)
        if end >= 0:
            assert 0 <= end <= len(piece)
            returned = getattr(body, "returned", "")  # held text after the end, given back
            assert not returned or end == 0
            return joined(sink.events), sink.offset + end - len(returned)
        sink.offset += len(piece)
    body.close()
    return joined(sink.events), None


def result(events: list[Event]) -> tuple[str | None, Any]:
    """The one call of a body: ``(name, parsed arguments)``, ``(name, ("failed", at,
    markup))`` or ``(name, ("open", arguments so far))``."""
    name: str | None = None
    args = ""
    for event in events:
        if event[0] == "name":
            name = event[1]
        elif event[0] == "args":
            args += event[1]
        elif event[0] == "end":
            return name, json.loads(args)
        elif event[0] == "fail":
            return name, ("failed", event[1], event[2])
    return name, ("open", args)


def check_every_chunking(text: str, options: dict[str, Any] | None = None) -> None:
    """Whole, split in two anywhere, one character at a time: the same reports."""
    whole = read([text], options)
    assert read(list(text), options) == whole
    for k in range(len(text) + 1):
        assert read([text[:k], text[k:]], options) == whole, k


def check_cuts(text: str) -> None:
    """Cut anywhere, a body reports a prefix of what the whole text gives: nothing it takes
    back, no call ended or failed early."""
    full = expanded(read([text])[0])
    for k in range(len(text)):
        events, end = read([text[:k]])
        if end is None:
            got = expanded(events)
            assert got == full[: len(got)], k


# -- cases ---------------------------------------------------------------------------------

# Ollama TestGemma4ArgsToJSON: the arguments object as written, and what it holds.
OLLAMA_ARGS = [
    ('{location:<|"|>Paris<|"|>}', {"location": "Paris"}),
    ('{location:<|"|>Paris<|"|>,units:<|"|>metric<|"|>}', {"location": "Paris", "units": "metric"}),
    ("{value:42}", {"value": 42}),
    ("{enabled:true}", {"enabled": True}),
    ('{config:{enabled:true,name:<|"|>test<|"|>}}', {"config": {"enabled": True, "name": "test"}}),
    (
        "{connections:{Basic LLM Chain:{main:[]}, Ollama Chat Model:{main:[]}}}",
        {"connections": {"Basic LLM Chain": {"main": []}, "Ollama Chat Model": {"main": []}}},
    ),
    ('{ display name \t :<|"|>Demo<|"|>}', {"display name": "Demo"}),
    ('{节点 名称:<|"|>Demo<|"|>}', {"节点 名称": "Demo"}),
    ("{display\tname:1}", {"display\tname": 1}),
    (
        '{<|"|>Basic LLM Chain<|"|>:1,"Ollama Chat Model":2}',
        {"Basic LLM Chain": 1, "Ollama Chat Model": 2},
    ),
    (
        '{edits:[{ newText:<|"|>a<|"|>, oldText:<|"|>b<|"|>} ]}',
        {"edits": [{"newText": "a", "oldText": "b"}]},
    ),
    (
        '{edits:[\n  {newText:<|"|>a<|"|>,\n   oldText:<|"|>b<|"|>}\n]}',
        {"edits": [{"newText": "a", "oldText": "b"}]},
    ),
    ('{items:[<|"|>a<|"|>,<|"|>b<|"|>]}', {"items": ["a", "b"]}),
    ('{items:[<|"|>a<|"|>,<|"|>b "quoted"<|"|>,<|"|>c<|"|>]}', {"items": ["a", 'b "quoted"', "c"]}),
    ("{}", {}),
    (
        '{name:<|"|>test<|"|>,count:5,active:true,tags:[<|"|>a<|"|>]}',
        {"name": "test", "count": 5, "active": True, "tags": ["a"]},
    ),
    ("{value:null}", {"value": None}),
    ('{command:<|"|>date\n<|"|>}', {"command": "date\n"}),
    ('{query:<|"|>say \\"hello\\"<|"|>}', {"query": 'say \\"hello\\"'}),
    ('{query:<|"|>say "hello", then "goodbye"<|"|>}', {"query": 'say "hello", then "goodbye"'}),
    ('{query:<|"|>a,b:{c}[d]<|"|>}', {"query": "a,b:{c}[d]"}),
    ('{path:<|"|>C:\\users\\bob<|"|>}', {"path": "C:\\users\\bob"}),
    ('{url:<|"|>https:\\/\\/example.com\\/a<|"|>}', {"url": "https:\\/\\/example.com\\/a"}),
    ('{s:<|"|>snowman:\\u2603<|"|>}', {"s": "snowman:\\u2603"}),
    ('{s:<|"|>bad \\uZZZZ escape<|"|>}', {"s": "bad \\uZZZZ escape"}),
    ('{q:"say \\"hi\\" and \\"bye\\""}', {"q": 'say "hi" and "bye"'}),
    (
        '{q:"keep , oldText: literal",note:<|"|>ok<|"|>}',
        {"q": "keep , oldText: literal", "note": "ok"},
    ),
    (
        '{meta:{title:<|"|>t "1"<|"|>,note:"n \\"2\\""},items:[<|"|>x "3"<|"|>,"y \\"4\\""]}',
        {"meta": {"title": 't "1"', "note": 'n "2"'}, "items": ['x "3"', 'y "4"']},
    ),
    # TestParseGemma4ToolCall_QuotedScalarsStayStrings / UnquotedScalarsKeepStructuredTypes
    ('{n:<|"|>1<|"|>,b:<|"|>true<|"|>,z:<|"|>null<|"|>}', {"n": "1", "b": "true", "z": "null"}),
    ("{n:1,b:true,z:null}", {"n": 1, "b": True, "z": None}),
    # ...ReferenceImplementationExample, ...RawQuotedStructuralString
    (
        '{detail_level:0,location:<|"|>Paris, France<|"|>,unit:<|"|>celsius<|"|>}',
        {"detail_level": 0, "location": "Paris, France", "unit": "celsius"},
    ),
    ('{q:"a,b:c"}', {"q": "a,b:c"}),
    # vLLM test_gemma4_tool_parser.py
    ("{score:3.14}", {"score": 3.14}),
    ('{record_map:{<|"|>3<|"|>:<|"|>new text<|"|>}}', {"record_map": {"3": "new text"}}),
    ("{items:[42,true,3.14]}", {"items": [42, True, 3.14]}),
    ('{s:<|"|>[<|"|>,t:<|"|>a]b<|"|>}', {"s": "[", "t": "a]b"}),
    # sgl-project/sglang test_gemma4_detector.py: the opening delimiter omitted
    ('{query:weather in Tokyo<|"|>}', {"query": "weather in Tokyo"}),
    ('{query:[<|"|>a<|"|>,b<|"|>]}', {"query": ["a", "b"]}),
    # vllm-project/vllm#48678: <|"|> tokens inside a value stand for quotes
    (
        '{code:<|"|>result = duckdb.sql(<|"|><|"|><|"|> SELECT 1 <|"|><|"|><|"|>).df()<|"|>,'
        'data_refs:[<|"|>df_1<|"|>]}',
        {"code": 'result = duckdb.sql(""" SELECT 1 """).df()', "data_refs": ["df_1"]},
    ),
    # bare text that is not a JSON scalar is a string
    (
        "{w: hello world ,t:True,n:108.,m:-0,u:1e999}",
        {"w": "hello world", "t": "True", "n": "108.", "m": 0, "u": 1e999},
    ),
]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(("written", "expected"), OLLAMA_ARGS)
def test_peer_arguments_read_as_written(written: str, expected: dict[str, Any]) -> None:
    text = "call:f" + written
    events, end = read([text + CLOSE + "Done."])
    assert end == len(text)
    name, args = result(events)
    assert name == "f"
    assert same(args, expected)
    check_every_chunking(text + CLOSE)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('call:get_weather{location:<|"|>London<|"|>}', "get_weather"),
        ('call:get-weather{location:<|"|>London<|"|>}', "get-weather"),  # vLLM: hyphens
        ('call:weather.get{location:<|"|>London<|"|>}', "weather.get"),  # vLLM: dots
        ('  call:ns:create {location:<|"|>London<|"|>}', "ns:create"),
    ],
)
def test_names(text: str, name: str) -> None:
    events, end = read([text + CLOSE])
    assert end == len(text)
    assert result(events) == (name, {"location": "London"})
    assert events[0] == ("start", len(text) - len(text.lstrip()))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_functiongemma_escape_delimiter() -> None:
    # vLLM docs: FunctionGemma (270M)
    text = 'call:get_weather{location:<escape>London<escape>,q:<escape>a<|"|>b<escape>}'
    options = {"delimiter": "<escape>", "until": ["<end_function_call>", "<start_function_call>"]}
    events, end = read([text + "<end_function_call>"], options)
    assert end == len(text)
    assert result(events) == ("get_weather", {"location": "London", "q": 'a<|"|>b'})
    check_every_chunking(text + "<end_function_call>", options)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_strings_stream_as_they_come() -> None:
    sink = Recorder(VARIANTS)
    body = BODIES["gemma"](sink, OPTIONS)
    body.feed('call:write{path:<|"|>a.txt<|"|>,text:<|"|>hello ')
    assert joined(sink.events)[-1] == ("args", '{"path":"a.txt","text":"hello ')
    body.feed('wor"ld\n<|"')
    assert joined(sink.events)[-1] == ("args", '{"path":"a.txt","text":"hello wor\\"ld\\n')
    assert body.feed("|>}<tool_call|>") == 3
    assert sink.events[-1] == ("end",)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_long_string_is_not_buffered() -> None:
    value = "x" * 200_000
    events, end = read(["call:f{a:<|", '"|>', value, '<|"|>}'], limit=100)
    assert end is not None
    assert result(events) == ("f", {"a": value})


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_delimiter_split_anywhere_is_found() -> None:
    text = 'call:f{a:<|"|>x<|"<|"|><|<|"|>,b:1}'
    events, _ = read([text])
    assert result(events) == ("f", {"a": 'x<|""<|', "b": 1})
    check_every_chunking(text)


# -- errors --------------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("text", "expected", "end"),
    [
        ("call:f{a 1}, x}<tool_call|>", ("f", ("failed", 10, False)), 15),  # no ':' before '}'
        ("call:f{a:[1}<tool_call|>rest", ("f", ("failed", 11, False)), 12),
        # a missing comma after a string: the string goes on, to the format's marker
        ('call:f{a:<|"|>x<|"|> b:2}<tool_call|>', ("f", ("failed", 25, False)), 25),
        ("call:f{a:1<|tool_call>call:g{}", ("f", ("failed", 10, False)), 10),
        ("call:f{:1}<tool_call|>", ("f", ("failed", 7, False)), 10),
        ("call:f{ \t :1}<tool_call|>", ("f", ("failed", 10, False)), 13),  # Ollama: not a key
        ("call:f{a:}<tool_call|>", ("f", ("failed", 9, False)), 10),
        ("call:f{a: ,b:1}<tool_call|>", ("f", ("failed", 10, False)), 15),
        ("call:f{a:1,}<tool_call|>", ("f", ("failed", 11, False)), 12),
        ("call:f{a:[1,]}<tool_call|>", ("f", ("failed", 12, False)), 14),
        ("call:f{a:1}}", ("f", {"a": 1}), 11),
        ('call:f{a:"x\\qy"}<tool_call|>', ("f", ("failed", 11, False)), 16),
        ('call:f{a:"x\\u12G4"}<tool_call|>', ("f", ("failed", 11, False)), 19),
        ('call:f{a:"x\ny"}<tool_call|>', ("f", ("failed", 11, False)), 15),
        # Ollama TestParseGemma4ToolCall_InvalidRawQuotedEscape
        (
            'call:open_file{path:"C:\\users\\bob\\file.txt"}<tool_call|>',
            ("open_file", ("failed", 23, False)),
            44,
        ),
        ("call:f<tool_call|>", (None, ("failed", 6, True)), 6),
        ("call:{a:1}<tool_call|>", (None, ("failed", 5, True)), 10),
        ("call f{a:1}<tool_call|>", (None, ("failed", 4, True)), 11),
        ("<tool_call|>", (None, ("open", "")), 0),
        ("nonsense here<tool_call|>more", (None, ("failed", 0, True)), 13),
        ("call:f x{a:1}<tool_call|>", (None, ("failed", 7, True)), 13),
    ],
)
def test_a_malformed_call_fails_where_it_breaks_and_the_body_ends_after_it(
    text: str, expected: tuple[str | None, Any], end: int
) -> None:
    events, got_end = read([text + "TAIL"])
    assert got_end == end
    assert result(events) == expected
    check_every_chunking(text + "TAIL")
    check_cuts(text)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_fault_position_is_the_first_bad_character_across_pieces() -> None:
    text = 'call:get_weather{city:<|"|>Paris<|"|>,{days:3}}'
    at = text.index(",{") + 1
    for k in range(len(text) + 1):
        events, _ = read([text[:k], text[k:]])
        assert ("fail", at, False) in events


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_cut_call_reports_nothing_more() -> None:
    # vLLM test_incomplete_tool_call: no <tool_call|>, no '}': the call is cut
    events, end = read(['call:get_weather{location:<|"|>London'])
    assert end is None
    assert result(events) == ("get_weather", ("open", '{"location":"London'))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_depth_is_bounded() -> None:
    ok = "call:f{a:" + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    assert result(read([ok])[0])[1] == {
        "a": json.loads("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))
    }
    deep = "call:f{a:" + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}<tool_call|>"
    events, end = read([deep + "TAIL"])
    assert result(events) == ("f", ("failed", 9 + MAX_DEPTH - 1, False))
    assert end == len(deep) - len(CLOSE)  # the skip ends after the call's '}'


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_key_a_bare_value_or_whitespace_longer_than_the_limit_fails_the_call() -> None:
    for text, at in [
        ("call:f{" + "k" * 30 + ":1}", 7),
        ("call:f{a:" + "v" * 30 + "}", 9),
        ('call:f{a:<|"|>x<|"|>' + " " * 30 + "}", 50),
        ("call:" + "f" * 30 + "{}", 5),
    ]:
        events, end = read([text + "<tool_call|>"], limit=20)
        assert result(events)[1] == ("failed", at, text.startswith("call:ff")), text
        assert end is not None


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_options_that_a_body_could_not_follow_are_refused() -> None:
    for options in (
        {"bogus": 1},
        {"delimiter": ""},
        {"delimiter": "<a<"},
        {"delimiter": ",x"},
        {"until": "<x>"},
        {"until": [""]},
        {"prefix": 3},
    ):
        with pytest.raises(ValueError, match="gemma body"):
            BODIES["gemma"](Recorder(VARIANTS), options)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_declaration_compiles_and_declares_what_its_body_reports() -> None:
    fmt = text_format("gemma4")
    assert fmt is TEXT_FORMATS["gemma4"]
    assert not fmt.opt_in
    assert fmt.reasoning
    declared = json.loads((FORMATS / "gemma4.json").read_text(encoding="utf-8"))
    for variant, meaning in VARIANTS.items():
        assert declared["variants"][variant] == meaning
    (call,) = [s for s in fmt.states.values() if s.kind == "body"]
    assert call.grammar == "gemma"
    assert dict(call.options) == OPTIONS


# -- generated calls -----------------------------------------------------------------------

KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}( [A-Za-z0-9_]{1,4})?", fullmatch=True)
TEXT = (
    st.lists(
        st.characters(exclude_categories=["Cs"], max_codepoint=0x1F64F)
        | st.sampled_from([*'<|"\\{}[],: \n', Q[:2], Q[:4], CLOSE[:5], "<escape"]),
        max_size=10,
    )
    .map("".join)
    .filter(lambda s: Q not in s and CLOSE not in s and OPEN not in s)
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS | TEXT, inner, max_size=3),
    max_leaves=8,
)
SPACE = st.sampled_from(["", "", " ", "\n", "\n  "])
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,8}", fullmatch=True)


def bare_ok(s: str) -> bool:
    """Whether bare text reads back as the string ``s``."""
    return (
        bool(s)
        and s == s.strip(" \t\r\n")
        and not any(c in s for c in ",}]")
        and s[0] not in '<"{[:'
        and not s.startswith(Q[0])
        and json.loads(json.dumps(s)) == s
        and not _is_json_scalar(s)
    )


def _is_json_scalar(s: str) -> bool:
    try:
        value = json.loads(s)
    except ValueError:
        return False
    return not isinstance(value, (str, list, dict))


@st.composite
def string(draw: st.DrawFn, value: str, key: bool = False) -> str:
    way = draw(st.integers(0, 3))
    if way == 1:
        return json.dumps(value, ensure_ascii=draw(st.booleans()))
    bare = way == 2 and bare_ok(value) and not (key and any(c in value for c in ":{["))
    return value if bare else Q + value + Q


@st.composite
def written(draw: st.DrawFn, value: Any) -> str:
    space = draw(SPACE)
    if isinstance(value, str):
        return draw(string(value))
    if isinstance(value, dict):
        items = [
            space + draw(string(k, key=True)) + space + ":" + space + draw(written(v)) + space
            for k, v in value.items()
        ]
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(space + draw(written(v)) + space for v in value) + "]"
    return json.dumps(value)


@st.composite
def calls_written(draw: st.DrawFn) -> tuple[str, str, dict[str, Any]]:
    arguments = draw(st.dictionaries(KEYS | TEXT, VALUES, max_size=4))
    name = draw(NAMES)
    return name, draw(SPACE) + "call:" + name + draw(written(arguments)), arguments


@per_pass(300, settings(deadline=None))
@given(calls_written(), st.lists(st.integers(0, 10_000), max_size=6))
def test_generated_calls_read_back_in_any_chunking(
    call: tuple[str, str, dict[str, Any]], points: list[int]
) -> None:
    name, text, arguments = call
    whole = read([text + CLOSE])
    events, end = whole
    assert end == len(text)
    got_name, got = result(events)
    assert got_name == name
    assert same(got, arguments)
    assert read(cut(text + CLOSE, points)) == whole
    assert read(list(text + CLOSE)) == whole


@per_pass(60, settings(deadline=None))
@given(calls_written())
def test_generated_calls_cut_anywhere_report_nothing_they_take_back(
    call: tuple[str, str, dict[str, Any]],
) -> None:
    check_cuts(call[1])


@per_pass(300, settings(deadline=None))
@given(
    st.lists(
        st.sampled_from(
            [
                "call:",
                "f",
                "{",
                "}",
                "[",
                "]",
                ",",
                ":",
                Q,
                Q[:3],
                '"',
                "\\",
                "\n",
                " ",
                "a",
                "1",
                "true",
                "u",
                "x",
                CLOSE,
                "<|tool_call>",
            ]
        ),
        max_size=30,
    ).map("".join),
    st.lists(st.integers(0, 100), max_size=5),
)
def test_any_text_reads_the_same_in_any_chunking(text: str, points: list[int]) -> None:
    whole = read([text])
    assert read(cut(text, points)) == whole
    assert read(list(text)) == whole
    _, args = result(whole[0])
    assert isinstance(args, dict) or args[0] in ("failed", "open")


# -- end to end ----------------------------------------------------------------------------


def stitched(text: str, pieces: int = 0, primed: bool = False) -> Any:
    chunks = [text] if not pieces else [text[i : i + pieces] for i in range(0, len(text), pieces)]
    return toolstitch.stitch(chunks, text_format="gemma4", primed_reasoning=primed).collect()


def outcome(result: Any) -> tuple[Any, ...]:
    return (
        [(c.name, c.parsed_arguments) for c in result.calls],
        result.text,
        result.reasoning,
        [d.error.code for d in result.discarded],
    )


PARIS = '<|tool_call>call:get_weather{location:<|"|>Paris<|"|>}<tool_call|>'
WEATHER = ("get_weather", {"location": "Paris"})

# Ollama TestGemma4Parser and the tests named in each comment.
E2E = [
    ("This is a simple response.", [], "This is a simple response.", ""),
    pytest.param(
        "<|channel>thought\nLet me think about this...<channel|>The answer is 42.",
        [],
        "The answer is 42.",
        "Let me think about this...",
    ),
    (  # multiple_thinking_blocks: no thought\n prefix
        "<|channel>first thought<channel|><|channel>second thought<channel|>Final answer.",
        [],
        "Final answer.",
        "first thoughtsecond thought",
    ),
    ("<|channel>just thinking<channel|>", [], "", "just thinking"),
    (PARIS, [WEATHER], "", ""),
    ("<|tool_call>call:set_temp{value:42}<tool_call|>", [("set_temp", {"value": 42})], "", ""),
    (
        "<|tool_call>call:set_optional{value:null,nested:{value:null}}<tool_call|>",
        [("set_optional", {"value": None, "nested": {"value": None}})],
        "",
        "",
    ),
    (
        '<|tool_call>call:plan{steps:[{title:<|"|>step "one"<|"|>,done:false},'
        '{title:<|"|>step \\"two\\"<|"|>,done:true}]}<tool_call|>',
        [
            (
                "plan",
                {
                    "steps": [
                        {"title": 'step "one"', "done": False},
                        {"title": 'step \\"two\\"', "done": True},
                    ]
                },
            )
        ],
        "",
        "",
    ),
    (
        '<|tool_call>call:exec{command:<|"|>fetch "https://ollama.com/library/gemma4" '
        '--extract<|"|>}<tool_call|>',
        [("exec", {"command": 'fetch "https://ollama.com/library/gemma4" --extract'})],
        "",
        "",
    ),
    (  # tool_call_done_flush_without_close_tag...: no <tool_call|> before the end
        '<|tool_call>call:search{query:<|"|>say "hello" and "bye"<|"|>}',
        [("search", {"query": 'say "hello" and "bye"'})],
        "",
        "",
    ),
    (
        PARIS + '<|tool_call>call:get_weather{location:<|"|>London<|"|>}<tool_call|>',
        [WEATHER, ("get_weather", {"location": "London"})],
        "",
        "",
    ),
    pytest.param(
        "<|channel>thought\nI need to check the weather<channel|>" + PARIS,
        [WEATHER],
        "",
        "I need to check the weather",
    ),
    ("Let me check that for you." + PARIS, [WEATHER], "Let me check that for you.", ""),
    # TestGemma4Parser_IgnoresExtraToolCallCloseTags
    (PARIS + "<tool_call|>", [WEATHER], "", ""),
    (PARIS + "<tool_call|>Done.", [WEATHER], "Done.", ""),
    # TestGemma4Parser_IgnoresToolResponseBoundaryAfterToolCall
    (PARIS + "<|tool_response>", [WEATHER], "", ""),
    (PARIS + "<|tool_response>Done.", [WEATHER], "Done.", ""),
    # a call without its <tool_call|> right before the next one
    (PARIS[: -len(CLOSE)] + PARIS, [WEATHER, WEATHER], "", ""),
    # a call opened inside reasoning ends it
    pytest.param("<|channel>thought\nhmm" + PARIS + "ok", [WEATHER], "ok", "hmm"),
]


@pytest.mark.parametrize(("text", "expected_calls", "expected_text", "reasoning"), E2E)
def test_end_to_end_in_any_chunking(
    text: str, expected_calls: list[Any], expected_text: str, reasoning: str
) -> None:
    results = [outcome(stitched(text, n)) for n in (0, 1, 3, 7)]
    assert results[0] == (expected_calls, expected_text, reasoning, [])
    assert all(r == results[0] for r in results[1:])


def test_end_to_end_ollama_streaming_thought() -> None:
    # TestGemma4Parser_Streaming
    chunks = ["<|channel>thought", "\nLet me think", "...<channel|>The answer", " is 42."]
    result = toolstitch.stitch(chunks, text_format="gemma4").collect()
    assert (result.text, result.reasoning) == ("The answer is 42.", "Let me think...")


def test_end_to_end_ollama_streaming_chunks() -> None:
    # TestGemma4Parser_StreamingToolCall, ..._StreamingSplitThinkingTag
    result = stitched("<|channel>thought\nLet me think...<channel|>The answer is 42.")
    assert (result.text, result.reasoning) == ("The answer is 42.", "Let me think...")
    chunks = ["<|tool_call>call:get_", 'weather{location:<|"|>Par', 'is<|"|>}<tool_call|>']
    result = toolstitch.stitch(chunks, text_format="gemma4").collect()
    assert outcome(result) == ([WEATHER], "", "", [])
    chunks = ["<|chan", "nel>thinking here<channel|>content"]
    result = toolstitch.stitch(chunks, text_format="gemma4").collect()
    assert (result.text, result.reasoning) == ("content", "thinking here")


def test_end_to_end_primed_reasoning() -> None:
    # TestGemma4Parser_ToolResponseContinuationStartsInThinking
    result = stitched("The user asked for files.<channel|>go.mod and go.sum", primed=True)
    assert (result.text, result.reasoning) == ("go.mod and go.sum", "The user asked for files.")
    result = stitched("thought\nPlan.<channel|>" + PARIS, primed=True)
    assert outcome(result) == ([WEATHER], "", "Plan.", [])


def test_end_to_end_spaced_object_keys_split_anywhere() -> None:
    # TestGemma4Parser_SpacedObjectKeys: every two-chunk boundary
    text = (
        "<|tool_call>call:create_workflow{connections:{Basic LLM Chain:{main:[{node:"
        '<|"|>Ollama Chat Model<|"|>}]}, Ollama Chat Model:{main:[]}}}<tool_call|>'
    )
    expected: tuple[Any, ...] = (
        [
            (
                "create_workflow",
                {
                    "connections": {
                        "Basic LLM Chain": {"main": [{"node": "Ollama Chat Model"}]},
                        "Ollama Chat Model": {"main": []},
                    }
                },
            )
        ],
        "",
        "",
        [],
    )
    for k in range(len(text) + 1):
        chunks = [text[:k], text[k:]]
        assert outcome(toolstitch.stitch(chunks, text_format="gemma4").collect()) == expected


def test_end_to_end_malformed_and_cut_calls_are_discarded_and_their_siblings_stand() -> None:
    text = (
        '<|tool_call>call:bad{a:<|"|>x<|"|> b:2}<tool_call|>'
        + PARIS
        + "<|tool_call>call:f{a:1"  # no '}', no <tool_call|>: the next call stands
        + '<|tool_call>call:open_file{path:"C:\\users"}<tool_call|>Done.'
        + '<|tool_call>call:bash{command:<|"|>ls}'  # Ollama repairs this one; here it is cut
    )
    whole = outcome(stitched(text))
    assert whole == (
        [WEATHER],
        "Done.",
        "",
        [
            "malformed-arguments",
            "malformed-arguments",
            "malformed-arguments",
            "truncated-arguments",
        ],
    )
    rng = random.Random(30)
    for _ in range(20):
        pieces = cut(text, rng.sample(range(len(text)), 6))
        assert outcome(toolstitch.stitch(pieces, text_format="gemma4").collect()) == whole


def test_end_to_end_a_fault_is_placed_in_the_text() -> None:
    text = 'Checking.\n<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,\n days 3}<tool_call|>'
    (discarded,) = stitched(text).discarded
    error = discarded.error
    assert error.code == "malformed-arguments"
    assert (error.offset, error.line, error.column) == (text.index("}<tool"), 3, 8)
