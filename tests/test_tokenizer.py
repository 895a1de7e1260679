"""``toolstitch.json.tokenizer.ArgumentsTokenizer``: which fragment closes, which one is bad."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import ijson
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import toolstitch
from reference import first_bad_offset, joined, object_end
from strategies import (
    PROPERTY_SETTINGS,
    argument_texts,
    has_huge_exponent,
    mutated,
    per_pass,
    splits,
    text_and_fragments,
)
from toolstitch import Assembler, CallDiscarded, CallReady, Delta, LimitExceeded
from toolstitch.json import tokenizer as tokenizer_module
from toolstitch.json.lexicon import digit_cap
from toolstitch.json.tokenizer import (
    BACKEND,
    ArgumentsTokenizer,
    DepthExceeded,
    DigitsExceeded,
    InvalidFragment,
    JSONEventBatch,
)

CLOSED = "closed"
OPEN = "open"
INVALID = "invalid"


def tokenizer(
    *,
    max_depth: int = 256,
    max_number_digits: int = 4000,
    events: list[JSONEventBatch] | None = None,
) -> ArgumentsTokenizer:
    return ArgumentsTokenizer(
        max_depth=max_depth,
        max_number_digits=max_number_digits,
        listener=None if events is None else events.append,
    )


def drive(fragments: list[str], tok: ArgumentsTokenizer | None = None) -> list[str]:
    """Feed fragments until one closes the object or fails; the outcome of each fed one."""
    tok = tok or tokenizer()
    outcomes = []
    for fragment in fragments:
        try:
            closed = tok.feed(fragment)
        except InvalidFragment:
            outcomes.append(INVALID)
            break
        outcomes.append(CLOSED if closed else OPEN)
        if closed:
            break
    return outcomes


def fragment_holding(fragments: list[str], offset: int) -> int:
    """The number of the fragment that carries character ``offset`` of the joined text."""
    start = 0
    for k, fragment in enumerate(fragments):
        if start <= offset < start + len(fragment):
            return k
        start += len(fragment)
    raise AssertionError(f"offset {offset} is past the text")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_backend_is_the_c_backend() -> None:
    # The C backend is what the performance notes assume; the slower backends are covered
    # by test_assembler.test_pure_python_backend_gives_the_same_results.
    assert BACKEND == "yajl2_c"
    assert toolstitch.JSON_BACKEND == ijson.backend == BACKEND


# -- examples -----------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("fragments", "expected"),
    [
        (["{}"], [CLOSED]),
        (["  \n", "\t{", "}"], [OPEN, OPEN, CLOSED]),
        (["{}  \n"], [CLOSED]),
        (['{"a"', ":", "1", "2", "}"], [OPEN, OPEN, OPEN, OPEN, CLOSED]),
        (['{"a":tr', "ue}"], [OPEN, CLOSED]),
        (['{"a":"\\u00', 'e9"}'], [OPEN, CLOSED]),
        (['{"a":"\\', "u", "00", "e", '9"}'], [OPEN, OPEN, OPEN, OPEN, CLOSED]),
        (['{"a":"\\', '"', '"}'], [OPEN, OPEN, CLOSED]),
        (['{"a":"\\ud83d', '\\ude80"}'], [OPEN, CLOSED]),
        (['{"a":"x\ud83d', '\ude80y"}'], [OPEN, CLOSED]),
        (['{"\ud83d', '\ude80":1}'], [OPEN, CLOSED]),
        (['{"a":"é', "€", '🚀"}'], [OPEN, OPEN, CLOSED]),
        (['{"a":[1,{"b":[]}]', "}"], [OPEN, CLOSED]),
        (['{"a":1', ".", "5", "e", "-", "3}"], [OPEN, OPEN, OPEN, OPEN, OPEN, CLOSED]),
        (["["], [INVALID]),
        (["  ", '"a"'], [OPEN, INVALID]),
        (["1"], [INVALID]),
        (["{", "'"], [OPEN, INVALID]),
        (['{"a":', "N"], [OPEN, INVALID]),
        (['{"a":0', "1"], [OPEN, INVALID]),
        (['{"a":"\\', "x"], [OPEN, INVALID]),
        (['{"a":"\\u12', "g"], [OPEN, INVALID]),
        (['{"a":"\ud83d', '"'], [OPEN, INVALID]),
        (['{"a":"\\ud', "c"], [OPEN, INVALID]),
        (['{"a":"\\ud800', '"'], [OPEN, INVALID]),
        (['{"a":"\\uD800\\u', "0"], [OPEN, INVALID]),
        (['{"a":"', "\ude80"], [OPEN, INVALID]),
        (['{"a":"', "\x1f"], [OPEN, INVALID]),
        (['{"a":1,', "}"], [OPEN, INVALID]),
    ],
)
def test_outcome_of_each_fragment(fragments: list[str], expected: list[str]) -> None:
    assert drive(fragments) == expected


def test_a_surrogate_pair_split_across_fragments_loads_as_one_character() -> None:
    assembler = Assembler()
    assembler.feed(Delta(index=0, id="c", name="f", arguments='{"a":"\ud83d'))
    (ready,) = [
        e for e in assembler.feed(Delta(index=0, arguments='\ude80"}')) if isinstance(e, CallReady)
    ]
    assert ready.call.arguments == '{"a":"\ud83d\ude80"}'  # as received: two code points
    assert ready.call.parsed_arguments == {"a": "🚀"}  # loaded: one character


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_depth_up_to_the_limit_passes_and_one_more_raises() -> None:
    tok = tokenizer(max_depth=3)
    assert not tok.feed('{"a":[[')
    assert not tok.feed("]")
    with pytest.raises(DepthExceeded):
        tok.feed(",[[")
    assert drive(['{"a":[[]]}'], tokenizer(max_depth=3)) == [CLOSED]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_brackets_in_a_string_after_a_held_one_do_not_count() -> None:
    # The closing quote of a string held open since an earlier fragment was read as an
    # opening one by the depth pre-check: the strings after it turned inside out, and the
    # brackets inside "[[[" counted (a false DepthExceeded).
    tok = tokenizer(max_depth=2)
    assert not tok.feed('{"a":"x')
    assert tok.feed('y","b":"[[["}')


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    "fragments",
    [['{"a":123456}'], ['{"a":123', "456}"], ['{"a":1', "2", "3", "4", "5", "6"]],
)
def test_digits_limit_reports_the_first_digit_past_it(fragments: list[str]) -> None:
    tok = tokenizer(max_number_digits=5)
    with pytest.raises(DigitsExceeded) as info:  # noqa: PT012 - the last feed raises
        for fragment in fragments:
            tok.feed(fragment)
    text = "".join(fragments)
    assert info.value.offset == text.index("6")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    "text",
    [
        '{"a":12345}',
        '{"a":-12345.12345e+12345}',
        '{"1234567890":"1234567890"}',
        '{"a":[12345,12345]}',
    ],
)
def test_digits_limit_counts_one_run_of_digits_outside_strings(text: str) -> None:
    assert drive([text], tokenizer(max_number_digits=5)) == [CLOSED]


# -- properties ---------------------------------------------------------------------------


@per_pass(150, PROPERTY_SETTINGS)
@given(text_and_fragments())
def test_only_the_fragment_holding_the_closing_brace_closes(
    case: tuple[str, list[str]],
) -> None:
    text, fragments = case
    end = object_end(text)
    assert end is not None
    closing = fragment_holding(fragments, end - 1)
    assert drive(fragments) == [OPEN] * closing + [CLOSED]


@per_pass(150, PROPERTY_SETTINGS)
@given(st.data())
def test_the_fragment_holding_the_first_bad_character_raises(data: st.DataObject) -> None:
    text = data.draw(argument_texts().flatmap(mutated))
    assume(not has_huge_exponent(text))  # outside a Decimal: the assembler's business
    fragments = data.draw(splits(text))
    bad, end = first_bad_offset(text), object_end(text)
    outcomes = drive(fragments)
    if end is not None:
        # The object closed (maybe with bad text after it): the closing fragment ends the
        # tokenizer's work, by closing or, when it also carries the bad text, by failing.
        closing = fragment_holding(fragments, end - 1)
        assert outcomes[:-1] == [OPEN] * closing
        allowed = (
            {CLOSED}
            if bad is None or bad >= sum(map(len, fragments[: closing + 1]))
            else {
                CLOSED,
                INVALID,
            }
        )
        assert outcomes[-1] in allowed
    elif bad is not None:
        assert outcomes == [OPEN] * fragment_holding(fragments, bad) + [INVALID]
    else:
        assert outcomes == [OPEN] * len(fragments)


@per_pass(150, PROPERTY_SETTINGS)
@given(text_and_fragments())
def test_listener_sees_the_events_of_the_whole_text(case: tuple[str, list[str]]) -> None:
    text, fragments = case
    batches: list[JSONEventBatch] = []
    assert drive(fragments, tokenizer(events=batches))[-1] == CLOSED
    seen = [event for batch in batches for event in batch]
    own = {"string_start", "string_part", "scalar_start"}
    assert [e for e in seen if e[0] not in own] == list(ijson.basic_parse(joined(text).encode()))
    # toolstitch's own events: each open string starts once, then its raw parts follow, and
    # the parts of one string are a prefix of the raw text its closing event decodes.
    for position, (name, value) in enumerate(seen):
        if name == "string_part":
            assert seen[position - 1][0] in own
        if name == "string_start":
            assert value in ("key", "value")
            assert seen[position + 1][0] == "string_part"
        if name == "scalar_start":
            # The next event of ijson's is that scalar, of the kind announced.
            following = next(e for e in seen[position + 1 :] if e[0] not in own)
            assert following[0] == value


# -- close_offset, closed, started, depth -------------------------------------------------------


def _skim_reference(text: str) -> list[tuple[int, bool, bool]]:
    """Character by character, for each prefix length k (0..len): (depth, in_string, started)
    after ``text[:k]``, and the offset just past the root's closing bracket (or -1).

    Follows strings and brackets only, as ``close_offset`` promises.
    """
    depth, in_string, escape, started = 0, False, False, False
    states = [(depth, in_string, started)]
    for ch in text:
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
            started = True
        elif ch in "}]":
            depth -= 1
        elif ch not in " \t\r\n":
            started = True
        states.append((depth, in_string, started))
    return states


def _reference_close(text: str) -> int:
    depth, in_string, escape = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return i + 1
    return -1


def _check_lookahead(fragments: list[str], close: int) -> None:
    """Feed ``fragments`` while the tokenizer accepts them, checking ``close_offset``
    (against ``close``, where the joined text's object ends, -1 if never) before each feed
    and ``closed`` / ``started`` / ``depth`` after it."""
    text = "".join(fragments)
    states = _skim_reference(text)
    tok = tokenizer()
    fed = 0
    for fragment in fragments:
        offset = tok.close_offset(fragment)
        if close < 0 or close > fed + len(fragment):
            assert offset == -1
        else:
            assert offset == close - fed
        try:
            closed = tok.feed(fragment)
        except (InvalidFragment, DigitsExceeded):
            return
        fed += len(fragment)
        assert closed == (offset >= 0)
        assert tok.closed == closed
        if closed:
            assert tok.close_offset("}") == 0
            return
        depth, _, started = states[fed]
        assert tok.depth == depth
        assert tok.started == started
    assert not tokenizer_module._NOT_HELD  # nobody listened: nothing was held


@per_pass(150, PROPERTY_SETTINGS)
@given(case=text_and_fragments(), tail=st.sampled_from(["", " ", "}", '{"b": 1}', "]", ' "x']))
def test_close_offset_is_exact_on_valid_text_whatever_the_split(
    case: tuple[str, list[str]], tail: str
) -> None:
    text, fragments = case
    assume(not has_huge_exponent(text))
    # The object ends at the last non-whitespace character: json's own decoder agrees (on
    # the text with raw surrogate pairs joined), and so does the reference skim.
    close = len(text.rstrip(" \t\n\r"))
    loaded = joined(text)
    assert json.JSONDecoder().raw_decode(loaded.lstrip(" \t\n\r"))[1] == len(
        loaded.strip(" \t\n\r")
    )
    assert _reference_close(text) == close
    if tail and fragments:
        fragments = [*fragments[:-1], fragments[-1] + tail]
    _check_lookahead(fragments, close)


@per_pass(150, PROPERTY_SETTINGS)
@given(data=st.data())
def test_close_offset_follows_strings_and_brackets_on_mutated_text(data: st.DataObject) -> None:
    text = data.draw(argument_texts().flatmap(mutated))
    assume(not has_huge_exponent(text))
    fragments = data.draw(splits(text))
    _check_lookahead(fragments, _reference_close(text))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("fragments", "expected"),
    [
        (['{"a": "x\\', '"}', '"}'], [-1, -1, 2]),  # an escaped quote, its backslash before
        (['{"a": "x\\', '\\"}'], [-1, 3]),  # an escaped backslash: the quote closes it
        (['{"a": "\\u00', '7d"}'], [-1, 4]),
        (['{"a": [', "]", "}"], [-1, -1, 1]),
        (["  ", ' {"a": 1} trailing'], [-1, 9]),
    ],
)
def test_close_offset_across_a_pending_escape(fragments: list[str], expected: list[int]) -> None:
    tok = tokenizer()
    seen = []
    for fragment in fragments:
        seen.append(tok.close_offset(fragment))
        if seen[-1] >= 0:
            break
        tok.feed(fragment)
    assert seen == expected
    assert not tok.closed


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_state_before_and_after_the_close() -> None:
    tok = tokenizer()
    assert (tok.closed, tok.started, tok.depth, tok.close_offset("{}")) == (False, False, 0, 2)
    tok.feed("  ")
    assert not tok.started
    tok.feed('{"a": [{')
    assert (tok.started, tok.depth) == (True, 3)
    assert tok.feed("}]}")
    assert (tok.closed, tok.depth, tok.close_offset(" ")) == (True, 0, 0)


# -- the interpreter's own digit limit ----------------------------------------------------------


@pytest.fixture
def int_digits_640() -> Iterator[None]:
    get = getattr(sys, "get_int_max_str_digits", None)
    if get is None:
        pytest.skip("this Python has no int digit limit")
    before = get()
    sys.set_int_max_str_digits(640)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)


@pytest.mark.usefixtures("int_digits_640")
@pytest.mark.parametrize("cut", [None, 3, 400, 645])
def test_a_number_past_the_interpreters_digit_limit_is_a_limit_not_a_crash(
    cut: int | None,
) -> None:
    # Regression: after sys.set_int_max_str_digits(640) a 1,000-digit number made
    # Assembler.feed raise SystemError from inside ijson's C backend.
    text = '{"a": ' + "1" * 1000 + "}"
    fragments = [text] if cut is None else [text[: 6 + cut], text[6 + cut :]]
    assembler = Assembler()
    events = assembler.feed(Delta(index=0, id="call_1", name="f"))
    for fragment in fragments:
        events += assembler.feed(Delta(index=0, arguments=fragment))
    events += assembler.finish()
    discarded = [e for e in events if isinstance(e, CallDiscarded)]
    assert len(discarded) == 1
    error = discarded[0].error
    assert isinstance(error, LimitExceeded)
    assert (error.limit, error.offset) == ("max_number_digits", 6 + 640)


@pytest.mark.usefixtures("int_digits_640")
def test_a_number_at_the_interpreters_digit_limit_is_accepted() -> None:
    text = '{"a": -' + "1" * 640 + "}"
    assembler = Assembler()
    events = assembler.feed(Delta(index=0, id="call_1", name="f", arguments=text))
    ready = [e for e in events if isinstance(e, CallReady)]
    assert ready
    assert ready[0].call.parsed_arguments == {"a": -int("1" * 640)}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_digit_cap_is_the_lower_of_the_two_limits() -> None:
    get = getattr(sys, "get_int_max_str_digits", None)
    interpreter = get() if get is not None else 0
    assert digit_cap(10) == 10
    assert digit_cap(10**9) == (interpreter or 10**9)
