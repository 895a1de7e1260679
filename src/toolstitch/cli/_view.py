"""What the ``toolstitch`` command shows, as a small document: lines of styled spans and
tables, built once and laid out by ``_render`` (plain text, or ``rich`` on a colour
terminal). Every piece of information is decided here, so both layouts carry the same.

``replay``'s summary is built by ``summary``; the per-event timeline, shared by ``replay
--timeline`` and ``demo``, by ``timeline``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from toolstitch.stitch.stitcher import StitchResult
from toolstitch.vocab.call_events import (
    ArgumentsDelta,
    CallDiscarded,
    CallReady,
    CallStarted,
    CallWarning,
    Event,
    ToolCall,
)
from toolstitch.vocab.stream_events import (
    CustomToolCall,
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    RefusalDelta,
    ServerToolCall,
    StreamFailed,
    StreamWarning,
    TextDelta,
    TextSignature,
    Usage,
)

from ._input import Replay, Step, Tools, Where
from ._report import call_names, positions
from ._turn import Run, turn

__all__ = ["Block", "Column", "Line", "Row", "Span", "Table", "summary", "timeline"]

#: How many characters of a long value (arguments, reasoning) are shown unless ``--full``.
SHOWN_CHARS = 600
#: How many characters of a value a timeline row shows.
ROW_CHARS = 120


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of text and its style: "" (none), ``head``, ``ok``, ``bad``, ``warn``,
    ``dim``, ``name``, or ``note`` (what a clipped value says of its size: never cut)."""

    text: str
    style: str = ""


@dataclass(frozen=True, slots=True)
class Line:
    """One line: its spans after ``indent`` spaces and an optional ``label`` ("label: ").

    A line longer than the width wraps, its continuation lines under the value (after the
    label) plus ``hang``: ``wrap`` is ``"words"`` (prose), ``"chars"`` (JSON, cut anywhere)
    or ``"none"`` (a caret snippet: its columns matter).
    """

    spans: tuple[Span, ...] = ()
    indent: int = 0
    label: str = ""
    wrap: str = "words"
    hang: int = 0


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    right: bool = False


@dataclass(frozen=True, slots=True)
class Row:
    """A table row: one cell per column, and lines shown as they are under the last cell."""

    cells: tuple[tuple[Span, ...], ...]
    below: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Table:
    """Columns and rows; the last column wraps (anywhere), the others never do."""

    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    indent: int = 0


Block = Line | Table


# -- small pieces ----------------------------------------------------------------------------


def n(value: int) -> str:
    return f"{value:,}"


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def clip(text: str, limit: int | None) -> tuple[Span, ...]:
    """``text``, or its first ``limit`` characters and how long it is."""
    if limit is None or len(text) <= limit:
        return (Span(text),)
    return (Span(text[:limit]), Span(f" … ({n(len(text))} characters)", "note"))


def _short(text: str, width: int) -> str:
    shown = repr(text)
    return shown if len(shown) <= width else shown[: width - 2] + "…'"


def at(where: Where, total: Where) -> str:
    text = f"event {n(where.event)} of {n(total.event)}"
    if total.byte:
        text += f" (byte {n(where.byte)} of {n(total.byte)})"
    if where == total:
        text += ", at the end of the stream"
    return text


def _call_label(index: int | None, name: str | None) -> tuple[Span, ...]:
    return (Span(f"call {'-' if index is None else index} "), Span(name or "(no name)", "name"))


def _head(index: int, name: str | None, call_id: str | None, indent: int) -> Line:
    spans = (*_call_label(index, name), Span(f"  id {call_id or '(none)'}", "dim"))
    return Line(spans, indent)


def _error_lines(error: Exception, indent: int, style: str) -> list[Line]:
    code = getattr(error, "code", type(error).__name__)
    lines = [Line((Span(f"{code}: ", style), Span(str(error))), indent, hang=2)]
    snippet = getattr(error, "snippet", None)
    if isinstance(snippet, str) and snippet:
        lines.extend(Line((Span(s),), indent + 2, wrap="none") for s in snippet.splitlines())
    return lines


def _section(title: str, style: str = "head") -> list[Line]:
    return [Line(), Line((Span(title, style),))]


def _paragraph(text: str, indent: int, style: str = "") -> list[Line]:
    """``text`` line by line, cut at its line feeds only (a carriage return or another
    separator is a character to show, as an escape)."""
    lines = text.removesuffix("\n").split("\n") if text else []
    return [Line((Span(line, style),), indent) for line in lines]


