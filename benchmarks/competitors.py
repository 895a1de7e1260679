"""Every approach of the comparison benchmark, as a function over the same workload.

An approach has a *shape* (what it consumes: ``openai`` tool-call delta dicts, ``anthropic``
event dicts, or ``sse`` raw body bytes), a ``prepare`` step that is never timed (the SDK
approaches get their chunk or event objects built there, as their SDK would have built them
while reading the stream), and a ``run`` step that is timed. ``run`` returns the parsed
arguments of every call by index; the benchmark checks that against
``workloads.expected`` before it times anything.

The approaches that re-parse or re-scan the whole buffer per delta (quadratic) take a
``Clock`` and call ``clock.tick(i)`` every 64 items: it records their progress and stops
them past their time budget (``DidNotFinish``), so the benchmark can report them honestly
and extrapolate. The check costs well under 1 % of their time. The linear approaches never
look at the clock.

The competitor packages (orjson, jiter, partial-json-parser, openai, langchain-core,
anthropic) are the optional ``[bench]`` extra: they are imported on first use, and an
approach whose package is missing reports it instead of running.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workloads import Workload, anthropic_events, openai_chunks, sse_body

import toolstitch
from toolstitch import Assembler, CallReady, Limits, Stitcher
from toolstitch.testing import PythonAssembler, PythonStitcher

Result = dict[int, Any]

#: toolstitch's default ``max_argument_chars`` (16 MiB of text) is below the 16 MB sweep point
#: (16.95 M chars): the benchmark raises it, and nothing else.
LIMITS = Limits(max_argument_chars=64 * 1024 * 1024)

#: How often (in items) a clocked approach reports its progress.
TICK = 64


class DidNotFinish(Exception):
    """A clocked run passed its deadline (or the end of its prepared prefix)."""

    def __init__(self, done: int, marks: list[tuple[int, float]]) -> None:
        super().__init__(f"stopped after {done:,} items")
        self.done = done
        self.marks = marks


class Clock:
    """Deadline and progress marks for one run of a quadratic approach."""

    __slots__ = ("deadline", "limit", "marks", "start")

    def __init__(
        self, budget: float = math.inf, limit: float = math.inf, *, record: bool = True
    ) -> None:
        self.start = time.perf_counter()
        self.deadline = self.start + budget
        self.limit = limit  # stop before this item: the prepared input is only a prefix
        self.marks: list[tuple[int, float]] | None = [] if record else None

    def tick(self, done: int) -> None:
        now = time.perf_counter()
        marks = self.marks
        if marks is not None:
            marks.append((done, now - self.start))
        if now > self.deadline or done >= self.limit:
            raise DidNotFinish(done, marks or [(done, now - self.start)])


UNLIMITED = Clock(record=False)


def package(name: str) -> Any:
    """Import a ``[bench]`` package by name (typed ``Any``: they are optional)."""
    return importlib.import_module(name)


@dataclass(frozen=True)
class Approach:
    name: str
    shape: str  # "openai", "anthropic" or "sse"
    run: Callable[[Any, Clock], Result]
    what: str
    prepare: Callable[[Workload, int | None], Any] | None = None  # None: the shape's input
    clocked: bool = False  # quadratic somewhere: gets a deadline
    floor: bool = False  # the reference of its shape
    requires: tuple[str, ...] = ()
    #: Largest argument size (chars) this approach is run at in the size sweep.
    sweep_cap: int | None = None
    #: Set when the approach's result is knowingly not exact; it is then checked with
    #: ``same_up_to_floats`` and the note is shown with its results.
    lossy: str | None = None

    def missing(self) -> list[str]:
        out = []
        for name in self.requires:
            try:
                importlib.import_module(name)
            except ImportError:
                out.append(name)
        return out


def same_up_to_floats(got: object, want: object) -> bool:
    """Equal, except that an int may have come back as the float nearest to it."""
    if isinstance(want, int) and not isinstance(want, bool) and isinstance(got, float):
        return float(want) == got
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(
            same_up_to_floats(got[key], value) for key, value in want.items()
        )
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(map(same_up_to_floats, got, want))
    return type(got) is type(want) and got == want


def check(approach: Approach, got: Result, want: Result) -> bool:
    """Whether ``got`` is the expected result (exactly, unless the approach is lossy)."""
    if approach.lossy:
        return same_up_to_floats(got, want)
    return got == want


def shape_input(workload: Workload, shape: str) -> list[Any]:
    """The stream of ``workload`` in ``shape``: delta dicts, event dicts or body pieces."""
    if shape == "openai":
        return workload.deltas
    if shape == "anthropic":
        return anthropic_events(workload)
    if shape == "sse":
        return sse_body(workload)
    raise ValueError(shape)


# -- OpenAI-shaped deltas ------------------------------------------------------------------------


def _floor(deltas: list[dict[str, Any]], loads: Callable[[str], Any]) -> Result:
    """Per-index append (tracking ids and names as a real client must), one ``loads`` per
    call at the end."""
    parts: dict[int, list[str]] = {}
    ids: dict[int, str] = {}
    names: dict[int, str] = {}
    for delta in deltas:
        index = delta["index"]
        if "id" in delta:
            ids[index] = delta["id"]
        function = delta["function"]
        name = function.get("name")
        if name:
            names[index] = names.get(index, "") + name
        arguments = function.get("arguments")
        if arguments:
            bucket = parts.get(index)
            if bucket is None:
                parts[index] = [arguments]
            else:
                bucket.append(arguments)
    return {index: loads("".join(bucket)) for index, bucket in parts.items()}


def floor_json(deltas: list[dict[str, Any]], clock: Clock = UNLIMITED) -> Result:
    """The floor: per-index append, one ``json.loads`` per call at the end."""
    return _floor(deltas, json.loads)


def floor_orjson(deltas: list[dict[str, Any]], clock: Clock = UNLIMITED) -> Result:
    """The floor with ``orjson.loads``."""
    loads: Callable[[str], Any] = package("orjson").loads
    return _floor(deltas, loads)


def ijson_naive(deltas: list[dict[str, Any]], clock: Clock = UNLIMITED) -> Result:
    """One ``ijson.basic_parse_coro`` per call, every fragment sent as it comes.

    Validates per delta and sees the close (depth back to 0) on the fragment that brings it;
    the value is then built by one ``json.loads``. yajl re-scans an unfinished string token
    from its start on every chunk, so long strings make this quadratic.
    """
    ijson = package("ijson")
    opens = {"start_map", "start_array"}
    closes = {"end_map", "end_array"}
    coros: dict[int, Any] = {}
    sinks: dict[int, Any] = {}
    depth: dict[int, int] = {}
    parts: dict[int, list[str]] = {}
    result: Result = {}
    for i, delta in enumerate(deltas):
        if not i & 63:
            clock.tick(i)
        arguments = delta["function"].get("arguments")
        if not arguments:
            continue  # send(b"") would mean end of input
        index = delta["index"]
        coro = coros.get(index)
        if coro is None:
            sinks[index] = sink = ijson.utils.sendable_list()
            coros[index] = coro = ijson.basic_parse_coro(sink)
            depth[index] = 0
            parts[index] = []
        sink = sinks[index]
        coro.send(arguments.encode())
        parts[index].append(arguments)
        level = depth[index]
        for event, _value in sink:
            if event in opens:
                level += 1
            elif event in closes:
                level -= 1
                if level == 0:
                    result[index] = json.loads("".join(parts[index]))
        depth[index] = level
        sink.clear()
    return result


def _reparse(deltas: list[dict[str, Any]], clock: Clock, parse: Callable[[str], Any]) -> Result:
    """Append each fragment to its call's buffer and ``parse`` the whole buffer, per delta."""
    buffers: dict[int, str] = {}
    result: Result = {}
    for i, delta in enumerate(deltas):
        if not i & 63:
            clock.tick(i)
        arguments = delta["function"].get("arguments")
        if not arguments:
            continue
        index = delta["index"]
        buffers[index] = buffer = buffers.get(index, "") + arguments
        result[index] = parse(buffer)
    return result


