"""A griffe extension: the ``#:`` comments above an assignment are that attribute's docstring.

toolstitch documents its constants the Sphinx way (``#: The provider ids...`` on the lines
above ``PROVIDERS = ...``); griffe reads only string literals after an assignment, so without
this the API reference (mkdocs.yml's mkdocstrings handler) and docs/api.md would show
``PROVIDERS`` with no description. A docstring written after the assignment wins.
"""

from __future__ import annotations

import ast
from typing import Any

import griffe

__all__ = ["CommentDocstrings", "comment_above"]


def comment_above(lines: list[str], lineno: int) -> str:
    """The ``#:`` lines right above line ``lineno`` (1-based) of ``lines``, without the marks."""
    found: list[str] = []
    row = lineno - 2
    while row >= 0 and lines[row].lstrip().startswith("#:"):
        found.append(lines[row].lstrip()[2:].removeprefix(" "))
        row -= 1
    return "\n".join(reversed(found))


class CommentDocstrings(griffe.Extension):
    """Give each attribute without a docstring the ``#:`` comment above its assignment."""

    def on_attribute_instance(
        self,
        *,
        node: ast.AST | griffe.ObjectNode,
        attr: griffe.Attribute,
        agent: griffe.Visitor | griffe.Inspector,
        **kwargs: Any,
    ) -> None:
        if attr.docstring is not None or attr.lineno is None:
            return
        text = comment_above(attr.module.lines, attr.lineno)
        if text:
            attr.docstring = griffe.Docstring(text, lineno=attr.lineno, parent=attr)
