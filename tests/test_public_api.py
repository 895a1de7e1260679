"""The public surface of ``toolstitch``: names, value objects, states and error codes."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import sys
import types
from typing import Any

import pytest

import toolstitch
from toolstitch import (
    ArgumentsDelta,
    Assembler,
    CallDiscarded,
    CallReady,
    CallSnapshot,
    CallStarted,
    CallState,
    CallWarning,
    ConflictingId,
    Delta,
    Event,
    InvalidDelta,
    LimitExceeded,
    Limits,
    MalformedArguments,
    MalformedCall,
    MissingName,
    ProviderError,
    ProviderQuirk,
    SchemaViolation,
    StreamDecodeError,
    StreamError,
    ToolCall,
    ToolCallError,
    TrailingArguments,
    TruncatedArguments,
    UnexpectedDelta,
    UnknownTool,
    UnreadField,
    UsageError,
)

CORE_NAMES = {
    "Assembler",
    "Delta",
    "Limits",
    "CallState",
    "CallSnapshot",
    "ToolCall",
    "Event",
    "CallStarted",
    "ArgumentsDelta",
    "CallReady",
    "CallDiscarded",
    "CallWarning",
    "ToolCallError",
    "MalformedArguments",
    "TruncatedArguments",
    "MissingName",
    "LimitExceeded",
    "TrailingArguments",
    "InvalidDelta",
    "UsageError",
    "GENERATED_ID_PREFIX",
    "JSON_BACKEND",
    "__version__",
}


def public_names(module: types.ModuleType) -> set[str]:
    """Names a user can reach on the module without an underscore, plus ``__version__``.

    Submodules are left out (they are imported, not exported), and so is ``annotations``:
    every module of the project starts with ``from __future__ import annotations``, which
    binds that name as a side effect of the syntax, not as an export.
    """
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        if name == "annotations" and value is __import__("__future__").annotations:
            continue
        names.add(name)
    return names | {"__version__"}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_all_is_exactly_what_the_package_exports() -> None:
    exported = toolstitch.__all__
    assert len(exported) == len(set(exported))
    assert set(exported) == public_names(toolstitch)
    assert set(exported) >= CORE_NAMES
    assert all(not name.startswith("_") or name == "__version__" for name in exported)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_exported_classes_are_the_package_own() -> None:
    for name in toolstitch.__all__:
        value = getattr(toolstitch, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("toolstitch"), name
            assert value.__name__ == name


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_star_import_gives_all_and_nothing_private() -> None:
    namespace: dict[str, Any] = {}
    exec("from toolstitch import *", namespace)
    namespace.pop("__builtins__")
    assert set(namespace) == set(toolstitch.__all__)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_version_and_backend_are_strings() -> None:
    assert isinstance(toolstitch.__version__, str)
    assert toolstitch.__version__
    assert isinstance(toolstitch.JSON_BACKEND, str)
    assert isinstance(toolstitch.GENERATED_ID_PREFIX, str)
    assert toolstitch.GENERATED_ID_PREFIX


# -- value objects ------------------------------------------------------------------------

ERROR = MissingName("no name", index=0, call_id="c", name=None)
CALL = ToolCall(index=0, id="c", name="f", arguments="{}", parsed_arguments={})
VALUES: list[Any] = [
    CALL,
    CallSnapshot(index=0, id="c", name="f", arguments="{", state=CallState.ACCUMULATING_ARGS),
    CallStarted(index=0, id="c", name="f"),
    ArgumentsDelta(index=0, fragment="{"),
    CallReady(call=CALL),
    CallDiscarded(index=0, id="c", name=None, arguments="", error=ERROR),
    CallWarning(index=0, error=ERROR),
    Delta(index=0, id="c", type="function", name="f", arguments="{}"),
    Limits(),
]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("value", VALUES, ids=lambda value: type(value).__name__)
def test_value_objects_are_frozen_and_slotted(value: Any) -> None:
    cls = type(value)
    assert dataclasses.is_dataclass(cls)
    assert "__slots__" in vars(cls)
    assert not hasattr(value, "__dict__")
    for field in dataclasses.fields(cls):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field.name, None)
    with pytest.raises((dataclasses.FrozenInstanceError, AttributeError, TypeError)):
        value.extra = 1
    assert not hasattr(value, "extra")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_event_class_derives_from_event_and_is_slotted() -> None:
    for cls in (CallStarted, ArgumentsDelta, CallReady, CallDiscarded, CallWarning):
        assert issubclass(cls, Event)
        for klass in cls.__mro__[:-1]:  # every class but object declares __slots__
            assert "__slots__" in vars(klass), klass
    assert CallReady(call=CALL).index == 0


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_tool_call_fields_and_wire_form() -> None:
    assert [f.name for f in dataclasses.fields(ToolCall)] == [
        "index",
        "id",
        "name",
        "arguments",
        "parsed_arguments",
        "type",
        "signature",
        "caller",
    ]
    assert CALL.type == "function"
    assert (CALL.signature, CALL.caller) == (None, None)
    assert CALL.to_openai() == {
        "id": "c",
        "type": "function",
        "function": {"name": "f", "arguments": "{}"},
    }


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_call_states_are_the_stable_strings() -> None:
    assert [state.value for state in CallState] == [
        "awaiting-id",
        "accumulating-name",
        "accumulating-args",
        "complete",
        "discarded",
    ]
    assert CallState("complete") is CallState.COMPLETE
    assert isinstance(CallState.DISCARDED, str)
    assert str.__eq__(CallState.DISCARDED, "discarded")
    assert str(CallState.ACCUMULATING_ARGS) == "accumulating-args"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (MalformedArguments, "malformed-arguments"),
        (MalformedCall, "malformed-call"),
        (TruncatedArguments, "truncated-arguments"),
        (MissingName, "missing-name"),
        (LimitExceeded, "limit-exceeded"),
        (TrailingArguments, "trailing-arguments"),
        (UnreadField, "unread-field"),
        (InvalidDelta, "invalid-delta"),
    ],
)
def test_error_codes_are_stable(cls: type[ToolCallError], code: str) -> None:
    assert issubclass(cls, ToolCallError)
    assert issubclass(cls, Exception)
    assert cls.code == code


def test_invalid_delta_is_a_usage_error_and_still_a_tool_call_error() -> None:
    """The caller's fault has its own branch; the old base stays for a deprecation period."""
    assert InvalidDelta.__bases__ == (UsageError, ToolCallError, TypeError)
    assert UsageError.code == "usage-error"
    assert not issubclass(UsageError, (ToolCallError, StreamError, TypeError))
    for base in (UsageError, ToolCallError, TypeError):
        with pytest.raises(base):
            Assembler().feed(b"not a delta")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_errors_carry_what_a_caller_needs() -> None:
    malformed = MalformedArguments(
        "bad", offset=3, line=1, column=4, snippet="{a}\n   ^", expected="a key", index=2
    )
    assert (malformed.offset, malformed.line, malformed.column) == (3, 1, 4)
    assert (malformed.snippet, malformed.expected, malformed.index) == ("{a}\n   ^", "a key", 2)
    assert (malformed.call_id, malformed.name) == (None, None)
    limit = LimitExceeded("big", limit="max_depth", value=257, index=0, call_id="c", name="f")
    assert (limit.limit, limit.value, limit.call_id, limit.name) == ("max_depth", 257, "c", "f")
    assert str(limit) == "big"
    assert issubclass(InvalidDelta, TypeError)


