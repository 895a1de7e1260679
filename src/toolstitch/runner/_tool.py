"""``Tool``: a function the model may call, its JSON Schema, and whether it may start early."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Tool", "require"]


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
            schema: dict[str, Any] = parameters.model_json_schema()  # type: ignore[attr-defined]
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
        self._is_async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
            getattr(function, "__call__", None)  # noqa: B004 - an object with async __call__
        )

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, early={self.early})"

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
            pydantic = require("pydantic", "runner")
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

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        """Run the function with ``arguments`` (already checked); return its value."""
        if self.model is not None:
            args: tuple[Any, ...] = (self.model.model_validate(dict(arguments)),)  # type: ignore[attr-defined]
            kwargs: dict[str, Any] = {}
        else:
            args, kwargs = (), dict(arguments)
        if self._is_async:
            value = await self.function(*args, **kwargs)
        else:
            value = await asyncio.to_thread(functools.partial(self.function, *args, **kwargs))
            if inspect.isawaitable(value):
                value = await value
        return value


def render(value: object) -> str:
    """A tool's return value as the text sent to the model."""
    if isinstance(value, str):
        return value
    dump = getattr(value, "model_dump_json", None)
    if callable(dump):
        return str(dump())
    return json.dumps(value, ensure_ascii=False, default=str)
