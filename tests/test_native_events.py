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
from toolstitch import NATIVE, Assembler, Stitcher
from toolstitch.adapters import anthropic
from toolstitch.stitch import stitcher as _stitcher
from toolstitch.testing import PythonAssembler, PythonStitcher
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
#: The event types of the quiet verdict (``AnthropicAdapter._quiet``), and two that are not.
quiet_words = st.sampled_from(
    ["content_block_stop", "message_stop", "ping", "message_delta", "content_block_start"]
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
def stops(draw: st.DrawFn) -> dict[str, Any]:
    """Events of the quiet verdict's types, most of them right, any field absent or odd."""
    payload: dict[str, Any] = {"type": draw(mostly("content_block_stop", quiet_words | odd))}
    if draw(st.integers(0, 6)):
        payload["index"] = draw(mostly(draw(st.integers(0, 3)), st.one_of(st.integers(-1, 3), odd)))
    return payload


#: How a block's call stands in the core: none yet, streaming, ready, discarded.
CALL_STATES = ("none", "open", "ready", "discarded")


@st.composite
def adapter_specs(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """Some blocks of any kind: (index, kind, core, streamed, the call's state, thinking)."""
    spec = []
    for index in draw(st.sets(st.integers(0, 3), min_size=1, max_size=4)):
        kind = draw(mostly("tool_use", st.sampled_from(["server_tool_use", "thinking", "text"])))
        spec.append(
            (
                index,
                kind,
                draw(mostly(index, st.integers(0, 9))),
                draw(mostly(True, st.just(False))),
                draw(st.sampled_from(CALL_STATES)),
                not draw(st.integers(0, 5)),
            )
        )
    return spec


def make_adapter(spec: list[tuple[Any, ...]], assembler: Any) -> anthropic.AnthropicAdapter:
    """An adapter with the blocks of ``spec``, reading the records of ``assembler``, in which
    each block's call stands as ``spec`` says."""
    adapter = anthropic.AnthropicAdapter(records=assembler)
    for index, kind, core, streamed, state, thinking in spec:
        block = anthropic._Block(kind, f"b{index}", "f", {})
        block.core, block.streamed = core, streamed
        adapter._blocks[index] = block
        if thinking:
            adapter._thinking[index] = anthropic._Thinking("thinking", 10, "", "")
        if state != "none" and assembler.record(core) is None:
            assembler.feed({"index": core, "id": f"c{core}", "function": {"name": "f"}})
            assembler.feed_arguments(core, {"open": "{", "ready": "{}", "discarded": "]"}[state])
    return adapter


def blocks_state(adapter: anthropic.AnthropicAdapter) -> list[tuple[Any, ...]]:
    return [(i, b.kind, b.client, b.core, b.streamed) for i, b in sorted(adapter._blocks.items())]


@FAST
@given(
    adapter_specs(),
    st.lists(st.one_of(payloads(), stops()), min_size=1, max_size=6),
    st.sampled_from([Assembler, PythonAssembler]),
)
def test_the_reader_decides_as_the_python_method(
    spec: list[tuple[Any, ...]], events: list[dict[str, Any]], core: type[Any]
) -> None:
    # Records of another class than the native assembler's: C asks the Python method.
    adapter = make_adapter(spec, core())
    twin = make_adapter(spec, core())
    reader = adapter._native_fragment()
    assert reader is not None
    assert type(reader).__name__ == "BlockFragments"
    for event in events:
        assert reader(event) == twin._fragment(event)
        assert blocks_state(adapter) == blocks_state(twin)


@st.composite
def tool_blocks(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """Four tool blocks, whose calls stand each in another of the four ways, as a spec."""
    states = draw(st.permutations(CALL_STATES))
    return [
        (index, "tool_use", index, draw(mostly(True, st.just(False))), state, draw(st.booleans()))
        for index, state in enumerate(states)
    ]


@FAST
@given(st.one_of(tool_blocks(), adapter_specs()), st.lists(stops(), min_size=1, max_size=4))
def test_the_quiet_verdict_is_the_python_one(
    spec: list[tuple[Any, ...]], events: list[dict[str, Any]]
) -> None:
    adapter, twin = make_adapter(spec, Assembler()), make_adapter(spec, Assembler())
    reader = adapter._native_fragment()
    assert reader is not None
    for event in events:
        assert reader(event) == twin._fragment(event)


@pytest.mark.parametrize("core", [Assembler, PythonAssembler])
def test_quiet_events_are_the_silent_ones_and_the_stop_of_an_ended_call(core: type[Any]) -> None:
    spec = [(0, "tool_use", 0, True, "ready", False), (1, "tool_use", 1, True, "open", False)]
    spec += [(2, "tool_use", 2, True, "discarded", False)]
    spec += [(3, "tool_use", 3, False, "ready", False)]
    adapter = make_adapter(spec, core())
    reader = adapter._native_fragment()
    assert reader is not None
    for event in ({"type": "message_stop"}, {"type": "ping", "x": [1]}):
        assert reader(event) == () == adapter._fragment(event)
    verdicts = [reader({"type": "content_block_stop", "index": i}) for i in range(5)]
    assert verdicts == [(), None, (), None, None]  # ready, open, discarded, not streamed, none
    adapter._thinking[0] = anthropic._Thinking("thinking", 10, "", "")
    assert reader({"type": "content_block_stop", "index": 0}) is None  # a thinking block's
    assert reader({"type": "message_delta", "delta": {}}) is None
    assert reader({"type": Text("ping")}) is None  # Python's own comparison: no str type


def test_a_quiet_event_through_the_stitcher_gives_nothing_and_is_counted() -> None:
    stitcher = Stitcher(provider="anthropic")
    block = {"type": "tool_use", "id": "t", "name": "f", "input": {}}
    stitcher.feed({"type": "message_start", "message": {"id": "m"}})
    stitcher.feed({"type": "content_block_start", "index": 0, "content_block": block})
    delta = {"type": "input_json_delta", "partial_json": "{}"}
    ready = stitcher.feed({"type": "content_block_delta", "index": 0, "delta": delta})
    assert [type(e).__name__ for e in ready] == ["ArgumentsDelta", "CallReady"]
    read = stitcher.events_read
    assert stitcher.feed({"type": "content_block_stop", "index": 0}) == []
    assert stitcher.feed({"type": "message_stop"}) == []
    assert stitcher.events_read == read + 2
    assert [type(e).__name__ for e in stitcher.close()] == []  # the call was ready already
    assert [c.arguments for c in stitcher.result.calls] == ["{}"]


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
    options.update(stop_type="d", silent_types=frozenset({"e"}), final_states=())
    for missing in ("stop_type", "silent_types", "final_states"):
        with pytest.raises(TypeError, match=missing):
            extension.BlockFragments(**{k: v for k, v in options.items() if k != missing})
    with pytest.raises(TypeError):
        extension.BlockFragments(**{**options, "silent_types": {"e"}})  # a set, not frozen
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
