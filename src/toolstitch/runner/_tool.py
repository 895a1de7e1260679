"""``Tool``: a function the model may call, its JSON Schema, and whether it may start early."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, overload

from ._plain_signature import PlainSignature
from ._signature import Signature, default_name, docstring_of, have_pydantic, model_schema

__all__ = ["Tool", "require", "tool"]

#: The tool names every provider accepts (OpenAI, Anthropic and Gemini all refuse others).
TOOL_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def require(module: str, extra: str) -> Any:
    """Import ``module`` or fail with the command that installs it."""
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as exc:
        raise ImportError(
            f"this part of toolstitch.runner needs the {module!r} package: "
            f"pip install 'toolstitch[{extra}]'"
        ) from exc


def _is_pydantic_model(value: object) -> bool:
    return isinstance(value, type) and callable(getattr(value, "model_json_schema", None))


class Tool:
    """A tool the model may call.

    ``function`` is called with the call's arguments as keyword arguments; it may be a plain
    function (run in a worker thread, so that it cannot block the stream) or a coroutine
    function. ``parameters`` is the JSON Schema of the arguments (an object schema); a
    pydantic model class is accepted too, in which case ``function`` receives one argument,
    the validated model instance. Arguments are validated before the call: a ``ToolRunner``
    gives the schemas to the core, which checks each call against its JSON Schema as it
    streams; a model class is validated by pydantic (``check``), which decides. A failure is
    sent back to the model as an error result, and the function is not called.

    ``early=True`` declares the tool safe to start as soon as its call is complete, while
    the model is still streaming the rest of its response: use it only for read-only or
    idempotent tools, because the result is thrown away if the batch is refused afterwards
    or the call turns out corrupted.

    The return value is sent to the model as is when it is a ``str``, else as JSON
    (``model_dump_json()`` for a pydantic model, ``json.dumps(..., default=str)`` otherwise).

    ``Tool.from_function(fn)`` (or ``@tool``) makes all of this from a function's signature
    and docstring.
    """

    def __init__(
        self,
        name: str,
        function: Callable[..., Any],
        parameters: Mapping[str, Any] | type,
        *,
        description: str = "",
        early: bool = False,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("a tool needs a non-empty name")
        if not callable(function):
            raise TypeError(f"tool {name!r}: function must be callable")
        self.name = name
        self.function = function
        self.description = description
        self.early = bool(early)
        self.model: type | None = None
        if _is_pydantic_model(parameters):
            assert isinstance(parameters, type)
            self.model = parameters
            schema: dict[str, Any] = model_schema(parameters)
            self._validator: Any = None
        elif isinstance(parameters, Mapping):
            schema = dict(parameters)
            jsonschema = require("jsonschema", "runner")
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            self._validator = cls(schema)
        else:
            raise TypeError(
                f"tool {name!r}: parameters must be a JSON Schema dict or a pydantic model class"
            )
        self.parameters: dict[str, Any] = schema
        #: Set by ``from_function``: the model instance is spread into the function's own
        #: parameters instead of passed as one argument.
        self._signature: Signature | PlainSignature | None = None
        self._is_async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
            getattr(function, "__call__", None)  # noqa: B004 - an object with async __call__
        )

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, early={self.early})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function directly (a ``@tool`` function stays callable as itself)."""
        return self.function(*args, **kwargs)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        early: bool = False,
    ) -> Tool:
        """A tool whose schema comes from ``fn``'s signature and docstring.

        Each parameter is one property, typed by its annotation (any type pydantic knows:
        ``str``, ``int``, ``float``, ``bool``, ``list[...]``, ``dict[str, ...]``,
        ``X | None``, ``Literal``, ``Enum``, ``TypedDict``, dataclasses, pydantic models),
        required unless it has a default. The docstring's text before its sections is the
        description (unless ``description`` is given) and its ``Args:`` / ``Parameters`` /
        ``:param:`` entries describe the properties. Arguments are validated and converted
        by pydantic before the call, which receives them as its own parameters (only those
        the model sent: the function's defaults apply); a call whose arguments do not fit
        is answered with an error result, like any other. ``fn`` may be a function, a
        coroutine function, a bound method, a ``functools.partial`` (its bound arguments are
        not in the schema) or a callable object. ``name`` defaults to the function's name.
        The schema and validation are pydantic's when it is installed (``pip install
        'toolstitch[pydantic]'``); without it, parameters annotated with JSON's own types
        (``str``, ``int``, ``float``, ``bool``, ``list``, ``dict[str, ...]``, unions,
        ``Literal``, ``Enum``) still work, checked exactly by ``jsonschema``, and any other
        annotation raises ``ImportError`` naming that command.
        """
        if not callable(fn):
            raise TypeError(f"Tool.from_function needs a callable, not {fn!r}")
        tool_name = default_name(fn) if name is None else name
        if not isinstance(tool_name, str) or not TOOL_NAME.match(tool_name):
            raise ValueError(
                f"tool name {tool_name!r} is not one providers accept (1 to 64 letters, "
                "digits, '_' or '-'): pass name="
            )
        doc = docstring_of(fn)
        signature: Signature | PlainSignature
        if have_pydantic():
            signature = Signature(fn, tool_name, doc.params)
            parameters: Mapping[str, Any] | type = signature.model
        else:
            signature = PlainSignature(fn, tool_name, doc.params)
            parameters = signature.schema
        made = cls(
            tool_name,
            fn,
            parameters,
            description=doc.description if description is None else description,
            early=early,
        )
        made._signature = signature
        return made

    # -- wire forms ------------------------------------------------------------------------

    def to_openai(self) -> dict[str, Any]:
        """The Chat Completions ``tools`` entry."""
        function: dict[str, Any] = {"name": self.name, "parameters": self.parameters}
        if self.description:
            function["description"] = self.description
        return {"type": "function", "function": function}

    def to_anthropic(self) -> dict[str, Any]:
        """The Messages API ``tools`` entry."""
        entry: dict[str, Any] = {"name": self.name, "input_schema": self.parameters}
        if self.description:
            entry["description"] = self.description
        return entry

    # -- validation and execution ----------------------------------------------------------

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        """Why ``arguments`` do not fit the schema (a message for the model), or ``None``."""
        if self.model is not None:
            pydantic = require("pydantic", "pydantic")
            try:
                self.model.model_validate(dict(arguments))  # type: ignore[attr-defined]
            except pydantic.ValidationError as exc:
                return "; ".join(
                    f"{'/'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
                    for err in exc.errors()
                )
            return None
        jsonschema = require("jsonschema", "runner")
        error = jsonschema.exceptions.best_match(self._validator.iter_errors(dict(arguments)))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        return f"{where}: {error.message}"

    @property
    def is_async(self) -> bool:
        """Whether ``function`` is a coroutine function (or an object with an async
        ``__call__``): awaited on the loop, never run in a thread."""
        return self._is_async

    def call_arguments(
        self, arguments: Mapping[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The function's positional and keyword arguments for the call's ``arguments``
        (already checked): converted to the annotated types for ``from_function`` tools, the
        validated model instance for a pydantic model, else the arguments as keywords."""
        if self._signature is not None:
            return self._signature.call_arguments(arguments)
        if self.model is not None:
            return (self.model.model_validate(dict(arguments)),), {}  # type: ignore[attr-defined]
        return (), dict(arguments)

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        """Run the function with ``arguments`` (already checked); return its value."""
        args, kwargs = self.call_arguments(arguments)
        if self._is_async:
            value = await self.function(*args, **kwargs)
        else:
            value = await asyncio.to_thread(functools.partial(self.function, *args, **kwargs))
            if inspect.isawaitable(value):
                value = await value
        return value


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, early: bool = False
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    early: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """``@tool`` or ``@tool(early=True, name=..., description=...)``: the decorated function
    as a ``Tool`` (``Tool.from_function``), still callable directly."""
    if fn is not None:
        return Tool.from_function(fn, name=name, description=description, early=early)

    def decorate(function: Callable[..., Any]) -> Tool:
        return Tool.from_function(function, name=name, description=description, early=early)

    return decorate


def render(value: object) -> str:
    """A tool's return value as the text sent to the model."""
    if isinstance(value, str):
        return value
    dump = getattr(value, "model_dump_json", None)
    if callable(dump):
        return str(dump())
    return json.dumps(value, ensure_ascii=False, default=str)
