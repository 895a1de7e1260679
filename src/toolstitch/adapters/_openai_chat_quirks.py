"""The OpenAI-Chat quirk layer: ``delta.tool_calls`` entries as real servers send them, in;
strict deltas for the core, out. One documented place (docs/quirks.md has the table).

Theory of operation
-------------------
The OpenAI Chat Completions protocol says: each entry of ``delta.tool_calls`` carries the
call's ``index``; the first entry of a call carries ``id``, ``type`` and the whole
``function.name``; later entries carry only fragments of ``function.arguments``. Many
servers bend that (docs/quirks.md lists what, who and where it was seen). ``ChatQuirks``
turns every entry into one strict ``Delta`` for the call it belongs to - choosing the core
index itself, so the core never sees a missing or reused index - and every time it has to
*interpret* an entry rather than take it literally it leaves a ``CallWarning`` whose error
is a ``ProviderQuirk`` with one of the stable codes in ``CODES``: nothing is ever rewritten
silently. Each code is reported at most once per call.

To decide, it reads the core's record of each call (``CallRecords``: id, name, text, whether
the root object has closed, where a fragment would close it). That single fact - closed or
not - separates "a second object under the same index" (a new call), "the complete
arguments re-sent at the end" (dropped) and "trailing text" (left to the core). Its own
state per call (``_Track``) is only what the core cannot know: the provider's index routing,
whether a ``type`` was seen, cumulative mode, text held back after the close, the codes
already reported. Everything is linear in the input: the text so far is joined only when a
fragment is at least as long as it (the only case in which it can be a cumulative re-send).

``feed``, ``finish_reason`` and ``close`` are generators of items (see adapters/_base.py):
the consumer applies each delta to the core before it resumes the generator, so the record
read after a yield already includes that delta (several entries in one chunk, a fragment
split at the close). A call the core refused (past ``max_calls``) is forgotten at once: the
layer keeps nothing per refused index.

Calls keep the provider's index as their core index when it is free; a call that needs a new
one (an index reused for a new call, a second object, an entry without index) gets one more
than the highest index in use.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import CallNote, EndCall, Item
from toolstitch.core.record import CallRecord, CallRecords
from toolstitch.json.diagnose import diagnose
from toolstitch.json.lexicon import WHITESPACE
from toolstitch.json.tokenizer import ArgumentsTokenizer
from toolstitch.vocab.call_events import CallState, CallWarning
from toolstitch.vocab.endings import Ending, ending_of
from toolstitch.vocab.errors import ProviderQuirk
from toolstitch.vocab.stream_events import StreamWarning

__all__ = ["CODES", "ChatQuirks"]

#: The ``quirk-…`` codes of OpenAI Chat Completions and compatible servers, with what each
#: means (``toolstitch.QUIRK_CODES`` combines every provider's).
CODES: Final[dict[str, str]] = {
    "quirk-name-repeated": "the whole function name was sent again; the repeat was ignored",
    "quirk-name-cumulative": "the name was re-sent grown; only the new tail was appended",
    "quirk-name-split": "the function name arrived in pieces; they were concatenated",
    "quirk-name-late": "the function name arrived after the arguments had started",
    "quirk-id-repeated": "the call id was sent again on a later delta; ignored",
    "quirk-id-empty": 'an empty id ("") was taken as no id',
    "quirk-id-null": 'the literal string id "null" was taken as no id',
    "quirk-id-changed": "a later delta of the call carried another id; the first id stands",
    "quirk-index-missing": "a delta without index was routed by its id, or to the latest call",
    "quirk-index-negative": "a negative index was treated as a missing index",
    "quirk-index-invalid": "an index that is not an integer was treated as a missing index",
    "quirk-index-gap": "the call's index does not follow the previous one (starts at 1, sparse)",
    "quirk-index-reused": "an index already used by another call came with a new id: new call",
    "quirk-index-moved": "the provider's index was taken by a call the layer created; the call "
    "got the next free index",
    "quirk-same-index-twice": "two entries for one index in a single delta",
    "quirk-arguments-cumulative": "each fragment re-sent the arguments so far; new tails kept",
    "quirk-arguments-resent": "the complete arguments were sent again after they closed; ignored",
    "quirk-second-object": "a second JSON object under one index became a separate call",
    "quirk-arguments-null": "arguments: null was taken as no arguments fragment",
    "quirk-function-null": "function: null was taken as no name and no arguments",
    "quirk-empty-arguments": "the call had no arguments text; it got the empty object",
    "quirk-type-missing": 'no delta of the call carried "type"; "function" was assumed',
    "quirk-finish-reason-mismatch": "the response had tool calls but another finish reason",
    "quirk-finish-repeated": "a second finish_reason arrived; the first one stands",
    "quirk-truncation-mislabelled": "the arguments never closed, yet the finish reason is not "
    "'length'",
    "quirk-signature-late": "a call's extra_content.google.thought_signature arrived after the "
    "call was complete; it is not on its ToolCall",
}

#: Finish reasons that are consistent with tool calls in the response.
_TOOL_FINISH: Final = frozenset({"tool_calls", "function_call"})

_COMPLETE = CallState.COMPLETE
_DISCARDED = CallState.DISCARDED

Notes = list[tuple[str, str]]


class _Track:
    """What the layer itself knows of one core call (the rest is the core's record)."""

    __slots__ = ("cumulative", "hold", "index", "object_text", "typed", "warned")

    def __init__(self, index: int) -> None:
        self.index = index  # the core index
        self.typed = False  # a delta of the call carried "type"
        self.cumulative = False  # the provider re-sends the arguments so far
        self.object_text: str | None = None  # the closed object's text, for re-sends
        self.hold = ""  # text after the close that may still be a re-send of the arguments
        self.warned: set[str] | None = None  # codes reported for this call


def _text(value: object, *, arguments: bool = False) -> str | None:
    """A field as text. Not text: a number id, or an arguments *object* (some proxies send
    parsed JSON) - kept as JSON text so that nothing is lost and the core decides."""
    if value is None or isinstance(value, str):
        return value
    if arguments and isinstance(value, (Mapping, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


class _Entry:
    """One ``delta.tool_calls[]`` entry, read leniently."""

    __slots__ = (
        "arguments",
        "arguments_null",
        "function_null",
        "id",
        "index",
        "name",
        "signature",
        "type",
    )

    def __init__(self, entry: object) -> None:
        self.function_null = False
        self.arguments_null = False
        self.signature = _thought_signature(entry)
        raw: dict[str, object]
        if isinstance(entry, Mapping):
            data: Mapping[str, Any] = entry
            function = data.get("function")
            if "function" in data and function is None:
                self.function_null = True
            if isinstance(function, Mapping):
                fn: Mapping[str, Any] = function
            elif function is None:
                fn = data  # the flat shape: name / arguments at the top
            else:
                fn = {
                    k: getattr(function, k) for k in ("name", "arguments") if hasattr(function, k)
                }
            if "arguments" in fn and fn.get("arguments") is None:
                self.arguments_null = True
            raw = {k: data.get(k) for k in ("index", "id", "type")}
            raw.update({k: fn.get(k) for k in ("name", "arguments")})
        else:
            function = getattr(entry, "function", None)
            holder = entry if function is None else function
            raw = {k: getattr(entry, k, None) for k in ("index", "id", "type")}
            raw.update({k: getattr(holder, k, None) for k in ("name", "arguments")})
        self.index: object = raw["index"]
        self.id = _text(raw["id"])
        self.type = _text(raw["type"])
        self.name = _text(raw["name"])
        self.arguments = _text(raw["arguments"], arguments=True)


class ChatQuirks:
    """Normalises OpenAI-Chat-style tool-call entries into strict deltas, with warnings.

    ``records`` is the core's read-only view. ``feed(tool_calls)`` takes the
    ``delta.tool_calls`` list of one chunk (dicts in the wire shape, or objects with the same
    attributes); ``finish_reason(reason)`` the choice's finish reason; ``close()`` ends the
    stream. Each yields items - deltas and ``EndCall``s for the core, quirk warnings - in the
    order they happen; apply each delta before resuming.
    """

    def __init__(self, records: CallRecords) -> None:
        self._records = records
        self._tracks: dict[int, _Track] = {}  # by core index, in creation order
        self._by_pindex: dict[int, _Track] = {}
        self._by_id: dict[str, _Track] = {}
        self._latest: _Track | None = None
        self._max_pindex = -1
        self._finishes = 0
        self._first_reason: str | None = None
        self._stream_warned: set[str] = set()

    # -- public ---------------------------------------------------------------------------

    def feed(self, tool_calls: object) -> Iterator[Item]:
        """One chunk's ``delta.tool_calls`` (a list; ``None`` is no entries)."""
        if tool_calls is None:
            return
        if isinstance(tool_calls, (str, bytes)) or not isinstance(tool_calls, Sequence):
            tool_calls = [tool_calls]
        seen: set[int] = set()
        for raw in tool_calls:
            if raw is None:
                continue
            if type(raw) is dict:
                hit = self._continuation(raw, seen)
                if hit is not None:
                    yield from self._continued(raw, hit)
                    continue
            yield from self._entry(_Entry(raw), seen)

    def continuation(self, raw: dict[str, Any]) -> Iterable[Item] | None:
        """``feed([raw])`` for a chunk whose only entry is ``raw``, when ``raw`` is one more
        arguments fragment for a streaming call with no quirk to interpret (the protocol's
        hot path); ``None``, having done nothing, for anything else (then ``feed`` it)."""
        hit = self._continuation(raw, set())
        return None if hit is None else self._continued(raw, hit)

    def _continued(
        self, raw: dict[str, Any], hit: tuple[_Track, str, str | None]
    ) -> Iterable[Item]:
        """The items of an entry ``_continuation`` accepted: the entry itself (to the core as
        it came) when nothing follows the close in it, else ``_continue``'s."""
        track, arguments, rest = hit
        if rest is not None or track.index != raw["index"]:
            return self._continue(raw, *hit)
        self._latest = track
        if "}" in arguments:
            # The object may have closed: the quirks visible once it is ready, after it.
            return self._then_readied(raw, track)
        return [raw]

    def _then_readied(self, raw: dict[str, Any], track: _Track) -> Iterator[Item]:
        yield raw
        yield from self._readied(track)

    def _continuation(
        self, raw: dict[str, Any], seen: set[int]
    ) -> tuple[_Track, str, str | None] | None:
        """The common case, cheaply: one more arguments fragment for a streaming call, in the
        protocol's own shape (``{"index": i, "function": {"arguments": "..."}}``) and with no
        quirk to interpret: ``(track, fragment, rest after the close)``. ``None``, having done
        nothing, for anything else."""
        if len(raw) != 2:
            return None
        index = raw.get("index")
        function = raw.get("function")
        if type(index) is not int or type(function) is not dict or len(function) != 1:
            return None
        arguments = function.get("arguments")
        if type(arguments) is not str or not arguments or index in seen:
            return None
        track = self._by_pindex.get(index)
        if track is None:
            return None
        record = self._records.record(track.index)
        if (
            record is None
            or record.closed
            or record.state is _COMPLETE
            or record.state is _DISCARDED
            or len(arguments) >= record.length  # could be a cumulative re-send: look closer
        ):
            return None
        seen.add(index)
        rest: str | None = None
        if "}" in arguments:  # only a brace can close the object
            end = record.close_offset(arguments)
            if end > 0 and arguments[end:].strip(WHITESPACE):
                arguments, rest = arguments[:end], arguments[end:]
        return track, arguments, rest

    def _continue(
        self, raw: dict[str, Any], track: _Track, arguments: str, rest: str | None
    ) -> Iterator[Item]:
        pindex = raw["index"]
        yield (
            raw
            if rest is None and track.index == pindex
            else Delta(index=track.index, arguments=arguments)
        )
        self._latest = track
        if "}" in arguments:
            yield from self._readied(track)
        if rest is not None:
            yield from self._entry(
                _Entry({"index": pindex, "function": {"arguments": rest}}), set()
            )

    def finish_reason(self, reason: str) -> Iterator[Item]:
        """The choice's ``finish_reason``: resolve the calls (the first time) and check it."""
        self._finishes += 1
        tracks = list(self._tracks.values())
        if self._finishes > 1:
            message = (
                f"finish_reason {reason!r} arrived after {self._first_reason!r}; "
                f"the first one stands"
            )
            if tracks:
                for track in tracks:
                    yield from self._warn(track, "quirk-finish-repeated", message)
            else:
                yield from self._stream_warn("quirk-finish-repeated", message)
            return
        self._first_reason = reason
        ending = ending_of(reason)  # a cut explains a call whose arguments never closed
        if tracks and reason not in _TOOL_FINISH and not ending.cut:
            for track in tracks:
                yield from self._warn(
                    track,
                    "quirk-finish-reason-mismatch",
                    f"the response carries tool calls but finish_reason is {reason!r}",
                )
        if not ending.cut:
            for track in tracks:
                record = self._records.record(track.index)
                if (
                    record is not None
                    and not record.state.is_final
                    and record.started
                    and not record.closed
                ):
                    yield from self._warn(
                        track,
                        "quirk-truncation-mislabelled",
                        f"finish_reason is {reason!r}, but the arguments never closed: "
                        "they were cut off",
                    )
        yield from self._end_all(ending)

    def close(self) -> Iterator[Item]:
        """The stream ended: resolve every call still open (no finish reason ended them, so
        as the stream's end says: ``EndCall`` with ``ending=None``)."""
        yield from self._end_all(None)

    def _end_all(self, ending: Ending | None) -> Iterator[Item]:
        """Report held re-sends, then end every call in index order (as ``finish`` would,
        with ``ending``: how the response ended), each followed by the quirks visible only
        once it is ready."""
        for track in list(self._tracks.values()):
            if track.hold:
                track.hold = ""
                yield from self._warn(
                    track,
                    "quirk-arguments-resent",
                    "the start of the arguments was sent again after they closed; ignored",
                )
        for index in sorted(self._tracks):
            track = self._tracks[index]
            yield EndCall(index, ending)
            yield from self._readied(track)

    # -- one entry ------------------------------------------------------------------------

    def _entry(self, e: _Entry, seen: set[int]) -> Iterator[Item]:
        notes: Notes = []
        call_id = _read_id(e, notes)
        pindex = _read_index(e, seen, notes)
        name = e.name or None
        arguments = e.arguments or None
        track, parent, call_id = self._route(pindex, call_id, name, notes)
        split_text: str | None = None
        if track is not None and arguments is not None:
            arguments, split_text = self._closed_text(track, arguments, notes)
            if split_text is not None:
                parent, track = track, None
        new = track is None
        if track is None:
            track = self._new_call(pindex, parent, notes)
            if parent is not None and split_text is not None:
                name, call_id = self._second_object(track, parent, name, call_id)
                arguments = split_text
        record = self._records.record(track.index)
        if not new and record is not None:
            name, call_id, arguments = self._interpret(
                track, record, name, call_id, arguments, notes
            )
        rest: str | None = None
        if arguments is not None and (record is None or not record.closed):
            arguments, rest = self._split(record, arguments)
        if e.signature is not None:
            yield from self._signature(track, record, e.signature)
        yield from self._apply(e, track, new, call_id, name, arguments, record)
        kept = track.index in self._tracks
        if pindex is not None and kept:
            self._by_pindex[pindex] = track
        self._latest = track
        if kept:
            for code, message in notes:
                yield from self._warn(track, code, message)
        if rest is not None:
            follow = _Entry({"index": e.index, "function": {"arguments": rest}})
            yield from self._entry(follow, set())

    def _signature(
        self, track: _Track, record: CallRecord | None, signature: str
    ) -> Iterator[Item]:
        """The call's signature, to the core before the fragment that can complete it."""
        if record is None or not record.state.is_final:
            yield CallNote(index=track.index, signature=signature)
        else:
            yield from self._warn(
                track,
                "quirk-signature-late",
                f"the call's thought_signature arrived after the call was {record.state}; "
                "it is not on the ToolCall",
            )

    def _closed_text(
        self, track: _Track, arguments: str, notes: Notes
    ) -> tuple[str | None, str | None]:
        """``(fragment to feed, split text)`` for text that may follow a closed object."""
        record = self._records.record(track.index)
        if record is None or not record.closed or record.state is _DISCARDED:
            return arguments, None
        return self._after_close(track, record, arguments, notes)

    def _second_object(
        self, track: _Track, parent: _Track, name: str | None, call_id: str | None
    ) -> tuple[str | None, str | None]:
        """The name and id of a call split off ``parent`` (a second object under its index)."""
        if name is None:
            name = self._name_of(parent) or None
        if call_id is None or call_id == self._id_of(parent) or call_id in self._by_id:
            # No id of its own: give it the id the core would generate at the end, now, so
            # that it can be ready as soon as its object closes.
            call_id = self._records.generated_id(track.index)
        track.typed = parent.typed
        return name, call_id

    def _interpret(
        self,
        track: _Track,
        record: CallRecord,
        name: str | None,
        call_id: str | None,
        arguments: str | None,
        notes: Notes,
    ) -> tuple[str | None, str | None, str | None]:
        """An entry for a call the core knows: repeated names and ids, cumulative text."""
        name = _name(record, name, notes)
        call_id = _repeated_id(record, call_id, notes)
        if arguments is not None and not record.closed and record.state is not _DISCARDED:
            arguments = self._cumulative(track, record, arguments, notes)
        return name, call_id, arguments

    def _apply(
        self,
        e: _Entry,
        track: _Track,
        new: bool,
        call_id: str | None,
        name: str | None,
        arguments: str | None,
        record: CallRecord | None,
    ) -> Iterator[Item]:
        """Hand the entry, as interpreted, to the core; note what the layer learns from it."""
        kind = e.type or None
        if kind is not None:
            track.typed = True
        if not (new or call_id or name or arguments or kind):
            return
        had_id = record is not None and record.id is not None
        yield Delta(index=track.index, id=call_id, type=kind, name=name, arguments=arguments)
        if self._records.record(track.index) is None:
            # The core refused the call (past max_calls): keep nothing for it.
            self._tracks.pop(track.index, None)
            return
        if call_id and not had_id:
            self._by_id.setdefault(call_id, track)
        yield from self._readied(track)

    def _route(
        self, pindex: int | None, call_id: str | None, name: str | None, notes: Notes
    ) -> tuple[_Track | None, _Track | None, str | None]:
        """Which call the entry continues: ``(track or None for a new call, the call whose
        index a new call reuses, the id still to feed)``."""
        track: _Track | None
        if pindex is not None:
            track = self._by_pindex.get(pindex)
            if track is None and call_id is not None:
                track = self._by_id.get(call_id)
        elif call_id is not None and call_id in self._by_id:
            track = self._by_id[call_id]
        else:
            track = self._latest
            if track is not None and call_id is not None and self._owned(track):
                track = None  # a new id after a call that has its own: a new call
        if track is None or call_id is None:
            return track, None, call_id
        track_id = self._id_of(track)
        if track_id in (None, call_id):
            return track, None, call_id
        record = self._records.record(track.index)
        track_name = "" if record is None else record.name
        name_differs = name is not None and track_name and name != track_name
        if record is None or record.closed or record.state.is_final or name_differs:
            notes.append(
                (
                    "quirk-index-reused",
                    f"index {pindex} was already used by call {track.index} "
                    f"(id {track_id!r}); the new id {call_id!r} starts a new call",
                )
            )
            return None, track, call_id
        notes.append(
            (
                "quirk-id-changed",
                f"the call's id is {track_id!r}; a later delta said {call_id!r} (ignored)",
            )
        )
        return track, None, None

    def _owned(self, track: _Track) -> bool:
        """The call has an id of its own, or is over: a new id cannot continue it."""
        record = self._records.record(track.index)
        return record is None or record.id is not None or record.closed or record.state.is_final

    def _id_of(self, track: _Track) -> str | None:
        record = self._records.record(track.index)
        return None if record is None else record.id

    def _name_of(self, track: _Track) -> str:
        record = self._records.record(track.index)
        return "" if record is None else record.name

    def _new_call(self, pindex: int | None, parent: _Track | None, notes: Notes) -> _Track:
        used = self._tracks
        if pindex is not None and pindex not in used and parent is None:
            index = pindex
            if pindex != self._max_pindex + 1:
                first = self._max_pindex < 0
                notes.append(
                    (
                        "quirk-index-gap",
                        f"the first call has index {pindex}"
                        if first
                        else f"index {pindex} follows index {self._max_pindex}",
                    )
                )
        else:
            index = max(used, default=-1) + 1
            if pindex is not None and parent is None:
                notes.append(
                    (
                        "quirk-index-moved",
                        f"index {pindex} is taken by a call the layer created; "
                        f"this call got index {index}",
                    )
                )
        if pindex is not None:
            self._max_pindex = max(self._max_pindex, pindex)
        track = _Track(index)
        used[index] = track
        return track

    @staticmethod
    def _split(record: CallRecord | None, arguments: str) -> tuple[str | None, str | None]:
        """If the object closes inside ``arguments`` and more text follows, the rest is
        handled as a fragment of its own (a re-send, a second object, or trailing)."""
        if "}" not in arguments:  # only a brace can close the object
            return arguments, None
        # A call the core has not seen yet: ask a tokenizer that has seen nothing.
        end = _fresh_close_offset(arguments) if record is None else record.close_offset(arguments)
        if end > 0 and arguments[end:].strip(WHITESPACE):
            return arguments[:end], arguments[end:]
        return arguments, None

    def _after_close(
        self, track: _Track, record: CallRecord, arguments: str, notes: Notes
    ) -> tuple[str | None, str | None]:
        """Text for a call whose object already closed: ``(fragment to feed, split text)``.

        Whitespace goes to the core. Text that repeats the complete arguments from their
        start is held until it is known to be a full re-send (dropped) or not; a text that
        diverges from them and starts a new object becomes a new call; anything else goes to
        the core, which reports it as trailing text.
        """
        candidate = track.hold + arguments
        stripped = candidate.lstrip(WHITESPACE)
        if not stripped:
            return arguments, None
        if track.object_text is None:
            track.object_text = record.text().strip(WHITESPACE)
        full = track.object_text
        if stripped.rstrip(WHITESPACE) == full:
            track.hold = ""
            if not track.cumulative:
                notes.append(
                    ("quirk-arguments-resent", "the complete arguments were sent again; ignored")
                )
            return None, None
        if full.startswith(stripped):
            track.hold = candidate
            return None, None
        track.hold = ""
        if stripped.startswith("{"):
            notes.append(
                (
                    "quirk-second-object",
                    f"a second JSON object arrived under the index of call {track.index} "
                    "after its arguments closed; it became a new call",
                )
            )
            return None, candidate
        return candidate, None

    def _cumulative(
        self, track: _Track, record: CallRecord, arguments: str, notes: Notes
    ) -> str | None:
        """Detect arguments re-sent from their start (cumulative mode); keep the new tail."""
        if not record.length or len(arguments) < record.length:
            return arguments
        so_far = record.text()
        if not so_far.strip(WHITESPACE) or not arguments.startswith(so_far):
            return arguments
        if not track.cumulative:
            # Both readings start alike; the cumulative one must be valid JSON so far.
            if diagnose(arguments).offset is not None:
                return arguments
            track.cumulative = True
            notes.append(
                (
                    "quirk-arguments-cumulative",
                    "each fragment re-sent the arguments so far; only new text was kept",
                )
            )
        return arguments[len(so_far) :] or None

    # -- warnings -------------------------------------------------------------------------

    def _readied(self, track: _Track) -> Iterator[Item]:
        """The quirks visible only once the call is ready (each reported once)."""
        record = self._records.record(track.index)
        if record is None or record.state is not _COMPLETE:
            return
        if not record.text().strip(WHITESPACE):
            result = record.result
            got = "" if result is None else result.arguments
            yield from self._warn(
                track,
                "quirk-empty-arguments",
                f"the call had no arguments text; it got {got}",
            )
        if not track.typed:
            yield from self._warn(
                track,
                "quirk-type-missing",
                'no delta of the call carried "type"; "function" was assumed',
            )

    def _warn(self, track: _Track, code: str, message: str) -> Iterator[Item]:
        warned = track.warned
        if warned is None:
            warned = track.warned = set()
        elif code in warned:
            return
        warned.add(code)
        record = self._records.record(track.index)
        yield CallWarning(
            index=track.index,
            error=ProviderQuirk(
                code,
                message,
                index=track.index,
                call_id=None if record is None else record.id,
                name=(record.name or None) if record is not None else None,
            ),
        )

    def _stream_warn(self, code: str, message: str) -> Iterator[Item]:
        if code in self._stream_warned:
            return
        self._stream_warned.add(code)
        yield StreamWarning(error=ProviderQuirk(code, message))


def _thought_signature(entry: object) -> str | None:
    """``extra_content.google.thought_signature`` of an entry (Gemini's OpenAI-compatible
    endpoint), exactly as sent; ``None`` when absent."""
    extra = (
        entry.get("extra_content")
        if isinstance(entry, Mapping)
        else getattr(entry, "extra_content", None)
    )
    if extra is None:
        return None
    google = extra.get("google") if isinstance(extra, Mapping) else None
    value = google.get("thought_signature") if isinstance(google, Mapping) else None
    return value if isinstance(value, str) else None


def _fresh_close_offset(fragment: str) -> int:
    """``CallRecord.close_offset`` for a text that starts a call (nothing seen yet)."""
    tokenizer = ArgumentsTokenizer(max_depth=1 << 30, max_number_digits=1 << 30)
    try:
        return tokenizer.close_offset(fragment)
    finally:
        tokenizer.close()


def _read_id(e: _Entry, notes: Notes) -> str | None:
    """The entry's id (``""`` and ``"null"`` are no id), noting the null fields."""
    if e.function_null:
        notes.append(("quirk-function-null", "function: null was taken as no name/arguments"))
    if e.arguments_null:
        notes.append(("quirk-arguments-null", "arguments: null was taken as no fragment"))
    call_id = e.id
    if call_id == "":
        notes.append(("quirk-id-empty", 'an empty id ("") was taken as no id'))
        return None
    if call_id == "null":
        notes.append(("quirk-id-null", 'the id "null" was taken as no id'))
        return None
    return call_id


def _read_index(e: _Entry, seen: set[int], notes: Notes) -> int | None:
    """The provider's index, if it is a usable one."""
    raw_index = e.index
    if raw_index is None:
        notes.append(("quirk-index-missing", "the delta carried no index"))
        return None
    if isinstance(raw_index, bool) or not isinstance(raw_index, int):
        notes.append(("quirk-index-invalid", f"index {raw_index!r} is not an integer; ignored"))
        return None
    if raw_index < 0:
        notes.append(("quirk-index-negative", f"index {raw_index} was treated as missing"))
        return None
    pindex = int(raw_index)
    if pindex in seen:
        notes.append(("quirk-same-index-twice", f"two entries for index {pindex} in one delta"))
    seen.add(pindex)
    return pindex


def _name(record: CallRecord, name: str | None, notes: Notes) -> str | None:
    """The name text to feed for an existing call: repeats and cumulative re-sends cut."""
    if name is None:
        return None
    current = record.name
    if not current:
        if record.length:
            notes.append(("quirk-name-late", "the name arrived after the arguments had started"))
        return name
    if name == current:
        notes.append(("quirk-name-repeated", f"the name {name!r} was sent again"))
        return None
    if name.startswith(current):
        notes.append(
            (
                "quirk-name-cumulative",
                f"the name was re-sent as {name!r}; appended {name[len(current) :]!r}",
            )
        )
        return name[len(current) :]
    notes.append(("quirk-name-split", f"the name arrived in pieces: {current!r} + {name!r}"))
    return name


def _repeated_id(record: CallRecord, call_id: str | None, notes: Notes) -> str | None:
    """``None`` for an id the call already has."""
    if call_id is not None and record.id is not None and call_id == record.id:
        notes.append(("quirk-id-repeated", f"the id {call_id!r} was sent again"))
        return None
    return call_id
