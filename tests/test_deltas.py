"""What ``Assembler.feed`` accepts as a delta, and ``InvalidDelta`` for everything else."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest

from toolstitch import (
    Assembler,
    CallReady,
    CallStarted,
    CallWarning,
    Delta,
    Event,
    InvalidDelta,
    ToolCallError,
    UnreadField,
    UsageError,
)

# (index, id, type, name, arguments) of a small two-call stream with every field missing
# somewhere, and deltas that leave the index out.
STREAM: list[tuple[int | None, str | None, str | None, str | None, str | None]] = [
    (0, "call_1", "function", "get_", ""),
    (0, None, None, "weather", None),
    (1, "call_2", "function", "search", '{"q": "é'),
    (0, None, None, None, '{"city": '),
    (None, None, None, None, '"Paris"}'),
    (1, None, None, None, '🚀"}'),
    (None, "call_3", None, "third", "{}"),
]


@dataclass
class FakeFunction:
    """Shaped like the openai SDK's ``ChoiceDeltaToolCallFunction``."""

    name: str | None = None
    arguments: str | None = None


@dataclass
class FakeToolCall:
    """Shaped like the openai SDK's ``ChoiceDeltaToolCall``."""

    index: int | None
    id: str | None = None
    function: FakeFunction | None = None
    type: str | None = None


Fields = tuple[int | None, str | None, str | None, str | None, str | None]


def as_delta(f: Fields) -> object:
    return Delta(*f)


def as_wire(f: Fields) -> object:
    return {"index": f[0], "id": f[1], "type": f[2], "function": {"name": f[3], "arguments": f[4]}}


def as_sparse_wire(f: Fields) -> object:
    """Wire shape with the absent keys left out instead of null."""
    out: dict[str, Any] = {
        k: v for k, v in zip(("index", "id", "type"), f[:3], strict=True) if v is not None
    }
    function = {k: v for k, v in zip(("name", "arguments"), f[3:], strict=True) if v is not None}
    if function:
        out["function"] = function
    return out


def as_flat(f: Fields) -> object:
    keys = ("index", "id", "type", "name", "arguments")
    return MappingProxyType(dict(zip(keys, f, strict=True)))


def as_namespace(f: Fields) -> object:
    return SimpleNamespace(
        index=f[0], id=f[1], type=f[2], function=SimpleNamespace(name=f[3], arguments=f[4])
    )


def as_sdk_object(f: Fields) -> object:
    function = None if f[3] is None and f[4] is None else FakeFunction(f[3], f[4])
    return FakeToolCall(index=f[0], id=f[1], function=function, type=f[2])


def as_object_with_mapping_function(f: Fields) -> object:
    return SimpleNamespace(index=f[0], id=f[1], function={"name": f[3], "arguments": f[4]})


FORMS: list[Callable[[Fields], object]] = [
    as_delta,
    as_wire,
    as_sparse_wire,
    as_flat,
    as_namespace,
    as_sdk_object,
    as_object_with_mapping_function,
]


def events_of(form: Callable[[Fields], object]) -> tuple[list[list[Event]], list[Any]]:
    asm = Assembler()
    per_feed = [asm.feed(form(fields)) for fields in STREAM]
    per_feed.append(asm.finish())
    return per_feed, asm.complete()


@pytest.mark.parametrize("form", FORMS, ids=lambda form: form.__name__)
def test_every_delta_form_gives_the_same_events(form: Callable[[Fields], object]) -> None:
    per_feed, complete = events_of(form)
    assert (per_feed, complete) == events_of(as_delta)
    # And the events are the ones the stream describes.
    assert per_feed[0] == [CallStarted(index=0, id="call_1", name="get_")]
    names = [(c.index, c.id, c.name, c.parsed_arguments) for c in complete]
    assert names == [
        (0, "call_1", "get_weather", {"city": "Paris"}),
        (1, "call_2", "search", {"q": "é🚀"}),
        (2, "call_3", "third", {}),
    ]


def test_an_int_subclass_index_is_taken_as_its_int() -> None:
    class Slot(enum.IntEnum):
        FIRST = 3

    asm = Assembler()
    started = asm.feed({"index": Slot.FIRST, "id": "c", "function": {"name": "f"}})
    assert started == [CallStarted(index=3, id="c", name="f")]
    ready = [e for e in asm.feed(Delta(index=3, arguments="{}")) if isinstance(e, CallReady)]
    assert type(ready[0].call.index) is int


def test_empty_strings_count_as_absent() -> None:
    asm = Assembler()
    asm.feed({"index": 0, "id": "", "function": {"name": "", "arguments": ""}})
    (call,) = asm.calls
    assert (call.id, call.name, call.arguments) == (None, None, "")


# -- InvalidDelta -------------------------------------------------------------------------

NOT_DELTAS: list[object] = [
    None,
    b'{"index": 0}',
    0,
    1.5,
    True,
    [{"index": 0}],
    ({"index": 0},),
    {0},
    object(),
    {"index": -1, "function": {"arguments": "{}"}},
    {"index": True, "function": {"arguments": "{}"}},
    {"index": 1.0, "function": {"arguments": "{}"}},
    {"index": "0", "function": {"arguments": "{}"}},
    {"index": 0, "id": 5},
    {"index": 0, "type": ["function"]},
    {"index": 0, "function": "get_weather"},
    {"index": 0, "function": {"name": 7}},
    {"index": 0, "function": {"arguments": b"{}"}},
    {"index": 0, "function": {"arguments": {"a": 1}}},
    MappingProxyType({"index": -5}),
    {"index": 0, "name": ["f"]},
    Delta(index=-1),
    Delta(index=False),
    Delta(index=0, arguments=1),  # type: ignore[arg-type]
    SimpleNamespace(index=-2),
    SimpleNamespace(index=0, function=SimpleNamespace(arguments=3)),
    SimpleNamespace(index=0, id=b"call"),
    FakeToolCall(index=0, function=FakeFunction(name=None, arguments=["{}"])),  # type: ignore[arg-type]
]


