"""The per-call state machine: declared in grammars/call-machine.json, obeyed by the assembler."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from transitions import Machine, MachineError

from strategies import PROPERTY_SETTINGS, argument_texts, mutated, splits
from toolstitch import Assembler, CallState, Delta, Limits
from toolstitch.core import assembler as _assembler
from toolstitch.core import machine as _machine

MACHINE_FILE = Path(__file__).resolve().parents[1] / "grammars" / "call-machine.json"


def declared() -> dict[str, Any]:
    definition: dict[str, Any] = json.loads(MACHINE_FILE.read_text(encoding="utf-8"))
    return definition


@cache
def declared_moves() -> frozenset[tuple[str, str, str]]:
    """``(source, trigger, dest)`` for every move the file declares (sources expanded)."""
    moves = set()
    for t in declared()["transitions"]:
        sources = t["source"] if isinstance(t["source"], list) else [t["source"]]
        for source in sources:
            moves.add((source, t["trigger"], t["dest"]))
    return frozenset(moves)


@cache
def reachable(source: str) -> frozenset[str]:
    """States reachable from ``source`` in zero or more declared moves."""
    seen = {source}
    frontier = [source]
    while frontier:
        state = frontier.pop()
        for src, _, dest in declared_moves():
            if src == state and dest not in seen:
                seen.add(dest)
                frontier.append(dest)
    return frozenset(seen)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_states_of_the_file_are_the_call_states() -> None:
    definition = declared()
    assert definition["states"] == [state.value for state in CallState]
    assert definition["initial"] == CallState.AWAITING_ID.value
    assert set(definition["final"]) == {s.value for s in CallState if s.is_final}
    for source, _, dest in declared_moves():
        assert source in definition["states"]
        assert dest in definition["states"]
        assert source not in definition["final"]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_table_equals_the_declared_transitions() -> None:
    table = {
        (source.value, trigger, dest.value) for (source, trigger), dest in _machine.TABLE.items()
    }
    assert table == declared_moves()
    # No (state, trigger) pair is declared twice with different destinations.
    assert len(_machine.TABLE) == len(declared_moves())


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_machine_built_from_the_file_rejects_undeclared_triggers() -> None:
    definition = declared()
    model = type("Model", (), {})()
    Machine(
        model=model,
        states=definition["states"],
        transitions=[
            {"trigger": t["trigger"], "source": t["source"], "dest": t["dest"]}
            for t in definition["transitions"]
        ],
        initial=definition["initial"],
        auto_transitions=False,
        ignore_invalid_triggers=False,
    )
    assert model.state == "awaiting-id"
    # Declared, but not from this state:
    with pytest.raises(MachineError):
        model.receive_arguments()
    assert model.state == "awaiting-id"
    # Never declared at all: no such trigger, not even an automatic ``to_<state>``.
    assert not hasattr(model, "to_complete")
    with pytest.raises(AttributeError):
        model.finish()
    model.receive_id()
    model.receive_arguments()
    model.complete()
    assert model.state == "complete"
    for trigger in ("receive_id", "receive_arguments", "complete", "discard"):
        with pytest.raises(MachineError):
            getattr(model, trigger)()
    assert model.state == "complete"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_library_machine_is_built_from_the_file() -> None:
    machine = _machine.build_machine(declared())
    assert _machine.derive_table(machine) == dict(_machine.TABLE)
    assert declared() == _machine.DEFINITION


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_an_illegal_move_raises() -> None:
    call = _assembler._Call(0, None)  # type: ignore[arg-type]
    with pytest.raises(_machine.IllegalTransition):
        call.move("receive_arguments")
    assert call.state is CallState.AWAITING_ID


# -- observed runs follow the table -------------------------------------------------------


Step = tuple[int | None, str | None, str | None, str | None]  # index, id, name, arguments


@st.composite
def runs(draw: st.DrawFn) -> list[Step]:
    """Random deltas for up to three calls: ids and names early, late or never, valid and
    broken arguments, index-less deltas, a small max_calls pushed past."""
    steps: list[Step] = []
    for index in range(draw(st.integers(1, 3))):
        text = draw(argument_texts())
        if draw(st.booleans()):
            text = draw(mutated(text))
        pieces: list[Step] = [(index, None, None, fragment) for fragment in draw(splits(text))]
        if draw(st.booleans()):
            at = draw(st.integers(0, len(pieces)))
            pieces.insert(at, (index, f"call_{index}", None, None))
        if draw(st.booleans()):
            at = draw(st.integers(0, len(pieces)))
            pieces.insert(at, (index, None, f"fn_{index}", None))
        steps += pieces
    order = draw(st.permutations(range(len(steps))))
    # Keep each call's own order: sort the permutation's picks per index.
    by_index: dict[int | None, list[Step]] = {}
    for step in steps:
        by_index.setdefault(step[0], []).append(step)
    merged: list[Step] = [by_index[steps[k][0]].pop(0) for k in order]
    if draw(st.booleans()):
        # Drop the index of some deltas without an id: they continue the most recent call.
        for k, step in enumerate(merged):
            if step[1] is None and draw(st.booleans()):
                merged[k] = (None, step[1], step[2], step[3])
    return merged


LIMITS = [
    None,
    Limits(max_calls=2),
    Limits(max_depth=2, max_argument_chars=40, max_name_chars=4, max_number_digits=3),
]


# One property checks both sides of the table on the same runs: every move the assembler
# makes (recorded at ``_Call.move``) is declared, and every state change the public snapshots
# show is reachable along the declared moves. (They were two properties drawing the same
# ``runs()``: each example now proves both, at the cost of one.)
@PROPERTY_SETTINGS
@given(runs(), st.sampled_from(LIMITS))
def test_the_assembler_moves_only_along_the_declared_table(
    steps: list[Step], limits: Limits | None
) -> None:
    moves: list[tuple[str, str]] = []
    original = _assembler._Call.move

    def recording(call: Any, trigger: str) -> None:
        moves.append((call.state.value, trigger))
        original(call, trigger)

    allowed = {(source, trigger) for source, trigger, _ in declared_moves()}
    seen: dict[int, str] = {}
    ended: dict[int, int] = {}
    initial = declared()["initial"]
    final = set(declared()["final"])

    def observe() -> None:
        for snapshot in asm.calls:
            state = snapshot.state.value
            before = seen.get(snapshot.index, initial)
            assert state in reachable(before), (snapshot.index, before, state)
            if before in final:
                assert state == before
            seen[snapshot.index] = state
        assert asm.pending == sum(not s.state.is_final for s in asm.calls)

    def count_ends(events: list[Any]) -> None:
        for event in events:
            if type(event).__name__ in ("CallReady", "CallDiscarded"):
                ended[event.index] = ended.get(event.index, 0) + 1

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_assembler._Call, "move", recording)
        asm = Assembler(limits=limits)
        for index, call_id, name, arguments in steps:
            count_ends(asm.feed(Delta(index=index, id=call_id, name=name, arguments=arguments)))
            observe()
        count_ends(asm.finish())
    observe()
    assert moves
    assert set(moves) <= allowed
    assert all(state in final for state in seen.values())
    assert set(seen) <= set(ended)
    assert all(count == 1 for count in ended.values())
    assert asm.pending == 0


@pytest.mark.once  # a repository-file check (tests/conftest.py)
def test_generated_table_is_fresh() -> None:
    # core/_table.py is derived by transitions at build time, so that importing toolstitch
    # never imports transitions; regenerate with ``python -m toolstitch.core.machine``.
    generated = Path(_machine.__file__).with_name("_table.py").read_text(encoding="utf-8")
    assert generated == _machine.render_table(), (
        "core/_table.py is stale: run python -m toolstitch.core.machine"
    )


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_importing_toolstitch_does_not_import_transitions() -> None:
    import subprocess
    import sys

    code = "import sys, toolstitch; print('transitions' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
