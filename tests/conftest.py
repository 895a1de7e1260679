"""Pytest hooks for the whole suite: the run says at its top whether the shared corpus is there.

The real recorded streams live outside the repository, beside the clone
(``<parent>/shared/corpus``, i.e. ``../shared/corpus`` from the clone's root). Without them
``test_corpus.py`` skips as a module, ``test_differential.py`` replays only tests/fixtures
(``test_the_recorded_streams_are_there`` skips, saying where it looked) and
``test_jsonarray.py``'s Gemini corpus case skips, as do ``test_corpus_next.py`` and
``test_reasoning_corpus.py``; the header says so before anything runs, and
``-ra`` (in addopts) lists the skips and their reasons at the end.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from toolstitch.core import assembler as _assembler
from toolstitch.vocab.native import PURE_PYTHON_ENV, REASON, extension

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

#: The hypothesis settings of the whole suite, explicit (a test's own ``@settings`` derive from
#: them): no ``deadline``, since a per-example time limit is a wall-clock assertion that a loaded
#: 2-core machine breaks; 100 examples unless the test says otherwise (hypothesis' own default,
#: written down).
settings.register_profile("toolstitch", max_examples=100, deadline=None)
settings.load_profile("toolstitch")

#: The whole suite runs on both paths: the README's test command runs it on the active path
#: (the C extension when it is built), then again with ``TOOLSTITCH_PURE_PYTHON=1`` and
#: ``-m "not once"``, so the pure-Python reference passes every test that runs the library
#: (docs/native.md). Marked ``once`` are the tests that run no code with a native twin: the
#: checks of repository files that never feed a stream (building the sdist and the wheel, the
#: strict docs-site build, the import-layer contract, the generated-docs-are-current checks,
#: the benchmark workloads against docs/performance.md), and the tests of what lies below or
#: beside the hot path and is the same code on either pass: the stream decoders (SSE, NDJSON,
#: event-stream, JSON array) on their own, the text grammars' body readers, message
#: conversion, the Python tokenizer on its own, the command's argument handling, the public
#: API's listings, and subprocesses that never read ``TOOLSTITCH_PURE_PYTHON`` (their
#: environment is fixed). They give the same answer on either path. Marked
#: ``either_path`` (by ``strategies.per_pass``) are the properties of code that is the same
#: on both paths, which run half their examples on each pass.
#:
#: Both marks claim that the test runs nothing that differs between the paths. The paths
#: differ only from a native ``Assembler`` on: every native ``Stitcher`` makes one, the native
#: assembler makes the C ``Scanner``s, and the Anthropic C reader serves only the native
#: ``Stitcher``. ``toolstitch.testing.PythonAssembler`` and ``PythonStitcher`` (which makes only
#: ``PythonAssembler``s) run no C of toolstitch's own, so they are the same code on either
#: pass. ``pytest_runtest_call`` below fails a test with either mark that makes any other
#: assembler or a ``Scanner``, so the claim is checked, not assumed (on the native pass: on the
#: pure-Python one every assembler is the Python one, and without the extension the two passes
#: run the same code anyway).

#: The marks that claim a test runs the same code on either path.
_SAME_ON_EITHER_PATH = ("once", "either_path")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    marks = [name for name in _SAME_ON_EITHER_PATH if item.get_closest_marker(name)]
    if not marks:
        return (yield)
    made: list[str] = []
    with _counted_hot_path(made):
        outcome = yield
    assert not made, (
        f"{item.nodeid} is marked {marks[0]} (the same code on either path), yet it made "
        f"{sorted(set(made))}: the two paths differ from there (tests/conftest.py)"
    )
    return outcome


@contextmanager
def _counted_hot_path(made: list[str]) -> Iterator[None]:
    """Within: every ``Assembler`` made but the pure-Python reference's (``PythonAssembler``,
    the same code on either path), and on the native path every C ``Scanner`` made, is named
    in ``made``."""
    body = vars(_assembler)["_AssemblerBody"]
    reference = vars(_assembler)["_PythonAssembler"]
    init = body.__init__

    def counted_init(self: object, *args: Any, **kwargs: Any) -> None:
        if extension is not None and not isinstance(self, reference):
            made.append(type(self).__name__)
        init(self, *args, **kwargs)

    def counted(name: str, make: Any) -> Any:
        def making(*args: Any, **kwargs: Any) -> Any:
            made.append(name)
            return make(*args, **kwargs)

        return making

    native: Any = extension
    scanner = None if native is None else native.Scanner
    body.__init__ = counted_init
    if scanner is not None:
        native.Scanner = counted("Scanner", scanner)
    try:
        yield
    finally:
        body.__init__ = init
        if scanner is not None:
            native.Scanner = scanner


#: The cyclic garbage collector, kept to the objects a test makes. A worker holds some 250,000
#: objects once it has collected the suite and 800,000 once the SDKs, LangChain and hypothesis'
#: strategies are loaded; every full collection (automatic, or a test's own ``gc.collect()``)
#: walks them all, about a second each on a loaded 2-core machine, some 30 s a worker a pass.
#: So between tests, once the heap has grown (modules imported, or a full collection was
#: needed), the garbage is collected and what survives is frozen (``gc.freeze``): later
#: collections walk only what was made since. It changes when cyclic garbage is reclaimed,
#: never what runs: every object a test makes is unfrozen until the test has ended, so a
#: test's ``gc.collect()`` (tests/test_memory.py, test_runner_load.py, test_sdk_streams.py)
#: still reclaims its own garbage, and frozen objects are still freed by reference counting.
_FROZEN_AT = {"modules": 0, "full_collections": 0}


def _collect_and_freeze() -> None:
    gc.collect()
    gc.freeze()
    _FROZEN_AT["modules"] = len(sys.modules)
    _FROZEN_AT["full_collections"] = gc.get_stats()[2]["collections"]


def pytest_collection_finish(session: pytest.Session) -> None:
    _collect_and_freeze()


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if (
        len(sys.modules) >= _FROZEN_AT["modules"] + 10
        or gc.get_stats()[2]["collections"] > _FROZEN_AT["full_collections"]
    ):
        _collect_and_freeze()


def pytest_report_header(config: pytest.Config) -> list[str]:
    hint = "" if REASON.startswith("pure") else f" (set {PURE_PYTHON_ENV}=1 for pure Python)"
    return [f"hot path: {REASON}{hint}", *_corpus_header()]


def _corpus_header() -> list[str]:
    if (CORPUS / "manifest.json").is_file():
        streams = len(list(CORPUS.glob("*.sse")))
        nxt = CORPUS / "formats-next" / "manifest.json"
        more = (
            f" and {len(json.loads(nxt.read_text()))} in formats-next (Bedrock, Cohere, Ollama)"
            if nxt.is_file()
            else "; formats-next NOT FOUND, test_corpus_next.py will skip"
        )
        return [f"shared corpus: found at {CORPUS} ({streams} streams{more}); the corpus tests run"]
    return [
        f"shared corpus: NOT FOUND at {CORPUS} (no manifest.json there)",
        "  -> test_corpus.py and the corpus cases of test_differential.py and test_jsonarray.py",
        "     will SKIP: the corpus is not part of the repository, it sits beside the clone",
        "     as ../shared/corpus",
    ]
