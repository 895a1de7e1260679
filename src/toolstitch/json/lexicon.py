"""JSON's lexical rules (RFC 8259, with I-JSON's ban on lone surrogates), stated once.

Every other module of toolstitch that reads JSON text (the tokenizer, the diagnosis, the
partial-value builder, the pointer locator, the schema check, the JSON-array body decoder,
the core) takes its whitespace, string, escape, surrogate, number and literal rules from
here, so that they cannot drift apart. It also holds the lenient bracket skim (strings and
brackets only, no validation) and the line/column and snippet helpers for error messages.

Escaped surrogates must come in pairs: a lone one is refused, as I-JSON (RFC 7493)
requires, because yajl cannot decode it (and orjson and jiter refuse it). Raw surrogate
halves (a pair split by a UTF-16 decoder, or across two fragments) are joined into the one
character they encode.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "DIGITS",
    "ESCAPE_PREFIX",
    "LITERALS",
    "LITERAL_PREFIXES",
    "LITERAL_WORDS",
    "NUMBER",
    "NUMBER_PREFIX",
    "SCALAR_KINDS",
    "STRING_BODY",
    "STRING_OR_BRACKET",
    "STRING_TAIL",
    "TOKEN_CHARS",
    "WHITESPACE",
    "StringDecoder",
    "body_end",
    "decode_string_content",
    "digit_cap",
    "is_high_surrogate",
    "join_surrogates",
    "load_json",
    "locate",
    "skim",
    "snippet",
    "utf8",
    "without_lone_surrogates",
]

# -- whitespace ---------------------------------------------------------------------------------

#: JSON's four whitespace characters. Not vertical tab or form feed, which ``str.strip()``
#: and yajl both take for whitespace.
WHITESPACE: Final = " \t\n\r"
#: The same, as bytes, for decoders that scan raw bodies.
WHITESPACE_BYTES: Final = WHITESPACE.encode()
#: Characters yajl skips as whitespace although JSON does not.
YAJL_ONLY_WHITESPACE: Final = "\x0b\x0c"
#: The first non-whitespace byte of a raw body.
NON_WHITESPACE_BYTE: Final = re.compile(rb"[^ \t\r\n]")

# -- strings, escapes and surrogates ------------------------------------------------------------

_HEX_RE = "[0-9a-fA-F]"
_U_PLAIN = f"(?:[0-9a-cA-Ce-fE-F]{_HEX_RE}{{3}}|[dD][0-7]{_HEX_RE}{{2}})"
_U_HIGH = f"[dD][89abAB]{_HEX_RE}{{2}}"
_U_LOW = f"[dD][c-fC-F]{_HEX_RE}{{2}}"

#: One run of string content that is valid as it stands: plain characters (no quote,
#: backslash, control character or surrogate), complete escapes, or a surrogate pair (escaped
#: or raw). It also matches the empty string.
STRING_BODY: Final = re.compile(
    r'(?:[^"\\\x00-\x1f\ud800-\udfff]+|\\["\\/bfnrt]'
    rf"|\\u{_U_PLAIN}|\\u{_U_HIGH}\\u{_U_LOW}"
    r"|[\ud800-\udbff][\udc00-\udfff])*"
)
_ESCAPE_PREFIX = (
    r"\\(?:u(?:"
    rf"[0-9a-cA-Ce-fE-F]{_HEX_RE}{{0,2}}"
    rf"|[dD](?:[0-7]{_HEX_RE}?)?"
    rf"|[dD][89abAB]{_HEX_RE}?"
    rf"|{_U_HIGH}(?:\\(?:u(?:[dD](?:[c-fC-F]{_HEX_RE}?)?)?)?)?"
    r")?)?"
)
#: The unfinished start of an escape (or of an escaped surrogate pair) that may still
#: become valid.
ESCAPE_PREFIX: Final = re.compile(_ESCAPE_PREFIX)
#: What may stand at the very end of a text inside a string and still become valid: the
#: start of an escape, or the high half of a raw surrogate pair.
STRING_TAIL: Final = re.compile(rf"(?:{_ESCAPE_PREFIX}|[\ud800-\udbff])\Z")
#: The characters that end a run of plain string bytes (raw bodies).
STRING_SPECIAL_BYTE: Final = re.compile(rb'["\\]')
_HEX4_BYTES: Final = re.compile(rb"[0-9a-fA-F]{4}")

# The pattern also matches the empty string, so ``match`` never returns None.
_body_match: Final[Callable[..., re.Match[str]]] = STRING_BODY.match  # type: ignore[assignment]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_loads: Final = json.loads


def _reject_constant(name: str) -> Any:
    # json.loads accepts NaN, Infinity and -Infinity; JSON does not.
    raise ValueError(f"{name} is not JSON")


# ``json.loads(text, parse_constant=...)`` builds a new decoder on every call (half the cost of
# loading a small call's arguments); this one is built once and never changes.
_STRICT_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)
#: ``load_json``'s engine: ``scan_value(text, start) -> (value, end)`` reads the one JSON value
#: that starts at ``start`` (``StopIteration`` or ``ValueError`` if none does), with the same
#: strict rules. For callers in C that have found the value's start and check its end
#: themselves (the native ready path, docs/native.md); everyone else calls ``load_json``.
scan_value: Final[Callable[[str, int], tuple[Any, int]]] = _STRICT_DECODER.scan_once  # type: ignore[attr-defined]


def load_json(text: str) -> Any:
    """``text`` loaded as JSON, strictly: ``json.loads`` with ``NaN``, ``Infinity`` and
    ``-Infinity`` refused (``ValueError``), through one shared decoder. The same results and
    errors as ``json.loads(text, parse_constant=...)``, a leading BOM's included."""
    if text.startswith("\ufeff"):  # json.loads refuses a BOM before it decodes
        return _loads(text, parse_constant=_reject_constant)
    return _STRICT_DECODER.decode(text)


