"""The JSON body grammars: arguments written as JSON in the model's text.

Three grammars, one scanner:

* ``json``: one JSON value, the open call's arguments (Kimi K2, DeepSeek, Mistral v11's
  ``[ARGS]{…}``, Harmony's message). With option ``"ends_call": true`` the call ends with the
  value (a format without a closing marker).
* ``json-call``: one wrapper object that is a whole call, ``{"name": "f", "arguments": {…}}``
  (Hermes, Llama 3's ``parameters``): the call starts at ``{`` and ends at ``}``; the value of
  ``arguments`` streams as the call's arguments, before or after the name (the reader holds
  arguments that come before the name); ``arguments`` written as a JSON *string* is read as
  the text it holds (variant ``arguments-as-string``); other keys are skipped.
* ``json-calls``: an array of such wrappers, ``[{…}, {…}]`` (Mistral before v11, Granite,
  Phi-4-mini, xLAM), each a call.

Theory of operation
-------------------
The arguments are never parsed here: they are forwarded, verbatim, as the model wrote them,
to the core, whose strict incremental tokenizer validates them (and readies the call at the
byte that closes them, and places a fault: ``CallSink.source`` tells the reader where in
the text they begin). Here a ``_Scan`` only finds where a value *ends*: its depth, whether it
is inside a string, an escape. It jumps from one structural character to the next with one
regex search over the new piece (``"``, ``\\`` and control characters inside strings;
brackets, quotes and the first characters of the recovery markers outside), so its cost is
C-speed for long strings.

A marker inside a JSON string never ends the body: the scanner knows it is in a string. A
*recovery* marker (option ``"until"``: the format's closing markers) outside a string ends a
value that can no longer close: the call is discarded there (``malformed-arguments``) and the
body ends before the marker, so the call's siblings stand. A raw control character inside a
string (a newline the model did not escape) is a fault the core reports at its position; the
body then skips to the next recovery marker.

The lane: while the arguments are inside a JSON string, a piece made of characters a string
may hold and whole escapes (no ``"``, no control character, no lone ``\\`` at its end) is all
arguments and leaves the string open: a body says so by setting ``lane`` to the pattern such
a piece matches whole (else ``None``), and the reader's ``TextReader.lane`` lets such a piece
go straight to the core, then tells the body (``laned``: the string goes on, an escape the
piece before left open is over). The only text a body holds back is a proper
prefix of a recovery marker at the end of a piece (no such prefix holds a closing bracket or
a quote: ``recovery_markers`` checks it), so a body never ends inside text it held.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from toolstitch.text.bodies import BODIES, BODY_VARIANTS, Body, CallSink, Steady
from toolstitch.text.literals import json_string

__all__ = ["STEADY_LANE", "JsonArguments", "JsonCall", "JsonCalls", "recovery_markers"]

#: The variants the wrapper grammars report (``json-call``, ``json-calls``).
VARIANTS: Final[dict[str, str]] = {
    "arguments-as-string": '"arguments" written as a JSON string holding the object (read as '
    "the text it holds)",
}

# _Scan.run results.
MORE: Final = 0  # all read (perhaps holding from the returned position)
DONE: Final = 1  # the value ended just before the returned position
BROKEN: Final = 2  # a raw control character in a string, at the returned position
MARKER: Final = 3  # a recovery marker starts at the returned position

# Scanner modes.
_BEFORE, _STRING, _ESCAPE, _CONTAINER, _SCALAR = range(5)

_IN_STRING: Final = re.compile(r'["\\\x00-\x1f]')
#: A piece that leaves a string open: characters a string may hold and whole escapes, and
#: perhaps a backslash that begins an escape the next piece ends (group ``open``);
#: ``_LANE_ESCAPED``: the same after a piece that ended so.
_LANE: Final = re.compile(r'(?:[^"\\\x00-\x1f]|\\[^\x00-\x1f])*(?P<open>\\)?')
_LANE_ESCAPED: Final = re.compile(r'[^\x00-\x1f](?:[^"\\\x00-\x1f]|\\[^\x00-\x1f])*(?P<open>\\)?')


#: The lane of a JSON string in its steady state: a piece it matches whole and that ends in no
#: backslash leaves the body as it is (``TextReader.lane`` then tells the body nothing).
STEADY_LANE: Final = _LANE


#: ``STEADY_LANE`` as data, for the C text lane (``bodies.Steady``): a JSON string's characters.
JSON_STEADY: Final = Steady(stops='"', escapes=True)


class _JsonLane:
    """What the bodies whose lane is a JSON string's say of it to the C text lane."""

    __slots__ = ()
    lane: re.Pattern[str] | None

    def laned(self, piece: str) -> None:
        raise NotImplementedError

    @property
    def steady(self) -> Steady | None:
        return JSON_STEADY if self.lane is STEADY_LANE else None

    def skipped(self, chars: int, escape: bool, newline: bool = False) -> None:
        """Pieces went by the steady lane: the string goes on, in an escape if ``escape``."""
        if escape:
            self.laned("\\")


