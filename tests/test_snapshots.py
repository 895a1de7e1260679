"""Snapshots: O(1) to take, immutable once taken, and `Assembler.call` for one index."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolstitch import Assembler, CallDiscarded, CallState, Delta


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=700))
def test_each_snapshot_keeps_the_text_it_saw(pieces: list[str]) -> None:
    # Any text at all (validity aside).
    assembler = Assembler()
    assembler.feed(Delta(index=0, id="c", name="f"))
    snapshots = []
    discarded: list[CallDiscarded] = []
    for piece in pieces:
        events = assembler.feed(Delta(index=0, arguments=piece))
        discarded += [e for e in events if isinstance(e, CallDiscarded)]
        snapshot = assembler.call(0)
        assert snapshot is not None
        snapshots.append(snapshot)
    # Read only now, after later fragments (and chunk joins) happened: each snapshot shows
    # the text as it was. The text grows with every fragment until the call is discarded;
    # the fragment that discards it is kept in the CallDiscarded event, for the error report,
    # and the call itself keeps no text from then on.
    expected = ""
    stopped = False
    for piece, snapshot in zip(pieces, snapshots, strict=True):
        if not stopped:
            expected += piece
        if snapshot.state is CallState.DISCARDED:
            if not stopped:
                assert [e.arguments for e in discarded] == [expected]
            stopped = True
            assert snapshot.arguments == ""
        else:
            assert snapshot.arguments == expected


def test_call_reports_closed_and_unknown_indices() -> None:
    assembler = Assembler()
    assert assembler.call(3) is None
    assembler.feed(Delta(index=3, arguments='{"a": 1'))
    first = assembler.call(3)
    assert first is not None
    assert not first.closed
    assert first.state is CallState.AWAITING_ID
    assembler.feed(Delta(index=3, arguments="}  "))
    second = assembler.call(3)
    assert second is not None
    assert second.closed
    assert second.arguments == '{"a": 1}  '
    assert first.arguments == '{"a": 1'
    assert assembler.calls == (second,)


def test_feed_arguments_is_feed_of_an_arguments_delta() -> None:
    import pytest

    from toolstitch import InvalidDelta

    pieces = ['{"a": [1, ', '"x"], "b"', ": tru", "e}"]
    one, two = Assembler(), Assembler()
    assert one.feed(Delta(index=2, id="c", name="f")) == two.feed(Delta(index=2, id="c", name="f"))
    for piece in pieces:
        assert one.feed_arguments(2, piece) == two.feed(Delta(index=2, arguments=piece))
    assert one.calls == two.calls
    for index, fragment in ((-1, "{"), (True, "{"), ("0", "{"), (0, b"{")):
        before = one.calls
        with pytest.raises(InvalidDelta):
            one.feed_arguments(index, fragment)  # type: ignore[arg-type]
        assert one.calls == before
