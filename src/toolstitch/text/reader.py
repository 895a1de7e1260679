"""The reader of a model's text: one engine that runs any declared text format.

``TextReader(format).feed(piece)`` reads the next piece of a model's raw output (special
tokens as text) and returns *items*, exactly as an adapter does (``toolstitch.adapters``):
``TextDelta`` and ``ReasoningDelta``/``ReasoningBlock`` events, and for each call written in
the text the deltas and instructions that drive the core (a ``Delta`` naming it, its
``Arguments`` as JSON text, an ``EndCall`` when its markup closes it, a ``Discard`` when it
cannot be a call). ``close(ending)`` ends the text. The ``Stitcher`` applies the items to its
``Assembler``, which validates the arguments strictly, readies each call at the byte that
closes it, and checks it against the declared tools.

Theory of operation
-------------------
The format (``toolstitch.text.formats``) is a state machine declared as data. In a text or
header state the reader scans the piece with that state's ``MarkerScanner``: the text before a
marker is the state's (content, reasoning, markup to skip, a header to read), the marker
moves the machine, and the text after it is read in the new state, in the same pass. In a body
state the state's grammar (``toolstitch.text.bodies``) reads until it says where the body
ended. Each character is looked at by one scanner or one grammar once, so the work is linear
in the text, whatever the pieces; what a scanner or grammar holds back (a possible marker) is
never longer than the longest marker.

The reader is the ``CallSink`` of its grammars: it gives each call the next index, takes its
id from the text (Kimi; a call without one is handed over with ``id=None``, and the
``Stitcher`` asks the core for the id it would generate as the call starts, so that the call
is ready at its closing byte), holds arguments that come before the name (bounded by
``max_argument_chars``), and turns a grammar's fault into a ``Discard`` carrying a
``MalformedArguments`` or ``MalformedCall`` placed in the model's text: offset, line and
column. Faults the core finds in JSON arguments copied from the text (``CallSink.source``)
are placed the same way by ``locate``. A call the text leaves open is ended with the ending
the caller gives ``close`` (a cut: it is discarded, never dispatched).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import Discard, EndCall, Item, arguments
from toolstitch.core.record import CallRecords
from toolstitch.json.lexicon import snippet
from toolstitch.schema.declarations import normalize_tools
from toolstitch.text.bodies import BODIES, Body, Quiet, Steady, quiet_of
from toolstitch.text.bodies.json import STEADY_LANE
from toolstitch.text.formats import State, TextFormat, text_format
from toolstitch.text.headers import HEADERS, MAX_HEADER_CHARS
from toolstitch.text.markers import MarkerScanner
from toolstitch.vocab.endings import Ending
from toolstitch.vocab.errors import (
    MalformedArguments,
    MalformedCall,
    ToolCallError,
    _OffsetError,
)
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.stream_events import TextDelta
from toolstitch.vocab.streamed import ReasoningText, stream_quirk

__all__ = ["TextReader"]

#: The most ``quirk-text-stray`` warnings one stream reports (the rest is dropped silently
#: past this, so that hostile text cannot grow the warnings without bound).
MAX_STRAY_WARNINGS: Final = 16

#: The longest run of whitespace a lead state holds while it waits for the first other
#: character (which may open a call): a longer run opens nothing and is the text of the state
#: the lead turns into, wherever the pieces were cut.
MAX_LEAD_CHARS: Final = 4096

_WHITESPACE: Final = " \t\r\n"
#: What plain text each kind of state reads without a word (``quiet``): a header gathers it,
#: markup drops whitespace; content and reasoning give it out.
_QUIET_PLAIN: Final = {"header": "any", "skip": "whitespace"}


class _Call:
    """What the reader keeps of the call a grammar is reading."""

    __slots__ = ("failed", "id", "index", "name", "pending", "sent", "size")

    def __init__(self, index: int) -> None:
        self.index = index
        self.id: str | None = None
        self.name: str | None = None
        self.pending: list[str] = []  # arguments before the name
        self.size = 0
        self.sent = False  # the core has its Delta
        self.failed = False


class _Lines:
    """Line and column of positions in the text, each character counted once: the text
    before the current piece as it is read (where lines start, with their numbers, kept from
    the oldest position that may still be asked, ``forget``), and inside the piece from the
    last position asked (positions are mostly asked in order: a call's, then its fault's)."""

    __slots__ = ("_k", "_line", "_line_start", "line", "line_start", "lines", "offset", "starts")

    def __init__(self) -> None:
        self.offset = 0  # the text counted so far: where the current piece starts
        self.line = 1  # the line at ``offset``
        self.line_start = 0  # where that line starts
        self.starts = [0]  # where lines start, and their numbers
        self.lines = [1]
        self._k = 0  # in the current piece, the last index asked, and its line
        self._line = 1
        self._line_start = 0

    def advance(self, text: str) -> None:
        """``text`` follows what was counted."""
        at = text.find("\n")
        if at >= 0:
            starts, lines, offset = self.starts, self.lines, self.offset
            while at >= 0:
                self.line += 1
                starts.append(offset + at + 1)
                lines.append(self.line)
                at = text.find("\n", at + 1)
            self.line_start = starts[-1]
        self.offset += len(text)
        self._k, self._line, self._line_start = 0, self.line, self.line_start

    def skip(self, length: int, lines: int = 0, tail: int = 0) -> None:
        """``length`` characters follow what was counted, with ``lines`` line breaks, the
        last ``tail`` characters before its end. Only the last line's start is kept: no
        position inside such text is asked later (it went by a lane: all of it arguments
        that a fault is placed after)."""
        self.offset += length
        if lines:
            self.line += lines
            self.line_start = self.offset - tail
            self.starts.append(self.line_start)
            self.lines.append(self.line)
        self._k, self._line, self._line_start = 0, self.line, self.line_start

    def forget(self, keep: int) -> None:
        """No position more than ``keep`` characters before the next piece will be asked:
        the starts of the lines before it go (so what is kept is bounded by the text that a
        reader may still place a fault in: an open call's, what it holds back)."""
        drop = bisect_right(self.starts, self.offset - keep) - 1
        if drop > 0:
            del self.starts[:drop]
            del self.lines[:drop]

    def at(self, piece: str, k: int) -> tuple[int, int, int]:
        """``(offset, line, column)`` of index ``k`` of ``piece``, the piece that follows
        what was counted (``k`` may be negative: text held from earlier pieces)."""
        offset = self.offset + k
        if k <= 0:
            index = max(bisect_right(self.starts, offset) - 1, 0)
            return offset, self.lines[index], max(offset - self.starts[index], 0) + 1
        if k < self._k:  # behind the last position asked: count from the piece's start
            self._k, self._line, self._line_start = 0, self.line, self.line_start
        newlines = piece.count("\n", self._k, k)
        if newlines:
            self._line += newlines
            self._line_start = self.offset + piece.rindex("\n", self._k, k) + 1
        self._k = k
        return offset, self._line, offset - self._line_start + 1


def _typed_keys(schema: Mapping[str, Any]) -> frozenset[str]:
    """The parameters whose values are JSON rather than raw text: those whose schema does
    not say they are strings only."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return frozenset()
    typed = set()
    for key, spec in properties.items():
        kind = spec.get("type") if isinstance(spec, Mapping) else None
        if kind == "string":
            continue
        if kind is None and isinstance(spec, Mapping):
            values = spec.get("enum", ())
            if not any(k in spec for k in ("anyOf", "oneOf", "allOf", "const", "$ref")) and (
                not isinstance(values, list) or all(isinstance(v, str) for v in values)
            ):
                continue
        typed.add(key)
    return frozenset(typed)


class TextReader:
    """Reads one text format from pieces of a model's output into items (see the module
    docstring).

    ``records`` is the core's read-only view (``Assembler``): the reader bounds what it holds
    by its limits. ``tools`` (any form ``stitch`` takes)
    decides which raw values are JSON. ``primed_reasoning=True`` starts the text inside
    reasoning (the prompt ended with the format's opening reasoning marker).
    ``allocate()`` gives each new call its index (default: 0, 1, 2…).
    """

    def __init__(
        self,
        fmt: str | TextFormat,
        *,
        records: CallRecords | None = None,
        tools: object = None,
        primed_reasoning: bool = False,
        allocate: Callable[[], int] | None = None,
    ) -> None:
        self.format = text_format(fmt)
        limits = records.limits if records is not None else Limits()
        self.limit = limits.max_argument_chars
        declared = normalize_tools(tools) if tools is not None else {}
        self._typed = {name: _typed_keys(s) for name, s in declared.items()}
        self._allocate = allocate
        self._count = 0
        if primed_reasoning and self.format.primed is None:
            raise ValueError(
                f"text format {self.format.name!r} has no reasoning: primed_reasoning=True "
                "cannot start its output inside reasoning"
            )
        start = self.format.primed if primed_reasoning else None
        self._scanners = {
            s.name: MarkerScanner(s.markers) for s in self.format.states.values() if s.markers
        }
        #: The most text a state's scanner holds back (a possible marker).
        self._hold = 1 + max(
            (s.markers.hold for s in self.format.states.values() if s.markers), default=0
        )
        self._reasoning = ReasoningText("reasoning", limits.max_reasoning_chars)
        self._lines = _Lines()
        self._piece = ""
        self._base = 0  # the index of the current text in the piece
        self._out: list[Item] = []
        self._state = self.format.states[start or self.format.start]
        self._body: Body | None = None
        self._header: list[str] = []
        self._header_size = 0
        self._header_at = (0, 1, 1)  # where the header began: offset, line, column
        self._lead = ""  # a lead state's whitespace, held until the first other character
        self._call: _Call | None = None
        #: Where each call's arguments begin in the text (``source``), or ``None`` when its
        #: first arguments were not copied from the text (a string's decoded value, raw
        #: values): the core's faults in them cannot be placed in the text.
        self._sources: dict[int, tuple[int, int, int] | None] = {}
        #: The faults the reader itself found, by call: already placed in the text.
        self._own: dict[int, tuple[str, int]] = {}
        self._variants: set[str] = set()
        self._strays = 0
        self._stray = False  # stray text was reported since the state was entered
        self._closed = False

    # -- reading ------------------------------------------------------------------------

    def feed(self, piece: str) -> list[Item]:
        """Read the next piece of the model's text; return its items."""
        if self._closed:
            raise RuntimeError("TextReader.feed() called after close()")
        out = self._out = []
        if len(self._sources) > 1 or self._own:
            self._forget()
        if self._call is None and self._body is None and not self._lead and not self._header:
            self._lines.forget(self._hold)  # nothing before what a scanner holds is asked
        self._piece = piece
        text, base = piece, 0
        while text:
            self._base = base
            state = self._state
            if state.kind == "body":
                body = self._body
                assert body is not None
                end = body.feed(text)
                if end < 0:
                    break
                returned = getattr(body, "returned", "")
                text, base = returned + text[end:], base + end - len(returned)
                self._body = None
                assert state.then is not None
                self._enter(state.then)
            elif state.kind == "lead":
                text, base = self._lead_state(state, text, base)
            else:
                text, base = self._scan(state, text, base)
        self._lines.advance(piece)
        self._piece = ""
        return out

    def _forget(self) -> None:
        """Keep what ``locate`` needs for the open call only: the core has reported on the
        others' pieces already (the ``Stitcher`` places their faults after each feed)."""
        call = self._call
        keep = None if call is None else call.index
        self._sources = {i: s for i, s in self._sources.items() if i == keep}
        self._own = {i: o for i, o in self._own.items() if i == keep}

    def lane(self, piece: str) -> int | None:
        """The index of the open call when ``piece`` is all its arguments and changes nothing
        else (the body's ``lane`` says so: the steady state of a long string argument): the
        caller hands it to the core directly instead of feeding it. ``None`` otherwise."""
        body = self._body
        lane = None if body is None else getattr(body, "lane", None)
        call = self._call
        if lane is None or call is None or not call.sent or call.failed or "\n" in piece:
            return None
        if lane.fullmatch(piece) is None:
            return None
        if lane is not STEADY_LANE or piece[-1:] == "\\":
            body.laned(piece)  # type: ignore[union-attr]  # a body with a lane has laned()
        self._lines.skip(len(piece))
        return call.index

    def steady(self) -> tuple[int, Steady] | None:
        """The index of the open call and its body's steady lane (``bodies.Steady``) when any
        piece of that lane, without a newline, is all the call's arguments: what ``lane``
        says of such pieces, asked once for all of them (the C text lane of the ``Stitcher``,
        which then reports them to ``skipped``)."""
        body, call = self._body, self._call
        if body is None or call is None or not call.sent or call.failed:
            return None
        steady: Steady | None = getattr(body, "steady", None)
        return None if steady is None else (call.index, steady)

    def quiet(self) -> Quiet | None:
        """What pieces would give nothing now (``bodies.Quiet``), when the reader (or its
        body) rests in a marker scanner with nothing else pending: the ``Stitcher``'s C quiet
        lane may then hold such pieces back and hand them over, joined, with the next piece
        that is not quiet (or at the end)."""
        state = self._state
        if self._closed or self._lead or state.kind == "lead":
            return None
        if state.kind == "body":
            body = self._body
            return None if body is None else getattr(body, "quiet", None)
        scanner = self._scanners.get(state.name)
        if scanner is None:
            return None
        return quiet_of(scanner, _QUIET_PLAIN.get(state.kind, "none"), MAX_HEADER_CHARS)

    def skipped(
        self, chars: int, escape: bool, lines: int = 0, tail: int = 0, newline: bool = False
    ) -> None:
        """``chars`` characters went to the open call's arguments by the steady lane: the
        last of them beginning an escape if ``escape``; ``lines`` line breaks among them, the
        last ``tail`` characters before their end; a last line break held back (``newline``,
        a lane that trims one, ``Steady.trim``)."""
        self._lines.skip(chars, lines, tail)
        self._body.skipped(chars, escape, newline)  # type: ignore[union-attr]  # it has one

    def _scan(self, state: State, text: str, base: int) -> tuple[str, int]:
        """A text or header state: its text up to its next marker, and the move there."""
        certain, marker, rest = self._scanners[state.name].scan(text)
        if certain:
            self._text(state, certain)
        if marker is None:
            return "", base + len(text)
        base += len(text) - len(rest)
        at = base - len(marker)
        move = state.moves[marker]
        target = self._move(state, move.to, at)
        if move.variant is not None:
            self._variant(move.variant, f"marker {marker!r}")
        if move.call == "start":
            self.start(at - self._base)
        elif move.call == "end":
            self.end()
        if move.keep:
            rest, base = marker + rest, at
        self._base = base
        self._enter(target)
        return rest, base

    def _lead_state(self, state: State, text: str, base: int) -> tuple[str, int]:
        """A lead state: only the first character that is not whitespace may start one of
        its markers."""
        held = self._lead + text
        at = len(held) - len(held.lstrip(_WHITESPACE))
        start = base - len(self._lead)  # where ``held`` begins, in the piece
        if at > MAX_LEAD_CHARS:  # so long a run of whitespace opens nothing: it is text
            return self._lead_ends(state, held, start)
        if at == len(held):
            self._lead = held
            return "", base + len(text)
        for marker, move in state.moves.items():
            if held.startswith(marker, at):
                self._lead = ""
                skip = at if move.keep else at + len(marker)
                self._base = start + skip  # where the new state's text begins
                self._enter(move.to)
                return held[skip:], start + skip
            if marker.startswith(held[at:]):  # the piece ends inside a possible marker
                self._lead = held
                return "", base + len(text)
        return self._lead_ends(state, held, start)

    def _lead_ends(self, state: State, held: str, start: int) -> tuple[str, int]:
        """Leave a lead state for the state it turns into when no marker opens it: the held
        whitespace is that state's text too."""
        self._lead = ""
        assert state.otherwise is not None
        self._base = start
        self._enter(state.otherwise)
        return held, start

    def _text(self, state: State, text: str) -> None:
        kind = state.kind
        if kind == "content":
            self._out.append(TextDelta(text=text))
        elif kind == "reasoning":
            self._reasoning.add(text, self._out)
        elif kind == "header":
            self._header_size += len(text)
            if self._header_size <= MAX_HEADER_CHARS:
                self._header.append(text)
        elif text.strip(_WHITESPACE) and not self._stray and self._strays < MAX_STRAY_WARNINGS:
            self._strays += 1
            self._stray = True  # once per stay in the state, however the text was cut
            self._out.append(
                stream_quirk(
                    "quirk-text-stray",
                    f"text between {self.format.name} markers was dropped: "
                    f"{text.lstrip(_WHITESPACE)[:80]!r}",
                )
            )

    def _move(self, state: State, target: str, at: int) -> str:
        """Leaving ``state`` at a marker: a header's text is read now; the state to go to."""
        if state.kind != "header":
            return target
        assert state.rule is not None
        text, size = "".join(self._header), self._header_size
        self._header, self._header_size = [], 0
        header = HEADERS[state.rule](text)
        if size > MAX_HEADER_CHARS:
            header = header._replace(error=f"a header longer than {MAX_HEADER_CHARS} characters")
        if header.variant is not None:
            self._variant(header.variant, f"header {text[:80]!r}")
        if header.error is not None:
            self._header_fault(header.error, state, text)
            return header.to or target
        if (header.name is not None or header.call_id is not None) and self._call is None:
            self._start_call()
        if header.call_id is not None:
            self.ident(header.call_id)
        if header.name is not None:
            self.name(header.name)
        return header.to or target

    def _enter(self, name: str) -> None:
        old, state = self._state, self.format.states[name]
        self._stray = False
        if old.kind == "reasoning" and state.kind != "reasoning":
            self._reasoning.end(self._out)
        self._state = state
        if state.kind == "header":
            self._header_at = self._lines.at(self._piece, self._base)
        elif state.kind == "body":
            assert state.grammar is not None
            self._body = BODIES[state.grammar](self, state.options)

    def close(self, ending: Ending = Ending.INCOMPLETE) -> list[Item]:
        """The text ended: what was held back is the state's text; a call left open is
        ended with ``ending`` (pass the stream's cut when there is one: a cut call is
        discarded, never dispatched)."""
        if self._closed:
            return []
        self._closed = True
        out = self._out = []
        state = self._state
        scanner = self._scanners.get(state.name)
        if scanner is not None:
            held = scanner.close()
            if held:
                self._text(state, held)
        if state.kind == "header" and self._header_size:
            self._cut_header(state)
        if self._lead:
            self._text(self.format.states[state.otherwise or state.name], self._lead)
        if self._body is not None:
            self._body.close()
        call = self._call
        if call is not None:
            self._call = None
            if not call.failed:
                self._send(call)
                out.append(EndCall(call.index, ending))
        if state.kind == "reasoning":
            self._reasoning.end(out)
        return out

    def _cut_header(self, state: State) -> None:
        """The text ended inside a header: the call it began is cut (named if the header
        already names it), never silently gone."""
        assert state.rule is not None
        text = "".join(self._header)
        header = HEADERS[state.rule](text)
        if header.error is not None:
            self._header_fault(header.error, state, text)
            return
        if self._call is None:
            self._start_call()
        if header.name is not None:
            self.name(header.name)

    def _header_fault(self, message: str, state: State, text: str) -> None:
        """A header its rule refuses: the call it names is malformed, placed at the header."""
        if self._call is None:
            self._start_call()
        self._fault(
            message, self._header_at, snippet(text, 0), f"a {state.rule} header", markup=True
        )

    # -- the CallSink of the grammars ----------------------------------------------------

    def _position(self, at: int) -> tuple[int, int, int]:
        return self._lines.at(self._piece, self._base + at)

    def start(self, at: int) -> None:
        """A call begins at index ``at`` of the current text (the reader places nothing by
        it: a fault carries its own position)."""
        self._start_call()

    def _start_call(self) -> None:
        if self._call is not None:
            self.end()
        index = self._allocate() if self._allocate is not None else self._count
        self._count += 1
        self._call = _Call(index)

    def _open(self) -> _Call:
        call = self._call
        if call is None:  # a grammar reports on a call it never started: start it here
            self.start(0)
            call = self._call
            assert call is not None
        return call

    def name(self, name: str) -> None:
        call = self._open()
        if call.name is None and not call.failed and not call.sent:
            call.name = name
            if call.pending:  # arguments came first: the call starts now
                self._send(call)

    def ident(self, call_id: str) -> None:
        call = self._open()
        if call.id is None and not call.sent:
            call.id = call_id

    def _send(self, call: _Call) -> None:
        """Give the core the call (its id, its name if known, the arguments held)."""
        if call.sent:
            return
        call.sent = True
        held = "".join(call.pending)
        call.pending = []
        self._out.append(Delta(index=call.index, id=call.id, name=call.name, arguments=held))

    def arguments(self, fragment: str) -> None:
        call = self._open()
        if call.failed or not fragment:
            return
        if call.index not in self._sources:  # the first arguments, not copied from the text
            self._sources[call.index] = None
        if call.sent:
            self._out.append(arguments(call.index, fragment))
            return
        if call.name is not None:  # the call starts with its first arguments
            self._send(call)
            self._out.append(arguments(call.index, fragment))
            return
        call.size += len(fragment)
        if call.size > self.limit:
            self.fail(
                f"more than {self.limit} characters of arguments before the call's name",
                at=0,
                expected="the call's name",
                markup=True,
            )
            return
        call.pending.append(fragment)

    def end(self) -> None:
        call = self._call
        if call is None:
            return
        self._call = None
        if not call.failed:
            self._send(call)
            self._out.append(EndCall(call.index))

    def fail(self, message: str, *, at: int, expected: str, markup: bool = False) -> None:
        k = min(max(self._base + at, 0), len(self._piece))
        self._fault(message, self._position(at), snippet(self._piece, k), expected, markup=markup)

    def _fault(
        self,
        message: str,
        where: tuple[int, int, int],
        shown: str,
        expected: str,
        *,
        markup: bool,
    ) -> None:
        """Discard the open call: its text can no longer be the format's, from ``where``."""
        call = self._open()
        if call.failed:
            return
        offset, line, column = where
        kind = MalformedCall if markup else MalformedArguments
        error = kind(
            message, offset=offset, line=line, column=column, snippet=shown, expected=expected
        )
        self._send(call)
        call.failed = True
        self._own[call.index] = (message, offset)
        self._out.append(Discard(call.index, error))

    def warn(self, code: str, message: str) -> None:
        self._variant(code, message)

    def source(self, at: int) -> None:
        """The arguments of the open call begin at index ``at`` of the current text: the
        core's faults in them are placed from there (the first such place of a call: more
        arguments the call's text gives later go on from it, whatever the pieces)."""
        call = self._open()
        if call.index not in self._sources:
            self._sources[call.index] = self._position(at)

    def typed(self, key: str) -> bool:
        call = self._call
        if call is None or call.name is None:
            return False
        return key in self._typed.get(call.name, ())

    def _variant(self, variant: str, where: str) -> None:
        if variant in self._variants:
            return
        self._variants.add(variant)
        self._out.append(
            stream_quirk(
                "quirk-text-variant",
                f"{self.format.name}: tolerated variant {variant!r} ({where})",
            )
        )

    # -- placing the core's faults ---------------------------------------------------------

    def locate(self, index: int, error: ToolCallError) -> ToolCallError:
        """``error``, found by the core in the arguments of call ``index``, placed in the
        model's text: its offset, line and column become positions in the text when the
        arguments were copied from it (JSON bodies); any other error as it is."""
        source = self._sources.get(index)
        if source is None or not isinstance(error, _OffsetError):
            return error
        if self._own.get(index) == (error.message, error.offset):
            return error  # the reader's own: placed already
        start, line, column = source
        at_line = error.line
        return error.placed(
            offset=start + error.offset,
            line=line + at_line - 1,
            column=column + error.column - 1 if at_line == 1 else error.column,
        )
