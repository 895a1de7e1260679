"""toolstitch.testing's SSE writer: what it frames, the stream decoder reads back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import per_pass
from toolstitch.decode.sse import SSEDecoder, SSEMessage
from toolstitch.testing import Hold, Reply
from toolstitch.testing._sse import DONE, frame, named, split


def decode(data: bytes) -> list[SSEMessage]:
    decoder = SSEDecoder()
    return decoder.feed(data) + decoder.close()


json_objects = st.dictionaries(
    st.text(max_size=5),
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    max_size=3,
)
names = st.none() | st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)


# Same code on either path (no assembler, no C): half the examples on each pass.
@per_pass(50, settings(deadline=None))
@given(data=json_objects, event=names)
def test_a_framed_event_decodes_to_its_name_and_json(
    data: dict[str, Any], event: str | None
) -> None:
    (message,) = decode(frame(data, event))
    assert message.event == (event or "message")
    assert json.loads(message.data) == data


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_done_is_the_openai_sentinel() -> None:
    (message,) = decode(DONE)
    assert message.is_done


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_split_keeps_each_event_as_recorded_and_named_adds_the_type() -> None:
    stream = b'event: ping\r\ndata: {"type": "ping"}\r\n\r\n: comment\n\ndata: {"type": "x"}\n\n'
    events = split(stream)
    assert events == [
        b'event: ping\ndata: {"type": "ping"}\n\n',
        b": comment\n\n",
        b'data: {"type": "x"}\n\n',
    ]
    assert [named(e) for e in events] == [
        events[0],  # already named
        events[1],  # no data
        b'event: x\ndata: {"type": "x"}\n\n',
    ]
    assert named(b"data: [1, 2]\n\n") == b"data: [1, 2]\n\n"  # no "type" to name it by
    assert named(b'data: {"type": 3}\n\n') == b'data: {"type": 3}\n\n'


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_reply_sse_places_holds_between_events() -> None:
    stream = b"data: 1\n\ndata: 2\n\n"
    reply = Reply.sse(stream, holds={0: "first", 2: "last"})
    assert reply.steps == [Hold("first"), b"data: 1\n\n", b"data: 2\n\n", Hold("last")]