def jiter_partial(deltas: list[dict[str, Any]], clock: Clock = UNLIMITED) -> Result:
    """``jiter.from_json(buf, partial_mode="trailing-strings")`` on the whole buffer per delta.

    What openai-python (``strict`` tools) and the anthropic SDK do for partial arguments.
    """
    from_json = package("jiter").from_json
    return _reparse(
        deltas, clock, lambda buffer: from_json(buffer.encode(), partial_mode="trailing-strings")
    )


def pjp_partial(deltas: list[dict[str, Any]], clock: Clock = UNLIMITED) -> Result:
    """``partial_json_parser.loads(buf)`` on the whole buffer per delta."""
    loads: Callable[[str], Any] = package("partial_json_parser").loads
    return _reparse(deltas, clock, loads)


def prepare_openai_chunks(workload: Workload, limit: int | None) -> list[Any]:
    """``ChatCompletionChunk`` objects, as openai-python builds them from the stream."""
    chunk_type = package("openai.types.chat").ChatCompletionChunk
    chunks = openai_chunks(workload)
    if limit is not None:
        chunks = chunks[:limit]
    return [chunk_type.model_validate(chunk) for chunk in chunks]


def openai_state(chunks: list[Any], clock: Clock = UNLIMITED) -> Result:
    """openai-python's ``ChatCompletionStreamState.handle_chunk`` per chunk (what
    ``client.chat.completions.stream()`` runs), then ``json.loads`` of each final
    ``function.arguments`` (the SDK parses only ``strict`` tools)."""
    state = package("openai.lib.streaming.chat").ChatCompletionStreamState()
    handle = state.handle_chunk
    for i, chunk in enumerate(chunks):
        if not i & 63:
            clock.tick(i)
        handle(chunk)
    message = state.get_final_completion().choices[0].message
    return {call.index: json.loads(call.function.arguments) for call in message.tool_calls or ()}


