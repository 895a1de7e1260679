"""The body grammars: incremental readers of the text of a call (or of a section of calls),
each fed only the new text, each telling the reader what it found through a ``CallSink``.

A text format (``grammars/text-formats.json``) says which body grammar reads its calls and
with which markers; the reader (``toolstitch.text.reader``) runs the format's state machine,
hands the text of a body state to the grammar, and turns what the grammar reports into the
same items an adapter returns.

Theory of operation
-------------------
The reader makes one ``Body`` per body it enters (``BODIES[name](sink, options)``, the options
being the format's declaration for that grammar), then calls ``feed(piece)`` with each new
piece of text until ``feed`` returns where the body ended, and ``close()`` if the text ends
first. A body never sees text twice: what it may not decide yet (a possible marker, the last
newline of a value) it holds itself, and its work per piece is proportional to the piece.

A body reports through its ``CallSink``:

* ``start(at)`` a call begins (``at``: index in the current piece where its markup starts,
  for positions; it may be negative, into text held from earlier pieces);
* ``name(name)`` / ``ident(call_id)`` once each, in any order relative to the arguments;
* ``arguments(fragment)`` the call's arguments as JSON text, in order, as they stream (the
  reader buffers them while the name is unknown);
* ``end()`` the call's markup closed it;
* ``fail(message, at=, expected=)`` the call's text can no longer be the format's: the call
  is discarded with a ``MalformedArguments`` (or ``MalformedCall`` with ``markup=True``) at
  that position of the model's text; the body goes on reading (skipping) to its end;
* ``warn(code, message)`` a tolerated variant or oddity, as a ``CallWarning``;
* ``source(at)`` the arguments that follow are the model's text itself from ``at`` on (a JSON
  body): a fault the strict JSON check finds in them is placed at its position in the text;
* ``typed(key)`` asks whether the value of parameter ``key`` of the current call is JSON
  (the tool's schema says it is not a string) rather than raw text;
* ``limit`` the most characters a body may buffer for one value (``Limits.max_argument_chars``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from toolstitch.text.markers import MarkerScanner

__all__ = [
    "BODIES",
    "BODY_VARIANTS",
    "QUIET_PLAIN",
    "VARIANTS_OF",
    "Body",
    "BodyFactory",
    "CallSink",
    "Quiet",
    "Steady",
    "quiet_of",
    "variants_of",
]


class CallSink(Protocol):
    """What a body grammar tells the reader (see the package docstring)."""

    @property
    def limit(self) -> int: ...

    def start(self, at: int) -> None: ...

    def name(self, name: str) -> None: ...

    def ident(self, call_id: str) -> None: ...

    def arguments(self, fragment: str) -> None: ...

    def end(self) -> None: ...

    def fail(self, message: str, *, at: int, expected: str, markup: bool = False) -> None: ...

    def warn(self, code: str, message: str) -> None: ...

    def source(self, at: int) -> None: ...

    def typed(self, key: str) -> bool: ...


class Body(Protocol):
    """An incremental reader of one body (see the package docstring)."""

    def feed(self, text: str) -> int:
        """Read the next piece: ``-1`` if all of it was read and the body goes on, else the
        index in ``text`` just past the body's end (the rest belongs to the reader)."""
        ...

    def close(self) -> None:
        """The text ended inside the body: report nothing more (the reader ends the call
        that is open as cut)."""
        ...


# A body may say, with a ``lane`` attribute (a compiled pattern, or None), that a piece the
# pattern matches whole, and that holds no newline, is all arguments of the open call and
# leaves the body where it is: the reader then hands such a piece to the core directly
# (``TextReader.lane``), without feeding it, and then calls the body's ``laned(piece)`` unless
# the lane was the steady one of a JSON string and the piece ends in no backslash
# (``bodies.json``): nothing else changes the body.
# Optional too.
#
# A body with a lane may also say, with a ``steady`` attribute (a ``Steady``, or None), that its
# lane is one a character class decides, the same for every piece until a piece outside it:
# the native ``Stitcher`` then takes such pieces without asking (its C text lane, docs/native.md)
# and tells the body afterwards, with ``skipped(chars, escape, newline)``, how many characters
# went by, whether the last of them began an escape, and whether a last line break is held
# (``Steady.trim``). Optional.


