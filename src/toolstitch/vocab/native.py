"""Which implementation runs the hot path: the C extension ``toolstitch._native`` or pure
Python.

Pure Python is the reference and the fallback; the extension (docs/native.md) takes the common
case of the assembler's hot path and hands everything else to the Python code, so the
observable result is the same on either path. The choice is made once, at import:

* ``TOOLSTITCH_PURE_PYTHON=1`` (any value but empty or ``0``) forces pure Python;
* otherwise the extension is used when it was built (an install from source on a machine with
  a C compiler builds it; a wheel carries it).

``NATIVE`` says which path is active and ``REASON`` why, in words (``toolstitch --version``
prints it).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Final

__all__ = ["NATIVE", "PURE_PYTHON_ENV", "REASON", "extension", "publish"]

#: The environment variable that forces the pure-Python path.
PURE_PYTHON_ENV: Final = "TOOLSTITCH_PURE_PYTHON"


def _load() -> tuple[ModuleType | None, str]:
    if os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return None, f"pure Python ({PURE_PYTHON_ENV} is set)"
    try:
        module = importlib.import_module("toolstitch._native")
    except ImportError as exc:
        return None, f"pure Python (the C extension is not available: {exc})"
    return module, "native (the C extension toolstitch._native)"


_extension, _reason = _load()

#: The C extension module, or ``None`` on the pure-Python path.
extension: Final[ModuleType | None] = _extension
#: Whether the C hot path is active.
NATIVE: Final[bool] = _extension is not None
#: Which path is active and why, in words.
REASON: Final[str] = _reason


def publish(cls: type, name: str, body: type) -> None:
    """Give the active class of a pair (the pure-Python one or the native one, which share
    the Python ``body``) the public ``name`` and the body's docstring."""
    cls.__name__ = cls.__qualname__ = name
    cls.__doc__ = body.__doc__
