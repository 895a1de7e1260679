"""The C text lane (``StitcherBase.feed``, docs/native.md) against the pure-Python Stitcher.

While a call written in the model's text is inside a JSON string argument, the native
``Stitcher`` hands a piece of characters a string holds to the core itself, and tells the
reader afterwards how many characters went by and whether the last began an escape
(``_lane_chars``, ``_lane_escape``, ``TextReader.skipped``). Whatever the pieces, it must give
exactly the events of the pure-Python ``Stitcher``: the same fragments, the same calls, and
faults placed at the same offset, line and column of the model's text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import PROPERTY_SETTINGS
from toolstitch import NATIVE, Stitcher
from toolstitch.testing import PythonStitcher
from toolstitch.vocab.errors import _OffsetError

pytestmark = pytest.mark.skipif(not NATIVE, reason="the C extension is not active")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"content": {"type": "string"}, "n": {"type": "integer"}},
            },
        },
    }
]


def seen(event: object) -> tuple[object, ...]:
    """An event as compared: its repr, and where its error lies in the text."""
    error = getattr(event, "error", None)
    where = (error.offset, error.line, error.column) if isinstance(error, _OffsetError) else ()
    return (repr(event), *where)


def run(
    kind: Any, chunks: list[str], tools: object = None, fmt: str = "hermes"
) -> list[tuple[object, ...]]:
    stitcher = kind(text_format=fmt, tools=tools)
    events = [seen(e) for chunk in chunks for e in stitcher.feed(chunk)]
    return events + [seen(e) for e in stitcher.close()]


def cut(text: str, sizes: list[int]) -> list[str]:
    chunks, pos, k = [], 0, 0
    while pos < len(text):
        size = sizes[k % len(sizes)]
        chunks.append(text[pos : pos + size])
        pos, k = pos + size, k + 1
    return chunks


# What a string argument may hold: what the lane takes (plain characters, escapes of every
# kind, non-ASCII), and what it must leave to Python (quotes, backslashes at a cut, raw
# control characters: a fault the core places in the text).
characters = st.sampled_from([*'ab é€𝄞"\\/\n\t\x01', "\\u00e9", "</tool_call>"])
values = st.lists(characters, max_size=40).map("".join)


@settings(PROPERTY_SETTINGS, max_examples=150)
@given(
    value=values,
    ascii_only=st.booleans(),
    raw=st.sampled_from(["", "\n", "\x01", '"', "\\x"]),  # a fault written into the string
    # after the string: in the arguments (the core's faults), then in the call object and
    # the close marker among the arguments (the reader's own faults, placed by its count)
    tail=st.sampled_from(["", ', "n": 1', ', "n": "one"', ", n", " </tool_call>"]),
    after=st.sampled_from(["", ", x", ', "id": 1']),
    sizes=st.lists(st.integers(1, 7), min_size=1, max_size=6),
    typed=st.booleans(),
)
def test_the_c_text_lane_gives_the_pure_stitchers_events(
    value: str,
    ascii_only: bool,
    raw: str,
    tail: str,
    after: str,
    sizes: list[int],
    typed: bool,
) -> None:
    string = json.dumps(value, ensure_ascii=ascii_only)
    string = string[:-1] + raw + string[-1]
    text = (
        'x\ny <tool_call>{"name": "f", "arguments": {"content": '
        + string
        + tail
        + "}"
        + after
        + "}</tool_call>\nafter"
    )
    chunks = cut(text, sizes)
    tools = TOOLS if typed else None
    assert run(Stitcher, chunks, tools) == run(PythonStitcher, chunks, tools)


def test_the_lane_is_taken_and_the_reader_told() -> None:
    """The native Stitcher takes plain pieces itself (the reader is told later), and a
    fault after them is placed where the whole text places it."""
    head = '<tool_call>{"name": "f", "arguments": {"content": "'
    stitcher = Stitcher(text_format="hermes")
    stitcher.feed(head)
    assert stitcher._text_lane == 0  # the reader says: a string argument of call 0
    assert stitcher.feed("abcd")
    assert stitcher._lane_chars == 4
    stitcher.feed("ef\\")  # ends by beginning an escape
    assert (stitcher._lane_chars, stitcher._lane_escape) == (7, True)
    stitcher.feed('"gh')  # the escaped quote, then more
    assert (stitcher._lane_chars, stitcher._lane_escape) == (10, False)
    events = stitcher.feed("i\nj")  # a raw newline: the Python path, the reader told first
    assert stitcher._lane_chars == 0
    text = head + 'abcdef\\"ghi\nj'
    whole = run(PythonStitcher, [text])
    discards = [e for e in whole if str(e[0]).startswith("CallDiscarded")]
    assert [seen(e) for e in events][-1:] == discards
    assert whole[-1][1:] == (text.index("\n"), 1, text.index("\n") + 1)


# A raw value (the XML-ish formats, a Python string literal): what the lane takes and escapes
# itself (quotes, and the XML-ish formats' backslashes), and what it leaves to Python (line
# breaks, which a format may trim before the close tag; control characters; a "<" that may
# begin the close tag; a Python escape or closing quote).
raw_characters = st.sampled_from(
    [*"ab é€𝄞\"\\/<>'\n\t\x01", "</param", "</parameter>", "\\n", "\\x4", "\\'", "\\b", "\\q"]
)
raw_values = st.lists(raw_characters, max_size=40).map("".join)
RAW_FORMATS = {
    "qwen3-coder": "<tool_call>\n<function=f>\n<parameter=content>\n{}\n</parameter>\n"
    "<parameter=n>\n{}\n</parameter>\n</function>\n</tool_call>",
    "seed-oss": "<seed:tool_call>\n<function=f>\n<parameter=content>{}</parameter>\n"
    "<parameter=n>{}</parameter>\n</function>\n</seed:tool_call>",
    "glm-4.5": "<tool_call>f\n<arg_key>content</arg_key>\n<arg_value>{}</arg_value>\n"
    "<arg_key>n</arg_key>\n<arg_value>{}</arg_value>\n</tool_call>",
    "pythonic": "[f(content='{}', n={}), g(a=\"x\")]",
    "gemma4": '<|tool_call>call:f{{content:<|"|>{}<|"|>,n:{}}}<tool_call|>',
}


def lead(fmt: str) -> str:
    """Text before the call, over a line break (a marker-less format's list starts the
    output: none there)."""
    return "" if fmt == "pythonic" else "x\ny "


@settings(PROPERTY_SETTINGS, max_examples=150)
@given(
    fmt=st.sampled_from(sorted(RAW_FORMATS)),
    value=raw_values,
    n=st.sampled_from(["1", "one", "[1", ""]),
    sizes=st.lists(st.integers(1, 7), min_size=1, max_size=6),
    typed=st.booleans(),
)
def test_the_c_raw_lane_gives_the_pure_stitchers_events(
    fmt: str, value: str, n: str, sizes: list[int], typed: bool
) -> None:
    text = lead(fmt) + RAW_FORMATS[fmt].format(value, n) + "\nafter"
    chunks = cut(text, sizes)
    tools = TOOLS if typed else None
    assert run(Stitcher, chunks, tools, fmt) == run(PythonStitcher, chunks, tools, fmt)


def test_the_raw_lane_escapes_quotes_and_backslashes_itself() -> None:
    stitcher = Stitcher(text_format="qwen3-coder")
    stitcher.feed("<tool_call>\n<function=f>\n<parameter=a>\nx")
    assert stitcher._text_lane == 0
    assert stitcher._lane_raw
    (event,) = stitcher.feed('say "hi\\"')
    assert event.fragment == 'say \\"hi\\\\\\"'  # type: ignore[attr-defined]
    assert stitcher._lane_chars == len('say "hi\\"')


def test_the_python_lane_takes_simple_escapes_and_leaves_the_rest() -> None:
    """A Python string literal's simple escapes go by the lane as their characters (an
    escape cut after its backslash too); any other escape goes to the Python path, which the
    reader is first told sits in an escape."""
    stitcher = Stitcher(text_format="pythonic")
    stitcher.feed("[f(content='ab")
    assert stitcher._text_lane == 0
    seen = []
    for piece in ["c\\", "n", "x\\", "q", "y\\'z\\\\"]:
        fragments = [e.fragment for e in stitcher.feed(piece)]  # type: ignore[attr-defined]
        seen.append((fragments, stitcher._lane_chars, stitcher._lane_escape))
    assert seen == [
        (["c"], 2, True),
        (["\\n"], 3, False),
        (["x"], 5, True),
        (["\\\\q"], 0, False),  # an unknown escape keeps its backslash: Python read it
        (["y'z\\\\"], 6, False),
    ]


#: A file's content, as models write it into a raw value: lines, indentation, quotes,
#: backslashes, non-ASCII, a blank line, a tab, a trailing line break.
CODE = 'def f(x):\n    """A "quoted" \\\\ doc."""\n\n\treturn {\'é\': x}  # ok\r\n'


@pytest.mark.parametrize("fmt", sorted(RAW_FORMATS))
@pytest.mark.parametrize("size", range(1, 9))
def test_a_multiline_raw_value_through_the_lane_is_the_pure_stitchers(fmt: str, size: int) -> None:
    """Every piece size, so that pieces end on, and after, each line break the lane holds."""
    python = CODE.encode("unicode_escape").decode().replace("'", "\\'")
    value = python if fmt == "pythonic" else CODE
    text = lead(fmt) + RAW_FORMATS[fmt].format(value, "1") + "\nafter"
    chunks = cut(text, [size])
    native = run(Stitcher, chunks, TOOLS, fmt)
    assert native == run(PythonStitcher, chunks, TOOLS, fmt)
    assert any("ArgumentsDelta" in str(e[0]) for e in native)


def test_the_raw_lane_counts_lines_and_holds_a_last_line_break() -> None:
    """What C keeps for the reader between pieces: characters, line breaks, the characters
    after the last one, a last line break held (qwen3-coder trims one before the close tag)."""
    stitcher = Stitcher(text_format="qwen3-coder")
    stitcher.feed("<tool_call>\n<function=f>\n<parameter=a>\nxx")
    seen = []
    for piece in ["ab\n", "cd", "\n", "\n", 'e"f\\']:
        fragments = [e.fragment for e in stitcher.feed(piece)]  # type: ignore[attr-defined]
        members = ("_lane_chars", "_lane_lines", "_lane_tail", "_lane_newline")
        seen.append((fragments, *(getattr(stitcher, m) for m in members)))
    assert seen == [
        (["ab"], 3, 1, 0, True),
        (["\\ncd"], 5, 1, 2, False),
        ([], 6, 2, 0, True),
        (["\\n"], 7, 3, 0, True),
        (['\\ne\\"f\\\\'], 11, 3, 4, False),
    ]


def test_a_steady_lane_is_checked_as_it_is_declared() -> None:
    from toolstitch.text.bodies import Steady

    Steady("'\\", escapes=False, raw=True, decodes="nN''")
    with pytest.raises(ValueError, match="decodes pairs"):
        Steady("'\\", escapes=False, decodes="nN")  # not raw
    with pytest.raises(ValueError, match="decodes pairs"):
        Steady("'\\", escapes=False, raw=True, decodes="n")  # not a pair
    with pytest.raises(ValueError, match="ASCII"):
        Steady("é", escapes=False)
    with pytest.raises(ValueError, match="no escapes"):
        Steady('"', escapes=True, raw=True)


@pytest.mark.parametrize("fmt", sorted(RAW_FORMATS))
def test_the_core_counts_every_character_the_raw_lane_gives_it(fmt: str) -> None:
    """The raw lane's fragments are string content valid as they are: the scanner only
    counts them (ts_scan_string_run), and what it counts is what the arguments hold, so a
    fault found later is replayed from the right place."""
    text = lead(fmt) + RAW_FORMATS[fmt].format('say "hi"\\ and é' * 8, "1")
    stitcher = Stitcher(text_format=fmt)  # no tools: no checks, the scanner stays native
    at = text.index("say")
    for chunk in [text[:at], *cut(text[at : at + 60], [3])]:
        stitcher.feed(chunk)
    assert stitcher._lane_chars > 0  # the lane took pieces
    (call,) = stitcher.assembler._calls.values()
    assert getattr(call.tokenizer, "native", False)  # the C scanner, not handed over
    assert call.tokenizer.fed == call.buffer.length > 0
