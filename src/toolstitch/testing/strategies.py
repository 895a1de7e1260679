"""Hypothesis strategies that generate provider streams, each with the outcome toolstitch reports.

``streams(provider, calls=..., quirks=..., faults=...)`` draws a ``GeneratedStream``: the wire
bytes of one streamed response of that provider (cut into ``chunks`` in any way), the calls
in it, the provider events as dicts (what an SDK hands over; Bedrock's are boto3's), and
``expected``, the ``Outcome`` that ``toolstitch.stitch`` reports on those bytes: which calls
become ready with which arguments, which are discarded with which error code, which warning
codes appear. The outcome is stated by the generator from what it wrote, never computed by
toolstitch, so a user can property-test an agent offline::

    from hypothesis import given
    from toolstitch.testing.strategies import Call, streams

    @given(streams("openai-chat", calls=[Call("lookup", {"q": "paris"})], faults=True))
    def test_my_agent(stream):
        outcome = my_agent(stream.chunks)
        assert outcome == [(c.name, c.arguments) for c in stream.expected.ready]

``stream.reply()`` is a ``Reply`` that ``ScriptedServer`` plays to the real SDK clients.
docs/testing.md lists, per provider, the quirks and faults it can generate.

The parts are public too: ``json_objects`` (arguments), ``splits`` (a text cut into
fragments, biased towards awkward places), ``interleavings`` (several ordered lists merged),
``chunkings`` (bytes cut anywhere).

This module needs hypothesis: ``pip install 'toolstitch[testing]'``.
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "toolstitch.testing.strategies needs hypothesis; install the extra: "
        "pip install 'toolstitch[testing]'"
    ) from exc

from toolstitch.adapters.quirk_codes import QUIRK_CODES
from toolstitch.core.ids import GENERATED_ID_PREFIX
from toolstitch.stitch.stitcher import StitchResult
from toolstitch.vocab.call_events import CallWarning
from toolstitch.vocab.stream_events import StreamWarning

from ._eventstream import bedrock_frames
from ._server import Reply
from ._sse import DONE, frame

__all__ = [
    "FAULTS",
    "PROVIDERS",
    "QUIRKS",
    "Call",
    "ExpectedCall",
    "ExpectedDiscard",
    "GeneratedStream",
    "Outcome",
    "PlannedCall",
    "awkward_positions",
    "calls",
    "chunkings",
    "cut_bytes",
    "interleavings",
    "json_objects",
    "splits",
    "streams",
]

#: The providers ``streams`` writes, by their ``toolstitch.adapters.PROVIDERS`` ids.
PROVIDERS: Final = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "gemini-interactions",
    "bedrock-converse",
    "anthropic-bedrock",
    "cohere-chat",
    "ollama-chat",
)

#: Per provider, the quirk codes (docs/quirks.md) ``streams(quirks=...)`` can put on the
#: wire, each in the form the catalogue describes.
QUIRKS: Final[Mapping[str, tuple[str, ...]]] = {
    "openai-chat": (
        "quirk-name-repeated",
        "quirk-id-repeated",
        "quirk-type-missing",
        "quirk-index-gap",
        "quirk-finish-reason-mismatch",
        "quirk-finish-repeated",
        "quirk-unknown-event",
    ),
    "openai-responses": ("quirk-no-argument-deltas", "quirk-unknown-event"),
    "anthropic": ("quirk-input-at-block-start", "quirk-unknown-event"),
    "gemini": ("quirk-unknown-event",),
    "gemini-interactions": ("quirk-unknown-event",),
    "bedrock-converse": ("quirk-unknown-event",),
    "anthropic-bedrock": ("quirk-input-at-block-start", "quirk-unknown-event"),
    "cohere-chat": ("quirk-unknown-event",),
    "ollama-chat": ("quirk-arguments-as-text", "quirk-index-taken"),
}

#: Per provider, the faulty calls ``streams(faults=...)`` can write: ``malformed`` (arguments
#: that are not JSON), ``truncated`` (the response stops inside the last call's arguments),
#: ``unknown-tool`` (a name ``GeneratedStream.tools`` does not declare). Gemini's arguments
#: arrive as objects, so they cannot be malformed; Ollama's only as text (which is also the
#: ``quirk-arguments-as-text`` quirk); whole calls cannot be cut (Gemini's are, when streamed
#: as ``partialArgs``).
FAULTS: Final[Mapping[str, tuple[str, ...]]] = {
    "openai-chat": ("malformed", "truncated", "unknown-tool"),
    "openai-responses": ("malformed", "truncated", "unknown-tool"),
    "anthropic": ("malformed", "truncated", "unknown-tool"),
    "gemini": ("truncated", "unknown-tool"),
    "gemini-interactions": ("malformed", "truncated", "unknown-tool"),
    "bedrock-converse": ("malformed", "truncated", "unknown-tool"),
    "anthropic-bedrock": ("malformed", "truncated", "unknown-tool"),
    "cohere-chat": ("malformed", "truncated", "unknown-tool"),
    "ollama-chat": ("malformed", "unknown-tool"),
}

_CODES: Final = {
    "malformed": "malformed-arguments",
    "truncated": "truncated-arguments",
    "unknown-tool": "unknown-tool",
}

# Providers whose stream is Anthropic's events (on Bedrock, each in a chunk).
_ANTHROPIC: Final = frozenset({"anthropic", "anthropic-bedrock"})
# Providers whose parallel calls may interleave on the wire (each fragment names its call);
# the others send one call after the other, or whole calls.
_INTERLEAVING: Final = frozenset({"openai-chat", "openai-responses", "bedrock-converse"})
# Providers whose calls arrive whole, as objects: the arguments text toolstitch reports is
# their compact JSON, and a call without an id gets the core's generated one.
_WHOLE: Final = frozenset({"gemini", "ollama-chat"})


# -- what a test asks for, and what it gets ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """A call a test wants in the stream: its tool ``name``, its ``arguments`` (a JSON
    object), its ``id`` (``None``: one is made up, or, for Gemini and Ollama, maybe left
    out), and its ``fault``: ``None`` (``streams(faults=...)`` may still draw one), or one
    of the provider's ``FAULTS`` to have it written that way (``"truncated"`` only on the
    last call)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict, hash=False)
    id: str | None = None
    fault: str | None = None


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """One call as written: its call ``index``, the ``id`` and ``name`` sent (``None``: none
    sent), ``arguments`` the intended text, ``sent`` the text actually on the wire (not JSON
    when ``fault`` is ``"malformed"``, a prefix when ``"truncated"``), ``fragments`` how
    ``sent`` was cut (one piece for whole calls), ``fault`` ``None`` or one of ``FAULTS``."""

    index: int
    id: str | None
    name: str
    arguments: str
    sent: str
    fragments: tuple[str, ...]
    fault: str | None = None


