"""What the runner sends back to the model is always something the provider accepts.

* Names: a tool name outside ``[A-Za-z0-9_-]{1,64}`` (the rule of ``tool_error_reply``, which
  every major provider accepts) is replaced by ``unknown_tool`` in the history; the name as
  the model sent it stays in the result's events.
* Text: lone surrogates (which no UTF-8 request body can carry) are replaced by U+FFFD after
  the pairs are joined (``toolstitch.json.lexicon.join_surrogates``); each replacement is
  reported with a warning.
* Size: a tool result longer than ``max_result_chars`` is cut, with a note the model reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolstitch.json.lexicon import without_lone_surrogates
from toolstitch.stitch.recovery import accepted_name

__all__ = ["clip", "encodable", "encodable_value", "wire_name"]


def wire_name(name: str) -> str:
    """``name`` if every provider accepts it, else ``unknown_tool`` (``accepted_name``)."""
    return accepted_name(name)


def encodable(text: str) -> tuple[str, int]:
    """``text`` with its lone surrogates replaced by U+FFFD, and how many there were
    (``json.lexicon.without_lone_surrogates``)."""
    return without_lone_surrogates(text)


def encodable_value(value: Any) -> tuple[Any, int]:
    """A JSON value (arguments) with every string made ``encodable``."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        count = 0
        for key, item in value.items():
            fixed_key, a = encodable(str(key))
            out[fixed_key], b = encodable_value(item)
            count += a + b
        return out, count
    if isinstance(value, (list, tuple)):
        items = [encodable_value(item) for item in value]
        return [item for item, _ in items], sum(n for _, n in items)
    return value, 0


def clip(text: str, limit: int | None) -> str:
    """``text``, or its first ``limit`` characters followed by a note saying it was cut."""
    if limit is None or len(text) <= limit:
        return text
    return (
        text[:limit] + f"\n[toolstitch: this result was {len(text)} characters long; only the "
        f"first {limit} are shown]"
    )
