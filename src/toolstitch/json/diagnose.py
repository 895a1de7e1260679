"""Locate the first character of an arguments text that no JSON object can contain there.

The tokenizer (``_tokenizer``) learns from yajl *that* a fragment is invalid, but not where
inside the fragment, nor what would have been valid. This module answers both, on the error
path only, by one linear pass over the text with an explicit stack (no recursion, so 100,000
nested brackets cost a list, not the C stack). It implements RFC 8259 with the top-level
value restricted to an object; its verdicts are cross-checked against yajl and ``json.loads``
in the tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Diagnosis", "body_end", "diagnose", "locate", "snippet"]

WHITESPACE = " \t\n\r"

# Pieces of \uXXXX escapes. Escaped surrogates must come in pairs: a lone one is refused,
# as I-JSON (RFC 7493) requires, because yajl cannot decode it (and orjson and jiter refuse it).
_HEX_RE = "[0-9a-fA-F]"
_U_PLAIN = f"(?:[0-9a-cA-Ce-fE-F]{_HEX_RE}{{3}}|[dD][0-7]{_HEX_RE}{{2}})"
_U_HIGH = f"[dD][89abAB]{_HEX_RE}{{2}}"
_U_LOW = f"[dD][c-fC-F]{_HEX_RE}{{2}}"

# One run of string content the tokenizer may accept without looking closer: plain characters
# (no quote, backslash, control character or surrogate), complete escapes, or a surrogate pair
# (escaped or raw).
STRING_BODY = re.compile(
    r'(?:[^"\\\x00-\x1f\ud800-\udfff]+|\\["\\/bfnrt]'
    rf"|\\u{_U_PLAIN}|\\u{_U_HIGH}\\u{_U_LOW}"
    r"|[\ud800-\udbff][\udc00-\udfff])*"
)
# The unfinished start of an escape (or of a surrogate pair) that may still become valid.
_ESCAPE_PREFIX = (
    r"\\(?:u(?:"
    rf"[0-9a-cA-Ce-fE-F]{_HEX_RE}{{0,2}}"
    rf"|[dD](?:[0-7]{_HEX_RE}?)?"
    rf"|[dD][89abAB]{_HEX_RE}?"
    rf"|{_U_HIGH}(?:\\(?:u(?:[dD](?:[c-fC-F]{_HEX_RE}?)?)?)?)?"
    r")?)?"
)
ESCAPE_PREFIX = re.compile(_ESCAPE_PREFIX)
# What may stand at the very end of a text inside a string and still become valid.
STRING_TAIL = re.compile(rf"(?:{_ESCAPE_PREFIX}|[\ud800-\udbff])\Z")


def body_end(text: str, start: int) -> int:
    """Where the run of acceptable string content starting at ``start`` stops."""
    match = STRING_BODY.match(text, start)
    assert match is not None  # the pattern also matches the empty string
    return match.end()


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
    offset of the first bracket nested deeper than ``max_depth``.
    """

    offset: int | None
    expected: str
    end: int | None
    too_deep: int | None = None


def _scan_string(text: str, i: int) -> tuple[int, int | None, str]:
    """Scan the string whose opening quote is at ``i``.

    Returns ``(next, error_offset, expected)``: ``next`` is the offset after the closing
    quote, or ``len(text)`` when the text ends inside a viable string.
    """
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


_NUMBER_NEXT = {
    # state: (accepted characters -> next state); "" marks a state that may end the number
    "start": {"-": "sign", "0": "zero", **dict.fromkeys("123456789", "int")},
    "sign": {"0": "zero", **dict.fromkeys("123456789", "int")},
    "zero": {".": "dot", "e": "exp", "E": "exp"},
    "int": {**dict.fromkeys("0123456789", "int"), ".": "dot", "e": "exp", "E": "exp"},
    "dot": dict.fromkeys("0123456789", "frac"),
    "frac": {**dict.fromkeys("0123456789", "frac"), "e": "exp", "E": "exp"},
    "exp": {"+": "expsign", "-": "expsign", **dict.fromkeys("0123456789", "expdig")},
    "expsign": dict.fromkeys("0123456789", "expdig"),
    "expdig": dict.fromkeys("0123456789", "expdig"),
}
_NUMBER_COMPLETE = frozenset({"zero", "int", "frac", "expdig"})


