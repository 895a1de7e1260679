"""The ``tagged`` body grammar (toolstitch.text.bodies.tagged) and the six XML-ish formats that
use it: Qwen3-Coder, Seed-OSS, GLM-4.5, GLM-4.7, MiniMax M2, DeepSeek V3.2 / V4 DSML.

The grammar is driven directly, with the options of each format's declaration
(``grammars/text-formats/NAME.json``), through a recording ``CallSink``; positions are recorded
as offsets into the whole text, so every chunking must report exactly the same thing. A body's
text starts after the marker that opened it (the reader's) and runs past its close: ``TAIL``
after it must be left to the reader (``feed`` returns where the body ended).

End to end, through ``toolstitch.stitch(..., text_format=...)``, at the bottom.

Cases ported as data from the peers' public suites name their source: Ollama
``model/parsers/glm47_test.go`` and ``minimaxm2_test.go``, vLLM
``tests/tool_parsers/test_format_conformance.py`` and ``test_seed_oss_tool_parser.py``,
vLLM's DSML docstring (``vllm/parser/deepseek_v32.py``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolstitch
from strategies import per_pass
from text_sink import Event, Recorder, expanded, joined
from toolstitch.text.bodies import BODIES
from toolstitch.text.bodies.tagged import VARIANTS, TaggedOptions
from toolstitch.text.formats import compile_format, text_format

FORMATS = Path(__file__).resolve().parents[1] / "grammars" / "text-formats"
TAIL = "TAIL"
D = "｜DSML｜"


def declaration(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FORMATS / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def options(name: str, state: str) -> dict[str, Any]:
    found: dict[str, Any] = declaration(name)["states"][state]["options"]
    return found


# (format, its tagged state) for each body the six formats declare.
BODY_STATES = [
    ("qwen3-coder", "call"),
    ("qwen3-coder", "bare"),
    ("seed-oss", "call"),
    ("glm-4.5", "call"),
    ("glm-4.7", "call"),
    ("minimax-m2", "call"),
    ("deepseek-v3.2", "calls"),
    ("deepseek-v3.2", "calls-v4"),
]


def read(
    body: tuple[str, str],
    pieces: Iterable[str],
    typed: Iterable[str] = (),
    limit: int = 10_000,
    cut: bool = False,
) -> tuple[list[Event], int | None]:
    """Feed ``pieces`` to a fresh body: ``(events, where it ended in the whole text)``."""
    sink = Recorder(VARIANTS, frozenset(typed), ids=True, detailed=True, limit=limit)
    grammar = BODIES["tagged"](sink, options(*body))
    for piece in pieces:
        end = grammar.feed(piece)
        if end >= 0:
            assert 0 < end <= len(piece)
            return sink.events, sink.offset + end
        sink.offset += len(piece)
    if cut:
        grammar.close()
    return sink.events, None


def cut(text: str, cuts: Iterable[int]) -> list[str]:
    """``text`` cut at ``cuts`` (those past its end ignored)."""
    bounds = [0, *sorted(c for c in cuts if c <= len(text)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def whole(
    body: tuple[str, str], text: str, typed: Iterable[str] = (), limit: int = 10_000
) -> tuple[list[Event], int | None]:
    events, end = read(body, [text], typed, limit)
    return joined(events), end


def calls(events: list[Event]) -> list[tuple[str, Any]]:
    """The calls that ended, as ``(name, parsed arguments)``."""
    out: list[tuple[str, Any]] = []
    name, arguments = "", ""
    for event in joined(events):
        if event[0] == "start":
            name, arguments = "", ""
        elif event[0] == "name":
            name = event[1]
        elif event[0] == "args":
            arguments = event[1]
        elif event[0] == "end":
            out.append((name, json.loads(arguments)))
            name, arguments = "", ""
    return out


def call(start: int | None, name: str, arguments: str) -> list[Event]:
    """A call's events (``start`` None: a GLM call, which the reader started at its
    ``<tool_call>``)."""
    opened: list[Event] = [] if start is None else [("start", start)]
    return [*opened, ("name", name), ("args", arguments), ("end",)]


# -- cases: (id, body, text, typed keys, expected events; ``text.index`` places positions) --


@dataclass(frozen=True)
class Case:
    id: str
    body: tuple[str, str]
    text: str
    expected: list[Event]
    typed: tuple[str, ...] = ()

    @property
    def end(self) -> int:
        return len(self.text) - len(TAIL)


def case(
    id: str, body: tuple[str, str], text: str, expected: Any, typed: Iterable[str] = ()
) -> Case:
    """``expected`` may be a function of the text (to place positions)."""
    events = expected(text) if callable(expected) else expected
    return Case(id, body, text, events, tuple(typed))


QWEN = ("qwen3-coder", "call")
BARE = ("qwen3-coder", "bare")
SEED = ("seed-oss", "call")
GLM45 = ("glm-4.5", "call")
GLM47 = ("glm-4.7", "call")
MINIMAX = ("minimax-m2", "call")
DSML = ("deepseek-v3.2", "calls")
DSML4 = ("deepseek-v3.2", "calls-v4")

WEATHER = "\n<function=get_weather>\n<parameter=city>\nSF\n</parameter>\n</function>\n</tool_call>"
CASES = [
    # vLLM test_format_conformance.py: qwen3_coder
    case("qwen-single", QWEN, WEATHER + TAIL, lambda t: call(1, "get_weather", '{"city":"SF"}')),
    case(
        "qwen-parallel",
        QWEN,
        "\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n"
        "<function=b>\n<parameter=y>\n2\n</parameter>\n<parameter=z>\nzz\n</parameter>\n"
        "</function>\n</tool_call>" + TAIL,
        lambda t: [
            *call(1, "a", '{"x":1}'),
            *call(t.index("<function=b"), "b", '{"y":"2","z":"zz"}'),
        ],
        typed=["x"],
    ),
    case(
        "qwen-zero-args",
        QWEN,
        "<function=now>\n</function></tool_call>" + TAIL,
        call(0, "now", "{}"),
    ),
    case(
        "qwen-typed-values",
        QWEN,
        "<function=f>\n<parameter=n>\n42\n</parameter>\n<parameter=x>\n3.5\n</parameter>\n"
        '<parameter=flag>\nTrue\n</parameter>\n<parameter=items>\n["a", "b"]\n</parameter>\n'
        "<parameter=none>\nNone\n</parameter>\n<parameter=obj>\n{'k': (1, 2)}\n</parameter>\n"
        "<parameter=s>\n42\n</parameter>\n</function>\n</tool_call>" + TAIL,
        call(
            0,
            "f",
            '{"n":42,"x":3.5,"flag":true,"items":["a", "b"],"none":null,'
            '"obj":{"k":[1,2]},"s":"42"}',
        ),
        typed=["n", "x", "flag", "items", "none", "obj"],
    ),
    case(
        "qwen-raw-characters",
        QWEN,
        "<function=sh>\n<parameter=cmd>\na < b && c > d \"q\" 'r' \\n\ttab\nline 2\n\n"
        "</parameter>\n</function>\n</tool_call>" + TAIL,
        call(0, "sh", '{"cmd":' + json.dumps("a < b && c > d \"q\" 'r' \\n\ttab\nline 2\n") + "}"),
    ),
    case(
        "qwen-unicode",
        QWEN,
        "<function=翻译>\n<parameter=文本>\n北京 🌤 café ｜DSML｜\n</parameter>\n"
        "</function></tool_call>" + TAIL,
        call(0, "翻译", '{"文本":"北京 🌤 café ｜DSML｜"}'),
    ),
    case(
        "qwen-literal-close-tags-in-a-value",
        QWEN,
        "<function=write>\n<parameter=text>\n<function=x></function></tool_call><parameter=y>"
        "</parameter\n</parameter>\n</function>\n</tool_call>" + TAIL,
        call(0, "write", '{"text":"<function=x></function></tool_call><parameter=y></parameter"}'),
    ),
    case(
        "qwen-inline-and-extra-newlines",
        QWEN,
        "<function=f>\n<parameter=a>v</parameter><parameter=b>\n\nw\n\n</parameter>"
        "<parameter=c></parameter><parameter=d>\n</parameter></function></tool_call>" + TAIL,
        [
            ("start", 0),
            ("name", "f"),
            ("args", '{"a":"'),
            ("warn", "inline-value"),
            ("args", 'v","b":"\\nw\\n","c":"","d":""}'),
            ("end",),
        ],
    ),
    case(
        "qwen-missing-function-close",
        QWEN,
        "<function=a>\n<parameter=x>\n1\n</parameter>\n<function=b>\n</tool_call>" + TAIL,
        lambda t: [
            ("start", 0),
            ("name", "a"),
            ("args", '{"x":"1"'),
            ("warn", "missing-call-close"),
            ("args", "}"),
            ("end",),
            ("start", t.index("<function=b")),
            ("name", "b"),
            ("args", "{}"),
            ("end",),
        ],
    ),
    case(
        "qwen-header-not-closed-on-its-line",
        QWEN,
        "<function=a>\n<parameter=x\ny>\n1\n</parameter>\n</function>\n"
        "<function=b>\n</function></tool_call>" + TAIL,
        lambda t: [
            ("start", 0),
            ("name", "a"),
            ("fail", "a tag that does not close on its line", t.index("\ny>"), ">", True),
            *call(t.index("<function=b"), "b", "{}"),
        ],
    ),
    case(
        "qwen-text-between-parameters",
        QWEN,
        "<function=a>\n<parameter=x>\n1\n</parameter>\noops<parameter=y>\n2\n</parameter>"
        "</function><function=b></function></tool_call>" + TAIL,
        lambda t: [
            ("start", 0),
            ("name", "a"),
            ("args", '{"x":"1"'),
            ("fail", "text between parameters", t.index("oops"), "<parameter=", True),
            *call(t.index("<function=b"), "b", "{}"),
        ],
    ),
    case(
        "qwen-missing-name",
        QWEN,
        "<function=>\n</function>\n<function=get time>\n</function></tool_call>" + TAIL,
        lambda t: [
            ("start", 0),
            ("fail", "a call without a tool name", len("<function="), "a tool name", True),
            ("start", t.index("<function=get")),
            ("fail", "a call without a tool name", t.index("get time"), "a tool name", True),
        ],
    ),
    case(
        "qwen-a-marker-inside-a-header",
        QWEN,
        "<function=f<parameter=a>\n1\n</parameter></function></tool_call>" + TAIL,
        lambda t: [
            ("start", 0),
            ("fail", "a tag that does not close on its line", t.index("<parameter"), ">", True),
        ],
    ),
    case(
        "qwen-json-in-the-wrong-format",
        QWEN,
        '\n{"name": "f", "arguments": {}}\n</tool_call>' + TAIL,
        [
            ("start", 1),
            ("fail", "not a call where a call should be", 1, "<function=", True),
        ],
    ),
    case("qwen-empty-section", QWEN, "\n\n</tool_call>" + TAIL, []),
    case(
        "qwen-bare-function",
        BARE,
        "<function=f>\n<parameter=a>\n1\n</parameter>\n</function>" + TAIL,
        call(0, "f", '{"a":"1"}'),
    ),
    # vLLM test_seed_oss_tool_parser.py and the Seed-OSS template's example
    case(
        "seed-single",
        SEED,
        "\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n"
        "<parameter=note>This is the value\nthat can span\nmultiple lines</parameter>\n"
        "<parameter=pad>\nkept\n</parameter>\n</function>\n</seed:tool_call>" + TAIL,
        call(
            1,
            "get_weather",
            '{"location":"Barcelona, Spain","note":"This is the value\\nthat can span\\n'
            'multiple lines","pad":"\\nkept\\n"}',
        ),
    ),
    # vLLM test_format_conformance.py: glm45
    case(
        "glm45-single",
        GLM45,
        "get_weather\n<arg_key>city</arg_key>\n<arg_value>SF</arg_value>\n</tool_call>" + TAIL,
        call(None, "get_weather", '{"city":"SF"}'),
    ),
    case(
        "glm45-leading-newline-and-layout-of-4.7",
        GLM45,
        "\nget_weather<arg_key>city</arg_key><arg_value> S F </arg_value></tool_call>" + TAIL,
        [
            ("name", "get_weather"),
            ("warn", "no-newline-after-name"),
            ("args", '{"city":" S F "}'),
            ("end",),
        ],
    ),
    case("glm45-zero-args", GLM45, "get_time</tool_call>" + TAIL, call(None, "get_time", "{}")),
    case(
        "glm45-zero-args-newline",
        GLM45,
        "get_time\n\n</tool_call>" + TAIL,
        call(None, "get_time", "{}"),
    ),
    # Ollama glm47_test.go TestGLM47ParserAdd (count and enabled typed by the tool)
    case(
        "glm47-typed",
        GLM47,
        "calculate<arg_key>count</arg_key><arg_value>3</arg_value><arg_key>enabled</arg_key>"
        "<arg_value>true</arg_value></tool_call>" + TAIL,
        call(None, "calculate", '{"count":3,"enabled":true}'),
        typed=["count", "enabled"],
    ),
    # Ollama glm47_test.go TestGLM47ParserToolCloseTagInsideArgumentValue, ...ToolCallEscaping
    case(
        "glm47-close-tag-inside-a-value",
        GLM47,
        "write_file<arg_key>path</arg_key><arg_value>docs/format.md</arg_value><arg_key>content"
        "</arg_key><arg_value>Wrap each call in <tool_call> and </tool_call>; a < b && c > d"
        "</arg_value></tool_call>" + TAIL,
        call(
            None,
            "write_file",
            '{"path":"docs/format.md","content":"Wrap each call in <tool_call> and </tool_call>;'
            ' a < b && c > d"}',
        ),
    ),
    case(
        "glm47-layout-of-4.5",
        GLM47,
        "f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>" + TAIL,
        [
            ("name", "f"),
            ("warn", "newline-after-name"),
            ("args", '{"a":"1"}'),
            ("end",),
        ],
    ),
    case(
        "glm47-missing-name",
        GLM47,
        "<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>" + TAIL,
        [("fail", "a call without a tool name", 0, "a tool name", True)],
    ),
    case(
        "glm47-empty",
        GLM47,
        "\n</tool_call>" + TAIL,
        [("fail", "a call without a tool name", 1, "a tool name", True)],
    ),
    case(
        "glm47-key-without-value",
        GLM47,
        "f<arg_key>a</arg_key>oops<arg_value>1</arg_value></tool_call>" + TAIL,
        lambda t: [
            ("name", "f"),
            ("args", '{"a":'),
            ("fail", "a key without its value", t.index("oops"), "<arg_value>", True),
        ],
    ),
    case(
        "glm47-key-cut-by-the-close",
        GLM47,
        "f<arg_key>a</tool_call>" + TAIL,
        lambda t: [
            ("name", "f"),
            (
                "fail",
                "a tag that does not close on its line",
                t.index("</tool_call>"),
                "</arg_key>",
                True,
            ),
        ],
    ),
    # Ollama glm46_test.go TestGLM46ToolCallParsing "special chars in arg_key names"
    case(
        "glm45-markup-characters-in-keys",
        GLM45,
        "test-function\n<arg_key>param<1></arg_key>\n<arg_value>value1</arg_value>\n"
        "<arg_key>a&b</arg_key>\n<arg_value>value2</arg_value>\n<arg_key>x>y</arg_key>\n"
        "<arg_value>value3</arg_value>\n</tool_call>" + TAIL,
        call(None, "test-function", '{"param<1>":"value1","a&b":"value2","x>y":"value3"}'),
    ),
    # Ollama minimaxm2_test.go: single, several parameters, no parameters, several invokes
    case(
        "minimax-invokes",
        MINIMAX,
        '\n<invoke name="get_weather">\n<parameter name="location">San Francisco</parameter>\n'
        '<parameter name="unit">celsius</parameter>\n</invoke>\n<invoke name="calculate">\n'
        '</invoke>\n<invoke name="search_web">\n<parameter name="query">{"keywords": ["AI"]}'
        '</parameter>\n<parameter name="limit">10</parameter>\n</invoke>\n</minimax:tool_call>'
        + TAIL,
        lambda t: [
            *call(1, "get_weather", '{"location":"San Francisco","unit":"celsius"}'),
            *call(t.index('<invoke name="calc'), "calculate", "{}"),
            *call(
                t.index('<invoke name="search'),
                "search_web",
                '{"query":{"keywords": ["AI"]},"limit":10}',
            ),
        ],
        typed=["query", "limit"],
    ),
    # Ollama minimaxm2_test.go: whitespace and entities are kept as written (Ollama trims)
    case(
        "minimax-verbatim-values",
        MINIMAX,
        '<invoke name="s">\n<parameter name="q">  AI &amp; ML\n</parameter>\n</invoke>'
        "</minimax:tool_call>" + TAIL,
        call(0, "s", '{"q":"  AI &amp; ML\\n"}'),
    ),
    case(
        "minimax-quoting-variants",
        MINIMAX,
        "<invoke name='a'>\n<parameter name='k'>1</parameter>\n</invoke>"
        "<invoke name=b>\n<parameter name=k>2</parameter>\n</invoke></minimax:tool_call>" + TAIL,
        lambda t: [
            ("start", 0),
            ("warn", "single-quotes"),
            ("name", "a"),
            ("args", '{"k":"1"}'),
            ("end",),
            ("start", t.index("<invoke name=b")),
            ("warn", "no-quotes"),
            ("name", "b"),
            ("args", '{"k":"2"}'),
            ("end",),
        ],
    ),
    # Ollama minimaxm2_test.go "missing closing invoke tag"
    case(
        "minimax-missing-invoke-close",
        MINIMAX,
        '\n<invoke name="get_weather">\n<parameter name="location">Tokyo</parameter>\n'
        "</minimax:tool_call>" + TAIL,
        [
            ("start", 1),
            ("name", "get_weather"),
            ("args", '{"location":"Tokyo"'),
            ("warn", "missing-call-close"),
            ("args", "}"),
            ("end",),
        ],
    ),
    case(
        "minimax-bad-attributes",
        MINIMAX,
        '<invoke name="a" b>\n</invoke><invoke name="c">\n</invoke></minimax:tool_call>' + TAIL,
        lambda t: [
            ("start", 0),
            ("fail", 'a tag whose attributes are not name="…"', len("<invoke name="), '"', True),
            *call(t.index('<invoke name="c'), "c", "{}"),
        ],
    ),
    # vLLM vllm/parser/deepseek_v32.py docstring
    case(
        "dsml-v32",
        DSML,
        f'\n<{D}invoke name="func_name">\n<{D}parameter name="location" string="true">杭州'
        f'</{D}parameter>\n<{D}parameter name="count" string="false">5</{D}parameter>\n'
        f"</{D}invoke>\n</{D}function_calls>" + TAIL,
        call(1, "func_name", '{"location":"杭州","count":5}'),
    ),
    # vLLM test_format_conformance.py: deepseek_v32 (V4's wrapper); string="true" wins
    case(
        "dsml-v4",
        DSML4,
        f'\n<{D}invoke name="get_weather">\n<{D}parameter name="city" string="true">SF'
        f'</{D}parameter>\n<{D}parameter name="n" string="true">5</{D}parameter>\n'
        f'<{D}parameter name="o">{{"a": [1, 2]}}</{D}parameter>\n'
        f'<{D}parameter name="p" string="false">None</{D}parameter>\n</{D}invoke>\n'
        f"</{D}tool_calls>" + TAIL,
        call(1, "get_weather", '{"city":"SF","n":"5","o":{"a": [1, 2]},"p":null}'),
        typed=["n", "o"],
    ),
    case(
        "dsml-parameter-outside-an-invoke",
        DSML,
        f'<{D}parameter name="a" string="true">1</{D}parameter></{D}function_calls>' + TAIL,
        [("start", 0), ("fail", "not a call where a call should be", 0, f"<{D}invoke name=", True)],
    ),
]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_a_body_read_whole(c: Case) -> None:
    assert whole(c.body, c.text, c.typed) == (c.expected, c.end)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_every_split_in_two_and_one_character_at_a_time(c: Case) -> None:
    expected = (c.expected, c.end)
    for at in range(len(c.text) + 1):
        events, end = read(c.body, [c.text[:at], c.text[at:]], c.typed)
        assert (joined(events), end) == expected, at
    events, end = read(c.body, list(c.text), c.typed)
    assert (joined(events), end) == expected


def markers_of(body: tuple[str, str]) -> list[str]:
    o = TaggedOptions(options(*body))
    return [*o.structure.markers, o.value_close, o.key_end, o.name_end or "\n"]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_splits_at_every_marker_boundary(c: Case) -> None:
    cuts: set[int] = set()
    for marker in markers_of(c.body):
        at = c.text.find(marker)
        while at >= 0:
            cuts.update((at, at + 1, at + len(marker) - 1, at + len(marker)))
            at = c.text.find(marker, at + 1)
    events, end = read(c.body, cut(c.text, cuts), c.typed)
    assert (joined(events), end) == (c.expected, c.end)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_a_cut_at_every_position_reports_nothing_it_takes_back(c: Case) -> None:
    complete = expanded(c.expected)
    for at in range(c.end):
        events, end = read(c.body, [c.text[:at]], c.typed, cut=True)
        assert end is None
        got = expanded(events)
        assert got == complete[: len(got)], at


# -- limits --------------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_typed_value_past_the_limit_fails_the_call_and_the_rest_stands() -> None:
    text = (
        "<function=f>\n<parameter=n>\n123456\n</parameter>\n</function>\n"
        "<function=g>\n<parameter=n>\n1234\n</parameter>\n</function></tool_call>" + TAIL
    )
    expected = [
        ("start", 0),
        ("name", "f"),
        ("args", '{"n":'),
        ("fail", "more than 5 characters to hold", text.index("123456") + 5, "</parameter>", False),
        *call(text.index("<function=g"), "g", '{"n":1234}'),
    ]
    for pieces in ([text], list(text)):
        events, end = read(QWEN, pieces, ["n"], limit=5)
        assert (joined(events), end) == (expected, len(text) - len(TAIL))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_header_past_the_limit_fails_the_call() -> None:
    text = "<function=" + "x" * 20 + ">\n</function></tool_call>" + TAIL
    expected = [("start", 0), ("fail", "more than 8 characters to hold", 18, ">", True)]
    for pieces in ([text], list(text)):
        events, end = read(QWEN, pieces, limit=8)
        assert (joined(events), end) == (expected, len(text) - len(TAIL))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_string_value_is_not_buffered_whatever_its_length() -> None:
    value = "y" * 50
    text = f"<function=f>\n<parameter=s>\n{value}\n</parameter>\n</function></tool_call>" + TAIL
    assert calls(read(QWEN, list(text), limit=8)[0]) == [("f", {"s": value})]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_string_values_stream_as_they_come() -> None:
    sink = Recorder(VARIANTS, frozenset(), ids=True, detailed=True)
    grammar = BODIES["tagged"](sink, options(*QWEN))
    assert grammar.feed("<function=f>\n<parameter=s>\nab") == -1
    assert joined(sink.events)[-1] == ("args", '{"s":"ab')
    assert grammar.feed("c\n") == -1  # the newline may be the template's: held
    assert joined(sink.events)[-1] == ("args", '{"s":"abc')
    assert grammar.feed("d</para") == -1  # it was not; the possible close tag is held
    assert joined(sink.events)[-1] == ("args", '{"s":"abc\\nd')


# -- options -------------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"param": "<p=", "key_end": ">", "value_close": "</p>"}, "a body ends"),
        ({"close": "</c>", "key_end": ">", "value_close": "</p>"}, "option 'param'"),
        ({"close": "</c>", "param": "<p=", "key_end": ">", "value_close": ""}, "'value_close'"),
        (
            {"close": "</c>", "param": "<p=", "key_end": ">", "value_close": "</p>", "x": 1},
            "unknown",
        ),
        ({"close": "<p=x", "param": "<p=", "key_end": ">", "value_close": "</p>"}, "inside"),
    ],
)
def test_options_that_a_body_could_not_follow_are_refused(
    bad: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        BODIES["tagged"](Recorder(VARIANTS, frozenset(), ids=True, detailed=True), bad)


# -- the declarations ------------------------------------------------------------------------


ALIASES = {
    "qwen3-coder": ["qwen3_coder", "qwen3_xml"],
    "seed-oss": ["seed_oss"],
    "glm-4.5": ["glm45"],
    "glm-4.7": ["glm47"],
    "minimax-m2": ["minimax_m2"],
    "deepseek-v3.2": ["deepseek_v32"],
}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("name", sorted(ALIASES))
def test_each_declaration_compiles_and_declares_what_its_bodies_report(name: str) -> None:
    fmt = compile_format(declaration(name))
    assert list(fmt.aliases) == ALIASES[name]
    assert all(text_format(alias) is text_format(name) for alias in ALIASES[name])
    assert fmt.reasoning
    bodies = [s for s in fmt.states.values() if s.kind == "body"]
    assert bodies
    assert all(s.grammar == "tagged" for s in bodies)
    for state in bodies:
        o = TaggedOptions(state.options)
        reportable = {"missing-call-close"} if o.call_close else set()
        if o.attributes:
            reportable |= {"single-quotes", "no-quotes"}
        if o.trim:
            reportable.add("inline-value")
        if o.name_newline is not None:
            reportable.add("no-newline-after-name" if o.name_newline else "newline-after-name")
        assert reportable <= set(fmt.variants), state.name
    # a body that is one call is opened by the marker that enters it
    for state in fmt.states.values():
        for move in state.moves.values():
            target = fmt.states[move.to]
            if target.kind == "body" and TaggedOptions(target.options).call_open is None:
                assert move.call == "start", (state.name, move)
    # a call opener inside reasoning ends it; a </think> in content is absorbed
    reasoning = next(s for s in fmt.states.values() if s.kind == "reasoning")
    assert any(fmt.states[m.to].kind == "body" for m in reasoning.moves.values())
    content = fmt.states[fmt.start]
    closes = [m for m in content.moves if m.startswith("</") and "think" in m]
    assert closes
    assert all(content.moves[m].to == fmt.start for m in closes)


# -- generated calls: every format's rendering reads back as written ----------------------------


SAFE = st.characters(codec="utf-8")
VALUES = st.one_of(
    st.text(SAFE, max_size=12),
    st.sampled_from(["", "\n", "a < b", "&amp;", '"q"', "'", "</", "北京", "<tool_call>", " x "]),
    st.text(alphabet="<>/\n =\"'ab", max_size=10),
)
KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,8}", fullmatch=True)
ARGUMENTS = st.dictionaries(KEYS, st.one_of(VALUES, st.integers(-999, 999)), max_size=4)


def render(body: tuple[str, str], name: str, arguments: Mapping[str, str | int]) -> str:
    """One call as the family's template writes it."""
    parts = []
    fmt = body[0]
    for key, value in arguments.items():
        raw = str(value)
        if fmt == "qwen3-coder":
            parts.append(f"<parameter={key}>\n{raw}\n</parameter>\n")
        elif fmt == "seed-oss":
            parts.append(f"<parameter={key}>{raw}</parameter>\n")
        elif fmt.startswith("glm"):
            sep = "\n" if fmt == "glm-4.5" else ""
            parts.append(f"<arg_key>{key}</arg_key>{sep}<arg_value>{raw}</arg_value>{sep}")
        elif fmt == "minimax-m2":
            parts.append(f'<parameter name="{key}">{raw}</parameter>\n')
        else:
            kind = "false" if isinstance(value, int) else "true"
            parts.append(f'<{D}parameter name="{key}" string="{kind}">{raw}</{D}parameter>\n')
    inner = "".join(parts)
    if fmt in ("qwen3-coder", "seed-oss"):
        return f"<function={name}>\n{inner}</function>\n"
    if fmt.startswith("glm"):
        return f"{name}{chr(10) if fmt == 'glm-4.5' else ''}{inner}"
    if fmt == "minimax-m2":
        return f'<invoke name="{name}">\n{inner}</invoke>\n'
    return f'<{D}invoke name="{name}">\n{inner}</{D}invoke>\n'


