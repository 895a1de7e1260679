"""The ``pythonic`` body grammar: a Python list of calls, ``[get_weather(city="SF"), get_time()]``,
read as it streams (research §1.3: Llama 3.2 bare, Llama 4 inside ``<|python_start|>`` …
``<|python_end|>``, LFM2 inside its own markers, Olmo 3 one call a line without brackets).

What is read
------------
A list ``[`` call ``,`` call … ``]``; whitespace and newlines anywhere between tokens, a
trailing comma allowed, as in Python. A body that starts with a name instead of ``[`` is a list
without brackets (variant ``no-brackets``, or the format's way with option ``"brackets":
false``): its calls are separated by commas or newlines and it ends before the first character
that cannot start a call (the format's closing marker). A body that starts with neither is no
call list: it ends at once, before that character. Two calls without a comma between them
are tolerated (variant ``missing-comma``); a list that stops before its ``]`` ends at the first
character that cannot follow a call (variant ``unclosed-list``).

A call is ``name(key=value, …)``, the name a Python name (dotted names allowed: ``weather.get``),
``name()`` a call without arguments (``{}``). Its arguments stream as JSON text as they are
read: ``{`` at ``(``, each keyword as a key, each value as below, ``}`` at ``)``. Values are
Python literals, mapped to JSON explicitly:

* ``None`` / ``True`` / ``False`` → ``null`` / ``true`` / ``false``; JSON's own ``null``,
  ``true``, ``false`` are read too (variant ``json-literals``; the format's way with option
  ``"json_literals": true``, as in Olmo 3);
* strings, single- or double-quoted, triple-quoted, ``r``/``u`` prefixed, adjacent literals
  joined (``'a' 'b'``), with Python's escapes (``\\'``, ``\\n``, ``\\x41``, ``\\u00e9``, ``\\N{…}``,
  octal, a backslash before a newline; an unknown escape keeps its backslash; a carriage return
  is data): streamed as the JSON string's text while the string is still open;
* numbers: ints and floats as Python writes them (``1_000``, ``0x1F``, ``5.``, ``-2e3``), the
  number's value as JSON, written at its end; a number JSON cannot hold (``1e999``, ``1j``) is
  an error;
* lists and tuples → arrays (``(x)`` is ``x``, ``(x,)`` and ``()`` are tuples: until the
  ``,`` or ``)`` after a parenthesis' first item says which, what follows it is held, at most
  ``CallSink.limit`` characters); dicts whose keys are strings → objects. Nesting is bounded
  (64).

Errors and resynchronisation
----------------------------
Anything else fails the call (``CallSink.fail`` at the first bad character; ``markup=True``
when the call's name, its ``(`` or the list's structure is wrong): a positional argument,
``*``/``**``, a name that is not a literal (``x``, ``float('inf')``), a repeated keyword, a
newline in a one-line string (an unterminated string), a bad escape, bytes, an f-string, a set,
a key that is not a string, too deep a nesting, a name or number longer than the limit. Then
the body skips the rest of the failed call so that its siblings stand. **The resync rule**: from
the bad character on, brackets are counted (``(``, ``[``, ``{`` open; ``)``, ``]``, ``}`` close,
whatever their kind), quotes are not (after an error they can no longer be trusted: a model's
unescaped quote is the usual error). At the list's level (the count back to where the call
began, closers past it ignored: ``[foo(x=1])]``) a ``,`` goes on to the next call, a ``]`` ends
the list, a ``<`` (a marker) ends the body before it; without brackets, a newline goes on to the
next call too. If the text ends first, the body reports nothing more.

Theory of operation
-------------------
A state machine over characters; the state is the method that reads it, from a position of the
piece, returning where it stopped. Structure is read a character at a time, everything long by
one regex match or search over the new piece (whitespace, names, digits, a string's inside up to
its next quote, backslash or newline): no character is looked at twice, and nothing is parsed
from accumulated text. Kept between pieces: a name or number being read (bounded), an escape,
the quotes that may close a triple-quoted string, the output held in an undecided parenthesis.
Positions are offsets from the body's start, reported relative to the piece being fed.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from toolstitch.text.bodies import BODIES, BODY_VARIANTS, CallSink
from toolstitch.text.bodies.pythonic_strings import (
    SPECIALS,
    W_JOIN,
    W_KEY,
    W_VALUE,
    PythonStrings,
    spaces,
)
from toolstitch.text.literals import json_string, python_value

__all__ = ["VARIANTS", "PythonicBody"]

#: The variants a body reports (``CallSink.warn``), with what they mean.
VARIANTS: Final[dict[str, str]] = {
    "no-brackets": "a call list written without its [ ]: calls one after another",
    "missing-comma": "two calls of a list without a comma between them",
    "unclosed-list": "a call list that stopped before its ]",
    "json-literals": "JSON's true, false or null written for Python's True, False, None",
}

MAX_DEPTH: Final = 64  # the deepest nesting of lists, tuples and dicts in one argument

_IDENT: Final = re.compile(r"\w*")
_DOTTED: Final = re.compile(r"[\w.]*")
_NUMBER_CHARS: Final = re.compile(r"[\w.]*")
_RADIX: Final = re.compile(r"[+-]?0[xXoObB]")
#: An int or a short decimal that is already JSON text of the same value (no exponent, so no
#: overflow): written as it is, without ``ast``.
_PLAIN_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]{1,17})?")
_DIGIT_PART: Final = r"[0-9](?:_?[0-9])*"
#: A Python int or float literal, signed (checked before ``python_value`` reads it, so that
#: nothing else, and no source that would make Python warn, reaches ``ast``).
_PY_NUMBER: Final = re.compile(
    r"[+-]?(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+"
    rf"|(?:{_DIGIT_PART}(?:\.(?:{_DIGIT_PART})?)?|\.{_DIGIT_PART})(?:[eE][+-]?{_DIGIT_PART})?)"
)
_SKIP_STOPS: Final = re.compile(r"[()\[\]{},\n<]")
_DIGITS: Final = frozenset("0123456789")
_CLOSERS: Final = {"[": "]", "(": ")", "{": "}"}
_PYTHON_NAMES: Final = {"None": "null", "True": "true", "False": "false"}
_JSON_NAMES: Final = {"null": "null", "true": "true", "false": "false"}
_TEXT_PREFIXES: Final = {"r": True, "u": False}  # prefix -> raw
_OTHER_PREFIXES: Final = {
    prefix: kind
    for kind, prefixes in (
        ("bytes", "b br rb"),
        ("an f-string", "f fr rf"),
        ("a template string", "t tr rt"),
    )
    for prefix in prefixes.split()
}


class _Frame:
    """An open list (``[``), tuple or parenthesis (``(``) or dict (``{``) in a value."""

    __slots__ = ("count", "key", "kind", "slot")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.count = 0  # items (keys, for a dict) begun
        self.slot = -1  # an undecided '(': where its '[' may go in the held output
        self.key = False  # a dict: the last thing begun is a key (its ':' comes next)


class PythonicBody(PythonStrings):
    """Grammar ``pythonic``: a Python list of calls (see the module docstring).

    Options: ``"brackets"`` (default ``true``: a list without ``[ ]`` is variant
    ``no-brackets``; ``false``: the format's way), ``"json_literals"`` (default ``false``:
    ``true``/``false``/``null`` are variant ``json-literals``; ``true``: the format's way).
    """

    def __init__(self, sink: CallSink, options: Mapping[str, Any]) -> None:
        unknown = set(options) - {"brackets", "json_literals"}
        if unknown:
            raise ValueError(f"pythonic body: unknown options {sorted(unknown)}")
        self._sink = sink
        self._limit = sink.limit
        self._bracketed = bool(options.get("brackets", True))
        self._json_ok = bool(options.get("json_literals", False))
        self._mode: Callable[[str, int], int] = self._open  # the state: the method reading it
        self._base = 0  # the offset of the current piece from the body's start
        self._end = -1  # where in the current piece the body ended
        self._out: list[str] = []  # arguments text of this piece, sent before any other report
        self._held: list[str] | None = None  # output held while a '(' is undecided
        self._held_size = 0
        self._undecided = 0
        self._frames: list[_Frame] = []
        self._args = False  # inside a call's parentheses
        self._count = 0  # keyword arguments of the call
        self._keys: set[str] = set()
        self._name = ""
        self._token = ""  # a name, keyword, word or number being read
        self._token_at = 0
        self._word_ctx = W_VALUE
        self._close_ok = False  # the value state may meet its container's closer
        self._quote = "'"
        self._raw = False
        self._qrun = 0  # quotes read that may close a triple-quoted string
        self._special = SPECIALS["'", False]
        self._esc = ""  # an escape being read: its kind and digits
        self._esc_at = 0
        self._skip_depth = 0  # the brackets a failed call left open

    # -- the Body protocol ---------------------------------------------------------------

    def feed(self, text: str) -> int:
        """Read the next piece: -1, or the index just past the body's end."""
        n, pos = len(text), 0
        while pos < n and self._end < 0:
            pos = self._mode(text, pos)
            if self._held_size > self._limit:
                pos = self._fault(
                    f"more than {self._limit} characters held in a parenthesis", pos, "',' or ')'"
                )
        self._flush()
        if self._end >= 0:
            return self._end
        self._base += n
        return -1

    def close(self) -> None:
        """The text ended inside the body: nothing more to report (the reader discards the
        open call as cut)."""
        self._out.clear()

    # -- reporting -----------------------------------------------------------------------

    def _emit(self, fragment: str) -> None:
        if self._held is not None:
            self._held.append(fragment)
            self._held_size += len(fragment)
        else:
            self._out.append(fragment)

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
        the piece) by the resync rule (module docstring)."""
        self._flush()
        self._sink.fail(message, at=where - self._base, expected=expected, markup=markup)
        self._skip_depth = len(self._frames) + (1 if self._args else 0)
        self._frames.clear()
        self._held, self._held_size, self._undecided = None, 0, 0
        self._args = False
        self._mode = self._skip
        return resume

    def _fault(self, message: str, pos: int, expected: str) -> int:
        """Fail the call at ``text[pos]`` and skip its rest from there."""
        return self._fail(message, self._base + pos, expected, pos)

    def _read_token(self, pattern: re.Pattern[str], text: str, pos: int) -> int:
        """Add a run of ``pattern`` to the token; the index after it (if the token grew too
        long, the call failed there: the state is ``self._skip``)."""
        found = pattern.match(text, pos)
        end = found.end() if found is not None else pos
        self._token += text[pos:end]
        if len(self._token) > self._limit:
            self._fail(
                f"a name or number longer than {self._limit} characters",
                self._token_at,
                "a shorter token",
                end,
                markup=not self._args,
            )
        return end

    def _begin_token(self, pos: int, mode: Callable[[str, int], int], token: str = "") -> None:
        self._token, self._token_at, self._mode = token, self._base + pos, mode

    # -- the list ------------------------------------------------------------------------

    def _open(self, text: str, pos: int) -> int:
        if (pos := spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        if c == "[":
            self._bracketed = True
            self._mode = self._item
            return pos + 1
        if c.isidentifier():
            if self._bracketed:
                self._bracketed = False
                self._warn("no-brackets")
            self._mode = self._item
            return pos
        self._end = pos  # not a call list: the body ends before it
        return pos

    def _item(self, text: str, pos: int) -> int:
        """After ``[`` or a ``,`` between calls: a call, or the list's end."""
        if (pos := spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        if c == "]" and self._bracketed:
            self._end = pos + 1
            return pos + 1
        if c.isidentifier():
            self._begin_call(pos)
            return pos
        if not self._bracketed:
            self._end = pos
            return pos
        self._sink.start(pos)
        return self._fail("not a call", self._base + pos, "name(key=value)", pos, True)

    def _after_item(self, text: str, pos: int) -> int:
        """After a call: ``,``, the list's end, or (tolerated) the next call."""
        if (pos := spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        if c == ",":
            self._mode = self._item
            return pos + 1
        if c == "]" and self._bracketed:
            self._end = pos + 1
            return pos + 1
        if c.isidentifier():
            if self._bracketed:
                self._warn("missing-comma")
            self._begin_call(pos)
            return pos
        if self._bracketed:
            self._warn("unclosed-list")
        self._end = pos
        return pos

    def _begin_call(self, pos: int) -> None:
        self._sink.start(pos)
        self._keys = set()
        self._count = 0
        self._begin_token(pos, self._name_chars)

    def _name_chars(self, text: str, pos: int) -> int:
        end = self._read_token(_DOTTED, text, pos)
        if end == len(text) or self._mode == self._skip:
            return end
        name = self._token
        if not all(p.isidentifier() and not keyword.iskeyword(p) for p in name.split(".")):
            return self._fail(f"{name!r} is not a name", self._token_at, "a Python name", end, True)
        self._name = name
        self._mode = self._paren
        return end

    def _paren(self, text: str, pos: int) -> int:
        if (pos := spaces(text, pos)) == len(text):
            return pos
        if text[pos] != "(":
            return self._fail("a name that is not called", self._base + pos, "'('", pos, True)
        self._sink.name(self._name)
        self._emit("{")
        self._args = True
        self._mode = self._arg
        return pos + 1

    def _close_call(self, pos: int) -> int:
        self._emit("}")
        self._flush()
        self._sink.end()
        self._args = False
        self._mode = self._after_item
        return pos + 1

    # -- keyword arguments ---------------------------------------------------------------

    def _arg(self, text: str, pos: int) -> int:
        """After ``(`` or a ``,`` between arguments: a keyword, or the call's end."""
        if (pos := spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        if c == ")":
            return self._close_call(pos)
        if c.isidentifier():
            self._begin_token(pos, self._keyword)
            return pos
        return self._fault("a positional argument", pos, "key=value")

    def _keyword(self, text: str, pos: int) -> int:
        end = self._read_token(_IDENT, text, pos)
        if end == len(text) or self._mode == self._skip:
            return end
        self._mode = self._eq
        return end

    def _eq(self, text: str, pos: int) -> int:
        if (pos := spaces(text, pos)) == len(text):
            return pos
        if text[pos] != "=":
            return self._fail("a positional argument", self._token_at, "key=value", pos)
        self._mode = self._eq2
        return pos + 1

    def _eq2(self, text: str, pos: int) -> int:
        """After ``key=``: the keyword is one unless ``==`` makes it a comparison."""
        key = self._token
        if text[pos] == "=":
            return self._fail("a comparison, not a keyword argument", self._token_at, "=", pos)
        if not key.isidentifier() or keyword.iskeyword(key):
            return self._fail(f"{key!r} is not a keyword", self._token_at, "a Python name", pos)
        if key in self._keys:
            return self._fail(f"keyword {key!r} repeated", self._token_at, "a new keyword", pos)
        self._keys.add(key)
        self._emit(("," if self._count else "") + '"' + json_string(key) + '":')
        self._count += 1
        self._close_ok = False
        self._mode = self._value
        return pos

    # -- values --------------------------------------------------------------------------

    def _begin_value(self) -> None:
        """A value begins: its separator in a list or tuple."""
        if self._frames:
            frame = self._frames[-1]
            if frame.kind != "{":
                if frame.count:
                    self._emit(",")
                frame.count += 1

    def _value(self, text: str, pos: int) -> int:
        if (pos := spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        if self._close_ok and c == _CLOSERS[self._frames[-1].kind]:
            return self._close_container(pos)
        if c in "'\"":
            return self._open_string(text, pos, raw=False, join=False)
        if c in _DIGITS or c == ".":
            self._begin_token(pos, self._number)
            return pos
        if c in "+-":
            self._begin_token(pos, self._sign, c)
            return pos + 1
        if c.isidentifier():
            self._begin_token(pos, self._word)
            self._word_ctx = W_VALUE
            return pos
        if c in "[({":
            return self._open_container(c, pos)
        return self._fault("not a value", pos, "a Python literal")

    def _open_container(self, c: str, pos: int) -> int:
        if len(self._frames) >= MAX_DEPTH:
            return self._fault(f"nesting deeper than {MAX_DEPTH}", pos, "a shallower value")
        self._begin_value()
        frame = _Frame(c)
        if c == "(":  # a tuple, or only parentheses: the ',' or ')' after its first item says
            if self._held is None:
                self._held = []
            frame.slot = len(self._held)
            self._held.append("")
            self._undecided += 1
        else:
            self._emit(c)
        self._frames.append(frame)
        self._close_ok = True
        self._mode = self._key if c == "{" else self._value
        return pos + 1

    def _decide(self, frame: _Frame, is_tuple: bool) -> None:
        """An undecided ``(`` is a tuple (its ``[`` goes in its slot) or parentheses."""
        held = self._held
        assert held is not None
        held[frame.slot] = "[" if is_tuple else ""
        frame.slot = -1
        self._undecided -= 1
        if not self._undecided:
            self._out.append("".join(held))
            self._held, self._held_size = None, 0

    def _close_container(self, pos: int) -> int:
        frame = self._frames.pop()
        if frame.slot >= 0:
            is_tuple = frame.count != 1  # '()' is a tuple, '(x)' is x
            self._decide(frame, is_tuple)
            if is_tuple:
                self._emit("]")
        else:
            self._emit("}" if frame.kind == "{" else "]")
        self._mode = self._after_value
        return pos + 1

    def _key(self, text: str, pos: int) -> int:
        """In a dict, after ``{`` or ``,``: a string key, or the dict's end."""
        if (pos := spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        if c == "}" and self._close_ok:
            return self._close_container(pos)
        if c in "'\"":
            self._begin_key()
            return self._open_string(text, pos, raw=False, join=False)
        if c.isidentifier():
            self._begin_token(pos, self._word)
            self._word_ctx = W_KEY
            return pos
        return self._fault("a dict key that is not a string", pos, "a string key")

    def _begin_key(self) -> None:
        frame = self._frames[-1]
        if frame.count:
            self._emit(",")
        frame.count += 1
        frame.key = True

    def _after_value(self, text: str, pos: int) -> int:
        if (pos := spaces(text, pos)) == len(text):
            return pos
        c = text[pos]
        if not self._frames:
            if c == ",":
                self._mode = self._arg
                return pos + 1
            if c == ")":
                return self._close_call(pos)
            return self._fault("not a ',' or ')' after a value", pos, "',' or ')'")
        frame = self._frames[-1]
        if frame.kind == "{":
            return self._after_dict_item(frame, c, pos)
        if c == ",":
            if frame.slot >= 0:
                self._decide(frame, True)
            self._close_ok = True
            self._mode = self._value
            return pos + 1
        closer = _CLOSERS[frame.kind]
        if c == closer:
            return self._close_container(pos)
        return self._fault(f"not a ',' or {closer!r} after an item", pos, f"',' or {closer!r}")

    def _after_dict_item(self, frame: _Frame, c: str, pos: int) -> int:
        if frame.key:
            if c == ":":
                frame.key = False
                self._emit(":")
                self._close_ok = False
                self._mode = self._value
                return pos + 1
            message = "a set, which JSON cannot hold" if c in ",}" else "a key without its ':'"
            return self._fail(message, self._base + pos, "':'", pos)
        if c == ",":
            self._close_ok = True
            self._mode = self._key
            return pos + 1
        if c == "}":
            return self._close_container(pos)
        return self._fault("not a ',' or '}' after a value", pos, "',' or '}'")

    # -- words and numbers ---------------------------------------------------------------

    def _word(self, text: str, pos: int) -> int:
        end = self._read_token(_IDENT, text, pos)
        if end == len(text) or self._mode == self._skip:
            return end
        return self._resolve_word(text, end)

    def _resolve_word(self, text: str, pos: int) -> int:
        """A word ended at ``text[pos]``: a string's prefix, a literal's name, or an error."""
        word, ctx = self._token, self._word_ctx
        if text[pos] in "'\"":
            prefix = word.lower()
            raw = _TEXT_PREFIXES.get(prefix)
            if raw is not None:
                if ctx == W_KEY:
                    self._begin_key()
                return self._open_string(text, pos, raw=raw, join=ctx == W_JOIN)
            kind = _OTHER_PREFIXES.get(prefix)
            if kind is not None:
                return self._fail(f"{kind} literal is not JSON", self._token_at, "a str", pos)
        if ctx == W_JOIN:
            return self._fail("a name after a string", self._token_at, "',' or a closer", pos)
        if ctx == W_KEY:
            return self._fail("a dict key that is not a string", self._token_at, "a key", pos)
        literal = _PYTHON_NAMES.get(word)
        if literal is None:
            literal = _JSON_NAMES.get(word)
            if literal is not None and not self._json_ok:
                self._warn("json-literals")
        if literal is None:
            return self._fail(f"{word!r} is not a literal", self._token_at, "a literal", pos)
        self._begin_value()
        self._emit(literal)
        self._mode = self._after_value
        return pos

    def _sign(self, text: str, pos: int) -> int:
        if (pos := spaces(text, pos)) == len(text):
            return pos
        if text[pos] in _DIGITS or text[pos] == ".":
            self._mode = self._number
            return pos
        return self._fault("a sign without a number", pos, "a number")

    def _number(self, text: str, pos: int) -> int:
        n = len(text)
        end = self._read_token(_NUMBER_CHARS, text, pos)
        # an exponent's sign: '1e-5' (not '0x1e-5', which is a subtraction)
        while (
            end < n and self._mode != self._skip and text[end] in "+-" and self._token[-1] in "eE"
        ):
            if _RADIX.match(self._token):
                break
            self._token += text[end]
            end = self._read_token(_NUMBER_CHARS, text, end + 1)
        if end == n or self._mode == self._skip:
            return end
        token = self._token
        if _PLAIN_NUMBER.fullmatch(token) and len(token) < 20:
            value: str | None = token
        else:
            value = python_value(token) if _PY_NUMBER.fullmatch(token) else None
        if value is None or value[0] not in "-0123456789":
            return self._fail(
                f"{self._token!r}: not a JSON number", self._token_at, "a number", end
            )
        self._begin_value()
        self._emit(value)
        self._mode = self._after_value
        return end

    # -- after an error ------------------------------------------------------------------

    def _skip(self, text: str, pos: int) -> int:
        """The rest of a failed call, by the resync rule (module docstring)."""
        found = _SKIP_STOPS.search(text, pos)
        if found is None:
            return len(text)
        i = found.start()
        c = text[i]
        if c in "([{":
            self._skip_depth += 1
        elif c in ")]}" and self._skip_depth:
            self._skip_depth -= 1
        elif self._skip_depth:
            pass  # a ',' '<' or newline inside the failed call's brackets
        elif c == "]" and self._bracketed:
            self._end = i + 1
        elif c == "<":
            if self._bracketed:
                self._warn("unclosed-list")
            self._end = i
        elif c == "," or (c == "\n" and not self._bracketed):
            self._mode = self._item
        return i + 1


BODIES["pythonic"] = PythonicBody
BODY_VARIANTS["pythonic"] = VARIANTS
