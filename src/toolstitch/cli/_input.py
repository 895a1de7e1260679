"""What ``replay`` reads and how: the input (a file or standard input), the tools file, and
the replay itself, with where in the input each event came out."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from toolstitch.decode.eventstream import PRELUDE_BYTES, is_prelude
from toolstitch.schema.declarations import normalize_tools
from toolstitch.stitch.stitcher import IdFactory, Stitcher, StitchResult
from toolstitch.vocab.call_events import ArgumentsDelta, Event
from toolstitch.vocab.errors import StreamDecodeError

__all__ = ["Failure", "Replay", "Tools", "Where", "read_input", "read_tools", "replay"]

#: What ``replay`` names standard input by.
STDIN = "-"


class Failure(Exception):
    """A one-line reason to exit with status 2, and its stable ``code`` for ``--json``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Where:
    """A moment of the replay: ``event`` provider events and ``byte`` bytes read so far."""

    event: int
    byte: int


@dataclass(frozen=True, slots=True)
class Step:
    """One event of the replay, where it came out, and (for an ``ArgumentsDelta`` of a
    timeline) the state of its call after it."""

    where: Where
    event: Event
    state: str = ""


@dataclass(frozen=True, slots=True)
class Tools:
    """A ``--tools`` file: its path, the declarations as read, and the declared names."""

    path: str
    declarations: object
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Replay:
    """A replayed stream: its result, every event with its moment, and the end."""

    result: StitchResult
    steps: tuple[Step, ...]
    total: Where


def pieces(body: bytes) -> list[bytes]:
    """The body cut so that each feed completes at most one provider event: after every
    line, or for an AWS event stream (binary) after every frame."""
    if is_prelude(body[:PRELUDE_BYTES]):
        return _frames(body)
    return body.splitlines(keepends=True)


def _frames(body: bytes) -> list[bytes]:
    """The body cut at the frame lengths its preludes state; whatever does not parse as a
    prelude goes in one last piece (the decoder then reports it)."""
    out: list[bytes] = []
    start = 0
    while start < len(body):
        head = body[start : start + PRELUDE_BYTES]
        length = int.from_bytes(head[:4], "big") if is_prelude(head) else 0
        end = start + length if length >= PRELUDE_BYTES else len(body)
        out.append(body[start:end])
        start = end
    return out


def is_stream(body: bytes) -> bool:
    """Whether ``body`` is a wire stream (SSE, or an AWS event stream) rather than a model's
    raw output: its first line that is not blank is an SSE field, or it starts with an
    event-stream prelude."""
    if is_prelude(body[:PRELUDE_BYTES]):
        return True
    for line in body.splitlines():
        if line.strip():
            return line.lstrip().startswith(_SSE_FIELDS)
    return False


_SSE_FIELDS: Final = (b"data:", b"event:", b"id:", b"retry:", b":")


def text_pieces(body: bytes) -> list[str]:
    """A model's raw output cut after every line (each line one feed), decoded as UTF-8."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Failure("unreadable-input", f"the text is not UTF-8: {exc}") from None
    return text.splitlines(keepends=True)


def replay(body: bytes, provider: str, options: Mapping[str, Any], *, states: bool) -> Replay:
    """Feed ``body`` to a ``Stitcher`` piece by piece, noting where each event came out.

    With ``states``, each ``ArgumentsDelta`` also carries its call's state after it (what a
    timeline shows; it costs a look at the calls per delta, so only then)."""
    stitcher = Stitcher(provider, **options)
    steps: list[Step] = []
    try:
        for piece in text_pieces(body) if provider == "text" else pieces(body):
            events = stitcher.feed(piece)
            if events:
                where = Where(stitcher.events_read, stitcher.bytes_read)
                steps.extend(_steps(where, events, stitcher if states else None))
        events = stitcher.close()
    except StreamDecodeError as exc:
        raise Failure("not-a-stream", exc.message) from None
    total = Where(stitcher.events_read, stitcher.bytes_read)
    steps.extend(Step(total, event) for event in events)
    return Replay(stitcher.result, tuple(steps), total)


def _steps(where: Where, events: list[Event], stitcher: Stitcher | None) -> list[Step]:
    if stitcher is None:
        return [Step(where, event) for event in events]
    snaps = {s.index: s for s in stitcher.calls}
    out = []
    for event in events:
        snap = snaps.get(event.index) if isinstance(event, ArgumentsDelta) else None
        out.append(Step(where, event, "" if snap is None else str(snap.state)))
    return out


def read_input(path: str) -> bytes:
    """The bytes of ``path``, or of standard input for ``-`` (binary: nothing is decoded)."""
    try:
        if path == STDIN:
            return sys.stdin.buffer.read()
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = "standard input" if path == STDIN else path
        raise Failure("unreadable-input", f"cannot read {where}: {reason}") from None


def read_tools(path: str) -> Tools:
    """The tool declarations in the JSON file ``path``, as the ``Assembler`` reads them.

    The declarations are checked here, before any stream is read, so that a file that is
    not a tool list is a reason to exit like an unreadable input.
    """
    try:
        with open(path, "rb") as handle:
            tools = json.loads(handle.read())
    except OSError as exc:
        raise Failure("unreadable-tools", f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # also a UnicodeDecodeError
        raise Failure("bad-tools", f"{path} is not JSON: {exc}") from None
    try:
        if tools is None:
            raise TypeError("the file holds null")
        Stitcher(tools=tools)
        names = tuple(normalize_tools(tools))
    except (TypeError, ValueError) as exc:
        reason = " ".join(str(exc).split())
        raise Failure("bad-tools", f"{path} is not a tool list: {reason}") from None
    except ImportError as exc:  # the schema checks need the jsonschema extra
        raise Failure("missing-extra", str(exc)) from None
    return Tools(path, tools, names)


def prefixed(prefix: str) -> IdFactory:
    """The ``--id-prefix`` factory: ``PREFIX<position>``."""

    def factory(index: int, position: int) -> str:
        return f"{prefix}{position}"

    return factory