def _laned(scan: _Scan, piece: str, lane: re.Pattern[str] | None) -> None:
    """``scan`` after a ``piece`` that ``lane`` matched whole: in an escape if the piece
    ended by beginning one, else in the string."""
    found = None if lane is None else lane.fullmatch(piece)
    scan.mode = _ESCAPE if found is not None and found["open"] is not None else _STRING


def _lane(scan: _Scan) -> re.Pattern[str] | None:
    """The lane of a body whose arguments value ``scan`` reads, now (see the module docstring)."""
    mode = scan.mode
    return _LANE if mode == _STRING else _LANE_ESCAPED if mode == _ESCAPE else None


_SCALAR_END: Final = re.compile(r"[^-+.0-9A-Za-z]")
_WHITESPACE: Final = " \t\r\n"

# _Wrapper.step results besides a position (and -3 - j: the object ended before j).
_ALL: Final = -1
_FAULT: Final = -2
_HOLD: Final = -(2**62)


def recovery_markers(options: Mapping[str, Any]) -> tuple[str, ...]:
    """A JSON body's recovery markers (option ``"until"``), checked: none holds a quote or
    a bracket before its last character (see the module docstring)."""
    until = tuple(options.get("until", ()))
    for marker in until:
        if not isinstance(marker, str) or not marker:
            raise ValueError(f"a recovery marker is a non-empty str, got {marker!r}")
        if any(c in marker[:-1] for c in '"}]'):
            raise ValueError(f"recovery marker {marker!r} holds a quote or a closing bracket")
    return until


def marker_at(until: Sequence[str], text: str, i: int) -> int:
    """At ``text[i]``: ``MARKER`` if one of the recovery markers ``until`` starts there,
    ``MORE`` if the piece ends inside one, else -1."""
    rest = text[i:]
    for marker in until:
        if rest.startswith(marker):
            return MARKER
        if len(rest) < len(marker) and marker.startswith(rest):
            return MORE
    return -1


class _Scan:
    """Finds where one JSON value ends (see the module docstring)."""

    __slots__ = ("_firsts", "_outside", "_until", "depth", "mode")

    def __init__(self, until: Sequence[str]) -> None:
        self._until = until
        firsts = "".join(sorted({m[0] for m in until}))
        self._firsts = frozenset(firsts)
        self._outside = re.compile("[" + re.escape('{}[]"' + firsts) + "]")
        self.depth = 0
        self.mode = _BEFORE

    def _marker(self, text: str, i: int) -> int:
        return marker_at(self._until, text, i)

    def _before(self, text: str, i: int) -> tuple[int, int]:
        end = len(text)
        while i < end and text[i] in _WHITESPACE:
            i += 1
        if i == end:
            return i, MORE
        c = text[i]
        if c in self._firsts:
            found = self._marker(text, i)
            if found >= 0:
                return i, found
        if c in "{[":
            self.mode, self.depth = _CONTAINER, 1
        elif c == '"':
            self.mode = _STRING
        else:
            self.mode = _SCALAR
            return self._scalar(text, i)
        return i + 1, -1

    def _scalar(self, text: str, i: int) -> tuple[int, int]:
        found = _SCALAR_END.search(text, i)
        if found is None:
            return len(text), MORE
        return found.start(), DONE

    def _string(self, text: str, i: int) -> tuple[int, int]:
        found = _IN_STRING.search(text, i)
        if found is None:
            return len(text), MORE
        j = found.start()
        c = text[j]
        if c == '"':
            if self.depth == 0:
                return j + 1, DONE
            self.mode = _CONTAINER
            return j + 1, -1
        if c == "\\":
            self.mode = _ESCAPE
            return j + 1, -1
        return j, BROKEN

    def _container(self, text: str, i: int) -> tuple[int, int]:
        search = self._outside.search
        while True:
            found = search(text, i)
            if found is None:
                return len(text), MORE
            j = found.start()
            c = text[j]
            if c in self._firsts:
                marker = self._marker(text, j)
                if marker >= 0:
                    return j, marker
            if c == '"':
                self.mode = _STRING
                return j + 1, -1
            if c in "{[":
                self.depth += 1
            elif c in "}]":
                self.depth -= 1
                if self.depth == 0:
                    return j + 1, DONE
            i = j + 1

    def run(self, text: str, i: int) -> tuple[int, int]:
        """Scan ``text`` from ``i``: ``(position, result)``, one of the results above."""
        while True:
            mode = self.mode
            if mode == _STRING:
                i, result = self._string(text, i)
            elif mode == _CONTAINER:
                i, result = self._container(text, i)
            elif mode == _BEFORE:
                i, result = self._before(text, i)
            elif mode == _ESCAPE:
                if i >= len(text):
                    return i, MORE
                self.mode = _STRING
                i, result = i + 1, -1
            else:
                i, result = self._scalar(text, i)
            if result >= 0:
                return i, result