# -- replay: the summary ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Context:
    """What the summary says about how the replay was asked for."""

    source: str
    given: str  # the --provider
    tools: Tools | None
    policy: str
    limit: int | None  # characters of a long value shown (None: --full)


def summary(replay: Replay, context: Context) -> list[Block]:
    """``replay``'s plain report: the stream, the calls, the problems, then the turn."""
    result, total = replay.result, replay.total
    ready_at, discarded_at = positions(replay)
    blocks: list[Block] = []
    blocks += _stream_head(result, total, context)
    blocks += _calls(result, ready_at, total, context)
    blocks += _discards(result, discarded_at, total, context.limit)
    blocks += _server_calls(result, context.limit)
    blocks += _warnings(result)
    blocks += _stream_error(result)
    blocks += _turn(replay, context.limit)
    return blocks


def _stream_head(result: StitchResult, total: Where, context: Context) -> list[Line]:
    how = "detected" if context.given == "auto" else "given"
    size = f", {n(total.byte)} bytes" if total.byte else ""
    source = "- (standard input)" if context.source == "-" else context.source
    lines = [
        Line((Span(f"replay {source}", "head"),)),
        Line((Span(result.provider or "unknown", "name"), Span(f" ({how})")), label="provider"),
        Line(
            (
                Span(f"{plural(total.event, 'event')}{size}; finish reason: "),
                Span(result.finish_reason or "(none)", "name"),
            ),
            label="stream",
        ),
    ]
    if result.usage:
        lines.append(Line((Span(_usage(result.usage)),), label="usage"))
    tools = context.tools
    if tools is not None:
        policy = "discarded" if context.policy == "discard" else "a warning"
        names = ", ".join(tools.names) or "(none)"
        lines.append(
            Line(
                (
                    Span(f"{tools.path} declares {plural(len(tools.names), 'tool')}: "),
                    Span(names, "name"),
                    Span(f"; a call that breaks its schema is {policy}", "dim"),
                ),
                label="tools",
            )
        )
    return lines


def _usage(usage: Mapping[str, Any], prefix: str = "") -> str:
    """Usage counts as ``key value`` pairs, nested objects as ``outer.inner``."""
    parts = []
    for key, value in usage.items():
        if isinstance(value, Mapping):
            inner = _usage(value, f"{prefix}{key}.")
            if inner:
                parts.append(inner)
        elif value is not None:
            parts.append(f"{prefix}{key} {n(value) if isinstance(value, int) else value}")
    return ", ".join(parts)


def _schema_line(call: ToolCall, result: StitchResult) -> Line:
    warned = [
        w.error.code
        for w in result.warnings
        if isinstance(w, CallWarning) and w.index == call.index and "schema" in w.error.code
    ]
    if warned:
        return Line((Span("violated (kept with a warning: see below)", "warn"),), 6, "schema")
    return Line((Span("valid", "ok"),), 6, "schema")


def _calls(
    result: StitchResult, ready_at: dict[int, Where], total: Where, context: Context
) -> list[Line]:
    lines = _section(f"{plural(len(result.calls), 'call')} ready", "ok" if result.calls else "head")
    for call in result.calls:
        lines.append(_head(call.index, call.name, call.id, 2))
        lines.append(Line(clip(call.arguments, context.limit), 6, "arguments", "chars"))
        ready = ready_at.get(call.index)
        if ready is not None:
            lines.append(Line((Span(at(ready, total)),), 6, "ready at"))
        if context.tools is not None:
            lines.append(_schema_line(call, result))
    return lines


def _discards(
    result: StitchResult, discarded_at: dict[int, Where], total: Where, limit: int | None
) -> list[Line]:
    if not result.discarded:
        return []
    omitted = result.discarded_omitted
    more = f" (and {omitted} more refused past max_calls, not listed)" if omitted else ""
    lines = _section(f"{plural(len(result.discarded), 'call')} discarded{more}", "bad")
    for item in result.discarded:
        lines.append(_head(item.index, item.name, item.id, 2))
        lines += _error_lines(item.error, 6, "bad")
        received = clip(item.arguments, limit) if item.arguments else (Span("(none)", "dim"),)
        lines.append(Line(received, 6, "arguments received", "chars"))
        ended = discarded_at.get(item.index)
        if ended is not None:
            lines.append(Line((Span(at(ended, total)),), 6, "discarded at"))
    return lines


