"""Laying out ``_view``'s document: plain text (the default, the standard library only), or
``rich`` on a terminal that gets colour (the ``cli`` extra: colour, tables, wrapping).

Colour (docs/cli.md): ``--color always`` / ``never`` decide; with ``auto`` (the default)
a non-empty ``NO_COLOR`` turns colour off, else a non-empty ``FORCE_COLOR`` turns it on,
else ``TERM=dumb`` turns it off, else colour goes to a terminal and never to a pipe or a
file. Without ``rich`` the output is plain text whatever the rules say. Plain and rich
lines wrap at the terminal's width (``COLUMNS`` first; 80 when there is no terminal).
"""

from __future__ import annotations

import io
import os
import shutil
import textwrap
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from ._view import Block, Line, Row, Span, Table

if TYPE_CHECKING:  # the cli extra; imported only when colour is on
    from rich.console import Console, RenderableType

__all__ = ["render", "shown", "use_colour", "width"]

#: The narrowest layout, however narrow the terminal says it is.
MIN_WIDTH = 40

#: Tables longer than this are laid out as plain text even in colour (see ``render``).
RICH_TABLE_ROWS = 1000

#: ``_view``'s styles in rich's words.
STYLES = {
    "head": "bold",
    "ok": "bold green",
    "bad": "bold red",
    "warn": "yellow",
    "dim": "dim",
    "name": "cyan",
    "note": "dim",
}


#: Control characters a recorded stream may carry (in its text, or in arguments that are not
#: JSON) shown as escapes: written as they are they would move the cursor, clear the screen or
#: restyle the terminal. Line breaks and tabs stay.
_CONTROLS = {
    code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0)) if chr(code) not in "\n\t"
}


def shown(text: str) -> str:
    """``text`` with its control characters (but line breaks and tabs) as ``\\xNN``."""
    return text.translate(_CONTROLS)