class _Held:
    """The text a body holds back between pieces (a proper prefix of a recovery marker),
    and what it gives back when its end lies inside that text (``Body.returned``)."""

    __slots__ = ("held", "returned")

    def __init__(self) -> None:
        self.held = ""
        self.returned = ""

    def join(self, text: str) -> tuple[str, int]:
        """The held text and the new piece, and how long the held part is."""
        held, self.held = self.held, ""
        return (held + text, len(held)) if held else (text, 0)

    def end(self, text: str, j: int, shift: int) -> int:
        """The body ends before ``text[j]`` (``text``: the held text, ``shift`` long, and the
        piece): the index in the piece, the held text after ``j`` given back."""
        if j >= shift:
            return j - shift
        self.returned = text[j:shift]
        return 0


def _skip_to(held: _Held, until: Sequence[str], text: str, i: int, shift: int) -> int:
    """After a fault at ``text[i]``: read on from there to the next recovery marker (the
    body ends before it). Never from before the fault: a marker read inside a string
    before it was read as the string's (any chunking gives the same)."""
    firsts = {m[0] for m in until}
    for j in range(i, len(text)):
        if text[j] in firsts:
            found = marker_at(until, text, j)
            if found == MARKER:
                return held.end(text, j, shift)
            if found == MORE:
                held.held = text[j:]
                return -1
    return -1


class JsonArguments(_JsonLane):
    """Grammar ``json``: one JSON value, the open call's arguments."""

    __slots__ = ("_ends_call", "_failed", "_held", "_scan", "_sink", "_started", "_until", "lane")

    def __init__(self, sink: CallSink, options: Mapping[str, Any]) -> None:
        self._sink = sink
        self._until = recovery_markers(options)
        self._scan = _Scan(self._until)
        self._ends_call = bool(options.get("ends_call", False))
        self._held = _Held()
        self._started = False
        self._failed = False
        self.lane: re.Pattern[str] | None = None  # see the module docstring

    def feed(self, text: str) -> int:
        end = self._read(text)
        if end >= 0 and self._ends_call:  # the call ends with its body, however that ended
            self._sink.end()
        return end

    def _read(self, text: str) -> int:
        text, shift = self._held.join(text)
        self.lane = None
        sink = self._sink
        if self._failed:
            return _skip_to(self._held, self._until, text, 0, shift)
        i = 0
        if not self._started:
            i = len(text) - len(text.lstrip(_WHITESPACE))
            if i == len(text):
                return -1
        start = i
        end, result = self._scan.run(text, i)
        if not self._started and (end > start or result in (DONE, BROKEN)):
            self._started = True
            sink.source(start - shift)
        if result == MORE:
            self._held.held = text[end:]
            if end > start:
                sink.arguments(text[start:end])
            self.lane = _lane(self._scan) if end == len(text) else None
            return -1
        if end > start:
            sink.arguments(text[start:end])
        if result == DONE:
            return self._held.end(text, end, shift)
        if result == MARKER:
            if self._started:
                sink.fail(
                    "the format's closing marker came inside the arguments",
                    at=end - shift,
                    expected="the rest of the arguments",
                )
            # else: no value before the marker, a call written without arguments: ``{}``
            # (Kimi's and Harmony's empty argument sections; a format that ends the call
            # with its body ends it here, so that the next call is a call of its own)
            return self._held.end(text, end, shift)
        # BROKEN: the core reports the control character it has just been given.
        sink.arguments(text[end])
        self._failed = True
        return _skip_to(self._held, self._until, text, end + 1, shift)

    @property
    def returned(self) -> str:
        return self._held.returned

    def laned(self, piece: str) -> None:
        """A piece went by the lane from ``lane``: where the string is after it."""
        _laned(self._scan, piece, self.lane)
        self.lane = _lane(self._scan)

    def close(self) -> None:
        """The text ended inside the value: the reader ends the call as cut."""


