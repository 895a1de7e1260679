"""The native assembler (C fast feed, docs/native.md) against the pure-Python reference.

The same deltas - any split of one or several calls' arguments, any interleaving of parallel
calls, as dicts, ``Delta``s, openai SDK objects or ``feed_arguments`` calls, with mutations (a
bad character, truncation, ids and names late or repeated, trailing text, small limits) - fed
to the native ``Assembler`` and to ``_PythonAssembler`` give equal events (errors compare
every field: code, offset, line, column, snippet...), equal ``calls`` snapshots,
``complete()`` and ``finish()``. Skipped where the extension is not active.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import PROPERTY_SETTINGS, argument_texts, interleavings, mutated, splits
from toolstitch import NATIVE, Assembler, CallReady, CallWarning, Delta, Limits
from toolstitch.stitch.stitcher import Stitcher
from toolstitch.testing import PythonAssembler, PythonStitcher

pytestmark = pytest.mark.skipif(not NATIVE, reason="the C extension is not active")

Step = tuple[int, str | None, str | None, str | None]  # index, id, name, arguments
FAST = settings(PROPERTY_SETTINGS, max_examples=60)
LIMITS = [None, Limits(max_argument_chars=24), Limits(max_argument_chars=60, max_depth=3)]


# -- the streams ---------------------------------------------------------------------------


@st.composite
def call_text(draw: st.DrawFn) -> str:
    """One call's argument text: valid, or mutated, truncated, or with trailing text."""
    text = draw(argument_texts())
    change = draw(st.sampled_from(["none", "none", "mutate", "truncate", "trail"]))
    if change == "mutate":
        text = draw(mutated(text))
    elif change == "truncate" and len(text) > 1:
        text = text[: draw(st.integers(1, len(text) - 1))]
    elif change == "trail":
        text += draw(st.sampled_from([" ", "\n ", "x", " }", "{}", ' "a"']))
    return text


@st.composite
def call_steps(draw: st.DrawFn, index: int) -> list[Step]:
    """The deltas of one call: a header (id and name, maybe late or repeated), fragments."""
    fragments: list[str] = draw(splits(draw(call_text()))) if draw(st.booleans()) else []
    fragments = fragments or [draw(call_text())]
    steps: list[Step] = [(index, None, None, fragment) for fragment in fragments]
    call_id, name = f"call_{index}", draw(st.sampled_from(["get_weather", "f", "write_file"]))
    where = draw(st.integers(0, len(steps)))  # 0: first; len: after the last fragment
    header: Step = (index, call_id, name, None)
    if where == 0 and draw(st.booleans()):
        steps[0] = (index, call_id, name, steps[0][3])
    else:
        steps.insert(where, header)
    if draw(st.booleans()):  # an id again, the same or another; a name in two pieces
        again = draw(st.sampled_from([call_id, "other"]))
        steps.insert(draw(st.integers(0, len(steps))), (index, again, None, None))
    if draw(st.booleans()):
        steps.insert(draw(st.integers(0, len(steps))), (index, None, "_x", None))
    return steps


@st.composite
def streams(draw: st.DrawFn) -> list[Step]:
    count = draw(st.integers(1, 3))
    calls = [draw(call_steps(index)) for index in range(count)]
    order = draw(interleavings([[str(k)] * len(steps) for k, steps in enumerate(calls)]))
    positions = [0] * count
    merged: list[Step] = []
    for stream, _ in order:
        merged.append(calls[stream][positions[stream]])
        positions[stream] += 1
    return merged


class SDKFunction:
    """The attributes of the openai SDK's ``ChoiceDeltaToolCallFunction``."""

    def __init__(self, name: str | None, arguments: str | None) -> None:
        self.name, self.arguments = name, arguments


class SDKDelta:
    """The attributes of the openai SDK's ``ChoiceDeltaToolCall``."""

    def __init__(self, step: Step) -> None:
        index, call_id, name, arguments = step
        self.index, self.id, self.type = index, call_id, None if call_id is None else "function"
        self.function = SDKFunction(name, arguments)


def as_dict(step: Step) -> dict[str, Any]:
    index, call_id, name, arguments = step
    delta: dict[str, Any] = {"index": index, "function": {}}
    if call_id is not None:
        delta["id"], delta["type"] = call_id, "function"
    if name is not None:
        delta["function"]["name"] = name
    if arguments is not None:
        delta["function"]["arguments"] = arguments
    return delta


FORMS: dict[str, Callable[[Step], object]] = {
    "dict": as_dict,
    "delta": lambda step: Delta(index=step[0], id=step[1], name=step[2], arguments=step[3]),
    "sdk": SDKDelta,
}


def feed(asm: Any, step: Step, form: str) -> list[Any]:
    index, call_id, name, arguments = step
    if form == "arguments" and call_id is None and name is None and arguments is not None:
        return list(asm.feed_arguments(index, arguments))
    return list(asm.feed(FORMS.get(form, as_dict)(step)))


