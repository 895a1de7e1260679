"""The ``toolstitch`` command: replay recorded streams, or watch the bundled demo.

    toolstitch replay FILE|- [--provider auto|openai-chat|openai-responses|anthropic|gemini|
                                         bedrock-converse|cohere-chat|ollama-chat]
                             [--tools TOOLS.json] [--on-schema-violation discard|warn]
                             [--id-prefix PREFIX] [--timeline] [--full]
                             [--color auto|always|never] [--json]
    toolstitch demo [EXAMPLE] [--color auto|always|never]
    toolstitch --version            (the version, and whether the C or the Python path runs)
    toolstitch                      (the demo)

``replay`` reassembles the tool calls of a recorded response body, read from ``FILE`` or,
for ``-``, from standard input (as bytes). The plain output is for people: the stream, each
call with its arguments and where in the stream it became ready, discarded calls with their
errors and caret snippets, warnings labelled by what they concern (a call, or the stream),
the stream's error, then the turn in stream order (reasoning dimmed, each run of text
apart). ``--timeline`` adds every event with the moment it came out (the same table as
``demo``). ``--json`` prints exactly one JSON object (``report``; docs/cli.md). ``--tools``
declares the tools the model was given, as ``Assembler(tools=...)`` takes them: calls to
unknown tools and calls that break their schema then show as discarded (or, with
``--on-schema-violation warn``, as warnings), like any other. ``--id-prefix PREFIX`` gives
calls that arrive without an id ``PREFIX<position>`` (their 0-based order in the stream)
instead of ``toolstitch_call_<index>``.

Exit status: 0 when every call was ready (and the stream had no error); 1 when a call was
discarded or the stream failed; 2 when the input could not be read or is no known format,
the ``--tools`` file is not a tool list, or the command line is wrong (a one-line message
on stderr; under ``--json`` also a JSON error object on stdout); 141 (128 + SIGPIPE) when
the reader of the output went away (``toolstitch replay … | head``).

Colour only on a terminal, with ``rich`` installed (the ``cli`` extra), and never with
``NO_COLOR``: the rules are in ``_render``. The output is deterministic.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from importlib import resources
from typing import Any, TextIO

from toolstitch._version import __version__
from toolstitch.adapters import PROVIDERS
from toolstitch.text.formats import TEXT_FORMAT_NAMES
from toolstitch.vocab.native import REASON as _NATIVE_REASON

from ._input import (
    Failure,
    Replay,
    Tools,
    is_stream,
    prefixed,
    read_input,
    read_tools,
    replay,
)
from ._render import render, use_colour
from ._report import SCHEMA_VERSION, error_report, report, timeline_report
from ._view import ROW_CHARS, SHOWN_CHARS, Block, Context, Line, Span, plural, summary, timeline

__all__ = ["SCHEMA_VERSION", "main", "report"]

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_UNREADABLE = 2
#: What a shell reports for a command killed by SIGPIPE: the reader left early.
EXIT_BROKEN_PIPE = 128 + 13


def status_of(replay: Replay) -> int:
    """0 when every call was ready, 1 when one was discarded or the stream failed."""
    result = replay.result
    return EXIT_PROBLEM if result.discarded or result.stream_error is not None else EXIT_OK


# -- replay ----------------------------------------------------------------------------------


def _options(args: argparse.Namespace, tools: Tools | None) -> dict[str, Any]:
    """The ``Stitcher`` keywords the command line asks for."""
    options: dict[str, Any] = {"on_schema_violation": args.on_schema_violation}
    if tools is not None:
        options["tools"] = tools.declarations
    if args.id_prefix is not None:
        options["id_factory"] = prefixed(args.id_prefix)
    if args.text_format is not None:
        options["text_format"] = args.text_format
        options["primed_reasoning"] = args.primed_reasoning
    return options


def _replay_command(args: argparse.Namespace, out: TextIO) -> int:
    try:
        tools = None if args.tools is None else read_tools(args.tools)
        body = read_input(args.file)
        provider = args.provider
        if args.text_format is not None and provider == "auto" and not is_stream(body):
            provider = "text"
        done = replay(body, provider, _options(args, tools), states=args.timeline)
    except Failure as exc:
        print(f"toolstitch: {exc.message}", file=sys.stderr)
        if args.json:
            _write_json(error_report(exc.code, exc.message, args.file), out)
        return EXIT_UNREADABLE
    status = status_of(done)
    if args.json:
        found = report(
            done.result,
            done,
            source=args.file,
            tools=tools,
            policy=args.on_schema_violation,
            status=status,
        )
        if args.timeline:
            found["timeline"] = timeline_report(done)
        _write_json(found, out)
        return status
    limit = None if args.full else SHOWN_CHARS
    context = Context(args.file, args.provider, tools, args.on_schema_violation, limit)
    blocks = summary(done, context)
    if args.timeline:
        blocks += [Line(), Line((Span("timeline (each event, when it came out)", "head"),))]
        blocks.append(timeline(done.steps, None if args.full else ROW_CHARS))
    render(blocks, out, colour=use_colour(args.color, out))
    return status


def _write_json(value: object, out: TextIO) -> None:
    out.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


# -- demo ------------------------------------------------------------------------------------


def _examples() -> list[str]:
    folder = resources.files("toolstitch").joinpath("examples")
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".sse"))


def _example_bytes(name: str) -> bytes:
    return resources.files("toolstitch").joinpath("examples").joinpath(name).read_bytes()


def _demo(names: Sequence[str]) -> list[Block]:
    blocks: list[Block] = []
    for number, name in enumerate(names):
        if number:
            blocks.append(Line())
        done = replay(_example_bytes(name), "auto", {}, states=True)
        result = done.result
        blocks += [
            Line((Span(f"demo: examples/{name}, replayed event by event", "head"),)),
            Line((Span(result.provider or "unknown", "name"),), label="provider"),
            Line(),
            timeline(done.steps),
            Line(),
            Line(
                (
                    Span(f"{plural(len(result.calls), 'call')} ready, ", "ok"),
                    Span(f"{len(result.discarded)} discarded", "bad" if result.discarded else ""),
                    Span(f"; finish reason {result.finish_reason}"),
                ),
                label="result",
            ),
        ]
    blocks += [
        Line(),
        Line((Span("Replay a recorded stream of your own: toolstitch replay FILE"),)),
    ]
    return blocks


# -- entry point -----------------------------------------------------------------------------


def _colour_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--color",
        "--colour",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour (with rich installed): auto (the default) colours a terminal unless "
        "NO_COLOR is set, or anything if FORCE_COLOR is set",
    )


def _replay_parser(commands: Any) -> None:
    replay = commands.add_parser(
        "replay",
        help="reassemble the tool calls of a recorded stream",
        description="Reassemble the tool calls of a recorded response body (SSE, "
        "Gemini's JSON array, NDJSON such as Ollama's, or an AWS event stream: Bedrock). "
        "Exit status: 0 every call ready, 1 a call discarded or a stream error, 2 the input "
        "could not be read or the usage was wrong.",
    )
    replay.add_argument("file", metavar="FILE", help="the recorded response body; - reads stdin")
    replay.add_argument(
        "--provider",
        choices=("auto", *PROVIDERS),
        default="auto",
        help="the stream's API (default: detect it; 'text' is a model's raw output, read "
        "with --text-format)",
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
        "--text-format",
        metavar="NAME",
        choices=TEXT_FORMAT_NAMES,
        help="read the tool calls a model wrote into its text in this format (hermes, "
        "qwen3-coder, mistral, … or vLLM's parser name): FILE is the model's raw output "
        "(or, when it is an SSE or event stream, a stream whose text is read as the format)",
    )
    replay.add_argument(
        "--primed-reasoning",
        action="store_true",
        help="with --text-format: the output starts inside reasoning (the prompt ended with "
        "the format's opening reasoning marker, e.g. <think>)",
    )
    replay.add_argument(
        "--id-prefix",
        metavar="PREFIX",
        help="ids for calls that arrive without one: PREFIX followed by the call's 0-based "
        "position in the stream (default: toolstitch_call_<index>)",
    )
    replay.add_argument(
        "--timeline",
        action="store_true",
        help="also show every event with the event number and byte offset it came out at",
    )
    replay.add_argument(
        "--full",
        action="store_true",
        help=f"show long arguments and reasoning whole (default: the first {SHOWN_CHARS} "
        "characters and their size)",
    )
    _colour_option(replay)
    replay.add_argument("--json", action="store_true", help="print exactly one JSON object instead")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolstitch",
        description="Reassemble streamed LLM tool calls from recorded provider streams.",
    )
    parser.add_argument(
        "--version", action="version", version=f"toolstitch {__version__}: {_NATIVE_REASON}"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _replay_parser(commands)
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
    _colour_option(demo)
    return parser


def _run(args: argparse.Namespace, out: TextIO) -> int:
    if args.command == "replay":
        return _replay_command(args, out)
    example = getattr(args, "example", None)
    blocks = _demo([example] if example else _examples())
    render(blocks, out, colour=use_colour(getattr(args, "color", "auto"), out))
    return EXIT_OK


def _quiet_stdout() -> None:
    """The reader of stdout went away: send what Python still flushes at exit to devnull
    (the recipe of the ``signal`` module's documentation, "Note on SIGPIPE")."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


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
        status = _run(args, out)
        out.flush()
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
