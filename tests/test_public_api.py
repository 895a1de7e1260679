"""The public surface of ``toolstitch``: names, value objects, states and error codes."""

from __future__ import annotations

import dataclasses
import inspect
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
    Delta,
    Event,
    InvalidDelta,
    LimitExceeded,
    Limits,
    MalformedArguments,
    MissingName,
    ToolCall,
    ToolCallError,
    TrailingArguments,
    TruncatedArguments,
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


def test_all_is_exactly_what_the_package_exports() -> None:
    exported = toolstitch.__all__
    assert len(exported) == len(set(exported))
    assert set(exported) == public_names(toolstitch)
    assert set(exported) >= CORE_NAMES
    assert all(not name.startswith("_") or name == "__version__" for name in exported)


def test_exported_classes_are_the_package_own() -> None:
    for name in toolstitch.__all__:
        value = getattr(toolstitch, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("toolstitch"), name
            assert value.__name__ == name


def test_star_import_gives_all_and_nothing_private() -> None:
    namespace: dict[str, Any] = {}
    exec("from toolstitch import *", namespace)
    namespace.pop("__builtins__")
    assert set(namespace) == set(toolstitch.__all__)


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


def test_every_event_class_derives_from_event_and_is_slotted() -> None:
    for cls in (CallStarted, ArgumentsDelta, CallReady, CallDiscarded, CallWarning):
        assert issubclass(cls, Event)
        for klass in cls.__mro__[:-1]:  # every class but object declares __slots__
            assert "__slots__" in vars(klass), klass
    assert CallReady(call=CALL).index == 0


def test_tool_call_fields_and_wire_form() -> None:
    assert [f.name for f in dataclasses.fields(ToolCall)] == [
        "index",
        "id",
        "name",
        "arguments",
        "parsed_arguments",
        "type",
    ]
    assert CALL.type == "function"
    assert CALL.to_openai() == {
        "id": "c",
        "type": "function",
        "function": {"name": "f", "arguments": "{}"},
    }


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


@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (MalformedArguments, "malformed-arguments"),
        (TruncatedArguments, "truncated-arguments"),
        (MissingName, "missing-name"),
        (LimitExceeded, "limit-exceeded"),
        (TrailingArguments, "trailing-arguments"),
        (InvalidDelta, "invalid-delta"),
    ],
)
def test_error_codes_are_stable(cls: type[ToolCallError], code: str) -> None:
    assert issubclass(cls, ToolCallError)
    assert issubclass(cls, Exception)
    assert cls.code == code


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
