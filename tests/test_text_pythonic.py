"""The ``pythonic`` body grammar (toolstitch.text.bodies.pythonic) and the ``pythonic`` text
format (Llama 3.2 bare, Llama 4 ``<|python_start|>``).

The grammar is driven directly through a recording ``CallSink``; positions are recorded as
offsets into the whole text, so every chunking must report exactly the same thing. A body's
text starts where the reader hands it over (at ``[``) and runs past its end: ``TAIL`` after
it must be left to the reader (``feed`` returns where the body ended).

The independent reference is Python itself: the arguments of every call read back as JSON must
equal ``ast.literal_eval`` of the call's keyword values in the same text (tuples as lists).
Generated call lists (hypothesis) write every kind of literal in many ways (quotes, prefixes,
escapes, joined literals, tuples and parentheses, hex and underscores, whitespace and newlines).

End to end, through ``toolstitch.stitch(..., text_format="pythonic")``, at the bottom. Cases
ported as data from vLLM name their source: ``tests/tool_parsers/test_pythonic_tool_parser.py``,
``test_llama4_pythonic_tool_parser.py`` and ``test_olmo3_tool_parser.py``.
"""

from __future__ import annotations

import ast
import contextlib
import json
import keyword
import random
import unicodedata
import warnings
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
from toolstitch.text.bodies.pythonic import MAX_DEPTH, VARIANTS
from toolstitch.text.formats import TEXT_FORMATS, text_format

FORMATS = Path(__file__).resolve().parents[1] / "grammars" / "text-formats"
TAIL = "TAIL"


def read(
    pieces: Iterable[str], options: dict[str, Any] | None = None, limit: int = 10_000
) -> tuple[list[Event], int | None]:
    """Feed ``pieces`` to a body: its joined reports and where it ended in the whole text
    (``None``: it did not end, and was closed)."""
    sink = Recorder(VARIANTS, limit=limit)
    body = BODIES["pythonic"](sink, options or {})
    for piece in pieces:
        end = body.feed(piece)
        if end >= 0:
            assert 0 <= end <= len(piece)
            return joined(sink.events), sink.offset + end
        sink.offset += len(piece)
    body.close()
    return joined(sink.events), None


def calls(events: list[Event]) -> list[tuple[str | None, Any]]:
    """Each call as ``(name, parsed arguments)``, or ``(name, ("failed", at, markup))``; a
    call that did not end and did not fail is ``(name, ("open", arguments so far))``."""
    out: list[tuple[str | None, Any]] = []
    name: str | None = None
    args: str | None = None
    for event in [*events, ("start", -1)]:
        kind = event[0]
        if kind == "start" and args is not None:
            out.append((name, ("open", args)))
        if kind == "start":
            name, args = None, ""
        elif kind == "name":
            name = event[1]
        elif kind == "args":
            assert args is not None
            args += event[1]
        elif kind == "end":
            assert args is not None
            out.append((name, json.loads(args)))
            args = None
        elif kind == "fail":
            out.append((name, ("failed", event[1], event[2])))
            args = None
    return out


def plain(value: Any) -> Any:
    """A Python literal's value as JSON holds it (tuples as lists)."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def reference(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of a Python call list, by Python: ``ast`` finds them, ``ast.literal_eval``
    gives each keyword's value."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # '\\q': Python keeps the backslash, and warns
        return _reference(text)


def _reference(text: str) -> list[tuple[str, dict[str, Any]]]:
    tree = ast.parse(text.strip(), mode="eval").body
    assert isinstance(tree, ast.List)
    out = []
    for node in tree.elts:
        assert isinstance(node, ast.Call)
        assert not node.args
        out.append(
            (
                ast.unparse(node.func),
                {str(kw.arg): plain(ast.literal_eval(kw.value)) for kw in node.keywords},
            )
        )
    return out


def check_every_chunking(text: str, options: dict[str, Any] | None = None) -> None:
    """Whole, split in two anywhere, one character at a time: the same reports."""
    whole = read([text], options)
    assert read(list(text), options) == whole
    for k in range(len(text) + 1):
        assert read([text[:k], text[k:]], options) == whole, k


def check_cuts(text: str) -> None:
    """Cut anywhere, a body reports a prefix of what the whole text gives: nothing it takes
    back, no call ended or failed early, every ended call's arguments JSON."""
    full = expanded(read([text])[0])
    for k in range(len(text)):
        events, end = read([text[:k]])
        if end is None:
            got = expanded(events)
            assert got == full[: len(got)], k
        for _name, args in calls(events):
            assert not isinstance(args, tuple) or args[0] in ("failed", "open")


