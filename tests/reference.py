"""An independent reference for "how far is this text a valid JSON object text?".

Written from RFC 8259 for the tests, and deliberately unlike ``toolstitch.json.diagnose``: a
plain recursive-descent parser over the whole text. It walks the grammar; when it runs out
of text everything read so far is a viable prefix (``_OutOfText``), and the first character
that no production accepts is reported by position (``_Bad``). JSON is LL(1), so the first
character the parser refuses is exactly the first character ``c`` at ``i`` such that
``text[: i + 1]`` is a prefix of no valid JSON object text.

Rules (RFC 8259, strict): the top-level value is an object; whitespace is space, tab, LF and
CR only; no NaN/Infinity, comments, single quotes, trailing commas or leading zeros; raw
characters below U+0020 are not allowed in strings. A Python ``str`` may hold surrogate code
points: a high surrogate directly followed by a low one (the two halves of one non-BMP
character written raw) is one character; any other surrogate code point is invalid. Escaped
surrogates follow the same rule (as I-JSON, RFC 7493, requires and toolstitch documents):
``\\ud83d\\ude80`` is fine, a lone ``\\ud800`` or ``\\udc00`` is not.

Recursion is one Python frame per nesting level (times a small constant): fine for the small
depths the tests generate, not meant for deep documents.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

__all__ = ["first_bad_offset", "joined", "judged", "load", "object_end", "typed"]

_WS = " \t\n\r"
_HEX = "0123456789abcdefABCDEF"
_DIGITS = "0123456789"
_ESCAPABLE = '"\\/bfnrtu'


class _OutOfText(Exception):
    """The text ended; everything read so far can still continue to a valid text."""


class _Bad(Exception):
    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.end: int | None = None  # just past the top-level object, once it closed

    # -- characters -------------------------------------------------------------------------

    def peek(self) -> str:
        if self.pos >= len(self.text):
            raise _OutOfText
        return self.text[self.pos]

    def expect(self, allowed: str) -> str:
        c = self.peek()
        if c not in allowed:
            raise _Bad(self.pos)
        self.pos += 1
        return c

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _WS:
            self.pos += 1

    # -- grammar ----------------------------------------------------------------------------

    def json_text(self) -> None:
        self.skip_ws()
        self.expect("{")
        self.object_rest()
        self.end = self.pos
        self.skip_ws()
        if self.pos < len(self.text):
            raise _Bad(self.pos)

    def object_rest(self) -> None:
        """After '{': members and the closing '}'."""
        self.skip_ws()
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            self.skip_ws()
            self.expect('"')
            self.string_rest()
            self.skip_ws()
            self.expect(":")
            self.skip_ws()
            self.value()
            self.skip_ws()
            if self.expect(",}") == "}":
                return

    def array_rest(self) -> None:
        """After '[': elements and the closing ']'."""
        self.skip_ws()
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            self.skip_ws()
            self.value()
            self.skip_ws()
            if self.expect(",]") == "]":
                return

    def value(self) -> None:
        c = self.peek()
        if c == "{":
            self.pos += 1
            self.object_rest()
        elif c == "[":
            self.pos += 1
            self.array_rest()
        elif c == '"':
            self.pos += 1
            self.string_rest()
        elif c == "-" or c in _DIGITS:
            self.number()
        elif c == "t":
            self.literal("true")
        elif c == "f":
            self.literal("false")
        elif c == "n":
            self.literal("null")
        else:
            raise _Bad(self.pos)

    def literal(self, word: str) -> None:
        for ch in word:
            self.expect(ch)

    def number(self) -> None:
        if self.peek() == "-":
            self.pos += 1
        if self.expect(_DIGITS) != "0":
            while self.peek() in _DIGITS:
                self.pos += 1
        if self.peek() == ".":
            self.pos += 1
            self.expect(_DIGITS)
            while self.peek() in _DIGITS:
                self.pos += 1
        if self.peek() in "eE":
            self.pos += 1
            if self.peek() in "+-":
                self.pos += 1
            self.expect(_DIGITS)
            while self.peek() in _DIGITS:
                self.pos += 1
        # The number ended at a character that is not part of it; the caller judges it.

    def string_rest(self) -> None:
        """After the opening quote: characters up to and including the closing quote."""
        while True:
            c = self.peek()
            if c == '"':
                self.pos += 1
                return
            if c == "\\":
                self.pos += 1
                if self.expect(_ESCAPABLE) == "u" and self.hex4(_NOT_LOW)[:2] in _HIGH:
                    # A high surrogate escape must be followed by a low one: \uDC00-\uDFFF.
                    self.expect("\\")
                    self.expect("u")
                    self.hex4(_LOW)
            elif c < "\x20":
                raise _Bad(self.pos)
            elif "\ud800" <= c <= "\udbff":
                self.pos += 1
                nxt = self.peek()
                if not "\udc00" <= nxt <= "\udfff":
                    raise _Bad(self.pos)
                self.pos += 1
            elif "\udc00" <= c <= "\udfff":
                raise _Bad(self.pos)
            else:
                self.pos += 1

    def hex4(self, allowed: frozenset[str]) -> str:
        """Four hexadecimal digits whose first two (lower-cased) are one of ``allowed``;
        the value, lower-cased. A digit that no allowed value can start with is bad."""
        digits = ""
        for _ in range(4):
            c = self.expect(_HEX)
            digits += c.lower()
            if digits[:2] not in _STARTS[allowed]:
                raise _Bad(self.pos - 1)
        return digits


# Escaped surrogates, by their first two hex digits: a high one (d800-dbff) must be followed
# by an escaped low one (dc00-dfff), and a low one may appear only there. This is I-JSON
# (RFC 7493, section 2.1), which toolstitch applies on top of RFC 8259.
_LOW = frozenset({"dc", "dd", "de", "df"})
_HIGH = frozenset({"d8", "d9", "da", "db"})
_NOT_LOW = frozenset(f"{n:02x}" for n in range(256)) - _LOW
#: For each allowed set, its values' one- and two-digit beginnings: ``hex4`` asks whether
#: the digits so far begin some allowed value (a set lookup, not a scan of 252 values).
_STARTS = {
    allowed: frozenset(v[:k] for v in allowed for k in (1, 2)) for allowed in (_LOW, _NOT_LOW)
}


def first_bad_offset(text: str) -> int | None:
    """Index of the first character after which ``text`` can no longer be a JSON object text.

    ``None`` when the whole text is a valid JSON object text or a prefix of one.
    """
    try:
        _Parser(text).json_text()
    except _OutOfText:
        return None
    except _Bad as bad:
        return bad.pos
    return None


def object_end(text: str) -> int | None:
    """Offset just past the top-level object's closing brace, if it closed validly.

    What follows the object (whitespace or not) does not matter; ``None`` when the text
    went wrong before the object closed, or the object has not closed yet.
    """
    parser = _Parser(text)
    with contextlib.suppress(_OutOfText, _Bad):
        parser.json_text()
    return parser.end


def judged(text: str) -> tuple[int | None, int | None]:
    """``(first_bad_offset(text), object_end(text))`` from one walk of the text."""
    parser = _Parser(text)
    try:
        parser.json_text()
    except _OutOfText:
        return None, parser.end
    except _Bad as bad:
        return bad.pos, parser.end
    return None, parser.end


def joined(text: str) -> str:
    """``text`` with every raw surrogate pair replaced by the character it encodes."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load(text: str) -> Any:
    """What a strict loader makes of a valid text (raw surrogate pairs joined first)."""
    return json.loads(joined(text), parse_constant=_reject)


def typed(value: Any) -> Any:
    """A form of a loaded JSON value in which ``1``, ``1.0`` and ``True`` differ, for ``==``."""
    if isinstance(value, dict):
        return ("object", [(k, typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("array", [typed(v) for v in value])
    return (type(value).__name__, repr(value))
