"""An adapter driven against a real core, for tests that check the events it leads to.

Adapters return items (deltas, instructions, events); ``Driven`` applies them to an
``Assembler`` with the ``Stitcher``'s own driver and returns the events, as the adapters
themselves did before they stopped owning the core.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolstitch.adapters import Adapter
from toolstitch.core.assembler import Assembler
from toolstitch.core.instructions import Item
from toolstitch.stitch.driver import Driver
from toolstitch.vocab.call_events import CallDiscarded, CallReady, CallStarted, Event


def assert_every_call_ends_once(events: list[Event]) -> None:
    """Every call that started ended exactly once (ready or discarded), none started twice."""
    started = [e.index for e in events if isinstance(e, CallStarted)]
    ended = [e.call.index for e in events if isinstance(e, CallReady)]
    ended += [e.index for e in events if isinstance(e, CallDiscarded)]
    assert sorted(started) == sorted(ended)
    assert len(set(started)) == len(started)


class Driven:
    """``adapter_class(records=assembler, **options)``, its items applied to the core."""

    def __init__(self, adapter_class: type[Adapter], **options: Any) -> None:
        self.assembler = Assembler()
        self.adapter = adapter_class(records=self.assembler, **options)
        self.driver = Driver(self.assembler)

    def drive(self, items: Iterable[Item]) -> list[Event]:
        out: list[Event] = []
        self.driver.drive(items, out)
        return out

    def feed(self, payload: object, *, event: str | None = None) -> list[Event]:
        return self.drive(self.adapter.feed(payload, event=event))

    def close(self) -> list[Event]:
        return self.drive(self.adapter.close())
