"""Any chunking of a model's output gives the same calls, text, reasoning and errors, for
every text format: outputs written by the independent renderers of
``toolstitch.testing.text_outputs``, read whole, one character at a time, split at every
marker boundary and at random places; and cut anywhere, nothing cut is dispatched."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolstitch import (
    TEXT_FORMATS,
    CallDiscarded,
    CallReady,
    CallStarted,
    StitchResult,
    stitch,
)
from toolstitch.testing.text_outputs import RENDERERS, Expected, text_outputs

FORMATS = sorted(set(RENDERERS) & set(TEXT_FORMATS))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_format_has_a_renderer() -> None:
    assert set(TEXT_FORMATS) <= set(RENDERERS)


def _markers(value: object) -> Iterator[str]:
    """Every string of a declaration that may be a marker (the states' and the options')."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _markers(key)
            yield from _markers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _markers(item)


def _boundaries(fmt: str, text: str) -> list[str]:
    """``text`` cut at every place where a marker of ``fmt`` starts or ends."""
    states = TEXT_FORMATS[fmt].declaration["states"]
    marks = {m for m in _markers(states) if len(m) > 1}
    cuts = {0, len(text)}
    for marker in marks:
        at = text.find(marker)
        while at >= 0:
            cuts.update((at, at + len(marker), at + 1))
            at = text.find(marker, at + 1)
    points = sorted(cuts)
    return [text[a:b] for a, b in itertools.pairwise(points) if b > a]


def _read(fmt: str, chunks: list[str], tools: object) -> StitchResult:
    return stitch(iter(chunks), text_format=fmt, tools=tools).collect()


def _seen(result: StitchResult, carries_id: bool) -> tuple[Any, ...]:
    calls = tuple((c.name, c.parsed_arguments, c.id if carries_id else None) for c in result.calls)
    errors = tuple(d.error.code for d in result.discarded)
    return calls, result.text, result.reasoning, errors


def _check(fmt: str, text: str, want: Expected, chunks: list[str]) -> None:
    assert "".join(chunks) == text
    result = _read(fmt, chunks, want.tools)
    carries = RENDERERS[fmt].carries_id
    assert _seen(result, carries) == (want.calls, want.text, want.reasoning, ())
    for call in result.calls:
        assert json.loads(call.arguments) == call.parsed_arguments


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_chunking_gives_what_was_written(fmt: str, data: st.DataObject) -> None:
    text, want = data.draw(text_outputs(fmt))
    _check(fmt, text, want, [text])
    _check(fmt, text, want, list(text))
    _check(fmt, text, want, _boundaries(fmt, text))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=8).map(sorted))
    points = [0, *cuts, len(text)]
    _check(fmt, text, want, [text[a:b] for a, b in itertools.pairwise(points)])


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_cut_output_never_dispatches_a_cut_call(fmt: str, data: st.DataObject) -> None:
    """Cut anywhere: every call started ends once; each ready call is one the whole output
    has, with the same arguments (nothing cut is dispatched)."""
    text, want = data.draw(text_outputs(fmt))
    cut = data.draw(st.integers(0, len(text)))
    run = stitch(iter(list(text[:cut])), text_format=fmt, tools=want.tools)
    events = list(run)
    started = [e.index for e in events if isinstance(e, CallStarted)]
    ended = [e.index for e in events if isinstance(e, (CallReady, CallDiscarded))]
    assert sorted(started) == sorted(ended)
    assert len(set(ended)) == len(ended)
    whole = [(name, args) for name, args, _ in want.calls]
    for event in events:
        if isinstance(event, CallReady):
            assert (event.call.name, event.call.parsed_arguments) in whole