class _Wrapper:
    """Reads one wrapper object ``{"name": …, "arguments": …}`` at depth 1, incrementally:
    the keys and the name are gathered (bounded), the arguments forwarded, other values
    skipped by a ``_Scan``."""

    __slots__ = (
        "_args_keys",
        "_gather",
        "_key",
        "_name_keys",
        "_named",
        "_sink",
        "_state",
        "_until",
        "_value",
        "_value_kind",
        "hold_from",
        "resume",
    )

    def __init__(self, sink: CallSink, options: Mapping[str, Any], until: Sequence[str]) -> None:
        self._sink = sink
        self._name_keys = tuple(options.get("name_keys", ("name",)))
        self._args_keys = tuple(options.get("arguments_keys", ("arguments", "parameters")))
        self._until = until
        self._state = "open"  # open, key, colon, value, comma, done
        self._key = ""
        self._gather: list[str] = []  # a key's, the name's or a string argument's text
        self._value: _Scan | None = None
        self._value_kind = ""  # key, name, arguments, string-arguments, skip
        self._named = False
        #: After ``step`` returned ``_HOLD``: the position from which the piece is held.
        self.hold_from = 0
        #: After ``step`` returned ``_FAULT``: the position of the fault, where the body reads
        #: on to its next recovery marker.
        self.resume = 0

    def _fail(self, message: str, i: int, shift: int, expected: str) -> int:
        """A fault at ``text[i]`` (``shift``: the length of the held text before the piece)."""
        self._sink.fail(message, at=i - shift, expected=expected, markup=True)
        self.resume = i
        return _FAULT

    def step(self, text: str, i: int, shift: int) -> int:
        """Read from ``i``: the next position to read; ``_ALL`` when all was read, ``_HOLD``
        when the rest from ``hold_from`` may be a marker, ``_FAULT`` after a fault, or
        ``-3 - j`` when the object ended just before ``j``."""
        if self._value is not None:
            return self._in_value(text, i, shift)
        end = len(text)
        while i < end and text[i] in _WHITESPACE:
            i += 1
        if i == end:
            return _ALL
        c = text[i]
        state = self._state
        if state == "open":
            if c != "{":
                return self._fail("a call is a JSON object", i, shift, "{")
            self._state = "key"
            return i + 1
        if state in ("key", "comma") and c == "}":
            self._state = "done"
            return -3 - (i + 1)
        if state == "comma":
            if c != ",":
                return self._fail("after a value of the call object", i, shift, ", or }")
            self._state = "key"
            return i + 1
        if state == "colon":
            if c != ":":
                return self._fail("after a key of the call object", i, shift, ":")
            self._state = "value"
            return i + 1
        if state == "key":
            if c != '"':
                return self._fail("a key of the call object", i, shift, "a string")
            return self._begin(text, i, shift, "key")
        return self._begin(text, i, shift, self._kind_of_value(c))

    def _kind_of_value(self, c: str) -> str:
        key = self._key
        if key in self._name_keys and c == '"' and not self._named:
            return "name"
        if key in self._args_keys:
            return "string-arguments" if c == '"' else "arguments"
        return "skip"

    def _begin(self, text: str, i: int, shift: int, kind: str) -> int:
        self._value = _Scan(self._until)
        self._value_kind = kind
        self._gather = []
        if kind == "arguments":
            self._sink.source(i - shift)
        return self._in_value(text, i, shift)

    def _in_value(self, text: str, i: int, shift: int) -> int:
        scan = self._value
        assert scan is not None
        end, result = scan.run(text, i)
        kind = self._value_kind
        piece = text[i:end]
        if kind == "arguments":
            if piece:
                self._sink.arguments(piece)
        elif kind != "skip":
            self._gather.append(piece)
            if sum(map(len, self._gather)) > self._sink.limit:
                return self._fail("a string of the call object is too long", end, shift, '"')
        if result == MORE:
            if end == len(text):
                return _ALL
            self.hold_from = end
            return _HOLD
        if result == MARKER:
            self._sink.fail(
                "the format's closing marker came inside the call",
                at=end - shift,
                expected="the rest of the call object",
            )
            self.resume = end
            return _FAULT
        if result == BROKEN:
            if kind == "arguments":  # the core finds the fault in what it is given, and places it
                self._sink.arguments(text[end])
                self.resume = end + 1
                return _FAULT
            return self._fail("a raw control character in a string", end, shift, "an escape")
        self._value = None
        self._state = "colon" if kind == "key" else "comma"
        return self._ended(kind, end, shift)

    def _ended(self, kind: str, end: int, shift: int) -> int:
        if kind == "skip" or kind == "arguments":
            return end
        raw = "".join(self._gather)
        try:
            value = json.loads(raw)
        except ValueError:
            return self._fail("a string of the call object is not JSON", end, shift, '"')
        if kind == "key":
            self._key = value
        elif kind == "name":
            self._named = True
            self._sink.name(value)
        else:  # string-arguments: the text the string holds is the arguments
            self._sink.warn("arguments-as-string", VARIANTS["arguments-as-string"])
            self._sink.arguments(value)
        return end


