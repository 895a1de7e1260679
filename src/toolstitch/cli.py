"""The ``toolstitch`` command: replay recorded streams, or watch the bundled demo.

    toolstitch replay FILE [--provider auto|openai-chat|openai-responses|anthropic|gemini|
                                       bedrock-converse|cohere-chat|ollama-chat]
                           [--tools TOOLS.json] [--on-schema-violation discard|warn]
                           [--id-prefix PREFIX] [--json]
    toolstitch demo [EXAMPLE]
    toolstitch                      (the demo)

``replay`` reassembles the tool calls of a recorded response body. The plain output is for
people: each call with its arguments and where in the stream it became ready, compared to
the stream's end; discarded calls with their errors and caret snippets; warnings; the
stream's error; the text. ``--json`` prints exactly one JSON object (see ``report``).
``--tools`` declares the tools the model was given, as ``Assembler(tools=...)`` takes them:
calls to unknown tools and calls that break their schema then show as discarded (or, with
``--on-schema-violation warn``, as warnings), like any other. ``--id-prefix PREFIX`` gives
calls that arrive without an id ``PREFIX<position>`` (their 0-based order in the stream)
instead of ``toolstitch_call_<index>``: ``Stitcher(id_factory=...)`` for the one kind of
factory a command line can state.
Exit status: 0 when the stream was read (even if calls were discarded), 2 for an unreadable
file, a ``--tools`` file that is not a tool list, or an unknown format, with a one-line
message on stderr.

Only the standard library is used, and the output is deterministic.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, TextIO

from toolstitch.stitch.stitcher import IdFactory, Stitcher, StitchResult
from toolstitch.vocab.call_events import (
    ArgumentsDelta,
    CallDiscarded,
    CallReady,
    CallStarted,
    CallWarning,
    Event,
)
from toolstitch.vocab.errors import StreamDecodeError, StreamError
from toolstitch.vocab.stream_events import (
    FinishReason,
    ServerToolCall,
    StreamFailed,
    StreamWarning,
    TextDelta,
)

from ._version import __version__
from .vocab.native import REASON as _NATIVE_REASON
from .adapters import PROVIDERS

__all__ = ["main", "report"]

EXIT_OK = 0
EXIT_UNREADABLE = 2


class _Failure(Exception):
    """A one-line reason to exit with status 2."""


@dataclass(frozen=True, slots=True)
class _Where:
    event: int
    byte: int


@dataclass(frozen=True, slots=True)
class _Replay:
    result: StitchResult
    timeline: list[tuple[_Where, Event]]
    total: _Where


def _pieces(body: bytes) -> list[bytes]:
    """The body cut after every line, so that each feed completes at most one event."""
    return body.splitlines(keepends=True)


def _replay(body: bytes, provider: str, options: Mapping[str, Any]) -> _Replay:
    stitcher = Stitcher(provider, **options)
    timeline: list[tuple[_Where, Event]] = []
    try:
        for piece in _pieces(body):
            events = stitcher.feed(piece)
            if events:
                where = _Where(stitcher.events_read, stitcher.bytes_read)
                timeline.extend((where, event) for event in events)
        events = stitcher.close()
    except StreamDecodeError as exc:
        raise _Failure(exc.message) from None
    total = _Where(stitcher.events_read, stitcher.bytes_read)
    timeline.extend((total, event) for event in events)
    return _Replay(stitcher.result, timeline, total)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise _Failure(f"cannot read {path}: {reason}") from None


def _tools(path: str) -> object:
    """The tool declarations in the JSON file ``path``, as the ``Assembler`` reads them.

    The declarations are checked here, before any stream is read, so that a file that is
    not a tool list is a reason to exit like an unreadable input.
    """
    try:
        tools = json.loads(_read(path))
    except ValueError as exc:  # also a UnicodeDecodeError
        raise _Failure(f"{path} is not JSON: {exc}") from None
    try:
        if tools is None:
            raise TypeError("the file holds null")
        Stitcher(tools=tools)
    except (TypeError, ValueError) as exc:
        reason = " ".join(str(exc).split())
        raise _Failure(f"{path} is not a tool list: {reason}") from None
    except ImportError as exc:  # the schema checks need the jsonschema extra
        raise _Failure(str(exc)) from None
    return tools


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``Stitcher`` keywords the command line asks for."""
    options: dict[str, Any] = {"on_schema_violation": args.on_schema_violation}
    if args.tools is not None:
        options["tools"] = _tools(args.tools)
    if args.id_prefix is not None:
        options["id_factory"] = _prefixed(args.id_prefix)
    return options