# -- cases ---------------------------------------------------------------------------------

# vLLM tests/tool_parsers/test_pythonic_tool_parser.py (Llama 3.2's documented examples).
SIMPLE = "get_weather(city='San Francisco', metric='celsius')"
MORE_TYPES = (
    "register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, "
    "role=None, passed_test=True, aliases=['John', 'Johnny'])"
)
ESCAPED = r"""get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')"""

VLLM_CASES = [
    (f"[{SIMPLE}]", [("get_weather", {"city": "San Francisco", "metric": "celsius"})]),
    (
        f"[{MORE_TYPES}]",
        [
            (
                "register_user",
                {
                    "name": "John Doe",
                    "age": 37,
                    "address": {"city": "San Francisco", "state": "CA"},
                    "role": None,
                    "passed_test": True,
                    "aliases": ["John", "Johnny"],
                },
            )
        ],
    ),
    ("[get_weather()]", [("get_weather", {})]),
    ("[do_something_cool(additional_data={})]", [("do_something_cool", {"additional_data": {}})]),
    ("[do_something_cool(steps=[])]", [("do_something_cool", {"steps": []})]),
    (
        f"[{ESCAPED}]",
        [("get_weather", {"city": "Martha's Vineyard", "metric": '"cool units"'})],
    ),
    (
        f"[{SIMPLE}, {MORE_TYPES}]",
        [("get_weather", {"city": "San Francisco", "metric": "celsius"}), ("register_user", None)],
    ),
    # test_llama4_pythonic_tool_parser.py: no spaces between calls
    (
        "[get_weather(city='LA',metric='C'),register_user(name='Doe',age=9)]",
        [
            ("get_weather", {"city": "LA", "metric": "C"}),
            ("register_user", {"name": "Doe", "age": 9}),
        ],
    ),
]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(("text", "expected"), VLLM_CASES)
def test_vllm_cases_read_as_python_reads_them(text: str, expected: list[tuple[str, Any]]) -> None:
    events, end = read([text + TAIL])
    assert end == len(text)
    got = calls(events)
    assert [name for name, _ in got] == [name for name, _ in expected]
    for (_, args), (_, want) in zip(got, expected, strict=True):
        if want is not None:
            assert same(args, want)
    assert [(n, json.dumps(a)) for n, a in got] == [(n, json.dumps(a)) for n, a in reference(text)]
    check_every_chunking(text + TAIL)
    check_cuts(text)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_literal_kind_maps_to_json_as_python_reads_it() -> None:
    text = (
        "[f(n=None, t=True, f=False, i=-12, big=123456789012345678901234567890, x=0x1F, "
        "o=0o17, b=0b101, u=1_000, fl=1.5, e=-2.5e-3, E=1E+3, dot=5., lead=.5, neg=- 7, "
        "s='single', d=\"double\", tq='''multi\nline''', "
        'td="""a "quoted" word""", '
        r"r=r'\d+\'', uu=u'unicode', j='a' " + '"b"' + " '''c''', "
        r"""esc='\'\"\\\n\t\r\a\b\f\v\0\101', """
        r"hx='\x41\u00e9\U0001F600\N{SNOWMAN}', unk='\q', "
        "cont='a\\\nb', "
        "lst=[1, [2, 3], []], tup=(1, 2), one=(1,), par=(1), empty=(), nested=((1)), "
        "dct={'k': {'x': (1,)}, \"m\": []}, trail=[1, 2,], uni='日本語 ✓ 😀')]"
    )
    events, end = read([text])
    assert end == len(text)
    ((name, args),) = calls(events)
    assert name == "f"
    ((_, want),) = reference(text)
    assert same(args, want)
    check_every_chunking(text)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[f()]", [("f", {})]),
        ("[ f ( ) ]", [("f", {})]),
        ("[\n  f(a=1),\n  g(b=2),\n]", [("f", {"a": 1}), ("g", {"b": 2})]),
        ("[]", []),
        ("[weather.get(city='x')]", [("weather.get", {"city": "x"})]),
        ("[f(a = 1 , b\n=\n'x' ,)]", [("f", {"a": 1, "b": "x"})]),
        ("[f(s='é' 'ß')]", [("f", {"s": "éß"})]),
        ("[f(k={'a' 'b': 1})]", [("f", {"k": {"ab": 1}})]),
        ("[f(k={r'\\d': u'x'})]", [("f", {"k": {"\\d": "x"}})]),
        ("[f(t=((1, 2), (3,)))]", [("f", {"t": [[1, 2], [3]]})]),
        ("[f(t=('a' 'b',))]", [("f", {"t": ["ab"]})]),
        ("[f(x=-0, y=-0.0)]", [("f", {"x": 0, "y": -0.0})]),
    ],
)
def test_shapes(text: str, expected: list[tuple[str, Any]]) -> None:
    events, end = read([text + TAIL])
    assert end == len(text)
    assert [(n, json.dumps(a)) for n, a in calls(events)] == [
        (n, json.dumps(a)) for n, a in expected
    ]
    assert [(n, json.dumps(a)) for n, a in reference(text)] == [
        (n, json.dumps(a)) for n, a in expected
    ]
    check_every_chunking(text + TAIL)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_arguments_stream_as_they_come() -> None:
    sink = Recorder(VARIANTS)
    body = BODIES["pythonic"](sink, {})
    body.feed("[write(path='a.txt', text='hello ")
    assert joined(sink.events)[-1] == ("args", '{"path":"a.txt","text":"hello ')
    body.feed('wor"ld\\n')
    assert joined(sink.events)[-1] == ("args", '{"path":"a.txt","text":"hello wor\\"ld\\n')
    assert body.feed("')]") == 3
    assert sink.events[-1] == ("end",)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_long_string_is_not_buffered_and_is_read_in_one_search() -> None:
    value = "x" * 200_000
    events, end = read(["[f(a='", value, "')]"], limit=100)
    assert end is not None
    assert calls(events) == [("f", {"a": value})]


