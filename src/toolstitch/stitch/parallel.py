"""The ``multi_tool_use.parallel`` wrapper expanded into its calls, between adapter and core.

Theory of operation
-------------------
The rule (which names, which shape, which ids) is ``toolstitch.adapters._parallel``; it
needs the declared tools, which only the ``Stitcher`` has, so it is applied here, for every
provider alike (OpenAI Chat and Responses are the ones that send the wrapper).
``ParallelWrappers`` sits between the adapter's items and the ``Driver``:

* A delta that names the wrapper (an undeclared wrapper name) turns its call *index* into a
  wrapper: every item for it (deltas, ``Arguments``, ``EndCall``, ``CallNote``) goes to a
  private ``Assembler`` of this class instead of the core, so the core never sees the
  wrapper (with declared tools it would discard it as an unknown tool).
* When the private assembler has the wrapper's complete arguments (ready at the fragment
  that closes them, or at its end), its calls are fed to the core as whole calls, the first
  at the wrapper's own index, the others at fresh ones, each with an id derived from the
  wrapper's (``<wrapper id>_<n>``) and a ``CallWarning`` ``quirk-parallel-wrapper``. They
  are ordinary calls from then on: checked against their tools' schemas, reported ready or
  discarded. A wrapper whose arguments are not the wrapper's shape, or that never
  completes, is fed to the core as it came (and is discarded there as the unknown tool it
  is): nothing is lost.
* Call indices: the expanded calls take indices the adapter has not used; a later call of
  the adapter whose index one of them took moves to the next free index
  (``quirk-index-moved``). The adapter keeps its own numbering: the ``records`` view it is
  given translates its indices to the core's (and shows it the wrapper's private record),
  so adapters that read the core's record (the OpenAI-Chat quirk layer, the Responses
  ``.done`` check) read the right one.

Without declared tools, or when they declare every wrapper name, the ``Stitcher`` does not
create this class at all (the wrapper is then a call like any other).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Container, Iterable, Iterator, Mapping
from typing import Any

from toolstitch.adapters._base import quirk_warning
from toolstitch.adapters._parallel import WRAPPER_NAMES, expand, expanded_id, is_wrapper
from toolstitch.core.assembler import Assembler
from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import Arguments, CallNote, EndCall, Finish, Item, arguments
from toolstitch.core.record import CallRecord
from toolstitch.stitch.driver import Driver
from toolstitch.vocab.call_events import CallDiscarded, CallReady, CallWarning, Event
from toolstitch.vocab.endings import Ending
from toolstitch.vocab.limits import Limits

__all__ = ["ParallelWrappers", "declared_names", "needed"]


def declared_names(tools: object) -> frozenset[str] | None:
    """The declared tool names, or ``None`` when no tools were declared."""
    if tools is None:
        return None
    from toolstitch.schema.declarations import normalize_tools

    return frozenset(normalize_tools(tools))


def needed(declared: Container[str] | None) -> bool:
    """Whether some wrapper name is left undeclared (so wrappers can be recognised)."""
    return any(is_wrapper(name, declared) for name in WRAPPER_NAMES)


class _Records:
    """The core's records as the adapter numbers its calls (see the module docstring)."""

    __slots__ = ("_owner",)

    def __init__(self, owner: ParallelWrappers) -> None:
        self._owner = owner

    @property
    def limits(self) -> Limits:
        return self._owner.assembler.limits

    def record(self, index: int) -> CallRecord | None:
        owner = self._owner
        if index in owner.wrappers:
            return owner.private.record(index)
        core = owner.peek(index)
        return None if core is None else owner.assembler.record(core)

    def generated_id(self, index: int) -> str:
        owner = self._owner
        core = owner.peek(index)
        return owner.assembler.generated_id(index if core is None else core)


