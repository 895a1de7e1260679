"""A raw value of a model's text as JSON text: the one place where text without types gets one.

Formats that write argument values raw (Qwen3-Coder's ``<parameter=…>``, GLM's
``<arg_value>``, MiniMax, DSML ``string="true"``, Seed-OSS, Gemma's bare scalars) carry no
type: ``3`` may be the number or the string. The tool's schema decides (``CallSink.typed``):

* a value the schema does not type (or types as a string, or without tools) is a **string**:
  the raw text, JSON-escaped (``json_string``), streamed as it comes;
* a value the schema types otherwise is read whole at its end (``typed_value``): JSON text as
  it is (``3.14``, ``true``, ``["a", "b"]``, ``{"k": 1}``); failing that a Python literal,
  mapped explicitly (``None`` → ``null``, ``True``/``False`` → ``true``/``false``, single
  quotes, tuples as arrays) by ``ast.literal_eval``, which evaluates literals only; failing
  both, the raw text as a string, and the schema check (when the tool declares one) reports
  the mismatch where it belongs, as a ``SchemaViolation``.
"""

from __future__ import annotations

import ast
import json
import math
from typing import Any, Final

__all__ = ["json_string", "python_value", "typed_value"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode

#: The escapes of a JSON string body: json.dumps without its quotes.
_escape: Final = json.JSONEncoder(ensure_ascii=False).encode


def json_string(raw: str) -> str:
    """``raw`` as the inside of a JSON string (no quotes): a piece of a streamed string
    value. Pieces escaped apart join to the whole escaped (no escape spans two characters)."""
    return _escape(raw)[1:-1]


def _plain(value: Any) -> Any:
    """A Python literal's value as JSON can hold it (tuples and sets as arrays), or raise
    ``ValueError``."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise ValueError("not a finite number")
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError("a key that is not a string")
        return {k: _plain(v) for k, v in value.items()}
    raise ValueError(f"a {type(value).__name__} is not JSON")


def python_value(raw: str) -> str | None:
    """A Python literal (``None``, ``True``, ``'x'``, ``[1, (2, 3)]``, ``{'k': None}``) as
    JSON text, or ``None`` when ``raw`` is not one."""
    try:
        value = ast.literal_eval(raw.strip())
        return _dumps(_plain(value))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def typed_value(raw: str) -> str:
    """The JSON text of a whole raw value the schema types as other than a string (see the
    module docstring): JSON as written, else a Python literal, else the raw text as a
    string."""
    text = raw.strip()
    try:
        json.loads(text, parse_constant=_refuse)
    except ValueError:
        pass
    else:
        return text
    literal = python_value(text)
    return literal if literal is not None else _dumps(raw)