@st.composite
def bodies(draw: st.DrawFn) -> tuple[tuple[str, str], str, list[tuple[str, Any]], set[str]]:
    body = draw(st.sampled_from(BODY_STATES))
    o = TaggedOptions(options(*body))
    count = 1 if o.call_open is None or o.close is None else draw(st.integers(0, 3))
    written = [(draw(NAMES), draw(ARGUMENTS)) for _ in range(count)]
    typed = {k for _, arguments in written for k, v in arguments.items() if isinstance(v, int)}
    # a value never holds its own close tag (text alone could not tell), nor a key typed
    # elsewhere as a string
    written = [
        (
            n,
            {
                k: v
                for k, v in a.items()
                if o.value_close not in str(v) and not (k in typed and isinstance(v, str))
            },
        )
        for n, a in written
    ]
    text = "\n".join(render(body, n, a) for n, a in written) + (o.close or "")
    text = (text if o.close else text.rstrip("\n")) + TAIL  # a bare call ends at its close
    return body, text, written, typed


@per_pass(300, settings(deadline=None))
@given(bodies(), st.lists(st.integers(0, 400), max_size=8))
def test_generated_calls_read_back_in_any_chunking(
    drawn: tuple[tuple[str, str], str, list[tuple[str, Any]], set[str]], cuts: list[int]
) -> None:
    body, text, written, typed = drawn
    expected, end = whole(body, text, typed)
    assert end == len(text) - len(TAIL)
    assert calls(expected) == [(name, dict(arguments)) for name, arguments in written]
    assert not any(e[0] == "fail" for e in expected)
    events, got_end = read(body, cut(text, cuts), typed)
    assert (joined(events), got_end) == (expected, end)


