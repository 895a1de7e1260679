"""Incremental validation of one call's arguments, backed by ijson's C parser (yajl).

Theory of operation
-------------------
Each call owns one ``ArgumentsTokenizer``, fed the argument fragments (``str``) in order. It
drives one ``ijson.basic_parse_coro`` whose target is a plain list, so yajl appends its
events from C and no Python runs per event unless someone listens.

yajl re-reads an unfinished token from its start on every chunk, so a long string value fed
in token-sized fragments would cost quadratic time (1 MB of ``write_file`` content: minutes).
The tokenizer therefore tracks "inside a string" itself: it sends a string's opening quote at
once (so yajl can say whether a string may stand there), holds the body back while
validating it as it arrives with one regular expression, and sends the body with its closing
quote in one piece. yajl then scans each string at most twice, and all work is linear.

It also guards what yajl cannot: the top-level value must be an object; nesting deeper than
``max_depth`` stops the call (yajl has no limit, ``json.loads`` fails near 1,000); a run of
digits longer than ``max_number_digits`` (or the interpreter's own lower int digit limit)
never reaches yajl (longer integer literals crash ijson's C backend); a surrogate pair split
across fragments is joined before encoding. Its lexical rules all come from ``json.lexicon``.

It also says where a fragment fed next would close the object (``close_offset``, a lookahead
that follows strings and brackets from the tokenizer's own state), and how deep the text is.

Errors are located exactly by ``json.diagnose`` on the error path only; this module only says
*which fragment* went wrong, which is the fragment that delivered the first bad character.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final, Protocol

import ijson

from toolstitch.json.lexicon import (
    DIGIT_RUN,
    DIGITS,
    LITERAL_PREFIXES,
    LITERALS,
    NUMBER_PREFIX,
    SCALAR_KINDS,
    STRING_BODY,
    STRING_OR_BRACKET,
    STRING_TAIL,
    TOKEN_CHARS,
    WHITESPACE,
    body_end,
    digit_cap,
    is_high_surrogate,
    skim,
    utf8,
)
from toolstitch.vocab.native import extension
from toolstitch.vocab.text import JOIN_EVERY

__all__ = [
    "BACKEND",
    "ArgumentsTokenizer",
    "DepthExceeded",
    "DigitsExceeded",
    "InvalidFragment",
    "JSONEventBatch",
    "JSONEventListener",
    "NumberOutOfRange",
    "Tokenizer",
    "make_tokenizer",
    "replay",
]

#: The ijson backend in use. ``yajl2_c`` is expected; where ijson could not build its C
#: extension it falls back to a slower one (``yajl2_cffi``, ``yajl2`` or pure ``python``):
#: results stay the same, speed does not (see docs/concepts.md, "ijson backends").
BACKEND: Final[str] = ijson.backend

#: ``(event, value)`` pairs in text order: those of ``ijson.basic_parse`` (``start_map``,
#: ``map_key``, ``end_map``, ``start_array``, ``end_array``, ``string``, ``number`` as ``int``
#: or ``Decimal``, ``boolean``, ``null``), plus two of toolstitch's own for a string that is
#: still arriving: ``("string_start", "key" | "value")`` when it opens and stays open past the
#: fragment, then ``("string_part", raw)`` with the raw, still-escaped body text of each
#: fragment while it stays open (the last part, before the closing quote, included). When it
#: closes, ijson's ``map_key`` or ``string`` event follows with the whole decoded value. And
#: ``("scalar_start", "number" | "boolean" | "null")`` for a number or literal that starts in
#: a fragment and completes in a later one; its ``number`` / ``boolean`` / ``null`` event
#: follows when it does.
JSONEventBatch = list[tuple[str, object]]
JSONEventListener = Callable[[JSONEventBatch], None]

# Container events: the opening bracket pushed, or None for a closing one (pop).
_CONTAINER: Final[dict[str, str | None]] = {
    "start_map": "{",
    "start_array": "[",
    "end_map": None,
    "end_array": None,
}
_container: Final = _CONTAINER.get
_NOT_CONTAINER: Final = ""
# yajl waits for the end of a number or literal token at the end of a chunk before it judges
# it, so the tokenizer judges the unfinished one itself.
_TOKEN_OR_SPACE: Final = frozenset(TOKEN_CHARS + WHITESPACE)
# The pattern also matches the empty string, so ``match`` never returns None here.
_body_match: Final[Callable[..., re.Match[str]]] = STRING_BODY.match  # type: ignore[assignment]
_SLICE: Final = 16 * 1024
# A held string body longer than this is handed to yajl before its closing quote arrives.
_FLUSH_AT: Final = 64 * 1024
_NOT_HELD: Final[list[str]] = []


class InvalidFragment(Exception):
    """The fragment just fed holds a character no JSON object text can hold there."""


class DepthExceeded(Exception):
    """The fragment just fed nests deeper than the tokenizer's ``max_depth``."""


