"""Read a function's docstring: its description, and one description per parameter.

Three styles are read, because they are the ones Python code uses:

* Google: an ``Args:`` (or ``Arguments:``, ``Parameters:``, ``Params:``) heading, then
  ``name (type): text`` or ``name: text`` lines, continued by deeper-indented lines;
* NumPy: a ``Parameters`` heading underlined with dashes, then ``name : type`` lines, each
  described by the indented lines under it;
* reST / Sphinx: ``:param name: text`` or ``:param type name: text`` fields.

The description is the text before the first section (of any style: ``Returns:``,
``Raises``, ``:returns:``...), its paragraphs kept. Nothing here raises: a docstring that
fits no style gives its text as the description and no parameter descriptions.
"""

from __future__ import annotations

import inspect
import re
from typing import Final

__all__ = ["Docstring", "parse_docstring"]

_GOOGLE_ARGS: Final = frozenset({"args", "arguments", "parameters", "params"})
# A Google heading: one or two words and a colon, alone on its line ("Returns:", "Raises:").
_GOOGLE_HEADING: Final = re.compile(r"^([A-Za-z][A-Za-z ]{0,30}):\s*$")
# A NumPy heading is a line followed by a line of dashes.
_NUMPY_RULE: Final = re.compile(r"^-{3,}\s*$")
_REST_FIELD: Final = re.compile(r"^:([A-Za-z]+)(?:\s+([^:]*?))?:\s*(.*)$")
# "name (type): text" / "name: text" / "*args: text" in a Google section.
_GOOGLE_ITEM: Final = re.compile(r"^\*{0,2}([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
# "name : type" / "name" in a NumPy section.
_NUMPY_ITEM: Final = re.compile(r"^\*{0,2}([A-Za-z_]\w*)\s*(?::.*)?$")


class Docstring:
    """``description`` (text before the sections) and ``params`` (name -> text)."""

    __slots__ = ("description", "params")

    def __init__(self, description: str, params: dict[str, str]) -> None:
        self.description = description
        self.params = params


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(lines: list[str]) -> str:
    """Lines of one description as text: paragraphs kept, lines inside one joined."""
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join(" ".join(p) for p in paragraphs if p)


def _section_start(lines: list[str], i: int) -> bool:
    line = lines[i].strip()
    if _GOOGLE_HEADING.match(line) or _REST_FIELD.match(line):
        return True
    return bool(line) and i + 1 < len(lines) and bool(_NUMPY_RULE.match(lines[i + 1].strip()))


def _items(lines: list[str], start: int, item: re.Pattern[str], params: dict[str, str]) -> None:
    """Read the parameter items of a Google or NumPy section from ``lines[start]`` on, up to
    the first line indented no deeper than the items that is not an item."""
    base: int | None = None
    name: str | None = None
    text: list[str] = []

    def flush() -> None:
        if name is not None:
            params[name] = _join(text)

    for j in range(start, len(lines)):
        line = lines[j]
        if not line.strip():
            text.append("")
            continue
        depth = _indent(line)
        if base is None:
            base = depth
        if depth < base or (depth == 0 and _section_start(lines, j)):
            break
        if depth == base:
            match = item.match(line.strip())
            if match is None:
                break
            flush()
            name = match.group(1)
            rest = match.group(2) if item is _GOOGLE_ITEM else ""
            text = [rest] if rest else []
        else:
            text.append(line)
    flush()


def parse_docstring(doc: str | None) -> Docstring:
    """The description and parameter descriptions of ``doc`` (see the module docs)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    params: dict[str, str] = {}
    first = next((i for i in range(len(lines)) if _section_start(lines, i)), len(lines))
    description = _join(lines[:first])
    i = first
    while i < len(lines):
        line = lines[i].strip()
        google = _GOOGLE_HEADING.match(line)
        rest = _REST_FIELD.match(line)
        if google and google.group(1).strip().lower() in _GOOGLE_ARGS:
            _items(lines, i + 1, _GOOGLE_ITEM, params)
        elif i + 1 < len(lines) and _NUMPY_RULE.match(lines[i + 1].strip()):
            if line.lower() in _GOOGLE_ARGS:
                _items(lines, i + 2, _NUMPY_ITEM, params)
            i += 1
        elif rest and rest.group(1) in ("param", "parameter", "arg", "argument"):
            _rest_field(lines, i, rest, params)
        i += 1
    return Docstring(description, params)


def _rest_field(lines: list[str], i: int, match: re.Match[str], params: dict[str, str]) -> None:
    """A ``:param [type] name: text`` field, continued by the indented lines after it."""
    words = (match.group(2) or "").split()
    if not words:
        return
    text = [match.group(3)]
    for line in lines[i + 1 :]:
        if not line.strip() or _indent(line) == 0:
            break
        text.append(line)
    params[words[-1].lstrip("*")] = _join(text)