def build() -> Assembler:
    """An assembler with a call in progress, a complete one, and an index-less history."""
    asm = Assembler()
    asm.feed(Delta(index=0, id="call_1", name="f", arguments='{"a": [1, '))
    asm.feed(Delta(index=1, id="call_2", name="g", arguments="{}"))
    asm.feed(Delta(index=0, arguments="2"))
    return asm


FOLLOW_UP = [
    Delta(arguments="]}"),  # continues the most recent call (0)
    Delta(id="call_3", name="h", arguments='{"b": '),
    Delta(index=2, arguments="true}"),
]


@pytest.mark.parametrize("bad", NOT_DELTAS, ids=lambda bad: type(bad).__name__)
def test_invalid_delta_raises_and_changes_nothing(bad: object) -> None:
    asm = build()
    before = (asm.calls, asm.pending, asm.complete())
    with pytest.raises(InvalidDelta) as info:
        asm.feed(bad)
    error = info.value
    assert isinstance(error, TypeError)
    assert isinstance(error, UsageError)
    assert isinstance(error, ToolCallError)  # deprecated base, kept for ``except ToolCallError``
    assert error.code == "invalid-delta"
    assert str(error)
    assert (asm.calls, asm.pending, asm.complete()) == before
    # Hidden state (the "most recent call" of index-less deltas) is untouched too: from here
    # on the assembler behaves exactly like one that never saw the bad input.
    twin = build()
    assert [asm.feed(d) for d in FOLLOW_UP] == [twin.feed(d) for d in FOLLOW_UP]
    assert asm.finish() == twin.finish()
    assert asm.calls == twin.calls


def test_object_without_any_delta_field_is_invalid() -> None:
    @dataclass
    class Unrelated:
        text: str = "{}"

    asm = Assembler()
    with pytest.raises(InvalidDelta):
        asm.feed(Unrelated())
    assert (asm.calls, asm.pending) == ((), 0)


@pytest.mark.parametrize("text", ["some text", "", '{"index": 0}'])
def test_a_text_part_is_ignored_and_changes_nothing(text: str) -> None:
    # The seed collector's contract: text parts fed with the deltas cannot satisfy or break
    # a call. A str is never read as a delta, even one that looks like JSON.
    asm = build()
    before = (asm.calls, asm.pending, asm.complete())
    assert asm.feed(text) == []
    assert (asm.calls, asm.pending, asm.complete()) == before
    twin = build()
    assert [asm.feed(d) for d in FOLLOW_UP] == [twin.feed(d) for d in FOLLOW_UP]


def test_langchain_tool_call_chunks_are_read_by_their_args() -> None:
    # langchain-core's tool_call_chunks: {"name", "args", "id", "index", "type"}.
    asm = Assembler()
    chunks = [
        {"name": "get_weather", "args": "", "id": "call_1", "index": 0, "type": "tool_call_chunk"},
        {"name": None, "args": '{"city": ', "id": None, "index": 0, "type": "tool_call_chunk"},
        {"name": None, "args": '"Oslo"}', "id": None, "index": 0, "type": "tool_call_chunk"},
    ]
    events = [event for chunk in chunks for event in asm.feed(chunk)]
    (ready,) = [e for e in events if isinstance(e, CallReady)]
    assert ready.call.parsed_arguments == {"city": "Oslo"}
    assert ready.call.type == "function"  # the chunk's kind is not the call's type
    assert not [e for e in events if isinstance(e, CallWarning)]


@pytest.mark.parametrize(
    ("delta", "key"),
    [
        (
            {"index": 0, "id": "c", "function": {"name": "f", "argumentz": "{"}},
            "function.argumentz",
        ),
        ({"index": 0, "id": "c", "name": "f", "argumentz": "{"}, "argumentz"),
        ({"index": 0, "id": "c", "function": {"name": "f"}, "extra_content": {}}, "extra_content"),
        (MappingProxyType({"index": 0, "id": "c", "name": "f", "argumentz": "{"}), "argumentz"),
    ],
)
def test_a_key_no_shape_reads_is_warned_once_per_call(delta: dict[str, Any], key: str) -> None:
    asm = Assembler()
    first = asm.feed(delta)
    again = asm.feed({k: v for k, v in delta.items() if k not in ("id", "name", "function")})
    warnings = [e for e in first if isinstance(e, CallWarning)]
    assert [(w.index, w.error.code) for w in warnings] == [(0, "unread-field")]
    assert isinstance(warnings[0].error, UnreadField)
    assert warnings[0].error.key == key
    assert key in str(warnings[0].error)
    assert not [e for e in again if isinstance(e, CallWarning) and e.error.code == "unread-field"]
    # The rest of the delta was applied.
    assert asm.calls[0].name == "f"


def test_unread_keys_of_the_function_alone_leave_the_rest_readable() -> None:
    # The index is read: the function's unread keys are warnings, not an invalid delta.
    events = Assembler().feed({"index": 0, "function": {"a": 1, "b": 2}})
    keys = [e.error.key for e in events if isinstance(e, CallWarning)]  # type: ignore[attr-defined]
    assert keys == ["function.a", "function.b"]


def test_a_mapping_with_nothing_readable_is_an_invalid_delta() -> None:
    asm = Assembler()
    with pytest.raises(InvalidDelta, match="argumentz"):
        asm.feed({"argumentz": "{}"})
    assert asm.calls == ()
