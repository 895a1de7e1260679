"""The event fast path (docs/native.md, "The event fast path") against the pure-Python one.

``BlockFragments`` is the C form of ``AnthropicAdapter._fragment``; ``StitcherBase.feed`` the
C form of ``Stitcher.feed``'s shortcut for the event that reader takes. Both must do what
the Python code does, for any event: the same result, the same effect on the block states,
the same events, errors and final result through a whole stream.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import PROPERTY_SETTINGS, loose_values
from toolstitch import NATIVE, Stitcher
from toolstitch.adapters import anthropic
from toolstitch.stitch import stitcher as _stitcher
from toolstitch.testing import PythonStitcher
from toolstitch.testing.strategies import streams
from toolstitch.vocab.native import extension

pytestmark = pytest.mark.skipif(not NATIVE, reason="the C extension is not active")

FAST = settings(PROPERTY_SETTINGS, max_examples=60)


class Text(str):
    """A str subclass: not the exact type the C path takes, so it must ask Python."""

    def __eq__(self, other: object) -> bool:
        return True  # equal to everything: only Python's own comparison may decide

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = str.__hash__


# -- BlockFragments against AnthropicAdapter._fragment ------------------------------------------

odd = st.one_of(loose_values, st.builds(Text, st.sampled_from(["", "x", "tool_use"])))
words = st.sampled_from(
    ["content_block_delta", "input_json_delta", "content_block_start", "text_delta", ""]
)


def mostly(right: Any, other: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``right`` three times in four, else anything of ``other``."""
    return st.integers(0, 3).flatmap(lambda n: st.just(right) if n else other)


@st.composite
def payloads(draw: st.DrawFn) -> dict[str, Any]:
    """Delta events, most of them right, with any field absent, odd or of a str subclass."""
    payload: dict[str, Any] = {}
    if draw(st.integers(0, 6)):
        payload["type"] = draw(mostly("content_block_delta", st.one_of(words, odd)))
    delta: Any = {"type": draw(mostly("input_json_delta", st.one_of(words, odd)))}
    if draw(st.integers(0, 6)):
        delta["partial_json"] = draw(mostly('{"a"', st.one_of(st.text(max_size=4), odd)))
    if not draw(st.integers(0, 6)):
        delta = draw(odd)
    if draw(st.integers(0, 6)):
        payload["delta"] = delta
    if draw(st.integers(0, 6)):
        payload["index"] = draw(mostly(0, st.one_of(st.integers(-1, 3), odd)))
    return payload


@st.composite
def adapters(draw: st.DrawFn) -> anthropic.AnthropicAdapter:
    """An adapter with some open blocks of any kind."""
    adapter = anthropic.AnthropicAdapter()
    for index in draw(st.sets(mostly(0, st.integers(0, 3)), max_size=3)):
        kind = draw(mostly("tool_use", st.sampled_from(["server_tool_use", "thinking", "text"])))
        block = anthropic._Block(kind, f"b{index}", "f", {})
        block.core = draw(st.integers(0, 9))
        adapter._blocks[index] = block
    return adapter


def blocks_state(adapter: anthropic.AnthropicAdapter) -> list[tuple[Any, ...]]:
    return [(i, b.kind, b.client, b.core, b.streamed) for i, b in sorted(adapter._blocks.items())]


@FAST
@given(adapters(), st.lists(payloads(), min_size=1, max_size=6))
def test_the_reader_decides_as_the_python_method(
    adapter: anthropic.AnthropicAdapter, events: list[dict[str, Any]]
) -> None:
    twin = copy.deepcopy(adapter)
    reader = adapter._native_fragment()
    assert reader is not None
    assert type(reader).__name__ == "BlockFragments"
    for event in events:
        assert reader(event) == twin._fragment(event)
        assert blocks_state(adapter) == blocks_state(twin)


