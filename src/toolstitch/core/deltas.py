"""What the assembler consumes: one tool-call delta, and the coercion of caller input to it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from toolstitch.vocab.errors import InvalidDelta

__all__ = [
    "FLAT_KEYS",
    "FUNCTION_KEYS",
    "NOT_DELTAS",
    "WIRE_KEYS",
    "Delta",
    "DeltaFields",
    "checked_fields",
    "coerce_delta",
    "delta_fields",
    "unread_keys",
    "wire_fields",
]


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


#: The keys each mapping shape of a delta reads; any other key is reported, never dropped
#: in silence (``unread_keys``). The wire shape: ``{"index", "id", "type", "function":
#: {"name", "arguments"}}``. The flat shape: ``name`` and ``arguments`` at the top, or
#: LangChain's ``tool_call_chunks`` entries ``{"name", "args", "id", "index", "type":
#: "tool_call_chunk"}``.
WIRE_KEYS: Final = frozenset({"index", "id", "type", "function"})
FUNCTION_KEYS: Final = frozenset({"name", "arguments"})
FLAT_KEYS: Final = frozenset({"index", "id", "type", "name", "arguments", "args"})
#: Every key some shape reads at the top of a delta mapping: one of them at least, or the
#: mapping carries nothing toolstitch can read.
_READ_KEYS: Final = FLAT_KEYS | WIRE_KEYS
#: LangChain's ``type`` of a tool-call chunk: the kind of the chunk, not of the call.
_CHUNK_TYPES: Final = frozenset({"tool_call_chunk"})


def unread_keys(data: Mapping[Any, Any]) -> tuple[str, ...]:
    """The keys of a delta mapping that no shape reads (``function.…`` for those of its
    ``function`` mapping), in the order they came."""
    function = data.get("function")
    known = FLAT_KEYS | WIRE_KEYS if function is None else WIRE_KEYS
    unread = [str(key) for key in data if key not in known]
    if isinstance(function, Mapping):
        unread += [f"function.{key}" for key in function if key not in FUNCTION_KEYS]
    return tuple(unread)


def _from_mapping(data: Mapping[Any, Any]) -> Delta:
    function = data.get("function")
    if function is None:
        name = data.get("name")
        arguments = data.get("arguments")
        if arguments is None:
            arguments = data.get("args")  # LangChain's tool_call_chunks
    elif isinstance(function, Mapping):
        name = function.get("name")
        arguments = function.get("arguments")
    else:
        raise InvalidDelta(
            f"delta field 'function' must be a mapping or None, got {type(function).__name__}"
        )
    kind = data.get("type")
    if isinstance(kind, str) and kind in _CHUNK_TYPES and function is None:
        kind = None
    return Delta(data.get("index"), data.get("id"), kind, name, arguments)


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


def wire_fields(obj: object) -> DeltaFields | None:
    """``(index, id, type, name, arguments)`` of a plain dict in the OpenAI wire shape (its
    keys and its ``function``'s all ones the shape reads: the one place of that rule) or of a
    ``Delta``, checked; ``None`` for anything else, and for what those checks refuse.

    The assembler's hot path: a few lookups and one type check per field."""
    if type(obj) is dict:
        function = obj.get("function")
        if type(function) is not dict or not (
            obj.keys() <= WIRE_KEYS and function.keys() <= FUNCTION_KEYS
        ):
            return None
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
        return None
    index, call_id, kind, name, arguments = fields
    if (
        (index is None or (type(index) is int and index >= 0))
        and (call_id is None or type(call_id) is str)
        and (kind is None or type(kind) is str)
        and (name is None or type(name) is str)
        and (arguments is None or type(arguments) is str)
    ):
        return fields
    return None


def delta_fields(obj: object) -> DeltaFields:
    """``(index, id, type, name, arguments)`` of what the caller fed, checked: ``wire_fields``
    on its hot path; everything else, and anything its checks refuse, goes through
    ``coerce_delta``, which raises ``InvalidDelta`` for what is not a delta."""
    fields = wire_fields(obj)
    return _coerced_fields(obj) if fields is None else fields


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
        if obj and not any(key in _READ_KEYS for key in obj):
            raise InvalidDelta(
                "a delta mapping with none of the keys toolstitch reads "
                f"({', '.join(sorted(_READ_KEYS))}): got "
                f"{', '.join(repr(key) for key in obj)}"
            )
    elif isinstance(obj, NOT_DELTAS) or obj is None:
        raise InvalidDelta(f"a delta must be a mapping or an object, got {type(obj).__name__}")
    elif isinstance(obj, Delta) or any(
        hasattr(obj, attr) for attr in ("index", "function", "arguments", "name", "id")
    ):
        delta = _from_object(obj)
    else:
        raise InvalidDelta(f"{type(obj).__name__} has none of the fields of a tool-call delta")
    return _check(delta)