def prepare_langchain_chunks(workload: Workload, limit: int | None) -> list[Any]:
    """One ``AIMessageChunk(tool_call_chunks=[...])`` per delta, as LangChain's chat models
    emit them while streaming."""
    message_chunk = package("langchain_core.messages").AIMessageChunk
    tool_call_chunk = package("langchain_core.messages.tool").tool_call_chunk
    deltas = workload.deltas if limit is None else workload.deltas[:limit]
    out = []
    for delta in deltas:
        function = delta["function"]
        piece = tool_call_chunk(
            name=function.get("name"),
            args=function.get("arguments"),
            id=delta.get("id"),
            index=delta["index"],
        )
        out.append(message_chunk(content="", tool_call_chunks=[piece]))
    return out


def langchain_sum(chunks: list[Any], clock: Clock = UNLIMITED) -> Result:
    """``acc = acc + chunk`` per chunk, LangChain's documented streaming idiom; the parsed
    arguments are ``acc.tool_calls[...]["args"]``. Each ``+`` re-parses every call's
    accumulated arguments with LangChain's pure-Python ``parse_partial_json``."""
    acc = chunks[0]
    for i in range(1, len(chunks)):
        if not i & 63:
            clock.tick(i)
        acc = acc + chunks[i]
    index_of = {chunk["id"]: chunk["index"] for chunk in acc.tool_call_chunks}
    return {index_of[call["id"]]: call["args"] for call in acc.tool_calls}


def toolstitch_assembler(deltas: list[dict[str, Any]], clock: Clock = UNLIMITED) -> Result:
    """toolstitch's ``Assembler``: validated per delta, ``CallReady`` on the closing one."""
    return _assembled(Assembler, deltas)


