"""The quiet lane (docs/native.md): pieces of a model's markup that give no events, held back
in C and read, joined, with the next piece that is not quiet.

The native ``Stitcher`` must give, piece for piece, what the pure ``Stitcher`` gives (which
has no quiet lane): the same events from each ``feed`` (a held piece gives none, as it gives
none there) and from ``close``, the same count of pieces read. Checked on generated outputs
of every format, whole and damaged (cut short, or with a marker's beginning or stray text
put in), in every cut of one to seven characters; and on chosen cases: what is held, the
bound, a header's limit, close.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import PROPERTY_SETTINGS
from test_text_lane import cut, seen
from toolstitch import NATIVE, Limits, Stitcher
from toolstitch.testing import PythonStitcher
from toolstitch.testing.text_outputs import RENDERERS, text_outputs
from toolstitch.text.bodies import QUIET_PLAIN, Quiet

pytestmark = pytest.mark.skipif(not NATIVE, reason="the C extension is not active")

#: The most characters the C lane holds back (quiet.h, TS_QUIET_MAX).
QUIET_MAX = 4096


def per_feed(
    kind: Any, chunks: list[str], fmt: str, **options: Any
) -> tuple[list[list[tuple[object, ...]]], int]:
    stitcher = kind(text_format=fmt, **options)
    out = [[seen(e) for e in stitcher.feed(chunk)] for chunk in chunks]
    out.append([seen(e) for e in stitcher.close()])
    return out, stitcher.events_read


#: Damage put into an output at a drawn place: a marker's beginning, stray text, a newline.
damage = st.sampled_from(["", "<", "</", "<tool", "<|", "[", "{", "x", " \n", "<｜", "functions."])


@settings(PROPERTY_SETTINGS, max_examples=200)
@given(
    data=st.data(),
    fmt=st.sampled_from(sorted(RENDERERS)),
    sizes=st.lists(st.integers(1, 7), min_size=1, max_size=5),
    junk=damage,
    where=st.floats(0, 1),
    short=st.booleans(),
)
def test_the_quiet_lane_gives_the_pure_stitchers_events_piece_for_piece(
    data: st.DataObject, fmt: str, sizes: list[int], junk: str, where: float, short: bool
) -> None:
    text, want = data.draw(text_outputs(fmt))
    at = int(len(text) * where)
    text = text[:at] + junk + (text[at:] if not short else "")
    chunks = cut(text, sizes)
    tools = want.tools or None
    assert per_feed(Stitcher, chunks, fmt, tools=tools) == per_feed(
        PythonStitcher, chunks, fmt, tools=tools
    )


def test_pieces_inside_a_marker_are_held_and_read_with_the_one_that_ends_it() -> None:
    stitcher = Stitcher(text_format="qwen3-coder")
    assert stitcher.feed("Hi ") != []
    assert stitcher._quiet_markers is not None
    for piece in ["<", "tool_", "call"]:
        assert stitcher.feed(piece) == []
    assert stitcher._quiet_pending == "<tool_call"
    assert stitcher.events_read == 4
    stitcher.feed(">\n<function=")  # not quiet: read with what was held
    assert stitcher._quiet_pending is None
    assert stitcher.events_read == 5
    for piece in ["write", "_fi", "le"]:  # a header's name: gathered without a word
        assert stitcher.feed(piece) == []
    assert stitcher._quiet_pending == "write_file"
    assert stitcher.feed(">\n") == []  # the name's end: read, waiting for a parameter
    assert stitcher._quiet_pending is None
    pieces = ["Hi ", "<", "tool_", "call", ">\n<function=", "write", "_fi", "le", ">\n"]
    last = "<parameter=a>\n1\n</parameter>\n</function>"
    native, count = per_feed(Stitcher, [*pieces, last], "qwen3-coder")
    assert (native, count) == per_feed(PythonStitcher, [*pieces, last], "qwen3-coder")
    assert str(native[-2][0][0]).startswith("CallStarted")


def test_close_reads_what_was_held_first() -> None:
    for kind in (Stitcher, PythonStitcher):
        stitcher = kind(text_format="hermes")
        stitcher.feed("Hi")
        assert stitcher.feed("<tool") == []
        events = stitcher.close()
        assert [type(e).__name__ for e in events][:1] == ["TextDelta"]
        assert stitcher.result.text == "Hi<tool"
        assert stitcher.events_read == 2
        with pytest.raises(RuntimeError):
            stitcher.feed("x")


def test_the_lane_holds_a_bounded_text() -> None:
    """A header longer than the lane's bound: held up to it, then read by Python; the same
    events as the pure path either way."""
    name = "n" * (QUIET_MAX + 10)
    text = (
        f"<tool_call>\n<function={name}>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"
    )
    chunks = cut(text, [1])
    stitcher = Stitcher(text_format="qwen3-coder")
    longest = 0
    for chunk in chunks:
        stitcher.feed(chunk)
        longest = max(longest, len(stitcher._quiet_pending or ""))
    assert 0 < longest <= QUIET_MAX
    assert per_feed(Stitcher, chunks, "qwen3-coder") == per_feed(
        PythonStitcher, chunks, "qwen3-coder"
    )


def test_a_name_past_the_limit_fails_at_the_piece_that_crosses_it() -> None:
    """The body gathers a name up to ``max_argument_chars``: the lane takes no more of it
    quietly than that, so the discard comes from the same piece as on the pure path."""
    text = "<tool_call>\n<function=" + "n" * 30 + ">\n</function>\n</tool_call>"
    chunks = cut(text, [3])
    limits = Limits(max_argument_chars=20)
    native = per_feed(Stitcher, chunks, "qwen3-coder", limits=limits)
    assert native == per_feed(PythonStitcher, chunks, "qwen3-coder", limits=limits)
    discards = [i for i, events in enumerate(native[0]) if "CallDiscarded" in str(events)]
    assert discards == [len("<tool_call>\n<function=" + "n" * 21) // 3]  # the 21st name char


def test_quiet_is_data_the_c_lane_reads() -> None:
    quiet = Quiet("<to", ("<tool>", "[x]"), "<[", "any", 5)
    assert QUIET_PLAIN.index(quiet.plain) == 1  # the code C reads in _quiet_plain
    assert QUIET_PLAIN == ("none", "any", "whitespace")
    with pytest.raises(AttributeError):
        quiet.room = 6  # type: ignore[misc]


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        # a stray word between a tagged call's parameters fails the call at that word
        ("qwen3-coder", "<tool_call>\n<function=f>\n  x <parameter=a>\n1\n</parameter>\n"),
        # stray text in DeepSeek's section of calls is dropped with a warning at that text
        (
            "deepseek-v3.1",
            "<｜tool▁calls▁begin｜> \n zz<｜tool▁call▁begin｜>f<｜tool▁sep｜>{}"
            "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        ),
    ],
)
def test_only_whitespace_is_quiet_between_markers(fmt: str, text: str) -> None:
    chunks = cut(text, [1])
    native = per_feed(Stitcher, chunks, fmt)
    assert native == per_feed(PythonStitcher, chunks, fmt)
    stray = text.index("x" if fmt == "qwen3-coder" else "zz")
    assert native[0][stray]  # the piece of the stray text gives its event at once
