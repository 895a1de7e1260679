"""``toolstitch.json.partial``: the live partial-arguments view and the value updates.

The view is compared with jiter's partial mode (``partial_mode="trailing-strings"``) on every
prefix of generated documents. Known, normalised differences:

* a number at the very end of a prefix: jiter shows the digits so far (``{"a": 12`` gives
  ``{"a": 12}``), toolstitch shows nothing until the number is complete (the next character
  could be another digit, and the tokenizer reports a number only once it ends). The
  comparison strips an unfinished trailing number before handing the prefix to jiter;
* raw surrogate halves (a non-BMP character handed over as two code points): jiter takes
  UTF-8 bytes, so pairs are joined first and a lone trailing high half is cut off (the view
  holds it back too);
* jiter stops at a nesting depth of about 200; generated documents stay far below.
"""

from __future__ import annotations

import json
import re
import sys
import tracemalloc
from typing import Any

import jiter
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from reference import joined, load, typed
from strategies import PROPERTY_SETTINGS, per_pass, splits, text_and_fragments
from toolstitch.json.lexicon import StringDecoder, decode_string_content
from toolstitch.json.partial import PartialArguments, ValueUpdate
from toolstitch.json.pointer import pointer_escape
from toolstitch.json.tokenizer import ArgumentsTokenizer, JSONEventBatch


def _feed(fragments: list[str], view: PartialArguments, *, after: Any = None) -> list[ValueUpdate]:
    updates: list[ValueUpdate] = []
    tokenizer = ArgumentsTokenizer(
        max_depth=256,
        max_number_digits=4000,
        listener=lambda batch: updates.extend(view.feed(batch)),
    )
    for k, fragment in enumerate(fragments):
        tokenizer.feed(fragment)
        if after is not None:
            after(k)
    tokenizer.close()
    return updates


_TRAILING_NUMBER = re.compile(r"-?[0-9][0-9.eE+-]*\Z|-\Z")


def _in_string(text: str) -> bool:
    inside = False
    escaped = False
    for c in text:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = inside
        elif c == '"':
            inside = not inside
    return inside


def jiter_view(prefix: str) -> Any:
    """jiter's partial parse of ``prefix``, normalised as the module doc explains."""
    text = joined(prefix)
    if text and "\ud800" <= text[-1] <= "\udbff":
        text = text[:-1]  # the first half of a raw pair: not a character yet
    if not _in_string(text):
        text = _TRAILING_NUMBER.sub("", text)
    if not text.strip():
        return {}
    return jiter.from_json(text.encode(), partial_mode="trailing-strings")


def _depth(text: str) -> int:
    depth = best = 0
    for c in re.sub(r'"(?:[^"\\]|\\.)*"', "", text):
        depth += c in "{["
        depth -= c in "}]"
        best = max(best, depth)
    return best


# -- differential: jiter's partial mode ------------------------------------------------------------


@per_pass(150, PROPERTY_SETTINGS)
@given(text_and_fragments())
def test_view_matches_jiter_after_every_fragment(case: tuple[str, list[str]]) -> None:
    text, fragments = case
    assume(_depth(text) < 150)
    view = PartialArguments()
    seen = 0

    def check(k: int) -> None:
        nonlocal seen
        seen += len(fragments[k])
        assert typed(view.value) == typed(jiter_view(text[:seen])), text[:seen]

    _feed(fragments, view, after=check)
    assert view.done
    assert typed(view.value) == typed(load(text))


@per_pass(150, PROPERTY_SETTINGS)
@given(text_and_fragments())
def test_view_matches_jiter_on_every_prefix(case: tuple[str, list[str]]) -> None:
    text, _ = case
    assume(_depth(text) < 150)
    view = PartialArguments()
    # One character per fragment: every prefix of the text is looked at.
    _feed(list(text), view, after=lambda k: _compare(view, text[: k + 1]))
    assert typed(view.value) == typed(load(text))


def _compare(view: PartialArguments, prefix: str) -> None:
    assert typed(view.value) == typed(jiter_view(prefix)), prefix


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ('{"a": "x\\', {"a": "x"}),  # an escape that has just begun is left out
        ('{"a": "x\\u00', {"a": "x"}),
        ('{"a": "x\\u00e9', {"a": "xé"}),
        ('{"a": "x\\ud83d', {"a": "x"}),  # the high half of an escaped pair waits
        ('{"a": "x\\ud83d\\ude80', {"a": "x🚀"}),
        ('{"a": "x\ud83d', {"a": "x"}),  # so does a raw high half
        ('{"a": 12', {}),  # unfinished number: not shown (jiter shows 12)
        ('{"a": 12,', {"a": 12}),
        ('{"a": 1.5e3}', {"a": 1500.0}),
        ('{"a": tr', {}),
        ('{"a": true', {"a": True}),
        ('{"ke', {}),  # a key still arriving is not shown
        ('{"key": ', {}),  # nor one whose value has not started
        ('{"key": "', {"key": ""}),
        ('{"a": [1, {"b": [null, "c', {"a": [1, {"b": [None, "c"]}]}),
    ],
)
def test_prefix_views(prefix: str, expected: Any) -> None:
    view = PartialArguments()
    _feed([prefix], view)
    assert typed(view.value) == typed(expected)
    # The same prefix one character at a time.
    view = PartialArguments()
    _feed(list(prefix), view)
    assert typed(view.value) == typed(expected)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_value_is_the_live_structure() -> None:
    view = PartialArguments()
    root = view.value
    _feed(['{"items": [', '{"n": 1}, ', '"ab', "cd", '"]}'], view)
    assert view.value is root
    assert root == {"items": [{"n": 1}, "abcd"]}
    assert view.done


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_numbers_as_json_loads_gives_them() -> None:
    text = '{"i": 10, "big": 123456789012345678901234567890, "f": 1.0, "e": 1E2, "h": 1e400}'
    view = PartialArguments()
    _feed([text], view)
    assert typed(view.value) == typed(json.loads(text))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_duplicate_keys_keep_the_last_value_in_the_first_place() -> None:
    view = PartialArguments()
    _feed(['{"a": "one", "b": 2, "a": "tw', 'o"}'], view)
    assert list(view.value.items()) == [("a", "two"), ("b", 2)]


