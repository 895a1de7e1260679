"""``Assembler.note`` and the ``CallNote`` instruction: a call's signature and caller reach
its ``ToolCall`` unchanged, and notes are bounded and forgotten with their call."""

from __future__ import annotations

import pytest

from toolstitch import Assembler, CallReady, InvalidDelta, Limits
from toolstitch.core.instructions import CallNote
from toolstitch.stitch.driver import Driver
from toolstitch.vocab.call_events import Event


def _whole(index: int, name: str = "f", arguments: str = "{}") -> dict[str, object]:
    return {"index": index, "id": f"c{index}", "function": {"name": name, "arguments": arguments}}


def test_a_note_before_the_first_delta_lands_on_the_call() -> None:
    assembler = Assembler()
    assembler.note(0, signature="c2lnbmF0dXJl", caller={"type": "code_execution_20250825"})
    (ready,) = [e for e in assembler.feed(_whole(0)) if isinstance(e, CallReady)]
    assert ready.call.signature == "c2lnbmF0dXJl"
    assert ready.call.caller == {"type": "code_execution_20250825"}


def test_later_notes_add_to_earlier_ones_and_other_calls_get_none() -> None:
    assembler = Assembler()
    assembler.note(1, signature="s")
    assembler.feed({"index": 1, "id": "c1", "function": {"name": "f", "arguments": "{"}})
    assembler.note(1, caller={"type": "direct"})
    assembler.feed({"index": 1, "function": {"arguments": "}"}})
    assembler.feed(_whole(0))
    calls = {call.index: call for call in assembler.complete()}
    assert (calls[1].signature, calls[1].caller) == ("s", {"type": "direct"})
    assert (calls[0].signature, calls[0].caller) == (None, None)


def test_noting_a_final_call_is_refused() -> None:
    assembler = Assembler()
    assembler.feed(_whole(0))
    with pytest.raises(InvalidDelta):
        assembler.note(0, signature="late")
    with pytest.raises(InvalidDelta):
        assembler.note(-1, signature="x")


def test_notes_are_bounded_by_max_calls_and_dropped_with_their_call() -> None:
    assembler = Assembler(limits=Limits(max_calls=2))
    for index in range(5):
        assembler.note(index, signature=str(index))
    assert len(assembler._notes) == 2
    assembler.feed({"index": 0, "id": "a", "function": {"name": "f", "arguments": "[1"}})
    assert 0 not in assembler._notes  # discarded at once (not an object): its note goes too
    assembler.reset()
    assert assembler._notes == {}


def test_the_driver_applies_a_call_note_before_the_delta_after_it() -> None:
    assembler = Assembler()
    out: list[Event] = []
    Driver(assembler).drive([CallNote(index=0, signature="sig"), _whole(0)], out)
    (ready,) = [e for e in out if isinstance(e, CallReady)]
    assert ready.call.signature == "sig"