# -- errors and resync ---------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("text", "expected", "end"),
    [
        # vLLM test_bad_sibling_call_does_not_drop_good_calls: bytes fail, the sibling stands
        (
            f"[bad(x=b'z'), {SIMPLE}]",
            [("bad", ("failed", 7, False)), ("get_weather", "ok")],
            None,
        ),
        # vLLM test_non_finite_argument_rejected
        (
            f"[calc(x=1e999), {SIMPLE}]",
            [("calc", ("failed", 8, False)), ("get_weather", "ok")],
            None,
        ),
        # vLLM test_good_call_survives_unparsable_sibling: an unescaped quote
        (
            f"[{SIMPLE}, f(a='x 'y', b='z')]",
            [("get_weather", "ok"), ("f", ("failed", 62, False))],
            None,
        ),
        # vLLM test_streaming_mismatched_brackets_reported_once: one fault, reported once
        ("[foo(x=1])]", [("foo", ("failed", 8, False))], None),
        ("[f(x)]", [("f", ("failed", 3, False))], None),
        ("[f(1, a=2), g()]", [("f", ("failed", 3, False)), ("g", {})], None),
        ("[f(**kw), g()]", [("f", ("failed", 3, False)), ("g", {})], None),
        ("[f(a=x), g()]", [("f", ("failed", 5, False)), ("g", {})], None),
        ("[f(a=float('inf')), g()]", [("f", ("failed", 5, False)), ("g", {})], None),
        ("[f(a=1, a=2), g()]", [("f", ("failed", 8, False)), ("g", {})], None),
        ("[f(a==1), g()]", [("f", ("failed", 3, False)), ("g", {})], None),
        ("[f(class=1), g()]", [("f", ("failed", 3, False)), ("g", {})], None),
        ("[f(a='x\n'), g()]", [("f", ("failed", 7, False)), ("g", {})], None),
        ("[f(a='\\x4g'), g()]", [("f", ("failed", 6, False)), ("g", {})], None),
        ("[f(a='\\N{NO SUCH NAME}'), g()]", [("f", ("failed", 6, False)), ("g", {})], None),
        ("[f(a=f'x'), g()]", [("f", ("failed", 5, False)), ("g", {})], None),
        ("[f(a={1: 2}), g()]", [("f", ("failed", 6, False)), ("g", {})], None),
        ("[f(a={'x', 'y'}), g()]", [("f", ("failed", 9, False)), ("g", {})], None),
        ("[f(a=1j), g()]", [("f", ("failed", 5, False)), ("g", {})], None),
        ("[f(a=007), g()]", [("f", ("failed", 5, False)), ("g", {})], None),
        ("[f(a=--1), g()]", [("f", ("failed", 6, False)), ("g", {})], None),
        ("[f(a=[1 2]), g()]", [("f", ("failed", 8, False)), ("g", {})], None),
        ("[f(a=(1,]), g()]", [("f", ("failed", 8, False)), ("g", {})], None),
        ("[f(a=1 b=2), g()]", [("f", ("failed", 7, False)), ("g", {})], None),
        ("[1, g()]", [(None, ("failed", 1, True)), ("g", {})], None),
        ("['x', g()]", [(None, ("failed", 1, True)), ("g", {})], None),
        ("[f, g()]", [(None, ("failed", 2, True)), ("g", {})], None),
        ("[f.(a=1), g()]", [(None, ("failed", 1, True)), ("g", {})], None),
        ("[def(a=1), g()]", [(None, ("failed", 1, True)), ("g", {})], None),
        ("[f x(a=1), g()]", [(None, ("failed", 3, True)), ("g", {})], None),
    ],
)
def test_a_malformed_call_fails_where_it_breaks_and_its_siblings_stand(
    text: str, expected: list[tuple[str | None, Any]], end: int | None
) -> None:
    events, got_end = read([text + TAIL])
    assert got_end == (len(text) if end is None else end)
    got = calls(events)
    assert len(got) == len(expected)
    for (name, args), (want_name, want) in zip(got, expected, strict=True):
        assert name == want_name
        if want == "ok":
            assert isinstance(args, dict)
        else:
            assert args == want
    check_every_chunking(text + TAIL)
    check_cuts(text)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_fault_position_is_the_first_bad_character_across_pieces() -> None:
    text = "[get_weather(city='Paris', days=three)]"
    at = text.index("three")
    for k in range(len(text) + 1):
        events, _ = read([text[:k], text[k:]])
        assert ("fail", at, False) in events


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_cut_call_reports_nothing_more() -> None:
    events, end = read(["[f(a='unterminated"])
    assert end is None
    assert calls(events) == [("f", ("open", '{"a":"unterminated'))]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_depth_is_bounded() -> None:
    deep = "[f(a=" + "[" * MAX_DEPTH + "]" * MAX_DEPTH + ")]"
    assert calls(read([deep])[0]) == [("f", {"a": json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)})]
    deeper = "[f(a=" + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "), g()]"
    assert calls(read([deeper])[0]) == [("f", ("failed", 5 + MAX_DEPTH, False)), ("g", {})]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_name_or_number_longer_than_the_limit_fails_the_call() -> None:
    events, _ = read(["[f(a=" + "1" * 50 + "), g()]"], limit=20)
    assert calls(events) == [("f", ("failed", 5, False)), ("g", {})]
    events, _ = read(["[" + "f" * 50 + "(), g()]"], limit=20)
    assert calls(events) == [(None, ("failed", 1, True)), ("g", {})]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_parenthesis_holds_at_most_the_limit() -> None:
    events, _ = read(["[f(a=('" + "x" * 50 + "',)), g()]"], limit=20)
    ((name, args), second) = calls(events)
    assert name == "f"
    assert args[0] == "failed"
    assert second == ("g", {})
    events, _ = read(["[f(a=('" + "x" * 10 + "',)), g()]"], limit=20)
    assert calls(events) == [("f", {"a": ["x" * 10]}), ("g", {})]


