"""The ids toolstitch gives calls that never received one: the one place they are made.

A call that ends complete without an id gets ``f"{GENERATED_ID_PREFIX}{index}"``; if the
stream already used that id, ``-2``, ``-3``… is appended until it is unused. The assembler
generates them (at the close, or when asked ahead of time through ``CallRecords``), and
``messages`` and ``stitch.recovery`` recognise them by the prefix.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Final

__all__ = ["GENERATED_ID_PREFIX", "generated_id"]

#: Calls that end complete without ever receiving an id get ``f"{GENERATED_ID_PREFIX}{index}"``
#: (with ``-2``, ``-3``… appended if the stream already used that id).
GENERATED_ID_PREFIX: Final = "toolstitch_call_"


def generated_id(index: int, taken: Container[str]) -> str:
    """The id for call ``index``: the first of the scheme's candidates not in ``taken``."""
    candidate = f"{GENERATED_ID_PREFIX}{index}"
    n = 1
    while candidate in taken:
        n += 1
        candidate = f"{GENERATED_ID_PREFIX}{index}-{n}"
    return candidate
