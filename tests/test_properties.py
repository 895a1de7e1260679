"""Properties of the assembler over generated texts, splits, mutations and interleavings.

Expected outcomes come from ``reference`` (an independent RFC 8259 checker) and ``json``,
never from toolstitch itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import event as note_event
from hypothesis import strategies as st

from reference import first_bad_offset, judged, load, object_end, typed
from strategies import (
    PROPERTY_SETTINGS,
    argument_texts,
    has_huge_exponent,
    interleavings,
    mutated,
    splits,
    text_and_fragments,
    with_raw_surrogates,
)
from toolstitch import (
    ArgumentsDelta,
    Assembler,
    CallDiscarded,
    CallReady,
    CallStarted,
    CallWarning,
    Delta,
    Event,
    MalformedArguments,
    ToolCall,
    TrailingArguments,
    TruncatedArguments,
)

WS = " \t\n\r"


def holding(fragments: Sequence[str], offset: int) -> int:
    """The number of the fragment that carries character ``offset`` of the joined text."""
    start = 0
    for k, fragment in enumerate(fragments):
        if start <= offset < start + len(fragment):
            return k
        start += len(fragment)
    raise AssertionError(f"offset {offset} is past the text")


def feed_call(
    fragments: Sequence[str], *, header_carries_first: bool = False
) -> tuple[Assembler, list[list[Event]], list[int], list[Event]]:
    """One call: a header delta (id, name), then the fragments.

    Returns the assembler, the events of each feed, the feed number of each fragment, and
    the events of ``finish``.
    """
    asm = Assembler()
    rest = list(fragments)
    first = rest.pop(0) if header_carries_first and rest else None
    per_feed = [asm.feed(Delta(index=0, id="call_1", type="function", name="run", arguments=first))]
    feed_of = [0] if first is not None else []
    for fragment in rest:
        feed_of.append(len(per_feed))
        per_feed.append(asm.feed(Delta(index=0, arguments=fragment)))
    return asm, per_feed, feed_of, asm.finish("tool_calls")  # a normal end


def found(per_feed: Sequence[Sequence[Event]], kind: type[Event]) -> list[tuple[int, Any]]:
    """``(feed number, event)`` for every event of ``kind``."""
    return [(k, e) for k, events in enumerate(per_feed) for e in events if isinstance(e, kind)]


def check_lifecycle(events: Sequence[Event]) -> None:
    """Each index starts once and ends once; nothing but warnings follow its end."""
    started = Counter(e.index for e in events if isinstance(e, CallStarted))
    ended = Counter(e.index for e in events if isinstance(e, (CallReady, CallDiscarded)))
    assert set(started.values()) <= {1}
    assert started == ended
    closed: set[int] = set()
    for event in events:
        index = event.index  # type: ignore[attr-defined]
        if index in closed:
            assert isinstance(event, CallWarning), event
        if isinstance(event, (CallReady, CallDiscarded)):
            closed.add(index)


def check_ready_call(call: ToolCall) -> None:
    """Property (4): a complete call's parsed arguments are what a strict loader makes of its
    arguments text (raw surrogate pairs joined, NaN and Infinity refused)."""
    assert isinstance(call.parsed_arguments, dict)
    assert typed(call.parsed_arguments) == typed(load(call.arguments))


def shown_text(per_feed: Sequence[Sequence[Event]]) -> str:
    return "".join(e.fragment for _, e in found(per_feed, ArgumentsDelta))


# -- (1) any split of a valid text --------------------------------------------------------


@PROPERTY_SETTINGS
@given(text_and_fragments(), st.booleans())
def test_any_split_gives_the_same_call_from_the_closing_fragment(
    case: tuple[str, list[str]], header_carries_first: bool
) -> None:
    text, fragments = case
    end = object_end(text)
    assert end is not None
    asm, per_feed, feed_of, finish = feed_call(fragments, header_carries_first=header_carries_first)
    expected = ToolCall(
        index=0, id="call_1", name="run", arguments=text[:end], parsed_arguments=load(text)
    )
    ((k, ready),) = found(per_feed, CallReady)
    assert k == feed_of[holding(fragments, end - 1)]
    assert ready.call == expected
    check_ready_call(ready.call)
    assert found(per_feed, CallWarning) == []
    assert found(per_feed, CallDiscarded) == []
    assert finish == []
    assert asm.complete() == [expected]
    shown = shown_text(per_feed)
    assert text.startswith(shown)
    assert shown.startswith(text[:end])
    check_lifecycle([e for events in per_feed for e in events])


# -- (2) interleaved parallel calls -------------------------------------------------------


@st.composite
def parallel_calls(draw: st.DrawFn) -> tuple[list[int], list[str], list[list[str]]]:
    count = draw(st.integers(2, 4))
    indexes = draw(st.lists(st.integers(0, 9), min_size=count, max_size=count, unique=True))
    texts = [draw(with_raw_surrogates(draw(argument_texts()))) for _ in range(count)]
    return indexes, texts, [draw(splits(text)) for text in texts]


# Each example carries 2-4 generated texts, so 75 examples still draw 150-300 texts (as many as
# test (1) draws at 150) and 75 merge orders; the texts themselves are test (1)'s business.
@settings(PROPERTY_SETTINGS, max_examples=75)
@given(st.data())
def test_any_interleaving_of_parallel_calls_gives_the_same_calls(data: st.DataObject) -> None:
    indexes, texts, fragment_lists = data.draw(parallel_calls())
    # Each stream: a header delta (None) first, then the fragments.
    streams: list[list[str | None]] = [[None, *fragments] for fragments in fragment_lists]
    order = data.draw(interleavings(streams))
    # Each text's end and the fragment that carries its closing brace, judged once per text.
    ends: list[int] = []
    for text in texts:
        end = object_end(text)
        assert end is not None
        ends.append(end)
    closing = [holding(f, end - 1) for f, end in zip(fragment_lists, ends, strict=True)]
    asm = Assembler()
    per_feed: list[list[Event]] = []
    ready_feed: dict[int, int] = {}
    closing_feed: dict[int, int] = {}
    position = [0] * len(streams)
    for k, piece in order:
        index = indexes[k]
        if piece is None:
            delta = Delta(index=index, id=f"call_{index}", name=f"fn_{index}")
        else:
            delta = Delta(index=index, arguments=piece)
            if position[k] - 1 == closing[k]:
                closing_feed[index] = len(per_feed)
        position[k] += 1
        events = asm.feed(delta)
        for event in events:
            if isinstance(event, CallReady):
                ready_feed[event.index] = len(per_feed)
        per_feed.append(events)
    per_feed.append(asm.finish("tool_calls"))  # a normal end
    expected = []
    for index, text, end in sorted(zip(indexes, texts, ends, strict=True)):
        expected.append(
            ToolCall(
                index=index,
                id=f"call_{index}",
                name=f"fn_{index}",
                arguments=text[:end],
                parsed_arguments=load(text),
            )
        )
    assert asm.complete() == expected
    for call in asm.complete():
        check_ready_call(call)
    assert ready_feed == closing_feed
    assert [c.index for c in asm.calls] == sorted(indexes)
    assert found(per_feed, CallWarning) == []
    check_lifecycle([e for events in per_feed for e in events])


# -- (3) mutated texts --------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(st.data())
def test_mutated_text_is_judged_at_the_first_bad_character(data: st.DataObject) -> None:
    text = data.draw(argument_texts().flatmap(with_raw_surrogates).flatmap(mutated))
    assume(not has_huge_exponent(text))  # a mutation can make one; tested on its own
    fragments = data.draw(splits(text)) if text else []
    bad, end = judged(text)
    _, per_feed, feed_of, finish = feed_call(fragments)
    everything = [*per_feed, finish]
    check_lifecycle([e for events in everything for e in events])
    note_event("closed" if end is not None else "bad" if bad is not None else "open")
    if end is not None:
        # The object closed: the call stands, whatever follows.
        _check_closed(text, fragments, everything, feed_of, end, bad)
    elif bad is not None:
        _check_malformed(fragments, everything, feed_of, bad)
    elif not text.strip(WS):
        ((_, ready),) = found([finish], CallReady)
        assert (ready.call.arguments, ready.call.parsed_arguments) == ("{}", {})
    else:
        assert found(per_feed, CallReady) == []
        assert found(per_feed, CallDiscarded) == []
        ((_, discarded),) = found([finish], CallDiscarded)
        assert isinstance(discarded.error, TruncatedArguments)


def _check_closed(
    text: str,
    fragments: Sequence[str],
    everything: list[list[Event]],
    feed_of: list[int],
    end: int,
    bad: int | None,
) -> None:
    """The object closed at ``end``: ready from the feed that closed it; a trailing ``bad``
    character is one warning from the feed that carried it."""
    ((k, ready),) = found(everything, CallReady)
    assert k == feed_of[holding(fragments, end - 1)]
    assert ready.call.arguments == text[:end]
    check_ready_call(ready.call)
    assert typed(ready.call.parsed_arguments) == typed(load(text[:end]))
    warnings = found(everything, CallWarning)
    if bad is None:
        assert warnings == []
    else:
        ((k, warning),) = warnings
        assert isinstance(warning.error, TrailingArguments)
        assert warning.error.offset == bad
        assert k == feed_of[holding(fragments, bad)]


def _check_malformed(
    fragments: Sequence[str], everything: list[list[Event]], feed_of: list[int], bad: int
) -> None:
    """A bad character before the object closed: discarded by the feed that carried it."""
    assert found(everything, CallReady) == []
    ((k, discarded),) = found(everything, CallDiscarded)
    assert isinstance(discarded.error, MalformedArguments), discarded.error
    assert discarded.error.offset == bad
    assert k == feed_of[holding(fragments, bad)]
    assert discarded.arguments == "".join(fragments[: holding(fragments, bad) + 1])


# -- (4) what is not JSON never becomes parsed arguments ----------------------------------

NOT_JSON_VALUES = ["NaN", "Infinity", "-Infinity", "-NaN", "nan", "inf", "None", "undefined"]


# Its own space is small: 8 tokens x 2 places. 75 examples meet each pair about 4-5 times,
# each time with another inner text and split (texts and splits are test (1)'s business).
@settings(PROPERTY_SETTINGS, max_examples=75)
@given(st.data())
def test_non_json_constants_are_rejected_wherever_they_stand(data: st.DataObject) -> None:
    inner = data.draw(argument_texts())
    token = data.draw(st.sampled_from(NOT_JSON_VALUES))
    if data.draw(st.booleans()):
        text = '{"v": ' + inner.strip(WS) + ', "w": [1, ' + token + "]}"
    else:
        text = '{"w": ' + token + ', "v": ' + inner + "}"
    bad = first_bad_offset(text)
    assert bad is not None
    assert text.index(token) <= bad < text.index(token) + len(token)
    fragments = data.draw(splits(text))
    asm, per_feed, feed_of, finish = feed_call(fragments)
    ((k, discarded),) = found([*per_feed, finish], CallDiscarded)
    assert isinstance(discarded.error, MalformedArguments)
    assert discarded.error.offset == bad
    assert k == feed_of[holding(fragments, bad)]
    assert asm.complete() == []