def run(cls: Any, steps: list[Step], forms: list[str], limits: Limits | None) -> Any:
    asm = cls(limits=limits)
    events = [feed(asm, step, form) for step, form in zip(steps, forms, strict=True)]
    middle = (asm.calls, asm.complete(), asm.pending)
    end = asm.finish()
    return events, middle, end, asm.calls, asm.complete(), asm.finish()


# -- properties ----------------------------------------------------------------------------


@FAST
@given(streams(), st.data(), st.sampled_from(LIMITS))
def test_native_and_python_agree(steps: list[Step], data: st.DataObject, limits: Any) -> None:
    forms = data.draw(
        st.lists(st.sampled_from([*FORMS, "arguments"]), min_size=len(steps), max_size=len(steps))
    )
    assert run(Assembler, steps, forms, limits) == run(PythonAssembler, steps, forms, limits)


@FAST
@given(st.lists(argument_texts(), min_size=1, max_size=3), st.data())
def test_valid_calls_through_the_sdk_objects(texts: list[str], data: st.DataObject) -> None:
    pytest.importorskip("openai")
    from openai.types.chat.chat_completion_chunk import (
        ChoiceDeltaToolCall,
        ChoiceDeltaToolCallFunction,
    )

    deltas = []
    for index, text in enumerate(texts):
        for k, fragment in enumerate(data.draw(splits(text))):
            head: dict[str, Any] = {"id": f"c{index}", "type": "function"} if k == 0 else {}
            function = ChoiceDeltaToolCallFunction(name="f" if k == 0 else None, arguments=fragment)
            deltas.append(ChoiceDeltaToolCall(index=index, function=function, **head))
    native, python = Assembler(), PythonAssembler()
    assert [native.feed(d) for d in deltas] == [python.feed(d) for d in deltas]
    assert native.finish() == python.finish()
    assert [c.parsed_arguments for c in native.complete()] == [
        c.parsed_arguments for c in python.complete()
    ]


@FAST
@given(st.lists(argument_texts(), min_size=1, max_size=2), st.data())
def test_the_stitcher_takes_the_native_path(texts: list[str], data: st.DataObject) -> None:
    """The Anthropic shape: ``Driver.events`` calls ``feed_arguments`` per fragment."""
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {"id": "m"}}]
    for index, text in enumerate(texts):
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": f"t{index}", "name": "f", "input": {}},
            }
        )
        for fragment in data.draw(splits(text)):
            delta = {"type": "input_json_delta", "partial_json": fragment}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    native = Stitcher(provider="anthropic")
    assert isinstance(native.assembler, Assembler)
    python = PythonStitcher(provider="anthropic")
    assert not isinstance(python.assembler, Assembler)
    got = [native.feed(event) for event in events] + [native.close()]
    want = [python.feed(event) for event in events] + [python.close()]
    assert got == want


# -- the ready path ------------------------------------------------------------------------

#: A tool declaration for ``f`` (the ready path leaves declared tools to Python).
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


@st.composite
def closing_calls(draw: st.DrawFn) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    """One call whose arguments close on the hot path, and everything the C ready path must
    leave to Python: no id or no name by then, a note, declared tools, a type or none, raw
    surrogate halves, whitespace before and after the object."""
    inner = draw(
        st.sampled_from(
            [
                '"a": 1',
                '"s": "\\ud83d\\ude80"',  # an escaped pair: json.loads joins it
                '"s": "\ud83d\ude80"',  # a raw pair (two code points), maybe split
                '"s": "\u00e9\u65e5"',
                '"x": [1]',
            ]
        )
    )
    text = draw(st.sampled_from(["", " ", "\n"])) + "{" + inner + "}"
    text += draw(st.sampled_from(["", " ", " \r\n\t"]))
    fragments = draw(splits(text))
    head: dict[str, Any] = {"index": 0, "function": {}}
    if draw(st.booleans()):
        head["id"] = "call_0"
        head["type"] = draw(st.sampled_from([None, "", "function", "custom"]))
    if draw(st.booleans()):
        head["function"]["name"] = draw(st.sampled_from(["f", "g"]))
    steps: list[tuple[str, Any]] = [("feed", head)]
    if draw(st.booleans()):
        steps.append(("note", draw(st.sampled_from(["sig", None]))))
    steps += [("feed", {"index": 0, "function": {"arguments": f}}) for f in fragments]
    steps.append(("feed", {"index": 0, "id": "call_0", "function": {"name": "f"}}))
    options: dict[str, Any] = {"tools": TOOLS} if draw(st.booleans()) else {}
    return steps, options


def _replay(cls: Any, steps: list[tuple[str, Any]], options: dict[str, Any]) -> Any:
    asm = cls(**options)
    out: list[Any] = []
    for kind, value in steps:
        try:
            if kind == "note":
                asm.note(0, signature=value, caller={"type": "direct"})
            else:
                out.append(list(asm.feed(value)))
        except Exception as exc:  # noting a discarded call raises: alike on both paths
            out.append((type(exc), str(exc)))
    return out, asm.calls, asm.pending, asm.finish(), asm.calls


