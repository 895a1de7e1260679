"""JSON Pointers (RFC 6901): escaping and parsing reference tokens, and finding where in an
arguments text (or a prefix of one) the value at a pointer starts.

``locate_pointer`` runs on the error path only (to put an offset in a schema violation's
message). It is a scanner of its own rather than a listener of the tokenizer's events,
because those events carry no offsets; it takes its rules from ``json.lexicon``.
"""

from __future__ import annotations

import re
from typing import Any, Final

from toolstitch.json.lexicon import WHITESPACE, StringDecoder, decode_string_content

__all__ = ["locate_pointer", "pointer_escape", "pointer_segments"]


def pointer_escape(segment: str) -> str:
    """One JSON Pointer reference token (RFC 6901): ``~`` as ``~0``, ``/`` as ``~1``."""
    if "~" in segment or "/" in segment:
        return segment.replace("~", "~0").replace("/", "~1")
    return segment


def pointer_segments(pointer: str) -> list[str]:
    """The unescaped reference tokens of a JSON Pointer (``""`` is the whole document)."""
    if not pointer:
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON Pointer: {pointer!r}")
    return [s.replace("~1", "/").replace("~0", "~") for s in pointer[1:].split("/")]


# Lenient: a complete string (escapes skipped, not checked), and a number or literal.
_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR: Final = re.compile(r"[^\s,\]}]+")


class _Locator:
    """One pass over a text, following the path of the value being read.

    ``stack`` holds one entry per open container: ``[is_object, segment, key_start]``;
    ``matched`` counts the leading segments of the current path equal to the target's.
    ``occurrences`` (when given) numbers, per segment, which of the equal keys of its object
    is meant; ``seen`` counts them in the open containers of the target's path.
    """

    __slots__ = (
        "expect_key",
        "key",
        "matched",
        "occurrences",
        "result",
        "seen",
        "stack",
        "target",
        "text",
    )

    def __init__(
        self, text: str, target: list[str], key: bool, occurrences: tuple[int, ...]
    ) -> None:
        self.text = text
        self.target = target
        self.key = key
        self.occurrences = occurrences
        self.seen = [0] * len(target)
        self.stack: list[list[Any]] = []
        self.matched = 0
        self.expect_key = False
        self.result: int | None = None

    def _at_target(self) -> bool:
        wanted = len(self.target)
        return len(self.stack) == wanted and self.matched == wanted

    def _value_starts(self, i: int) -> None:
        """A value starts at ``i``: the result, if it is the target's."""
        if self._at_target():
            top = self.stack[-1]
            self.result = top[2] if self.key and top[0] else i

    def _set_segment(self, segment: str, key_start: int) -> None:
        depth = len(self.stack) - 1
        entry = self.stack[depth]
        entry[1] = segment
        entry[2] = key_start
        base = min(self.matched, depth)
        target = self.target
        found = base == depth and depth < len(target) and target[depth] == segment
        if found and self.occurrences:
            self.seen[depth] += 1
            found = self.seen[depth] == self.occurrences[depth] + 1
        self.matched = base + 1 if found else base

    # Each reader takes the offset of its token and returns where to go on (-1: stop).

    def _string(self, i: int) -> int:
        text = self.text
        match = _STRING.match(text, i)
        if not self.expect_key:
            self._value_starts(i)
            return -1 if match is None else match.end()
        if match is None:  # a key still arriving at the end of the text
            self._set_segment(StringDecoder().push(text[i + 1 :]), i)
            if self.key and self._at_target():
                self.result = i
            return -1
        self._set_segment(decode_string_content(match.group()[1:-1]), i)
        self.expect_key = False
        if self.key and self._at_target():  # the key is placed before its value starts
            self.result = i
        return match.end()

    def _open(self, i: int) -> int:
        self._value_starts(i)
        if len(self.stack) < len(self.seen):
            self.seen[len(self.stack)] = 0  # a new container: its keys are counted anew
        if self.text[i] == "{":
            self.stack.append([True, None, None])
            self.expect_key = True
        else:
            self.stack.append([False, None, None])
            self._set_segment("0", i)
        return i + 1

    def _close(self, i: int) -> int:
        self.stack.pop()
        self.matched = min(self.matched, len(self.stack))
        self.expect_key = False
        return i + 1

    def _comma(self, i: int) -> int:
        top = self.stack[-1]
        if top[0]:
            self.expect_key = True
        else:
            text = self.text
            j = i + 1
            while j < len(text) and text[j] in WHITESPACE:
                j += 1
            self._set_segment(str(int(top[1]) + 1), j)
        return i + 1

    def _scalar(self, i: int) -> int:
        self._value_starts(i)
        match = _SCALAR.match(self.text, i)
        return match.end() if match is not None else len(self.text)

    def run(self, i: int) -> int | None:
        text = self.text
        length = len(text)
        readers = {'"': self._string, "{": self._open, "[": self._open}
        readers.update({"}": self._close, "]": self._close, ",": self._comma})
        while 0 <= i < length:
            c = text[i]
            if c in WHITESPACE or c == ":":
                i += 1
                continue
            i = readers.get(c, self._scalar)(i)
        return self.result


def locate_pointer(
    text: str, pointer: str, *, key: bool = False, occurrences: tuple[int, ...] = ()
) -> int | None:
    """Offset in ``text`` where the value at ``pointer`` starts, or its key with ``key=True``.

    ``text`` is an arguments text or a prefix of one. With duplicate keys, ``occurrences``
    (one per segment of the pointer, as ``Violation.occurrences`` gives them) says which of
    the equal keys of each object is meant, 0 the first: so a value is found at the same place
    in any prefix that holds it. Without it the last occurrence wins (as in the parsed value).
    With ``key=True``, a complete key matches before its value starts (the text may end
    there), and a key still open at the end of the text matches when its decoded content so
    far equals the pointer's last segment (a key refused while still arriving). An array
    element has no key: ``key=True`` gives its start. ``None`` if the text holds no such value
    (yet). One linear pass, for the error path only.
    """
    target = pointer_segments(pointer)
    start = len(text) - len(text.lstrip(WHITESPACE))
    if not target:
        return start if start < len(text) else None
    return _Locator(text, target, key, occurrences).run(start)
