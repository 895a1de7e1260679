"""A function's signature as a pydantic model: the schema and validator of a tool's arguments.

``Tool.from_function`` builds one model per function with ``pydantic.create_model``: one
field per parameter, typed by its annotation (``Any`` without one), required unless it has a
default, described by the docstring. pydantic then gives the JSON Schema
(``model_json_schema``) and validates and converts a call's arguments to the annotated types
(nested models, dataclasses and enums become instances), so that every type pydantic knows
works - ``str``, ``int``, ``float``, ``bool``, ``list[...]``, ``dict[str, ...]``,
``X | None``, ``Literal``, ``Enum``, ``TypedDict``, dataclasses, pydantic models, ``datetime``.

Fields are named ``p0``, ``p1``... with the parameter's name as their alias: a parameter may
then be called anything (``schema``, ``json``, ``_private``) without clashing with
``BaseModel``'s own attributes. Only the arguments the model sent are passed to the function
(``model_fields_set``), so the function's own defaults apply, as in a direct call.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from ._docstring import Docstring, parse_docstring

__all__ = [
    "Signature",
    "annotation_of",
    "default_name",
    "docstring_of",
    "has_default",
    "have_pydantic",
    "model_schema",
    "parameters_of",
    "target_of",
]

_PYDANTIC_HINT = "pip install 'toolstitch[pydantic]'"


def _pydantic() -> Any:
    try:
        import pydantic
    except ImportError as exc:
        raise ImportError(
            "Tool.from_function and @tool build the arguments' schema and validator with "
            f"pydantic, which is not installed: {_PYDANTIC_HINT}"
        ) from exc
    return pydantic


def have_pydantic() -> bool:
    """Whether pydantic can be imported."""
    try:
        _pydantic()
    except ImportError:
        return False
    return True


def target_of(fn: Callable[..., Any]) -> Any:
    """The function behind ``fn``: a partial's function, else ``fn`` itself."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def default_name(fn: Callable[..., Any]) -> str:
    """``fn``'s name (a callable object's class name)."""
    target = target_of(fn)
    name = getattr(target, "__name__", None)
    return name if isinstance(name, str) else type(target).__name__


def docstring_of(fn: Callable[..., Any]) -> Docstring:
    target = target_of(fn)
    doc = getattr(target, "__doc__", None)
    if not inspect.isroutine(target) and not inspect.isclass(target):
        # A callable object: its __call__'s docstring, else its class's.
        call = getattr(type(target), "__call__", None)  # noqa: B004 - the method itself
        doc = getattr(call, "__doc__", None) or type(target).__doc__
    return parse_docstring(doc if isinstance(doc, str) else None)


def parameters_of(fn: Callable[..., Any], name: str) -> tuple[list[inspect.Parameter], bool]:
    """``fn``'s parameters that become properties, and whether it takes ``**kwargs``.

    Raises ``TypeError`` for ``*args`` (a call's arguments are named), a string annotation
    that does not resolve, a callable without signature.
    """
    try:
        signature = inspect.signature(fn, eval_str=True)
    except NameError as exc:
        raise TypeError(
            f"tool {name!r}: an annotation of its function does not resolve ({exc}); "
            "define the types it names at module level"
        ) from exc
    except ValueError as exc:
        raise TypeError(f"tool {name!r}: its function has no signature ({exc})") from exc
    parameters: list[inspect.Parameter] = []
    extra = False
    for param in signature.parameters.values():
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            raise TypeError(
                f"tool {name!r}: *{param.name} cannot be a tool parameter (a call's "
                "arguments are named); use a list parameter"
            )
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            extra = True  # other arguments are accepted and passed on as they are
        else:
            parameters.append(param)
    return parameters, extra


def annotation_of(param: inspect.Parameter) -> Any:
    return Any if param.annotation is inspect.Parameter.empty else param.annotation


def has_default(param: inspect.Parameter) -> bool:
    return param.default is not inspect.Parameter.empty


def model_schema(model: Any) -> dict[str, Any]:
    """A pydantic model class's JSON Schema; a default that is not JSON (a sentinel) is left
    out of it without pydantic's warning."""
    from pydantic.json_schema import PydanticJsonSchemaWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
        schema: dict[str, Any] = model.model_json_schema()
    return schema


class Signature:
    """The pydantic model of ``fn``'s parameters, and how to call ``fn`` with one instance.

    ``descriptions`` (parameter name -> text) fill the schema's ``description`` of each
    property. Raises ``TypeError`` for a signature that cannot be a tool (``*args``, an
    annotation pydantic cannot represent, a string annotation that does not resolve).
    """

    def __init__(self, fn: Callable[..., Any], name: str, descriptions: dict[str, str]) -> None:
        pydantic = _pydantic()
        parameters, self.extra = parameters_of(fn, name)
        fields: dict[str, Any] = {}
        #: (field, parameter name, positional only) in the signature's order.
        self.params: list[tuple[str, str, bool]] = []
        for param in parameters:
            field = f"p{len(self.params)}"
            annotation = annotation_of(param)
            options: dict[str, Any] = {"alias": param.name}
            if has_default(param):
                options["default"] = param.default
            if descriptions.get(param.name):
                options["description"] = descriptions[param.name]
            fields[field] = (annotation, pydantic.Field(**options))
            positional = param.kind is inspect.Parameter.POSITIONAL_ONLY
            self.params.append((field, param.name, positional))
        config = pydantic.ConfigDict(extra="allow" if self.extra else "forbid")
        try:
            self.model: Any = pydantic.create_model(name, __config__=config, **fields)
            model_schema(self.model)  # fails here, with the tool's name, if it cannot be made
        except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError) as exc:
            raise TypeError(
                f"tool {name!r}: its parameters cannot be a JSON Schema: {exc}"
            ) from exc

    def call_arguments(
        self, arguments: Mapping[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``(args, kwargs)`` for the function, from a call's (checked) arguments."""
        instance = self.model.model_validate(dict(arguments))
        given = instance.model_fields_set
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for field, name, positional in self.params:
            if positional:  # always passed (its default if not given): keeps the positions
                args.append(getattr(instance, field))
            elif field in given:
                kwargs[name] = getattr(instance, field)
        if self.extra and instance.model_extra:
            kwargs.update(instance.model_extra)
        return tuple(args), kwargs
