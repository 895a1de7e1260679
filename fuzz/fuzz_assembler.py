"""Fuzz target: the Assembler fed arbitrary deltas, finish, end and reset.

Input format (so that seeds can be real streams and mutations stay meaningful): the bytes,
decoded as UTF-8 with invalid bytes turned into lone surrogates, are records separated by
``\\x1e``; a record is one opcode character and fields separated by ``\\x1f``:

``L`` limits (first record only): max_argument_chars, max_calls, max_depth, max_name_chars,
      max_id_chars, max_number_digits as decimal numbers (empty: the default)
``d`` / ``m`` / ``o``  a delta as a ``Delta`` / an OpenAI wire dict / an SDK-like object;
      fields index, id, name, arguments, type. An empty field is ``None``; ``\\x02`` is
      ``""``; an index that is not decimal is passed as it is (``-3``, ``x``, ``b`` for True),
      which must raise ``InvalidDelta``; ``\\x0e`` / ``\\x0f`` stand for the raw halves of
      a surrogate pair (U+D83D, U+DE80) so that a pair can be split across fragments
``x`` something that is not a delta at all (chosen by the first field): must raise
      ``InvalidDelta`` and change nothing
``f`` finish, ``e`` end(index), ``r`` reset

Expected: ``InvalidDelta`` only. Everything in ``_harness`` is checked after every step, and
``finish`` is always called at the end.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import atheris
from _harness import Ledger, decode, known_bug

with atheris.instrument_imports(include=["toolstitch"]):
    from toolstitch import Assembler, CallState, Delta, InvalidDelta, Limits

_RANK = {
    CallState.AWAITING_ID: 0,
    CallState.ACCUMULATING_NAME: 1,
    CallState.ACCUMULATING_ARGS: 2,
    CallState.COMPLETE: 3,
    CallState.DISCARDED: 3,
}
_LIMIT_FIELDS = (
    "max_argument_chars",
    "max_calls",
    "max_depth",
    "max_name_chars",
    "max_id_chars",
    "max_number_digits",
)
_SURROGATES = str.maketrans({"\x0e": "\ud83d", "\x0f": "\ude80"})


def _text(field: str | None) -> str | None:
    if not field:
        return None
    if field == "\x02":
        return ""
    return field.translate(_SURROGATES)


def _index(field: str | None) -> object:
    if not field:
        return None
    if field == "b":
        return True
    if field.isdecimal() and field.isascii() and len(field) <= 30:
        return int(field)
    if field.startswith("-") and field[1:].isdecimal() and field[1:].isascii():
        return int(field)
    return field


def _limits(fields: list[str]) -> Limits:
    values: dict[str, int] = {}
    for name, field in zip(_LIMIT_FIELDS, fields, strict=False):
        if field.isascii() and field.isdecimal() and len(field) <= 9:
            value = max(1, int(field))
            if name == "max_number_digits":
                value = min(value, 4300)
            values[name] = value
    return Limits(**values)


class _Weird:
    """An object with delta-looking attributes of the wrong types."""

    def __init__(self, **kwargs: object) -> None:
        self.__dict__.update(kwargs)


def _not_a_delta(field: str) -> object:
    kind = field[:1]
    rest = field[1:]
    options: dict[str, Any] = {
        "s": {"zz" + rest: rest},  # a mapping with none of the keys a delta shape reads
        "b": rest.encode("utf-8", "surrogateescape"),
        "n": None,
        "i": 7,
        "f": 1.5,
        "l": [rest],
        "t": (0, rest),
        "d": {"index": 0, "function": rest},
        "a": {"index": 0, "function": {"arguments": 5}},
        "N": {"index": 0, "function": {"name": ["x"]}},
        "I": {"id": 3},
        "F": {"index": 1.0},
        "B": {"index": False},
        "-": {"index": -1},
        "D": Delta(index=0, arguments=b"{}"),  # type: ignore[arg-type]
        "o": object(),
        "w": _Weird(index="0"),
        "W": _Weird(index=0, function=SimpleNamespace(arguments=1)),
        "T": {"index": 0, "type": 1},
    }
    # (A str is a text part, ignored: not one of these.)
    return options.get(kind, rest.encode("utf-8", "surrogateescape"))


def _delta(op: str, fields: list[str]) -> object:
    padded = [*fields, "", "", "", "", ""][:5]
    index = _index(padded[0])
    call_id, name, arguments, kind = (_text(f) for f in padded[1:5])
    if op == "d":
        return Delta(index=index, id=call_id, name=name, arguments=arguments, type=kind)  # type: ignore[arg-type]
    if op == "m":
        return {
            "index": index,
            "id": call_id,
            "type": kind,
            "function": {"name": name, "arguments": arguments},
        }
    return SimpleNamespace(
        index=index,
        id=call_id,
        type=kind,
        function=SimpleNamespace(name=name, arguments=arguments),
    )


def _state(asm: Assembler) -> tuple[object, ...]:
    return (asm.calls, asm.pending, asm.complete())


def _check(
    asm: Assembler, ledger: Ledger, before: dict[int, CallState], calls: tuple[Any, ...]
) -> None:
    assert asm.pending == ledger.open, (asm.pending, ledger.open)
    complete = asm.complete()
    assert [c.index for c in complete] == sorted(c.index for c in complete)
    assert complete == [ledger.ready[i] for i in sorted(ledger.ready)]
    for snap in calls:
        old = before.get(snap.index)
        if old is not None:
            assert _RANK[snap.state] >= _RANK[old], (snap.index, old, snap.state)
            if old.is_final:
                assert snap.state is old
        assert snap.state.is_final == (snap.index in ledger.ended), snap
        before[snap.index] = snap.state


def _feed(asm: Assembler, op: str, fields: list[str]) -> list[Any] | None:
    """Feed one delta record (``d``, ``m``, ``o`` or ``x``): its events, or ``None`` when it
    was refused with ``InvalidDelta`` as it had to be (then nothing changed)."""
    delta = _not_a_delta(fields[0]) if op == "x" else _delta(op, fields)
    index = _index(fields[0])
    invalid = op == "x" or not (index is None or (type(index) is int and index >= 0))
    before = _state(asm) if invalid else None
    try:
        events = asm.feed(delta)
    except InvalidDelta as exc:
        assert invalid, f"InvalidDelta for a valid delta {delta!r}"
        assert exc.code == "invalid-delta"  # noqa: PT017  (not a pytest test)
        assert _state(asm) == before, "InvalidDelta changed the state"
        return None
    assert not invalid, f"not a delta, yet accepted: {delta!r}"
    return events


def _end(asm: Assembler, fields: list[str]) -> list[Any] | None:
    """An ``e`` record: the events of ``end``, or ``None`` when its index is not an int."""
    index = _index(fields[0])
    try:
        return asm.end(index)  # type: ignore[arg-type]
    except InvalidDelta:
        assert not isinstance(index, int) or isinstance(index, bool)
        return None


def _step(
    asm: Assembler, ledger: Ledger, states: dict[int, CallState], op: str, fields: list[str]
) -> list[Any] | None:
    """Carry out one record: the events to check, or ``None`` when there is nothing to check."""
    if op in ("d", "m", "o", "x"):
        return _feed(asm, op, fields)
    if op == "f":
        return asm.finish()
    if op == "e":
        return _end(asm, fields)
    if op == "r":
        asm.reset()
        ledger.reset()
        states.clear()
        return []
    return None


def _settle(
    asm: Assembler, ledger: Ledger, states: dict[int, CallState], events: list[Any]
) -> None:
    """Give the ledger the events of one step, then check everything against it."""
    calls = asm.calls
    ledger.take(events, {snap.index: snap.arguments for snap in calls})
    _check(asm, ledger, states, calls)


def run(data: bytes, ledger: Ledger | None = None) -> None:
    records = decode(data).split("\x1e")
    asm = Assembler()
    if records and records[0].startswith("L"):
        asm = Assembler(limits=_limits(records.pop(0)[1:].split("\x1f")))
    ledger = Ledger() if ledger is None else ledger
    states: dict[int, CallState] = {}
    for record in records[:2000]:
        op, fields = record[:1], record[1:].split("\x1f")
        events = _step(asm, ledger, states, op, fields)
        if events is None:
            continue
        _settle(asm, ledger, states, events)
        if op == "f":
            assert asm.pending == 0
            assert all(index in ledger.ended for index in ledger.started)
    _settle(asm, ledger, states, asm.finish())
    assert asm.pending == 0
    assert asm.finish() == []


def TestOneInput(data: bytes) -> None:  # noqa: N802  (atheris' name)
    ledger = Ledger()
    try:
        run(data, ledger)
    except (AssertionError, RuntimeError) as exc:
        if known_bug(exc, ledger) is None:
            raise


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
