"""Fuzz target: any text through the text layer (``stitch(chunks, text_format=NAME)``).

Input: byte 0 picks the format (``FORMATS``, every format ``TEXT_FORMATS`` holds at import,
by its position modulo their number); byte 1 holds the switches: bit 0 primes the reasoning
(``primed_reasoning``, in a format that has reasoning), bits 1-2 the tools (``TOOL_SETS``:
none, typed parameters, names only, typed through ``enum``/``anyOf``), bits 3-7 the number
``n`` (0-31) of chunking bytes that follow; then those ``n`` bytes, the chunk sizes, used in
turn (size ``b % 48``; 0 is an empty chunk); ``n = 0`` cuts the text into one-character
chunks. The rest is the model's text (UTF-8, invalid bytes replaced: the reader takes
``str``).

The text is stitched twice: in the chunks the input names, and whole. Nothing may escape
either (the reader never raises on any text; there is no expected exception). Checked on
the events of the chunked run:

* every ``CallStarted`` index starts once and ends exactly once, with ``CallReady`` or
  ``CallDiscarded``; nothing about a call comes before its start or, warnings aside, after
  its end;
* a ready call is valid (``_harness.check_ready``: name, id, strict ``json.loads`` to exactly
  ``parsed_arguments``, a dict, that the reference checker accepts as one closed object) and
  its ``arguments`` are exactly the concatenation of its ``ArgumentsDelta`` fragments, or
  ``"{}"`` (``empty_arguments``) when they were empty or whitespace, or the object they start
  with when only whitespace or text reported as ``TrailingArguments`` follows it (the core's
  rules, as in ``_harness.Ledger``);
* every tolerated variant reported is one the format declares;
* a discard's error placed in the text (``MalformedArguments``, ``MalformedCall``) has
  ``0 <= offset <= len(text)`` and the line and column of that offset in the text (or, left
  in its arguments, not copied from the text, in the arguments); one placed in the arguments
  (``SchemaViolation``, ``LimitExceeded``: "where in the arguments text") has ``0 <= offset
  <= len(arguments)``.

Then the chunking-independence property: the whole text gives the same outcome, i.e. the
same calls (index, id, name, arguments), text and reasoning, the same discards (index, code,
and the offset, line and column of an error placed in the text), and the same set of warning
codes.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from typing import Any

import fuzz_native  # noqa: F401  (first: loads the build named by TOOLSTITCH_NATIVE_SO)

# isort: split
import atheris
from _harness import WS, check_ready

# Under the preloaded sanitizer runtime (TOOLSTITCH_NATIVE_SO: the C text lane under ASan and
# UBSan), instrumenting Python gives no feedback, only cost: the run mutates its seeds instead.
_SANITIZED = bool(os.environ.get("TOOLSTITCH_NATIVE_SO"))

with contextlib.nullcontext() if _SANITIZED else atheris.instrument_imports(include=["toolstitch"]):
    from toolstitch import (
        ArgumentsDelta,
        CallDiscarded,
        CallReady,
        CallStarted,
        CallWarning,
        StitchResult,
        TrailingArguments,
        stitch,
    )
    from toolstitch.text.formats import TEXT_FORMATS
    from toolstitch.vocab.errors import _OffsetError

#: The formats byte 0 picks from, in ``TEXT_FORMATS`` order (seeds.py uses the same).
FORMATS: tuple[str, ...] = tuple(TEXT_FORMATS)

#: Tool names the seeds write (kept few: ``stitch`` normalizes the tools on every run).
TOOL_NAMES = ("f", "get_weather", "search")


def _tools(properties: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "parameters": {"type": "object", "properties": properties},
            },
        }
        for name in TOOL_NAMES
    ]


#: Parameters typed as non-strings (their raw values go through ``typed_value``), and strings.
_TYPED = {
    "a": {"type": "integer"},
    "b": {"type": "object"},
    "n": {"type": "number"},
    "items": {"type": "array"},
    "enabled": {"type": "boolean"},
    "v": {},
    "city": {"type": "string"},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
}
#: The same parameters typed by ``enum``, ``anyOf``, a list of types, ``const``.
_TYPED_OTHERWISE = {
    "a": {"enum": [1, 2, 3]},
    "b": {"anyOf": [{"type": "object"}, {"type": "null"}]},
    "n": {"type": ["number", "string"]},
    "items": {"type": "array", "items": {"type": "integer"}},
    "city": {"enum": ["Paris", "Tokyo"]},
    "unit": {"const": "celsius"},
}

#: Bits 1-2 of byte 1: no tools, typed parameters, names only, typed another way.
TOOL_SETS: tuple[list[dict[str, Any]] | None, ...] = (
    None,
    _tools(_TYPED),
    _tools({}),
    _tools(_TYPED_OTHERWISE),
)

MAX_CHUNK = 48


def parse(data: bytes) -> tuple[str, bool, list[dict[str, Any]] | None, list[int], str]:
    """``(format, primed, tools, chunk sizes, text)`` of one input (see the docstring)."""
    fmt = FORMATS[data[0] % len(FORMATS)] if data else FORMATS[0]
    flags = data[1] if len(data) > 1 else 0
    count = flags >> 3
    sizes = [b % MAX_CHUNK for b in data[2 : 2 + count]]
    if not any(sizes):
        sizes = [1]
    text = data[2 + count :].decode("utf-8", "replace")
    primed = bool(flags & 1) and TEXT_FORMATS[fmt].primed is not None  # a format with reasoning
    return fmt, primed, TOOL_SETS[(flags >> 1) & 3], sizes, text


def chunked(text: str, sizes: list[int]) -> list[str]:
    """``text`` cut by ``sizes``, used in turn (0: an empty chunk); an empty text is one
    empty chunk (no chunk at all is an empty source, whose provider ``auto`` cannot tell:
    ``StreamDecodeError``, as for any empty stream)."""
    chunks: list[str] = [] if text else [""]
    pos = k = 0
    while pos < len(text):
        size = sizes[k % len(sizes)]
        k += 1
        chunks.append(text[pos : pos + size])
        pos += size
    return chunks


def _where(error: object) -> tuple[object, ...]:
    if isinstance(error, _OffsetError):
        return (error.offset, error.line, error.column)
    return ()


Outcome = tuple[object, ...]


def outcome(result: StitchResult) -> Outcome:
    """What a text yielded, independent of how it was cut."""
    return (
        [(c.index, c.id, c.name, c.arguments) for c in result.calls],
        result.text,
        result.reasoning,
        [(d.index, d.error.code, *_where(d.error)) for d in result.discarded],
        sorted({w.error.code for w in result.warnings}),
    )


def check_events(events: list[object], text: str) -> None:
    """The invariants of one run's events (see the module docstring)."""
    fragments: dict[int, list[str]] = {}  # the calls started, with their fragments
    ended: set[int] = set()
    trailing = {  # calls with text after their object, reported
        e.index
        for e in events
        if isinstance(e, CallWarning) and isinstance(e.error, TrailingArguments)
    }
    for event in events:
        if isinstance(event, CallStarted):
            assert event.index not in fragments, f"call {event.index} started twice"
            fragments[event.index] = []
        elif isinstance(event, ArgumentsDelta):
            _live(event.index, fragments, ended, "ArgumentsDelta")
            assert event.fragment, "empty ArgumentsDelta"
            fragments[event.index].append(event.fragment)
        elif isinstance(event, CallReady):
            index = event.call.index
            _live(index, fragments, ended, "CallReady")
            ended.add(index)
            check_ready(event.call)
            check_written(event.call.arguments, "".join(fragments[index]), index in trailing)
        elif isinstance(event, CallDiscarded):
            _live(event.index, fragments, ended, "CallDiscarded")
            ended.add(event.index)
            check_position(event, text)
    open_calls = set(fragments) - ended
    assert not open_calls, f"calls {sorted(open_calls)} never ended"


