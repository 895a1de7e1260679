"""Fuzz target: the native ``Stitcher`` (the C event path) against the pure-Python one.

Both are fed the same Anthropic events, the pure one on the pure-Python assembler too; any
difference in a feed's events or exception (type and message), in ``close()``, the result or
``events_read``, and any crash, is a finding.

Input format (after ``_harness.decode``): records split by ``\\x1e``, each an op and its text:
``m`` message_start; ``s<i><name>`` a ``tool_use`` block at index ``<i>`` (a digit) starts;
``t<i>`` a text block starts; ``f<i><text>`` an ``input_json_delta`` of ``<text>`` for block
``<i>``; ``k<i>`` a thinking block starts; ``p<i>`` the block stops; ``j<json>`` any JSON
value fed as it parses (anything that is not JSON is fed as a str); ``d`` message_delta;
``e`` message_stop; ``g`` ping; ``c`` close.

``TOOLSTITCH_NATIVE_SO=<path to _native.abi3.so>`` loads that build of the extension (the
sanitizer build of docs/native.md), as for ``fuzz_native.py``:

    python fuzz/fuzz_events.py fuzz/corpus-events -runs=100000
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import fuzz_native  # noqa: F401  (first: loads the build named by TOOLSTITCH_NATIVE_SO)

# isort: split
import atheris
from _harness import decode

from toolstitch import Stitcher
from toolstitch.testing import PythonStitcher
from toolstitch.vocab.native import NATIVE

assert NATIVE, "the C extension is not active"


def _index(text: str) -> int:
    return int(text[:1]) if text[:1].isascii() and text[:1].isdigit() else 0


def event(op: str, text: str) -> object:
    """The event of one record (``None``: not an event)."""
    block = {"type": "content_block_start", "index": _index(text)}
    if op == "m":
        return {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}}
    if op == "s":
        tool = {"type": "tool_use", "id": f"t{text[:1]}", "name": text[1:] or "f", "input": {}}
        return {**block, "content_block": tool}
    if op == "t":
        return {**block, "content_block": {"type": "text", "text": ""}}
    if op == "k":
        thinking = {"type": "thinking", "thinking": text[1:], "signature": ""}
        return {**block, "content_block": thinking}
    if op in ("e", "g"):
        return {"type": "message_stop" if op == "e" else "ping"}
    if op == "f":
        delta = {"type": "input_json_delta", "partial_json": text[1:]}
        return {"type": "content_block_delta", "index": _index(text), "delta": delta}
    if op == "p":
        return {"type": "content_block_stop", "index": _index(text)}
    if op == "d":
        return {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}}
    if op == "j":
        try:
            value: object = json.loads(text)
        except ValueError:
            return text
        return value
    return None


def outcome(action: Callable[[], object]) -> tuple[object, ...]:
    """What a step gave: its result, or the type and message of what it raised."""
    try:
        return ("result", action())
    except Exception as exc:  # every exception must be the same on both paths
        return ("raised", type(exc), str(exc))


def run(data: bytes) -> None:
    native, python = Stitcher(provider="anthropic"), PythonStitcher(provider="anthropic")
    for record in decode(data).split("\x1e")[:500]:
        op, text = record[:1], record[1:]
        if op == "c":
            assert outcome(native.close) == outcome(python.close), record
            continue
        item = event(op, text)
        if item is None:
            continue
        twin = json.loads(json.dumps(item)) if op != "j" or isinstance(item, str) else item
        got = outcome(lambda: native.feed(item))  # noqa: B023  (called at once)
        assert got == outcome(lambda: python.feed(twin)), record  # noqa: B023
    assert outcome(native.close) == outcome(python.close)
    assert native.result == python.result
    assert native.events_read == python.events_read


def TestOneInput(data: bytes) -> None:  # noqa: N802  (atheris' name)
    run(data)


#: Seeds (``--seeds DIR`` writes them): whole streams, split fragments, odd events.
SEEDS = [
    'm\x1es0f\x1ef0{"a"\x1ef0: 1}\x1ep0\x1ed\x1ec',
    'm\x1es0get_weather\x1ef0{"city": "Par\x1ef0is"}\x1ep0\x1es1g\x1ef1{}\x1ep1\x1ec',
    'm\x1et0\x1es1f\x1ef1{"s": "\\ud83d\x1ef1\\ude00"}\x1ep1',
    'm\x1es0f\x1ef0{"a": tru\x1ef0x}\x1ep0',
    'm\x1es0f\x1ef0\x1ef0{\x1ef1}\x1ej{"type": "content_block_delta", "index": true}',
    'm\x1es0f\x1ej{"type": "content_block_delta", "index": 0, "delta": [1]}\x1ef0{}\x1ec\x1ef0{}',
    "s0f\x1ef0{}\x1ej[]\x1ejnot json\x1em\x1ef0{}",
    'm\x1es0f\x1ef0{"a"\x1ep0\x1ef0:1}\x1ep0\x1ep0\x1ek1\x1ep1\x1eg\x1ed\x1ee\x1ec',
    "m\x1ek0x\x1es0f\x1ef0{}\x1ep0\x1em\x1es0g\x1ef0{}\x1ep0\x1ee",
]


def write_seeds(folder: str) -> None:
    from pathlib import Path

    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    for number, seed in enumerate(SEEDS):
        (path / f"seed-{number}").write_bytes(seed.encode())


def main() -> None:
    if sys.argv[1:2] == ["--seeds"]:
        write_seeds(sys.argv[2])
        return
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