# -- variants ------------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("text", "options", "expected", "warnings", "end"),
    [
        # Olmo 3 (vLLM test_olmo3_tool_parser.py): JSON literals, newline-separated calls
        (
            "register_user(role=null, passed_test=true, x=false)\nget_weather()</function_calls>",
            {"brackets": False, "json_literals": True},
            [
                ("register_user", {"role": None, "passed_test": True, "x": False}),
                ("get_weather", {}),
            ],
            [],
            -len("</function_calls>"),
        ),
        (
            "[f(a=true)]",
            {},
            [("f", {"a": True})],
            ["json-literals"],
            0,
        ),
        (
            "get_weather(city='LA')<|python_end|>",
            {},
            [("get_weather", {"city": "LA"})],
            ["no-brackets"],
            -len("<|python_end|>"),
        ),
        ("[f() g()]", {}, [("f", {}), ("g", {})], ["missing-comma"], 0),
        ("[f(), g()<|python_end|>", {}, [("f", {}), ("g", {})], ["unclosed-list"], -14),
        # LFM2 (ollama model/parsers/lfm2.go): a bracketed list inside its own markers
        (
            "[func1(arg='v'), func2(x=1)]<|tool_call_end|>",
            {},
            [("func1", {"arg": "v"}), ("func2", {"x": 1})],
            [],
            -len("<|tool_call_end|>"),
        ),
        # without brackets, the skip after a fault stops at a newline or a marker
        (
            "bad(x=b'z')\nget_weather()\nf g</function_calls>",
            {"brackets": False},
            [("bad", "failed"), ("get_weather", {}), (None, "failed")],
            [],
            -len("</function_calls>"),
        ),
    ],
)
def test_variants(
    text: str,
    options: dict[str, Any],
    expected: list[tuple[str | None, Any]],
    warnings: list[str],
    end: int,
) -> None:
    events, got_end = read([text + TAIL], options)
    assert got_end == len(text) + end
    got = [(n, a[0] if isinstance(a, tuple) else a) for n, a in calls(events)]
    assert [(n, json.dumps(a)) for n, a in got] == [(n, json.dumps(a)) for n, a in expected]
    assert [e[1] for e in events if e[0] == "warn"] == warnings
    check_every_chunking(text + TAIL, options)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("text", ["", "   ", "- item", "{json}", "(1)", " 42"])