#: Bits of markup of every format, to build mostly malformed text from.
BITS = [
    *'<>/\n a="',
    *{m for body in BODY_STATES for m in TaggedOptions(options(*body)).structure.markers},
    "</parameter>",
    "</arg_key>",
    "</arg_value>",
    f"</{D}parameter>",
    ' string="false"',
]


@per_pass(300, settings(deadline=None))
@given(
    st.sampled_from(BODY_STATES),
    st.lists(st.sampled_from(sorted(BITS)), max_size=40).map("".join),
    st.lists(st.integers(0, 120), max_size=6),
)
def test_any_text_reads_the_same_in_any_chunking(
    body: tuple[str, str], text: str, cuts: list[int]
) -> None:
    """Arbitrary (mostly malformed) markup: the same reports for any chunking, and a cut
    never contradicts what was reported."""
    expected, end = whole(body, text, ["n"])
    events, got_end = read(body, cut(text, cuts), ["n"])
    assert (joined(events), got_end) == (expected, end)
    events, got_end = read(body, list(text) or [""], ["n"])
    assert (joined(events), got_end) == (expected, end)
    if end is None:
        return
    prefix = expanded(read(body, [text[: max(end - 1, 0)]], ["n"], cut=True)[0])
    assert prefix == expanded(expected)[: len(prefix)]