def body_end(text: str, start: int) -> int:
    """Where the run of valid string content starting at ``start`` stops."""
    return _body_match(text, start).end()


def is_high_surrogate(ch: str) -> bool:
    """Whether ``ch`` is the high (first) half of a surrogate pair."""
    return "\ud800" <= ch <= "\udbff"


def join_surrogates(text: str) -> str:
    """``text`` with each pair of raw surrogate halves joined into the character it encodes.

    A lone half is left as it is (and fails to encode as UTF-8 later).
    """
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def without_lone_surrogates(text: str) -> tuple[str, int]:
    """``text`` made encodable as UTF-8: surrogate pairs joined (``join_surrogates``), each
    lone half left over replaced by U+FFFD; and how many were replaced."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return _SURROGATE.subn("\ufffd", join_surrogates(text))
    return text, 0


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, raw surrogate pairs joined; ``UnicodeEncodeError`` for a lone half."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return join_surrogates(text).encode()


def decode_string_content(raw: str) -> str:
    """Decode complete JSON string content (escapes, raw surrogate pairs) as ijson would."""
    text: str = _loads('"' + raw + '"') if "\\" in raw else raw
    return join_surrogates(text)


class StringDecoder:
    """Decodes the raw parts of one JSON string as they arrive.

    ``push`` returns the text decoded from the part (with what was held back before); the end
    of an escape or surrogate pair that may still complete is held back for the next part.
    The parts must be valid string content, as the tokenizer guarantees.
    """

    __slots__ = ("_tail",)

    def __init__(self) -> None:
        self._tail = ""

    @property
    def holding(self) -> bool:
        """Whether an unfinished escape or surrogate pair is held back."""
        return bool(self._tail)

    def push(self, raw: str) -> str:
        if self._tail:
            raw = self._tail + raw
        end = body_end(raw, 0)
        if end == len(raw):
            self._tail = ""
            return decode_string_content(raw) if raw else ""
        self._tail = raw[end:]
        return decode_string_content(raw[:end]) if end else ""


def escape_code(escape: bytes) -> int:
    """The code unit of a complete ``\\uXXXX`` escape (raw bytes), else -1."""
    if escape[1:2] == b"u" and _HEX4_BYTES.fullmatch(escape, 2):
        return int(escape[2:6], 16)
    return -1


def escape_length(escape: bytes) -> int:
    """The length of the escape that ``escape`` (raw bytes, backslash first) starts."""
    return 6 if escape[1:2] == b"u" else 2


def surrogate_half(code: int) -> str:
    """``"high"``, ``"low"`` or ``""``: which half of a surrogate pair the code unit is."""
    if 0xD800 <= code < 0xDC00:
        return "high"
    if 0xDC00 <= code < 0xE000:
        return "low"
    return ""


# -- numbers ------------------------------------------------------------------------------------

DIGITS: Final = "0123456789"
#: A complete number.
NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
#: The longest beginning of a number (every viable prefix of one matches in full).
NUMBER_PREFIX: Final = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.(?:[0-9]+(?:[eE][+-]?[0-9]*)?)?|[eE][+-]?[0-9]*)?)?"
)
DIGIT_RUN: Final = re.compile("[0-9]+")
DIGIT_RUN_BYTES: Final = re.compile(rb"[0-9]*")

_int_max_str_digits: Final[Callable[[], int]] = getattr(sys, "get_int_max_str_digits", lambda: 0)


def digit_cap(limit: int) -> int:
    """The longest run of digits a number may hold: ``limit``, or less when the interpreter's
    ``sys.get_int_max_str_digits()`` is lower (0 means unlimited).

    ijson's C backend turns an integer literal into ``int``; past the interpreter's limit
    that conversion fails inside C code and leaves the interpreter broken (``SystemError``),
    so a longer run must be refused before yajl sees it. Read when a tokenizer or decoder is
    made, so that an application's own lower limit counts.
    """
    interpreter = _int_max_str_digits()
    return interpreter if 0 < interpreter < limit else limit


# -- literals and scalar tokens -----------------------------------------------------------------

#: The literals and their values.
LITERALS: Final = {"true": True, "false": False, "null": None}
#: The literal that each first letter starts.
LITERAL_WORDS: Final = {"t": "true", "f": "false", "n": "null"}
LITERAL_PREFIXES: Final = frozenset(word[:k] for word in LITERALS for k in range(1, len(word) + 1))
#: Characters of a number or literal token.
TOKEN_CHARS: Final = "0123456789-+.eEtrufalsn"
#: The kind of scalar that each possible first character starts.
SCALAR_KINDS: Final = {
    **dict.fromkeys("-0123456789", "number"),
    "t": "boolean",
    "f": "boolean",
    "n": "null",
}

# -- the lenient skim: strings and brackets only ------------------------------------------------

#: A complete string (not validated) or one bracket: for counting brackets outside strings.
STRING_OR_BRACKET: Final = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_STRUCTURE: Final = re.compile(r'["{}\[\]]')
_STRING_RUN: Final = re.compile(r'[^"\\]*')

#: ``(close, depth, in_string, escape, started)``; see ``skim``.
SkimState = tuple[int, int, bool, bool, bool]


def skim(text: str, depth: int, in_string: bool, escape: bool, started: bool) -> SkimState:
    """Follow the strings and brackets of ``text``, fed after a text that left this state.

    Lenient by design: it validates nothing, it only follows strings (a backslash escapes the
    next character, ``escape`` says one is pending from before) and brackets of either kind.
    Returns ``close``, the offset in ``text`` just past the bracket that closes the root
    value (-1 if none; the skim stops there), and the state at that point: depth,
    in_string, escape, and ``started`` (a bracket, or a non-whitespace character outside
    strings, has been seen). Regular expressions skip string bodies and the text between
    brackets, so Python runs once per quote or bracket, not once per character.
    """
    n = len(text)
    i = 0
    while i < n:
        if in_string:
            if escape:
                escape = False
                i += 1
                continue
            i = _STRING_RUN.match(text, i).end()  # type: ignore[union-attr]
            if i >= n:
                break
            escape = text[i] == "\\"
            in_string = escape
            i += 1
            continue
        found = _STRUCTURE.search(text, i)
        stop = n if found is None else found.start()
        if not started and text[i:stop].strip(WHITESPACE):
            started = True
        if found is None:
            break
        ch = text[stop]
        i = stop + 1
        if ch == '"':
            in_string = True
        elif ch == "{" or ch == "[":
            depth += 1
            started = True
        else:
            depth -= 1
            if depth <= 0:
                return i, depth, in_string, escape, started
    return -1, depth, in_string, escape, started


# -- where, for messages ------------------------------------------------------------------------


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