@dataclass(frozen=True, slots=True, order=True)
class ExpectedCall:
    """A call toolstitch reports ready (``ToolCall``): ``arguments`` is the exact text."""

    index: int
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True, order=True)
class ExpectedDiscard:
    """A call toolstitch discards (``CallDiscarded``), with its error's ``code``."""

    index: int
    id: str | None
    name: str | None
    code: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What toolstitch reports on a stream: the ``ready`` calls and the ``discarded`` ones
    (each sorted by index), and the codes of every warning (``CallWarning`` and
    ``StreamWarning``: the ``quirk-…`` codes). ``Outcome.of(result)`` reads a
    ``StitchResult`` the same way, so that ``Outcome.of(stitch(...).result) ==
    stream.expected`` is the whole check."""

    ready: tuple[ExpectedCall, ...] = ()
    discarded: tuple[ExpectedDiscard, ...] = ()
    quirks: frozenset[str] = frozenset()

    @classmethod
    def of(cls, result: StitchResult) -> Outcome:
        """The outcome a ``StitchResult`` reports."""
        ready = [ExpectedCall(c.index, c.id, c.name, c.arguments) for c in result.calls]
        discarded = [ExpectedDiscard(d.index, d.id, d.name, d.error.code) for d in result.discarded]
        quirks = frozenset(
            w.error.code for w in result.warnings if isinstance(w, (CallWarning, StreamWarning))
        )
        return cls(tuple(sorted(ready)), tuple(sorted(discarded, key=_discard_key)), quirks)


def _discard_key(discard: ExpectedDiscard) -> tuple[int, str]:
    return discard.index, discard.code


_CONTENT_TYPES: Final = {
    "ollama-chat": "application/x-ndjson",
    "bedrock-converse": "application/vnd.amazon.eventstream",
    "anthropic-bedrock": "application/vnd.amazon.eventstream",
}


@dataclass(frozen=True, slots=True, repr=False)
class GeneratedStream:
    """One generated response of ``provider``.

    ``chunks`` are its wire bytes, cut as drawn (``body`` joins them); ``frames`` the same
    bytes one wire event per item (an SSE event, an NDJSON line, an event-stream frame);
    ``events`` the provider events as dicts, as an SDK hands them over (for Bedrock the
    boto3 ``converse_stream()["stream"]`` events); ``calls`` the calls written, in the
    order they started; ``quirks`` the quirk codes written; ``tools`` the declared tools
    (name to JSON Schema) to pass as ``stitch(..., tools=stream.tools)`` (``None`` when no
    call is to an unknown tool); ``expected`` what toolstitch reports on ``body`` (and on
    ``events``).
    """

    provider: str
    chunks: tuple[bytes, ...]
    frames: tuple[bytes, ...]
    events: tuple[Mapping[str, Any], ...]
    calls: tuple[PlannedCall, ...]
    quirks: frozenset[str]
    tools: Mapping[str, Any] | None
    expected: Outcome

    def __repr__(self) -> str:
        # A failing example is printed with this: the calls and the outcome in full, the
        # bytes by size only (``body`` has them).
        size = sum(len(c) for c in self.chunks)
        return (
            f"GeneratedStream(provider={self.provider!r}, chunks=<{len(self.chunks)} chunks, "
            f"{size} bytes>, calls={self.calls!r}, quirks={sorted(self.quirks)!r}, "
            f"tools={self.tools!r}, expected={self.expected!r})"
        )

    @property
    def body(self) -> bytes:
        """The whole response body."""
        return b"".join(self.chunks)

    def reply(self) -> Reply:
        """A ``ScriptedServer`` reply that sends ``chunks`` one write each (Chat
        Completions, Responses, Messages and Gemini have routes there)."""
        content_type = _CONTENT_TYPES.get(self.provider, "text/event-stream")
        return Reply(steps=list(self.chunks), content_type=content_type)


# -- the pieces ---------------------------------------------------------------------------------

_KEYS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False, width=64)
    | st.text(max_size=12)
)


@cache
def json_objects(*, max_leaves: int = 6) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects as arguments: small, nested, with non-ASCII text and every scalar kind."""
    values = st.recursive(
        _SCALARS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
        max_leaves=max_leaves,
    )
    return st.dictionaries(_KEYS, values, max_size=4)


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)


