"""Incremental decoder for a body that is one JSON array streamed element by element.

Gemini's ``streamGenerateContent`` without ``alt=sse`` answers with a single pretty-printed
JSON array whose elements arrive over time (``[{...}\\n,\\r\\n{...}\\n]``).
``JSONArrayDecoder`` returns each element as soon as the bytes that complete it arrive.

    decoder = JSONArrayDecoder()
    for chunk in body_chunks:
        for element in decoder.feed(chunk):
            ...
    decoder.close()  # raises StreamDecodeError if the array never closed
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, NoReturn

import ijson

from toolstitch.json.lexicon import (
    DIGIT_RUN_BYTES,
    NON_WHITESPACE_BYTE,
    STRING_SPECIAL_BYTE,
    digit_cap,
    escape_code,
    escape_length,
    surrogate_half,
)
from toolstitch.vocab.errors import StreamDecodeError

__all__ = ["JSONArrayDecoder"]

# ijson's C backend turns integer literals into ``int``; past the interpreter's int digit
# limit that conversion fails inside C code and leaves the interpreter in a broken state
# (SystemError, or worse). So runs of more digits than this, or than the interpreter's limit
# when that is lower (``lexicon.digit_cap``), are rejected before ijson sees them.
MAX_DIGITS = 4000

# The caret line of a verbose yajl error message puts the failing byte at column 40.
_YAJL_CARET = 40


class JSONArrayDecoder:
    """Decode a streamed JSON array; feed bytes in any chunking.

    ``feed`` returns the top-level elements completed by that chunk, as ``json.loads`` would
    build them (dict, list, str, int, float, bool, None; never ``Decimal``). An element is
    returned by the feed that delivers its last byte, except a bare number, which only ends
    at the byte after it.

    Raises ``StreamDecodeError`` (``offset``: the stream byte offset, when known):

    * for bytes that are not one JSON array with optional whitespace around it (for syntax
      errors ijson finds, ``offset`` is where it stopped: at or just after the bad token);
    * for an element larger than ``max_element_bytes``, counted from the previous separator
      (``offset`` is where the limit was passed, after buffering about that much);
    * for a run of more than ``MAX_DIGITS`` (4,000) digits outside strings (or more than
      ``sys.get_int_max_str_digits()`` when that is lower), which ijson's C
      backend cannot safely convert to ``int``;
    * unlike ``json.loads``, for an unpaired UTF-16 surrogate escape in a string
      (``"\\ud800"``): not valid Unicode, and ijson would silently turn it into ``"?"`` or a
      wrong character.

    Elements completed earlier in the failing chunk are never lost: that ``feed`` returns them
    and the next ``feed`` or ``close`` raises the error (every chunking gives the same
    elements before it). The decoder is dead afterwards: every later ``feed`` or ``close``
    raises again.
    """

    def __init__(self, *, max_element_bytes: int = 64 * 1024 * 1024) -> None:
        if max_element_bytes < 1:
            raise ValueError("max_element_bytes must be positive")
        self.max_element_bytes = max_element_bytes
        max_digits = digit_cap(MAX_DIGITS)
        self._max_digits = max_digits
        self._outside = re.compile(
            rb'["\[\]{},]|(?<![0-9])[0-9]{%d}|(?<![0-9])[0-9]+\Z' % (max_digits + 1)
        )

        self._events: Any = ijson.sendable_list()
        self._coro: Any = ijson.basic_parse_coro(self._events)
        self._offset = 0

        # A light scan of the raw bytes, ahead of ijson, for what ijson cannot report:
        # byte offsets, element sizes and over-long digit runs.
        self._phase = 0  # 0 before "[", 1 inside the array, 2 after it closed
        self._depth = 0
        self._in_string = False
        self._escape = b""  # an escape sequence begun but not complete, backslash included
        self._escape_start = 0
        self._high_surrogate: int | None = None  # offset of a \uD8xx awaiting its pair
        self._digits = 0  # length of the digit run that ends the previous chunk
        self._element_start = 0

        # Building elements from ijson's events.
        self._started = False
        self._stack: list[Any] = []
        self._keys: list[Any] = []

        self._closed = False
        self._error: StreamDecodeError | None = None

    def feed(self, chunk: bytes) -> list[object]:
        """Decode ``chunk``; return the top-level elements it completed, in order."""
        self._check_usable()
        if not chunk:  # ijson reads an empty chunk as the end of input
            return []
        if not isinstance(chunk, bytes):
            chunk = bytes(chunk)
        base = self._offset
        self._offset += len(chunk)
        violation = self._scan(chunk, base)
        if violation is None:
            return self._parse(chunk, base)
        offset, message = violation
        # A syntax error earlier in the chunk is the real problem: report that one first.
        cut = max(offset - base, 0)
        done = self._parse(chunk[:cut], base) if cut else []
        try:
            self._fail(message, offset)
        except StreamDecodeError:
            if not done:
                raise
        return done  # the elements before the fault; the next feed or close raises it

    def close(self) -> list[object]:
        """Signal the end of the body; return any element still pending.

        Raises ``StreamDecodeError`` if the array is truncated (never opened or not closed).
        Calling ``close`` again returns ``[]``.
        """
        if self._closed:
            return []
        self._check_usable()
        self._closed = True
        if self._phase != 2:
            what = "no JSON array" if self._phase == 0 else "the JSON array was not closed"
            self._fail(f"truncated stream: {what} at end of input", self._offset)
        try:
            self._coro.close()
        except Exception as exc:
            self._fail(f"invalid JSON array: {_describe(exc)}", None)
        return self._build()

    # -- internals --------------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._closed:
            raise RuntimeError("JSONArrayDecoder.feed() called after close()")
        if self._error is not None:
            raise StreamDecodeError(self._error.message, offset=self._error.offset)

    def _fail(self, message: str, offset: int | None) -> NoReturn:
        self._error = StreamDecodeError(message, offset=offset)
        self._stack = []
        raise StreamDecodeError(message, offset=offset)

    def _parse(self, chunk: bytes, base: int) -> list[object]:
        try:
            self._coro.send(chunk)
        except Exception as exc:  # ijson raises JSONError, decimal and Unicode errors
            offset = _yajl_offset(exc, chunk)
            self._fail(
                f"invalid JSON array: {_describe(exc)}",
                None if offset is None else base + offset,
            )
        return self._build()

    def _scan(self, chunk: bytes, base: int) -> tuple[int, str] | None:
        """Track strings, escapes, nesting and digit runs over ``chunk``.

        Returns ``(stream offset, message)`` for the first violation, else None. Malformed
        JSON may confuse this scan, but only after the point where ijson reports the syntax
        error, which takes precedence.
        """
        pos = 0
        size = len(chunk)
        violation: tuple[int, str] | None = None
        if self._phase == 0:
            pos, violation = self._open(chunk, base)
            if pos < 0 or violation is not None:
                return violation
        elif self._phase == 2:
            return self._check_trailing(chunk, 0, base)
        elif self._digits:
            pos, violation = self._continue_digits(chunk, base)
            if violation is not None:
                return violation

        depth = self._depth
        outside = self._outside
        while pos < size:
            if self._in_string:
                pos, violation = self._in_string_scan(chunk, pos, base)
                if violation is not None:
                    break
                continue
            match = outside.search(chunk, pos)
            if match is None:
                break
            start = match.start()
            pos = match.end()
            byte = chunk[start]
            if byte == 0x22:  # '"'
                self._in_string = True
            elif byte in (0x5B, 0x7B):  # "[", "{"
                depth += 1
            elif byte in (0x5D, 0x7D):  # "]", "}"
                depth -= 1
                if depth == 0:
                    violation = self._check_size(base + start)
                    self._phase = 2
                    break
            elif byte == 0x2C:  # ","
                if depth == 1:
                    violation = self._check_size(base + start)
                    if violation is not None:
                        break
                    self._element_start = base + pos
            elif pos - start > self._max_digits:
                violation = base + start + self._max_digits, self._digits_message()
                break
            else:  # a digit run reaching the end of the chunk may go on in the next one
                self._digits = pos - start
        self._depth = depth
        return self._chunk_end(chunk, pos, base) if violation is None else violation

    def _chunk_end(self, chunk: bytes, pos: int, base: int) -> tuple[int, str] | None:
        """The checks due once a chunk was scanned up to ``pos`` without a violation."""
        if self._phase == 1:
            return self._check_size(base + len(chunk))
        if self._phase == 2:
            return self._check_trailing(chunk, pos, base)
        return None

    def _open(self, chunk: bytes, base: int) -> tuple[int, tuple[int, str] | None]:
        """Before the array: where the scan goes on (-1: only whitespace so far)."""
        match = NON_WHITESPACE_BYTE.search(chunk)
        if match is None:
            return -1, None
        pos = match.start()
        if chunk[pos] != 0x5B:  # "["
            return pos, (base + pos, "the body is not a JSON array (it does not start with '[')")
        self._phase = 1
        self._depth = 1
        pos += 1
        self._element_start = base + pos
        return pos, None

    def _continue_digits(self, chunk: bytes, base: int) -> tuple[int, tuple[int, str] | None]:
        """The previous chunk ended in a run of digits: follow it into this one."""
        match = DIGIT_RUN_BYTES.match(chunk)
        assert match is not None  # "[0-9]*" always matches
        run = self._digits + match.end()
        if run > self._max_digits:
            return 0, (base + self._max_digits - self._digits, self._digits_message())
        self._digits = run if match.end() == len(chunk) else 0
        return match.end(), None

    def _in_string_scan(
        self, chunk: bytes, pos: int, base: int
    ) -> tuple[int, tuple[int, str] | None]:
        """Inside a string at ``pos``: skip to its next escape or its end."""
        if self._escape:  # an escape sequence, perhaps begun in an earlier chunk
            escape = self._escape + chunk[pos : pos + 5]
            length = escape_length(escape)
            if len(escape) < length:  # it goes on in the next chunk
                self._escape = escape
                return len(chunk), None
            pos += length - len(self._escape)
            self._escape = b""
            return pos, self._check_escape(escape[:length])
        match = STRING_SPECIAL_BYTE.search(chunk, pos)
        if self._high_surrogate is not None and (
            match is None or match.start() != pos or chunk[pos] != 0x5C
        ):
            return pos, self._surrogate_violation(self._high_surrogate)
        if match is None:
            return len(chunk), None
        if chunk[match.start()] == 0x22:  # '"'
            self._in_string = False
        else:  # a backslash: the escape is read in the next round
            self._escape = b"\\"
            self._escape_start = base + match.start()
        return match.end(), None

    def _check_trailing(self, chunk: bytes, pos: int, base: int) -> tuple[int, str] | None:
        # Checked here because yajl accepts an unterminated string after the array.
        match = NON_WHITESPACE_BYTE.search(chunk, pos)
        if match is None:
            return None
        return base + match.start(), "data after the end of the JSON array"

    def _check_escape(self, escape: bytes) -> tuple[int, str] | None:
        """Follow UTF-16 surrogate pairs: ``\\uD800``-``\\uDBFF`` must precede a low one."""
        half = surrogate_half(escape_code(escape))
        if half == "low":
            if self._high_surrogate is None:
                return self._surrogate_violation(self._escape_start)
            self._high_surrogate = None
        elif self._high_surrogate is not None:
            return self._surrogate_violation(self._high_surrogate)
        elif half == "high":
            self._high_surrogate = self._escape_start
        return None

    def _surrogate_violation(self, offset: int) -> tuple[int, str]:
        return offset, "an unpaired UTF-16 surrogate escape in a string (not valid Unicode)"

    def _check_size(self, end: int) -> tuple[int, str] | None:
        if end - self._element_start <= self.max_element_bytes:
            return None
        return (
            self._element_start + self.max_element_bytes,
            f"JSON array element larger than max_element_bytes={self.max_element_bytes} bytes "
            f"(the element starts at byte {self._element_start})",
        )

    def _digits_message(self) -> str:
        return (
            f"a number with more than {self._max_digits} digits: refused, since the JSON "
            "parser cannot convert it safely"
        )

    def _build(self) -> list[object]:
        """Turn the pending ijson events into values; return the completed elements."""
        done: list[object] = []
        stack = self._stack
        keys = self._keys
        for event, value in self._events:
            if event == "map_key":
                keys[-1] = value
                continue
            if event == "start_map" or event == "start_array":
                if not self._started:  # the top-level array itself
                    self._started = True
                    continue
                container: Any = {} if event == "start_map" else []
                if stack:
                    _add(stack[-1], keys[-1], container)
                stack.append(container)
                keys.append(None)
                continue
            if event == "end_map" or event == "end_array":
                if not stack:  # the top-level array closed
                    continue
                value = stack.pop()
                keys.pop()
                if not stack:
                    done.append(value)
                continue
            if type(value) is Decimal:
                value = float(value)
            if stack:
                _add(stack[-1], keys[-1], value)
            else:
                done.append(value)
        del self._events[:]
        return done


def _add(container: Any, key: Any, value: object) -> None:
    if type(container) is dict:
        container[key] = value
    else:
        container.append(value)


def _describe(exc: Exception) -> str:
    """The first line of an ijson error (its yajl context lines are about chunk offsets)."""
    if isinstance(exc, UnicodeError):
        return f"invalid UTF-8 ({exc})"
    if isinstance(exc, ArithmeticError):  # decimal refused a number (exponent out of range)
        return f"a number the parser cannot represent ({type(exc).__name__})"
    text = exc.args[0] if exc.args else exc
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    first = str(text).strip().split("\n", 1)[0]
    return first or type(exc).__name__


def _yajl_offset(exc: Exception, chunk: bytes) -> int | None:
    """Recover where in ``chunk`` yajl stopped, from its verbose error message.

    yajl prints the bytes around its position with that position at a fixed column; the
    offset is the one that renders the same context line. None if that is not unique.
    """
    text = exc.args[0] if exc.args else None
    if isinstance(text, str):
        text = text.encode("utf-8", "replace")
    if not isinstance(text, bytes):
        return None
    lines = text.split(b"\n")
    if len(lines) < 3 or not lines[2].endswith(b"^"):
        return None
    context = lines[1]
    flat = chunk.translate(_FLATTEN)
    found = {
        offset for offset in range(min(30, len(chunk) + 1)) if _render(flat, offset) == context
    }
    tail = context[10:]
    if tail:
        # From offset 30 on, the context is 10 spaces then flat[offset - 30 : offset + 30].
        index = flat.find(tail)
        while index >= 0:
            if _render(flat, index + 30) == context:
                found.add(index + 30)
            index = flat.find(tail, index + 1)
    return found.pop() if len(found) == 1 else None


_FLATTEN = bytes.maketrans(b"\r\n", b"  ")


def _render(flat: bytes, offset: int) -> bytes:
    """yajl's context line for ``offset`` (see yajl_render_error_string)."""
    if offset < 30:
        return b" " * (_YAJL_CARET - offset) + flat[: offset + 30]
    return b" " * 10 + flat[offset - 30 : offset + 30]
