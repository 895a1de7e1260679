"""The native scanner (toolstitch._native.Scanner) decides every fragment as ArgumentsTokenizer.

Differential: any JSON object text, valid or mutated, any split, through ``native_diff.compare``
(same result or exception, offsets, ``fed``, ``closed``, ``started``, ``depth``, close offset).
Examples: each rule, whether the scanner stays native on the common case and hands over on the
rest, the C entry's promise to change nothing when it declines, and hostile input.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from native_diff import compare
from toolstitch.json import tokenizer as tokenizer_module
from toolstitch.json.tokenizer import (
    ArgumentsTokenizer,
    DepthExceeded,
    DigitsExceeded,
    InvalidFragment,
    NumberOutOfRange,
    make_tokenizer,
)
from toolstitch.vocab import native

if native.extension is None:
    pytest.skip(f"the C extension is not in use: {native.REASON}", allow_module_level=True)

Scanner: Any = native.extension.Scanner

WS = st.sampled_from(["", "", " ", "\n", "\t ", "\r\n"])
# Whitespace, sometimes what is not JSON whitespace (or a control character) in its place.
FAKE_WS = st.sampled_from(["", " ", "\n", "\x0b", "\x0c", " \x0b", "\x00", "\x85", "\xa0"])
NUMBERS = ["0", "-0", "7", "-12", "10.5", "0.25e-3", "1E+9", "6.02e23", "123456", "-0.0"]
# Characters a mutation inserts or replaces with: structure, tokens, and what must fail.
NOISE = st.one_of(
    st.sampled_from('"\\{}[]:,0.eE+-tn \x0b\x0c\x00\x1f'),  # structure, tokens, fake whitespace
    st.sampled_from("123456789fulsa\t\n\r\x7f\ud800\udc00\ud83d\ude00é€"),
)


def _string_char(ch: str, form: int) -> str:
    """One character written raw, escaped, or (astral) as raw or escaped surrogate halves."""
    if ch in '"\\' or ch < " ":
        return "\\" + {'"': '"', "\\": "\\", "\n": "n", "\t": "t"}.get(ch, f"u{ord(ch):04x}")
    if form == 0 or (ord(ch) < 0x80 and form < 3):
        return ch
    if ord(ch) < 0x10000:
        return f"\\u{ord(ch):04X}" if form == 3 else ch
    high, low = divmod(ord(ch) - 0x10000, 0x400)
    halves = (chr(0xD800 + high), chr(0xDC00 + low))
    return f"\\u{ord(halves[0]):04x}\\u{ord(halves[1]):04x}" if form == 1 else "".join(halves)


@st.composite
def json_string(draw: st.DrawFn) -> str:
    text = draw(st.text(st.characters(exclude_categories=["Cs"]), max_size=6))
    form = draw(st.integers(0, 3))  # one form per string keeps generation cheap
    escape = draw(st.sampled_from(["", "", '\\"', "\\/", "\\b", "\\f", "\\r"]))
    return '"' + "".join(_string_char(ch, form) for ch in text) + escape + '"'


@st.composite
def json_value(draw: st.DrawFn, depth: int = 0, ws: st.SearchStrategy[str] = WS) -> str:
    kind = draw(st.integers(0, 5 if depth < 4 else 3))
    if kind == 0:
        return draw(st.sampled_from([*NUMBERS, "true", "false", "null"]))
    if kind == 1:
        return str(draw(st.integers(-(10**30), 10**30)))
    if kind in (2, 3):
        return draw(json_string())
    if kind == 4:
        items = draw(st.lists(json_value(depth + 1, ws), max_size=3))
        return "[" + ",".join(draw(ws) + item + draw(ws) for item in items) + "]"
    return draw(json_object(depth + 1, ws))


@st.composite
def json_object(draw: st.DrawFn, depth: int = 0, ws: st.SearchStrategy[str] = WS) -> str:
    members = draw(st.lists(st.tuples(json_string(), json_value(depth, ws)), max_size=3))
    body = ",".join(f"{draw(ws)}{key}{draw(ws)}:{draw(ws)}{value}" for key, value in members)
    return "{" + body + draw(ws) + "}"


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(json_object())
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace", "truncate", "trail"]))
        noise = draw(NOISE)
        if action == "insert":
            text = text[:where] + noise + text[where:]
        elif action == "delete":
            text = text[:where] + text[where + 1 :]
        elif action == "replace":
            text = text[:where] + noise + text[where + 1 :]
        elif action == "truncate":
            text = text[:where]
        else:
            text = text + draw(WS) + noise
    return draw(WS) + text


@st.composite
def split(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12))))
    bounds = [0, *[cut for cut in cuts if cut < len(text)], len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


@st.composite
def case(draw: st.DrawFn) -> tuple[list[str], int, int]:
    text = draw(st.one_of(json_object(), mutated(), json_object(ws=FAKE_WS), _limits_text()))
    return draw(split(text)), draw(st.sampled_from([1, 2, 3, 5, 256])), draw(st.integers(1, 12))


@st.composite
def _limits_text(draw: st.DrawFn) -> str:
    """Deep nesting and long digit runs, around the limits the case draws."""
    depth = draw(st.integers(0, 7))
    digits = "".join(draw(st.lists(st.sampled_from("0123456789"), min_size=1, max_size=16)))
    number = draw(st.sampled_from([digits, "-" + digits, "1." + digits, "2e" + digits]))
    return '{"a":' + "[" * depth + number + "]" * depth + "}"


@settings(max_examples=150, deadline=None)
@given(case())
def test_the_scanner_decides_as_the_python_tokenizer(drawn: tuple[list[str], int, int]) -> None:
    fragments, max_depth, max_digits = drawn
    compare(fragments, max_depth=max_depth, max_digits=max_digits)


@settings(max_examples=30, deadline=None)
@given(json_object())
def test_valid_text_stays_native_byte_by_byte(text: str) -> None:
    scanner = compare(list(text))
    assert scanner.native


# -- each rule, and whether the scan stays native -------------------------------------------------

NATIVE_CASES = [
    ["  ", "\n{", "}", "  \t"],  # whitespace before the brace and after the close
    ['{"a":"\\', "u00", 'e9 \\"x\\\\ \\/\\b\\f\\n\\r\\t"}'],  # escapes split
    ['{"a":"\\ud83d', "\\", "u", "d", "e", "00", '"}'],  # an escaped pair split everywhere
    ['{"a":"\ud83d', '\ude00"}'],  # raw halves in separate fragments, joined as Python does
    ['{"a":"\ud83d\ude00\U0001f600é\x7f\uffff"}'],
    ['{"a":[1', ".", "5e", "+", "3,-0,0.1E-2,12]}"],  # numbers split anywhere
    ['{"a":[tr', "ue,f", "als", "e,n", "ull]}"],  # literals split
    ['{"k":{}, "l":[], "m":[{}, [[]]] }'],
    ['{"a":1}'],
    ['{"a":"', "[[[[[[[[", '"}'],  # brackets in strings do not count
]


@pytest.mark.parametrize("fragments", NATIVE_CASES)
def test_common_text_is_scanned_natively(fragments: list[str]) -> None:
    assert compare(fragments, max_depth=4, max_digits=8).native


HANDOVER_CASES: list[tuple[list[str], type[Exception] | None]] = [
    (['{"a":1', "x"], InvalidFragment),
    (["[1]"], InvalidFragment),  # the top level must be an object
    (['"x"'], InvalidFragment),
    (['{"a":01}'], InvalidFragment),
    (['{"a":1.}'], InvalidFragment),
    (['{"a":-}'], InvalidFragment),
    (['{"a":tru', "x"], InvalidFragment),
    (['{"a":1 2}'], InvalidFragment),
    (['{"a" "b"}'], InvalidFragment),
    (['{"a":1,}'], InvalidFragment),
    (['{"a":"\\x"}'], InvalidFragment),
    (['{"a":"\\ud83d', 'x"}'], InvalidFragment),  # escaped high without its low half
    (['{"a":"\\udc00"}'], InvalidFragment),  # escaped lone low
    (['{"a":"\\ud', "c"], InvalidFragment),  # can only become a lone low
    (['{"a":"\ud83d', 'x"}'], InvalidFragment),  # raw high, then no low
    (['{"a":"\ude00"}'], InvalidFragment),  # raw lone low
    (['{"a":"\x01"}'], InvalidFragment),  # control character in a string
    (['{"a":1,\x0b"b":2}'], InvalidFragment),  # vertical tab is not JSON whitespace
    (['{"a":\x0c1}'], InvalidFragment),
    (['{"a":1} x'], InvalidFragment),  # text after the close, same fragment
    (['{"a":[[[[]]]]}'], DepthExceeded),
    (['{"a":123456789'], DigitsExceeded),
    (['{"a":1234', "56789}"], DigitsExceeded),
]


@pytest.mark.parametrize(("fragments", "error"), HANDOVER_CASES)
def test_the_rest_is_handed_over(fragments: list[str], error: type[Exception] | None) -> None:
    scanner = compare(fragments, max_depth=4, max_digits=8)
    assert not scanner.native
    if error is not None:
        with pytest.raises(error):
            _feed_python(fragments)


def _feed_python(fragments: list[str]) -> None:
    tokenizer = ArgumentsTokenizer(max_depth=4, max_number_digits=8)
    for fragment in fragments:
        tokenizer.feed(fragment)


@pytest.mark.parametrize(
    ("fragments", "error"),
    [
        (['{"a":1e1000000000000000000}'], NumberOutOfRange),
        (['{"a":1e-1000000000000000000', "}"], None),  # 19 digits: Python decides
        (['{"a":1e1000000000000000', "0"], None),  # 16 digits: Python decides
        (['{"a":1e999999999999999}'], None),  # 15 digits: still native
    ],
)
def test_long_exponents(fragments: list[str], error: type[Exception] | None) -> None:
    scanner = compare(fragments)
    assert scanner.native == fragments[0].endswith("9}")
    if error is not None:
        tokenizer = ArgumentsTokenizer(max_depth=256, max_number_digits=4000)
        for fragment in fragments[:-1]:
            tokenizer.feed(fragment)
        with pytest.raises(error):
            tokenizer.feed(fragments[-1])


def test_digits_exceeded_carries_the_python_offset_and_limit() -> None:
    scanner = _scanner(max_digits=5)
    scanner.feed('{"a": 123')
    with pytest.raises(DigitsExceeded) as raised:
        scanner.feed("4567")
    assert (raised.value.offset, raised.value.limit) == (11, 5)  # the sixth digit


def _scanner(*, max_depth: int = 256, max_digits: int = 4000) -> Any:
    parts: list[str] = []
    scanner = make_tokenizer(
        max_depth=max_depth, max_number_digits=max_digits, text=lambda: "".join(parts)
    )
    real_feed = scanner.feed

    class Fed:  # appends to the text first, as the assembler does
        def __getattr__(self, name: str) -> Any:
            return getattr(scanner, name)

        def feed(self, fragment: str) -> bool:
            parts.append(fragment)
            return bool(real_feed(fragment))

    return Fed()


def test_the_c_entry_changes_nothing_when_it_declines() -> None:
    scanner = _scanner()
    assert not scanner.feed('{"a":[[{"b":[[')
    before = (scanner.fed, scanner.depth, scanner.close_offset("]]}]]}"))
    # Closes four containers, opens an array where an object was, then fails.
    assert scanner._scan("]]}, [x") == 2
    assert (scanner.fed, scanner.depth, scanner.close_offset("]]}]]}")) == before
    assert scanner.native
    assert scanner.feed("]]}]]}") is True
    assert scanner.native
    assert scanner.closed


def test_the_c_entry_reports_open_and_closed() -> None:
    scanner = _scanner()
    assert scanner._scan('{"a":') == 0  # (the test hook does not append to the text)
    assert scanner._scan("1}") == 1
    assert scanner.closed


def test_set_listener_hands_over_at_once() -> None:
    scanner = _scanner()
    batches: list[object] = []
    scanner.set_listener(batches.append)
    assert not scanner.native
    assert scanner.feed('{"a": 1}') is True
    assert batches


def test_set_listener_after_the_first_fragment_raises_as_python() -> None:
    scanner = _scanner()
    scanner.feed("{")
    with pytest.raises(RuntimeError, match="before the first fragment"):
        scanner.set_listener(print)


def test_set_listener_none_changes_nothing() -> None:
    scanner = _scanner()
    scanner.set_listener(None)
    assert scanner.native


def test_the_factory_falls_back_to_python() -> None:
    def text() -> str:
        return ""

    kwargs: dict[str, Any] = {"max_depth": 4, "max_number_digits": 8}
    assert not isinstance(make_tokenizer(**kwargs, text=text), ArgumentsTokenizer)
    assert isinstance(make_tokenizer(**kwargs), ArgumentsTokenizer)
    assert isinstance(make_tokenizer(**kwargs, text=text, native=False), ArgumentsTokenizer)
    assert isinstance(make_tokenizer(**kwargs, text=text, listener=print), ArgumentsTokenizer)


def test_the_factory_falls_back_for_another_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    import ijson

    monkeypatch.setattr(tokenizer_module, "default_backend", ijson.get_backend("python"))
    made = make_tokenizer(max_depth=4, max_number_digits=8, text=str)
    assert isinstance(made, ArgumentsTokenizer)
    made.close()


def test_a_feed_after_the_close_is_handed_over() -> None:
    scanner = _scanner()
    assert scanner.feed('{"a":1} ') is True
    assert scanner.feed("  ") is False  # what ArgumentsTokenizer says
    assert not scanner.native


def test_exact_close_and_close() -> None:
    scanner = _scanner()
    assert scanner.exact_close is True
    scanner.close()


def test_the_constructor_needs_every_argument() -> None:
    with pytest.raises(TypeError):
        Scanner(max_depth=4, max_number_digits=8, fallback=print)
    with pytest.raises(TypeError):
        Scanner(max_depth=0, max_number_digits=8, fallback=print, text=str)


# -- hostile input ---------------------------------------------------------------------------------


def test_a_megabyte_string_fragment() -> None:
    body = "x\u00e9\U0001f600" * (1 << 18)
    assert compare(['{"a":"', body, body + '"}']).native


def test_a_hundred_thousand_brackets() -> None:
    scanner = compare(['{"a":' + "[" * 100_000])
    assert not scanner.native


def test_deep_nesting_within_a_high_limit() -> None:
    depth = 3000  # more than the 512 levels one fragment may close natively
    text = '{"a":' + "[" * depth + "]" * depth + "}"
    compare([text[: depth + 5], text[depth + 5 :]], max_depth=depth + 1)
    assert compare([*text[:40], text[40:]], max_depth=depth + 1) is not None


def test_every_code_point_in_a_string() -> None:
    points = "".join(
        chr(c) for c in range(0x20, 0x110000) if not 0xD800 <= c < 0xE000 and chr(c) not in '"\\'
    )
    pieces = [points[i : i + 70_000] for i in range(0, len(points), 70_000)]
    scanner = _scanner()
    assert not any(scanner.feed(piece) for piece in ['{"a":"', *pieces])
    assert scanner.feed('"}')
    assert scanner.native
    # Against Python on a sample (the reference is slow on a million characters).
    assert compare(['{"a":"', points[::97], '"}']).native


@pytest.mark.parametrize("code", [0xD800, 0xDBFF, 0xDC00, 0xDFFF])
def test_lone_surrogates_anywhere(code: int) -> None:
    half = chr(code)
    for text in ['{"a":"' + half + '"}', '{"a":' + half, "{" + half, half]:
        compare([text])
        compare(list(text))