# -- the string decoder ----------------------------------------------------------------------------


@per_pass(150, PROPERTY_SETTINGS)
@given(st.text(), st.booleans(), st.data())
def test_decoder_on_any_split(text: str, ascii_only: bool, data: st.DataObject) -> None:
    raw = json.dumps(text, ensure_ascii=ascii_only)[1:-1]
    parts = data.draw(splits(raw))
    decoder = StringDecoder()
    out = "".join(decoder.push(p) for p in parts)
    assert not decoder.holding
    assert out == text
    assert decode_string_content(raw) == text


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_pointer_escape() -> None:
    assert pointer_escape("a/b~c") == "a~1b~0c"
    assert pointer_escape("plain") == "plain"


# -- value updates ------------------------------------------------------------


def _at(value: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def _string_pointers(value: Any, base: str = "") -> list[str]:
    if isinstance(value, str):
        return [base]
    items: list[tuple[str, Any]]
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = [(str(k), v) for k, v in enumerate(value)]
    else:
        return []
    return [p for k, v in items for p in _string_pointers(v, base + "/" + pointer_escape(k))]


def _no_duplicate_keys(text: str) -> bool:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate")
        return dict(pairs)

    try:
        json.loads(joined(text), object_pairs_hook=hook)
    except ValueError:
        return False
    return True


@per_pass(150, PROPERTY_SETTINGS)
@given(text_and_fragments())
def test_value_updates(case: tuple[str, list[str]]) -> None:
    text, fragments = case
    assume(_no_duplicate_keys(text))
    final = load(text)
    watched = _string_pointers(final)
    view = PartialArguments(report_values=True, watch_strings=watched)
    updates = _feed(fragments, view)
    done = [(p, v) for p, v, d in updates if d]
    # Every value, once, when complete: children before their container, the root last.
    assert done[-1] == ("", final)
    assert len({p for p, _ in done}) == len(done)
    for pointer, value in done:
        assert typed(value) == typed(_at(final, pointer))
    # Watched strings: pieces (none if the string came in one fragment), then the whole.
    for pointer in watched:
        pieces = [str(v) for p, v, d in updates if p == pointer and not d]
        whole = _at(final, pointer)
        assert whole.startswith("".join(pieces))
        assert [v for p, v, d in updates if p == pointer and d] == [whole]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_watched_pieces_and_wildcards() -> None:
    view = PartialArguments(watch_strings=["/files/*/text"])
    updates = _feed(
        ['{"files": [{"name": "a", "text": "hel', "lo\\", "n wor", 'ld"}, {"text": "x"}]}'],
        view,
    )
    assert updates == [
        ("/files/0/text", "", False),
        ("/files/0/text", "hel", False),
        ("/files/0/text", "lo", False),
        ("/files/0/text", "\n wor", False),
        ("/files/0/text", "ld", False),  # the pieces add up to the whole string
        ("/files/0/text", "hello\n world", True),
        ("/files/1/text", "x", True),
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_no_updates_unless_asked() -> None:
    view = PartialArguments()
    assert _feed(['{"a": [1, "b"]}'], view) == []


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_watch_pointer_must_be_a_pointer() -> None:
    with pytest.raises(ValueError, match="JSON Pointer"):
        PartialArguments(watch_strings=["content"])


# -- linearity ------------------------------------------------------------


def bytes_allocated_reading_after_every_delta(size: int, step: int = 7) -> tuple[int, int, int]:
    """Feed ``{"path": …, "content": "<size chars>"}`` in ``step``-character deltas, reading
    the view after each one; return (bytes allocated beyond the live ones during all the reads
    together, number of reads, the string's final length). tracemalloc, not wall-clock: a read
    that copied the open string would allocate its whole size again."""
    body = ("abcdefghij\\n" * (size // 12 + 1))[:size]
    text = '{"path": "a.txt", "content": "' + body + '"}'
    fragments = [text[i : i + step] for i in range(0, len(text), step)]
    view = PartialArguments()

    def listener(batch: JSONEventBatch) -> None:
        view.feed(batch)

    tokenizer = ArgumentsTokenizer(max_depth=8, max_number_digits=100, listener=listener)
    extra = 0
    length = 0
    tracemalloc.start()
    try:
        for fragment in fragments:
            tokenizer.feed(fragment)
            current, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            length = len(view.value.get("content", ""))
            _, peak = tracemalloc.get_traced_memory()
            extra += peak - current
    finally:
        tracemalloc.stop()
    assert length == len(json.loads(text)["content"])
    return extra, len(fragments), length


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.skipif(sys.implementation.name != "cpython", reason="CPython's in-place +=")
def test_reading_after_every_delta_is_linear() -> None:
    extra_10k, _, _ = bytes_allocated_reading_after_every_delta(10_000)
    extra_100k, reads_100k, size = bytes_allocated_reading_after_every_delta(100_000)
    # A read allocates a small constant (the decoding of the new piece), never the open
    # string again: that would average size / 2 = 46 KB per read here.
    assert extra_100k / reads_100k < 4096
    # And ten times the text costs ten times as much, not a hundred.
    assert extra_100k < 12 * extra_10k
    assert size > 90_000
