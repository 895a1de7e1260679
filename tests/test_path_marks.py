"""The ``once`` and ``either_path`` marks are checked: what tests/conftest.py counts as the
start of the hot path.

A test marked ``once`` is left out of the pure-Python pass, and one marked ``either_path``
runs half its examples on each pass, so neither may reach code that differs between the
paths; tests/conftest.py fails it if it makes a native assembler or a C ``Scanner``. These
show the counter sees both, and nothing else: not the pure-Python reference
(``PythonAssembler``, ``PythonStitcher``), the same code on either pass.
"""

from __future__ import annotations

import pytest

from conftest import _counted_hot_path
from toolstitch import NATIVE, Assembler, Stitcher
from toolstitch.decode.sse import SSEDecoder
from toolstitch.json.tokenizer import make_tokenizer
from toolstitch.testing import PythonAssembler, PythonStitcher


def test_a_native_stitcher_is_counted_and_the_reference_is_not() -> None:
    made: list[str] = []
    with _counted_hot_path(made):
        Stitcher(provider="anthropic")
        PythonStitcher(provider="openai-chat")
        PythonAssembler()
    # On the pure-Python pass every assembler is the reference: nothing differs there.
    assert made == ([Assembler.__name__] if NATIVE else [])


def test_a_native_scanner_is_counted() -> None:
    if not NATIVE:
        pytest.skip("the C extension is not active")
    made: list[str] = []
    with _counted_hot_path(made):
        make_tokenizer(max_depth=4, max_number_digits=8, text=str)
        make_tokenizer(max_depth=4, max_number_digits=8)  # the Python tokenizer: not counted
    assert made == ["Scanner"]


def test_the_layers_below_are_not_counted_and_the_counter_is_removed() -> None:
    made: list[str] = []
    with _counted_hot_path(made):
        SSEDecoder().feed(b"data: {}\n\n")
    Stitcher(provider="anthropic")  # after the block: not counted
    assert made == []
