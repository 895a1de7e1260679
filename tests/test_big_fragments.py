"""Fragments larger than the tokenizer's send slice behave like any other fragment."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from reference import judged
from toolstitch import (
    Assembler,
    CallDiscarded,
    CallReady,
    CallWarning,
    Delta,
    MalformedArguments,
    TrailingArguments,
)

BIG = json.dumps(
    {
        "rows": [
            {"id": i, "name": f"row {i} é🚀", "tags": ["a", "b"], "ok": i % 2 == 0, "x": None}
            for i in range(2500)
        ]
    },
    ensure_ascii=False,
)


def test_a_huge_fragment_is_one_valid_call() -> None:
    assert len(BIG) > 100_000
    assembler = Assembler()
    events = assembler.feed(Delta(index=0, id="c", name="f", arguments=BIG))
    (ready,) = [event for event in events if isinstance(event, CallReady)]
    assert ready.call.parsed_arguments == json.loads(BIG)


@settings(max_examples=20, deadline=None)
@given(position=st.integers(min_value=1, max_value=len(BIG) - 2), junk=st.sampled_from("}],:x"))
def test_a_huge_fragment_is_judged_at_its_first_bad_character(position: int, junk: str) -> None:
    text = BIG[:position] + junk + BIG[position + 1 :]
    expected, end = judged(text)  # the reference's first bad offset and object end
    assembler = Assembler()
    events = assembler.feed(Delta(index=0, id="c", name="f", arguments=text))
    events += assembler.finish()
    discarded = [event for event in events if isinstance(event, CallDiscarded)]
    ready = [event for event in events if isinstance(event, CallReady)]
    if expected is None:
        assert len(ready) == 1
    elif end is not None and expected >= end:
        # The object closed before the bad character: ready, and one warning at it.
        assert len(ready) == 1
        (warning,) = [event for event in events if isinstance(event, CallWarning)]
        assert isinstance(warning.error, TrailingArguments)
        assert warning.error.offset == expected
    else:
        (event,) = discarded
        assert isinstance(event.error, MalformedArguments)
        assert event.error.offset == expected
