"""The ``multi_tool_use.parallel`` wrapper: one function call that stands for several.

Some Azure OpenAI deployments (Chat Completions and Responses) send parallel calls as one
call to a function nobody declared, ``multi_tool_use.parallel`` (or just ``parallel``),
whose arguments list the real calls::

    {"tool_uses": [{"recipient_name": "functions.get_weather", "parameters": {"city": "Paris"}},
                   {"recipient_name": "functions.get_time", "parameters": {"tz": "CET"}}]}

Only the declared tools can tell the wrapper from a real tool of that name, so the rule is
applied where they are known (the ``Stitcher``, ``toolstitch.stitch.parallel``): a call
whose name is one of ``WRAPPER_NAMES`` and is not declared, and whose arguments have
exactly this shape, is replaced by its calls. This module is the rule itself: which names,
which shape, which ids.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any, Final

__all__ = ["CODES", "WRAPPER_NAMES", "expand", "expanded_id", "is_wrapper"]

#: The ``quirk-…`` code of the expansion.
CODES: Final[dict[str, str]] = {
    "quirk-parallel-wrapper": "an undeclared multi_tool_use.parallel wrapper call was "
    "replaced by the calls it lists",
}

#: Names the wrapper has been seen with.
WRAPPER_NAMES: Final = frozenset({"multi_tool_use.parallel", "parallel"})

#: The prefix of each ``recipient_name`` (the namespace of the declared functions).
_PREFIX: Final = "functions."


def is_wrapper(name: str | None, declared: Container[str] | None) -> bool:
    """Whether a call named ``name`` is the wrapper: a wrapper name the declared tools do
    not have. Without declared tools (``None``) nothing is a wrapper: a real tool could
    have that name."""
    return declared is not None and name in WRAPPER_NAMES and name not in declared


def expand(arguments: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
    """The ``(name, parameters)`` of each call the wrapper lists, in order; ``None`` when
    ``arguments`` is not exactly the wrapper's shape (then it is not expanded)."""
    uses = arguments.get("tool_uses")
    if len(arguments) != 1 or not isinstance(uses, list) or not uses:
        return None
    out: list[tuple[str, dict[str, Any]]] = []
    for use in uses:
        if not isinstance(use, Mapping):
            return None
        name, parameters = use.get("recipient_name"), use.get("parameters", {})
        if not isinstance(name, str) or not isinstance(parameters, Mapping):
            return None
        name = name[len(_PREFIX) :] if name.startswith(_PREFIX) else name
        if not name:
            return None
        out.append((name, dict(parameters)))
    return out


def expanded_id(wrapper_id: str, position: int) -> str:
    """The id of the wrapper's ``position``-th call: derived from the wrapper's own id, so
    that the results sent back name calls the conversation knows."""
    return f"{wrapper_id}_{position}"