def _assembled(cls: Any, deltas: list[dict[str, Any]]) -> Result:
    assembler = cls(limits=LIMITS)
    feed = assembler.feed
    ready: Result = {}
    for delta in deltas:
        for event in feed(delta):
            if type(event) is CallReady:
                ready[event.call.index] = event.call.parsed_arguments
    for event in assembler.finish():
        if type(event) is CallReady:
            ready[event.call.index] = event.call.parsed_arguments
    return ready


# -- Anthropic-shaped events ---------------------------------------------------------------------


def floor_json_anthropic(events: list[dict[str, Any]], clock: Clock = UNLIMITED) -> Result:
    """The floor for Anthropic events: append ``partial_json`` per block, ``json.loads`` at
    ``content_block_stop``."""
    parts: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    result: Result = {}
    for event in events:
        kind = event["type"]
        if kind == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "input_json_delta":
                parts[event["index"]].append(delta["partial_json"])
        elif kind == "content_block_start":
            block = event["content_block"]
            if block["type"] == "tool_use":
                parts[event["index"]] = []
                names[event["index"]] = block["name"]
        elif kind == "content_block_stop":
            bucket = parts.get(event["index"])
            if bucket is not None:
                result[event["index"]] = json.loads("".join(bucket))
    return result


def prepare_anthropic_events(workload: Workload, limit: int | None) -> list[Any]:
    """The SDK's event objects, built the way its ``Stream`` builds them from the SSE data."""
    construct_type = package("anthropic._models").construct_type
    event_type = package("anthropic.types").RawMessageStreamEvent
    events = anthropic_events(workload)
    if limit is not None:
        events = events[:limit]
    return [construct_type(type_=event_type, value=event) for event in events]


@functools.cache
def _anthropic_accumulate() -> tuple[Any, bool]:
    """The SDK's ``accumulate_event``, and whether it takes ``json_bufs`` (newer releases keep
    the partial JSON there rather than on the content block)."""
    accumulate = package("anthropic.lib.streaming._messages").accumulate_event
    return accumulate, "json_bufs" in inspect.signature(accumulate).parameters


def anthropic_sdk(events: list[Any], clock: Clock = UNLIMITED) -> Result:
    """The anthropic SDK's ``accumulate_event`` per event (what ``MessageStream`` runs to
    keep its snapshot): it appends each ``partial_json`` to a ``bytes`` buffer and
    re-parses the whole buffer with ``jiter.from_json(buf, partial_mode=True)``."""
    accumulate, takes_buffers = _anthropic_accumulate()
    snapshot = None
    buffers: dict[int, bytes] = {}
    extra = {"json_bufs": buffers} if takes_buffers else {}
    for i, event in enumerate(events):
        if not i & 63:
            clock.tick(i)
        snapshot = accumulate(event=event, current_snapshot=snapshot, **extra)
    assert snapshot is not None
    return {
        index: block.input
        for index, block in enumerate(snapshot.content)
        if block.type == "tool_use"
    }


def toolstitch_anthropic(events: list[dict[str, Any]], clock: Clock = UNLIMITED) -> Result:
    """toolstitch's ``Stitcher(provider="anthropic")`` fed the event dicts."""
    return _anthropic_stitched(Stitcher, events)


def _anthropic_stitched(cls: Any, events: list[dict[str, Any]]) -> Result:
    stitcher = cls(provider="anthropic", limits=LIMITS)
    feed = stitcher.feed
    ready: Result = {}
    for event in events:
        for out in feed(event):
            if type(out) is CallReady:
                ready[out.call.index] = out.call.parsed_arguments
    for out in stitcher.close():
        if type(out) is CallReady:
            ready[out.call.index] = out.call.parsed_arguments
    return ready


# -- the pure-Python path, in the same process ---------------------------------------------------