class NumberOutOfRange(Exception):
    """A number whose exponent is beyond what Python's ``Decimal`` can represent."""


class DigitsExceeded(Exception):
    """A run of digits outside strings grew past the tokenizer's digit cap.

    ``offset`` is the offset, in the whole text, of the first digit past the cap; ``limit``
    is the cap: ``max_number_digits``, or the interpreter's ``sys.get_int_max_str_digits()``
    when that is lower.
    """

    def __init__(self, offset: int, limit: int = 0) -> None:
        super().__init__(offset)
        self.offset = offset
        self.limit = limit


class _ListSink:
    """An ijson target whose ``send`` *is* a list: yajl2_c then appends events from C."""

    __slots__ = ("send",)

    def __init__(self, events: JSONEventBatch) -> None:
        self.send = events


class _AppendSink:
    """The portable ijson target, for the slower backends: ``send`` appends one event."""

    __slots__ = ("send",)

    def __init__(self, events: JSONEventBatch) -> None:
        self.send = events.append


#: The backend module tokenizers use when given none; ``None`` means ijson's own choice.
#: Only tests change it, to run the assembler on a slower backend.
default_backend: ModuleType | None = None


def _parser(events: JSONEventBatch, backend: ModuleType | None) -> tuple[Any, bool]:
    """A fresh push parser appending its events to ``events``, and whether it is yajl2_c."""
    if backend is None:
        backend = default_backend
    module: Any = ijson if backend is None else backend
    native = (BACKEND if backend is None else module.backend_name) == "yajl2_c"
    sink = _ListSink(events) if native else _AppendSink(events)
    return module.basic_parse_coro(sink), native


def _encode(text: str) -> bytes:
    """``text`` as UTF-8, a surrogate pair whose halves came in separate fragments joined;
    a lone surrogate is invalid."""
    try:
        return utf8(text)
    except UnicodeError:
        raise InvalidFragment from None


