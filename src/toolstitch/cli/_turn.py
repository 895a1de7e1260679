"""The assistant turn as the command shows it: in arrival order, read from the events."""

from __future__ import annotations

from collections.abc import Iterable

from toolstitch.vocab.call_events import CallDiscarded, CallStarted
from toolstitch.vocab.stream_events import (
    CustomToolCall,
    ReasoningBlock,
    ReasoningDelta,
    RefusalDelta,
    ServerToolCall,
    TextDelta,
    TextSignature,
)

from ._input import Step

__all__ = ["Run", "TurnItem", "text_runs", "turn"]


class Run:
    """A run of text, refusal or reasoning deltas with nothing else between them."""

    __slots__ = ("kind", "pieces")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.pieces: list[str] = []


TurnItem = Run | ReasoningBlock | ServerToolCall | CustomToolCall | int  # int: a call


def turn(steps: Iterable[Step]) -> list[TurnItem]:
    """The assistant turn in arrival order, read from the events: each run of text (a new
    one after anything else: a call, a server call, reasoning, a text signature), each
    reasoning block where its text streamed, each call where it started. Unlike
    ``StitchResult.parts`` (what goes back to the provider), server calls are placed too,
    so that the text before and after one is not glued together."""
    items: list[TurnItem] = []
    run: Run | None = None
    placed: set[int] = set()
    for step in steps:
        event = step.event
        kind = _RUNS.get(type(event))
        if kind is not None:
            if run is None or run.kind != kind:
                run = Run(kind)
                items.append(run)
            run.pieces.append(event.text)  # type: ignore[attr-defined]
            continue
        if isinstance(event, ReasoningBlock):
            _place_block(items, event)
        elif isinstance(event, (CallStarted, CallDiscarded)):
            if event.index in placed:
                continue
            placed.add(event.index)
            items.append(event.index)
        elif isinstance(event, (ServerToolCall, CustomToolCall)):
            items.append(event)
        elif not isinstance(event, TextSignature):
            continue  # usage, finish, warnings, deltas: not part of the turn's order
        run = None
    return items


_RUNS: dict[type, str] = {TextDelta: "text", RefusalDelta: "refusal", ReasoningDelta: "reasoning"}


def _place_block(items: list[TurnItem], block: ReasoningBlock) -> None:
    """A reasoning block takes the place of the reasoning deltas it closes (the last run of
    reasoning not yet closed), or the next place when it had none (a redacted block)."""
    for number in range(len(items) - 1, -1, -1):
        item = items[number]
        if isinstance(item, Run) and item.kind == "reasoning":
            items[number] = block
            return
    items.append(block)


def text_runs(steps: Iterable[Step]) -> list[str]:
    """The turn's runs of visible text, each apart (``--json``'s ``text_parts``)."""
    return ["".join(i.pieces) for i in turn(steps) if isinstance(i, Run) and i.kind == "text"]