# -- end to end, through toolstitch.stitch -----------------------------------------------------


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    },
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}},
]

E2E = [
    (
        "qwen3_coder",
        False,
        "Checking.<tool_call>\n<function=get_weather>\n<parameter=city>\nSF\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\nDone.",
        [("get_weather", {"city": "SF", "days": 3})],
        "Checking.\nDone.",
        "",
    ),
    (
        "qwen3-coder",
        True,
        "plan <tool_call>\n<function=now>\n</function>\n</tool_call>"
        "<function=get_weather>\n<parameter=city>\nNice\n</parameter>\n</function>\n</tool_call>",
        [("now", {}), ("get_weather", {"city": "Nice"})],
        "\n",  # after the bare call, before the stray </tool_call> (dropped)
        "plan ",
    ),
    (
        "seed_oss",
        False,
        "<seed:think>hm</seed:think><seed:tool_call>\n<function=get_weather>\n"
        "<parameter=city>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>",
        [("get_weather", {"city": "Barcelona, Spain"})],
        "",
        "hm",
    ),
    (
        "glm45",
        False,
        "<think>x</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>SF"
        "</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
        [("get_weather", {"city": "SF", "days": 2})],
        "\n",
        "x",
    ),
    (
        "glm47",
        True,
        "plan</think>Answer<tool_call>now</tool_call><tool_call>get_weather<arg_key>city"
        "</arg_key><arg_value>a</tool_call>b</arg_value></tool_call>",
        [("now", {}), ("get_weather", {"city": "a</tool_call>b"})],
        "Answer",
        "plan",
    ),
    (
        "minimax_m2",
        True,
        'think\n</think>\n\n<minimax:tool_call>\n<invoke name="get_weather">\n'
        '<parameter name="city">Tokyo</parameter>\n</invoke>\n<invoke name="now">\n</invoke>\n'
        "</minimax:tool_call>",
        [("get_weather", {"city": "Tokyo"}), ("now", {})],
        "\n\n",
        "think\n",
    ),
    (
        "deepseek_v32",
        True,
        f'</think>ok\n\n<{D}function_calls>\n<{D}invoke name="get_weather">\n'
        f'<{D}parameter name="city" string="true">杭州</{D}parameter>\n'
        f'<{D}parameter name="days" string="false">5</{D}parameter>\n</{D}invoke>\n'
        f"</{D}function_calls>",
        [("get_weather", {"city": "杭州", "days": 5})],
        "ok\n\n",
        "",
    ),
]


