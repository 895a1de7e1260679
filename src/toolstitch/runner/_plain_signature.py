"""A function's signature as a JSON Schema without pydantic, for simple annotations.

When pydantic is not installed, ``Tool.from_function`` still takes a function whose
parameters are annotated with JSON's own types: ``str``, ``int``, ``float``, ``bool``,
``None``, ``list[X]`` (and ``tuple[X, ...]``), ``dict[str, X]``, unions (``X | None``),
``Literal`` of strings, integers and booleans, an ``Enum`` whose values are strings or
integers, ``Any`` (or no annotation). The schema is checked by ``jsonschema`` (the runner's
own dependency), exactly: ``"3"`` is not an ``int`` here, where pydantic's lax mode would
convert it. Conversion is what JSON cannot say: an enum's value becomes the member, an
integer for a ``float`` becomes a float. Any other annotation (a dataclass, a ``TypedDict``,
a pydantic model, ``datetime``) needs pydantic, and raises ``ImportError`` with the command
that installs it.
"""

from __future__ import annotations

import enum
import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final

from ._signature import annotation_of, has_default, parameters_of

__all__ = ["PlainSignature"]

_PRIMITIVES: Final[dict[Any, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    None: "null",
}


class _NeedsPydantic(Exception):
    """An annotation outside the plain set: ``what`` names it."""

    def __init__(self, what: object) -> None:
        super().__init__(what)
        self.what = what


def _is_union(origin: object) -> bool:
    return origin is typing.Union or origin is types.UnionType


def _enum_schema(cls: type[enum.Enum]) -> dict[str, Any]:
    values = [member.value for member in cls]
    if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
        raise _NeedsPydantic(cls)
    return {"enum": values}


def plain_schema(annotation: Any) -> dict[str, Any]:
    """The JSON Schema of ``annotation``, or ``_NeedsPydantic``."""
    if annotation is Any:
        return {}
    if annotation in _PRIMITIVES:
        return {"type": _PRIMITIVES[annotation]}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_schema(annotation)
    if annotation in (list, tuple):
        return {"type": "array"}
    if annotation is dict:
        return {"type": "object"}
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, tuple, dict):
        return _container_schema(annotation, origin, args)
    if _is_union(origin):
        return {"anyOf": [plain_schema(arg) for arg in args]}
    if origin is typing.Literal and all(
        isinstance(v, (str, int, bool)) and not isinstance(v, enum.Enum) for v in args
    ):
        return {"enum": list(args)}
    raise _NeedsPydantic(annotation)


def _container_schema(annotation: Any, origin: Any, args: tuple[Any, ...]) -> dict[str, Any]:
    """``list[X]``, ``tuple[X, ...]``, ``dict[str, X]`` (and ``typing.List`` alone)."""
    if not args:
        return {"type": "object" if origin is dict else "array"}
    if origin is list and len(args) == 1:
        return {"type": "array", "items": plain_schema(args[0])}
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return {"type": "array", "items": plain_schema(args[0])}
    if origin is dict and len(args) == 2 and args[0] is str:
        return {"type": "object", "additionalProperties": plain_schema(args[1])}
    raise _NeedsPydantic(annotation)


def _fits(annotation: Any, value: Any) -> bool:
    """Whether the JSON ``value`` is one of ``annotation`` (to pick a union's member)."""
    if annotation is Any:
        return True
    if annotation in _PRIMITIVES:
        name = _PRIMITIVES[annotation]
        if name == "null":
            return value is None
        if name == "boolean" or isinstance(value, bool):
            return name == "boolean" and isinstance(value, bool)
        kinds: dict[str, Any] = {"string": str, "integer": int, "number": (int, float)}
        return isinstance(value, kinds[name])
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return any(member.value == value for member in annotation)
    origin = typing.get_origin(annotation) or annotation
    if origin in (list, tuple):
        return isinstance(value, list)
    if origin is dict:
        return isinstance(value, dict)
    if origin is typing.Literal:
        return value in typing.get_args(annotation)
    return any(_fits(arg, value) for arg in typing.get_args(annotation))  # a union


def convert(annotation: Any, value: Any) -> Any:
    """The JSON ``value`` (already checked) as ``annotation``: enums and floats."""
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation(value)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, tuple) and args and isinstance(value, list):
        return [convert(args[0], item) for item in value]
    if origin is dict and len(args) == 2 and isinstance(value, dict):
        return {key: convert(args[1], item) for key, item in value.items()}
    if _is_union(origin):
        for arg in args:
            if _fits(arg, value):
                return convert(arg, value)
    return value


def _json_default(value: object) -> tuple[bool, object]:
    """``(True, value as JSON)`` for a default a schema can show, else ``(False, None)``."""
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False, None
    return True, value


class PlainSignature:
    """The JSON Schema of ``fn``'s parameters (see the module docs), and how to call ``fn``
    with a call's arguments. Raises ``ImportError`` naming the pydantic extra for an
    annotation outside the plain set."""

    def __init__(self, fn: Callable[..., Any], name: str, descriptions: dict[str, str]) -> None:
        parameters, self.extra = parameters_of(fn, name)
        self.params = parameters
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param in parameters:
            try:
                prop = plain_schema(annotation_of(param))
            except _NeedsPydantic as exc:
                raise ImportError(
                    f"tool {name!r}: parameter {param.name!r} is annotated {exc.what!r}, "
                    "which needs pydantic to become a JSON Schema: "
                    "pip install 'toolstitch[pydantic]'"
                ) from None
            if descriptions.get(param.name):
                prop["description"] = descriptions[param.name]
            if has_default(param):
                shown, default = _json_default(param.default)
                if shown:
                    prop["default"] = default
            else:
                required.append(param.name)
            properties[param.name] = prop
        self.schema: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": self.extra,
        }
        if required:
            self.schema["required"] = required

    def call_arguments(
        self, arguments: Mapping[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``(args, kwargs)`` for the function, from a call's (checked) arguments: only
        those sent (positional-only ones before a sent one take their defaults)."""
        rest = dict(arguments)
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for param in self.params:
            present = param.name in rest
            value = convert(annotation_of(param), rest.pop(param.name)) if present else None
            if param.kind is inspect.Parameter.POSITIONAL_ONLY:
                args.append(value if present else param.default)
            elif present:
                kwargs[param.name] = value
        if self.extra:
            kwargs.update(rest)
        return tuple(args), kwargs