@FAST
@given(closing_calls())
def test_the_ready_path_agrees_with_python(case: tuple[list[tuple[str, Any]], Any]) -> None:
    steps, options = case
    assert _replay(Assembler, steps, options) == _replay(PythonAssembler, steps, options)


def test_the_ready_path_is_taken_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """A named call with an id that closes on the hot path is readied without the Python
    ``_closed``; one with a note (or no id yet) goes to it."""
    python_closed = Assembler._closed
    calls: list[int] = []

    def counted(self: Any, call: Any, fragment: str, events: list[Any]) -> None:
        calls.append(call.index)
        python_closed(self, call, fragment, events)

    monkeypatch.setattr(Assembler, "_closed", counted)
    asm = Assembler()
    asm.feed({"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"k": '}})
    events = asm.feed({"index": 0, "function": {"arguments": '"\u00e9"} '}})
    assert [type(e).__name__ for e in events] == ["ArgumentsDelta", "CallReady"]
    ready = events[1]
    assert isinstance(ready, CallReady)
    assert ready.call.parsed_arguments == {"k": "\u00e9"}
    assert ready.call.arguments == '{"k": "\u00e9"}'
    assert asm.pending == 0
    assert calls == []
    asm.feed({"index": 1, "id": "b", "function": {"name": "f", "arguments": "{"}})
    asm.note(1, signature="s")
    asm.feed({"index": 1, "function": {"arguments": "}"}})
    assert calls == [1]


# -- examples ------------------------------------------------------------------------------


def test_the_public_class_is_the_native_one() -> None:
    asm = Assembler()
    assert type(asm).__name__ == "Assembler"
    assert isinstance(asm, Assembler)
    assert not hasattr(asm, "__dict__")
    assert repr(asm).startswith("<toolstitch.core.assembler.Assembler object at ")
    assert isinstance(PythonAssembler().feed, MethodType)  # a Python method ...
    assert not isinstance(asm.feed, MethodType)  # ... and the C one


def _error(feed: Callable[[object], object], bad: object) -> BaseException:
    try:
        feed(bad)
    except Exception as exc:  # any error: the two paths must raise alike
        return exc
    raise AssertionError(f"{bad!r} was accepted")


def test_a_bad_delta_raises_the_same_error() -> None:
    for bad in (b"text", None, 3, {"index": -1}, {"index": True}, Delta(index="0")):  # type: ignore[arg-type]
        native, python = _error(Assembler().feed, bad), _error(PythonAssembler().feed, bad)
        assert type(native) is type(python)
        assert str(native) == str(python)


def test_text_and_unread_keys_are_handled_alike() -> None:
    # A str is ignored, a key no shape reads warned, on both paths (the C feed hands a dict
    # with a key outside the wire shape to the Python one).
    for delta in ("text", {"index": 0, "id": "c", "function": {"name": "f", "x": 1}}):
        native, python = Assembler().feed(delta), PythonAssembler().feed(delta)
        assert native == python
    assert [e.error.code for e in native if isinstance(e, CallWarning)] == ["unread-field"]


def test_feed_takes_its_parameter_by_name() -> None:
    asm = Assembler()
    assert asm.feed(delta={"index": 0, "function": {"arguments": "{"}})
    assert asm.feed_arguments(index=0, fragment="}")
    with pytest.raises(TypeError):
        asm.feed()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        asm.feed_arguments(0, "{", "x")  # type: ignore[call-arg]


# -- the C text buffer -----------------------------------------------------------------------

TextOp = tuple[str, str]


@settings(FAST, max_examples=25)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.text(min_size=1, max_size=3)),
            st.tuples(st.sampled_from(["text", "snapshot", "clear"]), st.just("")),
        ).filter(lambda op: op[0] != "clear" or op[1] == ""),
        max_size=40,
    ),
    st.integers(0, 600),
)
def test_the_text_buffer_behaves_as_chunked_text(ops: list[TextOp], bulk: int) -> None:
    """Past ``JOIN_EVERY`` fragments too (``bulk`` appends first), snapshots kept unchanged."""
    from toolstitch.vocab.native import extension
    from toolstitch.vocab.text import ChunkedText

    assert extension is not None
    native, python = extension.TextBuffer(), ChunkedText()
    kept: list[tuple[Any, Any]] = []
    for op, fragment in [("append", "ab")] * bulk + ops:
        if op == "append":
            native.append(fragment)
            python.append_to_length(fragment, python.length + len(fragment))
        elif op == "text":
            assert native.text() == python.text()
        elif op == "snapshot":
            kept.append((native.snapshot(), python.snapshot()))
        else:
            native.clear()
            python.clear()
        assert (native.length, len(native)) == (python.length, len(python))
    assert native.snapshot() == python.snapshot()
    assert native.text() == python.text()
    assert all(ours == theirs for ours, theirs in kept)