def test_a_body_that_is_not_a_call_list_ends_at_once(text: str) -> None:
    events, end = read([text + TAIL] if text.strip() else [text])
    assert events == []
    if text.strip():
        assert end == len(text) - len(text.lstrip())
    else:
        assert end is None


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_unknown_options_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown options"):
        BODIES["pythonic"](Recorder(VARIANTS), {"brackets": True, "bogus": 1})


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_declaration_compiles_and_declares_what_its_body_reports() -> None:
    fmt = text_format("llama4_pythonic")
    assert fmt is TEXT_FORMATS["pythonic"] is text_format("pythonic")
    assert fmt.opt_in
    declared = json.loads((FORMATS / "pythonic.json").read_text(encoding="utf-8"))
    assert set(VARIANTS) <= set(declared["variants"])
    for variant, meaning in VARIANTS.items():
        assert declared["variants"][variant] == meaning
    assert {s.grammar for s in fmt.states.values() if s.kind == "body"} == {"pythonic"}


# -- generated call lists ------------------------------------------------------------------

TEXT = st.text(
    st.characters(exclude_categories=["Cs"], max_codepoint=0x1F64F)
    | st.sampled_from("'\"\\\n\r\t()[]{},=:#"),
    max_size=12,
)
NAMES = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,7}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s)
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(TEXT, inner, max_size=3)
    ),
    max_leaves=8,
)
SPACE = st.sampled_from(["", "", " ", "\n", "  ", " \n "])


def escaped(c: str, way: int) -> str:
    """``c`` as one of Python's escapes (``way`` picks which)."""
    code = ord(c)
    options = [f"\\U{code:08x}"]
    if code < 0x10000:
        options.append(f"\\u{code:04x}")
    if code < 0x100:
        options += [f"\\x{code:02x}", f"\\{code:03o}"]
    with contextlib.suppress(ValueError):  # a character without a name
        options.append("\\N{" + unicodedata.name(c) + "}")
    return options[way % len(options)]


