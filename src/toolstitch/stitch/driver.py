"""The driver: an adapter's items applied to the core, the events out, in order.

An adapter returns items (see adapters/_base.py): deltas and instructions for the core,
and events to pass on. ``Driver.drive`` consumes them one by one, applying each delta and
instruction to the ``Assembler`` before it takes the next item (so an adapter that reads
the core's record between items sees it current), and collects the resulting events. Calls
the provider runs itself (``ServerDelta``/``ServerEnd``) go to a second assembler the driver
owns, created on first need with the same limits; each outcome becomes a ``ServerToolCall``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from toolstitch.core.assembler import Assembler
from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import (
    Arguments,
    CallNote,
    Discard,
    EndCall,
    Finish,
    Item,
    ServerDelta,
    ServerEnd,
)
from toolstitch.vocab.call_events import CallDiscarded, CallReady, Event
from toolstitch.vocab.endings import Ending, settle
from toolstitch.vocab.errors import StreamDecodeError
from toolstitch.vocab.stream_events import ServerToolCall, StreamFailed

__all__ = ["Driver"]


class Driver:
    """Applies items to ``assembler`` (and to a server-side assembler of its own)."""

    __slots__ = ("_server_assembler", "_server_outcomes", "assembler", "cut", "reason")

    def __init__(self, assembler: Assembler) -> None:
        self.assembler = assembler
        #: The first cut seen in the stream (an error event, bytes not the format, a
        #: cancelled stream), or ``None``: the response's end can no longer be a normal one
        #: (``vocab.endings.settle``), so a call whose arguments never arrived is discarded.
        self.cut: Ending | None = None
        #: The stream's finish reason, as the ``Stitcher`` read it by the stream's end: what
        #: an ``EndCall`` or ``Finish`` that does not say how the response ended goes by.
        self.reason: str | None = None
        self._server_assembler: Assembler | None = None
        # Outcomes of server calls not ended yet; made with the server assembler.
        self._server_outcomes: dict[int, list[CallReady | CallDiscarded]] | None = None

    def events(self, items: Iterable[Item]) -> list[Event]:
        """``drive`` into a new list. One ``Arguments`` alone (an argument fragment, the
        commonest payload of block-keyed streams) or one delta goes straight to the
        assembler; one event alone (a text chunk, the commonest of every stream) is passed
        on as it is."""
        if type(items) is list and len(items) == 1:
            item = items[0]
            if type(item) is Arguments:
                return self.assembler.feed_arguments(*item)
            if type(item) is dict or type(item) is Delta:  # one delta (a call's start)
                return self.assembler.feed(item)
            if isinstance(item, Event) and type(item) is not StreamFailed:
                return [item]
        out: list[Event] = []
        self.drive(items, out)
        return out

    def drive(self, items: Iterable[Item], out: list[Event]) -> None:
        """Apply the adapter's deltas and instructions to the assembler as they come (the
        adapter may read the core's record before it hands over the next item); pass the
        events on. Everything lands in ``out``, in order."""
        assembler = self.assembler
        for item in items:
            if type(item) is dict:  # a delta in the wire shape (the OpenAI-Chat hot path)
                out += assembler.feed(item)
            elif type(item) is Arguments:  # the hot path of the other providers
                out += assembler.feed_arguments(*item)
            elif isinstance(item, Event):
                if type(item) is StreamFailed and self.cut is None:
                    self.cut = _failure(item)
                out.append(item)
            elif isinstance(item, Delta):
                out += assembler.feed(item)
            elif isinstance(item, EndCall):
                out += assembler.end(item.index, self.ending(item.ending))
            elif isinstance(item, Finish):
                out += assembler.finish(self.ending(item.ending))
            elif isinstance(item, Discard):
                out += assembler.reject(item.index, item.error)
            elif isinstance(item, CallNote):
                assembler.note(item.index, signature=item.signature, caller=item.caller)
            elif isinstance(item, Mapping):  # last: an ABC's check costs the most
                out += assembler.feed(item)
            else:
                self._server_item(item, out)

    def ending(self, said: Ending | None) -> Ending | str | None:
        """How a call or the response ended, as the assembler is told it: what the adapter
        ``said`` (``None``: as the stream's finish reason says, the reason itself, read by
        ``Assembler.end``/``finish`` only when a call is still open), unless the stream was
        cut before (``vocab.endings.settle``)."""
        said_ = self.reason if said is None else said
        return said_ if self.cut is None else settle(said_, self.cut)

    def _server_item(self, item: object, out: list[Event]) -> None:
        """A server call's delta or end; its outcome becomes a ``ServerToolCall``."""
        server = self._server_assembler
        outcomes = self._server_outcomes
        if server is None or outcomes is None:
            server = self._server_assembler = type(self.assembler)(limits=self.assembler.limits)
            outcomes = self._server_outcomes = {}
        if isinstance(item, ServerDelta):
            for event in server.feed(item.delta):
                if isinstance(event, (CallReady, CallDiscarded)):
                    outcomes.setdefault(event.index, []).append(event)
            return
        if not isinstance(item, ServerEnd):
            raise TypeError(f"an adapter returned {type(item).__name__}, not an item")
        ended = outcomes.pop(item.index, [])
        ending = self.ending(item.ending)
        ended += [
            e for e in server.end(item.index, ending) if isinstance(e, (CallReady, CallDiscarded))
        ]
        out.extend(_server_call(event, item) for event in ended)


def _failure(event: StreamFailed) -> Ending:
    """The cut a stream failure makes: bytes not the format, or an error the provider sent."""
    return Ending.DECODE_ERROR if isinstance(event.error, StreamDecodeError) else Ending.ERROR


def _server_call(event: CallReady | CallDiscarded, end: ServerEnd) -> ServerToolCall:
    """The outcome of a call the provider ran itself, as a ``ServerToolCall``."""
    if isinstance(event, CallReady):
        call = event.call
        return ServerToolCall(
            index=call.index,
            id=end.id,
            name=call.name,
            type=end.kind,
            arguments=call.arguments,
            parsed_arguments=call.parsed_arguments,
        )
    return ServerToolCall(
        index=event.index,
        id=end.id,
        name=event.name,
        type=end.kind,
        arguments=event.arguments,
        error=event.error,
    )