def use_colour(choice: str, out: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the output gets colour (and so goes through ``rich``): see the module doc."""
    if choice != "auto":
        return choice == "always"
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("FORCE_COLOR", ""):
        return True
    if environ.get("TERM") == "dumb":
        return False
    isatty = getattr(out, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed file
        return False


def width() -> int:
    """The width to lay out for: the terminal's, ``COLUMNS`` first, 80 without either."""
    return max(MIN_WIDTH, shutil.get_terminal_size((80, 24)).columns)


def render(blocks: Iterable[Block], out: TextIO, *, colour: bool) -> None:
    """Write ``blocks`` to ``out``: through ``rich`` with colour (when it is installed),
    else as plain text."""
    columns = width()
    if colour:
        console = _console(columns)
        if console is not None:
            for block in blocks:
                if isinstance(block, Table) and len(block.rows) > RICH_TABLE_ROWS:
                    # rich lays a table out in time linear but slow (~0.7 ms a row): a long
                    # timeline is laid out as plain text, in the same columns, unstyled.
                    console.out("\n".join(_plain(block, columns)), highlight=False)
                else:
                    console.print(_rich(block))
            out.write(console.file.getvalue())  # type: ignore[attr-defined]
            return
    for block in blocks:
        for line in _plain(block, columns):
            out.write(line + "\n")


# -- plain -----------------------------------------------------------------------------------


def _plain(block: Block, columns: int) -> list[str]:
    if isinstance(block, Table):
        return _plain_table(block, columns)
    return _plain_line(block, columns)


def _wrap(text: str, room: int, how: str) -> list[str]:
    """``text`` cut into lines of at most ``room`` characters (its own line breaks kept)."""
    if "\n" in text:
        return [piece for line in text.split("\n") for piece in _wrap(line, room, how)]
    if how == "none" or len(text) <= room:
        return [text]
    if how == "chars":
        return [text[i : i + room] for i in range(0, len(text), room)]
    return textwrap.wrap(text, room, break_on_hyphens=False) or [""]


def _plain_line(line: Line, columns: int) -> list[str]:
    lead = " " * line.indent + (f"{line.label}: " if line.label else "")
    text = _text(s for s in line.spans if s.style != "note")
    note = _text(s for s in line.spans if s.style == "note")
    if not (text or note):
        return [lead.rstrip()]
    under = " " * (len(lead) + line.hang)
    room = max(MIN_WIDTH // 2, columns - len(under))
    first, *rest = _wrap(text, room, line.wrap)
    return _noted([lead + first, *(under + piece for piece in rest)], note, under, columns)


def _noted(lines: list[str], note: str, under: str, columns: int) -> list[str]:
    """``lines`` with ``note`` after the last one, or under it when it does not fit: a
    note is never cut."""
    if not note:
        return lines
    if len(lines[-1]) + len(note) <= columns:
        lines[-1] += note
    else:
        lines.append(under + note.lstrip())
    return lines


def _plain_table(table: Table, columns: int) -> list[str]:
    cells = [[_text(cell) for cell in row.cells] for row in table.rows]
    heads = [c.name for c in table.columns]
    sizes = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(heads[:-1])]
    lead = " " * table.indent
    under = " " * (len(lead) + sum(sizes) + 2 * len(sizes))
    room = max(MIN_WIDTH // 2, columns - len(under))

    def line(values: list[str], last: tuple[Span, ...]) -> list[str]:
        fixed = [
            v.rjust(size) if column.right else v.ljust(size)
            for v, size, column in zip(values, sizes, table.columns, strict=False)
        ]
        head = lead + "".join(f + "  " for f in fixed)
        text = _text(s for s in last if s.style != "note")
        first, *rest = _wrap(text, room, "words")
        out = [(head + first).rstrip(), *(under + piece for piece in rest)]
        return _noted(out, _text(s for s in last if s.style == "note"), under, columns)

    out = line(heads, (Span(heads[-1]),))
    for row, values in zip(table.rows, cells, strict=True):
        out += line(values, row.cells[-1])
        out += [under + shown(extra) for extra in row.below]
    return out


def _text(spans: Iterable[Span]) -> str:
    return shown("".join(s.text for s in spans))


# -- rich ------------------------------------------------------------------------------------


def _console(columns: int) -> Console | None:
    try:
        from rich.console import Console
    except ImportError:  # the cli extra is not installed: plain text
        return None
    # Everything decided here, nothing read from the environment by rich: the rules above
    # are the whole of them, and the output is the same on every machine.
    return Console(
        file=io.StringIO(),
        width=columns,
        force_terminal=True,
        color_system="standard",
        no_color=False,
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=False,
        legacy_windows=False,
        _environ={},
    )


def _rich_text(spans: Iterable[Span], how: str = "words") -> Any:
    from rich.text import Text

    text = Text(no_wrap=how == "none", overflow="fold")
    for span in spans:
        text.append(shown(span.text), STYLES.get(span.style, ""))
    return text


def _rich(block: Block) -> RenderableType:
    from rich.padding import Padding
    from rich.table import Table as RichTable

    if isinstance(block, Table):
        return _rich_table(block)
    value = _rich_text(block.spans, block.wrap)
    if not block.label:
        return Padding(value, (0, 0, 0, block.indent), expand=False) if block.indent else value
    grid = RichTable.grid(padding=0)
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    label = f"{block.label}: " if block.label else ""
    grid.add_row(_rich_text([Span(label, "dim")]), value)
    return Padding(grid, (0, 0, 0, block.indent), expand=False)


def _rich_table(table: Table) -> RenderableType:
    from rich import box
    from rich.table import Table as RichTable

    out = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for number, column in enumerate(table.columns):
        last = number == len(table.columns) - 1
        out.add_column(
            column.name,
            justify="right" if column.right else "left",
            no_wrap=not last,
            overflow="fold",
        )
    for row in table.rows:
        out.add_row(*_rich_cells(row))
    return out


def _rich_cells(row: Row) -> list[Any]:
    cells = [_rich_text(cell) for cell in row.cells]
    if row.below:
        cells[-1].append(shown("\n" + "\n".join(row.below)))
    return cells