@dataclass(frozen=True)
class Steady:
    """A lane as data, for the C text lane: a piece belongs to it when it is not empty and
    holds no control character and none of ``stops`` (ASCII characters), except, with
    ``escapes``, as the character after a backslash (a JSON string's escapes, which the core
    judges; a backslash at the piece's end then begins an escape the next piece ends). With
    ``raw`` the piece is raw text, and its arguments are its JSON escape (``"`` and ``\\``
    escaped: ``literals.json_string``, the rest as it is); else the piece itself. With
    ``newlines`` a raw piece may also hold line breaks, tabs and carriage returns (escaped);
    with ``trim`` a line break that ends a piece is held back until the next piece shows it
    was not the last of the value (the tagged grammar's ``trim_newlines``). With
    ``decodes`` (pairs of ASCII characters: one that may follow a backslash, then the one
    that escape stands for) a raw piece may also hold those escapes: each is taken as its
    character, JSON-escaped; a backslash before any other character is not the lane's, and
    one at the piece's end begins an escape that the next piece ends (a Python string
    literal's simple escapes: ``pythonic_strings``)."""

    stops: str
    escapes: bool
    raw: bool = False
    newlines: bool = False
    trim: bool = False
    decodes: str = ""

    def __post_init__(self) -> None:
        if not self.stops.isascii() or ("\\" in self.stops and self.escapes):
            raise ValueError(f"a steady lane stops at ASCII characters, got {self.stops!r}")
        if self.raw and self.escapes:
            raise ValueError("a raw lane has no escapes: its backslashes are text")
        if ((self.newlines or self.trim) and not self.raw) or (self.trim and not self.newlines):
            raise ValueError("line breaks in a lane are raw text's, and trimmed only if held")
        pairs = self.decodes.isascii() and len(self.decodes) % 2 == 0
        if self.decodes and not (self.raw and pairs):
            raise ValueError(f"a raw lane decodes pairs of ASCII characters, got {self.decodes!r}")


#: What plain text (text that is no marker's beginning) a quiet piece may hold: none, any,
#: or only whitespace (``Quiet.plain``).
QUIET_PLAIN: tuple[str, ...] = ("none", "any", "whitespace")


class Quiet(NamedTuple):
    """Pieces that give no events, as data, for the C quiet lane of the ``Stitcher``: the
    reader (or its body) rests in a marker scanner that holds ``held`` (the longest suffix
    read that may still become one of ``markers``). A piece is quiet when what is held and
    the quiet pieces after it are still a proper prefix of one of ``markers`` (nothing is
    decided); or, with ``plain`` other than ``"none"`` and nothing held, when the piece's
    text before its first character of ``stops`` (the markers' first characters) is plain
    text the state drops or gathers silently (``"any"``: a header; ``"whitespace"``: markup
    between markers), at most ``room`` characters of it in all, and the rest of the piece a
    proper prefix of a marker. Quiet pieces may be held back and read, joined, with the next
    piece that is not: the reader reads any cut of a text alike, and these give nothing. A
    tuple, made after every piece the reader reads in Python: ``plain`` is one of
    ``QUIET_PLAIN`` (the C lane takes any other as ``"none"``)."""

    held: str
    markers: tuple[str, ...]
    #: The markers' first characters: where plain text ends (``MarkerSet.firsts``).
    stops: str
    plain: str = "none"
    room: int = 0


def quiet_of(scanner: MarkerScanner, plain: str = "none", room: int = 0) -> Quiet:
    """What pieces give nothing while ``scanner`` is the one reading (``Quiet``): its held
    text and its markers, with the plain text the state reads silently."""
    markers = scanner.markers
    return Quiet(scanner.held, markers.markers, markers.firsts, plain, room)


# A body whose end lies inside text it held back from earlier pieces (a possible marker
# that turned out to follow the body) gives that text back: ``feed`` then returns 0 and the
# body's ``returned`` attribute holds it; the reader reads it before the rest of the piece.
# Optional: a body that never holds text across its end needs no such attribute.


#: How a body grammar is made: ``factory(sink, options)``, ``options`` the format's
#: declaration for it (markers and switches, as data).
BodyFactory = Callable[[CallSink, Mapping[str, Any]], Body]

#: Every body grammar by the name a format declaration uses (filled by the modules of this
#: package as they are imported; ``toolstitch.text.formats`` imports them all).
BODIES: dict[str, BodyFactory] = {}
#: The variants each grammar may report (``CallSink.warn``), by grammar name, with their
#: descriptions; a format whose calls a grammar reads declares those it may meet with the
#: format's options (``variants_of``; checked by the tests).
BODY_VARIANTS: dict[str, Mapping[str, str]] = {}
#: A grammar whose variants depend on its options: the variants those options allow.
VARIANTS_OF: dict[str, Callable[[Mapping[str, Any]], frozenset[str]]] = {}


def variants_of(grammar: str, options: Mapping[str, Any]) -> frozenset[str]:
    """The variants a body of ``grammar`` read with ``options`` may report."""
    narrowed = VARIANTS_OF.get(grammar)
    if narrowed is not None:
        return narrowed(options)
    return frozenset(BODY_VARIANTS.get(grammar, {}))