def test_the_reader_asks_python_about_values_it_cannot_compare() -> None:
    adapter = anthropic.AnthropicAdapter()
    adapter._blocks[0] = anthropic._Block("tool_use", "t", "f", {})
    reader = adapter._native_fragment()
    assert reader is not None
    # A str subclass equal to everything stands for the event type: Python says it matches.
    odd_type = {"type": Text("?"), "delta": {"type": "input_json_delta", "partial_json": "{"}}
    assert reader({**odd_type, "index": 0}) == (0, "{")
    assert adapter._blocks[0].streamed
    adapter._blocks[1] = anthropic._Block("tool_use", "u", "f", {})
    plain = {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta"}}
    assert reader(plain) is None  # no fragment: nothing done
    assert not adapter._blocks[1].streamed
    # A block whose ``client`` is not a bool: Python's truth decides.
    block: Any = anthropic._Block("tool_use", "v", "f", {})
    adapter._blocks[2] = block
    block.client = 1
    delta = {"type": "input_json_delta", "partial_json": "{"}
    fragment = {"type": "content_block_delta", "index": 2, "delta": delta}
    assert reader(fragment) == (0, "{")
    block.client = 0
    assert reader(fragment) is None


def test_the_reader_reads_the_blocks_of_a_subclass_as_python_does() -> None:
    class Adapter(anthropic.AnthropicAdapter):
        @property
        def _blocks(self) -> dict[int, Any]:
            return {0: anthropic._Block("tool_use", "t", "f", {})}

        @_blocks.setter
        def _blocks(self, value: object) -> None:
            pass

    reader = Adapter()._native_fragment()
    assert reader is not None
    delta = {"type": "input_json_delta", "partial_json": "{"}
    assert reader({"type": "content_block_delta", "index": 0, "delta": delta}) == (0, "{")


def test_the_reader_refuses_a_bad_configuration_and_reads_only_when_bound() -> None:
    assert extension is not None
    adapter = anthropic.AnthropicAdapter()
    options: dict[str, Any] = {
        "event_type": "a",
        "delta_type": "b",
        "text_key": "c",
        "adapter_type": anthropic.AnthropicAdapter,
        "block_type": anthropic._Block,
    }
    with pytest.raises(TypeError, match="no slot"):
        extension.BlockFragments(**{**options, "block_type": int})
    with pytest.raises(TypeError, match="no slot"):
        extension.BlockFragments(**{**options, "adapter_type": object})
    with pytest.raises(TypeError):
        extension.BlockFragments(**{**options, "adapter_type": "x"})
    unbound = extension.BlockFragments(**options)
    with pytest.raises(TypeError, match="callable"):
        unbound.bind(adapter, None)
    with pytest.raises(TypeError, match="unbound"):
        unbound({"type": "a"})
    assert unbound.bind(adapter, adapter._fragment)({"type": "x"}) is None


# -- the native Stitcher against the Python one -------------------------------------------------


def run(stitcher: Any, events: list[Any]) -> list[Any]:
    """Each feed's events (or the exception it raised), the close, and the result."""
    out: list[Any] = []
    for event in events:
        try:
            out.append(stitcher.feed(event))
        except Exception as exc:  # the same exception, with the same message
            out.append((type(exc), str(exc)))
    out.append(stitcher.close())
    out.append(stitcher.result)
    out.append(stitcher.events_read)
    return out


@st.composite
def anthropic_events(draw: st.DrawFn) -> list[Any]:
    """A generated Anthropic stream (quirks and faults included), as event dicts, with now
    and then an event replaced by an odd value or a field of one made odd."""
    stream = draw(streams("anthropic", quirks=True, faults=True))
    events: list[Any] = [copy.deepcopy(dict(event)) for event in stream.events]
    for _ in range(draw(st.integers(0, 2))):
        if not events:
            break
        at = draw(st.integers(0, len(events) - 1))
        event = events[at]
        if isinstance(event, dict) and event and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(event)))
            event[key] = draw(odd)
        else:
            events[at] = draw(st.one_of(odd, payloads()))
    return events


@FAST
@given(anthropic_events(), st.sampled_from([None, {"get_weather": {"type": "object"}}]))
def test_the_native_stitcher_behaves_as_the_python_one(
    events: list[Any], tools: dict[str, Any] | None
) -> None:
    options: dict[str, Any] = {"provider": "anthropic"}
    if tools is not None:
        options["tools"] = tools
    native = Stitcher(**options)
    assert type(native).__mro__[1].__name__ == "StitcherBase"
    assert run(native, copy.deepcopy(events)) == run(PythonStitcher(**options), events)


def test_the_native_feed_takes_its_parameter_by_name_and_refuses_others() -> None:
    stitcher = Stitcher(provider="anthropic")
    assert stitcher.feed(data={"type": "message_start", "message": {"id": "m"}}) == []
    with pytest.raises(TypeError):
        stitcher.feed()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        stitcher.feed({}, {})  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        stitcher.feed(event={})  # type: ignore[call-arg]


def test_after_close_the_shortcut_is_gone_and_feed_refuses() -> None:
    stitcher = Stitcher(provider="anthropic")
    start = {"type": "content_block_start", "index": 0}
    block = {"type": "tool_use", "id": "t", "name": "f", "input": {}}
    stitcher.feed({"type": "message_start", "message": {"id": "m"}})
    stitcher.feed({**start, "content_block": block})
    assert type(stitcher._fragment).__name__ == "BlockFragments"
    delta = {"type": "content_block_delta", "index": 0}
    stitcher.feed({**delta, "delta": {"type": "input_json_delta", "partial_json": '{"a"'}})
    stitcher.close()
    assert stitcher._fragment is None
    with pytest.raises(RuntimeError, match="after close"):
        stitcher.feed({**delta, "delta": {"type": "input_json_delta", "partial_json": ":1}"}})


def test_the_public_class_is_the_native_one() -> None:
    stitcher = Stitcher()
    assert type(stitcher).__name__ == "Stitcher"
    assert Stitcher.__doc__ == vars(_stitcher)["_StitcherBody"].__doc__
    assert stitcher.events_read == 0
    assert stitcher._understood is False