class JsonCall(_JsonLane):
    """Grammar ``json-call``: one wrapper object, a whole call (see the module docstring)."""

    __slots__ = ("_failed", "_held", "_sink", "_until", "_wrapper", "lane")

    def __init__(self, sink: CallSink, options: Mapping[str, Any]) -> None:
        self._sink = sink
        self._until = recovery_markers(options)
        self._wrapper = _Wrapper(sink, options, self._until)
        self._held = _Held()
        self._failed = False
        self.lane: re.Pattern[str] | None = None  # see the module docstring

    def feed(self, text: str) -> int:
        text, shift = self._held.join(text)
        self.lane = None
        if self._failed:
            return _skip_to(self._held, self._until, text, 0, shift)
        wrapper = self._wrapper
        i = 0
        if wrapper._state == "open":
            i = len(text) - len(text.lstrip(_WHITESPACE))
            if i == len(text):
                return -1
            if text[i] == "{":
                self._sink.start(i - shift)
            else:
                found = marker_at(self._until, text, i)
                if found == MARKER:
                    return self._held.end(text, i, shift)  # nothing: an empty call
                if found == MORE:  # perhaps the same, in the next piece
                    self._held.held = text[i:]
                    return -1
        while True:
            step = wrapper.step(text, i, shift)
            if step >= 0:
                i = step
                continue
            if step == _ALL:
                value = wrapper._value
                arguments = value is not None and wrapper._value_kind == "arguments"
                self.lane = _lane(value) if arguments and value is not None else None
                return -1
            if step == _HOLD:  # the value's scan holds a possible marker
                self._held.held = text[wrapper.hold_from :]
                return -1
            if step == _FAULT:
                self._failed = True
                return _skip_to(self._held, self._until, text, wrapper.resume, shift)
            self._sink.end()
            return self._held.end(text, -3 - step, shift)

    @property
    def returned(self) -> str:
        return self._held.returned

    def laned(self, piece: str) -> None:
        """A piece went by the lane from ``lane``: where the string is after it."""
        value = self._wrapper._value
        if value is not None:
            _laned(value, piece, self.lane)
            self.lane = _lane(value)

    def close(self) -> None:
        """The text ended inside the call: the reader ends it as cut (a call whose object
        had not even begun is one all the same: its marker opened it)."""
        if self._wrapper._state == "open" and not self._failed:
            self._sink.start(0)


class _Shifted:
    """A sink for a grammar read inside another: its positions are in the piece it is given,
    ``delta`` characters into the outer grammar's piece."""

    __slots__ = ("_sink", "delta")

    def __init__(self, sink: CallSink) -> None:
        self._sink = sink
        self.delta = 0

    @property
    def limit(self) -> int:
        return self._sink.limit

    def start(self, at: int) -> None:
        self._sink.start(at + self.delta)

    def name(self, name: str) -> None:
        self._sink.name(name)

    def ident(self, call_id: str) -> None:
        self._sink.ident(call_id)

    def arguments(self, fragment: str) -> None:
        self._sink.arguments(fragment)

    def end(self) -> None:
        self._sink.end()

    def fail(self, message: str, *, at: int, expected: str, markup: bool = False) -> None:
        self._sink.fail(message, at=at + self.delta, expected=expected, markup=markup)

    def warn(self, code: str, message: str) -> None:
        self._sink.warn(code, message)

    def source(self, at: int) -> None:
        self._sink.source(at + self.delta)

    def typed(self, key: str) -> bool:
        return self._sink.typed(key)


