"""Locate the first character of an arguments text that no JSON object can contain there.

The tokenizer (``json.tokenizer``) learns from yajl *that* a fragment is invalid, but not
where inside the fragment, nor what would have been valid. This module answers both, on the
error path only, by one linear pass over the text with an explicit stack (no recursion, so
100,000 nested brackets cost a list, not the C stack). It implements RFC 8259 with the
top-level value restricted to an object, on the rules of ``json.lexicon``; its verdicts are
cross-checked against yajl and ``json.loads`` in the tests.

The pass is a small state machine: ``_STEPS`` maps what is expected next to the function
that reads the next non-whitespace character in that state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from toolstitch.json.lexicon import (
    ESCAPE_PREFIX,
    LITERAL_WORDS,
    NUMBER,
    NUMBER_PREFIX,
    STRING_TAIL,
    WHITESPACE,
    body_end,
)

__all__ = ["Diagnosis", "diagnose"]


def _escape_expectation(start: str) -> str:
    """What may follow ``start``, the viable beginning of a \\u escape or pair."""
    if len(start) < 6:
        if len(start) == 3 and start[2] in "dD":
            return "one of 0-9, a, b (\\uDC00-\\uDFFF may only follow a high surrogate)"
        if len(start) == 2:
            return "a hexadecimal digit (\\u takes four)"
        return "a hexadecimal digit (\\u takes four; \\uDC00-\\uDFFF only after a high surrogate)"
    if len(start) == 6:
        return "'\\' starting the low-surrogate escape that must follow a high surrogate"
    if len(start) == 7:
        return "'u' of the low-surrogate escape after a high surrogate"
    return "a low-surrogate escape (\\uDC00-\\uDFFF) after a high surrogate"


_EXPECT_VALUE = "a JSON value (object, array, string, number, true, false or null)"


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """What one pass over an arguments text found.

    ``offset`` is the first non-viable character (``None`` when the whole text is a viable
    prefix of a JSON object text); ``expected`` says what would have been valid there;
    ``end`` is the offset just past the top-level object when it closed; ``too_deep`` is the
    offset of the first bracket nested deeper than ``max_depth``; ``too_large`` (looked for
    with ``exponents=True``) is the offset just past the first number whose exponent Python's
    ``Decimal`` cannot hold (where the number ends, the exponent is known: a limit, not a
    fault of the JSON). The pass stops at either, so at most one of them is set.
    """

    offset: int | None
    expected: str
    end: int | None
    too_deep: int | None = None
    too_large: int | None = None


# A scanned token: (next offset, error offset or None, what was expected at the error).
_Scan = tuple[int, int | None, str]


def _scan_string(text: str, i: int) -> _Scan:
    """Scan the string whose opening quote is at ``i``; ``next`` is the offset after the
    closing quote, or ``len(text)`` when the text ends inside a viable string."""
    n = len(text)
    e = body_end(text, i + 1)
    if e == n:
        return n, None, ""
    c = text[e]
    if c == '"':
        return e + 1, None, ""
    if STRING_TAIL.match(text, e):
        return n, None, ""
    if c == "\\":
        # The escape stops being viable at the first character after its longest viable start.
        bad = e + 1
        while bad < n and ESCAPE_PREFIX.fullmatch(text, e, bad + 1):
            bad += 1
        if bad == e + 1:
            return n, bad, 'an escape: one of " \\ / b f n r t u after the backslash'
        return n, bad, _escape_expectation(text[e:bad])
    if c < " ":
        return n, e, "a string character (control characters must be escaped)"
    if "\udc00" <= c <= "\udfff":
        return n, e, "a string character (a lone low surrogate is not text)"
    return n, e + 1, "a low surrogate after the high surrogate"


def _scan_number(text: str, i: int) -> _Scan:
    end = NUMBER_PREFIX.match(text, i).end()  # type: ignore[union-attr]
    if end == len(text):
        return end, None, ""
    if NUMBER.fullmatch(text, i, end):
        return end, None, ""
    return len(text), end, "a digit"


def _scan_literal(text: str, i: int, word: str) -> _Scan:
    n = len(text)
    for k, ch in enumerate(word):
        if i + k >= n:
            return n, None, ""
        if text[i + k] != ch:
            return n, i + k, f"{word!r} (the literal continues with {ch!r})"
    return i + len(word), None, ""


def _scan_scalar(text: str, i: int, c: str) -> _Scan | None:
    """Scan the string, number or literal starting at ``i``; None if none starts there."""
    if c == '"':
        return _scan_string(text, i)
    if c == "-" or "0" <= c <= "9":
        return _scan_number(text, i)
    word = LITERAL_WORDS.get(c)
    if word is not None:
        return _scan_literal(text, i, word)
    return None


def _out_of_range(number: str) -> bool:
    """Whether ``Decimal`` (ijson's type for a number with an exponent) refuses ``number``, a
    complete JSON number: only an exponent of 18 digits or more can be out of its range."""
    mark = max(number.find("e"), number.find("E"))
    if mark < 0 or len(number) - mark < 19:
        return False
    try:
        Decimal(number)
    except ArithmeticError:
        return True
    return False


class _Walk:
    """The state of one pass: the text, the open containers, where the object closed."""

    __slots__ = ("end", "exponents", "max_depth", "stack", "text")

    def __init__(self, text: str, max_depth: int | None, exponents: bool) -> None:
        self.text = text
        self.max_depth = max_depth
        self.exponents = exponents
        self.stack: list[str] = []
        self.end: int | None = None

    def after_value(self, i: int) -> tuple[int, str]:
        """A value ended just before ``i``: what comes next."""
        if not self.stack:
            self.end = i
            return i, "done"
        return i, "comma-or-end"


# A step: the next offset and state, or the verdict.
_Step = tuple[int, str] | Diagnosis


def _done(walk: _Walk, i: int, c: str, expect: str) -> _Step:
    return Diagnosis(i, "nothing but whitespace after the closing '}'", walk.end)


def _top(walk: _Walk, i: int, c: str, expect: str) -> _Step:
    if c != "{":
        return Diagnosis(i, "'{' (the arguments must be a JSON object)", None)
    walk.stack.append("{")
    return i + 1, "key-or-end"


def _key(walk: _Walk, i: int, c: str, expect: str) -> _Step:
    if c == '"':
        i, bad, why = _scan_string(walk.text, i)
        return Diagnosis(bad, why, None) if bad is not None else (i, "colon")
    if c == "}" and expect == "key-or-end":
        walk.stack.pop()
        return walk.after_value(i + 1)
    wanted = "a string key or '}'" if expect == "key-or-end" else "a string key"
    return Diagnosis(i, wanted, None)


def _colon(walk: _Walk, i: int, c: str, expect: str) -> _Step:
    if c != ":":
        return Diagnosis(i, "':' after the key", None)
    return i + 1, "value"


def _value(walk: _Walk, i: int, c: str, expect: str) -> _Step:
    stack = walk.stack
    if c == "{" or c == "[":
        stack.append(c)
        if walk.max_depth is not None and len(stack) > walk.max_depth:
            return Diagnosis(None, "", None, too_deep=i)
        return i + 1, "key-or-end" if c == "{" else "value-or-end"
    if c == "]" and expect == "value-or-end":
        stack.pop()
        return walk.after_value(i + 1)
    scanned = _scan_scalar(walk.text, i, c)
    if scanned is None:
        wanted = _EXPECT_VALUE if expect == "value" else _EXPECT_VALUE + " or ']'"
        return Diagnosis(i, wanted, None)
    start = i
    i, bad, why = scanned
    if bad is not None:
        return Diagnosis(bad, why, None)
    number = c == "-" or "0" <= c <= "9"
    if number and walk.exponents and i < len(walk.text) and _out_of_range(walk.text[start:i]):
        return Diagnosis(None, "", None, too_large=i)
    return walk.after_value(i)


def _comma_or_end(walk: _Walk, i: int, c: str, expect: str) -> _Step:
    closer = "}" if walk.stack[-1] == "{" else "]"
    if c == ",":
        return i + 1, "key" if closer == "}" else "value"
    if c != closer:
        return Diagnosis(i, f"',' or '{closer}'", None)
    walk.stack.pop()
    return walk.after_value(i + 1)


_STEPS: Final[dict[str, Callable[[_Walk, int, str, str], _Step]]] = {
    "done": _done,
    "top": _top,
    "key-or-end": _key,
    "key": _key,
    "colon": _colon,
    "value": _value,
    "value-or-end": _value,
    "comma-or-end": _comma_or_end,
}


def diagnose(text: str, max_depth: int | None = None, *, exponents: bool = False) -> Diagnosis:
    """Check ``text`` as a prefix of one JSON object text (RFC 8259) and locate trouble;
    with ``max_depth`` and ``exponents``, the limits too (``too_deep``, ``too_large``)."""
    walk = _Walk(text, max_depth, exponents)
    n = len(text)
    expect = "top"
    i = 0
    while i < n:
        c = text[i]
        if c in WHITESPACE:
            i += 1
            continue
        step = _STEPS[expect](walk, i, c, expect)
        if isinstance(step, Diagnosis):
            return step
        i, expect = step
    return Diagnosis(None, "", walk.end)
