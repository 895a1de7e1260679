"""The ``gemma`` body grammar: Gemma 4's ``call:NAME{key:<|"|>text<|"|>,n:42,…}``, read as it
streams (research §1.4; FunctionGemma's ``<escape>`` delimiter with option ``"delimiter"``).

What is read
------------
The body is what follows ``<|tool_call>``: the prefix ``call:`` (option ``"prefix"``), the
tool's name (letters, digits, ``_ . : -``), then one object, whose closing ``}`` ends the call
and the body (the ``<tool_call|>`` after it is the format's: a state of the format reads it,
and tolerates it missing or repeated). In objects and arrays, whitespace and newlines may stand
between tokens; no trailing comma.

* A key is bare, ``key:`` (any text up to the ``:`` but ``,{}[]``, its ends' whitespace
  trimmed: ``Basic LLM Chain:`` is a key), or a string (below) followed by ``:``.
* A string is the text between two delimiters (option ``"delimiter"``, default ``<|"|>``), raw:
  a ``"`` or a backslash in it is data, nothing is an escape. It streams as the JSON string's
  text while it is read. A delimiter ends the string only if the next character that is not
  whitespace is ``,``, ``:``, ``}`` or ``]``; any other delimiter stands for a literal ``"``
  inside the string (variant ``inner-delimiter``: the model wrote the token for a quote, e.g.
  Python's ``<|"|><|"|><|"|>`` triple quotes, vllm-project/vllm#48678). A string written as JSON
  instead, ``"…"`` with JSON escapes, is read as JSON (variant ``json-quoted``).
* A bare value is the text up to the next ``,``, ``}`` or ``]``, trimmed: JSON's ``42``,
  ``-1.5e3``, ``true``, ``false``, ``null`` are that JSON value; **any other bare text is a
  string** (``hello world`` → ``"hello world"``; ``True`` → ``"True"``), written at its end;
  bare text that ends with the delimiter is the string before it (variant
  ``omitted-opening-delimiter``, sgl-project/sglang's test cases: ``query:Tokyo<|"|>}``).
* ``{…}`` an object, ``[…]`` an array (nesting bounded: 64).

Errors
------
Anything else fails the call (``CallSink.fail`` at the first bad character; ``markup=True``
for a wrong prefix, name or missing ``{``): a key without ``:``, an empty key or value, a
character after a value that is not ``,`` or the closer, an invalid escape or a raw control
character in a JSON-quoted string, a key or bare value longer than ``CallSink.limit``. The body
then skips the rest of the call, to the format's next marker (below); a body without such
markers counts brackets (``{ [`` open, ``} ]`` close, delimiters and quotes not tracked) and
ends after the bracket that closes the call's object.

The format's own markers (option ``"until"``: ``<tool_call|>`` and ``<|tool_call>`` for Gemma
4) are special tokens that no argument holds: wherever one stands before the call's ``}`` (in
a string, a bare value, a key, or while skipping), the call is broken there (it fails at the
marker, unless it already failed) and the body ends *before* the marker, which the format's
states then read (the close, or the next call). So a string left open (a model's missing comma
after a string reads, by the delimiter rule, as more of the string) or a missing ``}`` costs one
call, never the calls after it. If the text ends first, the body reports nothing more.

Theory of operation
-------------------
A state machine over characters: each state is a method that reads from a position of the piece
and returns where it stopped. Structure is read a character at a time; a string's inside is read
with one ``str.find`` of the delimiter per piece (``_Finder``, which holds back only a
possible beginning of the delimiter at a piece's end), bare keys and values with one regex match
each, so no character is looked at twice and nothing is parsed from accumulated text. The
arguments stream as compact JSON: ``{`` at ``{``, ``"key":``, strings as they are read, ``,``
and closers as they come. Held between pieces: a bare key or value being read (bounded), the
whitespace after a delimiter until the next character says whether it closed the string, and a
JSON escape being read.

Positions are kept as offsets from the body's first character and reported relative to the
piece being fed (negative: into earlier pieces). Before the state machine reads a piece, the
piece is searched once for the first ``"until"`` marker (the machine reads only what comes
before it); a possible beginning of one at the piece's end is held, and read with the next
piece (given back to the reader, ``returned``, if the body ends before it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from toolstitch.text.bodies import BODIES, BODY_VARIANTS, CallSink, Steady
from toolstitch.text.literals import json_string

__all__ = ["VARIANTS", "GemmaBody"]

#: The variants a body reports (``CallSink.warn``), with what they mean.
VARIANTS: Final[dict[str, str]] = {
    "inner-delimiter": 'a string delimiter not followed by , : } or ]: read as a literal " '
    "inside the string",
    "omitted-opening-delimiter": 'a string written text<|"|>, without its opening delimiter',
    "json-quoted": 'a key or value written as a JSON string ("…" with JSON escapes) instead of '
    "between delimiters",
}

#: The deepest nesting of objects and arrays in one call.
MAX_DEPTH: Final = 64

# Body states (each a method of GemmaBody, see _steps).
(
    _PREFIX,
    _NAME,
    _BRACE,
    _KEY,
    _BARE_KEY,
    _COLON,
    _VALUE,
    _BARE,
    _DELIM,
    _STRING,
    _PEEK,
    _JSON,
    _JSON_ESC,
    _AFTER,
    _SKIP,
) = range(15)

_SPACE: Final = re.compile(r"[ \t\r\n]*")  # as _TRIM: whitespace between tokens
_NAME_CHARS: Final = re.compile(r"[\w.:-]*")
_BARE_KEY_CHARS: Final = re.compile(r"[^:,{}\[\]]*")
_BARE_CHARS: Final = re.compile(r"[^,}\]]*")
_JSON_SPECIAL: Final = re.compile(r'["\\\x00-\x1f]')
_JSON_SCALAR: Final = re.compile(
    r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null"
)
_BRACKETS: Final = re.compile(r"[{}\[\]]")
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_ENDS_STRING: Final = frozenset(",:}]")
_TRIM: Final = " \t\r\n"


def _spaces(text: str, pos: int) -> int:
    """The index after the whitespace at ``text[pos]``."""
    found = _SPACE.match(text, pos)
    return found.end() if found is not None else pos


def _literal(options: Mapping[str, Any], key: str, default: str | None) -> str | None:
    value = options.get(key, default)
    if value is None:
        return None
    if not isinstance(value, str) or not value or value[0] in value[1:]:
        raise ValueError(
            f"gemma body: option {key!r} is a non-empty string whose first character does "
            f"not recur in it, got {value!r}"
        )
    return value


class _Finder:
    """Finds one literal in text fed piece by piece, holding back only a possible beginning of
    it at a piece's end. The literal's first character does not recur in it, so after a
    mismatch the search goes on from the mismatching character."""

    __slots__ = ("held", "literal")

    def __init__(self, literal: str) -> None:
        self.literal = literal
        self.held = ""

    def find(self, text: str, pos: int) -> tuple[str, int]:
        """``(text before the literal, index just past it)``, or ``(certain text, -1)`` when
        the piece ends first (a possible beginning of the literal then held back)."""
        literal, n = self.literal, len(text)
        before = ""
        if self.held:
            need = literal[len(self.held) :]
            k = min(len(need), n - pos)
            if text.startswith(need[:k], pos):
                if k == len(need):
                    self.held = ""
                    return "", pos + k
                self.held += text[pos : pos + k]
                return "", -1
            before, self.held = self.held, ""
        i = text.find(literal, pos)
        if i >= 0:
            return before + text[pos:i], i + len(literal)
        for k in range(min(len(literal) - 1, n - pos), 0, -1):
            if text.endswith(literal[:k]):
                self.held = literal[:k]
                return before + text[pos : n - k], -1
        return before + text[pos:], -1


class GemmaBody:
    """Grammar ``gemma``: one Gemma 4 call (see the module docstring).

    Options: ``"delimiter"`` the string delimiter (default ``<|"|>``; FunctionGemma:
    ``<escape>``), ``"prefix"`` what the call starts with (default ``call:``; ``""``: none),
    ``"until"`` the format's markers that break a call not yet closed (module docstring).
    """

    __slots__ = (
        "_base",
        "_close_ok",
        "_delim",
        "_end",
        "_esc",
        "_esc_at",
        "_frames",
        "_in_key",
        "_lane",
        "_limit",
        "_matched",
        "_mode",
        "_out",
        "_peek",
        "_pending",
        "_piece_at",
        "_prefix",
        "_sink",
        "_skip_depth",
        "_started",
        "_steady",
        "_steps",
        "_strings",
        "_token",
        "_token_at",
        "_until",
        "_until_firsts",
        "returned",
    )

    def __init__(self, sink: CallSink, options: Mapping[str, Any]) -> None:
        unknown = set(options) - {"delimiter", "prefix", "until"}
        if unknown:
            raise ValueError(f"gemma body: unknown options {sorted(unknown)}")
        self._sink = sink
        self._limit = sink.limit
        self._delim = _literal(options, "delimiter", '<|"|>') or ""
        if self._delim[0] in _ENDS_STRING or self._delim[0].isspace():
            raise ValueError(f"gemma body: a delimiter cannot start with {self._delim[0]!r}")
        prefix = options.get("prefix", "call:")
        if not isinstance(prefix, str):
            raise ValueError(f"gemma body: option 'prefix' is a string, got {prefix!r}")
        self._prefix = prefix
        until = options.get("until", ())
        if not isinstance(until, (list, tuple)) or not all(isinstance(m, str) and m for m in until):
            raise ValueError(f"gemma body: option 'until' lists markers, got {until!r}")
        self._until: tuple[str, ...] = tuple(until)
        firsts = "".join(sorted({m[0] for m in self._until}))
        self._until_firsts = re.compile("[" + re.escape(firsts) + "]") if firsts else None
        self._pending = ""  # a possible beginning of an "until" marker, from the last piece
        self.returned = ""  # text held from earlier pieces that follows the body's end
        self._strings = _Finder(self._delim)
        # The lane of a string's text (``lane``): characters that are themselves in JSON and
        # cannot begin the delimiter or an "until" marker; as data for the C text lane when
        # those are ASCII.
        stops = "".join(sorted({self._delim[0], *firsts}))
        self._lane = re.compile('[^"\\\\\x00-\x1f' + re.escape(stops) + "]+")
        self._steady = (
            Steady(stops, escapes=False, raw=True, newlines=True) if stops.isascii() else None
        )
        self._mode = _PREFIX if prefix else _NAME
        self._started = False
        self._base = 0  # the offset of the text being read (held text first) from the start
        self._piece_at = 0  # the offset of the current piece (positions are reported from it)
        self._end = -1  # where in the current piece the body ended
        self._out: list[str] = []  # arguments text of this piece, sent before any other report
        self._frames: list[str] = []  # the open '{' and '['
        self._close_ok = False  # the next key or value may be its container's closer instead
        self._in_key = False  # the string being read is a key
        self._matched = 0  # characters of the prefix, or of a delimiter, matched so far
        self._token = ""  # a name, bare key or bare value being read
        self._token_at = 0
        self._peek = ""  # whitespace after a delimiter, until the next character decides
        self._esc = ""  # a JSON escape being read
        self._esc_at = 0
        self._skip_depth = 0
        self._steps: dict[int, Callable[[str, int], int]] = {
            _PREFIX: self._prefix_chars,
            _NAME: self._name,
            _BRACE: self._brace,
            _KEY: self._key,
            _BARE_KEY: self._bare_key,
            _COLON: self._colon,
            _VALUE: self._value,
            _BARE: self._bare,
            _DELIM: self._delimiter,
            _STRING: self._string,
            _PEEK: self._after_delimiter,
            _JSON: self._json,
            _JSON_ESC: self._json_escape,
            _AFTER: self._after,
            _SKIP: self._skip,
        }

    # -- the Body protocol ---------------------------------------------------------------

    def feed(self, text: str) -> int:
        """Read the next piece: -1, or the index just past the body's end."""
        piece_base, shift = self._base, len(self._pending)
        self._piece_at = piece_base
        if shift:
            text, self._pending = self._pending + text, ""
        self._base -= shift  # offsets of ``text``, the held part included
        stop, marker = self._next_marker(text)
        pos = 0
        if not self._started:
            pos = _spaces(text, 0)
            if pos < stop:
                self._started = True
                self._sink.start(pos - shift)
                self._token_at = self._base + pos
        if self._started:
            self._read(text if stop == len(text) else text[:stop], pos)
        if self._end < 0 and marker:
            self._broken(stop)
        if self._end >= 0:
            return self._ended(text, shift)
        self._pending = text[stop:]
        self._base = piece_base + len(text) - shift
        return -1

    def _read(self, text: str, pos: int) -> None:
        steps, n = self._steps, len(text)
        while pos < n and self._end < 0:
            pos = steps[self._mode](text, pos)
        self._flush()

    def _next_marker(self, text: str) -> tuple[int, bool]:
        """Where the first ``"until"`` marker starts (``True``), or a possible beginning of
        one at the end (``False``; ``len(text)`` if neither)."""
        if self._until_firsts is not None:
            n = len(text)
            for found in self._until_firsts.finditer(text):
                i = found.start()
                for marker in self._until:
                    if text.startswith(marker, i):
                        return i, True
                    if n - i < len(marker) and marker.startswith(text[i:]):
                        return i, False
        return len(text), False

    def _broken(self, at: int) -> None:
        """An ``"until"`` marker at ``text[at]`` before the call's end: it breaks the call,
        and the body ends before it."""
        if self._started and self._mode != _SKIP:
            self._fail(
                "the format's marker came before the call's end",
                self._base + at,
                "the rest of the call" if self._frames else "call:NAME{…}",
                at,
                markup=not self._frames,
            )
            self._flush()
        self._end = at

    def _ended(self, text: str, shift: int) -> int:
        """The body ended at ``self._end`` of ``text`` (which starts with ``shift`` held
        characters): the index in the piece, the held text after the end given back."""
        if self._end >= shift:
            return self._end - shift
        self.returned = text[self._end : shift]
        return 0

    def close(self) -> None:
        """The text ended inside the body: nothing more to report (the reader discards the
        open call as cut)."""
        self._out.clear()

    @property
    def lane(self) -> re.Pattern[str] | None:
        """Inside a delimited string with nothing held: a piece of characters that are
        themselves in JSON and cannot begin a delimiter or marker is all arguments."""
        if self._mode != _STRING or self._strings.held or self._pending or self._out:
            return None
        return None if self._end >= 0 else self._lane

    @property
    def steady(self) -> Steady | None:
        return None if self.lane is None else self._steady

    def laned(self, piece: str) -> None:
        """A piece went by the lane: it was read."""
        self._base += len(piece)

    def skipped(self, chars: int, escape: bool, newline: bool = False) -> None:
        """``chars`` characters went by the lane: they were read."""
        self._base += chars

    # -- reporting -----------------------------------------------------------------------

    def _flush(self) -> None:
        if self._out:
            self._sink.arguments("".join(self._out))
            self._out.clear()

    def _warn(self, variant: str) -> None:
        self._flush()  # reports keep their order in every chunking
        self._sink.warn(variant, VARIANTS[variant])

    def _fail(
        self, message: str, where: int, expected: str, resume: int, markup: bool = False
    ) -> int:
        """Fail the call at offset ``where`` and skip its rest from ``resume`` (an index of
        the piece; see the module docstring)."""
        self._flush()
        self._sink.fail(message, at=where - self._piece_at, expected=expected, markup=markup)
        self._skip_depth = len(self._frames)
        self._frames.clear()
        self._mode = _SKIP
        return resume

    def _read_token(self, pattern: re.Pattern[str], text: str, pos: int, what: str) -> int:
        """Add a run of ``pattern`` to the token; the index after it (if the token grew too
        long, the call failed there: the state is ``_SKIP``)."""
        found = pattern.match(text, pos)
        end = found.end() if found is not None else pos
        self._token += text[pos:end]
        if len(self._token) > self._limit:
            self._fail(
                f"{what} longer than {self._limit} characters",
                self._token_at,
                f"a shorter {what}",
                end,
                markup=not self._frames,
            )
        return end

    def _begin_token(self, pos: int, mode: int, token: str = "") -> None:
        self._token, self._token_at, self._mode = token, self._base + pos, mode

    # -- the call's head -----------------------------------------------------------------

    def _prefix_chars(self, text: str, pos: int) -> int:
        prefix, n = self._prefix, len(text)
        while pos < n and self._matched < len(prefix):
            if text[pos] != prefix[self._matched]:
                return self._fail(
                    f"a call that does not start with {prefix!r}",
                    self._base + pos,
                    repr(prefix),
                    pos,
                    markup=True,
                )
            self._matched += 1
            pos += 1
        if self._matched == len(prefix):
            self._begin_token(pos, _NAME)
        return pos

    def _name(self, text: str, pos: int) -> int:
        end = self._read_token(_NAME_CHARS, text, pos, "a name")
        if end == len(text) or self._mode == _SKIP:
            return end
        if not self._token:
            return self._fail("a call without a name", self._base + end, "a name", end, True)
        self._mode = _BRACE
        return end

    def _brace(self, text: str, pos: int) -> int:
        if (pos := _spaces(text, pos)) == len(text):
            return pos
        if text[pos] != "{":
            return self._fail(
                "a name not followed by its arguments", self._base + pos, "'{'", pos, True
            )
        self._sink.name(self._token)
        return self._open(text[pos], pos)

    # -- structure -----------------------------------------------------------------------

    def _open(self, c: str, pos: int) -> int:
        if len(self._frames) >= MAX_DEPTH:
            return self._fail(
                f"more than {MAX_DEPTH} nested objects or arrays",
                self._base + pos,
                "a shallower value",
                pos,
            )
        self._out.append(c)
        self._frames.append(c)
        self._close_ok = True
        self._mode = _KEY if c == "{" else _VALUE
        return pos + 1

    def _close(self, pos: int) -> int:
        kind = self._frames.pop()
        self._out.append("}" if kind == "{" else "]")
        if not self._frames:  # the call's object: the call and the body end
            self._flush()
            self._sink.end()
            self._end = pos + 1
        self._mode = _AFTER
        return pos + 1

    def _after(self, text: str, pos: int) -> int:
        """After a value: ``,`` or its container's closer."""
        if (pos := _spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        kind = self._frames[-1]
        if c == ",":
            self._out.append(",")
            self._close_ok = False
            self._mode = _KEY if kind == "{" else _VALUE
            return pos + 1
        closer = "}" if kind == "{" else "]"
        if c == closer:
            return self._close(pos)
        return self._fail(
            f"not a ',' or {closer!r} after a value", self._base + pos, f"',' or {closer!r}", pos
        )

    # -- keys ----------------------------------------------------------------------------

    def _key(self, text: str, pos: int) -> int:
        """In an object, after ``{`` or ``,``: a key, or (after ``{``) its end."""
        if (pos := _spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        if c == "}" and self._close_ok:
            return self._close(pos)
        if c in ",:{}[]":
            return self._fail("not a key", self._base + pos, "a key", pos)
        self._in_key = True
        return self._begin_scalar(c, pos, _BARE_KEY)

    def _bare_key(self, text: str, pos: int) -> int:
        end = self._read_token(_BARE_KEY_CHARS, text, pos, "a key")
        if end == len(text) or self._mode == _SKIP:
            return end
        if text[end] != ":":
            return self._fail("a key without its ':'", self._base + end, "':'", end)
        key = self._token.strip(_TRIM)
        if not key:
            return self._fail("an empty key", self._token_at, "a key", end)
        self._out.append('"' + json_string(key) + '":')
        self._close_ok = False
        self._mode = _VALUE
        return end + 1

    def _colon(self, text: str, pos: int) -> int:
        """After a string key: its ``:``."""
        if (pos := _spaces(text, pos)) == len(text):
            return pos
        if text[pos] != ":":
            return self._fail("a key without its ':'", self._base + pos, "':'", pos)
        self._out.append(":")
        self._close_ok = False
        self._mode = _VALUE
        return pos + 1

    # -- values --------------------------------------------------------------------------

    def _value(self, text: str, pos: int) -> int:
        """After ``:``, ``[`` or a ``,`` in an array: a value, or (after ``[``) its end."""
        if (pos := _spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        if c == "]" and self._close_ok and self._frames[-1] == "[":
            return self._close(pos)
        if c in "{[":
            return self._open(c, pos)
        if c in ",:}]":
            return self._fail("not a value", self._base + pos, "a value", pos)
        self._in_key = False
        return self._begin_scalar(c, pos, _BARE)

    def _begin_scalar(self, c: str, pos: int, bare: int) -> int:
        """A key or a scalar value starts with ``c``: a delimited string, a JSON string, or
        bare text (state ``bare``)."""
        if c == self._delim[0]:
            self._matched = 1
            self._begin_token(pos, _DELIM)
            return pos + 1
        if c == '"':
            self._warn("json-quoted")
            self._out.append('"')
            self._mode = _JSON
            return pos + 1
        self._begin_token(pos, bare)
        return pos

    def _bare(self, text: str, pos: int) -> int:
        end = self._read_token(_BARE_CHARS, text, pos, "a value")
        if end == len(text) or self._mode == _SKIP:
            return end
        raw = self._token.strip(_TRIM)
        if not raw:
            return self._fail("an empty value", self._base + end, "a value", end)
        if raw.endswith(self._delim) and len(raw) > len(self._delim):
            self._warn("omitted-opening-delimiter")  # text<|"|> is a string
            raw = raw[: -len(self._delim)]
        elif _JSON_SCALAR.fullmatch(raw):
            self._out.append(raw)
            self._mode = _AFTER
            return end
        self._out.append('"' + json_string(raw) + '"')
        self._mode = _AFTER
        return end

    # -- strings -------------------------------------------------------------------------

    def _delimiter(self, text: str, pos: int) -> int:
        """The rest of a delimiter that may open a string (else bare text starts with what
        matched)."""
        delim, n = self._delim, len(text)
        while pos < n and self._matched < len(delim):
            if text[pos] != delim[self._matched]:
                self._token = delim[: self._matched]
                self._mode = _BARE_KEY if self._in_key else _BARE
                return pos
            self._matched += 1
            pos += 1
        if self._matched == len(delim):
            self._out.append('"')
            self._mode = _STRING
        return pos

    def _string(self, text: str, pos: int) -> int:
        before, end = self._strings.find(text, pos)
        if before:
            self._out.append(json_string(before))
        if end < 0:
            return len(text)
        self._peek = ""
        self._mode = _PEEK
        return end

    def _after_delimiter(self, text: str, pos: int) -> int:
        """After a delimiter inside a string: the next character that is not whitespace says
        whether it closed the string."""
        end = _spaces(text, pos)
        self._peek += text[pos:end]
        if len(self._peek) > self._limit:
            return self._fail(
                f"more than {self._limit} characters of whitespace after a string",
                self._base + end,
                "',', ':', '}' or ']'",
                end,
            )
        if end == len(text):
            return end
        if text[end] in _ENDS_STRING:
            self._out.append('"')
            self._mode = _COLON if self._in_key else _AFTER
            return end
        self._warn("inner-delimiter")
        self._out.append(json_string('"' + self._peek))
        self._mode = _STRING
        return end

    def _json(self, text: str, pos: int) -> int:
        """A JSON-quoted string, copied as it is (its escapes checked)."""
        found = _JSON_SPECIAL.search(text, pos)
        end = found.start() if found is not None else len(text)
        if end > pos:
            self._out.append(text[pos:end])
        if found is None:
            return end
        c = text[end]
        if c == '"':
            self._out.append('"')
            self._mode = _COLON if self._in_key else _AFTER
        elif c == "\\":
            self._esc = ""
            self._esc_at = self._base + end
            self._mode = _JSON_ESC
        else:
            return self._fail(
                "a raw control character in a JSON string", self._base + end, "an escape", end
            )
        return end + 1

    def _json_escape(self, text: str, pos: int) -> int:
        c = text[pos]
        if not self._esc and c in '"\\/bfnrt':
            self._out.append("\\" + c)
            self._mode = _JSON
        elif not self._esc and c == "u":
            self._esc = "u"
        elif self._esc and c in _HEX:
            self._esc += c
            if len(self._esc) == 5:
                self._out.append("\\" + self._esc)
                self._mode = _JSON
        else:
            return self._fail(
                "an invalid escape in a JSON string",
                self._esc_at,
                '\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX',
                pos,
            )
        return pos + 1

    # -- after an error ------------------------------------------------------------------

    def _skip(self, text: str, pos: int) -> int:
        """The rest of a failed call: to the format's next marker (``"until"``; the body ends
        before it), else to the bracket that closes the call's object."""
        if self._until:
            return len(text)
        depth = self._skip_depth
        for found in _BRACKETS.finditer(text, pos):
            if found.group() in "{[":
                depth += 1
                continue
            depth -= 1
            if depth <= 0:
                self._end = found.end()
                return self._end
        self._skip_depth = depth
        return len(text)


BODIES["gemma"] = GemmaBody
BODY_VARIANTS["gemma"] = VARIANTS