class JsonCalls:
    """Grammar ``json-calls``: an array of wrapper objects, each a call."""

    __slots__ = (
        "_call",
        "_failed",
        "_held",
        "_inner",
        "_opening",
        "_options",
        "_sink",
        "_skip",
        "_state",
        "_until",
    )

    def __init__(self, sink: CallSink, options: Mapping[str, Any]) -> None:
        self._sink = sink
        self._inner = _Shifted(sink)
        self._options = options
        self._until = recovery_markers(options)
        self._held = _Held()
        self._state = "open"  # open, item, comma
        self._call: JsonCall | None = None
        self._failed = False
        #: What opens the list (option ``"opening"``): ``[``, or a marker the format keeps
        #: for the body (Phi-4-mini's ``functools[``).
        self._opening = str(options.get("opening", "["))
        self._skip = 0

    def feed(self, text: str) -> int:
        text, shift = self._held.join(text)
        if self._failed:
            return _skip_to(self._held, self._until, text, 0, shift)
        i = 0
        while True:
            call = self._call
            if call is not None:
                self._inner.delta = i - shift
                ended = call.feed(text[i:] if i else text)
                if ended < 0:
                    return -1
                if call._failed:  # it read on to a recovery marker: the list is over
                    ended = self._held.end(text, i + ended, shift)
                    self._held.returned = call.returned + self._held.returned
                    return ended
                self._call = None
                self._state = "comma"
                i += ended
                continue
            end = len(text)
            while i < end and text[i] in _WHITESPACE:
                i += 1
            if i == end:
                return -1
            step = self._punctuation(text, i, shift)
            if step is not None:
                return step
            if self._call is None:
                i += 1 + self._skip
                self._skip = 0

    def _punctuation(self, text: str, i: int, shift: int) -> int | None:
        """The list's own characters at ``text[i]``: ``None`` to go on, else what ``feed``
        returns."""
        c, state = text[i], self._state
        if state == "open":
            opening = self._opening
            if not text.startswith(opening, i):
                if opening.startswith(text[i:]):  # the piece ends inside the opening
                    self._held.held = text[i:]
                    return -1
                return self._fault("a call list is a JSON array", text, i, shift, opening)
            self._state = "item"
            self._skip = len(opening) - 1
            return None
        if c == "]" and state in ("item", "comma"):
            return self._held.end(text, i + 1, shift)
        if state == "comma":
            if c != ",":
                return self._fault("after a call of the list", text, i, shift, ", or ]")
            self._state = "item"
            return None
        if marker_at(self._until, text, i) == MORE:  # the item may be a marker: read it whole
            self._held.held = text[i:]
            return -1
        self._call = JsonCall(self._inner, self._options)
        return None

    @property
    def lane(self) -> re.Pattern[str] | None:
        """The lane of the call being read (see the module docstring)."""
        call = self._call
        return None if call is None else call.lane

    def laned(self, piece: str) -> None:
        """A piece went by the lane: the call being read takes it."""
        assert self._call is not None
        self._call.laned(piece)

    @property
    def steady(self) -> Steady | None:
        call = self._call
        return None if call is None else call.steady

    def skipped(self, chars: int, escape: bool, newline: bool = False) -> None:
        assert self._call is not None
        self._call.skipped(chars, escape, newline)

    def _fault(self, message: str, text: str, i: int, shift: int, expected: str) -> int:
        self._sink.fail(message, at=i - shift, expected=expected, markup=True)
        self._failed = True
        return _skip_to(self._held, self._until, text, i, shift)

    @property
    def returned(self) -> str:
        return self._held.returned

    def close(self) -> None:
        """The text ended inside the list: the reader ends the open call as cut."""


def _register() -> None:
    def arguments(sink: CallSink, options: Mapping[str, Any]) -> Body:
        return JsonArguments(sink, options)

    def call(sink: CallSink, options: Mapping[str, Any]) -> Body:
        return JsonCall(sink, options)

    def calls(sink: CallSink, options: Mapping[str, Any]) -> Body:
        return JsonCalls(sink, options)

    BODIES.update({"json": arguments, "json-call": call, "json-calls": calls})
    BODY_VARIANTS.update({"json": {}, "json-call": VARIANTS, "json-calls": VARIANTS})


_register()

# json_string is the one escaper of raw text (the wrapper's string arguments are decoded,
# never re-escaped): kept importable from here for the grammars built on this one.
__all__ += ["json_string"]
