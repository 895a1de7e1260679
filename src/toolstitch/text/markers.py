"""Literal markers found in text fed piece by piece: linear, exact, holding back only what may
still become a marker.

A model that writes tool calls into its text marks them with literal strings (``<tool_call>``,
``[TOOL_CALLS]``, ``<｜tool▁call▁begin｜>``, ``<|channel|>``...). A reader fed the text a piece at
a time must find each marker even when a piece ends inside it, without re-reading what it has
already seen and without showing as text what may still become a marker.

Theory of operation
-------------------
``MarkerSet(markers)`` compiles a set of markers once into an Aho-Corasick automaton: a trie of
the markers with, for each node, the node of its longest proper suffix that is also a prefix of
some marker (the failure link). Fed one character, the automaton moves to the node of the
longest suffix of everything read that is a prefix of some marker; a node that spells a whole
marker is a hit. So:

* each character is looked at once, whatever the pieces: the work is linear in the text;
* after a piece, exactly the characters of the current node (its depth) are held back, the
  longest suffix that may still become a marker: everything before it is text for certain,
  and handed out at once;
* from the root, only a character that starts some marker leaves it: the scan jumps to the
  next such character of the new piece with one search (a character class over the piece,
  never over text already read), so text without marker characters costs one C-speed search.

The one constraint: **no marker of a set may contain another** (``"<a>"`` and ``"x<a>y"``, or
one the prefix of another). Then at most one marker ends at any position, and the first to end
is the leftmost, so the first hit is the one a reader of the whole text would find first
(``str.find`` of each marker, the earliest): the scan is exact. ``MarkerSet`` refuses a set that
breaks the constraint (``ValueError``), and an empty marker.

``MarkerScanner(marker_set).scan(text)`` returns ``(text, marker, rest)``: the text that is
certain before the first marker found in what it was given (``""`` if none), that marker (or
``None``: all of ``text`` was consumed, some of it perhaps held back), and the part of ``text``
after the marker, not yet read. A reader whose state changes at a marker (a call opens: other
markers apply) scans ``rest`` next, with the scanner of its new state. ``close()`` hands out
what is held back when the text ends (an unfinished marker is text); ``flush()`` the same
before a reader moves to another marker set without a hit. The held-back text is never longer
than the longest marker less one character (``MarkerSet.hold``).

Markers are exact code points: DeepSeek's fullwidth ``｜`` and ``▁`` are what they are, and a
reader that receives text decoded from UTF-8 never sees half a character.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = ["MarkerScanner", "MarkerSet"]

_ROOT: Final = 0


class MarkerSet:
    """A set of literal markers compiled for ``MarkerScanner`` (see the module docstring).

    ``markers`` in the order given (duplicates are one marker); ``hold`` the most characters a
    scanner of this set ever holds back (the longest marker's length less one).
    """

    __slots__ = ("_depth", "_fail", "_first", "_goto", "_output", "firsts", "hold", "markers")

    def __init__(self, markers: Iterable[str]) -> None:
        found = tuple(dict.fromkeys(markers))
        for marker in found:
            if not isinstance(marker, str) or not marker:
                raise ValueError(f"a marker is a non-empty str, got {marker!r}")
        for marker in found:
            inside = [other for other in found if other != marker and marker in other]
            if inside:
                raise ValueError(
                    f"marker {marker!r} is inside {inside[0]!r}: no marker of a set may contain "
                    "another (the first marker found would then depend on what follows)"
                )
        self.markers = found
        self.hold = max((len(m) for m in found), default=1) - 1
        self._goto: list[dict[str, int]] = [{}]
        self._output: list[str | None] = [None]
        self._depth: list[int] = [0]
        for marker in found:
            self._add(marker)
        self._fail = self._links()
        starts = sorted(self._goto[_ROOT])
        #: The characters markers begin with.
        self.firsts = "".join(starts)
        # The characters that leave the root: the only ones worth stopping at from there.
        self._first = (
            re.compile("[" + "".join(re.escape(c) for c in starts) + "]") if starts else None
        )

    def _add(self, marker: str) -> None:
        node = _ROOT
        for char in marker:
            following = self._goto[node].get(char)
            if following is None:
                following = len(self._goto)
                self._goto[node][char] = following
                self._goto.append({})
                self._output.append(None)
                self._depth.append(self._depth[node] + 1)
            node = following
        self._output[node] = marker

    def _links(self) -> list[int]:
        """Each node's failure link, breadth first (a node's link is shallower than it)."""
        fail = [_ROOT] * len(self._goto)
        queue = list(self._goto[_ROOT].values())
        for node in queue:  # grows as it goes: a breadth-first walk of the trie
            for char, child in self._goto[node].items():
                link = fail[node]
                while link != _ROOT and char not in self._goto[link]:
                    link = fail[link]
                target = self._goto[link].get(char, _ROOT)
                fail[child] = target if target != child else _ROOT
                queue.append(child)
        return fail

    def __repr__(self) -> str:
        return f"MarkerSet({list(self.markers)!r})"


class MarkerScanner:
    """Finds the markers of one ``MarkerSet`` in text fed piece by piece (see the module
    docstring): ``scan`` each piece (and what follows a marker), ``close`` at the end."""

    __slots__ = ("_held", "_node", "markers")

    def __init__(self, markers: MarkerSet) -> None:
        self.markers = markers
        self._node = _ROOT
        self._held = ""

    @property
    def held(self) -> str:
        """The text held back: the longest suffix of what was read that may still become a
        marker."""
        return self._held

    def scan(self, text: str) -> tuple[str, str | None, str]:
        """Read ``text`` up to the first marker that ends in it: ``(text before the marker
        that is certain, the marker or None, the rest of text after the marker)``. Without a
        marker, everything is read and the text that may still become one is held back."""
        compiled = self.markers
        goto, fail, output = compiled._goto, compiled._fail, compiled._output
        first = compiled._first
        node = self._node
        position, end = 0, len(text)
        while position < end:
            if node == _ROOT:
                found = None if first is None else first.search(text, position)
                if found is None:
                    position = end
                    break
                position = found.start()
            char = text[position]
            while node != _ROOT and char not in goto[node]:
                node = fail[node]
            node = goto[node].get(char, _ROOT)
            position += 1
            marker = output[node]
            if marker is not None:
                read = self._held + text[:position]
                self._node, self._held = _ROOT, ""
                return read[: len(read) - len(marker)], marker, text[position:]
        read = self._held + text
        keep = compiled._depth[node]
        self._node = node
        self._held = read[len(read) - keep :] if keep else ""
        return read[: len(read) - keep], None, ""

    def flush(self) -> str:
        """Hand out the text held back and start afresh (a reader leaving this marker set
        without a hit: what was held is text after all)."""
        held, self._held, self._node = self._held, "", _ROOT
        return held

    def close(self) -> str:
        """The text ended: what was held back is text (an unfinished marker is no marker)."""
        return self.flush()
