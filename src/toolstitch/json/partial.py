"""A live view of one call's arguments while they stream, built from the tokenizer's events.

Theory of operation
-------------------
``PartialArguments`` is fed the event batches of one ``ArgumentsTokenizer`` (see
``_tokenizer.JSONEventBatch``) and keeps the Python value they describe so far: a ``dict``
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

import json
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, Final

from toolstitch.json.diagnose import body_end

__all__ = [
    "PartialArguments",
    "StringDecoder",
    "ValueUpdate",
    "decode_string_content",
    "pointer_escape",
]

#: ``(JSON Pointer, value, done)``: a completed value (``done=True``), or the newly decoded
#: text of a watched string still arriving (``done=False``).
ValueUpdate = tuple[str, object, bool]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_loads: Final = json.loads


def pointer_escape(segment: str) -> str:
    """One JSON Pointer reference token (RFC 6901): ``~`` as ``~0``, ``/`` as ``~1``."""
    if "~" in segment or "/" in segment:
        return segment.replace("~", "~0").replace("/", "~1")
    return segment


def decode_string_content(raw: str) -> str:
    """Decode complete JSON string content (escapes, raw surrogate pairs) as ijson would."""
    text: str = _loads('"' + raw + '"') if "\\" in raw else raw
    if not text.isascii() and _SURROGATE.search(text) is not None:
        # Raw surrogate halves (a pair split by a UTF-16 decoder) make one character.
        text = text.encode("utf-16", "surrogatepass").decode("utf-16")
    return text


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


def _parse_pattern(pointer: str) -> tuple[str, ...]:
    if pointer and not pointer.startswith("/"):
        raise ValueError(f"not a JSON Pointer: {pointer!r} (it must be empty or start with '/')")
    return tuple(pointer.split("/")[1:])


def _to_python(value: object) -> object:
    return float(value) if type(value) is Decimal else value


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
        stack = self._stack
        keys = self._keys
        track = self._track
        for event, data in batch:
            if event == "string_part":
                if self._open_key:
                    continue
                if self._watched:
                    piece = self._decoder.push(data)
                    if piece:
                        self._append(piece)
                        out.append((self._open_ptr, piece, False))
                else:
                    self._raw.append(data)
            elif event == "map_key":
                keys[-1] = data
                self._open_key = False
            elif event == "string":
                if self._open:
                    # The open string closed: ijson's decoded whole replaces the view's.
                    self._open = False
                    self._raw.clear()
                    self._decoder = StringDecoder()
                    self._slot[self._slot_key] = data
                    if track:
                        pointer = self._open_ptr
                        if self._report or self._watched:
                            out.append((pointer, data, True))
                    self._watched = False
                    self._slot = None
                else:
                    if track:
                        pointer = self._child_pointer()
                    self._put(data)
                    if track and (self._report or self._is_watched(pointer)):
                        out.append((pointer, data, True))
            elif event == "string_start":
                if data == "key":
                    self._open_key = True
                    continue
                top = stack[-1]
                if track:
                    self._open_ptr = self._child_pointer()
                    self._watched = self._is_watched(self._open_ptr)
                if type(top) is dict:
                    self._slot = top
                    self._slot_key = keys[-1]
                    top[self._slot_key] = ""
                else:
                    self._slot = top
                    self._slot_key = -1
                    top.append("")
                self._open = True
                if self._watched:
                    out.append((self._open_ptr, "", False))
            elif event == "start_map" or event == "start_array":
                new: Any = {} if event == "start_map" else []
                if stack:
                    if track:
                        self._ptrs.append(self._child_pointer())
                    self._put(new)
                else:
                    new = self._root
                    if track:
                        self._ptrs.append("")
                stack.append(new)
                keys.append(None)
            elif event == "end_map" or event == "end_array":
                closed = stack.pop()
                keys.pop()
                if track:
                    pointer = self._ptrs.pop()
                    if self._report or self._is_watched(pointer):
                        out.append((pointer, closed, True))
                if not stack:
                    self.done = True
            elif event == "scalar_start":
                continue  # a number or literal still arriving: shown once it completes
            else:
                # number, boolean, null
                value = _to_python(data)
                if track:
                    pointer = self._child_pointer()
                self._put(value)
                if track and (self._report or self._is_watched(pointer)):
                    out.append((pointer, value, True))
        return out
