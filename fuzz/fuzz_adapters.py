"""Fuzz target: each provider adapter fed arbitrary JSON events, through the public API.

Input: byte 0 picks the adapter (``toolstitch.adapters.ADAPTERS``, in ``PROVIDERS`` order),
byte 1 the ``choice``; the rest is one event per line, ``event-name<TAB>json`` or just
``json``. A line that is JSON is fed as it is (mutations of the seed streams, which are real
recorded events); a line that is not is turned, deterministically from its bytes, into a
JSON value built from the providers' own vocabulary (``type``, ``index``, ``delta``,
``tool_calls``, ``partial_json``, ``functionCall``, ``partialArgs``, ``output_index``…) and
values of every JSON type, so type confusion is explored too.

Expected: nothing escapes ``feed`` or ``close`` for a mapping (a non-mapping must raise
``TypeError``). Checked with ``_harness.Ledger``: every call starts once and ends once, each
ready call is valid, each discard agrees with the reference checker, and after ``close``
nothing is pending.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import atheris
from _harness import Ledger, known_bug

with atheris.instrument_imports(include=["toolstitch"]):
    from toolstitch import Assembler, Event
    from toolstitch.adapters import ADAPTERS, PROVIDERS
    from toolstitch.stitch.driver import Driver

KEYS = [
    "type",
    "index",
    "id",
    "name",
    "arguments",
    "function",
    "tool_calls",
    "delta",
    "choices",
    "finish_reason",
    "content",
    "role",
    "content_block",
    "partial_json",
    "input",
    "text",
    "thinking",
    "message",
    "usage",
    "stop_reason",
    "event",
    "output_index",
    "item_id",
    "call_id",
    "item",
    "output",
    "response",
    "status",
    "sequence_number",
    "incomplete_details",
    "reason",
    "candidates",
    "parts",
    "functionCall",
    "args",
    "partialArgs",
    "jsonPath",
    "stringValue",
    "numberValue",
    "boolValue",
    "nullValue",
    "willContinue",
    "finishReason",
    "usageMetadata",
    "thought",
    "error",
    "code",
    "model",
    "object",
    "reasoning_content",
    "refusal",
    "logprobs",
]
STRINGS = [
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_start",
    "message_delta",
    "message_stop",
    "input_json_delta",
    "text_delta",
    "tool_use",
    "server_tool_use",
    "thinking_delta",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
    "response.completed",
    "response.created",
    "function_call",
    "function",
    "tool_calls",
    "stop",
    "length",
    "STOP",
    "MAX_TOKENS",
    "error",
    "call_1",
    "run",
    "$",
    "$.a",
    "$.a[0]",
    "$.b.c",
    "{}",
    "{",
    "}",
    '{"a":',
    "[1,",
    '"x"]}',
    "null",
]


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def next(self) -> int:
        if self.pos >= len(self.data):
            return 0
        value = self.data[self.pos]
        self.pos += 1
        return value


def _value(src: _Bytes, depth: int) -> Any:
    kind = src.next() % 12
    if kind <= 3 and depth < 5:
        return {KEYS[src.next() % len(KEYS)]: _value(src, depth + 1) for _ in range(kind + 1)}
    if kind == 4 and depth < 5:
        return [_value(src, depth + 1) for _ in range(src.next() % 3)]
    if kind in (5, 6):
        return STRINGS[src.next() % len(STRINGS)]
    if kind == 7:
        return src.next() - 2
    if kind == 8:
        return None
    if kind == 9:
        return bool(src.next() & 1)
    if kind == 10:
        return src.next() / 7
    start = src.pos
    src.pos = min(len(src.data), src.pos + src.next() % 16)
    return src.data[start : src.pos].decode("utf-8", "replace")


def events(body: bytes) -> list[tuple[str | None, Any]]:
    out: list[tuple[str | None, Any]] = []
    for line in body.split(b"\n")[:500]:
        name: str | None = None
        head, tab, rest = line.partition(b"\t")
        if tab and len(head) < 64:
            name = head.decode("utf-8", "replace") or None
            line = rest
        try:
            payload = json.loads(line)
        except (ValueError, RecursionError):
            payload = _value(_Bytes(line), 0)
        out.append((name, payload))
    return out


def run(data: bytes, ledger: Ledger) -> None:
    if len(data) < 2:
        return
    provider = PROVIDERS[data[0] % len(PROVIDERS)]
    assembler = Assembler()
    adapter = ADAPTERS[provider](choice=data[1] % 3, records=assembler)
    drive = Driver(assembler).drive
    for name, payload in events(data[2:]):
        if not isinstance(payload, dict):
            try:
                adapter.feed(payload, event=name)
            except TypeError:
                continue
            raise AssertionError(f"{provider} accepted a {type(payload).__name__} event")
        found: list[Event] = []
        drive(adapter.feed(payload, event=name), found)
        ledger.take(found, {snap.index: snap.arguments for snap in assembler.calls})
        assert assembler.pending == ledger.open
    found = []
    drive(adapter.close(), found)
    ledger.take(found, {snap.index: snap.arguments for snap in assembler.calls})
    assert assembler.pending == 0
    assert ledger.open == 0, "a call never ended"


def TestOneInput(data: bytes) -> None:  # noqa: N802  (atheris' name)
    ledger = Ledger()
    try:
        run(data, ledger)
    except (AssertionError, RuntimeError, TypeError) as exc:
        if known_bug(exc, ledger) is None:
            raise


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