def check_written(arguments: str, written: str, trailing: bool) -> None:
    """A ready call's arguments are its fragments: all of them, or ``"{}"`` when there was
    nothing but whitespace, or the object they start with when only whitespace, or text
    reported as ``TrailingArguments``, follows it."""
    if arguments == written or (arguments == "{}" and not written.strip(WS)):
        return
    assert written.startswith(arguments), f"arguments {arguments!r}, fragments {written!r}"
    rest = written[len(arguments) :]
    assert trailing or not rest.strip(WS), f"unreported text after the object: {rest!r}"


_VARIANT = re.compile(r"tolerated variant '([^']+)'")


def check_variants(fmt: str, result: StitchResult) -> None:
    """Every variant reported (``quirk-text-variant``) is one the format declares."""
    for warning in result.warnings:
        if warning.error.code == "quirk-text-variant":
            found = _VARIANT.search(str(warning.error))
            assert found is not None, str(warning.error)
            assert found[1] in TEXT_FORMATS[fmt].variants, f"{fmt}: undeclared {found[1]!r}"


def _live(index: int, started: dict[int, list[str]], ended: set[int], what: str) -> None:
    assert index in started, f"{what} for call {index}, never started"
    assert index not in ended, f"{what} for call {index}, after its end"


def line_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def check_position(event: CallDiscarded, text: str) -> None:
    error = event.error
    if isinstance(error, _OffsetError):
        offset = error.offset
        assert 0 <= offset <= len(text), f"{error.code} offset {offset} past the text"
        where = (error.line, error.column)
        # placed in the text, or (arguments not copied from it) a position in the arguments
        assert where in (line_column(text, offset), line_column(event.arguments, offset)), (
            f"{error.code} at {offset}: {where}, the text's {line_column(text, offset)}"
        )
        return
    offset: int | None = getattr(error, "offset", None)
    if offset is not None:
        assert 0 <= offset <= len(event.arguments), (
            f"{error.code} offset {offset} outside its arguments {event.arguments!r}"
        )
    assert str(error)


def run(data: bytes) -> None:
    fmt, primed, tools, sizes, text = parse(data)
    chunks = chunked(text, sizes)
    first = stitch(chunks, text_format=fmt, tools=tools, primed_reasoning=primed)
    events: list[object] = list(first)
    check_events(events, text)
    result = first.result
    check_variants(fmt, result)
    whole = stitch([text], text_format=fmt, tools=tools, primed_reasoning=primed).collect()
    found, expected = outcome(result), outcome(whole)
    assert found == expected, "the outcome depends on the chunking"


def TestOneInput(data: bytes) -> None:  # noqa: N802  (atheris' name)
    run(data)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