def toolstitch_pure(deltas: list[dict[str, Any]], clock: Clock = UNLIMITED) -> Result:
    """``toolstitch_assembler`` on the pure-Python path (``toolstitch.testing.PythonAssembler``:
    the reference and the fallback, in the same process)."""
    return _assembled(PythonAssembler, deltas)


def toolstitch_anthropic_pure(events: list[dict[str, Any]], clock: Clock = UNLIMITED) -> Result:
    """``toolstitch_anthropic`` on the pure-Python path (``toolstitch.testing.PythonStitcher``,
    whose assembler is the pure-Python one too)."""
    return _anthropic_stitched(PythonStitcher, events)


# -- raw SSE bytes -------------------------------------------------------------------------------


def _floor_sse(pieces: list[bytes], loads: Callable[[str | bytes], Any]) -> Result:
    parts: dict[int, list[str]] = {}
    buffer = b""
    for piece in pieces:
        buffer += piece
        while True:
            end = buffer.find(b"\n\n")
            if end < 0:
                break
            message = buffer[:end]
            buffer = buffer[end + 2 :]
            if not message.startswith(b"data: "):
                continue
            data = message[6:]
            if data == b"[DONE]":
                break
            for choice in loads(data)["choices"]:
                for call in choice["delta"].get("tool_calls") or ():
                    arguments = call["function"].get("arguments")
                    if arguments:
                        bucket = parts.get(call["index"])
                        if bucket is None:
                            parts[call["index"]] = [arguments]
                        else:
                            bucket.append(arguments)
    return {index: loads("".join(bucket)) for index, bucket in parts.items()}


def floor_sse(pieces: list[bytes], clock: Clock = UNLIMITED) -> Result:
    """The end-to-end floor: split events, ``json.loads`` each chunk, concatenate the
    arguments, ``json.loads`` once per call."""
    return _floor_sse(pieces, json.loads)


def floor_sse_orjson(pieces: list[bytes], clock: Clock = UNLIMITED) -> Result:
    """The same with ``orjson.loads``."""
    loads: Callable[[str | bytes], Any] = package("orjson").loads
    return _floor_sse(pieces, loads)


def toolstitch_sse(pieces: list[bytes], clock: Clock = UNLIMITED) -> Result:
    """toolstitch's ``Stitcher`` over the body bytes: SSE decoding, ``json.loads`` per
    event, provider detection, the OpenAI Chat adapter and the assembler."""
    return _sse_stitched(Stitcher, pieces)


def _sse_stitched(cls: Any, pieces: list[bytes]) -> Result:
    stitcher = cls(limits=LIMITS)
    feed = stitcher.feed
    ready: Result = {}
    for piece in pieces:
        for out in feed(piece):
            if type(out) is CallReady:
                ready[out.call.index] = out.call.parsed_arguments
    for out in stitcher.close():
        if type(out) is CallReady:
            ready[out.call.index] = out.call.parsed_arguments
    return ready


def toolstitch_sse_pure(pieces: list[bytes], clock: Clock = UNLIMITED) -> Result:
    """``toolstitch_sse`` on the pure-Python path."""
    return _sse_stitched(PythonStitcher, pieces)


#: SSE bodies are ~40x the argument size (one JSON envelope per few characters): the sweep
#: stops them at 4 MB of arguments (a 160 MB body) to keep the run's memory reasonable.
SSE_SWEEP_CAP = 5_000_000

#: The pure-Python path takes ~10x the floor: the sweep stops it at 4 MB of arguments too, so
#: that its 16 MB point (~15 s per run, several rounds) does not double the run's length.
PURE_SWEEP_CAP = 5_000_000

ORJSON_LOSSY = "integers beyond 64 bits come back as floats (orjson parses them lossily)"

