"""The assembler gives the same results on ijson's pure-Python backend as on yajl2_c.

yajl2_c is what toolstitch uses wherever ijson's C extension is installed; this shows what a
machine with only the slower backend gets: the same events, from the same feeds.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import ijson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolstitch
from toolstitch import Assembler, Delta, Event
from toolstitch.json import tokenizer as tokenizer_module

PYTHON_BACKEND = ijson.get_backend("python")

TEXTS = [
    '{"city": "Zürich", "days": [1, 2.5e3, -0.5], "ok": true, "none": null}',
    '{"a": {"b": [[], {}, "x\\"y\\\\z\\u00e9\\ud83d\\ude80"]}}',
    '{"a": 1,}',
    '{"a": 01}',
    '{"a": tru}',
    '{"a": "\x01"}',
    '{"a": [1 2]}',
    "[1, 2]",
    '{"a": "b"} trailing',
    '{"a": "b"}} ',
    '{"a": [1, 2',
]


@pytest.fixture
def python_backend() -> Iterator[None]:
    tokenizer_module.default_backend = PYTHON_BACKEND
    try:
        yield
    finally:
        tokenizer_module.default_backend = None


def _run(text: str, cuts: list[int]) -> list[tuple[int, list[Event]]]:
    assembler = Assembler()
    bounds = sorted({0, len(text), *(c for c in cuts if 0 < c < len(text))})
    trace = [(-1, assembler.feed(Delta(index=0, id="call_1", name="f")))]
    for number, (start, stop) in enumerate(itertools.pairwise(bounds)):
        trace.append((number, assembler.feed(Delta(index=0, arguments=text[start:stop]))))
    trace.append((len(bounds), assembler.finish()))
    return trace


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_default_backend_is_the_c_one() -> None:
    assert toolstitch.JSON_BACKEND == "yajl2_c"


@pytest.mark.parametrize("text", TEXTS)
@settings(max_examples=25, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=80), max_size=12))
def test_python_backend_agrees_with_yajl2_c(text: str, cuts: list[int]) -> None:
    native = _run(text, cuts)
    tokenizer_module.default_backend = PYTHON_BACKEND
    try:
        slow = _run(text, cuts)
    finally:
        tokenizer_module.default_backend = None
    assert slow == native