def _scan_number(text: str, i: int) -> tuple[int, int | None, str]:
    state = "start"
    n = len(text)
    while i < n:
        nxt = _NUMBER_NEXT[state].get(text[i])
        if nxt is None:
            if state in _NUMBER_COMPLETE:
                return i, None, ""
            return n, i, "a digit"
        state = nxt
        i += 1
    return n, None, ""


def _scan_literal(text: str, i: int, word: str) -> tuple[int, int | None, str]:
    n = len(text)
    for k, ch in enumerate(word):
        if i + k >= n:
            return n, None, ""
        if text[i + k] != ch:
            return n, i + k, f"{word!r} (the literal continues with {ch!r})"
    return i + len(word), None, ""


_LITERALS = {"t": "true", "f": "false", "n": "null"}


def diagnose(text: str, max_depth: int | None = None) -> Diagnosis:
    """Check ``text`` as a prefix of one JSON object text (RFC 8259) and locate trouble."""
    n = len(text)
    stack: list[str] = []
    expect = "top"
    end: int | None = None
    i = 0
    while i < n:
        c = text[i]
        if c in WHITESPACE:
            i += 1
            continue
        if expect == "done":
            return Diagnosis(i, "nothing but whitespace after the closing '}'", end)
        if expect == "top":
            if c != "{":
                return Diagnosis(i, "'{' (the arguments must be a JSON object)", None)
            stack.append("{")
            expect = "key-or-end"
            i += 1
            continue
        if expect in ("key-or-end", "key"):
            if c == '"':
                i, bad, why = _scan_string(text, i)
                if bad is not None:
                    return Diagnosis(bad, why, None)
                expect = "colon"
                continue
            if c == "}" and expect == "key-or-end":
                stack.pop()
            else:
                wanted = "a string key or '}'" if expect == "key-or-end" else "a string key"
                return Diagnosis(i, wanted, None)
            i += 1
        elif expect == "colon":
            if c != ":":
                return Diagnosis(i, "':' after the key", None)
            expect = "value"
            i += 1
            continue
        elif expect in ("value", "value-or-end"):
            if c in "{[":
                stack.append(c)
                if max_depth is not None and len(stack) > max_depth:
                    return Diagnosis(None, "", None, too_deep=i)
                expect = "key-or-end" if c == "{" else "value-or-end"
                i += 1
                continue
            if c == "]" and expect == "value-or-end":
                stack.pop()
                i += 1
            else:
                if c == '"':
                    i, bad, why = _scan_string(text, i)
                elif c == "-" or "0" <= c <= "9":
                    i, bad, why = _scan_number(text, i)
                elif c in _LITERALS:
                    i, bad, why = _scan_literal(text, i, _LITERALS[c])
                else:
                    wanted = _EXPECT_VALUE if expect == "value" else _EXPECT_VALUE + " or ']'"
                    return Diagnosis(i, wanted, None)
                if bad is not None:
                    return Diagnosis(bad, why, None)
        elif expect == "comma-or-end":
            closer = "}" if stack[-1] == "{" else "]"
            if c == ",":
                expect = "key" if closer == "}" else "value"
                i += 1
                continue
            if c != closer:
                return Diagnosis(i, f"',' or '{closer}'", None)
            stack.pop()
            i += 1
        # A value just ended (a scalar that ran out of text ends the loop just after this).
        if not stack:
            expect = "done"
            end = i
        else:
            expect = "comma-or-end"
    return Diagnosis(None, "", end)


def locate(text: str, offset: int) -> tuple[int, int]:
    """1-based ``(line, column)`` of ``offset`` in ``text`` (lines end at ``\\n``)."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _show(ch: str) -> str:
    if ch < " " or ch == "\x7f" or "\ud800" <= ch <= "\udfff":
        return ascii(ch)[1:-1]
    return ch


def snippet(text: str, offset: int, width: int = 32) -> str:
    """The line around ``offset``, at most ``2 * width`` characters, and a caret under it."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    if line_end < 0:
        line_end = len(text)
    start = max(line_start, offset - width)
    stop = min(line_end, offset + width)
    before = "".join(_show(ch) for ch in text[start:offset])
    after = "".join(_show(ch) for ch in text[offset:stop])
    lead = "…" if start > line_start else ""
    trail = "…" if stop < line_end else ""
    shown = lead + before + after + trail
    return f"{shown}\n{' ' * (len(lead) + len(before))}^"
