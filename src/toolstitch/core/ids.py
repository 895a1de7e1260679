"""The ids toolstitch gives calls that never received one: the one place they are made.

A call that ends complete without an id gets ``f"{GENERATED_ID_PREFIX}{index}"`` - or, when
the caller gave an ``id_factory``, ``id_factory(index, position)`` (``position``: the call's
0-based order among the calls of the stream). If the stream already used that id, ``-2``,
``-3``… is appended until it is unused, whichever made it, so ids stay unique in the stream.
A factory that returns anything but a non-empty ``str`` is a bug of the caller's:
``UsageError``. The assembler generates ids (at the close, or when asked ahead of time
through ``CallRecords``); ``messages`` and ``stitch.recovery`` recognise toolstitch's own
scheme by the prefix, and take a factory's ids as the caller's own (sent back as they are).
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Final, TypeAlias

from toolstitch.vocab.errors import UsageError

__all__ = ["GENERATED_ID_PREFIX", "IdFactory", "check_id_factory", "generated_id"]

#: Calls that end complete without ever receiving an id get ``f"{GENERATED_ID_PREFIX}{index}"``
#: (with ``-2``, ``-3``… appended if the stream already used that id).
GENERATED_ID_PREFIX: Final = "toolstitch_call_"

#: ``id_factory(index, position) -> id``: the caller's ids for calls that have none.
IdFactory: TypeAlias = Callable[[int, int], str]


def check_id_factory(id_factory: object) -> IdFactory | None:
    """``id_factory`` if it is ``None`` or callable; ``TypeError`` otherwise."""
    if id_factory is not None and not callable(id_factory):
        raise TypeError(
            f"id_factory must be a callable (index, position) -> str, "
            f"got {type(id_factory).__name__}"
        )
    return id_factory


def generated_id(
    index: int,
    taken: Container[str],
    *,
    factory: IdFactory | None = None,
    position: int | None = None,
) -> str:
    """The id for call ``index``: the scheme's (or ``factory``'s) id, suffixed ``-2``,
    ``-3``… until it is not in ``taken``. ``position`` defaults to ``index``."""
    if factory is None:
        base = f"{GENERATED_ID_PREFIX}{index}"
    else:
        base = factory(index, index if position is None else position)
        if not isinstance(base, str) or not base:
            raise UsageError(
                f"id_factory returned {base!r} for call {index}: it must return a non-empty str"
            )
    candidate = base
    n = 1
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    return candidate
