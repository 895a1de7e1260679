"""A griffe extension: toolstitch's docstrings as the API reference should show them.

griffe reads the docstrings for mkdocstrings (mkdocs.yml) and for docs/_scripts/make_api_doc.py;
this extension, loaded by both, adds what the project's conventions need:

* the ``#:`` comments above an assignment are that attribute's docstring, as Sphinx reads
  them (``#: The provider ids...`` above ``PROVIDERS = ...``); griffe reads only a string
  literal after the assignment, which wins when there is one;
* a paragraph ending ``::`` (reStructuredText's "a literal block follows") ends ``:``, as
  reStructuredText shows it; the indented block after it is code in Markdown as it is;
* a public class chosen at import between twin implementations (the pure-Python reference or
  the one on the C extension's bases, docs/native.md) is documented as the body both share
  (``SHARED_BODIES``): griffe reads the source, where the choice is an expression.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import griffe

__all__ = ["SHARED_BODIES", "ProjectDocstrings", "comment_above", "literal_block_marks"]

#: module -> {public name: the private class whose methods and docstring both twins share}.
SHARED_BODIES: dict[str, dict[str, str]] = {
    "toolstitch.core.assembler": {"Assembler": "_AssemblerBody"},
    "toolstitch.stitch.stitcher": {"Stitcher": "_StitcherBody"},
}

# "::" closing a paragraph, before the blank line that opens the literal block.
LITERAL_MARK = re.compile(r"(?<=\S)::(?=\n\s*\n)")


def comment_above(lines: list[str], lineno: int) -> str:
    """The ``#:`` lines right above line ``lineno`` (1-based) of ``lines``, without the marks."""
    found: list[str] = []
    row = lineno - 2
    while row >= 0 and lines[row].lstrip().startswith("#:"):
        found.append(lines[row].lstrip()[2:].removeprefix(" "))
        row -= 1
    return "\n".join(reversed(found))


def literal_block_marks(text: str) -> str:
    """``text`` with each paragraph-closing ``::`` shown as ``:``."""
    return LITERAL_MARK.sub(":", text)


class ProjectDocstrings(griffe.Extension):
    """The ``#:`` comments as attribute docstrings; ``::`` before a literal block as ``:``."""

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

    def on_instance(
        self,
        *,
        node: ast.AST | griffe.ObjectNode,
        obj: griffe.Object,
        agent: griffe.Visitor | griffe.Inspector,
        **kwargs: Any,
    ) -> None:
        if obj.docstring is not None:
            obj.docstring.value = literal_block_marks(obj.docstring.value)

    def on_module_members(
        self, *, node: ast.AST | griffe.ObjectNode, mod: griffe.Module, **kwargs: Any
    ) -> None:
        for name, body in SHARED_BODIES.get(mod.path, {}).items():
            mod.set_member(name, griffe.Alias(name, mod[body], parent=mod))