@cache
def calls(*, min_size: int = 1, max_size: int = 3) -> st.SearchStrategy[list[Call]]:
    """Lists of ``Call``s with distinct ids (names may repeat: parallel calls to one tool)."""
    names = st.lists(_NAMES, min_size=1, max_size=2, unique=True)

    @st.composite
    def build(draw: st.DrawFn) -> list[Call]:
        tools = draw(names)
        count = draw(st.integers(min_size, max_size))
        return [Call(draw(st.sampled_from(tools)), draw(json_objects())) for _ in range(count)]

    return build()


def awkward_positions(text: str) -> list[int]:
    """Cut points (0 < i < len) where a fragment boundary is hardest to get right."""
    found = set()
    for i in range(1, len(text)):
        before, here = text[i - 1], text[i]
        if "\ud800" <= before <= "\udbff":
            found.add(i)  # between the halves of a raw surrogate pair
        if before == "\\" or (i >= 2 and text[i - 2] == "\\" and before == "u"):
            found.add(i)  # right after a backslash or "\u"
        if i >= 3 and text[i - 3 : i - 1] == "\\u":
            found.add(i)  # inside the four hex digits
        if i >= 4 and text[i - 4 : i - 2] == "\\u":
            found.add(i)
        if ord(before) > 0x7F or ord(here) > 0x7F:
            found.add(i)  # next to a multi-byte character
        if before.isalnum() and here.isalnum():
            found.add(i)  # inside a number, a literal or a word of a key
        if before in '{}[]":,.-+eE' or here in '{}[]":,.-+eE':
            found.add(i)
    return sorted(found)


