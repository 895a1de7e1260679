"""The Assembler with declared tools: unknown names, schema checks, partial view, values.

The building blocks have their own tests (test_tools, test_schema, test_partial); these check
the wiring: which feed reports what, the policies, and that nothing changes without tools.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from strategies import PROPERTY_SETTINGS
from toolstitch import (
    ArgumentsDelta,
    ArgumentsValue,
    Assembler,
    CallDiscarded,
    CallReady,
    CallWarning,
    Delta,
    Event,
    Limits,
    SchemaViolation,
    UnknownTool,
)
from toolstitch.testing import PythonAssembler

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "unit": {"enum": ["C", "F"]},
    },
    "required": ["city"],
    "additionalProperties": False,
}
WRITE = {
    "type": "object",
    "properties": {"path": {"type": "string", "pattern": "^[a-z/]+\\.py$"}, "content": {}},
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
    {"type": "function", "function": {"name": "write_file", "parameters": WRITE}},
]


def _run(assembler: Assembler, name: str | list[str], fragments: list[str]) -> list[list[Event]]:
    names = [name] if isinstance(name, str) else name
    out = [assembler.feed(Delta(index=0, id="c1", name=names[0]))]
    out += [assembler.feed(Delta(index=0, name=piece)) for piece in names[1:]]
    out += [assembler.feed(Delta(index=0, arguments=fragment)) for fragment in fragments]
    out.append(assembler.finish("tool_calls"))  # a response that ended normally
    return out


def _first(trace: list[list[Event]], kind: type[Event]) -> tuple[int, Any]:
    for position, events in enumerate(trace):
        for event in events:
            if isinstance(event, kind):
                return position, event
    raise AssertionError(f"no {kind.__name__} in {trace}")


def test_an_unknown_name_is_refused_at_the_piece_that_rules_it_out() -> None:
    trace = _run(Assembler(tools=TOOLS), ["get_w", "ea", "x", "ther"], ['{"city": "Oslo"}'])
    position, discarded = _first(trace, CallDiscarded)
    assert position == 2  # "get_wea" still fits get_weather; "get_weax" cannot
    assert isinstance(discarded.error, UnknownTool)
    assert discarded.error.closest == "get_weather"
    assert discarded.error.declared == ("get_weather", "write_file")
    assert not any(isinstance(e, CallReady) for events in trace for e in events)


def test_a_complete_name_that_is_only_a_prefix_is_refused_when_the_arguments_start() -> None:
    tools = {"get": {}, "get_weather": WEATHER}
    trace = _run(Assembler(tools=tools), "get_w", ['{"city": "Oslo"}'])
    position, discarded = _first(trace, CallDiscarded)
    assert position == 1
    assert isinstance(discarded.error, UnknownTool)


def test_a_wrong_type_is_refused_by_the_fragment_where_the_value_starts() -> None:
    trace = _run(Assembler(tools=TOOLS), "get_weather", ['{"city": ', "12", "3}"])
    position, discarded = _first(trace, CallDiscarded)
    error = discarded.error
    assert isinstance(error, SchemaViolation)
    assert (error.path, error.keyword, error.offset) == ("/city", "type", 9)
    assert position == 2  # the fragment "12": a number can never become a string


def test_required_is_checked_at_the_close_and_additional_properties_at_the_key() -> None:
    trace = _run(Assembler(tools=TOOLS), "get_weather", ['{"days": 2', ', "mood"', ": 1}"])
    position, discarded = _first(trace, CallDiscarded)
    assert position == 2
    assert discarded.error.keyword == "additionalProperties"
    assert discarded.error.path == "/mood"
    trace = _run(Assembler(tools=TOOLS), "get_weather", ['{"days": 2', "}"])
    position, discarded = _first(trace, CallDiscarded)
    assert position == 2
    assert discarded.error.keyword == "required"


def test_warn_policy_reports_and_keeps_the_call() -> None:
    assembler = Assembler(tools=TOOLS, on_schema_violation="warn")
    trace = _run(assembler, "get_weather", ['{"city": 1, "days": 9, "unit": "K"}'])
    codes = [
        e.error.keyword
        for events in trace
        for e in events
        if isinstance(e, CallWarning) and isinstance(e.error, SchemaViolation)
    ]
    assert sorted(codes) == ["enum", "maximum", "type"]
    (call,) = assembler.complete()
    assert call.parsed_arguments == {"city": 1, "days": 9, "unit": "K"}


def test_jsonschema_backs_the_final_check_for_keywords_not_streamed() -> None:
    trace = _run(Assembler(tools=TOOLS), "write_file", ['{"path": "A.TXT", "content": 1}'])
    _, discarded = _first(trace, CallDiscarded)
    assert discarded.error.keyword == "pattern"
    ok = _run(Assembler(tools=TOOLS), "write_file", ['{"path": "src/a.py", "content": 1}'])
    _, ready = _first(ok, CallReady)
    assert ready.call.name == "write_file"


def test_empty_arguments_are_checked_too() -> None:
    trace = _run(Assembler(tools=TOOLS), "get_weather", [])
    _, discarded = _first(trace, CallDiscarded)
    assert discarded.error.keyword == "required"


@settings(max_examples=60, deadline=None)
@given(
    city=st.text(max_size=8),
    days=st.integers(min_value=-3, max_value=12),
    cuts=st.lists(st.integers(min_value=1, max_value=60), max_size=8),
)
def test_outcome_matches_jsonschema_whatever_the_split(
    city: str, days: int, cuts: list[int]
) -> None:
    import jsonschema

    text = json.dumps({"city": city, "days": days})
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    fragments = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assembler = Assembler(tools=TOOLS)
    trace = _run(assembler, "get_weather", fragments)
    valid = jsonschema.Draft202012Validator(WEATHER).is_valid(json.loads(text))
    ready = [e for events in trace for e in events if isinstance(e, CallReady)]
    discarded = [e for events in trace for e in events if isinstance(e, CallDiscarded)]
    assert len(ready) == (1 if valid else 0)
    assert len(discarded) == (0 if valid else 1)


def test_partial_view_grows_with_the_stream_and_costs_nothing_without_tools() -> None:
    assembler = Assembler(tools=TOOLS)
    assembler.feed(Delta(index=0, id="c1", name="get_weather"))
    seen = []
    for fragment in ['{"city": "Pa', 'ris", "da', 'ys": 3, "unit": "C"', "}"]:
        assembler.feed(Delta(index=0, arguments=fragment))
        snapshot = assembler.call(0)
        assert snapshot is not None
        seen.append(json.loads(json.dumps(snapshot.partial_arguments)))
    assert seen == [
        {"city": "Pa"},
        {"city": "Paris"},
        {"city": "Paris", "days": 3, "unit": "C"},
        {"city": "Paris", "days": 3, "unit": "C"},
    ]
    plain = Assembler()
    plain.feed(Delta(index=0, id="c1", name="anything", arguments='{"a": 1}'))
    snapshot = plain.call(0)
    assert snapshot is not None
    assert snapshot.partial_arguments is None


def test_watched_strings_stream_as_arguments_values() -> None:
    assembler = Assembler(tools=TOOLS, watch_strings={"write_file": ["/content"]})
    trace = _run(
        assembler, "write_file", ['{"path": "a.py", "content": "li', "ne 1\\nli", 'ne 2"}']
    )
    values = [e for events in trace for e in events if isinstance(e, ArgumentsValue)]
    pieces = "".join(v.value for v in values if v.path == "/content" and not v.done)
    assert pieces == "line 1\nline 2"
    done = {v.path: v.value for v in values if v.done}
    assert done["/content"] == "line 1\nline 2"
    assert done["/path"] == "a.py"
    assert done[""] == {"path": "a.py", "content": "line 1\nline 2"}
    # Every ArgumentsValue follows the ArgumentsDelta of its own fragment.
    for events in trace:
        kinds = [type(e) for e in events]
        if ArgumentsValue in kinds:
            assert kinds.index(ArgumentsDelta) < kinds.index(ArgumentsValue)


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="on_schema_violation"):
        Assembler(tools=TOOLS, on_schema_violation="ignore")
    with pytest.raises(TypeError):
        Assembler(tools=TOOLS, watch_strings={"write_file": "/content"})


# -- the first fault wins, by position, whatever the cut (fuzz/README.md, bug 15) ---------------

#: Values of the wrong kind for ``WEATHER``: refused by their first character.
_REFUSED = {
    "city": ["12", "[1]", "true", "null", '{"a": 1}'],
    "days": ['"3"', "[3]", "false", "{}"],
    "unit": ["1", '["C"]', "true", "{}"],
}
_VALID = {"city": ['"Oslo"', '"a\\"b"'], "days": ["3", "7"], "unit": ['"C"', '"F"']}
#: Characters that are a JSON fault wherever they stand, in a string too.
_FAULTS = ("\x00", "\x01", "\x0b", "\x1f")


@st.composite
def violation_and_fault(draw: st.DrawFn) -> tuple[str, str, int]:
    """Arguments with a schema violation and a JSON fault before or after it, and the discard
    they must give: ``(text, code, offset)``, the code and offset of the first of the two."""
    keys = draw(st.permutations(["city", "days", "unit"]))[: draw(st.integers(1, 3))]
    refused = draw(st.sampled_from(keys))
    members: list[str] = []
    start = 0
    for key in keys:
        head = f'"{key}": '
        if key == refused:
            start = len("{" + "".join(m + ", " for m in members) + head)
        members.append(head + draw(st.sampled_from((_REFUSED if key == refused else _VALID)[key])))
    text = "{" + ", ".join(members) + "}"
    at = draw(st.integers(0, len(text)))
    text = text[:at] + draw(st.sampled_from(_FAULTS)) + text[at:]
    return (text, "malformed-arguments", at) if at <= start else (text, "schema-violation", start)


def _discards_for_every_cut(
    text: str, limits: Limits | None = None, name: str = "get_weather"
) -> set[tuple[Any, ...]]:
    """The discards (code, offset) of ``text`` cut into 1 to 3 fragments in every way, with the
    native assembler (when the extension is active) and the pure-Python one."""
    seen: set[tuple[Any, ...]] = set()
    for make in dict.fromkeys((Assembler, PythonAssembler)):  # one when pure Python is active
        for i, j in itertools.combinations_with_replacement(range(len(text) + 1), 2):
            fragments = [f for f in (text[:i], text[i:j], text[j:]) if f]
            trace = _run(make(tools=TOOLS, limits=limits), name, fragments)
            seen.add(
                tuple(
                    (e.error.code, getattr(e.error, "offset", None))
                    for events in trace
                    for e in events
                    if isinstance(e, CallDiscarded)
                )
            )
    return seen


@settings(PROPERTY_SETTINGS, max_examples=10)  # each tries every cut into 3 fragments: O(n²)
@given(violation_and_fault())
@example(('{"city":["":', "schema-violation", 8))  # bug 15: an array where a string must be
@example(('{"city": 1 2}', "schema-violation", 9))
@example(('{"city": [1 "a"]}', "schema-violation", 9))
@example(('{"days": "3\\q"}', "schema-violation", 9))
@example(('{"unit": tx}', "schema-violation", 9))
@example(('{"city" 1, "days": [3]}', "malformed-arguments", 8))
@example(('{"days": 3x, "city": [', "malformed-arguments", 10))
def test_a_violation_and_a_json_fault_give_the_first_of_them_whatever_the_cut(
    case: tuple[str, str, int],
) -> None:
    text, code, offset = case
    assert _discards_for_every_cut(text) == {((code, offset),)}


@pytest.mark.parametrize(
    ("text", "limits", "discard"),
    [
        # A limit is a fault too: the first one by position wins, a violation included.
        ('{"city": [[[1]]]}', Limits(max_depth=2), ("schema-violation", 9)),
        ('{"days": 3, "city": 123}', Limits(max_number_digits=2), ("schema-violation", 20)),
        ('{"days": 3 12}', Limits(max_number_digits=1), ("malformed-arguments", 11)),
        ('{"days": 3 12, "city": 1}', Limits(max_number_digits=1), ("malformed-arguments", 11)),
    ],
)
def test_the_first_fault_wins_with_limits(
    text: str, limits: Limits | None, discard: tuple[str, int]
) -> None:
    assert _discards_for_every_cut(text, limits) == {(discard,)}


@pytest.mark.parametrize(
    ("name", "text", "discard"),
    [
        ("get_weather", '{"city": 1}}', ("schema-violation", 9)),
        # The final check's violation (``pattern`` is not streamed), placed in the object: in
        # the text with what followed it, placing it raised IndexError out of ``feed``.
        ("write_file", '{"path": "A.TXT"}}', ("schema-violation", 9)),
    ],
)
def test_a_violation_followed_by_text_after_the_object(
    name: str, text: str, discard: tuple[str, int]
) -> None:
    assert _discards_for_every_cut(text, name=name) == {(discard,)}
