"""Tool calls written into a model's text, read between the adapter and the core.

With ``text_format=NAME`` (``stitch``, ``astitch``, ``Stitcher``, ``toolstitch replay
--text-format``) the text a stream carries is read as that format
(``toolstitch.text.reader``): ``TextCalls`` sits between the adapter's items and the
``Driver`` (or the parallel-wrapper stage), as ``ParallelWrappers`` does.

Theory of operation
-------------------
* Every ``TextDelta`` the adapter gives goes to the ``TextReader``; its items (the text
  outside calls, reasoning, the calls' deltas and instructions) are applied in its place.
  The source may be the model's raw output as ``str`` pieces (the ``"text"`` adapter), an
  OpenAI legacy completions stream (``choices[].text``), or any provider stream whose
  ``content`` carries calls its server did not parse: then the first call found there is
  reported once, ``quirk-call-in-text``, and its markup leaves the text.
* Calls found in a provider stream's text are numbered from ``PROVIDER_TEXT_INDEX`` up, so
  that they never meet the provider's own calls; in a text stream, from 0.
* A ``Finish`` (the stream's end) first closes the reader: a call the text left open is
  ended as cut (``Ending.INCOMPLETE``, or the stream's own cut when there was one) and is
  discarded, never dispatched.
* A ``CallDiscarded`` whose error the core found in arguments copied from the text is
  placed in the model's text (``TextReader.locate``): offset, line and column.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Final, Protocol

from toolstitch.core.assembler import Assembler
from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import Finish, Item
from toolstitch.stitch.driver import Driver
from toolstitch.text.formats import TextFormat
from toolstitch.text.reader import TextReader
from toolstitch.vocab.call_events import CallDiscarded, Event
from toolstitch.vocab.endings import Ending, ending_of
from toolstitch.vocab.stream_events import TextDelta
from toolstitch.vocab.streamed import stream_quirk

__all__ = ["PROVIDER_TEXT_INDEX", "TextCalls"]

#: The first index of the calls found in a provider stream's text.
PROVIDER_TEXT_INDEX: Final = 1 << 16


class _Applies(Protocol):
    def drive(self, items: Iterable[Item], out: list[Event]) -> None: ...


class TextCalls:
    """Reads the text of a stream's ``TextDelta`` items as a text format (see the module
    docstring); ``drive`` and ``events`` as the ``Driver``'s."""

    __slots__ = ("_apply", "_count", "_driver", "_found", "_provider", "_records", "reader")

    def __init__(
        self,
        fmt: str | TextFormat,
        applies: _Applies,
        driver: Driver,
        assembler: Assembler,
        *,
        tools: object = None,
        primed_reasoning: bool = False,
    ) -> None:
        self._apply = applies.drive
        self._driver = driver
        self._provider = False  # the text comes from a provider stream's content
        self._found = False  # a call was found there
        self._records = assembler
        self._count = 0  # the calls found so far
        self.reader = TextReader(
            fmt,
            records=assembler,
            tools=tools,
            primed_reasoning=primed_reasoning,
            allocate=self._allocate,
        )

    def _allocate(self) -> int:
        """The next call's index: the reader's count of calls, from 0 in a text stream,
        from ``PROVIDER_TEXT_INDEX`` in a provider's."""
        self._count += 1
        return self._count - 1 + (PROVIDER_TEXT_INDEX if self._provider else 0)

    def from_provider(self) -> None:
        """The text comes from a provider's stream (not the model's raw output)."""
        self._provider = True

    def events(self, items: Iterable[Item]) -> list[Event]:
        out: list[Event] = []
        self.drive(items, out)
        return out

    def drive(self, items: Iterable[Item], out: list[Event]) -> None:
        """Apply ``items``, reading their text as the format (see the module docstring)."""
        batch: list[Item] = []
        for item in items:
            if type(item) is TextDelta:
                if batch:
                    self._apply(batch, out)
                    batch = []
                self._read(self.reader.feed(item.text), out)
            elif isinstance(item, Finish):
                if batch:
                    self._apply(batch, out)
                    batch = []
                self.close(out)
                self._apply([item], out)
            else:
                batch.append(item)
        if batch:
            self._apply(batch, out)

    def close(self, out: list[Event]) -> None:
        """The text ended: close the reader (a call it left open is cut)."""
        driver = self._driver
        ending = driver.cut
        if ending is None:  # the finish reason may say the output was cut (``length``)
            said = ending_of(driver.reason) if driver.reason else Ending.INCOMPLETE
            ending = said if said.cut else Ending.INCOMPLETE
        self._read(self.reader.close(ending), out)

    def _with_ids(self, items: list[Item]) -> Iterator[Item]:
        """``items``, each call the text gave no id getting the one the core would generate,
        asked as the call starts (the driver applies each item before it asks for the next,
        so the calls before it are the core's already: ``id_factory`` sees their positions)."""
        generated_id = self._records.generated_id
        for item in items:
            if type(item) is Delta and item.id is None and item.index is not None:
                # (the reader hands over one Delta per call, its first item)
                item = dataclasses.replace(item, id=generated_id(item.index))
            yield item

    def _read(self, items: list[Item], out: list[Event]) -> None:
        if self._provider and not self._found and any(type(i) is Delta for i in items):
            self._found = True
            out.append(
                stream_quirk(
                    "quirk-call-in-text",
                    f"the stream's text held tool calls written as {self.reader.format.name} "
                    "(its server did not parse them): they are calls, their markup left the text",
                )
            )
        start = len(out)
        self._apply(self._with_ids(items), out)
        self._place(out, start)

    def placed(self, events: list[Event]) -> list[Event]:
        """``events``, the faults the core found in text-format calls placed in the text."""
        self._place(events, 0)
        return events

    def _place(self, out: list[Event], start: int) -> None:
        locate = self.reader.locate
        for k in range(start, len(out)):
            event = out[k]
            if type(event) is CallDiscarded:
                placed = locate(event.index, event.error)
                if placed is not event.error:
                    out[k] = dataclasses.replace(event, error=placed)
