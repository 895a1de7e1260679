"""Markers in text fed piece by piece (toolstitch.text.markers): the same hits and text as a
reader of the whole text, for every chunking, holding back only what may still become one.

The reference is the plain reading: the earliest occurrence of any marker (``str.find`` of
each), the text before it, then the same from after it.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunks import split
from strategies import per_pass
from toolstitch.text.markers import MarkerScanner, MarkerSet

Piece = tuple[str, str]  # ("text", s) or ("marker", m)


def reference(text: str, markers: tuple[str, ...]) -> list[Piece]:
    out: list[Piece] = []
    position = 0
    while True:
        found = [(i, m) for m in markers if (i := text.find(m, position)) >= 0]
        if not found:
            break
        index, marker = min(found)
        out += [("text", text[position:index]), ("marker", marker)]
        position = index + len(marker)
    out.append(("text", text[position:]))
    return normal(out)


def normal(pieces: list[Piece]) -> list[Piece]:
    """Adjacent text pieces joined, empty ones dropped: the shape any chunking agrees on."""
    out: list[Piece] = []
    for kind, value in pieces:
        if kind == "text" and not value:
            continue
        if kind == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + value)
        else:
            out.append((kind, value))
    return out


def scanned(chunks: list[str], markers: MarkerSet) -> list[Piece]:
    scanner = MarkerScanner(markers)
    out: list[Piece] = []
    for chunk in chunks:
        rest: str | None = chunk
        while rest:
            text, marker, rest = scanner.scan(rest)
            out.append(("text", text))
            if marker is not None:
                out.append(("marker", marker))
            # Exactly the longest suffix that may still become a marker is held back.
            assert len(scanner.held) <= markers.hold
            assert any(m.startswith(scanner.held) for m in markers.markers)
    out.append(("text", scanner.close()))
    return normal(out)


def maximal_hold(read: str, held: str, markers: tuple[str, ...]) -> bool:
    """``held`` is the longest suffix of ``read`` that is a proper prefix of a marker."""
    longest = max(
        (
            k
            for k in range(len(read) + 1)
            if any(m.startswith(read[len(read) - k :]) for m in markers)
        ),
        default=0,
    )
    return len(held) == longest


# Markers as the formats write them, in sets whose members contain no other.
SETS = [
    ("<tool_call>", "</tool_call>", "<think>", "</think>"),
    ("[TOOL_CALLS]", "[ARGS]"),
    ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"),
    ("<|channel|>", "<|message|>", "<|call|>", "<|end|>", "<|start|>"),
    ("aab", "abac", "bad"),  # overlapping prefixes and suffixes: the failure links at work
]


@st.composite
def texts(draw: st.DrawFn) -> tuple[tuple[str, ...], str]:
    markers = draw(st.sampled_from(SETS))
    alphabet = [*sorted({c for m in markers for c in m}), "x", "\n", "é"]
    pieces = st.one_of(
        st.sampled_from(markers),
        st.sampled_from(markers).map(lambda m: m[: len(m) // 2]),  # unfinished markers
        st.text(alphabet=alphabet, max_size=6),
    )
    return markers, "".join(draw(st.lists(pieces, max_size=12)))


@per_pass(300, settings(deadline=None))
@given(texts(), st.lists(st.integers(0, 200), max_size=10))
def test_any_chunking_finds_what_a_whole_reading_finds(
    case: tuple[tuple[str, ...], str], cuts: list[int]
) -> None:
    markers, text = case
    compiled = MarkerSet(markers)
    expected = reference(text, markers)
    chunks = [piece.decode("utf-8") for piece in split(text.encode("utf-8"), [])]
    assert scanned(chunks or [""], compiled) == expected
    pieces = [
        text[a:b] for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), len(text)], strict=True)
    ]
    assert scanned(pieces, compiled) == expected
    assert scanned(list(text), compiled) == expected  # one character at a time


@per_pass(200, settings(deadline=None))
@given(texts())
def test_what_is_held_back_is_exactly_what_may_still_become_a_marker(
    case: tuple[tuple[str, ...], str],
) -> None:
    markers, text = case
    compiled = MarkerSet(markers)
    scanner = MarkerScanner(compiled)
    read = ""  # the text since the last hit, as fed
    for char in text:
        _, marker, _ = scanner.scan(char)
        read = "" if marker is not None else read + char
        if marker is None:
            assert maximal_hold(read, scanner.held, markers), (read, scanner.held)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_rest_after_a_marker_is_handed_back_unread() -> None:
    scanner = MarkerScanner(MarkerSet(["<tool_call>", "</tool_call>"]))
    assert scanner.scan("Hello <tool_") == ("Hello ", None, "")
    assert scanner.held == "<tool_"
    assert scanner.scan('call>{"a": 1}</tool_call>after') == (
        "",
        "<tool_call>",
        '{"a": 1}</tool_call>after',
    )
    assert scanner.scan('{"a": 1}</tool_call>after') == ('{"a": 1}', "</tool_call>", "after")
    assert scanner.scan("after <") == ("after ", None, "")
    assert scanner.close() == "<"  # an unfinished marker is text
    assert scanner.held == ""


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_flush_hands_out_the_held_text() -> None:
    scanner = MarkerScanner(MarkerSet(["[TOOL_CALLS]"]))
    assert scanner.scan("ok [TOOL") == ("ok ", None, "")
    assert scanner.flush() == "[TOOL"
    assert scanner.scan("_CALLS]") == ("_CALLS]", None, "")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_text_without_marker_characters_is_handed_out_at_once() -> None:
    scanner = MarkerScanner(MarkerSet(["<tool_call>"]))
    assert scanner.scan("plain words, no brackets") == ("plain words, no brackets", None, "")
    assert scanner.held == ""


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_fullwidth_markers_are_exact_code_points() -> None:
    begin = "<｜tool▁call▁begin｜>"
    scanner = MarkerScanner(MarkerSet([begin]))
    assert scanner.scan("<|tool_call_begin|>") == ("<|tool_call_begin|>", None, "")
    assert scanner.scan("a" + begin + "b") == ("a", begin, "b")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    "markers",
    [["<a>", "x<a>y"], ["<tool_call>", "<tool_call>x"], ["ab", "b"], [""]],
)
def test_a_set_whose_markers_contain_one_another_is_refused(markers: list[str]) -> None:
    with pytest.raises(ValueError, match="marker"):
        MarkerSet(markers)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_duplicates_are_one_marker_and_the_hold_bound_is_the_longest_less_one() -> None:
    compiled = MarkerSet(["<think>", "<think>", "</think>"])
    assert compiled.markers == ("<think>", "</think>")
    assert compiled.hold == len("</think>") - 1
    assert MarkerSet([]).hold == 0
    assert MarkerScanner(MarkerSet([])).scan("any <text>") == ("any <text>", None, "")