def _prefixed(prefix: str) -> IdFactory:
    """The ``--id-prefix`` factory: ``PREFIX<position>``."""

    def factory(index: int, position: int) -> str:
        return f"{prefix}{position}"

    return factory


# -- JSON ------------------------------------------------------------------------------------


def _error_json(error: StreamError | None) -> dict[str, str] | None:
    if error is None:
        return None
    return {"code": error.code, "message": error.message}


def report(result: StitchResult) -> dict[str, Any]:
    """The ``--json`` object for ``result`` (its keys are a public contract)::

        {"provider": str,
         "calls": [{"index", "id", "name", "arguments"}],
         "discarded": [{"index", "id", "name", "arguments", "code", "message"}],
         "warnings": [{"index", "code", "message"}],
         "server_calls": [{"index", "id", "name", "type", "arguments"}],
         "stream_error": {"code", "message"} | null,
         "finish_reason": str | null,
         "text": str}

    ``arguments`` is the JSON text as streamed; calls are in stream order. A warning about
    the stream as a whole has ``"index": null``.
    """
    warnings: list[dict[str, Any]] = []
    for warning in result.warnings:
        index = warning.index if isinstance(warning, CallWarning) else None
        warnings.append(
            {"index": index, "code": warning.error.code, "message": warning.error.message}
        )
    return {
        "provider": result.provider or "unknown",
        "calls": [
            {"index": c.index, "id": c.id, "name": c.name, "arguments": c.arguments}
            for c in result.calls
        ],
        "discarded": [
            {
                "index": d.index,
                "id": d.id,
                "name": d.name,
                "arguments": d.arguments,
                "code": d.error.code,
                "message": d.error.message,
            }
            for d in result.discarded
        ],
        "warnings": warnings,
        "server_calls": [
            {
                "index": s.index,
                "id": s.id,
                "name": s.name,
                "type": s.type,
                "arguments": s.arguments,
            }
            for s in result.server_calls
        ],
        "stream_error": _error_json(result.stream_error),
        "finish_reason": result.finish_reason,
        "text": result.text,
    }


# -- plain text ------------------------------------------------------------------------------


def _n(value: int) -> str:
    return f"{value:,}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _at(where: _Where, total: _Where) -> str:
    text = f"event {_n(where.event)} of {_n(total.event)}"
    if total.byte:
        text += f" (byte {_n(where.byte)} of {_n(total.byte)})"
    if where == total:
        text += ", at the end of the stream"
    return text


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _error_lines(error: Exception, prefix: str) -> list[str]:
    code = getattr(error, "code", type(error).__name__)
    lines = [f"{prefix}{code}: {error}"]
    snippet = getattr(error, "snippet", None)
    if isinstance(snippet, str) and snippet:
        lines.append(_indent(snippet, prefix + "  "))
    return lines


def _label(index: int | None, name: str | None, call_id: str | None) -> str:
    where = "-" if index is None else str(index)
    return f"[{where}] {name or '(no name)'}  id {call_id or '(none)'}"


def _positions(replay: _Replay) -> tuple[dict[int, _Where], dict[int, _Where]]:
    """Where each call became ready, and where each was (first) discarded."""
    ready_at: dict[int, _Where] = {}
    discarded_at: dict[int, _Where] = {}
    for where, event in replay.timeline:
        if isinstance(event, CallReady):
            ready_at[event.call.index] = where
        elif isinstance(event, CallDiscarded):
            discarded_at.setdefault(event.index, where)
    return ready_at, discarded_at


def _write_lines(lines: list[str], out: TextIO) -> None:
    for line in lines:
        out.write(line + "\n")


def _plain_head(path: str, result: StitchResult, total: _Where, given: str, out: TextIO) -> None:
    how = "detected" if given == "auto" else "given"
    write = out.write
    write(f"replay {path}\n")
    write(f"provider: {result.provider or 'unknown'} ({how})\n")
    size = f", {_n(total.byte)} bytes" if total.byte else ""
    write(f"stream: {_plural(total.event, 'event')}{size}; ")
    write(f"finish reason: {result.finish_reason or '(none)'}\n")


