"""A live view of one call's arguments while they stream, built from the tokenizer's events.

Theory of operation
-------------------
``PartialArguments`` is fed the event batches of one ``ArgumentsTokenizer`` (see
``json.tokenizer.JSONEventBatch``) and keeps the Python value they describe so far: a ``dict``
holding every completed scalar, the open containers (nested as they are in the text), and the
string value still arriving, decoded as far as it has arrived. It never re-parses: every event
costs O(1) (a string part costs O(its length)), and ``value`` returns the live structure
itself, not a copy, so reading it after every delta costs nothing but the decoding of what
arrived since the last read.

The one subtle part is the open string. Python strings are immutable, so growing it would
copy it on every read: a 1 MB ``write_file`` content read after each of its 150,000 deltas
would copy about 75 GB. Instead the raw parts are queued (a list append per event) and only
decoded and appended when someone reads ``value``; the append takes the string out of its
container first, so that the only reference left is a local variable, and CPython's ``+=``
then resizes it in place (``PyUnicode_Append`` on a string nobody else holds). Total work for
reading after every delta is linear in the text, as long as the reader does not keep the
previous version of the open string itself alive across the next read (holding the
containers is fine). A reader that must keep the text, such as a UI widget, should append the
pieces of a watched string instead (``watch_strings``): each piece is only the new text.

Decoding: a string part is raw JSON string content. Complete escapes are decoded, raw
surrogate pairs joined (as ijson does); an unfinished escape at the end of what arrived
(``\\``, ``\\u00``, the high half of a surrogate pair) is held back until it completes.
Numbers become ``int`` or ``float`` as ``json.loads`` gives them. A key still arriving, and a
key whose value has not started, are not shown; nor is a number or literal whose token is
unfinished (the tokenizer reports a scalar only when it is complete).

``PartialArguments`` can also report values as they complete (``report_values=True``): every
completed value at any path, containers included and the root last, as
``(pointer, value, True)``; and, for the string values at the watched JSON Pointers
(``watch_strings``), each newly decoded piece as ``(pointer, piece, False)`` before the final
``(pointer, value, True)``. This backs the assembler's ``ArgumentsValue`` event.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from toolstitch.json.lexicon import StringDecoder
from toolstitch.json.pointer import pointer_escape

__all__ = ["PartialArguments", "ValueUpdate"]

#: ``(JSON Pointer, value, done)``: a completed value (``done=True``), or the newly decoded
#: text of a watched string still arriving (``done=False``).
ValueUpdate = tuple[str, object, bool]


def _parse_pattern(pointer: str) -> tuple[str, ...]:
    if pointer and not pointer.startswith("/"):
        raise ValueError(f"not a JSON Pointer: {pointer!r} (it must be empty or start with '/')")
    return tuple(pointer.split("/")[1:])


class PartialArguments:
    """The arguments value built so far from one tokenizer's event batches.

    ``feed(batch)`` applies one batch and returns the ``ValueUpdate`` list it caused (always
    empty unless ``report_values`` or ``watch_strings`` asked for updates). ``value`` is the
    live ``dict`` (``{}`` before the object opens); ``done`` says whether it closed. Do not
    mutate what ``value`` returns: it is the structure later events keep growing.

    ``watch_strings`` holds JSON Pointers (``"/content"``, ``"/files/0/text"``); a segment
    ``*`` matches any one key or index (``"/files/*/text"``).
    """

    __slots__ = (
        "_decoder",
        "_exact",
        "_keys",
        "_open",
        "_open_key",
        "_open_ptr",
        "_patterns",
        "_ptrs",
        "_raw",
        "_report",
        "_root",
        "_slot",
        "_slot_key",
        "_stack",
        "_track",
        "_watched",
        "done",
    )

    def __init__(self, *, report_values: bool = False, watch_strings: Iterable[str] = ()) -> None:
        self._root: dict[str, Any] = {}
        self._stack: list[Any] = []  # open containers, innermost last
        self._keys: list[Any] = []  # per open container: the pending key of a dict, else None
        self._report = report_values
        watched = [_parse_pattern(p) for p in watch_strings]
        self._exact = frozenset("".join("/" + s for s in p) for p in watched if "*" not in p)
        self._patterns = tuple(p for p in watched if "*" in p)
        self._track = report_values or bool(watched)  # whether pointers are kept
        self._ptrs: list[str] = []  # per open container: its JSON Pointer (when tracked)
        # The open string value: its slot (container and key, -1 in a list), the raw parts
        # not yet decoded, and the decoder holding an unfinished escape.
        self._open = False
        self._open_key = False  # a key string is open (ignored by the view)
        self._slot: Any = None
        self._slot_key: Any = None
        self._raw: list[str] = []
        self._decoder = StringDecoder()
        self._watched = False  # the open string is watched: decode eagerly, report pieces
        self._open_ptr = ""
        #: Whether the top-level object has closed.
        self.done = False

    # -- reading ------------------------------------------------------------------------------

    @property
    def value(self) -> dict[str, Any]:
        """The live value so far (decoding what arrived of the open string since last read)."""
        if self._raw:
            self._flush()
        return self._root

    def _flush(self) -> None:
        raw = self._raw
        piece = self._decoder.push(raw[0] if len(raw) == 1 else "".join(raw))
        raw.clear()
        if piece:
            self._append(piece)

    def _append(self, piece: str) -> None:
        container = self._slot
        key = self._slot_key
        # Take the string out of its container so that the local name holds the only
        # reference: CPython then grows it in place instead of copying it.
        text = container[key]
        container[key] = ""
        text += piece
        container[key] = text

    # -- paths --------------------------------------------------------------------------------

    def _child_pointer(self) -> str:
        """The pointer of the value starting now in the innermost open container."""
        top = self._stack[-1]
        if type(top) is dict:
            return self._ptrs[-1] + "/" + pointer_escape(self._keys[-1])
        return self._ptrs[-1] + "/" + str(len(top))

    def _is_watched(self, pointer: str) -> bool:
        if pointer in self._exact:
            return True
        if self._patterns:
            segments = tuple(pointer.split("/")[1:])
            for pattern in self._patterns:
                if len(pattern) == len(segments) and all(
                    p == "*" or p == s for p, s in zip(pattern, segments, strict=True)
                ):
                    return True
        return False

    # -- events -------------------------------------------------------------------------------

    def _put(self, value: object) -> None:
        top = self._stack[-1]
        if type(top) is dict:
            top[self._keys[-1]] = value
        else:
            top.append(value)

    def feed(self, batch: Iterable[tuple[str, Any]]) -> list[ValueUpdate]:
        """Apply one batch of events; return the updates it caused (see the class doc)."""
        out: list[ValueUpdate] = []
        for event, data in batch:
            if event == "string_part":
                if self._watched:
                    self._watched_part(data, out)
                elif not self._open_key:
                    self._raw.append(data)
            elif event == "map_key":
                self._keys[-1] = data
                self._open_key = False
            elif event == "string":
                if self._open:
                    self._close_string(data, out)
                else:
                    self._value(data, out)
            elif event == "string_start":
                if data == "key":
                    self._open_key = True
                else:
                    self._open_string(out)
            elif event == "start_map" or event == "start_array":
                self._start({} if event == "start_map" else [])
            elif event == "end_map" or event == "end_array":
                self._end(out)
            elif event != "scalar_start":
                # number, boolean, null (a number or literal still arriving is shown once it
                # completes)
                self._value(float(data) if type(data) is Decimal else data, out)
        return out

    def _value(self, value: object, out: list[ValueUpdate]) -> None:
        """A complete scalar (or a string that arrived whole) at the current position."""
        if self._track:
            pointer = self._child_pointer()
            self._put(value)
            if self._report or self._is_watched(pointer):
                out.append((pointer, value, True))
        else:
            self._put(value)

    def _watched_part(self, raw: str, out: list[ValueUpdate]) -> None:
        piece = self._decoder.push(raw)
        if piece:
            self._append(piece)
            out.append((self._open_ptr, piece, False))

    def _open_string(self, out: list[ValueUpdate]) -> None:
        """A string value opens and stays open past its fragment: show it as it arrives."""
        top = self._stack[-1]
        if self._track:
            self._open_ptr = self._child_pointer()
            self._watched = self._is_watched(self._open_ptr)
        self._slot = top
        if type(top) is dict:
            self._slot_key = self._keys[-1]
            top[self._slot_key] = ""
        else:
            self._slot_key = -1
            top.append("")
        self._open = True
        if self._watched:
            out.append((self._open_ptr, "", False))

    def _close_string(self, value: str, out: list[ValueUpdate]) -> None:
        """The open string closed: ijson's decoded whole replaces the view's."""
        self._open = False
        self._raw.clear()
        self._decoder = StringDecoder()
        self._slot[self._slot_key] = value
        if self._track and (self._report or self._watched):
            out.append((self._open_ptr, value, True))
        self._watched = False
        self._slot = None

    def _start(self, new: Any) -> None:
        stack = self._stack
        if stack:
            if self._track:
                self._ptrs.append(self._child_pointer())
            self._put(new)
        else:
            new = self._root
            if self._track:
                self._ptrs.append("")
        stack.append(new)
        self._keys.append(None)

    def _end(self, out: list[ValueUpdate]) -> None:
        closed = self._stack.pop()
        self._keys.pop()
        if self._track:
            pointer = self._ptrs.pop()
            if self._report or self._is_watched(pointer):
                out.append((pointer, closed, True))
        if not self._stack:
            self.done = True
