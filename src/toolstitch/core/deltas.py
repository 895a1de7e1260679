"""What the assembler consumes: one tool-call delta, and the coercion of caller input to it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolstitch.vocab.errors import InvalidDelta

__all__ = ["NOT_DELTAS", "Delta", "DeltaFields", "checked_fields", "coerce_delta", "delta_fields"]


@dataclass(frozen=True, slots=True)
class Delta:
    """One tool-call delta, every field optional.

    ``index`` is the provider's call index; ``id`` the call id (never concatenated);
    ``name`` a piece of the function name (concatenated); ``arguments`` a fragment of the
    arguments JSON text.
    """

    index: int | None = None
    id: str | None = None
    type: str | None = None
    name: str | None = None
    arguments: str | None = None


_FIELDS = ("id", "type", "name", "arguments")
#: What ``coerce_delta`` refuses outright (with ``None``): values, never deltas.
NOT_DELTAS = (str, bytes, bytearray, int, float, list, tuple, set)


def _check(delta: Delta) -> Delta:
    index = delta.index
    if index is not None and (type(index) is not int or index < 0):
        if isinstance(index, bool) or not isinstance(index, int):
            raise InvalidDelta(f"delta index must be an int or None, got {type(index).__name__}")
        if index < 0:
            raise InvalidDelta(f"delta index must not be negative, got {index}", index=index)
        # An int subclass (e.g. numpy-like or IntEnum): normalise to a plain int.
        delta = Delta(int(index), delta.id, delta.type, delta.name, delta.arguments)
    for name in _FIELDS:
        value = getattr(delta, name)
        if value is not None and not isinstance(value, str):
            raise InvalidDelta(
                f"delta field {name!r} must be a str or None, got {type(value).__name__}",
                index=delta.index,
            )
    return delta


def _from_mapping(data: Mapping[Any, Any]) -> Delta:
    function = data.get("function")
    if function is None:
        name = data.get("name")
        arguments = data.get("arguments")
    elif isinstance(function, Mapping):
        name = function.get("name")
        arguments = function.get("arguments")
    else:
        raise InvalidDelta(
            f"delta field 'function' must be a mapping or None, got {type(function).__name__}"
        )
    return Delta(data.get("index"), data.get("id"), data.get("type"), name, arguments)


def _from_object(obj: object) -> Delta:
    function = getattr(obj, "function", None)
    if function is None:
        name = getattr(obj, "name", None)
        arguments = getattr(obj, "arguments", None)
    elif isinstance(function, Mapping):
        name = function.get("name")
        arguments = function.get("arguments")
    else:
        name = getattr(function, "name", None)
        arguments = getattr(function, "arguments", None)
    return Delta(
        getattr(obj, "index", None),
        getattr(obj, "id", None),
        getattr(obj, "type", None),
        name,
        arguments,
    )


DeltaFields = tuple[int | None, str | None, str | None, str | None, str | None]


def delta_fields(obj: object) -> DeltaFields:
    """``(index, id, type, name, arguments)`` of what the caller fed, checked.

    The assembler's hot path: a plain dict in the OpenAI wire shape, or a ``Delta``, costs a
    few lookups and one type check per field. Everything else, and anything those checks
    refuse, goes through ``coerce_delta``, which raises ``InvalidDelta`` for what is not a
    delta.
    """
    if type(obj) is dict:
        function = obj.get("function")
        if type(function) is not dict:
            return _coerced_fields(obj)
        fields = (
            obj.get("index"),
            obj.get("id"),
            obj.get("type"),
            function.get("name"),
            function.get("arguments"),
        )
    elif type(obj) is Delta:
        fields = (obj.index, obj.id, obj.type, obj.name, obj.arguments)
    else:
        return _coerced_fields(obj)
    index, call_id, kind, name, arguments = fields
    if (
        (index is None or (type(index) is int and index >= 0))
        and (call_id is None or type(call_id) is str)
        and (kind is None or type(kind) is str)
        and (name is None or type(name) is str)
        and (arguments is None or type(arguments) is str)
    ):
        return fields
    return _coerced_fields(obj)


def checked_fields(
    index: object, call_id: object, kind: object, name: object, arguments: object
) -> DeltaFields:
    """The fields ``coerce_delta`` read from an object, checked as it checks them (the C fast
    feed reads an SDK object's attributes itself and hands over here when a check fails)."""
    delta = _check(Delta(index, call_id, kind, name, arguments))  # type: ignore[arg-type]
    return delta.index, delta.id, delta.type, delta.name, delta.arguments


def _coerced_fields(obj: object) -> DeltaFields:
    """The slow path of ``delta_fields``: every accepted shape, int subclasses, the errors."""
    delta = coerce_delta(obj)
    return delta.index, delta.id, delta.type, delta.name, delta.arguments


def coerce_delta(obj: object) -> Delta:
    """Turn what the caller fed into a checked ``Delta``, or raise ``InvalidDelta``.

    Accepts a ``Delta``; a Mapping in the OpenAI wire shape ``{"index", "id", "type",
    "function": {"name", "arguments"}}`` (or flat, with ``name`` and ``arguments`` at the top);
    or any object with those attributes, such as the ``openai`` SDK's ``ChoiceDeltaToolCall``.
    """
    if type(obj) is Delta:
        delta = obj
    elif isinstance(obj, Mapping):
        delta = _from_mapping(obj)
    elif isinstance(obj, NOT_DELTAS) or obj is None:
        raise InvalidDelta(f"a delta must be a mapping or an object, got {type(obj).__name__}")
    elif isinstance(obj, Delta) or any(
        hasattr(obj, attr) for attr in ("index", "function", "arguments", "name", "id")
    ):
        delta = _from_object(obj)
    else:
        raise InvalidDelta(f"{type(obj).__name__} has none of the fields of a tool-call delta")
    return _check(delta)