def _plain_calls(
    result: StitchResult, ready_at: dict[int, _Where], total: _Where, out: TextIO
) -> None:
    write = out.write
    write(f"\n{_plural(len(result.calls), 'call')} ready\n")
    for call in result.calls:
        write(f"  {_label(call.index, call.name, call.id)}\n")
        write(f"      arguments: {call.arguments}\n")
        ready = ready_at.get(call.index)
        if ready is not None:
            write(f"      ready at {_at(ready, total)}\n")


def _plain_discarded(
    result: StitchResult, discarded_at: dict[int, _Where], total: _Where, out: TextIO
) -> None:
    if not result.discarded:
        return
    write = out.write
    write(f"\n{_plural(len(result.discarded), 'call')} discarded\n")
    for item in result.discarded:
        write(f"  {_label(item.index, item.name, item.id)}\n")
        _write_lines(_error_lines(item.error, "      "), out)
        write(f"      arguments: {item.arguments!r}\n")
        ended = discarded_at.get(item.index)
        if ended is not None:
            write(f"      discarded at {_at(ended, total)}\n")


def _plain_server_calls(result: StitchResult, out: TextIO) -> None:
    if not result.server_calls:
        return
    write = out.write
    write(f"\n{_plural(len(result.server_calls), 'server tool call')} ")
    write("(run by the provider, never dispatched)\n")
    for server in result.server_calls:
        write(f"  {_label(server.index, server.name, server.id)}  ({server.type})\n")
        write(f"      arguments: {server.arguments}\n")
        if server.error is not None:
            _write_lines(_error_lines(server.error, "      "), out)


def _plain_warnings(result: StitchResult, out: TextIO) -> None:
    if not result.warnings:
        return
    out.write(f"\n{_plural(len(result.warnings), 'warning')}\n")
    for warning in result.warnings:
        index = warning.index if isinstance(warning, CallWarning) else None
        _write_lines(_error_lines(warning.error, f"  [{'-' if index is None else index}] "), out)


def _plain_stream(result: StitchResult, out: TextIO) -> None:
    """The stream's own error, and its text."""
    if result.stream_error is not None:
        out.write("\nstream error\n")
        _write_lines(_error_lines(result.stream_error, "  "), out)
    if result.text:
        out.write(f"\ntext ({_plural(len(result.text), 'character')})\n")
        out.write(_indent(result.text, "  ") + "\n")


def _plain(path: str, replay: _Replay, given: str, out: TextIO) -> None:
    result, total = replay.result, replay.total
    ready_at, discarded_at = _positions(replay)
    _plain_head(path, result, total, given, out)
    _plain_calls(result, ready_at, total, out)
    _plain_discarded(result, discarded_at, total, out)
    _plain_server_calls(result, out)
    _plain_warnings(result, out)
    _plain_stream(result, out)


# -- demo ------------------------------------------------------------------------------------


def _examples() -> list[str]:
    folder = resources.files("toolstitch").joinpath("examples")
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".sse"))


def _example_bytes(name: str) -> bytes:
    return resources.files("toolstitch").joinpath("examples").joinpath(name).read_bytes()


def _short(text: str, width: int = 60) -> str:
    shown = repr(text)
    return shown if len(shown) <= width else shown[: width - 2] + "…'"


def _demo(names: Sequence[str], out: TextIO) -> None:
    write = out.write
    for number, name in enumerate(names):
        if number:
            write("\n")
        body = _example_bytes(name)
        stitcher = Stitcher()
        write(f"demo: examples/{name}, replayed event by event\n")
        lines: list[str] = []
        for piece in _pieces(body):
            for event in stitcher.feed(piece):
                state = ""
                if isinstance(event, ArgumentsDelta):
                    snap = {s.index: s for s in stitcher.calls}.get(event.index)
                    state = str(snap.state) if snap is not None else ""
                lines.append(_demo_line(stitcher.events_read, event, state))
        for event in stitcher.close():
            lines.append(_demo_line(stitcher.events_read, event, ""))
        write(f"provider: {stitcher.provider}\n\n")
        write("".join(lines))
        result = stitcher.result
        write(
            f"\nresult: {_plural(len(result.calls), 'call')} ready, "
            f"{len(result.discarded)} discarded; finish reason {result.finish_reason}\n"
        )
    write("\nReplay a recorded stream of your own: toolstitch replay FILE\n")


