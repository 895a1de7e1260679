"""The quirk layer: OpenAI-Chat-style tool-call deltas as real providers send them, in; strict
deltas for the ``Assembler``, out. One documented place (docs/quirks.md has the table).

Theory of operation
-------------------
The OpenAI Chat Completions protocol says: each entry of ``delta.tool_calls`` carries the
call's ``index``; the first entry of a call carries ``id``, ``type`` and the whole
``function.name``; later entries carry only fragments of ``function.arguments``. Many
servers bend that (docs/quirks.md lists what, who and where it was seen). ``ChatQuirks``
sits between the OpenAI-Chat adapter and the core and turns every entry into one strict
``Delta`` for the call it belongs to - choosing the call itself, so the core never sees a
missing or reused index - and every time it has to *interpret* an entry rather than take it
literally it leaves a ``CallWarning`` whose error is a ``ProviderQuirk`` with one of the
stable codes in ``QUIRK_CODES``: nothing is ever rewritten silently. Each code is reported
at most once per call.

To decide, it keeps a mirror of what it fed for each call (id, name, arguments text) and a
small bracket scanner over that text, which knows whether the root object has already closed.
That single fact separates "a second object under the same index" (a new call), "the
complete arguments re-sent at the end" (dropped) and "trailing text" (left to the core).
Everything is linear in the input: the accumulated text is joined only when a fragment is at
least as long as it (the only case in which it can be a cumulative re-send).

Calls keep the provider's index as their core index when it is free; a call that needs a new
one (an index reused for a new call, a second object, an entry without index) gets one more
than the highest index in use.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from toolstitch.core.assembler import GENERATED_ID_PREFIX, Assembler
from toolstitch.core.deltas import Delta
from toolstitch.json.brackets import BracketScanner
from toolstitch.json.diagnose import diagnose
from toolstitch.json.lexicon import WHITESPACE
from toolstitch.vocab.call_events import CallDiscarded, CallReady, CallWarning, Event
from toolstitch.vocab.errors import ProviderQuirk
from toolstitch.vocab.stream_events import StreamWarning

__all__ = ["QUIRK_CODES", "ChatQuirks"]

#: Every ``quirk-…`` code toolstitch emits, with what it means. docs/quirks.md has the table
#: (providers, behaviour, tests); a test keeps the two in step.
QUIRK_CODES: Final[dict[str, str]] = {
    # -- OpenAI Chat Completions and compatible servers (this module) --
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
    # -- OpenAI Responses API (adapters/openai_responses.py) --
    "quirk-no-argument-deltas": "no arguments deltas; the arguments came only with .done / the "
    "finished item",
    "quirk-done-mismatch": "the .done (or finished item) arguments differ from the deltas",
    "quirk-call-only-in-completed": "a function call appeared only in response.completed",
    # -- Anthropic Messages (adapters/anthropic.py) --
    "quirk-input-at-block-start": "a tool block carried its input at content_block_start and "
    "streamed none",
    # -- Gemini (adapters/gemini.py) --
    "quirk-partial-args-unterminated": "streamed partialArgs were not closed by an empty "
    "functionCall",
    "quirk-partial-args-out-of-order": "a partialArgs jsonPath went back into a value already "
    "closed",
}

#: Finish reasons that are consistent with tool calls in the response.
_TOOL_FINISH: Final = frozenset({"tool_calls", "function_call"})
#: Finish reasons that explain a call whose arguments never closed.
_CUT_FINISH: Final = frozenset({"length", "max_tokens", "content_filter"})


_COMPACT_EVERY: Final = 256


class _Track:
    """What the layer fed to one core call."""

    __slots__ = (
        "cumulative",
        "entries",
        "final",
        "hold",
        "id",
        "index",
        "length",
        "loose",
        "name",
        "object_text",
        "parts",
        "scan",
        "typed",
        "warned",
    )

    def __init__(self, index: int) -> None:
        self.index = index
        self.id: str | None = None
        self.name = ""
        self.parts: list[str] = []
        self.length = 0
        self.loose = 0  # fragments at the end of ``parts`` not yet joined into one piece
        self.scan = BracketScanner()
        self.typed = False
        self.final = False
        self.cumulative = False
        self.entries = 0
        self.object_text: str | None = None  # the closed object's text, for re-sends
        self.hold = ""  # text after the close that may still be a re-send of the arguments
        self.warned: set[str] = set()

    def text(self) -> str:
        parts = self.parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
            self.loose = 0
        return parts[0] if parts else ""

    def add(self, fragment: str) -> None:
        self.append(fragment)
        self.scan.feed(fragment)

    def append(self, fragment: str) -> None:
        parts = self.parts
        parts.append(fragment)
        self.length += len(fragment)
        self.loose += 1
        if self.loose >= _COMPACT_EVERY:
            # Join the newest fragments into one piece: memory stays near the text's size
            # (not a str object per fragment) and every character is copied once here.
            parts[-_COMPACT_EVERY:] = ["".join(parts[-_COMPACT_EVERY:])]
            self.loose = 0


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

    __slots__ = ("arguments", "arguments_null", "function_null", "id", "index", "name", "type")

    def __init__(self, entry: object) -> None:
        self.function_null = False
        self.arguments_null = False
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

    ``feed(tool_calls)`` takes the ``delta.tool_calls`` list of one chunk (dicts in the wire
    shape, or objects with the same attributes); ``finish_reason(reason)`` the choice's
    finish reason; ``close()`` ends the stream. Each returns the events caused, core events
    and quirk warnings interleaved in the order they happened.
    """

    def __init__(self, assembler: Assembler) -> None:
        self.assembler = assembler
        self._tracks: dict[int, _Track] = {}
        self._order: list[_Track] = []
        self._by_pindex: dict[int, _Track] = {}
        self._by_id: dict[str, _Track] = {}
        self._latest: _Track | None = None
        self._max_pindex = -1
        self._finishes = 0
        self._first_reason: str | None = None
        self._stream_warned: set[str] = set()

    # -- public ---------------------------------------------------------------------------

    def feed(self, tool_calls: object) -> list[Event]:
        """One chunk's ``delta.tool_calls`` (a list; ``None`` is no entries)."""
        if tool_calls is None:
            return []
        if isinstance(tool_calls, (str, bytes)) or not isinstance(tool_calls, Sequence):
            tool_calls = [tool_calls]
        out: list[Event] = []
        seen: set[int] = set()
        for raw in tool_calls:
            if raw is None:
                continue
            if not (type(raw) is dict and self._continuation(raw, seen, out)):
                self._entry(_Entry(raw), seen, out)
        return out

    def _continuation(self, raw: dict[str, Any], seen: set[int], out: list[Event]) -> bool:
        """The common case, cheaply: one more arguments fragment for a streaming call, in the
        protocol's own shape (``{"index": i, "function": {"arguments": "..."}}``) and with no
        quirk to interpret. Returns False, having done nothing, for anything else."""
        if len(raw) != 2:
            return False
        index = raw.get("index")
        function = raw.get("function")
        if type(index) is not int or type(function) is not dict or len(function) != 1:
            return False
        arguments = function.get("arguments")
        if type(arguments) is not str or not arguments or index in seen:
            return False
        track = self._by_pindex.get(index)
        if (
            track is None
            or track.final
            or track.scan.closed
            or len(arguments) >= track.length  # could be a cumulative re-send: look closer
        ):
            return False
        seen.add(index)
        end = track.scan.scan(arguments)
        rest: str | None = None
        if end > 0 and arguments[end:].strip(WHITESPACE):
            arguments, rest = arguments[:end], arguments[end:]
        track.append(arguments)
        core = raw if rest is None and track.index == index else None
        self._observe(
            self.assembler.feed(core or Delta(index=track.index, arguments=arguments)), out
        )
        track.entries += 1
        self._latest = track
        if rest is not None:
            self._entry(_Entry({"index": index, "function": {"arguments": rest}}), set(), out)
        return True

    def finish_reason(self, reason: str) -> list[Event]:
        """The choice's ``finish_reason``: resolve the calls (the first time) and check it."""
        out: list[Event] = []
        self._finishes += 1
        tracks = self._order
        if self._finishes > 1:
            message = (
                f"finish_reason {reason!r} arrived after {self._first_reason!r}; "
                f"the first one stands"
            )
            if tracks:
                for track in tracks:
                    self._warn(track, "quirk-finish-repeated", message, out)
            else:
                self._stream_warn("quirk-finish-repeated", message, out)
            return out
        self._first_reason = reason
        if tracks and reason not in _TOOL_FINISH and reason not in _CUT_FINISH:
            for track in tracks:
                self._warn(
                    track,
                    "quirk-finish-reason-mismatch",
                    f"the response carries tool calls but finish_reason is {reason!r}",
                    out,
                )
        if reason not in _CUT_FINISH:
            for track in tracks:
                if not track.final and track.scan.started and not track.scan.closed:
                    self._warn(
                        track,
                        "quirk-truncation-mislabelled",
                        f"finish_reason is {reason!r}, but the arguments never closed: "
                        "they were cut off",
                        out,
                    )
        self._flush_holds(out)
        self._observe(self.assembler.finish(), out)
        return out

    def close(self) -> list[Event]:
        """The stream ended: resolve every call still open."""
        out: list[Event] = []
        self._flush_holds(out)
        self._observe(self.assembler.finish(), out)
        return out

    # -- one entry ------------------------------------------------------------------------

    def _entry(self, e: _Entry, seen: set[int], out: list[Event]) -> None:
        notes: list[tuple[str, str]] = []
        if e.function_null:
            notes.append(("quirk-function-null", "function: null was taken as no name/arguments"))
        if e.arguments_null:
            notes.append(("quirk-arguments-null", "arguments: null was taken as no fragment"))

        call_id = e.id
        if call_id == "":
            call_id = None
            notes.append(("quirk-id-empty", 'an empty id ("") was taken as no id'))
        elif call_id == "null":
            call_id = None
            notes.append(("quirk-id-null", 'the id "null" was taken as no id'))
        name = e.name or None
        arguments = e.arguments or None

        # -- the index ----------------------------------------------------------------------
        pindex: int | None = None
        raw_index = e.index
        if raw_index is None:
            notes.append(("quirk-index-missing", "the delta carried no index"))
        elif isinstance(raw_index, bool) or not isinstance(raw_index, int):
            notes.append(("quirk-index-invalid", f"index {raw_index!r} is not an integer; ignored"))
        elif raw_index < 0:
            notes.append(("quirk-index-negative", f"index {raw_index} was treated as missing"))
        else:
            pindex = int(raw_index)
            if pindex in seen:
                notes.append(
                    ("quirk-same-index-twice", f"two entries for index {pindex} in one delta")
                )
            seen.add(pindex)

        # -- which call ---------------------------------------------------------------------
        track: _Track | None
        if pindex is not None:
            track = self._by_pindex.get(pindex)
            if track is None and call_id is not None:
                track = self._by_id.get(call_id)
        elif call_id is not None and call_id in self._by_id:
            track = self._by_id[call_id]
        else:
            track = self._latest
            if (
                track is not None
                and call_id is not None
                and (track.id is not None or track.scan.closed or track.final)
            ):
                track = None  # a new id after a call that has its own: a new call
        new = track is None
        parent: _Track | None = None  # the call whose index a new call reuses
        if track is not None and call_id is not None and track.id not in (None, call_id):
            name_differs = name is not None and track.name and name != track.name
            if track.scan.closed or track.final or name_differs:
                parent, track, new = track, None, True
                notes.append(
                    (
                        "quirk-index-reused",
                        f"index {pindex} was already used by call {parent.index} "
                        f"(id {parent.id!r}); the new id {call_id!r} starts a new call",
                    )
                )
            else:
                notes.append(
                    (
                        "quirk-id-changed",
                        f"the call's id is {track.id!r}; a later delta said {call_id!r} (ignored)",
                    )
                )
                call_id = None

        split_text: str | None = None
        if track is not None and arguments is not None and track.scan.closed:
            arguments, split_text = self._after_close(track, arguments, notes)
        if split_text is not None:
            parent, track, new = track, None, True

        if new:
            track = self._new_call(pindex, parent, call_id, notes)
            if parent is not None and split_text is not None:
                if name is None:
                    name = parent.name or None
                if call_id is None or call_id == parent.id or call_id in self._by_id:
                    # No id of its own: give it the id the core would generate at the end,
                    # now, so that it can be ready as soon as its object closes.
                    call_id = self._generated_id(track.index)
                arguments = split_text
                track.typed = parent.typed
        assert track is not None

        # -- name -----------------------------------------------------------------------
        if name is not None and not new:
            current = track.name
            if not current:
                if track.length:
                    notes.append(
                        ("quirk-name-late", "the name arrived after the arguments had started")
                    )
            elif name == current:
                notes.append(("quirk-name-repeated", f"the name {name!r} was sent again"))
                name = None
            elif name.startswith(current):
                notes.append(
                    (
                        "quirk-name-cumulative",
                        f"the name was re-sent as {name!r}; appended {name[len(current) :]!r}",
                    )
                )
                name = name[len(current) :]
            else:
                notes.append(
                    (
                        "quirk-name-split",
                        f"the name arrived in pieces: {current!r} + {name!r}",
                    )
                )

        # -- id -------------------------------------------------------------------------
        if call_id is not None and not new:
            if track.id is None:
                pass
            elif call_id == track.id:
                notes.append(("quirk-id-repeated", f"the id {call_id!r} was sent again"))
                call_id = None

        # -- arguments ----------------------------------------------------------------------
        if arguments is not None and not new and not track.scan.closed:
            arguments = self._cumulative(track, arguments, notes)

        rest: str | None = None
        if arguments is not None and not track.scan.closed:
            end = track.scan.close_offset(arguments)
            if end > 0 and arguments[end:].strip(WHITESPACE):
                # The object closes inside this fragment and more text follows: handle the
                # rest as a fragment of its own (a re-send, a second object, or trailing).
                arguments, rest = arguments[:end], arguments[end:]

        kind = e.type or None
        if kind is not None:
            track.typed = True
        if new or call_id or name or arguments or kind:
            delta = Delta(index=track.index, id=call_id, type=kind, name=name, arguments=arguments)
            events = self.assembler.feed(delta)
            if call_id and track.id is None:
                track.id = call_id
                self._by_id.setdefault(call_id, track)
            if name:
                track.name += name
            if arguments:
                track.add(arguments)
            self._observe(events, out)
        track.entries += 1
        if pindex is not None:
            self._by_pindex[pindex] = track
        self._latest = track
        for code, message in notes:
            self._warn(track, code, message, out)
        if rest is not None:
            follow = _Entry({"index": e.index, "function": {"arguments": rest}})
            self._entry(follow, set(), out)

    def _new_call(
        self,
        pindex: int | None,
        parent: _Track | None,
        call_id: str | None,
        notes: list[tuple[str, str]],
    ) -> _Track:
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
        self._order.append(track)
        return track

    def _generated_id(self, index: int) -> str:
        candidate = f"{GENERATED_ID_PREFIX}{index}"
        n = 1
        while candidate in self._by_id:
            n += 1
            candidate = f"{GENERATED_ID_PREFIX}{index}-{n}"
        return candidate

    def _after_close(
        self, track: _Track, arguments: str, notes: list[tuple[str, str]]
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
            track.object_text = track.text().strip(WHITESPACE)
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
        self, track: _Track, arguments: str, notes: list[tuple[str, str]]
    ) -> str | None:
        """Detect arguments re-sent from their start (cumulative mode); keep the new tail."""
        if not track.length or len(arguments) < track.length:
            return arguments
        so_far = track.text()
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

    def _flush_holds(self, out: list[Event]) -> None:
        for track in self._order:
            if track.hold:
                track.hold = ""
                self._warn(
                    track,
                    "quirk-arguments-resent",
                    "the start of the arguments was sent again after they closed; ignored",
                    out,
                )

    # -- events ---------------------------------------------------------------------------

    def _observe(self, events: list[Event], out: list[Event]) -> None:
        """Pass the core's events on, noting outcomes and the quirks visible only then."""
        for event in events:
            out.append(event)
            if isinstance(event, CallReady):
                track = self._tracks.get(event.call.index)
                if track is None:
                    continue
                track.final = True
                if not track.text().strip(WHITESPACE):
                    self._warn(
                        track,
                        "quirk-empty-arguments",
                        f"the call had no arguments text; it got {event.call.arguments}",
                        out,
                    )
                if not track.typed:
                    self._warn(
                        track,
                        "quirk-type-missing",
                        'no delta of the call carried "type"; "function" was assumed',
                        out,
                    )
            elif isinstance(event, CallDiscarded):
                track = self._tracks.get(event.index)
                if track is not None:
                    track.final = True

    def _warn(self, track: _Track, code: str, message: str, out: list[Event]) -> None:
        if code in track.warned:
            return
        track.warned.add(code)
        out.append(
            CallWarning(
                index=track.index,
                error=ProviderQuirk(
                    code,
                    message,
                    index=track.index,
                    call_id=track.id,
                    name=track.name or None,
                ),
            )
        )

    def _stream_warn(self, code: str, message: str, out: list[Event]) -> None:
        if code in self._stream_warned:
            return
        self._stream_warned.add(code)
        out.append(StreamWarning(error=ProviderQuirk(code, message)))
