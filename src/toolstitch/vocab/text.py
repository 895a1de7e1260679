"""``ChunkedText``: text that grows by fragments, in O(1) per append, with O(1) snapshots.

Every buffer of streamed text in toolstitch is one of these (a call's arguments, a string body
held back by the tokenizer): one type, one joining policy, one bound on the per-fragment
overhead.

Theory of operation
-------------------
Fragments are appended to a short list (``recent``). Every ``JOIN_EVERY`` fragments that list
is joined into one *chunk* appended to an append-only list of chunks, so memory stays close to
the text's own size (one ``str`` per ``JOIN_EVERY`` fragments, not one per fragment) and each
character is copied once by the joining. ``text()`` joins everything into a single chunk the
first time it is asked and caches it.

A snapshot shares the list of chunks and records how many of them it owns, plus a tuple of
the recent fragments: O(``JOIN_EVERY``) at worst, independent of the text's length. The
invariant that makes this safe: a chunk list is only ever *appended to*; joining replaces
the list with a new one, it never changes an existing list in place. So a snapshot's view
never changes after it was taken.
"""

from __future__ import annotations

from typing import Final

__all__ = ["JOIN_EVERY", "ChunkedText", "TextSnapshot"]

#: Fragments kept apart before they are joined into one chunk: enough to make the join cheap
#: per fragment, few enough to keep the per-fragment overhead (and a snapshot) bounded.
JOIN_EVERY: Final = 256


class TextSnapshot:
    """The text of a ``ChunkedText`` at one moment; joined on the first ``get()``."""

    __slots__ = ("_chunks", "_count", "_recent", "_text")

    def __init__(
        self,
        text: str | None = None,
        chunks: list[str] | None = None,
        count: int = 0,
        recent: tuple[str, ...] = (),
    ) -> None:
        self._text = text
        self._chunks = chunks
        self._count = count
        self._recent = recent

    def get(self) -> str:
        """The text (joined once, then cached)."""
        text = self._text
        if text is None:
            chunks = self._chunks
            head = "" if chunks is None else "".join(chunks[: self._count])
            text = head + "".join(self._recent)
            self._text, self._chunks, self._recent = text, None, ()
        return text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TextSnapshot):
            return NotImplemented
        return self.get() == other.get()

    def __hash__(self) -> int:
        return hash(self.get())

    def __repr__(self) -> str:
        return repr(self.get())


_EMPTY: Final = TextSnapshot("")


class ChunkedText:
    """Append-only text: ``append`` in O(1), ``text()`` joined once, ``snapshot()`` in O(1).

    ``length`` is the number of characters appended so far (kept by the caller's appends, so
    no join is needed to know it). ``clear()`` drops the text (and its memory) for good.
    """

    __slots__ = ("_chunks", "_recent", "length")

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._recent: list[str] = []
        self.length = 0

    def __len__(self) -> int:
        return self.length

    def append(self, fragment: str) -> None:
        """Add ``fragment`` at the end."""
        recent = self._recent
        recent.append(fragment)
        self.length += len(fragment)
        if len(recent) >= JOIN_EVERY:
            self._chunks.append("".join(recent))
            self._recent = []

    def append_to_length(self, fragment: str, length: int) -> None:
        """``append(fragment)`` for a caller that has already computed the new ``length``
        (``self.length + len(fragment)``, as the assembler does to check its bound): the hot
        path's one ``len`` fewer."""
        recent = self._recent
        recent.append(fragment)
        self.length = length
        if len(recent) >= JOIN_EVERY:
            self._chunks.append("".join(recent))
            self._recent = []

    def text(self) -> str:
        """The whole text. Joins at most once per change; the result is cached."""
        chunks, recent = self._chunks, self._recent
        if not recent:
            if len(chunks) == 1:
                return chunks[0]
            if not chunks:
                return ""
        text = "".join(chunks + recent if recent else chunks)
        self._chunks = [text]  # a new list: snapshots keep the old one unchanged
        self._recent = []
        return text

    def snapshot(self) -> TextSnapshot:
        """The text as it is now, without joining it."""
        chunks, recent = self._chunks, self._recent
        if not recent and not chunks:
            return _EMPTY
        if not recent and len(chunks) == 1:
            return TextSnapshot(chunks[0])
        return TextSnapshot(None, chunks, len(chunks), tuple(recent))

    def clear(self) -> None:
        """Forget the text (a discarded call keeps none)."""
        self._chunks = []
        self._recent = []
        self.length = 0
