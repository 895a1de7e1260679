"""The pump (stitch/pump.py and its C twin in _c/pump.c): the loop of ``for event in stitch``.

Each case runs on the reference ``Pump`` and on the C ``toolstitch._native.Pump`` (when the
extension is built) and checks what either hands out, when it pulls and what ``stop()`` does;
the two must agree on every case."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolstitch import CallReady, stitch
from toolstitch.stitch.pump import PUMP, Pump
from toolstitch.vocab.native import NATIVE, extension

PUMPS: list[Any] = [Pump] + ([extension.Pump] if extension is not None else [])


@pytest.fixture(params=PUMPS, ids=lambda p: p.__module__)
def pump(request: pytest.FixtureRequest) -> Any:
    return request.param


class Log:
    """A feed and an end that record their calls; the feed answers ``piece`` copies of it."""

    def __init__(self) -> None:
        self.calls: list[object] = []

    def feed(self, piece: object) -> list[object]:
        self.calls.append(piece)
        return [f"{piece}.{i}" for i in range(int(str(piece)))]

    def end(self) -> list[object]:
        self.calls.append("end")
        return ["end.0", "end.1"]


def run(pump: Any, pieces: list[int]) -> tuple[list[object], list[object]]:
    log = Log()
    return list(pump(iter(pieces), log.feed, log.end)), log.calls


def test_the_active_pump_is_the_c_one_on_the_native_path() -> None:
    assert (PUMP is not Pump) == NATIVE


@given(st.lists(st.integers(0, 4), max_size=8))
def test_every_event_once_in_order_and_the_end_once(pieces: list[int]) -> None:
    expected = [f"{p}.{i}" for p in pieces for i in range(p)] + ["end.0", "end.1"]
    for pump in PUMPS:
        events, calls = run(pump, pieces)
        assert events == expected
        assert calls == [*pieces, "end"]


def test_it_pulls_only_when_it_has_nothing_left(pump: Any) -> None:
    log = Log()
    p = pump(iter([2, 0, 1]), log.feed, log.end)
    assert next(p) == "2.0"
    assert log.calls == [2]
    assert p.pending == 1
    assert next(p) == "2.1"
    assert log.calls == [2]
    assert next(p) == "1.0"  # the empty piece was pulled and skipped
    assert log.calls == [2, 0, 1]
    assert not p.ended
    assert list(p) == ["end.0", "end.1"]
    assert p.ended
    with pytest.raises(StopIteration):
        next(p)
    assert log.calls == [2, 0, 1, "end"]


def test_stop_makes_the_next_pull_the_end(pump: Any) -> None:
    log = Log()
    p = pump(iter([2, 3, 4]), log.feed, log.end)
    assert next(p) == "2.0"
    p.stop()
    assert list(p) == ["2.1", "end.0", "end.1"]  # what was fed is handed out first
    assert log.calls == [2, "end"]


def test_an_exception_of_the_source_or_the_feed_reaches_the_reader(pump: Any) -> None:
    def source() -> Iterator[int]:
        yield 1
        raise OSError("reset")

    log = Log()
    p = pump(source(), log.feed, log.end)
    assert next(p) == "1.0"
    with pytest.raises(OSError, match="reset"):
        next(p)
    assert list(p) == ["end.0", "end.1"]  # the generator is done: its end comes next

    def refuse(piece: object) -> list[object]:
        raise ValueError(piece)

    q = pump(iter([5, 1]), refuse, log.end)
    with pytest.raises(ValueError, match="5"):
        next(q)
    with pytest.raises(ValueError, match="1"):
        next(q)


def test_a_feed_may_answer_any_sequence(pump: Any) -> None:
    feed: Callable[[object], tuple[object, ...]] = lambda piece: (piece, piece)  # noqa: E731
    assert list(pump(iter("ab"), feed, tuple)) == ["a", "a", "b", "b"]


def test_stitch_hands_out_the_same_events_through_iter_and_next() -> None:
    text = ['<tool_call>{"name": "f", "arguments": {"a": ', "1}}</tool_call>", "done"]
    whole = list(stitch(text, text_format="hermes"))
    s = stitch(text, text_format="hermes")
    one = [next(s), next(s)]
    assert one + list(s) == whole
    assert any(isinstance(e, CallReady) for e in whole)
    assert s.result.text == "done"
