"""Each adapter alone, with no Assembler: recorded payloads in, the items it returns out."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import per_pass
from toolstitch.adapters import (
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
)
from toolstitch.core.deltas import Delta, delta_fields
from toolstitch.core.instructions import Arguments, EndCall, Finish, Item, ServerDelta, ServerEnd
from toolstitch.vocab.call_events import CallState
from toolstitch.vocab.endings import Ending
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningDelta,
    StreamWarning,
    TextDelta,
    Usage,
)


class _Record:
    """Just enough of a core record for the quirk layer: the test plays the core."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.id: str | None = None
        self.name = ""
        self.state = CallState.AWAITING_ID
        self.buffer = ""
        self.result = None

    @property
    def closed(self) -> bool:
        try:
            json.loads(self.buffer)
        except ValueError:
            return False
        return True

    @property
    def started(self) -> bool:
        return bool(self.buffer.strip())

    @property
    def length(self) -> int:
        return len(self.buffer)

    def text(self) -> str:
        return self.buffer

    def close_offset(self, fragment: str) -> int:
        return -1


class _Records:
    limits = Limits()

    def __init__(self) -> None:
        self.records: dict[int, _Record] = {}

    def record(self, index: int) -> _Record | None:
        return self.records.get(index)

    def generated_id(self, index: int) -> str:
        return f"toolstitch_call_{index}"

    def take(self, items: Iterable[Item]) -> list[Item]:
        """Consume ``items`` as the Stitcher would, applying each delta to the records."""
        out = []
        for item in items:
            out.append(item)
            if isinstance(item, Delta):
                assert item.index is not None
                record = self.records.setdefault(item.index, _Record(item.index))
                record.id = record.id or item.id
                record.name += item.name or ""
                record.buffer += item.arguments or ""
            elif isinstance(item, dict):  # a delta in the wire shape, index already the core's
                self.records[item["index"]].buffer += item["function"]["arguments"]
        return out


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_openai_chat_items() -> None:
    records = _Records()
    adapter = OpenAIChatAdapter(records=records)
    entry: dict[str, Any] = {"index": 0, "id": "c1", "type": "function"}
    entry["function"] = {"name": "f", "arguments": '{"abc"'}
    items = records.take(adapter.feed({"choices": [{"delta": {"content": "Hi"}}]}))
    items += records.take(adapter.feed({"choices": [{"delta": {"tool_calls": [entry]}}]}))
    rest = {"index": 0, "function": {"arguments": ": 1}"}}
    items += records.take(adapter.feed({"choices": [{"delta": {"tool_calls": [rest]}}]}))
    items += records.take(adapter.feed({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}))
    items += records.take(adapter.close())
    assert items == [
        TextDelta(text="Hi"),
        Delta(index=0, id="c1", type="function", name="f", arguments='{"abc"'),
        rest,  # the protocol's own shape goes to the core as it came
        FinishReason(reason="tool_calls"),
        EndCall(0, Ending.COMPLETE),  # the finish reason ends the calls, as it says
        EndCall(0, None),  # the stream's end: as its finish reason says
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_anthropic_items() -> None:
    adapter = AnthropicAdapter()
    block = {"type": "tool_use", "id": "tu1", "name": "f", "input": {}}
    server = {"type": "server_tool_use", "id": "st1", "name": "web_search", "input": {}}
    payloads: list[dict[str, Any]] = [
        {"type": "content_block_start", "index": 0, "content_block": block},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{}"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": server},
        {"type": "content_block_stop", "index": 1},
    ]
    items = [item for payload in payloads for item in adapter.feed(payload)]
    items += adapter.close()
    start = {"index": 0, "id": "tu1", "function": {"name": "f"}}  # the wire shape, cheaper
    assert delta_fields(start) == delta_fields(Delta(index=0, id="tu1", name="f"))
    assert items == [
        start,
        Arguments(0, "{}"),
        EndCall(0),
        ServerDelta(Delta(index=1, id="st1", name="web_search")),
        ServerEnd(1, "st1", "server_tool_use"),  # no input: the core's end rule decides
        Finish(),
        ServerEnd(1, "st1", "server_tool_use", None),  # as the stream's end says
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_openai_responses_items() -> None:
    adapter = OpenAIResponsesAdapter()
    added = {"type": "function_call", "id": "fc1", "call_id": "c1", "name": "f"}
    payloads: list[dict[str, Any]] = [
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{}"},
        {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": "{}"},
    ]
    items = [item for payload in payloads for item in adapter.feed(payload)]
    items += adapter.close()
    assert items == [
        Delta(index=0, id="c1", type="function", name="f"),
        Arguments(0, "{}"),
        EndCall(0),
        Finish(),
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_gemini_items() -> None:
    adapter = GeminiAdapter()
    part = {"functionCall": {"name": "f", "args": {"a": 1}}}
    chunk = {"candidates": [{"content": {"parts": [part]}, "finishReason": "STOP"}]}
    items = list(adapter.feed(chunk)) + list(adapter.close())
    assert items == [
        Delta(index=0, id=None, name="f", arguments='{"a":1}'),
        EndCall(0),
        FinishReason(reason="STOP"),
        Finish(),
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("provider", "event"),
    [
        ("anthropic", lambda i: {"type": f"new_event_{i}"}),
        ("openai-responses", lambda i: {"type": f"response.new_{i}"}),
        ("cohere-chat", lambda i: {"type": f"new-event-{i}"}),
        ("bedrock-converse", lambda i: {f"newEvent{i}": {}}),
    ],
)
def test_unknown_kinds_are_reported_once_each_and_boundedly(
    provider: str, event: Callable[[int], dict[str, object]]
) -> None:
    from toolstitch.adapters import ADAPTERS
    from toolstitch.adapters._base import MAX_REPORTED_KINDS

    adapter = ADAPTERS[provider]()
    warnings = [
        item
        for i in [*range(3 * MAX_REPORTED_KINDS), 0, 1]
        for item in adapter.feed(event(i))
        if isinstance(item, StreamWarning)
    ]
    assert len(warnings) == MAX_REPORTED_KINDS  # one per kind, the repeats of 0 and 1 none
    assert {w.error.code for w in warnings} == {"quirk-unknown-event"}
    assert all(len(w.error.message) < 300 for w in warnings)


_QUICK_FIELDS = {TextDelta: "text", ReasoningDelta: "text", FinishReason: "reason", Usage: "usage"}


@pytest.mark.parametrize("kind", list(_QUICK_FIELDS))
# Same code on either path (no assembler, no C): half the examples on each pass.
@per_pass(100)
@given(text=st.text(), usage=st.dictionaries(st.text(max_size=8), st.integers(), max_size=3))
def test_the_quick_events_are_the_events_their_constructors_make(
    kind: type[TextDelta | ReasoningDelta | FinishReason | Usage],
    text: str,
    usage: dict[str, int],
) -> None:
    """The adapters' quick events (slot descriptors, not ``__init__``: text, reasoning, the
    finish reason, usage) are the same values in every way a consumer can see: equal, same
    hash, repr and type, frozen, slotted."""
    from toolstitch.adapters._base import finish_event, reasoning_delta, text_delta, usage_event

    field = _QUICK_FIELDS[kind]
    value: object = usage if kind is Usage else text
    maker: Any = {
        TextDelta: text_delta,
        ReasoningDelta: reasoning_delta,
        FinishReason: finish_event,
        Usage: usage_event,
    }[kind]
    quick = maker(value)
    made = kind(**{field: value})  # type: ignore[arg-type]
    assert type(quick) is kind
    assert quick == made
    assert hash(quick) == hash(made)
    assert repr(quick) == repr(made)
    assert getattr(quick, field) is value
    assert not hasattr(quick, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(quick, field, value)
