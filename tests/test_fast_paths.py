"""The fast paths of the layers above the core give exactly what the generic paths give.

Three shortcuts recognise the commonest input and hand everything else to the generic code:
``SSEDecoder._whole_event`` (a chunk that is one whole ``data:`` event), the OpenAI Chat
adapter's ``_standard`` (a chunk with one choice and either one ``tool_calls`` entry the
quirk layer passes as it came or text alone) and the Anthropic adapter's ``_fragment`` (an
``input_json_delta`` of a client tool block). Each test runs the same stream twice, the
shortcuts on and off (patched to decline everything), and compares every event, field by field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures.expected import cut, fixture_names, load, payloads
from toolstitch import Stitcher
from toolstitch.adapters.anthropic import AnthropicAdapter
from toolstitch.adapters.openai_chat import OpenAIChatAdapter
from toolstitch.decode.sse import SSEDecoder
from toolstitch.vocab.errors import StreamDecodeError
from toolstitch.vocab.stream_events import TextDelta

FIXTURES = fixture_names("openai-chat") + fixture_names("anthropic")


@contextmanager
def generic_only() -> Iterator[None]:
    """Every fast path declines, so the generic code reads everything."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SSEDecoder, "_whole_event", lambda self, chunk: None)
        patch.setattr(OpenAIChatAdapter, "_standard", lambda self, payload: None)
        patch.setattr(AnthropicAdapter, "_fragment", lambda self, payload: None)
        yield


def _norm(event: object) -> tuple[str, object]:
    """An event as comparable data: its repr, and every field of the error it carries."""
    error = getattr(event, "error", None)
    details = None if error is None else (type(error).__name__, str(error), vars(error))
    return repr(event), details


def _run(pieces: list[Any], provider: str = "auto") -> list[tuple[str, object]]:
    stitcher = Stitcher(provider)
    out: list[tuple[str, object]] = []
    try:
        for piece in pieces:
            out += [_norm(e) for e in stitcher.feed(piece)]
        out += [_norm(e) for e in stitcher.close()]
    except StreamDecodeError as exc:
        out.append(("raised", str(exc)))
    out.append(("result", repr(stitcher.result)))
    return out


def _both(pieces: list[Any], provider: str = "auto") -> None:
    fast = _run(pieces, provider)
    with generic_only():
        generic = _run(pieces, provider)
    assert fast == generic


def _event_cuts(body: bytes) -> list[int]:
    """Offsets just after each blank line: each piece one whole event, as servers send."""
    cuts, at = [], 0
    while (at := body.find(b"\n\n", at)) >= 0:
        at += 2
        cuts.append(at)
    return cuts


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_events_chunk_by_chunk(name: str) -> None:
    body, _ = load(name)
    _both(cut(body, _event_cuts(body)))


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_events_as_dicts(name: str) -> None:
    body, _ = load(name)
    _both(payloads(body), "anthropic" if name.startswith("anthropic") else "openai-chat")


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(FIXTURES), data=st.data())
def test_fixture_any_chunking(name: str, data: st.DataObject) -> None:
    """Mostly whole events, some cut anywhere: the shortcut takes what it can, never more."""
    body, _ = load(name)
    events = _event_cuts(body)
    kept = data.draw(st.lists(st.sampled_from(events), max_size=len(events))) if events else []
    extra = data.draw(st.lists(st.integers(0, len(body)), max_size=4))
    _both(cut(body, kept + extra))


# -- the shapes next to the standard one --------------------------------------------------------


def _chunk(delta: dict[str, Any], **choice: Any) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, **choice}],
    }


def _entry(fragment: str, index: int = 0) -> dict[str, Any]:
    return {"index": index, "function": {"arguments": fragment}}


HEADER = _chunk(
    {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": "f", "arguments": ""},
            }
        ]
    }
)