class ArgumentsTokenizer:
    """Validates one JSON object text fed in ``str`` fragments; knows nothing of calls.

    ``feed`` returns ``True`` for the fragment that closes the top-level object, ``False``
    otherwise, and raises ``InvalidFragment``, ``DepthExceeded`` or ``DigitsExceeded`` for the
    fragment that makes the text invalid. After the close, or after an error, the tokenizer
    must not be fed again: text after the close is the caller's business (whitespace or
    trailing text), and an error is final.

    ``closed``, ``started`` and ``depth`` report its state, and ``close_offset`` says,
    without changing anything, where a fragment fed next would close the object (all four
    mean nothing once ``feed`` has raised).
    """

    __slots__ = (
        "_coro",
        "_digit_run",
        "_events",
        "_flushed",
        "_held",
        "_in_string",
        "_listener",
        "_loose",
        "_max_depth",
        "_max_digits",
        "_offset",
        "_part",
        "_pending",
        "_send",
        "_sig",
        "_stack",
        "_started",
        "_tail",
        "_token",
        "exact_close",
    )

    def __init__(
        self,
        *,
        max_depth: int,
        max_number_digits: int,
        listener: JSONEventListener | None = None,
        backend: ModuleType | None = None,
    ) -> None:
        self._events: JSONEventBatch = []
        coro, native = _parser(self._events, backend)
        self._send: Callable[[bytes], object] = coro.send
        # The pure-Python backends complain when an unfinished parser is garbage-collected;
        # ``close`` shuts them down quietly. yajl2_c needs nothing.
        self._coro: Any = None if native else coro
        #: Whether yajl itself rejects text after the closing brace within the fragment that
        #: closes the object (yajl2_c does; the pure-Python backend notices only later).
        self.exact_close = native
        self._listener = listener
        self._max_depth = max_depth
        self._max_digits = digit_cap(max_number_digits)
        self._stack: list[str] = []  # open containers, "{" or "["
        self._sig = ""  # the last non-whitespace character outside string bodies
        self._token = ""  # an unfinished number or literal at the end of the text so far
        self._started = False
        self._in_string = False
        # The held-back body of the open string; kept only when someone listens, so a call
        # nobody listens to shares one empty list that is never appended to.
        self._pending: list[str] = _NOT_HELD if listener is None else []
        self._loose = 0  # pieces at the end of ``_pending`` not yet joined into one
        self._held = 0  # characters in the joined pieces of ``_pending``
        self._flushed = 0  # characters of the open string's body already sent to yajl
        self._part = ""  # for listeners: the end of a held string's body, closing now
        self._tail = ""  # end of the held body that may still become an escape or a pair
        self._digit_run = 0  # digits at the end of the text sent so far, outside strings
        self._offset = 0  # characters fed so far

    # -- state ---------------------------------------------------------------------------------

    @property
    def fed(self) -> int:
        """Characters fed so far."""
        return self._offset

    @property
    def closed(self) -> bool:
        """Whether the top-level object has closed."""
        # Once started, the opening brace is on the stack until the object closes.
        return self._started and not self._stack

    @property
    def started(self) -> bool:
        """Whether a non-whitespace character has been fed."""
        return self._started

    @property
    def depth(self) -> int:
        """How many containers are open now."""
        return len(self._stack)

    def close_offset(self, fragment: str) -> int:
        """Where ``fragment``, if fed next, would close the top-level object: the offset in
        ``fragment`` just past its closing ``}``, -1 if it would not, 0 if the object has
        already closed. Changes nothing.

        Like ``feed`` it follows strings (escapes included, one left pending at the end of
        the previous fragment too) and brackets, exactly whatever the split; unlike ``feed``
        it validates nothing (see ``lexicon.skim``).
        """
        if self._started and not self._stack:
            return 0
        escape = self._in_string and self._tail.endswith("\\")
        return skim(fragment, len(self._stack), self._in_string, escape, self._started)[0]

    def set_listener(self, listener: JSONEventListener | None) -> None:
        """Attach (or replace) the listener; only before the first fragment, so that it sees
        every event of the text (a held string's body is kept only when someone listens)."""
        if self._offset:
            raise RuntimeError("the listener must be set before the first fragment")
        self._listener = listener
        self._pending = _NOT_HELD if listener is None else []

    # -- feeding -------------------------------------------------------------------------------

    def feed(self, fragment: str) -> bool:
        """Validate the next non-empty fragment; ``True`` if it closes the object."""
        start_offset = self._offset
        stop = len(fragment)
        self._offset = start_offset + stop
        if not self._started and self._begin(fragment):
            return False
        if self._in_string:
            if not self._tail:
                end = _body_match(fragment).end()
                if end == stop:
                    # The common case inside a long string: valid content, still open.
                    if self._listener is not None:
                        self._string_part(fragment)
                    return False
            else:
                end = -1
            resumed = self._resume(fragment, end)
            if resumed is None:
                return False
            head, begin, send_from = resumed
        else:
            head = ""
            begin = send_from = 0
        # Outside any string from ``begin`` on: find each string, hold back an unfinished one.
        plain_start = begin
        opened = -1  # where a string that stays open was opened in this fragment
        max_digits = self._max_digits
        while True:
            quote = fragment.find('"', plain_start)
            if quote < 0:
                # (Right after a closing quote the run is 0 and the fragment ends with '"'.)
                if fragment[-1] in DIGITS or stop - plain_start + self._digit_run > max_digits:
                    self._check_digits(fragment, plain_start, stop, start_offset)
                else:
                    self._digit_run = 0
                break
            if quote - plain_start + self._digit_run > max_digits:
                self._check_digits(fragment, plain_start, quote, start_offset)
            self._digit_run = 0
            end = _body_match(fragment, quote + 1).end()
            if end < stop and fragment[end] == '"':  # (indexing beats startswith here)
                plain_start = end + 1
                continue
            end = self._string_end(fragment, quote + 1)
            if end < 0:
                self._in_string = True
                if self._listener is not None:
                    self._hold(fragment[quote + 1 :])
                stop = opened = quote + 1
                break
            plain_start = end
        # (``begin - send_from`` is 1 when ``sent`` starts with a held string's closing quote.)
        closed = self._send_text(head, fragment[send_from:stop], begin - send_from)
        last = fragment[-1]
        if opened >= 0:
            kind: str | None = self._judge_string(fragment, plain_start, opened)
        elif last not in _TOKEN_OR_SPACE:
            # The common end: a quote, a bracket, a comma or a colon. Nothing is pending.
            self._token = ""
            self._sig = last
            kind = None
        else:
            kind = self._judge_end(fragment, plain_start)
        if self._listener is not None:
            self._notify(fragment, kind, opened)
        self._events.clear()
        return closed

    def _string_part(self, fragment: str) -> None:
        """A whole fragment inside a string that stays open, for the listener: held, and
        reported as a ``string_part``."""
        assert self._listener is not None
        self._pending.append(fragment)
        self._loose += 1
        if self._loose >= JOIN_EVERY:
            self._hold("")
        self._listener([("string_part", fragment)])

    def _begin(self, fragment: str) -> bool:
        """Check the start of the text; ``True`` while nothing but whitespace has come."""
        stripped = fragment.lstrip(WHITESPACE)
        if not stripped:
            return True
        if stripped[0] != "{":
            raise InvalidFragment
        self._started = True
        return False

    def _string_end(self, text: str, start: int) -> int:
        """Offset after the closing quote of the string open at ``start``; -1 if still open.

        Validates the content on the way; the unfinished end of an escape or of a surrogate
        pair is kept in ``_tail`` to be checked with the next fragment.
        """
        end = body_end(text, start)
        if end == len(text):
            self._tail = ""
            return -1
        if text[end] == '"':
            self._tail = ""
            return end + 1
        if STRING_TAIL.match(text, end):
            self._tail = text[end:]
            return -1
        raise InvalidFragment

    def _resume(self, fragment: str, end: int) -> tuple[str, int, int] | None:
        """The open string goes on in ``fragment``, whose valid body runs to ``end`` (-1: an
        unfinished escape or pair is pending from before).

        ``None`` if the string stays open; else ``(head, begin, send_from)``: what to send
        yajl first (the held body with its closing quote; empty when nobody listens, and
        then the closing quote goes alone with the rest),
        where the text after the string starts, and where the rest to send starts.
        """
        if end >= 0:
            end = end + 1 if fragment[end] == '"' else self._string_end(fragment, 0)
        else:
            # Re-check the unfinished escape or surrogate together with its continuation.
            tail = self._tail
            end = self._string_end(tail + fragment, 0)
            if end >= 0:
                end -= len(tail)
        if end < 0:
            if self._listener is not None:
                self._hold(fragment)
                self._listener([("string_part", fragment)])
            return None
        self._in_string = False
        if self._listener is None:
            # The body was validated on its way in and nobody wants its value: yajl gets
            # the closing quote alone and reads an empty string. Long strings thus cost
            # no copy, no encoding and no parsing at all.
            return "", end, end - 1
        pending = self._pending
        pending.append(fragment[:end])
        head = "".join(pending)
        pending.clear()
        self._loose = self._held = self._flushed = 0
        self._part = fragment[: end - 1]
        return head, end, end

    def _send_text(self, head: str, sent: str, plain: int = 0) -> bool:
        """Send yajl a held string's ``head`` and then ``sent``; True if the object closed.

        ``sent`` is outside strings from ``plain`` on (1: it starts with the closing quote of
        a string whose body was held back)."""
        if "\x0b" in sent or "\x0c" in sent:
            # yajl takes vertical tab and form feed for whitespace; JSON does not.
            raise InvalidFragment
        if len(sent) + len(self._stack) > self._max_depth:
            # yajl would build an event per bracket before the depth could be checked: with
            # 100,000 brackets in one fragment, megabytes. Count them first.
            self._check_depth(sent, plain)
        try:
            if head:
                # A held string's body goes in a send of its own: joining it to the rest of
                # the fragment would copy it once more, and it may be megabytes.
                data = _encode(head)
                del head
                self._send(data)
                del data
            if len(sent) > _SLICE:
                # A huge fragment: yajl would hold an event per token of it at once. Feed it
                # in slices and take each slice's events as they come.
                return self._send_slices(sent)
            if sent:
                try:
                    data = sent.encode()
                except UnicodeEncodeError:
                    data = _encode(sent)
                self._send(data)
        except ijson.JSONError:
            self._events.clear()
            raise InvalidFragment from None
        except ArithmeticError:
            # decimal.InvalidOperation: an exponent beyond what Decimal can hold (|e| > 10**18)
            self._events.clear()
            raise NumberOutOfRange from None
        # As ``_walk`` does, inline: this runs for nearly every fragment.
        closed = False
        stack = self._stack
        for event, _ in self._events:
            bracket = _container(event, _NOT_CONTAINER)
            if bracket is not _NOT_CONTAINER:
                if bracket is None:
                    stack.pop()
                    if not stack:
                        closed = True
                else:
                    stack.append(bracket)
                    if len(stack) > self._max_depth:
                        self._events.clear()
                        raise DepthExceeded
        return closed

    def _notify(self, fragment: str, kind: str | None, opened: int) -> None:
        """Hand the listener this fragment's events (with toolstitch's own)."""
        assert self._listener is not None
        batch = self._events[:]
        if self._part:
            batch.insert(0, ("string_part", self._part))
            self._part = ""
        if kind is not None:
            if opened >= 0:
                batch.append(("string_start", kind))
                batch.append(("string_part", fragment[opened:]))
            else:
                batch.append(("scalar_start", kind))
        if batch:
            self._listener(batch)

    # yajl waits for the end of a number, a literal or a string before it judges the token,
    # so ``{"a": 1 2`` or ``{"a" "b`` would be rejected only with a later fragment. The
    # tokenizer checks that such an unfinished token may start where it stands, and that its
    # text so far can still become a number or a literal. In the judges below, ``segment`` is
    # where the text after the last string begins (0 if no string closed in this fragment):
    # the character before an unfinished token is found there, or is the closing quote of
    # that string, or the last significant character of an earlier fragment.

    def _judge_string(self, fragment: str, segment: int, opened: int) -> str:
        """A string opened just before ``opened`` stays open: is it a key or a value?"""
        before = fragment[segment : opened - 1].rstrip(WHITESPACE)
        context = before[-1] if before else ('"' if segment else self._sig)
        if context not in "{[:,":
            raise InvalidFragment
        self._token = ""
        if context == "{" or (context == "," and self._stack[-1] == "{"):
            return "key"
        return "value"

    def _judge_end(self, fragment: str, segment: int) -> str | None:
        """The fragment ends with whitespace or a number or literal token (perhaps unfinished):
        the kind of the value that started and stays unfinished, if any."""
        last = fragment[-1]
        if last not in TOKEN_CHARS:
            self._token = ""
            rest = fragment.rstrip(WHITESPACE)
            if rest:
                self._sig = rest[-1]
            return None
        start = len(fragment.rstrip(TOKEN_CHARS))
        started: str | None = None
        if start == 0 and segment == 0 and self._token:
            token = self._token + fragment  # the token began in an earlier fragment
        else:
            token = fragment[start:]
            before = fragment[segment:start].rstrip(WHITESPACE)
            context = before[-1] if before else ('"' if segment else self._sig)
            if not (
                context == ":"
                or context == "["
                or (context == "," and self._stack and self._stack[-1] == "[")
            ):
                raise InvalidFragment
            # A value starting here that yajl has not reported yet (a number always
            # waits for the character after it; a complete literal does not).
            if token not in LITERALS:
                started = SCALAR_KINDS.get(token[0])
        if token not in LITERAL_PREFIXES and not NUMBER_PREFIX.fullmatch(token):
            raise InvalidFragment
        self._token = token
        self._sig = last
        return started

    # -- the held string body --------------------------------------------------------------------

    def _hold(self, text: str) -> None:
        """Keep ``text`` of the open string's body until its closing quote arrives.

        The same joining policy as ``ChunkedText`` (one ``str`` per ``JOIN_EVERY`` fragments,
        not one per fragment), written out here: the method calls of a ``ChunkedText`` cost
        10-20 % on this path, which runs for every fragment of a listened-to string.
        """
        pending = self._pending
        loose = self._loose
        if text:
            pending.append(text)
            loose += 1
        if loose >= JOIN_EVERY:
            run = "".join(pending[-JOIN_EVERY:])
            pending[-JOIN_EVERY:] = [run]
            loose = 0
            self._held += len(run)
            if self._held >= max(_FLUSH_AT, self._flushed) and not is_high_surrogate(run[-1]):
                self._flush()
        self._loose = loose

    def _flush(self) -> None:
        """A long string: hand yajl what is held so far instead of keeping it all.

        yajl re-reads the unfinished string on each send, so sends double in size and the
        total re-reading stays linear. (Not in the middle of a surrogate pair.)
        """
        pending = self._pending
        data = _encode("".join(pending))
        pending.clear()
        try:
            self._send(data)
        except ijson.JSONError:
            raise InvalidFragment from None
        self._flushed += self._held
        self._held = 0

    def close(self) -> None:
        """Release the parser; the tokenizer is not fed again."""
        coro = self._coro
        if coro is not None:
            self._coro = None
            with contextlib.suppress(ijson.JSONError, RuntimeError):
                coro.close()

    def _walk(self, events: JSONEventBatch) -> bool:
        """Follow yajl's container events: the depth limit, and whether the object closed."""
        closed = False
        stack = self._stack
        for event, _ in events:
            bracket = _container(event, _NOT_CONTAINER)
            if bracket is not _NOT_CONTAINER:
                if bracket is None:
                    stack.pop()
                    if not stack:
                        closed = True
                else:
                    stack.append(bracket)
                    if len(stack) > self._max_depth:
                        events.clear()
                        raise DepthExceeded
        return closed

    def _send_slices(self, text: str) -> bool:
        """Send ``text`` in slices, handling each slice's events; True if the object closed."""
        events = self._events
        closed = False
        start = 0
        while start < len(text):
            stop = start + _SLICE
            if stop < len(text) and is_high_surrogate(text[stop - 1]):
                stop += 1  # keep a surrogate pair in one slice
            piece = text[start:stop]
            start = stop
            try:
                data = piece.encode()
            except UnicodeEncodeError:
                data = _encode(piece)
            self._send(data)
            if self._walk(events):
                closed = True
            if self._listener is not None:
                batch = events[:]
                if self._part:
                    batch.insert(0, ("string_part", self._part))
                    self._part = ""
                if batch:
                    self._listener(batch)
            events.clear()
        return closed

    def _check_depth(self, text: str, plain: int = 0) -> None:
        """Raise ``DepthExceeded`` if ``text`` (complete strings only from ``plain`` on, but
        perhaps a last opening quote) nests deeper than ``max_depth`` from the current depth.

        A closing quote before ``plain`` is skipped: read as an opening one it would turn
        the strings after it inside out and count brackets inside them."""
        if text.count("[") + text.count("{") + len(self._stack) <= self._max_depth:
            return
        depth = len(self._stack)
        limit = self._max_depth
        for match in STRING_OR_BRACKET.finditer(text, plain):
            token = match.group()
            if token == "[" or token == "{":
                depth += 1
                if depth > limit:
                    raise DepthExceeded
            elif token == "]" or token == "}":
                depth -= 1

    def _check_digits(self, fragment: str, begin: int, end: int, base: int) -> None:
        """Keep runs of digits outside strings within the digit cap."""
        if begin >= end:
            return
        run = self._digit_run
        if end - begin + run > self._max_digits:
            # Rare: a long stretch without quotes. Look at the runs of digits themselves.
            for match in DIGIT_RUN.finditer(fragment, begin, end):
                length = match.end() - match.start()
                if match.start() == begin:
                    length += run
                if length > self._max_digits:
                    offset = base + match.end() - (length - self._max_digits)
                    raise DigitsExceeded(offset, self._max_digits)
                run = length if match.end() == end else 0
            if fragment[end - 1] not in DIGITS:
                run = 0
            self._digit_run = run
            return
        if fragment[end - 1] in DIGITS:
            kept = fragment[begin:end].rstrip(DIGITS)
            self._digit_run = end - begin - len(kept) + (run if not kept else 0)
        else:
            self._digit_run = 0