@st.composite
def string_literal(draw: st.DrawFn, value: str) -> str:
    """``value`` as a Python string literal, written one of several ways."""
    style = draw(st.integers(0, 6))
    plain_ok = not any(c in value for c in "'\\\r\0")
    if style == 1:
        return json.dumps(value, ensure_ascii=False)  # double quotes, JSON's escapes
    if style == 2:
        return ascii(value)
    if style == 3 and plain_ok and not value.endswith("'"):
        return "'''" + value + "'''"
    if style == 4 and plain_ok and "\n" not in value:
        return draw(st.sampled_from(["r", "R", "u", "U"])) + "'" + value + "'"
    if style == 5 and len(value) > 1:
        k = draw(st.integers(1, len(value) - 1))
        space = draw(SPACE)
        return draw(string_literal(value[:k])) + space + draw(string_literal(value[k:]))
    if style == 6:
        out = []
        for c in value:
            if c in "'\\\n\r\0" or draw(st.booleans()):
                out.append(escaped(c, draw(st.integers(0, 9))))
            else:
                out.append(c)
        return "'" + "".join(out) + "'"
    return repr(value)


@st.composite
def literal(draw: st.DrawFn, value: Any) -> str:
    """``value`` as Python source (tuples, parentheses, trailing commas, spaces drawn)."""
    space = draw(SPACE)
    if isinstance(value, str):
        return draw(string_literal(value))
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        way = draw(st.integers(0, 3))
        if way == 1:
            return ("-" if value < 0 else "") + hex(abs(value))
        if way == 2:
            return f"{value:_}"
        if way == 3:
            return "(" + space + repr(value) + space + ")"
        return repr(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        items = [
            draw(string_literal(k)) + space + ":" + space + draw(literal(v))
            for k, v in value.items()
        ]
        return (
            "{" + ("," + space).join(items) + draw(st.sampled_from(["", ","])) * bool(items) + "}"
        )
    items = [draw(literal(v)) for v in value]
    if isinstance(value, tuple):
        if len(items) == 1:
            return "(" + items[0] + "," + space + ")"
        return "(" + space + ("," + space).join(items) + ")"
    return (
        "["
        + space
        + ("," + space).join(items)
        + draw(st.sampled_from(["", ","])) * bool(items)
        + "]"
    )


@st.composite
def call_lists(draw: st.DrawFn) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """A Python call list and the calls it writes (values as JSON holds them)."""
    expected = []
    written = []
    for _ in range(draw(st.integers(0, 3))):
        name = draw(NAMES)
        keys = draw(st.lists(NAMES, max_size=3, unique=True))
        values = [draw(VALUES) for _ in keys]
        space = draw(SPACE)
        args = [
            k + space + "=" + space + draw(literal(v)) for k, v in zip(keys, values, strict=True)
        ]
        written.append(name + "(" + space + ("," + space).join(args) + ")")
        expected.append((name, {k: plain(v) for k, v in zip(keys, values, strict=True)}))
    space = draw(SPACE)
    text = "[" + space + ("," + space).join(written) + space + "]"
    return text, expected


@per_pass(300, settings(deadline=None))
@given(call_lists(), st.lists(st.integers(0, 10_000), max_size=6))
def test_generated_calls_read_back_as_python_reads_them_in_any_chunking(
    written: tuple[str, list[tuple[str, dict[str, Any]]]], points: list[int]
) -> None:
    text, expected = written
    whole = read([text + TAIL])
    events, end = whole
    assert end == len(text)
    got = calls(events)
    assert [(n, json.dumps(a)) for n, a in got] == [(n, json.dumps(a)) for n, a in expected]
    assert [(n, json.dumps(a)) for n, a in reference(text)] == [
        (n, json.dumps(a)) for n, a in expected
    ]
    assert read(cut(text + TAIL, points)) == whole
    assert read(list(text + TAIL)) == whole


@per_pass(60, settings(deadline=None))
@given(call_lists())
def test_generated_calls_cut_anywhere_report_nothing_they_take_back(
    written: tuple[str, list[tuple[str, dict[str, Any]]]],
) -> None:
    check_cuts(written[0])


@per_pass(300, settings(deadline=None))
@given(
    st.lists(
        st.sampled_from(
            [
                "[",
                "]",
                "(",
                ")",
                "{",
                "}",
                ",",
                "=",
                ":",
                "'",
                '"',
                "\\",
                "\n",
                " ",
                "f",
                "a",
                "1",
                "x",
                "True",
                "true",
                "r",
                "b",
                ".",
                "-",
                "e",
                "'''",
                "<|python_end|>",
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
    for _name, args in calls(whole[0]):
        assert isinstance(args, dict) or args[0] in ("failed", "open")


# -- end to end ----------------------------------------------------------------------------


def stitched(text: str, fmt: str = "pythonic", pieces: int = 0) -> Any:
    chunks = [text] if not pieces else [text[i : i + pieces] for i in range(0, len(text), pieces)]
    return toolstitch.stitch(chunks, text_format=fmt).collect()


def outcome(result: Any) -> tuple[Any, ...]:
    return (
        [(c.name, c.parsed_arguments) for c in result.calls],
        result.text,
        [d.error.code for d in result.discarded],
    )


@pytest.mark.parametrize(
    ("text", "fmt", "expected_calls", "expected_text", "discarded"),
    [
        (  # Llama 3.2: the whole output is the list
            f"[{SIMPLE}, get_weather()]",
            "pythonic",
            [("get_weather", {"city": "San Francisco", "metric": "celsius"}), ("get_weather", {})],
            "",
            [],
        ),
        (  # vLLM llama4: <|python_start|>…<|python_end|>
            "<|python_start|>[get_weather(city='LA', metric='C')]<|python_end|>",
            "llama4_pythonic",
            [("get_weather", {"city": "LA", "metric": "C"})],
            "",
            [],
        ),
        (  # vLLM llama4: the list without <|python_end|>
            "<|python_start|>[get_weather(city='LA', metric='C'),register_user(name='Doe', age=9)]",
            "pythonic",
            [
                ("get_weather", {"city": "LA", "metric": "C"}),
                ("register_user", {"name": "Doe", "age": 9}),
            ],
            "",
            [],
        ),
        (  # vLLM test_no_tool_call: marker-less text is text
            "How can I help you today?",
            "pythonic",
            [],
            "How can I help you today?",
            [],
        ),
        (  # a list only where the output starts with one
            "See [1] and [f(a=1)]",
            "pythonic",
            [],
            "See [1] and [f(a=1)]",
            [],
        ),
        (
            "Checking.<|python_start|>[f(a=1)]<|python_end|> Done.",
            "pythonic",
            [("f", {"a": 1})],
            "Checking. Done.",
            [],
        ),
        (  # vLLM llama4 test_bad_sibling_call_does_not_drop_good_calls
            "<|python_start|>[bad(x=b'z'), get_weather(city='LA', metric='C')]<|python_end|>",
            "pythonic",
            [("get_weather", {"city": "LA", "metric": "C"})],
            "",
            ["malformed-arguments"],
        ),
        (  # a call cut by the end of the output is discarded, never dispatched
            "[f(a=1), g(b='cut",
            "pythonic",
            [("f", {"a": 1})],
            "",
            ["truncated-arguments"],
        ),
    ],
)
def test_end_to_end_in_any_chunking(
    text: str, fmt: str, expected_calls: list[Any], expected_text: str, discarded: list[str]
) -> None:
    results = [outcome(stitched(text, fmt, n)) for n in (0, 1, 3, 7)]
    assert results[0] == (expected_calls, expected_text, discarded)
    assert all(r == results[0] for r in results[1:])


def test_end_to_end_random_chunkings_agree() -> None:
    text = f"<|python_start|>[{SIMPLE}, {MORE_TYPES}, bad(a=x), f()]<|python_end|>tail"
    whole = outcome(stitched(text))
    rng = random.Random(30)
    for _ in range(20):
        pieces = cut(text, rng.sample(range(len(text)), 6))
        assert outcome(toolstitch.stitch(pieces, text_format="pythonic").collect()) == whole
    assert [name for name, _ in whole[0]] == ["get_weather", "register_user", "f"]
    assert whole[2] == ["malformed-arguments"]


def test_end_to_end_a_fault_is_placed_in_the_text() -> None:
    text = "[get_weather(city='Paris',\n  days=three)]"
    result = stitched(text)
    (discarded,) = result.discarded
    error = discarded.error
    assert error.code == "malformed-arguments"
    assert (error.offset, error.line, error.column) == (text.index("three"), 2, 8)
