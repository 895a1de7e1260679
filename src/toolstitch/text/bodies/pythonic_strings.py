"""String literals of the ``pythonic`` body grammar (``toolstitch.text.bodies.pythonic``): their
quotes (one-line and triple, joined literals, raw prefixes), their escapes decoded as Python
decodes them (simple, octal, ``\\x``/``\\u``/``\\U``, ``\\N{name}``; an unknown escape keeps
its backslash) and their text JSON-escaped as it streams; and the lane of a string's plain
characters (``bodies``: the reader may hand such a piece to the core without reading it).

``PythonStrings`` is the part of ``PythonicBody`` that reads them: a base class whose methods
are the body's modes inside a string, with the body's state and reporting declared here and
defined there.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Final

from toolstitch.text.bodies import Steady
from toolstitch.text.literals import json_string

__all__ = ["SPECIALS", "W_JOIN", "W_KEY", "W_VALUE", "PythonStrings", "spaces"]

# What a word (a run of name characters) read in a value's place may be.
W_VALUE, W_KEY, W_JOIN = range(3)

_SPACE: Final = re.compile(r"[ \t\f\r\n]*")
#: The characters that end a run of a string's text: its quote, a backslash, a line break in
#: a one-line string.
SPECIALS: Final = {
    (quote, triple): re.compile("[\\\\" + quote + ("" if triple else "\n") + "]")
    for quote in "'\""
    for triple in (False, True)
}
_OCTAL: Final = frozenset("01234567")
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_HEX_DIGITS: Final = {"x": 2, "u": 4, "U": 8}
_SIMPLE_ESCAPES: Final = dict(  # a backslash before a newline joins the lines
    zip(
        "\n\\'\"abfnrtv",
        ("", "\\", "'", '"', "\a", "\b", "\f", "\n", "\r", "\t", "\v"),
        strict=True,
    )
)
_MAX_CHAR_NAME: Final = 100
#: The simple escapes whose character JSON writes as itself or as a two-character escape
#: (``\\n``, ``\\'``, ...), as ``Steady.decodes`` pairs: the C text lane takes them.
_LANE_DECODES: Final = "".join(
    escape + char
    for escape, char in _SIMPLE_ESCAPES.items()
    if len(char) == 1 and (" " <= char <= "~" or char in "\n\t\r\b\f")
)
#: The lane of a string literal quoted with ``q`` (``PythonicBody.lane``): characters that
#: are themselves in JSON and neither close nor escape; and as data, for the C text lane,
#: which also takes the simple escapes above.
_LANES: Final = {
    q: (
        re.compile(f'[^{q}"\\\\\x00-\x1f]+'),
        Steady(q + "\\", escapes=False, raw=True, decodes=_LANE_DECODES),
    )
    for q in "'\""
}


def spaces(text: str, pos: int) -> int:
    """The index after the whitespace at ``text[pos]``."""
    found = _SPACE.match(text, pos)
    return found.end() if found is not None else pos


class PythonStrings:
    """The string literals of a ``PythonicBody`` (see the module docstring)."""

    # The body's state and reporting (``PythonicBody``), as the string modes use them.
    _mode: Callable[[str, int], int]
    _base: int
    _out: list[str]
    _held: list[str] | None
    _word_ctx: int
    _quote: str
    _raw: bool
    _qrun: int
    _special: re.Pattern[str]
    _esc: str
    _esc_at: int

    def _emit(self, fragment: str) -> None:
        raise NotImplementedError

    def _fail(
        self, message: str, where: int, expected: str, resume: int, markup: bool = False
    ) -> int:
        raise NotImplementedError

    def _fault(self, message: str, pos: int, expected: str) -> int:
        raise NotImplementedError

    def _begin_token(self, pos: int, mode: Callable[[str, int], int], token: str = "") -> None:
        raise NotImplementedError

    def _begin_value(self) -> None:
        raise NotImplementedError

    def _word(self, text: str, pos: int) -> int:
        raise NotImplementedError

    def _after_value(self, text: str, pos: int) -> int:
        raise NotImplementedError

    def _open_string(self, text: str, pos: int, *, raw: bool, join: bool) -> int:
        """A string literal's first quote at ``text[pos]`` (``join``: it continues the
        string before it, ``'a' 'b'``)."""
        if not join:
            self._begin_value()
            self._emit('"')
        self._quote = text[pos]
        self._raw = raw
        self._qrun = 0
        self._mode = self._q1
        return pos + 1

    def _q1(self, text: str, pos: int) -> int:
        if text[pos] == self._quote:
            self._mode = self._q2
            return pos + 1
        self._open_body(triple=False)
        return pos

    def _q2(self, text: str, pos: int) -> int:
        if text[pos] == self._quote:
            self._open_body(triple=True)
            return pos + 1
        self._mode = self._after_str  # '' or "": an empty string
        return pos

    def _open_body(self, triple: bool) -> None:
        self._special = SPECIALS[self._quote, triple]
        self._qrun = -1 if not triple else 0  # -1: a one-line string
        self._mode = self._str

    def _str(self, text: str, pos: int) -> int:
        if self._qrun > 0:  # quotes that may close a triple-quoted string
            if text[pos] == self._quote:
                self._qrun += 1
                if self._qrun == 3:
                    self._mode = self._after_str
                return pos + 1
            self._emit(json_string(self._quote * self._qrun))
            self._qrun = 0
        found = self._special.search(text, pos)
        end = found.start() if found is not None else len(text)
        if end > pos:
            self._emit(json_string(text[pos:end]))
        if found is None:
            return end
        c = text[end]
        if c == "\\":
            self._begin_escape(self._base + end)
        elif c == "\n":
            return self._fault("an unterminated string", end, f"the closing {self._quote}")
        elif self._qrun < 0:
            self._mode = self._after_str
        else:
            self._qrun = 1
        return end + 1

    def _after_str(self, text: str, pos: int) -> int:
        """After a string's closing quote: another literal joins it, else it ends."""
        if (pos := spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        if c in "'\"":
            return self._open_string(text, pos, raw=False, join=True)
        if c.isidentifier():
            self._begin_token(pos, self._word)
            self._word_ctx = W_JOIN
            return pos
        self._emit('"')
        self._mode = self._after_value
        return pos

    def _begin_escape(self, at: int) -> None:
        """A backslash at ``at`` begins an escape: the next character says which."""
        self._esc = ""
        self._esc_at = at
        self._mode = self._escape

    def _escaped(self, char: str) -> None:
        if char:
            self._emit(json_string(char))
        self._esc = ""
        self._mode = self._str

    def _escape(self, text: str, pos: int) -> int:
        """After a backslash in a string (``self._esc``: the escape read so far)."""
        c = text[pos]
        if self._raw:  # in a raw string a backslash stays, and shields the next character
            self._escaped("\\" + c)
            return pos + 1
        kind = self._esc
        if not kind:
            simple = _SIMPLE_ESCAPES.get(c)
            if simple is not None:
                self._escaped(simple)
            elif c in _OCTAL:
                self._esc = "o" + c
            elif c in "xuUN":
                self._esc = c
            else:  # an unknown escape keeps its backslash, as in Python
                self._escaped("\\" + c)
            return pos + 1
        if kind[0] == "o":
            return self._octal(c, pos)
        if kind[0] == "N":
            return self._char_name(c, pos)
        return self._hex(c, pos)

    def _octal(self, c: str, pos: int) -> int:
        if c in _OCTAL and len(self._esc) < 4:
            self._esc += c
            if len(self._esc) < 4:
                return pos + 1
            pos += 1
        self._escaped(chr(int(self._esc[1:], 8)))
        return pos

    def _hex(self, c: str, pos: int) -> int:
        kind = self._esc[0]
        need = _HEX_DIGITS[kind]
        if c not in _HEX:
            return self._fail(
                f"a truncated \\{kind} escape", self._esc_at, f"{need} hex digits", pos
            )
        self._esc += c
        if len(self._esc) <= need:
            return pos + 1
        code = int(self._esc[1:], 16)
        if code > 0x10FFFF:
            return self._fail("an illegal Unicode character", self._esc_at, "≤ \\U0010ffff", pos)
        self._escaped(chr(code))
        return pos + 1

    def _char_name(self, c: str, pos: int) -> int:
        esc = self._esc
        if len(esc) == 1:
            if c != "{":
                return self._fail("a malformed \\N escape", self._esc_at, "'{'", pos)
            self._esc = "N{"
            return pos + 1
        if c != "}":
            if len(esc) > _MAX_CHAR_NAME or c == "\n":
                return self._fail("a malformed \\N escape", self._esc_at, "'}'", pos)
            self._esc += c
            return pos + 1
        try:
            char = unicodedata.lookup(esc[2:])
        except KeyError:
            return self._fail("an unknown Unicode character name", self._esc_at, "a name", pos + 1)
        self._escaped(char)
        return pos + 1

    # -- the lane ----------------------------------------------------------------------

    @property
    def lane(self) -> re.Pattern[str] | None:
        """Inside a string literal that is not raw, with nothing held or counted: a piece of
        characters that are themselves in JSON and neither close nor escape is all
        arguments (``bodies``, the lane)."""
        if (
            self._mode != self._str
            or self._qrun > 0
            or self._held is not None
            or self._raw
            or self._out
        ):
            return None
        return _LANES[self._quote][0]

    @property
    def steady(self) -> Steady | None:
        return None if self.lane is None else _LANES[self._quote][1]

    def laned(self, piece: str) -> None:
        """A piece went by the lane: it was read."""
        self._base += len(piece)

    def skipped(self, chars: int, escape: bool, newline: bool = False) -> None:
        """``chars`` characters went by the lane: they were read (the last a backslash that
        begins an escape, if ``escape``)."""
        self._base += chars
        if escape:
            self._begin_escape(self._base - 1)