def replay(
    text: str,
    start: int,
    stop: int,
    listener: JSONEventListener,
    *,
    max_depth: int,
    max_number_digits: int,
) -> None:
    """Hand ``listener`` the events of ``text[start:stop]`` that a tokenizer fed ``text[:start]``
    gives when fed it next: what the fragment that starts at ``start`` would have given, cut
    at ``stop``. For the error path: a tokenizer drops the events of a fragment it refuses,
    so its listener hears the text before the fault (a valid prefix) only from here."""
    heard: list[JSONEventListener] = []  # empty while ``text[:start]``, heard before, goes by

    def forward(batch: JSONEventBatch) -> None:
        if heard:
            heard[0](batch)

    tokenizer = ArgumentsTokenizer(
        max_depth=max_depth, max_number_digits=max_number_digits, listener=forward
    )
    # Nothing to suppress for a valid prefix; a refusal all the same ends the replay there.
    with contextlib.suppress(InvalidFragment, DepthExceeded, DigitsExceeded, NumberOutOfRange):
        if start > 0:
            tokenizer.feed(text[:start])
        heard.append(listener)
        if stop > start:
            tokenizer.feed(text[start:stop])
    tokenizer.close()


# -- the factory: the native scanner or the Python tokenizer -----------------------------------


class Tokenizer(Protocol):
    """What the core uses of a tokenizer: ``ArgumentsTokenizer`` or the native ``Scanner``."""

    @property
    def fed(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    @property
    def started(self) -> bool: ...
    @property
    def depth(self) -> int: ...
    @property
    def exact_close(self) -> bool: ...
    def feed(self, fragment: str) -> bool: ...
    def close_offset(self, fragment: str) -> int: ...
    def set_listener(self, listener: JSONEventListener | None) -> None: ...
    def close(self) -> None: ...


@functools.lru_cache(maxsize=64)
def _fallback(max_depth: int, cap: int) -> Callable[[], ArgumentsTokenizer]:
    """The maker of a scanner's Python tokenizer for these limits: one shared by every call
    with the same limits (it holds nothing else), not one built per call."""
    return functools.partial(ArgumentsTokenizer, max_depth=max_depth, max_number_digits=cap)


def make_tokenizer(
    *,
    max_depth: int,
    max_number_digits: int,
    listener: JSONEventListener | None = None,
    text: Callable[[], str] | None = None,
    native: bool = True,
) -> Tokenizer:
    """A tokenizer for one call's arguments: the C extension's ``Scanner`` when ``native`` is
    true, the extension is loaded, ``text`` is given (it returns the call's whole text fed so
    far, the fragment being fed included), nobody listens and ijson's own ``yajl2_c`` backend
    is in use; else an ``ArgumentsTokenizer``. Both decide every fragment alike: the scanner
    hands anything uncommon over to an ``ArgumentsTokenizer`` (docs/native.md)."""
    if (
        native
        and extension is not None
        and text is not None
        and listener is None
        and default_backend is None
        and BACKEND == "yajl2_c"
    ):
        cap = digit_cap(max_number_digits)
        # By position (max_depth, max_number_digits, fallback, text): read faster than by name.
        scanner: Tokenizer = extension.Scanner(max_depth, cap, _fallback(max_depth, cap), text)
        return scanner
    return ArgumentsTokenizer(
        max_depth=max_depth, max_number_digits=max_number_digits, listener=listener
    )
