"""The bracket scanner (quirk layer, messages) agrees with a character-by-character reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolstitch.json.brackets import BracketScanner


def _reference(text: str) -> tuple[int, bool, bool]:
    """(offset after the root's closing bracket or -1, in_string at the end, started)."""
    depth, in_string, escape, started = 0, False, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
            started = True
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return i + 1, in_string, started
        elif ch not in " \t\r\n":
            started = True
    return -1, in_string, started


ALPHABET = st.sampled_from(list('{}[]"\\ a1:,\n'))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(ALPHABET, max_size=12), max_size=8))
def test_scanner_matches_the_reference_for_any_split(pieces: list[str]) -> None:
    text = "".join(pieces)
    close, in_string, started = _reference(text)
    scanner = BracketScanner()
    fed = 0
    for piece in pieces:
        if scanner.closed:
            break
        offset = scanner.close_offset(piece)
        scanner.feed(piece)
        if offset >= 0:
            assert fed + offset == close
        fed += len(piece)
    assert scanner.closed == (close >= 0)
    if close < 0:
        assert scanner.in_string == in_string
        assert scanner.started == started