#: A chunk continuing call 0, in a shape the standard path must leave to ``_chunk``.
NEAR_MISSES: list[dict[str, Any]] = [
    _chunk({"tool_calls": [_entry('"a"')], "content": "text"}),
    _chunk({"tool_calls": [_entry('"a"')], "reasoning_content": "hm"}),
    _chunk({"tool_calls": [_entry('"a"')], "refusal": "no"}),
    _chunk({"tool_calls": [_entry('"a"')], "content": None, "role": "assistant"}),
    _chunk({"tool_calls": [_entry('"a"')]}, finish_reason="tool_calls"),
    _chunk({"tool_calls": [_entry('"a"')]}, index=1),
    {**_chunk({"tool_calls": [_entry('"a"')]}), "usage": {"total_tokens": 3}},
    {**_chunk({"tool_calls": [_entry('"a"')]}), "error": {"message": "x"}},
    _chunk({"tool_calls": [_entry('"a"'), _entry('"b"', 1)]}),
    _chunk({"tool_calls": [_entry('"a"'), _entry('"b"')]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"a"', "name": "f"}}]}),
    _chunk({"tool_calls": [{"index": 0, "id": "call_2", "function": {"arguments": '"a"'}}]}),
    _chunk({"tool_calls": [_entry('"a"', 3)]}),
    _chunk({"tool_calls": [_entry('{"x": "a"')]}),  # a cumulative re-send
    _chunk({"tool_calls": [_entry('"a"} {"y": 1}')]}),  # a second object in the fragment
    _chunk({"tool_calls": [_entry('"a"}   ')]}),
    _chunk({"tool_calls": [_entry('"a"}')]}),  # the close
]


@settings(max_examples=60, deadline=None)
@given(
    chunks=st.lists(
        st.sampled_from([_chunk({"tool_calls": [_entry('"a",')]}), *NEAR_MISSES]), max_size=6
    ),
    sse=st.booleans(),
)
def test_chunks_near_the_standard_shape(chunks: list[dict[str, Any]], sse: bool) -> None:
    start = _chunk({"tool_calls": [_entry('{"x": ')]})
    stream = [HEADER, start, *chunks, _chunk({}, finish_reason="tool_calls")]
    if sse:
        body = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in stream] + [
            b"data: [DONE]\n\n"
        ]
        _both(list(body))
    else:
        _both(stream, "openai-chat")


#: Text chunks: the standard text shape (``content`` alone, or with a ``role``), and the shapes
#: next to it that the standard path must leave to ``_chunk``.
TEXT_CHUNKS: list[dict[str, Any]] = [
    _chunk({"content": "Hello"}),
    _chunk({"role": "assistant", "content": "Hi "}),
    _chunk({"role": "assistant", "content": ""}),
    _chunk({"content": ""}),
    _chunk({"content": None}),
    _chunk({"content": ["not", "text"]}),
    _chunk({"content": "a", "refusal": "no"}),
    _chunk({"content": "a", "reasoning_content": "hm"}),
    _chunk({"content": None, "reasoning": "hm"}),
    _chunk({"content": "a", "tool_calls": []}),
    _chunk({"content": "a", "tool_calls": None, "refusal": None}),
    _chunk({"content": "a", "function_call": {"name": "f", "arguments": "{}"}}),
    _chunk({"content": "a"}, finish_reason="stop"),
    _chunk({"content": "a"}, index=1),
    _chunk({}, message={"content": "whole"}),
    {**_chunk({"content": "a"}), "usage": {"total_tokens": 3}},
    {**_chunk({"content": "a"}), "error": {"message": "x"}},
]


@settings(max_examples=80, deadline=None)
@given(
    chunks=st.lists(
        st.sampled_from([*TEXT_CHUNKS, HEADER, _chunk({"tool_calls": [_entry("{}")]})]),
        max_size=8,
    ),
    sse=st.booleans(),
)
def test_text_chunks_near_the_standard_shape(chunks: list[dict[str, Any]], sse: bool) -> None:
    """Text before, between and after reasoning and calls: the same events either way."""
    stream = [*chunks, _chunk({}, finish_reason="stop")]
    if sse:
        body = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in stream]
        _both([*body, b"data: [DONE]\n\n"])
    else:
        _both(stream, "openai-chat")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_standard_text_shape_takes_the_shortcut() -> None:
    """The standard text chunk is read by ``_standard`` itself (else the property above
    would compare the generic path with itself), and a near miss is not."""
    adapter = OpenAIChatAdapter()
    hello = _chunk({"role": "assistant", "content": "Hi"})
    assert adapter._standard(hello) == [TextDelta(text="Hi")]
    assert adapter._standard(_chunk({"content": ""})) == []
    assert adapter._standard(_chunk({"content": "a", "reasoning_content": "hm"})) is None
    assert adapter._standard(_chunk({"content": None})) is None


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    "piece",
    [
        b"data: {}\n\n",
        b"data: {}\r\n\r\n",
        b"data:{}\n\n",
        b"data: {}\n\ndata: {}\n\n",
        b"event: x\ndata: {}\n\n",
        b"data: {}\n",
        b"data: \n\n",
        b'data: {"a": "\xff"}\n\n',
        b"id: 7\n\n",
        b"retry: 10\n\n",
    ],
)
def test_sse_whole_event_matches_the_scanner(piece: bytes) -> None:
    """Each piece after a pending event type, an id, or nothing pending at all."""
    for before in (b"", b"event: named\n", b"id: 3\n\n", b"\xef\xbb\xbf", b"data: x"):
        fast, generic = SSEDecoder(), SSEDecoder()
        with generic_only():
            want = generic.feed(before) + generic.feed(piece) + generic.feed(piece)
            want += generic.close()
        got = fast.feed(before) + fast.feed(piece) + fast.feed(piece) + fast.close()
        assert got == want
        assert (fast.last_event_id, fast.retry) == (generic.last_event_id, generic.retry)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_sse_whole_event_keeps_the_limits() -> None:
    body = b"data: " + b"x" * 20 + b"\n\n"
    for limits in ({"max_line_bytes": 20}, {"max_event_bytes": 19}):
        with pytest.raises(StreamDecodeError) as fast:
            SSEDecoder(**limits).feed(body)
        with generic_only(), pytest.raises(StreamDecodeError) as generic:
            SSEDecoder(**limits).feed(body)
        assert (fast.value.offset, str(fast.value)) == (generic.value.offset, str(generic.value))


ANTHROPIC_START = {"type": "message_start", "message": {"content": [], "usage": {}}}


def _block(index: int, kind: str = "tool_use") -> dict[str, Any]:
    block = {"type": kind, "id": f"toolu_{index}", "name": "f", "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def _json(index: object, fragment: object) -> dict[str, Any]:
    delta = {"type": "input_json_delta", "partial_json": fragment}
    return {"type": "content_block_delta", "index": index, "delta": delta}


@settings(max_examples=60, deadline=None)
@given(
    events=st.lists(
        st.sampled_from(
            [
                _json(0, '{"a": 1'),
                _json(0, ""),
                _json(0, 5),
                _json(1, '{"b": 2}'),
                _json(2, '{"q": "x"}'),
                _json(True, "}"),
                _json(0, "}"),
                _json(9, "{}"),
                {"type": "content_block_delta", "index": 0, "delta": "nope"},
                {"type": "content_block_stop", "index": 0},
                {"type": "content_block_stop", "index": 1},
                _block(1),
                _block(2, "server_tool_use"),
            ]
        ),
        max_size=8,
    )
)
def test_anthropic_fragments(events: list[dict[str, Any]]) -> None:
    _both([ANTHROPIC_START, _block(0), *events, {"type": "message_stop"}], "anthropic")
