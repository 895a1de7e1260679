"""A recording ``CallSink`` for the body grammars' tests (tests/test_text_*.py): what a body
reports, in order, positions as offsets in the whole text."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Event = tuple[Any, ...]


@dataclass
class Recorder:
    """A ``CallSink`` that records what a body reports, positions as offsets in the whole
    text (``offset``: where the piece being fed starts).

    ``variants`` are the grammar's variant names and messages (a warning must be one of
    them, word for word). ``typed_keys`` answers ``typed`` (``None``: the grammar must never
    ask: its syntax carries the types); ``ids``: whether its calls may carry an id.
    ``detailed`` records a fault's message and expectation with its place and kind."""

    variants: Mapping[str, str]
    typed_keys: frozenset[str] | None = None
    ids: bool = False
    detailed: bool = False
    limit: int = 10_000
    offset: int = 0
    events: list[Event] = field(default_factory=list)

    def start(self, at: int) -> None:
        self.events.append(("start", self.offset + at))

    def name(self, name: str) -> None:
        self.events.append(("name", name))

    def ident(self, call_id: str) -> None:
        assert self.ids, "this grammar's calls carry no id"
        self.events.append(("ident", call_id))

    def arguments(self, fragment: str) -> None:
        assert fragment, "an empty fragment reports nothing"
        self.events.append(("args", fragment))

    def end(self) -> None:
        self.events.append(("end",))

    def fail(self, message: str, *, at: int, expected: str, markup: bool = False) -> None:
        assert message
        assert expected
        if self.detailed:
            self.events.append(("fail", message, self.offset + at, expected, markup))
        else:
            self.events.append(("fail", self.offset + at, markup))

    def warn(self, code: str, message: str) -> None:
        assert code in self.variants
        assert message == self.variants[code]
        self.events.append(("warn", code))

    def source(self, at: int) -> None:
        raise AssertionError("this grammar writes its own JSON: no source")

    def typed(self, key: str) -> bool:
        assert self.typed_keys is not None, "this grammar's syntax carries its types"
        return key in self.typed_keys


def joined(events: Iterable[Event]) -> list[Event]:
    """Consecutive argument fragments as one (the shape every chunking agrees on)."""
    out: list[Event] = []
    for event in events:
        if event[0] == "args" and out and out[-1][0] == "args":
            out[-1] = ("args", out[-1][1] + event[1])
        else:
            out.append(event)
    return out


def expanded(events: Iterable[Event]) -> list[Event]:
    """Argument fragments a character each: a cut run's reports are a prefix of these."""
    out: list[Event] = []
    for event in events:
        if event[0] == "args":
            out += [("args", c) for c in event[1]]
        else:
            out.append(event)
    return out


def cut(text: str, points: Iterable[int]) -> list[str]:
    """``text`` cut at ``points`` (taken modulo its length + 1), no piece empty."""
    bounds = sorted({0, len(text), *(p % (len(text) + 1) for p in points)})
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def same(a: Any, b: Any) -> bool:
    """Equal as JSON, types included (``True`` is not ``1``)."""
    return json.dumps(a) == json.dumps(b)
