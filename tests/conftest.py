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

import json
from pathlib import Path

import pytest

from toolstitch.vocab.native import PURE_PYTHON_ENV, REASON

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

#: The core, property, stateful and differential tests: marked ``both_paths``. (The tokenizer's
#: own tests are not among them: they test the pure-Python ``ArgumentsTokenizer`` directly, the
#: same on either path; ``test_native_scanner.py`` compares the C scanner with it.) The whole suite
#: runs on the active path (the C extension when it is built); the README's test command then
#: runs these again with ``TOOLSTITCH_PURE_PYTHON=1 pytest -m both_paths``, so the pure-Python
#: reference passes them too (docs/native.md).
BOTH_PATHS: frozenset[str] = frozenset(
    {
        "test_assembler.py",
        "test_assembler_tools.py",
        "test_big_fragments.py",
        "test_deltas.py",
        "test_differential.py",
        "test_memory.py",
        "test_native_assembler.py",
        "test_native_scanner.py",
        "test_properties.py",
        "test_stateful.py",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in BOTH_PATHS:
            item.add_marker(pytest.mark.both_paths)


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