@pytest.mark.parametrize(
    ("fmt", "primed", "text", "expected", "content", "reasoning"), E2E, ids=[e[0] for e in E2E]
)
def test_end_to_end_in_any_chunking(
    fmt: str,
    primed: bool,
    text: str,
    expected: list[tuple[str, dict[str, Any]]],
    content: str,
    reasoning: str,
) -> None:
    for chunks in ([text], list(text), [text[i : i + 4] for i in range(0, len(text), 4)]):
        result = toolstitch.stitch(
            chunks, text_format=fmt, tools=TOOLS, primed_reasoning=primed
        ).collect()
        assert [(c.name, c.parsed_arguments) for c in result.calls] == expected
        assert result.text == content
        assert result.reasoning == reasoning
        assert not result.discarded


def test_end_to_end_a_malformed_call_is_discarded_and_its_siblings_stand() -> None:
    text = (
        "<tool_call>\n<function=get_weather>\n<parameter=city\n>x</parameter>\n</function>\n"
        "<function=now>\n</function>\n</tool_call>after"
    )
    for chunks in ([text], list(text)):
        result = toolstitch.stitch(chunks, text_format="qwen3-coder", tools=TOOLS).collect()
        assert [(c.name, c.parsed_arguments) for c in result.calls] == [("now", {})]
        assert [d.error.code for d in result.discarded] == ["malformed-call"]
        assert result.text == "after"


@pytest.mark.parametrize(
    ("fmt", "text", "code"),
    [
        (
            "minimax-m2",
            '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">T',
            "truncated-arguments",
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nT",
            "truncated-arguments",
        ),
        (
            "glm-4.5",
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>T",
            "truncated-arguments",
        ),
        ("glm-4.7", "<tool_call>get_wea", "missing-name"),  # the <tool_call> opened the call
        ("glm-4.7", "<tool_call>", "missing-name"),
    ],
)
def test_end_to_end_a_cut_call_is_discarded(fmt: str, text: str, code: str) -> None:
    for chunks in ([text], list(text)):
        result = toolstitch.stitch(chunks, text_format=fmt, tools=TOOLS).collect()
        assert not result.calls
        assert [d.error.code for d in result.discarded] == [code]