@st.composite
def splits(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut into non-empty fragments whose concatenation is ``text``."""
    if len(text) <= 1:
        return [text] if text else []
    cuts: set[int] = set()
    if draw(st.booleans()):
        cuts.update(draw(st.sets(st.integers(1, len(text) - 1), max_size=len(text))))
    awkward = awkward_positions(text)
    if awkward:
        cuts.update(draw(st.sets(st.sampled_from(awkward), max_size=len(awkward))))
    if draw(st.booleans()):
        cuts.update(range(1, len(text)))  # one character per fragment
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@st.composite
def interleavings(draw: st.DrawFn, streams: Sequence[Sequence[Any]]) -> list[tuple[int, Any]]:
    """One merged order of ``(stream number, item)``, each stream's own order kept."""
    positions = [0] * len(streams)
    merged: list[tuple[int, Any]] = []
    while True:
        live = [k for k, stream in enumerate(streams) if positions[k] < len(stream)]
        if not live:
            return merged
        k = live[draw(st.integers(0, len(live) - 1))] if len(live) > 1 else live[0]
        merged.append((k, streams[k][positions[k]]))
        positions[k] += 1


def cut_bytes(body: bytes, cuts: Iterable[int]) -> list[bytes]:
    """``body`` cut at ``cuts`` (any order, repeats and out-of-range points ignored)."""
    points = [0, *sorted({c for c in cuts if 0 < c < len(body)}), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(points)]


@st.composite
def chunkings(draw: st.DrawFn, frames: Sequence[bytes]) -> list[bytes]:
    """The bytes of ``frames`` cut anywhere: whole, one frame per chunk, byte by byte, or at
    random points biased towards the frames' edges (a multi-byte character or a CRC may be
    cut)."""
    body = b"".join(frames)
    edges = list(itertools.accumulate(len(f) for f in frames))
    how = draw(st.sampled_from(["whole", "frames", "bytes", "random"]))
    if how == "whole" or not body:
        return [body] if body else []
    if how == "frames":
        return [f for f in frames if f]
    if how == "bytes":
        return [body[i : i + 1] for i in range(len(body))]
    near = sorted({e + d for e in edges for d in (-1, 0, 1)})
    cuts = draw(st.sets(st.integers(1, max(1, len(body) - 1)), max_size=12))
    cuts |= draw(st.sets(st.sampled_from(near), max_size=len(near)))
    return cut_bytes(body, cuts)


# -- a plan: the calls, their fragments, their order ------------------------------------------

#: Formats of an argument text: ``json.dumps`` keywords.
_FORMATS: Final[tuple[dict[str, Any], ...]] = (
    {"separators": (",", ":"), "ensure_ascii": False},
    {"separators": (", ", ": "), "ensure_ascii": False},
    {"separators": (",", ":"), "ensure_ascii": True},
    {"indent": 1, "ensure_ascii": False},
)


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@st.composite
def _malformed(draw: st.DrawFn, text: str) -> str:
    """``text`` (a JSON object) made certainly not JSON, its prefix before the bad character
    still valid: a comma before the closing brace, a single-quoted key, a bare word."""
    body = text[1:-1].strip()
    how = draw(st.sampled_from(["comma", "quote", "word"]))
    if how == "comma":
        return "{" + body + ",}"
    if how == "quote":
        return "{'k': 1" + ("," + body if body else "") + "}"
    return "{" + (body + "," if body else "") + "oops}"


@dataclass(slots=True)
class _Plan:
    provider: str
    calls: list[PlannedCall]
    values: list[Mapping[str, Any]]
    order: list[tuple[int, int]]  # (call number, step): 0 start, 1..n fragments, n+1 end
    quirks: frozenset[str]
    options: dict[str, Any]

    def steps(self, k: int) -> int:
        return len(self.calls[k].fragments)

    def quirk(self, code: str) -> bool:
        return code in self.quirks


def _guard_cumulative(fragments: list[str]) -> list[str]:
    """Merge a fragment that starts with everything before it into the one before: the
    OpenAI Chat quirk layer reads such a fragment as a cumulative re-send (docs/quirks.md,
    row 13), so a generator that means it as a plain piece must not write it."""
    out: list[str] = []
    for piece in fragments:
        so_far = "".join(out)
        if out and piece.startswith(so_far):
            out[-1] += piece
        else:
            out.append(piece)
    return out


def _want(value: bool | Collection[str], offered: Sequence[str]) -> st.SearchStrategy[Any]:
    if value is True:
        return st.sets(st.sampled_from(offered)) if offered else st.just(set())
    if value is False:
        return st.just(set())
    return st.just({q for q in value if q in offered})


@st.composite
def _plan(
    draw: st.DrawFn,
    provider: str,
    wanted: Sequence[Call] | None,
    quirks: bool | Collection[str],
    faults: bool | Collection[str],
    interleave: bool,
    max_calls: int,
) -> _Plan:
    chosen = list(wanted) if wanted is not None else draw(calls(max_size=max_calls))
    allowed = sorted(draw(_want(faults, FAULTS[provider])))
    kinds: list[str | None] = [
        c.fault or (draw(st.sampled_from([None, *allowed])) if allowed else None) for c in chosen
    ]
    _check_faults(provider, chosen)
    if "truncated" in kinds[:-1]:  # only the last call can be cut: the response ends in it
        kinds = [None if k == "truncated" else k for k in kinds[:-1]] + kinds[-1:]
    applied = frozenset(draw(_want(quirks, QUIRKS[provider])))
    if provider == "ollama-chat" and "malformed" in kinds:
        applied |= {"quirk-arguments-as-text"}  # Ollama's arguments can be bad only as text
    if "truncated" in kinds:  # the finish reason is then "length"
        applied -= {"quirk-finish-reason-mismatch"}
    planned: list[PlannedCall] = []
    values: list[Mapping[str, Any]] = []
    declared = {c.name for c, kind in zip(chosen, kinds, strict=True) if kind != "unknown-tool"}
    base = 1 if "quirk-index-gap" in applied else 0
    for n, (call, kind) in enumerate(zip(chosen, kinds, strict=True)):
        planned.append(draw(_planned_call(provider, n + base, n, call, kind, applied, declared)))
        values.append(call.arguments)
    orders = [list(range(len(p.fragments) + 2)) for p in planned]
    if interleave and provider in _INTERLEAVING:
        order = _starts_in_order(draw(interleavings(orders)))
    else:
        order = [(k, step) for k, steps in enumerate(orders) for step in steps]
    options = {"group": draw(st.lists(st.booleans(), min_size=len(planned), max_size=len(planned)))}
    return _Plan(provider, planned, values, order, applied, options)


def _check_faults(provider: str, chosen: Sequence[Call]) -> None:
    for n, call in enumerate(chosen):
        if call.fault is not None and call.fault not in FAULTS[provider]:
            raise ValueError(
                f"{provider} streams cannot have a {call.fault!r} call: one of "
                f"{', '.join(FAULTS[provider])}"
            )
        if call.fault == "truncated" and n != len(chosen) - 1:
            raise ValueError("only the last call can be truncated: the response ends in it")


def _starts_in_order(merged: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``merged`` with every call started before any later one (parallel calls interleave,
    but providers start them in index order: a higher index first reads as a gap)."""
    out: list[tuple[int, int]] = []
    started = 0
    for k, step in merged:
        while started <= k:
            out.append((started, 0))
            started += 1
        if step:
            out.append((k, step))
    return out


@st.composite
def _planned_call(
    draw: st.DrawFn,
    provider: str,
    index: int,
    n: int,
    call: Call,
    kind: str | None,
    quirks: frozenset[str],
    declared: set[str],
) -> PlannedCall:
    name = call.name
    if kind == "unknown-tool":
        name = "undeclared_" + call.name
        while name in declared:
            name += "_"
    if provider in _WHOLE:
        text = _compact(call.arguments)
        as_text = provider == "ollama-chat" and "quirk-arguments-as-text" in quirks
        if as_text:
            text = json.dumps(call.arguments, **draw(st.sampled_from(_FORMATS)))
        sent = draw(_malformed(text)) if kind == "malformed" else text
        if kind == "truncated":
            sent = _GEMINI_CUT
        call_id = call.id
        if call_id is None and kind != "truncated":  # with an id, or without (the core's)
            call_id = draw(st.none() | _NAMES.map(lambda s: f"{s}{n}"))
        return PlannedCall(index, call_id, name, text, sent, (sent,), kind)
    text = json.dumps(call.arguments, **draw(st.sampled_from(_FORMATS)))
    sent = text
    if kind == "malformed":
        sent = draw(_malformed(text))
    elif kind == "truncated":
        sent = text[: draw(st.integers(1, len(text) - 1))]
    fragments = draw(splits(sent))
    if provider == "openai-chat":
        fragments = _guard_cumulative(fragments)
    call_id = call.id if call.id is not None else f"call_{n}_{draw(_NAMES)}"
    return PlannedCall(index, call_id, name, text, sent, tuple(fragments), kind)


#: What a cut Gemini call sends: one string member of ``partialArgs`` begun, never finished
#: (``_gemini`` writes it as ``$.text`` = ``"Once upon"`` with ``willContinue``).
_GEMINI_CUT: Final = '{"text":"Once upon'


# -- the writers: one per provider -----------------------------------------------------------

_Event = tuple[str | None, Any]  # (SSE event name, payload: a dict, or a string as is)


def _openai_chat(plan: _Plan) -> list[_Event]:
    out: list[_Event] = []
    first = [True]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
        if first[0]:
            delta = {"role": "assistant", **delta}
            first[0] = False
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {"id": "chatcmpl-gen", "object": "chat.completion.chunk", "created": 0}
        out.append((None, {**body, "model": "gen", "choices": [choice]}))

    for k, step in plan.order:
        call = plan.calls[k]
        clean = call.fault is None
        if step == 0:
            entry: dict[str, Any] = {"index": call.index, "id": call.id, "type": "function"}
            if clean and plan.quirk("quirk-type-missing"):
                del entry["type"]
            entry["function"] = {"name": call.name, "arguments": ""}
            chunk({"tool_calls": [entry]})
            if k == 0 and plan.quirk("quirk-unknown-event"):
                out.append((None, {"object": "keepalive"}))
        elif step <= plan.steps(k):
            entry = {"index": call.index}
            function: dict[str, Any] = {"arguments": call.fragments[step - 1]}
            if clean and plan.quirk("quirk-id-repeated"):
                entry["id"] = call.id
                if not plan.quirk("quirk-type-missing"):
                    entry["type"] = "function"
            if clean and plan.quirk("quirk-name-repeated"):
                function = {"name": call.name, **function}
            entry["function"] = function
            chunk({"tool_calls": [entry]})
    truncated = any(c.fault == "truncated" for c in plan.calls)
    reason = "length" if truncated else "tool_calls"
    if not truncated and plan.quirk("quirk-finish-reason-mismatch"):
        reason = "stop"
    chunk({}, reason)
    if plan.quirk("quirk-finish-repeated"):
        chunk({}, reason)
    out.append((None, "[DONE]"))
    return out


def _responses(plan: _Plan) -> list[_Event]:
    out: list[_Event] = []
    sequence = itertools.count()

    def event(kind: str, **data: Any) -> None:
        out.append((kind, {"type": kind, **data, "sequence_number": next(sequence)}))

    head = {"id": "resp_gen", "object": "response", "model": "gen", "output": []}
    event("response.created", response={**head, "status": "in_progress"})
    if plan.quirk("quirk-unknown-event"):
        event("response.toolstitch_generated", note="not a protocol event")
    for k, step in plan.order:
        call = plan.calls[k]
        item = {"id": f"fc_{k}", "type": "function_call", "call_id": call.id, "name": call.name}
        where = {"output_index": call.index, "item_id": item["id"]}
        quiet = call.fault is None and plan.quirk("quirk-no-argument-deltas")
        if step == 0:
            added = {**item, "status": "in_progress", "arguments": ""}
            event("response.output_item.added", output_index=call.index, item=added)
        elif step <= plan.steps(k):
            if not quiet:
                event(
                    "response.function_call_arguments.delta",
                    **where,
                    delta=call.fragments[step - 1],
                )
        elif call.fault != "truncated":
            event("response.function_call_arguments.done", **where, arguments=call.sent)
            done = {**item, "status": "completed", "arguments": call.sent}
            event("response.output_item.done", output_index=call.index, item=done)
    truncated = any(c.fault == "truncated" for c in plan.calls)
    status = "incomplete" if truncated else "completed"
    final: dict[str, Any] = {**head, "status": status}
    if truncated:
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    event(f"response.{status}", response=final)
    return out


def _anthropic(plan: _Plan) -> list[_Event]:
    out: list[_Event] = []

    def event(kind: str, **data: Any) -> None:
        out.append((kind, {"type": kind, **data}))

    message = {"id": "msg_gen", "type": "message", "role": "assistant", "model": "gen"}
    usage = {"input_tokens": 1, "output_tokens": 1}
    event("message_start", message={**message, "content": [], "stop_reason": None, "usage": usage})
    if plan.quirk("quirk-unknown-event"):
        event("toolstitch_generated", note="not a protocol event")
    for n, call in enumerate(plan.calls):
        whole = call.fault is None and plan.quirk("quirk-input-at-block-start")
        start = plan.values[n] if whole else {}
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": start}
        event("content_block_start", index=call.index, content_block=block)
        for piece in () if whole else call.fragments:
            delta = {"type": "input_json_delta", "partial_json": piece}
            event("content_block_delta", index=call.index, delta=delta)
        if call.fault != "truncated":
            event("content_block_stop", index=call.index)
    truncated = any(c.fault == "truncated" for c in plan.calls)
    reason = "max_tokens" if truncated else "tool_use"
    event("message_delta", delta={"stop_reason": reason}, usage={"output_tokens": 1})
    event("message_stop")
    return out


def _gemini(plan: _Plan) -> list[_Event]:
    out: list[_Event] = []

    def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> None:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        out.append((None, {"candidates": [candidate], "modelVersion": "gen"}))

    parts: list[dict[str, Any]] = []
    for n, call in enumerate(plan.calls):
        if call.fault == "truncated":
            break
        function: dict[str, Any] = {"name": call.name, "args": plan.values[n]}
        if call.id is not None:
            function = {"id": call.id, **function}
        parts.append({"functionCall": function})
        if not plan.options["group"][n]:  # this call ends its chunk
            chunk(parts)
            parts = []
    if parts:
        chunk(parts)
    if plan.quirk("quirk-unknown-event"):
        chunk([{"executableCode": {"language": "PYTHON", "code": "print(1)"}}])
    last = plan.calls[-1] if plan.calls else None
    if last is not None and last.fault == "truncated":
        chunk([{"functionCall": {"name": last.name, "willContinue": True}}])
        partial = {"jsonPath": "$.text", "stringValue": "Once upon", "willContinue": True}
        chunk([{"functionCall": {"partialArgs": [partial], "willContinue": True}}])
        return out  # the stream is cut inside the call
    chunk([], "STOP")
    return out


def _bedrock(plan: _Plan) -> list[_Event]:
    out: list[_Event] = [(None, {"messageStart": {"role": "assistant"}})]
    for k, step in plan.order:
        call = plan.calls[k]
        where: dict[str, Any] = {"contentBlockIndex": call.index}
        if step == 0:
            tool = {"toolUseId": call.id, "name": call.name}
            out.append((None, {"contentBlockStart": {**where, "start": {"toolUse": tool}}}))
            if k == 0 and plan.quirk("quirk-unknown-event"):
                delta = {"citation": {"title": "a source"}}
                out.append((None, {"contentBlockDelta": {**where, "delta": delta}}))
        elif step <= plan.steps(k):
            delta = {"toolUse": {"input": call.fragments[step - 1]}}
            out.append((None, {"contentBlockDelta": {**where, "delta": delta}}))
        else:
            out.append((None, {"contentBlockStop": where}))
    truncated = any(c.fault == "truncated" for c in plan.calls)
    reason = "max_tokens" if truncated else "tool_use"
    out.append((None, {"messageStop": {"stopReason": reason}}))
    usage = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
    out.append((None, {"metadata": {"usage": usage, "metrics": {"latencyMs": 1}}}))
    return out


def _gemini_interactions(plan: _Plan) -> list[_Event]:
    """A Gemini Interactions stream: each call a ``function_call`` step (its ``{}``
    placeholder, its ``arguments_delta`` pieces, its ``step.stop``), the interaction
    completed with ``requires_action``; a truncated call's stream stops inside it."""
    out: list[_Event] = []

    def event(kind: str, **data: Any) -> None:
        out.append((kind, {**data, "event_type": kind}))

    interaction = {"id": "v1_gen", "object": "interaction", "model": "gen"}
    event("interaction.created", interaction={**interaction, "status": "in_progress"})
    if plan.quirk("quirk-unknown-event"):
        event("interaction.toolstitch_generated", note="not a protocol event")
    for call in plan.calls:
        step: dict[str, Any] = {"type": "function_call", "name": call.name, "arguments": {}}
        if call.id is not None:
            step["id"] = call.id
        event("step.start", index=call.index, step=step)
        for piece in call.fragments:
            delta = {"type": "arguments_delta", "arguments": piece}
            event("step.delta", index=call.index, delta=delta)
        if call.fault == "truncated":
            return out  # the stream stops here
        event("step.stop", index=call.index)
    event("interaction.completed", interaction={**interaction, "status": "requires_action"})
    return out


def _anthropic_bedrock(plan: _Plan) -> list[_Event]:
    """Anthropic's events as Bedrock's InvokeModelWithResponseStream carries them: each one's
    JSON in a ``chunk``, as boto3 hands it over (raw bytes; ``_frames`` base64-encodes them
    for the wire)."""
    return [(None, {"chunk": {"bytes": _compact(p).encode()}}) for _, p in _anthropic(plan)]


def _cohere(plan: _Plan) -> list[_Event]:
    out: list[_Event] = []

    def event(kind: str, **data: Any) -> None:
        out.append((kind, {"type": kind, **data}))

    message = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": []}
    event("message-start", id="gen", delta={"message": message})
    if plan.quirk("quirk-unknown-event"):
        event("toolstitch-generated", note="not a protocol event")
    for call in plan.calls:
        function = {"name": call.name, "arguments": ""}
        start = {"id": call.id, "type": "function", "function": function}
        event("tool-call-start", index=call.index, delta={"message": {"tool_calls": start}})
        for piece in call.fragments:
            fragment = {"function": {"arguments": piece}}
            event("tool-call-delta", index=call.index, delta={"message": {"tool_calls": fragment}})
        if call.fault != "truncated":
            event("tool-call-end", index=call.index)
    truncated = any(c.fault == "truncated" for c in plan.calls)
    reason = "MAX_TOKENS" if truncated else "TOOL_CALL"
    usage = {"tokens": {"input_tokens": 1, "output_tokens": 1}}
    event("message-end", delta={"finish_reason": reason, "usage": usage})
    out.append((None, "[DONE]"))
    return out


def _ollama(plan: _Plan) -> list[_Event]:
    out: list[_Event] = []
    head = {"model": "gen", "created_at": "2026-01-01T00:00:00Z"}

    def line(tool_calls: list[dict[str, Any]], done: bool = False) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        if tool_calls:
            message["tool_calls"] = tool_calls
        body = {**head, "message": message, "done": done}
        if done:
            body["done_reason"] = "stop"
        out.append((None, body))

    entries: list[dict[str, Any]] = []
    as_text = plan.quirk("quirk-arguments-as-text")
    for n, call in enumerate(plan.calls):
        index = 0 if plan.quirk("quirk-index-taken") else call.index
        arguments: Any = call.sent if as_text else plan.values[n]
        entry: dict[str, Any] = {"function": {"name": call.name, "index": index}}
        entry["function"]["arguments"] = arguments
        if call.id is not None:
            entry = {"id": call.id, **entry}
        entries.append(entry)
        if not plan.options["group"][n]:
            line(entries)
            entries = []
    if entries:
        line(entries)
    line([], done=True)
    return out


_WRITERS: Final = {
    "openai-chat": _openai_chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "gemini-interactions": _gemini_interactions,
    "bedrock-converse": _bedrock,
    "anthropic-bedrock": _anthropic_bedrock,
    "cohere-chat": _cohere,
    "ollama-chat": _ollama,
}


def _frames(provider: str, events: list[_Event]) -> list[bytes]:
    if provider == "bedrock-converse":
        return bedrock_frames(payload for _, payload in events)
    if provider == "anthropic-bedrock":  # the wire's chunk: the event's bytes in base64
        return bedrock_frames(
            {"chunk": {"bytes": base64.b64encode(payload["chunk"]["bytes"]).decode()}}
            for _, payload in events
        )
    if provider == "ollama-chat":
        return [(_compact(payload) + "\n").encode() for _, payload in events]
    return [DONE if payload == "[DONE]" else frame(payload, name) for name, payload in events]


# -- the outcome ---------------------------------------------------------------------------------


def _expected(plan: _Plan) -> Outcome:
    ready: list[ExpectedCall] = []
    discarded: list[ExpectedDiscard] = []
    for call in plan.calls:
        if call.fault is not None:  # a discarded call keeps the id it was sent with, or none
            discarded.append(ExpectedDiscard(call.index, call.id, call.name, _CODES[call.fault]))
            continue
        # a ready call sent without one gets the core's id, by position (docs/concepts.md)
        call_id = f"{GENERATED_ID_PREFIX}{call.index}" if call.id is None else call.id
        ready.append(ExpectedCall(call.index, call_id, call.name, _ready_text(plan, call)))
    return Outcome(tuple(sorted(ready)), tuple(sorted(discarded, key=_discard_key)), _codes(plan))


def _ready_text(plan: _Plan, call: PlannedCall) -> str:
    if plan.provider in _ANTHROPIC and plan.quirk("quirk-input-at-block-start"):
        return json.dumps(plan.values[plan.calls.index(call)], ensure_ascii=False)
    return call.sent


def _codes(plan: _Plan) -> frozenset[str]:
    """The warning codes the plan's quirks leave: a per-call quirk only where a call that
    ends ready carries it (faulty calls are written without quirks)."""
    clean = [c for c in plan.calls if c.fault is None]
    codes = set(plan.quirks)
    per_call = {
        "quirk-name-repeated",
        "quirk-id-repeated",
        "quirk-type-missing",
        "quirk-no-argument-deltas",
        "quirk-input-at-block-start",
    }
    if not clean:
        codes -= per_call
    if plan.provider in _ANTHROPIC and not any(plan.values[c.index] for c in clean):
        codes.discard("quirk-input-at-block-start")  # an empty start input is the protocol
    if plan.provider == "ollama-chat" and len(plan.calls) < 2:
        codes.discard("quirk-index-taken")
    if not plan.calls:
        codes -= {"quirk-index-gap", "quirk-arguments-as-text", "quirk-finish-reason-mismatch"}
    return frozenset(codes)


@st.composite
def streams(
    draw: st.DrawFn,
    provider: str | None = None,
    calls: Sequence[Call | tuple[str, Mapping[str, Any]]] | None = None,
    *,
    quirks: bool | Collection[str] = False,
    faults: bool | Collection[str] = False,
    interleave: bool = True,
    max_calls: int = 3,
) -> GeneratedStream:
    """A ``GeneratedStream`` of ``provider`` (``None``: any of ``PROVIDERS``).

    ``calls``: the calls the stream holds, in order (``Call``s, or ``(name, arguments)``
    pairs); ``None`` draws one to ``max_calls`` of them. ``quirks``: ``True`` draws any of
    the provider's ``QUIRKS``, a collection writes those of them the provider has, ``False``
    none. ``faults``: ``True`` lets any call be one of the provider's ``FAULTS`` (a
    collection: one of those), ``False`` none; a ``truncated`` call is always the last.
    ``interleave``: parallel calls' fragments interleave where the provider allows it
    (OpenAI Chat, Responses, Bedrock). The arguments are cut anywhere, and so are the bytes.
    """
    if provider is None:
        provider = draw(st.sampled_from(PROVIDERS))
    if provider not in _WRITERS:
        raise ValueError(f"unknown provider {provider!r}: one of {', '.join(PROVIDERS)}")
    wanted = None if calls is None else [c if isinstance(c, Call) else Call(*c) for c in calls]
    if not isinstance(quirks, bool):
        strange = set(quirks) - set(QUIRK_CODES)
        if strange:
            raise ValueError(f"not quirk codes: {', '.join(sorted(strange))}")
    plan = draw(_plan(provider, wanted, quirks, faults, interleave, max_calls))
    events = _WRITERS[provider](plan)
    frames = _frames(provider, events)
    unknown = any(c.fault == "unknown-tool" for c in plan.calls)
    tools = (
        {c.name: {"type": "object"} for c in plan.calls if c.fault != "unknown-tool"}
        if unknown
        else None
    )
    return GeneratedStream(
        provider=provider,
        chunks=tuple(draw(chunkings(frames))),
        frames=tuple(frames),
        events=tuple(p for _, p in events if isinstance(p, dict)),
        calls=tuple(plan.calls),
        quirks=plan.quirks,
        tools=tools,
        expected=_expected(plan),
    )