def _demo_line(at: int, event: Event, state: str) -> str:
    head = f"event {at:>3}  "
    if isinstance(event, TextDelta):
        return f"{head}text      {_short(event.text)}\n"
    if isinstance(event, CallStarted):
        return f"{head}call {event.index}    started    {event.name or '?'}  id {event.id}\n"
    if isinstance(event, ArgumentsDelta):
        return f"{head}call {event.index}    + {_short(event.fragment, 28):<30} {state}\n"
    if isinstance(event, CallReady):
        call = event.call
        return f"{head}call {call.index}    READY      {call.name}({call.arguments})\n"
    if isinstance(event, CallDiscarded):
        lines = [f"{head}call {event.index}    DISCARDED  {event.error.code}: {event.error}"]
        snippet = getattr(event.error, "snippet", None)
        if isinstance(snippet, str) and snippet:
            lines.append(_indent(snippet, " " * 26))
        return "\n".join(lines) + "\n"
    if isinstance(event, CallWarning):
        return f"{head}call {event.index}    warning    {event.error.code}: {event.error}\n"
    if isinstance(event, FinishReason):
        return f"{head}finish    {event.reason}\n"
    if isinstance(event, StreamFailed):
        return f"{head}error     {event.error.code}: {event.error}\n"
    if isinstance(event, StreamWarning):
        return f"{head}warning   {event.error.code}: {event.error}\n"
    if isinstance(event, ServerToolCall):
        return f"{head}server    {event.name}({event.arguments})\n"
    return ""


# -- entry point -----------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolstitch",
        description="Reassemble streamed LLM tool calls from recorded provider streams.",
    )
    parser.add_argument(
        "--version", action="version", version=f"toolstitch {__version__}: {_NATIVE_REASON}"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    replay = commands.add_parser(
        "replay",
        help="reassemble the tool calls of a recorded stream",
        description="Reassemble the tool calls of a recorded response body (SSE, "
        "Gemini's JSON array, NDJSON such as Ollama's, or an AWS event stream: Bedrock).",
    )
    replay.add_argument("file", metavar="FILE", help="the recorded response body")
    replay.add_argument(
        "--provider",
        choices=("auto", *PROVIDERS),
        default="auto",
        help="the stream's API (default: detect it)",
    )
    replay.add_argument(
        "--tools",
        metavar="TOOLS.json",
        help="check the calls against these tool declarations (a JSON file: the tools list "
        "sent to OpenAI, Anthropic or Gemini, or an object mapping tool names to JSON Schemas)",
    )
    replay.add_argument(
        "--on-schema-violation",
        choices=("discard", "warn"),
        default="discard",
        help="with --tools, what a call that breaks its schema gets: discarded (the default) "
        "or a warning",
    )
    replay.add_argument(
        "--id-prefix",
        metavar="PREFIX",
        help="ids for calls that arrive without one: PREFIX followed by the call's 0-based "
        "position in the stream (default: toolstitch_call_<index>)",
    )
    replay.add_argument("--json", action="store_true", help="print exactly one JSON object instead")
    demo = commands.add_parser(
        "demo",
        help="replay the bundled example streams, fragment by fragment",
        description="Replay the bundled example streams, one line per event.",
    )
    demo.add_argument(
        "example",
        nargs="?",
        choices=_examples(),
        metavar="EXAMPLE",
        help=f"one of: {', '.join(_examples())} (default: all)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    out = sys.stdout
    reconfigure = getattr(out, "reconfigure", None)
    if callable(reconfigure):
        # A terminal that cannot show a character gets an escape, not a crash.
        with contextlib.suppress(ValueError, OSError, TypeError):
            reconfigure(errors="backslashreplace")
    try:
        if args.command == "replay":
            options = _options(args)
            replay = _replay(_read(args.file), args.provider, options)
            if args.json:
                out.write(json.dumps(report(replay.result), ensure_ascii=False, indent=2))
                out.write("\n")
            else:
                _plain(args.file, replay, args.provider, out)
        else:
            example = getattr(args, "example", None)
            _demo([example] if example else _examples(), out)
    except _Failure as exc:
        print(f"toolstitch: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
