"""Quick makers of events with one field, for the paths that make one per chunk or per call.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``; the slot's
own descriptor sets it directly, for about half the cost. What a maker returns is an
ordinary instance, equal to the one the constructor makes (frozen, slotted, same hash and
repr): ``tests/test_adapters_items.py`` compares them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["one_field"]

_Made = TypeVar("_Made")
_Value = TypeVar("_Value")


def one_field(kind: type[_Made], field: str, value: type[_Value]) -> Callable[[_Value], _Made]:
    """The maker of ``kind(**{field: v})`` for a frozen, slotted dataclass ``kind`` whose one
    field is ``field`` (``value``: that field's type, for the type checker only)."""
    del value
    new = object.__new__
    set_field = vars(kind)[field].__set__

    def make(content: _Value) -> _Made:
        event: _Made = new(kind)
        set_field(event, content)
        return event

    return make