class ParallelWrappers:
    """Applies the wrapper rule to an adapter's items, then drives ``assembler`` with them."""

    def __init__(self, assembler: Assembler, declared: Container[str]) -> None:
        self.assembler = assembler
        self.declared = declared
        self.private = type(assembler)(limits=assembler.limits)  # the wrappers' own arguments
        self.wrappers: set[int] = set()  # adapter indices that are wrappers
        self._done: set[int] = set()  # wrappers already expanded or handed on
        self._map: dict[int, int] = {}  # adapter index -> core index, once moved or used
        self._taken: set[int] = set()  # core indices given to expanded calls or moved calls
        self._next = 0  # no core index at or above this is used yet
        self._driver = Driver(assembler)
        self.records = _Records(self)

    # -- indices ----------------------------------------------------------------------------

    def peek(self, index: int) -> int | None:
        """The core index of adapter index ``index`` without assigning one (``None``: it
        will move, and has no record yet)."""
        core = self._map.get(index)
        if core is not None:
            return core
        return None if index in self._taken else index

    def _core(self, index: int, notes: list[Item]) -> int:
        core = self._map.get(index)
        if core is not None:
            return core
        core = index
        if index in self._taken:
            core = self._fresh()
            notes.append(
                quirk_warning(
                    "quirk-index-moved",
                    f"index {index} is taken by a call expanded from a parallel wrapper; "
                    f"this call got index {core}",
                    index=core,
                )
            )
        self._map[index] = core
        self._next = max(self._next, core + 1)
        return core

    def _claim(self, index: int) -> int:
        """The wrapper's own index for its first call, unless a call of the core has it."""
        if index in self._taken or index in self._map.values():
            return self._fresh()
        self._taken.add(index)
        self._next = max(self._next, index + 1)
        return index

    def _fresh(self) -> int:
        core = max(self._next, max(self.wrappers, default=-1) + 1)
        self._taken.add(core)
        self._next = core + 1
        return core

    # -- items ------------------------------------------------------------------------------

    @property
    def driver(self) -> Driver:
        """The driver that applies the items after the wrapper rule."""
        return self._driver

    def events(self, items: Iterable[Item]) -> list[Event]:
        """``drive`` into a new list (``Driver.events``)."""
        out: list[Event] = []
        self.drive(items, out)
        return out

    def drive(self, items: Iterable[Item], out: list[Event]) -> None:
        """What ``Driver.drive`` does, with the wrapper rule applied first."""
        self._driver.drive(self._filter(items), out)

    def _filter(self, items: Iterable[Item]) -> Iterator[Item]:
        for item in items:
            if isinstance(item, Finish):
                ending = self._driver.ending(item.ending)
                for wrapper in sorted(self.wrappers - self._done):
                    yield from self._end(wrapper, ending)
                yield item
                continue
            index = _index_of(item)
            if index is None:
                yield item
            elif index in self.wrappers or self._names_wrapper(item, index):
                yield from self._private(index, item)
            else:
                notes: list[Item] = []
                core = self._core(index, notes)
                yield item if core == index else _moved(item, core)
                yield from notes

    def _names_wrapper(self, item: Item, index: int) -> bool:
        if index in self._map or isinstance(item, (Arguments, EndCall, CallNote, Event)):
            return False  # a call the core already has is never taken back
        if not is_wrapper(_name_of(item), self.declared):
            return False
        self.wrappers.add(index)
        return True

    def _private(self, index: int, item: Item) -> Iterator[Item]:
        if index in self._done or isinstance(item, (CallNote, Event)):
            if isinstance(item, Event):
                yield item  # a quirk warning about the wrapper itself
            return
        if isinstance(item, EndCall):
            yield from self._end(index, self._driver.ending(item.ending))
            return
        events = (
            self.private.feed_arguments(*item)
            if isinstance(item, Arguments)
            else self.private.feed(item)
        )
        ready = next((e for e in events if isinstance(e, CallReady)), None)
        if ready is not None:
            self._done.add(index)
            yield from self._expand(index, ready)

    def _end(self, index: int, ending: Ending | str | None) -> Iterator[Item]:
        if index in self._done:
            return
        self._done.add(index)
        for event in self.private.end(index, ending):
            if isinstance(event, CallReady):
                yield from self._expand(index, event)
            elif isinstance(event, CallDiscarded):
                yield from self._hand_on(index, event.id, event.name, event.arguments)

    def _expand(self, index: int, ready: CallReady) -> Iterator[Item]:
        call = ready.call
        uses = expand(call.parsed_arguments)
        if uses is None:
            yield from self._hand_on(index, call.id, call.name, call.arguments)
            return
        for position, (name, parameters) in enumerate(uses):
            core = self._claim(index) if position == 0 else self._fresh()
            call_id = expanded_id(call.id, position)
            text = json.dumps(parameters, ensure_ascii=False)
            yield Delta(index=core, id=call_id, type="function", name=name, arguments=text)
            yield EndCall(core)
            yield quirk_warning(
                "quirk-parallel-wrapper",
                f"call {position + 1} of {len(uses)} listed by the undeclared wrapper "
                f"{call.name!r} (id {call.id!r})",
                index=core,
                call_id=call_id,
                name=name,
            )

    def _hand_on(
        self, index: int, call_id: str | None, name: str | None, text: str
    ) -> Iterator[Item]:
        """Not the wrapper's shape, or never complete: the core gets the call as it came (at
        the wrapper's index when it is still free)."""
        core = self._claim(index)
        yield Delta(index=core, id=call_id, name=name or None, arguments=text or None)
        yield EndCall(core)


def _index_of(item: Item) -> int | None:
    if isinstance(item, (Arguments, EndCall, CallNote, Delta)):
        return item.index
    if isinstance(item, CallWarning):
        return item.index
    if type(item) is dict or (isinstance(item, Mapping) and not isinstance(item, Event)):
        index = item.get("index")
        return index if isinstance(index, int) and not isinstance(index, bool) else None
    return None


def _name_of(item: Item) -> str | None:
    if isinstance(item, Delta):
        return item.name
    if isinstance(item, Mapping):
        function = item.get("function")
        name = function.get("name") if isinstance(function, Mapping) else item.get("name")
        return name if isinstance(name, str) else None
    return None


def _moved(item: Item, core: int) -> Item:
    """``item`` for core index ``core`` instead of the adapter's."""
    if isinstance(item, Arguments):
        return arguments(core, item.fragment)
    if isinstance(item, (Delta, EndCall, CallNote, CallWarning)):
        return dataclasses.replace(item, index=core)
    assert isinstance(item, Mapping)
    moved: dict[str, Any] = dict(item)
    moved["index"] = core
    return moved
