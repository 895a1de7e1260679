"""Hypothesis strategies for the toolstitch tests.

* ``argument_texts()`` - valid argument texts, generated from ``grammars/json.lark`` (RFC 8259,
  top-level object) with ``hypothesis.extra.lark.from_lark``;
* ``with_raw_surrogates(text)`` - the same text with some non-BMP characters written as
  their two raw surrogate code points (``"\\ud83d\\ude80"`` for U+1F680), the way a decoder
  that splits UTF-16 may hand them over;
* ``splits(text)`` - arbitrary cuts of a text into non-empty fragments, biased towards the
  awkward places: inside escapes (``\\u00|e9``), between the halves of a raw surrogate pair,
  next to multi-byte characters, inside numbers, literals and keys;
* ``mutated(text)`` - insert, delete or replace characters;
* ``interleavings(streams)`` - merge several calls' fragment lists keeping each call's order.

``splits``, ``awkward_positions`` and ``interleavings`` are ``toolstitch.testing.strategies``'
(re-exported here); the rest needs the grammar and lark, which only the suite has.

Fragments are ``str`` slices: one code point is never cut, since ``str`` cannot hold a
fraction of one; the raw surrogate pair is the one way a single character arrives in two
``str`` fragments, and ``splits`` cuts between its halves on purpose.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark
from lark import Lark

# The fragment cutters and the interleaving are the public strategies' own (one generator of
# each, for users' tests and ours).
from toolstitch.testing.strategies import awkward_positions, interleavings, splits

__all__ = [
    "GRAMMAR_PATH",
    "PROPERTY_SETTINGS",
    "argument_texts",
    "awkward_positions",
    "has_huge_exponent",
    "interleavings",
    "loose_values",
    "mutated",
    "per_pass",
    "splits",
    "text_and_fragments",
    "with_raw_surrogates",
]

#: Any small JSON-like value, for fields that may hold the wrong type anywhere (adapters must
#: never raise on them).
loose_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)

GRAMMAR_PATH = Path(__file__).resolve().parents[1] / "grammars" / "json.lark"

#: Shared by the property tests: bounded work, no example database in the source tree.
PROPERTY_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


T = TypeVar("T", bound=Callable[..., object])


def per_pass(examples: int, parent: settings | None = None) -> Callable[[T], T]:
    """For a property of code that is the same on both paths (the stream decoders, the
    message conversion, the pure-Python ``ArgumentsTokenizer`` and what listens to it, the
    function-schema reader): half of ``examples`` per pass, and the ``either_path`` mark.

    The README's test command runs the whole suite twice, native then pure Python, each pass
    with its own random seed; such a test runs the same code both times, so the command as a
    whole still tries ``examples`` inputs of it (one pass alone, half). Properties whose code
    differs between the paths keep their whole count on each pass. The claim is checked:
    tests/conftest.py fails an ``either_path`` test that makes an assembler or a C scanner,
    the point from which the two paths differ.
    """

    def mark(test: T) -> T:
        halved = settings(parent, max_examples=max(1, examples // 2))(test)
        marked: T = pytest.mark.either_path(halved)
        return marked

    return mark


# Terminals of the grammar are drawn from their own patterns, mixed with a few values that
# raise the odds of the interesting cases: multi-byte and non-BMP characters, escapes of
# NUL, of control characters and of the ends of the BMP, zero, negative zero and exponents
# past the float range.
_INTERESTING = {
    "UNESCAPED": ["é", "ß", "€", "中", "\u2028", "\x7f", "🚀", "\U0001f600", "\U00010000"],
    "ESCAPE": ["\\u00e9", "\\u0000", "\\u001f", "\\u2028", "\\uFFFF", "\\uD7FF", "\\uE000"],
    "NUMBER": ["0", "-0", "-0.0", "1e400", "-1E-400", "123456789012345678901234567890"],
}
# Exponents of 19 digits and more are RFC-valid, but toolstitch documents them as a bound
# (ijson cannot hold them in a Decimal: LimitExceeded, limit="number_exponent");
# test_assembler.test_an_exponent_past_decimal_range covers them on their own.
_HUGE_EXPONENT = re.compile("[eE][+-]?0*[0-9]{19}")


def has_huge_exponent(text: str) -> bool:
    """Whether ``text`` holds an exponent of 19 digits or more (see ``_HUGE_EXPONENT``)."""
    return _HUGE_EXPONENT.search(text) is not None


@cache
def _grammar() -> Lark:
    return Lark(GRAMMAR_PATH.read_text(encoding="utf-8"), start="start")


@cache
def argument_texts() -> st.SearchStrategy[str]:
    """Valid JSON object texts, driven by ``grammars/json.lark``."""
    grammar = _grammar()
    explicit = {}
    for name, extra in _INTERESTING.items():
        own = st.from_regex(grammar.get_terminal(name).pattern.to_regexp(), fullmatch=True)
        if name == "NUMBER":
            own = own.filter(lambda number: not _HUGE_EXPONENT.search(number))
        explicit[name] = st.one_of(own, st.sampled_from(extra))
    return from_lark(grammar, start="start", explicit=explicit)


def _to_pair(ch: str) -> str:
    code = ord(ch) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


@st.composite
def with_raw_surrogates(draw: st.DrawFn, text: str) -> str:
    """Write some (possibly all, possibly none) non-BMP characters as raw surrogate pairs."""
    out = []
    for ch in text:
        if ord(ch) > 0xFFFF and draw(st.booleans()):
            out.append(_to_pair(ch))
        else:
            out.append(ch)
    return "".join(out)


@st.composite
def text_and_fragments(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A valid argument text (maybe with raw surrogate pairs) and a split of it."""
    text = draw(with_raw_surrogates(draw(argument_texts())))
    return text, draw(splits(text))


# What mutations insert or substitute: JSON's own punctuation, the starts of literals and
# of things JSON lacks (NaN, Infinity, comments, single quotes), escapes, raw control
# characters, lone surrogates, and ordinary and non-ASCII text.
_MUTATION_CHARS = [
    *"{}[]:,\"\\/ \t\n\r0123456789-+.eEtrufalsnNI'xu\x00\x01\x1f\x7f",
    "\ud83d",
    "\ude80",
    "é",
    "🚀",
    "\u00a0",
]


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """``text`` with one to three characters inserted, deleted or replaced."""
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        if op == "insert" or not text:
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.sampled_from(_MUTATION_CHARS)) + text[at:]
        else:
            at = draw(st.integers(0, len(text) - 1))
            new = "" if op == "delete" else draw(st.sampled_from(_MUTATION_CHARS))
            text = text[:at] + new + text[at + 1 :]
    return text
