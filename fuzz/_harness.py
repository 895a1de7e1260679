"""What the fuzz targets share: paths, the event ledger and the checks on every outcome.

A *finding* is any exception that escapes a target other than the documented ones, an
interpreter crash, a hang, or a violated invariant (an ``AssertionError`` raised here):

* every call that starts ends exactly once (``CallReady`` or ``CallDiscarded``), never
  before it started, and nothing about it but warnings comes after its end;
* ``pending`` equals the calls started and not yet ended; after ``finish`` it is 0;
* a ``CallReady`` call has a non-empty name, arguments that ``json.loads`` (strictly: no
  NaN/Infinity) to exactly its ``parsed_arguments``, a dict, and that the independent
  reference checker (tests/reference.py) accepts as one closed object;
* a call discarded as malformed carries the offset the reference checker finds, and its
  text is refused by a strict ``json.loads`` or is not an object; a call discarded as
  truncated holds a viable, unclosed prefix.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT / "src", ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

# The reference checker recurses a few frames per nesting level; fuzzed depths stay within
# Limits.max_depth (256 by default), far below this.
sys.setrecursionlimit(20_000)

import reference  # noqa: E402  (tests/reference.py, not instrumented: it is the oracle)

WS = " \t\n\r"


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_load(text: str) -> Any:
    """``json.loads`` refusing NaN/Infinity, raw surrogate pairs joined first."""
    return json.loads(reference.joined(text), parse_constant=_reject)


def strict_object(text: str) -> bool:
    """Whether ``text`` loads strictly as a JSON object (I-JSON surrogate rule included)."""
    try:
        value = strict_load(text)
    except (ValueError, RecursionError, UnicodeError):
        return False
    return isinstance(value, dict) and reference.first_bad_offset(text) is None


class Ledger:
    """Counts starts and ends per call index across every event of one stream."""

    def __init__(self) -> None:
        self.started: dict[int, int] = {}
        self.ended: dict[int, int] = {}
        self.ready: dict[int, Any] = {}
        self.trailing: set[int] = set()
        #: Calls made ready with ``empty_arguments`` (their text was empty or whitespace).
        self.empty_ready: set[int] = set()

    def reset(self) -> None:
        self.started.clear()
        self.ended.clear()
        self.ready.clear()
        self.trailing.clear()
        self.empty_ready.clear()

    @property
    def open(self) -> int:
        return sum(1 for index in self.started if index not in self.ended)

    def take(self, events: Iterable[object], texts: Mapping[int, str] | None = None) -> None:
        """Account for ``events`` (one feed's worth) and check each of them."""
        from toolstitch import (
            ArgumentsDelta,
            CallDiscarded,
            CallReady,
            CallStarted,
            CallWarning,
            TrailingArguments,
        )

        for event in events:
            if isinstance(event, CallWarning) and isinstance(event.error, TrailingArguments):
                self.trailing.add(event.index)
        for event in events:
            if isinstance(event, CallStarted):
                assert event.index not in self.started, f"call {event.index} started twice"
                self.started[event.index] = 1
            elif isinstance(event, ArgumentsDelta):
                assert event.index in self.started, f"fragment for unstarted {event.index}"
                assert event.index not in self.ended, f"fragment after the end {event.index}"
                assert event.fragment, "empty ArgumentsDelta"
            elif isinstance(event, CallReady):
                index = event.call.index
                self._end(index)
                check_ready(event.call)
                self.ready[index] = event.call
                if texts is not None and index in texts:
                    text = texts[index]
                    if not text.strip(WS):
                        self.empty_ready.add(index)
                    assert text.startswith(event.call.arguments) or event.call.arguments == "{}"
                    rest = text[len(event.call.arguments) :]
                    assert not rest.strip(WS) or index in self.trailing, (
                        f"call {index} ready with text after its object: {rest!r}"
                    )
            elif isinstance(event, CallDiscarded):
                self._end(event.index)
                check_discarded(event)

    def _end(self, index: int) -> None:
        assert index in self.started, f"call {index} ended before it started"
        assert index not in self.ended, f"call {index} ended twice"
        self.ended[index] = 1


def check_ready(call: Any) -> None:
    """The dispatch guarantee, for one ``ToolCall``."""
    assert isinstance(call.name, str), "ready with a name that is not a str"
    assert call.name, "ready without a name"
    assert isinstance(call.id, str), "ready with an id that is not a str"
    assert call.id, "ready without an id"
    loaded = strict_load(call.arguments)
    assert isinstance(loaded, dict), "ready arguments are not an object"
    assert reference.typed(loaded) == reference.typed(call.parsed_arguments), (
        f"parsed_arguments differ from json.loads: {call.arguments!r}"
    )
    assert reference.first_bad_offset(call.arguments) is None, call.arguments
    end = reference.object_end(call.arguments)
    assert end is not None, f"ready arguments never close: {call.arguments!r}"
    assert not call.arguments[end:].strip(WS), f"text after the object: {call.arguments!r}"


def check_discarded(event: Any) -> None:
    """What a discarded call's error says must agree with the reference checker."""
    from toolstitch import (
        LimitExceeded,
        MalformedArguments,
        MissingName,
        ToolCallError,
        TruncatedArguments,
    )

    error = event.error
    assert isinstance(error, ToolCallError)
    assert error.index == event.index
    text = event.arguments
    if isinstance(error, MalformedArguments):
        expected = reference.first_bad_offset(text)
        assert expected is not None, f"discarded as malformed but viable: {text!r}"
        assert error.offset == expected, (
            f"malformed offset {error.offset} != reference {expected} in {text!r}"
        )
        assert not strict_object(text)
        assert error.snippet.endswith("^")
    elif isinstance(error, TruncatedArguments):
        assert reference.first_bad_offset(text) is None, f"truncated but bad: {text!r}"
        assert reference.object_end(text) is None, f"truncated but closed: {text!r}"
        assert not strict_object(text)
    elif isinstance(error, MissingName):
        assert not event.name
    else:
        assert isinstance(error, LimitExceeded), f"unexpected discard error {error!r}"
        assert error.limit in {
            "max_argument_chars",
            "max_calls",
            "max_depth",
            "max_name_chars",
            "max_id_chars",
            "max_number_digits",
            "number_exponent",
        }, error.limit
    assert str(error)


#: Set FUZZ_STRICT=1 to let known, reported bugs stop the run like any other finding.
STRICT = os.environ.get("FUZZ_STRICT") == "1"


class KnownBug(Exception):
    """A finding already reported to the lead (see fuzz/README.md, "Findings")."""


def known_bug(exc: BaseException, ledger: Ledger | None = None) -> str | None:
    """The id of an open, reported bug that ``exc`` is an instance of, or ``None``.

    Bugs 1-7 (fuzz/README.md) are fixed and are findings again. Still open:

    Bug 3b: an SSE line that is not terminated within the chunk and passes both
    ``max_line_bytes`` and ``max_event_bytes``: which error is reported still depends on the
    chunking (the fix of bug 3 covers terminated lines). Raised by the target itself.

    """
    if STRICT:
        return None
    if isinstance(exc, KnownBug):
        return str(exc)
    return None


def decode(data: bytes) -> str:
    """Bytes as text; invalid UTF-8 becomes lone surrogates (hostile input on purpose)."""
    return data.decode("utf-8", "surrogateescape")