def test_assembler_signature() -> None:
    parameters = inspect.signature(Assembler).parameters
    assert parameters["limits"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["limits"].default is None
    assert parameters["empty_arguments"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["empty_arguments"].default == "{}"
    for name in ("feed", "finish", "complete", "reset"):
        assert callable(getattr(Assembler, name))
    for name in ("calls", "pending"):
        assert isinstance(getattr(Assembler, name), property)


# -- errors are immutable values ------------------------------------------------------------

CONTEXT: dict[str, Any] = {"index": 1, "call_id": "call_1", "name": "get_weather"}
SPOT: dict[str, Any] = {"offset": 3, "line": 1, "column": 4, "snippet": "{a}\n   ^"}
# One instance of every exported error class, with every field set to a non-default value.
EVERY_ERROR: list[Exception] = [
    ToolCallError("m", **CONTEXT),
    MalformedArguments("m", **SPOT, expected="a key", **CONTEXT),
    MalformedCall("m", **SPOT, expected="a tool name", **CONTEXT),
    TrailingArguments("m", **SPOT, **CONTEXT),
    TruncatedArguments("m", ending="length", **CONTEXT),
    MissingName("m", **CONTEXT),
    LimitExceeded("m", limit="max_depth", value=257, offset=9, **CONTEXT),
    UnknownTool("m", declared=("get_weather", "search"), closest="search", **CONTEXT),
    SchemaViolation("m", path="/days/0", keyword="type", offset=12, **CONTEXT),
    ConflictingId("m", received="call_2", **CONTEXT),
    UnexpectedDelta("m", **CONTEXT),
    UnreadField("m", key="function.argumentz", **CONTEXT),
    ProviderQuirk("quirk-duplicate-finish", "m", **CONTEXT),
    InvalidDelta("m", **CONTEXT),
    StreamError("m"),
    StreamDecodeError("m", offset=7),
    ProviderError("m", kind="overloaded_error", payload={"error": {"type": "overloaded"}}),
    UsageError("m"),
]


def fields(error: Exception) -> dict[str, Any]:
    """An error's fields: its constructor's parameters, each stored under its own name."""
    return {name: getattr(error, name) for name in inspect.signature(type(error)).parameters}


def error_id(error: Exception) -> str:
    return type(error).__name__


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_exported_error_class_is_covered_with_every_field() -> None:
    exported = {
        value
        for name in toolstitch.__all__
        if isinstance(value := getattr(toolstitch, name), type) and issubclass(value, Exception)
    }
    assert {type(error) for error in EVERY_ERROR} == exported
    for error in EVERY_ERROR:
        for name, parameter in inspect.signature(type(error)).parameters.items():
            assert getattr(error, name) not in (None, parameter.default), (error, name)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("error", EVERY_ERROR, ids=error_id)
def test_errors_refuse_assignment_after_construction(error: Exception) -> None:
    before = dict(vars(error))
    for name in [*fields(error), "code", "args", "extra"]:
        with pytest.raises(AttributeError, match="immutable"):
            setattr(error, name, 0)
        with pytest.raises(AttributeError, match="immutable"):
            delattr(error, name)
    assert vars(error) == before
    assert not hasattr(error, "extra")
    assert error.args == ("m",)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("error", EVERY_ERROR, ids=error_id)
def test_errors_pickle_and_copy_with_every_field(error: Exception) -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(error, protocol))
        assert type(again) is type(error)
        assert fields(again) == fields(error)
        assert again == error
        assert (again.args, str(again), repr(again)) == (error.args, str(error), repr(error))
        assert getattr(again, "code") == getattr(error, "code")  # noqa: B009
    for duplicate in (copy.copy(error), copy.deepcopy(error)):
        assert duplicate is not error
        assert duplicate == error
        assert fields(duplicate) == fields(error)


def raise_in_handler(error: Exception, cause: Exception) -> None:
    try:
        raise KeyError("context")
    except KeyError:
        raise error from cause


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("error", EVERY_ERROR, ids=error_id)
def test_what_python_sets_on_exceptions_still_works(error: Exception) -> None:
    error = copy.copy(error)  # a fresh instance: the ones above are shared between tests
    cause = ValueError("cause")
    with pytest.raises(type(error)) as info:
        raise_in_handler(error, cause)
    raised = info.value
    assert raised is error
    assert raised.__cause__ is cause
    assert isinstance(raised.__context__, KeyError)
    assert raised.__suppress_context__ is True
    assert raised.__traceback__ is not None
    if sys.version_info >= (3, 11):  # add_note and __notes__ (PEP 678) are 3.11's
        raised.add_note("first note")
        raised.add_note("second note")
        assert raised.__notes__ == ["first note", "second note"]
        again = pickle.loads(pickle.dumps(raised))
        assert again.__notes__ == ["first note", "second note"]
        assert copy.copy(raised).__notes__ == ["first note", "second note"]
    # Code that clears or rewires them by assignment (contextlib, asyncio, pytest) works too.
    raised.__traceback__ = None
    raised.__context__ = None
    raised.__cause__ = None
    raised.__suppress_context__ = False
    assert raised.with_traceback(None) is raised
    assert (raised.__traceback__, raised.__cause__, raised.__context__) == (None, None, None)


CALL_ERRORS = [error for error in EVERY_ERROR if isinstance(error, ToolCallError)]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("error", CALL_ERRORS, ids=error_id)
def test_with_call_builds_a_new_error_that_keeps_every_field(error: ToolCallError) -> None:
    before = fields(error)
    placed = error.with_call(index=4, call_id="call_9", name="search")
    assert placed is not error
    assert type(placed) is type(error)
    assert fields(error) == before  # the original never changes
    assert fields(placed) == {**before, "index": 4, "call_id": "call_9", "name": "search"}
    assert (placed.code, placed.message, str(placed), placed.args) == (
        error.code,
        error.message,
        str(error),
        error.args,
    )
    cleared = error.with_call(index=None, call_id=None, name=None)
    assert (cleared.index, cleared.call_id, cleared.name) == (None, None, None)
    assert placed.with_call(**CONTEXT) == error


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.skipif(sys.version_info < (3, 11), reason="add_note is Python 3.11's")
def test_with_call_keeps_the_notes() -> None:
    if sys.version_info >= (3, 11):  # for mypy, which checks as Python 3.10
        error = MissingName("no name")
        error.add_note("seen in replay")
        assert error.with_call(**CONTEXT).__notes__ == ["seen in replay"]
        assert not hasattr(MissingName("no name").with_call(**CONTEXT), "__notes__")


def test_a_discard_names_its_call_on_a_new_error() -> None:
    asm = Assembler()
    events = asm.feed(Delta(index=2, id="call_7", name="f", arguments="{]"))
    (discarded,) = (event for event in events if isinstance(event, CallDiscarded))
    error = discarded.error
    assert type(error) is MalformedArguments
    assert (error.index, error.call_id, error.name) == (2, "call_7", "f")
    with pytest.raises(AttributeError):
        error.index = 0