APPROACHES: tuple[Approach, ...] = (
    Approach("floor_json", "openai", floor_json, "per-index append, json.loads once", floor=True),
    Approach(
        "floor_orjson",
        "openai",
        floor_orjson,
        "same, orjson.loads once",
        requires=("orjson",),
        lossy=ORJSON_LOSSY,
    ),
    Approach(
        "toolstitch",
        "openai",
        toolstitch_assembler,
        "Assembler.feed per delta (validates as it goes)",
    ),
    Approach(
        "toolstitch_pure",
        "openai",
        toolstitch_pure,
        "the same on the pure-Python path (`toolstitch.testing.PythonAssembler`: the reference "
        "and the fallback, in the same process)",
        sweep_cap=PURE_SWEEP_CAP,
    ),
    Approach(
        "ijson_naive",
        "openai",
        ijson_naive,
        "one ijson basic_parse_coro per call, every fragment sent",
        clocked=True,
        requires=("ijson",),
    ),
    Approach(
        "jiter_partial",
        "openai",
        jiter_partial,
        "jiter.from_json(whole buffer, partial_mode='trailing-strings') per delta",
        clocked=True,
        requires=("jiter",),
    ),
    Approach(
        "pjp_partial",
        "openai",
        pjp_partial,
        "partial_json_parser.loads(whole buffer) per delta",
        clocked=True,
        requires=("partial_json_parser",),
    ),
    Approach(
        "openai_state",
        "openai",
        openai_state,
        "openai-python ChatCompletionStreamState.handle_chunk per chunk",
        prepare=prepare_openai_chunks,
        clocked=True,
        requires=("openai",),
    ),
    Approach(
        "langchain_sum",
        "openai",
        langchain_sum,
        "langchain-core: acc = acc + AIMessageChunk per delta",
        prepare=prepare_langchain_chunks,
        clocked=True,
        requires=("langchain_core",),
    ),
    Approach(
        "floor_json_anthropic",
        "anthropic",
        floor_json_anthropic,
        "append partial_json per block, json.loads at content_block_stop",
        floor=True,
    ),
    Approach(
        "toolstitch_anthropic",
        "anthropic",
        toolstitch_anthropic,
        "Stitcher(provider='anthropic').feed per event dict",
    ),
    Approach(
        "toolstitch_anthropic_pure",
        "anthropic",
        toolstitch_anthropic_pure,
        "the same on the pure-Python path",
        sweep_cap=PURE_SWEEP_CAP,
    ),
    Approach(
        "anthropic_sdk",
        "anthropic",
        anthropic_sdk,
        "anthropic SDK accumulate_event per event (jiter partial re-parse)",
        prepare=prepare_anthropic_events,
        clocked=True,
        requires=("anthropic", "jiter"),
    ),
    Approach(
        "floor_sse",
        "sse",
        floor_sse,
        "split SSE events, json.loads each chunk, concatenate, json.loads once",
        floor=True,
        sweep_cap=SSE_SWEEP_CAP,
    ),
    Approach(
        "floor_sse_orjson",
        "sse",
        floor_sse_orjson,
        "same with orjson.loads",
        requires=("orjson",),
        lossy=ORJSON_LOSSY,
        sweep_cap=SSE_SWEEP_CAP,
    ),
    Approach(
        "toolstitch_sse",
        "sse",
        toolstitch_sse,
        "Stitcher().feed per body piece: SSE decode + adapter + assembler",
        sweep_cap=SSE_SWEEP_CAP,
    ),
    Approach(
        "toolstitch_sse_pure",
        "sse",
        toolstitch_sse_pure,
        "the same on the pure-Python path",
        sweep_cap=SSE_SWEEP_CAP,
    ),
)

SHAPES = ("openai", "anthropic", "sse")


def floor_of(shape: str) -> Approach:
    return next(a for a in APPROACHES if a.shape == shape and a.floor)


def versions() -> dict[str, str]:
    """Installed versions of toolstitch and every competitor package."""
    from importlib import metadata

    out = {"toolstitch": toolstitch.__version__}
    for dist in (
        "ijson",
        "orjson",
        "jiter",
        "partial-json-parser",
        "openai",
        "anthropic",
        "langchain-core",
        "pydantic",
        "matplotlib",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out
