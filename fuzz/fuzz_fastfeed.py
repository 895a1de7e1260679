"""Fuzz target: the native ``Assembler`` (the C fast feed) against the pure-Python one.

Input format: ``fuzz_assembler.py``'s records (limits, deltas as ``Delta`` / wire dict / SDK-like
object, things that are not deltas, finish, end, reset), plus ``a`` index, fragment: a
``feed_arguments`` call. Every step goes to both assemblers; any difference in the events
(errors compare every field), in an exception's type and message, in ``calls``, ``pending`` or
``complete()``, and any crash, is a finding.

``TOOLSTITCH_NATIVE_SO=<path to _native.abi3.so>`` loads that build of the extension (the
sanitizer build of docs/native.md), as for ``fuzz_native.py``:

    python fuzz/fuzz_fastfeed.py fuzz/corpus-fastfeed fuzz/corpus-assembler -runs=100000
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import fuzz_native  # noqa: F401  (first: loads the build named by TOOLSTITCH_NATIVE_SO)

# isort: split
import atheris
import fuzz_assembler as base
from _harness import decode

from toolstitch.core import assembler as core
from toolstitch.testing import PythonAssembler
from toolstitch.vocab.native import NATIVE

assert NATIVE, "the C extension is not active"


def outcome(action: Callable[[], object]) -> tuple[object, ...]:
    """What a step gave: its result, or the type and message of what it raised."""
    try:
        return ("result", action())
    except Exception as exc:  # every exception must be the same on both paths
        return ("raised", type(exc), str(exc))


def step(asm: Any, op: str, fields: list[str], delta: object) -> tuple[object, ...] | None:
    if op in ("d", "m", "o", "x"):
        return outcome(lambda: asm.feed(delta))
    if op == "a":
        index = base._index(fields[0])
        fragment = base._text(fields[1] if len(fields) > 1 else "")
        return outcome(lambda: asm.feed_arguments(index, fragment))
    if op == "f":
        return outcome(asm.finish)
    if op == "e":
        return outcome(lambda: asm.end(base._index(fields[0])))
    if op == "r":
        return outcome(asm.reset)
    return None


def run(data: bytes) -> None:
    records = decode(data).split("\x1e")
    limits = None
    if records and records[0].startswith("L"):
        limits = base._limits(records.pop(0)[1:].split("\x1f"))
    native, python = core.Assembler(limits=limits), PythonAssembler(limits=limits)
    for record in records[:2000]:
        op, fields = record[:1], record[1:].split("\x1f")
        delta = base._not_a_delta(fields[0]) if op == "x" else base._delta(op, fields)
        assert step(native, op, fields, delta) == step(python, op, fields, delta), record
        assert (native.calls, native.pending) == (python.calls, python.pending), record
        assert native.complete() == python.complete(), record
    assert native.finish() == python.finish()


def TestOneInput(data: bytes) -> None:  # noqa: N802  (atheris' name)
    run(data)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
