"""The quirk layer, one test per provider behaviour of docs/quirks.md (the table names them).

Each test feeds ``ChatQuirks`` the ``delta.tool_calls`` entries a real server sends (the
shapes come from ../shared/quirks.md) and checks the calls and the warning codes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from toolstitch import QUIRK_CODES
from toolstitch.adapters._openai_chat_quirks import ChatQuirks
from toolstitch.core.assembler import Assembler
from toolstitch.core.instructions import Item
from toolstitch.stitch.driver import Driver
from toolstitch.vocab.call_events import CallDiscarded, CallReady, CallWarning, Event
from toolstitch.vocab.errors import ProviderQuirk, TruncatedArguments
from toolstitch.vocab.stream_events import StreamWarning

ROOT = Path(__file__).parents[1]


class _DrivenQuirks:
    """``ChatQuirks`` over a real core: each method returns the events its items led to."""

    def __init__(self) -> None:
        self.assembler = Assembler()
        self.layer = ChatQuirks(self.assembler)
        self.driver = Driver(self.assembler)

    def _drive(self, items: Iterable[Item]) -> list[Event]:
        out: list[Event] = []
        self.driver.drive(items, out)
        return out

    def feed(self, tool_calls: object) -> list[Event]:
        return self._drive(self.layer.feed(tool_calls))

    def finish_reason(self, reason: str) -> list[Event]:
        return self._drive(self.layer.finish_reason(reason))

    def close(self) -> list[Event]:
        return self._drive(self.layer.close())


class Run:
    """Feeds deltas (lists of entries) and keeps every event."""

    def __init__(self) -> None:
        self.quirks = _DrivenQuirks()
        self.events: list[Event] = []

    def feed(self, *entries: Any) -> Run:
        self.events += self.quirks.feed(list(entries))
        return self

    def finish(self, reason: str) -> Run:
        self.events += self.quirks.finish_reason(reason)
        return self

    def close(self) -> Run:
        self.events += self.quirks.close()
        return self

    @property
    def calls(self) -> list[tuple[int, str, str, str]]:
        return [
            (e.call.index, e.call.id, e.call.name, e.call.arguments)
            for e in self.events
            if isinstance(e, CallReady)
        ]

    @property
    def discarded(self) -> list[tuple[int, str]]:
        return [(e.index, e.error.code) for e in self.events if isinstance(e, CallDiscarded)]

    @property
    def warnings(self) -> list[tuple[int | None, str]]:
        out: list[tuple[int | None, str]] = []
        for e in self.events:
            if isinstance(e, CallWarning):
                out.append((e.index, e.error.code))
            elif isinstance(e, StreamWarning):
                out.append((None, e.error.code))
        return out


def tc(index: int | None = None, **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {} if index is None else {"index": index}
    function = {k: fields.pop(k) for k in ("name", "arguments") if k in fields}
    entry.update(fields)
    if function:
        entry["function"] = function
    return entry


def first(index: int, call_id: str, name: str, arguments: str | None = "") -> dict[str, Any]:
    return tc(index, id=call_id, type="function", name=name, arguments=arguments)


# -- names ------------------------------------------------------------------------------------


def test_name_repeated_on_every_chunk() -> None:
    run = Run().feed(first(0, "c1", "read_file", '{"p'))
    run.feed(tc(0, name="read_file", arguments='ath": 1'))
    run.feed(tc(0, name="read_file", arguments="}"))
    assert run.calls == [(0, "c1", "read_file", '{"path": 1}')]
    assert run.warnings == [(0, "quirk-name-repeated")]  # once per call


def test_name_split_across_chunks() -> None:
    run = Run().feed(first(0, "c1", "edit_ex")).feed(tc(0, name="isting_file", arguments="{}"))
    assert run.calls == [(0, "c1", "edit_existing_file", "{}")]
    assert run.warnings == [(0, "quirk-name-split")]


def test_name_resent_grown() -> None:
    run = Run().feed(first(0, "c1", "edit_ex")).feed(tc(0, name="edit_existing_file"))
    run.feed(tc(0, arguments="{}"))
    assert run.calls == [(0, "c1", "edit_existing_file", "{}")]
    assert run.warnings == [(0, "quirk-name-cumulative")]


def test_name_after_arguments() -> None:
    run = Run().feed(tc(0, id="call_x", type="function", arguments='{"'))
    run.feed(tc(0, arguments='q": 1}'))
    assert run.calls == []
    run.feed(tc(0, name="search"))
    assert run.calls == [(0, "call_x", "search", '{"q": 1}')]
    assert run.warnings == [(0, "quirk-name-late")]


# -- ids --------------------------------------------------------------------------------------


def test_id_repeated_on_every_chunk() -> None:
    run = Run().feed(first(0, "chatcmpl-tool-aa62", "f"))
    run.feed(tc(0, id="chatcmpl-tool-aa62", type="function", arguments="{}"))
    assert run.calls == [(0, "chatcmpl-tool-aa62", "f", "{}")]
    assert run.warnings == [(0, "quirk-id-repeated")]


def test_id_empty_string() -> None:
    run = Run().feed(first(0, "c1", "f")).feed(tc(0, id="", arguments="{}"))
    assert run.calls == [(0, "c1", "f", "{}")]
    assert run.warnings == [(0, "quirk-id-empty")]


def test_id_literal_null() -> None:
    run = Run().feed(first(0, "c1", "f")).feed(tc(0, id="null", name="", arguments="{}"))
    assert run.calls == [(0, "c1", "f", "{}")]
    assert run.warnings == [(0, "quirk-id-null")]


def test_id_json_null_is_absent() -> None:
    run = Run().feed(first(0, "c1", "f")).feed(tc(0, id=None, name=None, arguments="{}"))
    assert run.calls == [(0, "c1", "f", "{}")]
    assert run.warnings == []


def test_id_changing_mid_call() -> None:
    run = Run().feed(first(0, "call_first", "f")).feed(tc(0, id="call_second", arguments="{"))
    run.feed(tc(0, id="call_second", arguments="}"))
    assert run.calls == [(0, "call_first", "f", "{}")]
    assert run.warnings == [(0, "quirk-id-changed")]


def test_new_id_and_new_name_on_an_open_index_is_a_new_call() -> None:
    run = Run().feed(first(0, "c1", "f")).feed(first(0, "c2", "g", "{}"))
    run.finish("tool_calls")
    assert run.calls == [(1, "c2", "g", "{}"), (0, "c1", "f", "{}")]
    assert (1, "quirk-index-reused") in run.warnings


def test_a_call_without_arguments_is_discarded_when_the_stream_stops_without_a_reason() -> None:
    # No finish reason ever came (the body stopped): the call whose arguments never arrived
    # is cut, not dispatched with {}; the complete one stands.
    run = Run().feed(first(0, "c1", "f")).feed(first(1, "c2", "g", "{}"))
    run.close()
    assert run.calls == [(1, "c2", "g", "{}")]
    assert run.discarded == [(0, "truncated-arguments")]
    (discarded,) = [e for e in run.events if isinstance(e, CallDiscarded)]
    assert isinstance(discarded.error, TruncatedArguments)
    assert discarded.error.ending == "abandoned"


@pytest.mark.parametrize(
    ("reason", "ending"),
    [("length", "length"), ("content_filter", "content-filter"), ("error", "error")],
)
def test_a_call_without_arguments_is_discarded_after_a_cut(reason: str, ending: str) -> None:
    run = Run().feed(first(0, "c1", "delete_all")).finish(reason)
    assert run.calls == []
    assert run.discarded == [(0, "truncated-arguments")]
    (discarded,) = [e for e in run.events if isinstance(e, CallDiscarded)]
    assert isinstance(discarded.error, TruncatedArguments)
    assert discarded.error.ending == ending


@pytest.mark.parametrize("reason", ["tool_calls", "stop", "function_call"])
def test_a_call_without_arguments_gets_the_empty_object_after_a_normal_end(reason: str) -> None:
    run = Run().feed(first(0, "c1", "ping")).finish(reason)
    assert run.calls == [(0, "c1", "ping", "{}")]
    assert (0, "quirk-empty-arguments") in run.warnings


# -- indexes ----------------------------------------------------------------------------------


def test_index_missing() -> None:
    run = Run().feed(tc(None, id="call_1", type="function", name="read", arguments='{"f": '))
    run.feed(tc(None, arguments="1}"))
    run.feed(tc(None, id="call_2", type="function", name="read", arguments="{}"))
    run.feed(tc(None, id="call_1", arguments=" "))  # a known id goes back to its call
    assert run.calls == [(0, "call_1", "read", '{"f": 1}'), (1, "call_2", "read", "{}")]
    assert run.warnings == [
        (0, "quirk-index-missing"),
        (1, "quirk-index-missing"),
        (0, "quirk-id-repeated"),
    ]


def test_index_missing_id_arrives_late() -> None:
    run = Run().feed(tc(None, type="function", name="f", arguments="{"))
    run.feed(tc(None, id="call_9", arguments="}"))
    assert run.calls == [(0, "call_9", "f", "{}")]


def test_index_starting_at_one() -> None:
    run = Run().feed(first(1, "c1", "f", "{}")).feed(first(2, "c2", "g", "{}"))
    assert run.calls == [(1, "c1", "f", "{}"), (2, "c2", "g", "{}")]
    assert run.warnings == [(1, "quirk-index-gap")]


def test_index_sparse() -> None:
    run = Run().feed(first(0, "c1", "f", "{}")).feed(first(3, "c2", "g", "{}"))
    assert run.calls == [(0, "c1", "f", "{}"), (3, "c2", "g", "{}")]
    assert run.warnings == [(3, "quirk-index-gap")]


def test_index_negative() -> None:
    run = Run().feed(first(-1, "tooluse_1", "f", "{")).feed(tc(-1, arguments="}"))
    assert run.calls == [(0, "tooluse_1", "f", "{}")]
    assert run.warnings == [(0, "quirk-index-negative")]


@pytest.mark.parametrize("index", ["0", 1.0, True])
def test_index_not_an_integer(index: object) -> None:
    run = Run().feed(
        {
            "index": index,
            "id": "c1",
            "type": "function",
            "function": {"name": "f", "arguments": "{}"},
        }
    )
    assert run.calls == [(0, "c1", "f", "{}")]
    assert run.warnings == [(0, "quirk-index-invalid")]


def test_every_parallel_call_on_index_zero() -> None:
    run = Run().feed(first(0, "call_1", "read", '{"path": "a.rs"}'))
    run.feed(first(0, "call_2", "read", '{"path": ')).feed(tc(0, arguments='"b.rs"}'))
    assert run.calls == [
        (0, "call_1", "read", '{"path": "a.rs"}'),
        (1, "call_2", "read", '{"path": "b.rs"}'),
    ]
    assert run.warnings == [(1, "quirk-index-reused")]


def test_same_index_and_same_id_for_two_calls() -> None:
    run = Run().feed(first(0, "dup", "read", '{"path": "a"}'))
    run.feed(first(0, "dup", "read", '{"path": "b"}'))
    assert run.calls == [
        (0, "dup", "read", '{"path": "a"}'),
        (1, "toolstitch_call_1", "read", '{"path": "b"}'),
    ]
    assert (1, "quirk-second-object") in run.warnings


def test_two_entries_for_one_index_in_one_delta() -> None:
    run = Run().feed(first(0, "call_1", "f"), tc(0, arguments='{"x": '))
    run.feed(tc(0, arguments="1}"))
    assert run.calls == [(0, "call_1", "f", '{"x": 1}')]
    assert run.warnings == [(0, "quirk-same-index-twice")]


def test_index_moved() -> None:
    run = Run().feed(first(0, "c1", "open", '{"u":2}{"u":3}'))
    run.feed(first(1, "c2", "close", "{}"))
    run.close()
    assert run.calls == [
        (0, "c1", "open", '{"u":2}'),
        (1, "toolstitch_call_1", "open", '{"u":3}'),
        (2, "c2", "close", "{}"),
    ]
    assert (2, "quirk-index-moved") in run.warnings


# -- whole calls and arguments ---------------------------------------------------------------


def test_whole_call_in_one_chunk() -> None:
    run = Run().feed(first(0, "c1", "add", '{"a":2,"b":3}'))
    run.feed(first(1, "c2", "multiply", '{"a":2,"b":3}'))
    assert run.calls == [(0, "c1", "add", '{"a":2,"b":3}'), (1, "c2", "multiply", '{"a":2,"b":3}')]
    assert run.warnings == []  # the protocol allows it: nothing was normalised


def test_cumulative_arguments() -> None:
    run = Run().feed(first(0, "c1", "search", '{"q":'))
    run.feed(tc(0, arguments='{"q":"ab')).feed(tc(0, arguments='{"q":"abc"}'))
    run.feed(tc(0, arguments='{"q":"abc"}'))
    assert run.calls == [(0, "c1", "search", '{"q":"abc"}')]
    assert run.warnings == [(0, "quirk-arguments-cumulative")]


def test_cumulative_reading_needs_valid_json() -> None:
    # '{"a":' then '{"a":}' - read cumulatively it is invalid, so it is appended as sent
    run = Run().feed(first(0, "c1", "f", '{"a":')).feed(tc(0, arguments='{"a":}'))
    run.close()
    assert run.discarded == [(0, "malformed-arguments")]
    assert run.warnings == []


def test_nested_value_repeating_the_prefix_is_read_as_cumulative() -> None:
    # The documented ambiguity: '{"a":' + '{"a":1}}' could be a nested object; the
    # cumulative reading wins (see docs/quirks.md), and says so.
    run = Run().feed(first(0, "c1", "f", '{"a":')).feed(tc(0, arguments='{"a":1}'))
    assert run.calls == [(0, "c1", "f", '{"a":1}')]
    assert run.warnings == [(0, "quirk-arguments-cumulative")]


def test_complete_arguments_resent_at_end() -> None:
    run = Run().feed(first(0, "c1", "search", '{"query": ')).feed(tc(0, arguments='"A"}'))
    run.feed(tc(0, name="search", arguments='{"query": "A"}'))
    run.close()
    assert run.calls == [(0, "c1", "search", '{"query": "A"}')]
    assert sorted(run.warnings) == [(0, "quirk-arguments-resent"), (0, "quirk-name-repeated")]


def test_resend_split_over_fragments() -> None:
    run = Run().feed(first(0, "c1", "f", '{"a": 1}'))
    run.feed(tc(0, arguments='{"a"')).feed(tc(0, arguments=": 1}"))
    run.close()
    assert run.calls == [(0, "c1", "f", '{"a": 1}')]
    assert run.warnings == [(0, "quirk-arguments-resent")]


def test_partial_resend_at_end_is_dropped() -> None:
    run = Run().feed(first(0, "c1", "f", '{"a": 1}')).feed(tc(0, arguments='{"a"'))
    run.close()
    assert run.calls == [(0, "c1", "f", '{"a": 1}')]
    assert run.warnings == [(0, "quirk-arguments-resent")]


def test_several_complete_objects_under_one_index() -> None:
    run = Run().feed(first(0, "c1", "search", '{"query":"A","count":5}'))
    run.feed(tc(0, arguments='{"query":"B",')).feed(tc(0, arguments='"count":5}'))
    run.close()
    assert run.calls == [
        (0, "c1", "search", '{"query":"A","count":5}'),
        (1, "toolstitch_call_1", "search", '{"query":"B","count":5}'),
    ]
    assert run.warnings == [(1, "quirk-second-object")]


def test_second_object_in_one_fragment() -> None:
    run = Run().feed(first(0, "c1", "f", '{"a":1}\n{"a":2}'))
    run.close()
    assert run.calls == [(0, "c1", "f", '{"a":1}'), (1, "toolstitch_call_1", "f", '\n{"a":2}')]
    assert run.warnings == [(1, "quirk-second-object")]


def test_trailing_text_that_is_not_an_object() -> None:
    run = Run().feed(first(0, "c1", "f", '{"a":1}')).feed(tc(0, arguments=" thanks!"))
    run.close()
    assert run.calls == [(0, "c1", "f", '{"a":1}')]
    assert run.warnings == [(0, "trailing-arguments")]  # the core's own warning


def test_arguments_null() -> None:
    run = Run().feed(first(0, "c1", "search_web", None)).feed(tc(0, arguments='{"q": 1}'))
    assert run.calls == [(0, "c1", "search_web", '{"q": 1}')]
    assert run.warnings == [(0, "quirk-arguments-null")]


def test_function_null() -> None:
    run = Run().feed(first(0, "c1", "f", "{}")).feed(tc(0, function=None))
    assert run.calls == [(0, "c1", "f", "{}")]
    assert run.warnings == [(0, "quirk-function-null")]


def test_tool_calls_null() -> None:
    run = Run()
    assert run.quirks.feed(None) == []
    run.feed(None, first(0, "c1", "f", "{}"))
    assert run.calls == [(0, "c1", "f", "{}")]


def test_empty_arguments_for_no_parameter_tool() -> None:
    run = Run().feed(first(0, "c1", "get_time", "")).finish("tool_calls")
    assert run.calls == [(0, "c1", "get_time", "{}")]
    assert run.warnings == [(0, "quirk-empty-arguments")]


def test_type_omitted() -> None:
    run = Run().feed(tc(0, id="c1", name="f", arguments="{}"))
    assert run.calls == [(0, "c1", "f", "{}")]
    assert run.warnings == [(0, "quirk-type-missing")]


def test_arguments_sent_as_an_object() -> None:
    run = Run().feed(tc(0, id="c1", type="function", name="f", arguments={"a": [1, "é"]}))
    assert run.calls == [(0, "c1", "f", '{"a": [1, "é"]}')]


def test_entries_as_objects() -> None:
    entry = SimpleNamespace(
        index=0,
        id="c1",
        type="function",
        function=SimpleNamespace(name="f", arguments='{"a": 1}'),
    )
    run = Run().feed(entry)
    assert run.calls == [(0, "c1", "f", '{"a": 1}')]


# -- finish reasons --------------------------------------------------------------------------


def test_finish_reason_stop_instead_of_tool_calls() -> None:
    run = Run().feed(first(0, "c1", "f", "{}"), first(1, "c2", "g", "{}")).finish("stop")
    assert run.warnings == [
        (0, "quirk-finish-reason-mismatch"),
        (1, "quirk-finish-reason-mismatch"),
    ]


def test_two_finish_chunks() -> None:
    run = Run().feed(first(0, "c1", "f", "{}")).finish("tool_calls").finish("stop")
    assert run.warnings == [(0, "quirk-finish-repeated")]
    run = Run().finish("stop").finish("stop")
    assert run.warnings == [(None, "quirk-finish-repeated")]


def test_truncated_arguments_labelled_tool_calls() -> None:
    run = Run().feed(first(0, "c1", "write", '{"text": "Once upon')).finish("tool_calls")
    assert run.warnings == [(0, "quirk-truncation-mislabelled")]
    assert run.discarded == [(0, "truncated-arguments")]
    # the warning comes before the discard, so a caller sees why
    kinds = [type(e).__name__ for e in run.events[-2:]]
    assert kinds == ["CallWarning", "CallDiscarded"]


def test_truncated_with_length_is_not_a_quirk() -> None:
    run = Run().feed(first(0, "c1", "write", '{"text": "Once upon')).finish("length")
    assert run.warnings == []
    assert run.discarded == [(0, "truncated-arguments")]


def test_finish_resolves_calls_at_once() -> None:
    run = Run().feed(first(0, "c1", "now", ""))
    assert run.calls == []
    run.finish("tool_calls")
    assert run.calls == [(0, "c1", "now", "{}")]
    assert run.quirks.close() == []


# -- the warnings themselves ----------------------------------------------------------------


def test_warnings_carry_call_context() -> None:
    run = Run().feed(first(0, "c1", "f")).feed(tc(0, id="", arguments="{}"))
    warning = next(e for e in run.events if isinstance(e, CallWarning))
    assert isinstance(warning.error, ProviderQuirk)
    assert warning.error.index == 0
    assert warning.error.call_id == "c1"
    assert warning.error.name == "f"
    assert warning.error.message


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_code_is_a_quirk_code() -> None:
    assert all(re.fullmatch(r"quirk-[a-z-]+", code) for code in QUIRK_CODES)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_docs_table_lists_every_code_and_real_tests() -> None:
    doc = (ROOT / "docs" / "quirks.md").read_text()
    for code in QUIRK_CODES:
        assert f"`{code}`" in doc, f"{code} is missing from docs/quirks.md"
    named = set(re.findall(r"`(test_[a-z0-9_]+)`", doc))
    assert named, "docs/quirks.md names no tests"
    sources = "".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py"))
    defined = set(re.findall(r"^(?:async )?def (test_[a-z0-9_]+)", sources, re.MULTILINE))
    assert named <= defined, f"docs/quirks.md names unknown tests: {sorted(named - defined)}"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_quirk_codes_in_sources_are_registered() -> None:
    sources = "".join(p.read_text() for p in (ROOT / "src" / "toolstitch").rglob("*.py"))
    used = set(re.findall(r'"(quirk-[a-z-]+)"', sources))
    assert used <= set(QUIRK_CODES)