def _server_calls(result: StitchResult, limit: int | None) -> list[Line]:
    lines: list[Line] = []
    if result.server_calls:
        lines += _section(
            f"{plural(len(result.server_calls), 'server tool call')} "
            "(run by the provider, never dispatched)"
        )
    for server in result.server_calls:
        head = _head(server.index, server.name, server.id, 2)
        lines.append(Line((*head.spans, Span(f"  ({server.type})", "dim")), 2))
        lines.append(Line(clip(server.arguments, limit), 6, "arguments", "chars"))
        if server.error is not None:
            lines += _error_lines(server.error, 6, "warn")
    if result.custom_calls:
        lines += _section(f"{plural(len(result.custom_calls), 'custom tool call')} (free text)")
    for custom in result.custom_calls:
        lines.append(_head(custom.index, custom.name, custom.call_id, 2))
        lines.append(Line(clip(custom.input, limit), 6, "input", "chars"))
    return lines


def _warnings(result: StitchResult) -> list[Line]:
    if not result.warnings:
        return []
    names = call_names(result)
    lines = _section(plural(len(result.warnings), "warning"), "warn")
    for warning in result.warnings:
        if isinstance(warning, CallWarning):
            about = (*_call_label(warning.index, names.get(warning.index)), Span(": "))
        else:
            about = (Span("stream: "),)
        error = warning.error
        lines.append(Line((*about, Span(f"{error.code}: ", "warn"), Span(str(error))), 2, hang=2))
    return lines


def _stream_error(result: StitchResult) -> list[Line]:
    if result.stream_error is None:
        return []
    return [*_section("stream error", "bad"), *_error_lines(result.stream_error, 2, "bad")]


def _turn(replay: Replay, limit: int | None) -> list[Line]:
    """The turn in stream order: reasoning (dimmed), each run of text apart, each call
    with its outcome."""
    items = turn(replay.steps)
    if not items:
        return []
    result = replay.result
    outcomes: dict[int, Span] = {c.index: Span("ready", "ok") for c in result.calls}
    for dropped in result.discarded:
        outcomes[dropped.index] = Span(f"discarded ({dropped.error.code})", "bad")
    names = call_names(result)
    lines = _section("the turn, in stream order")
    for item in items:
        if isinstance(item, int):
            outcome = outcomes.get(item, Span("never finished", "warn"))
            lines.append(Line((*_call_label(item, names.get(item)), Span(": "), outcome), 2))
        else:
            lines += _turn_item(item, limit)
    return lines


def _dimmed(text: str, limit: int | None) -> list[Line]:
    shown = clip(text, limit)
    lines = _paragraph(shown[0].text, 6, "dim")
    if len(shown) > 1:
        lines.append(Line((shown[1],), 6))
    return lines


def _turn_item(
    item: Run | ReasoningBlock | ServerToolCall | CustomToolCall, limit: int | None
) -> list[Line]:
    if isinstance(item, ReasoningBlock):
        about = [item.kind, plural(len(item.text), "character")]
        if item.redacted:
            about.append("redacted")
        if item.signature is not None:
            about.append("signed")
        head = Line((Span(f"reasoning ({', '.join(about)})", "dim"),), 2)
        body = _dimmed(item.text, limit)
        if item.summary:
            body.append(Line((Span("summary", "dim"),), 6))
            for piece in item.summary:
                body += _paragraph(piece, 8, "dim")
        return [head, *body]
    if isinstance(item, Run):
        text = "".join(item.pieces)
        size = plural(len(text), "character")
        if item.kind == "reasoning":
            return [Line((Span(f"reasoning ({size})", "dim"),), 2), *_dimmed(text, limit)]
        style = "bad" if item.kind == "refusal" else ""
        return [Line((Span(f"{item.kind} ({size})", style),), 2), *_paragraph(text, 6)]
    kind = "server call" if isinstance(item, ServerToolCall) else "custom call"
    return [Line((Span(f"{kind} "), Span(item.name or "(no name)", "name")), 2)]


# -- the timeline: replay --timeline and demo ------------------------------------------------

TIMELINE_COLUMNS = (
    Column("event", right=True),
    Column("byte", right=True),
    Column("what"),
    Column("detail"),
)


