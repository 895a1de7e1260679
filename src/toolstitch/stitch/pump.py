"""The loop of ``for event in stitch(...)``: pull a piece, feed it, hand out its events.

``Pump(chunks, feed, end)`` hands out the events ``feed(piece)`` returns for each piece of
``chunks``, one at a time, pulling the next piece only when it has none left; once ``chunks``
is exhausted it hands out those of ``end()`` (called once) and stops. ``stop()`` drops the
source, so that the next pull is its end. An exception the source raises reaches the reader
and changes nothing: the next ``next()`` pulls again.

This class is the reference. On the native path ``PUMP`` is the C ``toolstitch._native.Pump``
(docs/native.md, "The pump"): the same loop without a Python frame per piece, which feeds a
native ``Stitcher`` C to C.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from toolstitch.vocab.native import extension

__all__ = ["PUMP", "Pump"]

T = TypeVar("T")


class Pump(Generic[T]):
    """Hand out the events of ``feed(piece)`` for each piece of ``chunks``, then those of
    ``end()``."""

    __slots__ = ("_at", "_chunks", "_end", "_events", "_feed", "ended")

    def __init__(
        self,
        chunks: Iterator[object],
        feed: Callable[[object], Sequence[T]],
        end: Callable[[], Sequence[T]],
    ) -> None:
        self._chunks: Iterator[object] | None = chunks
        self._feed = feed
        self._end = end
        self._events: Sequence[T] = ()
        self._at = 0
        self.ended = False  # end() was called

    def __iter__(self) -> Pump[T]:
        return self

    def __next__(self) -> T:
        while self._at >= len(self._events):
            self._events, self._at = (), 0
            if self.ended:
                raise StopIteration
            chunks = self._chunks
            try:
                if chunks is None:
                    raise StopIteration
                piece = next(chunks)
            except StopIteration:
                self.ended, self._chunks = True, None
                self._events = self._end()
            else:
                self._events = self._feed(piece)
        self._at += 1
        return self._events[self._at - 1]

    @property
    def pending(self) -> int:
        """How many events are waiting to be handed out."""
        return len(self._events) - self._at

    def stop(self) -> None:
        """Drop the source: the next pull is its end."""
        self._chunks = None


#: The pump ``Stitch`` runs: the C one on the native path, else ``Pump``.
PUMP: type[Pump[Any]] = getattr(extension, "Pump", Pump) if extension is not None else Pump
