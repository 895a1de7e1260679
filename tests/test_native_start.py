"""The native assembler's start path and first fragment (docs/native.md, "The start path")
against the pure-Python reference.

A call's first delta with its id and whole name and no arguments text starts the call in C,
and the call's first fragment after it moves it to ``accumulating-args`` in C; everything
else goes to the Python methods. Here any mix of such starts and their near misses (an index
seen before, an empty or odd id or name, a type or none, arguments ``""`` or text, no index,
small ``max_calls`` / ``max_id_chars`` / ``max_name_chars``, declared tools, a JSON listener)
is fed to both assemblers, comparing the events, and after every delta the whole record of
every call and the assembler's own bookkeeping (``_by_id``, ``_last``, ``_open``); and the
paths are checked to be taken in C where they should. Skipped where the extension is not
active.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import PROPERTY_SETTINGS
from toolstitch import NATIVE, ArgumentsDelta, Assembler, Limits
from toolstitch.core.assembler import _AssemblerBody
from toolstitch.testing import PythonAssembler

pytestmark = pytest.mark.skipif(not NATIVE, reason="the C extension is not active")

FAST = settings(PROPERTY_SETTINGS, max_examples=80)
TOOLS = [{"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}}]
OPTIONS: list[dict[str, Any]] = [
    {},
    {},
    {"limits": Limits(max_calls=2)},
    {"limits": Limits(max_id_chars=4, max_name_chars=3)},
    {"tools": TOOLS},
    {"json_listener": lambda index, batch: None},
]

_ids = st.sampled_from(["call_0", "call_1", "c", "", "toolong_id", None])
_names = st.sampled_from(["get", "g", "", "getter", None])
_kinds = st.sampled_from([None, None, "function", ""])
_arguments = st.sampled_from([None, None, "", "{", '{"a": 1}', "}", " "])


@st.composite
def deltas(draw: st.DrawFn) -> dict[str, Any]:
    """One delta: most of them a start's shape, many near misses."""
    delta: dict[str, Any] = {"function": {}}
    index = draw(st.sampled_from([0, 1, 2, 3, None]))
    if index is not None:
        delta["index"] = index
    for key, value in (("id", draw(_ids)), ("type", draw(_kinds))):
        if value is not None:
            delta[key] = value
    for key, value in (("name", draw(_names)), ("arguments", draw(_arguments))):
        if value is not None:
            delta["function"][key] = value
    return delta


def _record(call: Any) -> tuple[Any, ...]:
    return (
        call.index,
        call.position,
        call.id,
        call.type,
        call.name,
        call.state,
        call.closed,
        call.text(),
        call.tokenizer.fed,
        call.result,
    )


def _state(asm: Any) -> tuple[Any, ...]:
    """Everything the assembler keeps about its calls, comparable across the two paths."""
    calls = {index: _record(call) for index, call in asm._calls.items()}
    by_id = {key: call.index for key, call in asm._by_id.items()}
    last = None if asm._last is None else asm._last.index
    return calls, by_id, last, asm._open, asm.calls


def _run(cls: Any, steps: list[dict[str, Any]], options: dict[str, Any]) -> list[Any]:
    asm = cls(**options)
    out: list[Any] = []
    for delta in steps:
        try:
            out.append(list(asm.feed(delta)))
        except Exception as exc:  # the same error on both paths, compared
            out.append((type(exc), str(exc)))
        out.append(_state(asm))
    out.append(asm.finish())
    out.append(_state(asm))
    return out


@FAST
@given(st.lists(deltas(), min_size=1, max_size=8), st.sampled_from(OPTIONS))
def test_starts_agree_with_python(steps: list[dict[str, Any]], options: dict[str, Any]) -> None:
    assert _run(Assembler, steps, options) == _run(PythonAssembler, steps, options)


@FAST
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from(["{", '"a"', ": 1", "}", "x"])), max_size=8
    ),
    st.sampled_from(OPTIONS),
    st.booleans(),
)
def test_first_fragments_agree_with_python(
    fragments: list[tuple[int, str]], options: dict[str, Any], typed: bool
) -> None:
    """Started calls, then fragments by ``feed`` and ``feed_arguments``, some with a type."""
    steps: list[dict[str, Any]] = [
        {"index": i, "id": f"call_{i}", "function": {"name": "get"}} for i in range(3)
    ]
    for index, fragment in fragments:
        delta: dict[str, Any] = {"index": index, "function": {"arguments": fragment}}
        if typed:
            delta["type"] = "function"
        steps.append(delta)
    assert _run(Assembler, steps, options) == _run(PythonAssembler, steps, options)


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count the calls of the Python method ``name`` of the native Assembler."""
    method = getattr(_AssemblerBody, name)
    seen: list[int] = []

    def counted(self: Any, *args: Any) -> Any:
        seen.append(1)
        return method(self, *args)

    monkeypatch.setattr(Assembler, name, counted)
    return seen


def test_a_plain_start_and_first_fragment_are_taken_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    applied = _counting(monkeypatch, "_apply")
    asm = Assembler()
    started = asm.feed({"index": 0, "id": "call_0", "type": "function", "function": {"name": "f"}})
    assert [type(e).__name__ for e in started] == ["CallStarted"]
    assert asm.feed_arguments(0, '{"a": ') == [ArgumentsDelta(index=0, fragment='{"a": ')]
    assert [type(e).__name__ for e in asm.feed_arguments(0, "1}")] == [
        "ArgumentsDelta",
        "CallReady",
    ]
    assert applied == []
    assert asm._calls[0].type == "function"
    assert asm.complete()[0].parsed_arguments == {"a": 1}


@pytest.mark.parametrize(
    ("options", "delta"),
    [
        ({"tools": TOOLS}, {"index": 0, "id": "a", "function": {"name": "get"}}),
        ({"json_listener": lambda i, b: None}, {"index": 0, "id": "a", "function": {"name": "f"}}),
        ({"limits": Limits(max_id_chars=1)}, {"index": 0, "id": "ab", "function": {"name": "f"}}),
        ({}, {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{"}}),
        ({}, {"index": 0, "function": {"name": "f"}}),
        ({}, {"id": "a", "function": {"name": "f"}}),
    ],
)
def test_the_rest_goes_to_python(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], delta: dict[str, Any]
) -> None:
    applied = _counting(monkeypatch, "_apply")
    Assembler(**options).feed(delta)
    assert applied == [1]


def test_a_typed_first_fragment_goes_to_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_apply_slow`` sets the type of a call that has none: C leaves that to it."""
    asm = Assembler()
    asm.feed({"index": 0, "id": "a", "function": {"name": "f"}})
    applied = _counting(monkeypatch, "_apply")
    asm.feed({"index": 0, "type": "function", "function": {"arguments": "{"}})
    assert applied == [1]
    assert asm._calls[0].type == "function"