def timeline(steps: Iterable[Step], limit: int | None = ROW_CHARS) -> Table:
    """Every event with the moment it came out: the provider events and bytes read then."""
    rows = tuple(_row(step, limit) for step in steps)
    return Table(TIMELINE_COLUMNS, rows, indent=0)


def _row(step: Step, limit: int | None) -> Row:
    what, detail, below = _describe(step, limit)
    where = step.where
    return Row(((Span(n(where.event)),), (Span(n(where.byte)),), what, detail), below)


_Described = tuple[tuple[Span, ...], tuple[Span, ...], tuple[str, ...]]


def _describe(step: Step, limit: int | None) -> _Described:
    event = step.event
    described = _describe_call(event, step.state, limit)
    if described is not None:
        return described
    return _describe_stream(event, limit)


def _describe_call(event: Event, state: str, limit: int | None) -> _Described | None:
    detail: tuple[Span, ...]
    if isinstance(event, CallStarted):
        detail = (
            Span("started "),
            Span(event.name or "?", "name"),
            Span(f"  id {event.id}", "dim"),
        )
        return (Span(f"call {event.index}"),), detail, ()
    if isinstance(event, ArgumentsDelta):
        return (
            (Span(f"call {event.index}"),),
            (
                Span(f"+ {_short(event.fragment, 28):<30} "),
                Span(state, "dim"),
            ),
            (),
        )
    if isinstance(event, CallReady):
        call = event.call
        detail = (
            Span("READY ", "ok"),
            Span(call.name, "name"),
            Span(" "),
            *clip(call.arguments, limit),
        )
        return (Span(f"call {call.index}"),), detail, ()
    if isinstance(event, CallDiscarded):
        error = event.error
        snippet = getattr(error, "snippet", None)
        below = tuple(snippet.splitlines()) if isinstance(snippet, str) and snippet else ()
        detail = (Span("DISCARDED ", "bad"), Span(f"{error.code}: ", "bad"), Span(str(error)))
        return (Span(f"call {event.index}"),), detail, below
    if isinstance(event, CallWarning):
        detail = (Span("warning ", "warn"), Span(f"{event.error.code}: "), Span(str(event.error)))
        return (Span(f"call {event.index}"),), detail, ()
    return None


def _describe_stream(event: Event, limit: int | None) -> _Described:
    detail: tuple[Span, ...]
    if isinstance(event, TextDelta):
        return (Span("text"),), (Span(_short(event.text, 60)),), ()
    if isinstance(event, ReasoningDelta):
        return (Span("reasoning", "dim"),), (Span(_short(event.text, 60), "dim"),), ()
    if isinstance(event, ReasoningBlock):
        signed = ", signed" if event.signature is not None else ""
        ends = f"block ends: {event.kind}, {plural(len(event.text), 'character')}{signed}"
        return (Span("reasoning", "dim"),), (Span(ends, "dim"),), ()
    if isinstance(event, RefusalDelta):
        return (Span("refusal", "bad"),), (Span(_short(event.text, 60)),), ()
    if isinstance(event, TextSignature):
        return (
            (Span("text"),),
            (Span(f"signature ({plural(len(event.signature), 'character')})", "dim"),),
            (),
        )
    if isinstance(event, FinishReason):
        return (Span("finish"),), (Span(event.reason, "name"),), ()
    if isinstance(event, Usage):
        return (Span("usage"),), (Span(_usage(event.usage)),), ()
    if isinstance(event, StreamFailed):
        detail = (
            Span("ERROR ", "bad"),
            Span(f"{event.error.code}: ", "bad"),
            Span(str(event.error)),
        )
        return (Span("stream"),), detail, ()
    if isinstance(event, StreamWarning):
        detail = (Span("warning ", "warn"), Span(f"{event.error.code}: "), Span(str(event.error)))
        return (Span("stream"),), detail, ()
    if isinstance(event, ServerToolCall):
        detail = (
            Span("server call ", "dim"),
            Span(event.name or "?", "name"),
            Span(" "),
            *clip(event.arguments, limit),
        )
        return (Span(f"call {event.index}"),), detail, ()
    if isinstance(event, CustomToolCall):
        detail = (
            Span("custom call ", "dim"),
            Span(event.name or "?", "name"),
            Span(" "),
            *clip(event.input, limit),
        )
        return (Span(f"call {event.index}"),), detail, ()
    return (Span(type(event).__name__),), (), ()
