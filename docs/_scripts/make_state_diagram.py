"""Regenerate the state diagrams and transition tables of the declared machines.

* docs/state-machine.md: the per-call machine, grammars/call-machine.json;
* docs/runner.md: the run machine, grammars/run-machine.json.

Both are drawn through the same ``transitions.Machine`` the library loads (one mechanism,
``toolstitch.core.machine``), so the pictures cannot drift from the code.
tests/test_docs.py and tests/test_runner_machine.py fail when a committed page differs from
what this script writes.

    python docs/_scripts/make_state_diagram.py
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from toolstitch.core.machine import DEFINITION, load_definition, mermaid_diagram

DOCS = Path(__file__).resolve().parents[1]
PAGE = DOCS / "state-machine.md"
START = "<!-- generated:start (docs/_scripts/make_state_diagram.py) -->"
END = "<!-- generated:end -->"

RUN_PAGE = DOCS / "runner.md"
RUN_START = "<!-- generated:start run machine (docs/_scripts/make_state_diagram.py) -->"
RUN_TITLE = "toolstitch.runner: the life of one run"


def mermaid_id(state: str) -> str:
    """``state`` as a Mermaid state id: Mermaid's parser refuses a ``-`` in an id in a
    transition line (``awaiting-id --> ...``), so ids use ``_``; the labels keep the names."""
    return state.replace("-", "_")


def _mermaid_for_docs(drawing: str, states: Iterable[str]) -> str:
    """transitions' drawing made valid Mermaid: ids without ``-``, and the title as the
    front matter's ``title`` (transitions writes the bare title there, which Mermaid reads as
    a YAML key and does not show)."""
    names = sorted(states, key=len, reverse=True)  # "a-b-c" before "a-b"
    pattern = re.compile(r"(?<![\w\-\"])(" + "|".join(map(re.escape, names)) + r")(?![\w\-\"])")
    lines = drawing.split("\n")
    if lines[0] == "---" and lines[2] == "---":
        lines[1] = f"title: {json.dumps(lines[1])}"

    def rewrite(line: str) -> str:
        head, colon, label = line.partition(":") if "-->" in line else (line, "", "")
        return pattern.sub(lambda m: mermaid_id(m[1]), head) + colon + label  # not the trigger

    return "\n".join(map(rewrite, lines))


def diagram(definition: Mapping[str, Any], title: str) -> str:
    """The Mermaid state diagram of ``definition``, as the docs show it."""
    drawing = mermaid_diagram(definition, title=title).strip()
    return _mermaid_for_docs(drawing, definition["states"])


def _block(definition: Mapping[str, Any], title: str, start: str) -> str:
    rows = ["| trigger | from | to | when |", "|---|---|---|---|"]
    for move in definition["transitions"]:
        sources = move["source"] if isinstance(move["source"], list) else [move["source"]]
        rows.append(
            f"| `{move['trigger']}` | {', '.join(f'`{s}`' for s in sources)} "
            f"| `{move['dest']}` | {move['when']} |"
        )
    drawn = diagram(definition, title)
    return "\n".join([start, "", "```mermaid", drawn, "```", "", *rows, "", END])


def generated_block() -> str:
    return _block(DEFINITION, "toolstitch: the life of one tool call", START)


def run_block() -> str:
    return _block(load_definition("run-machine.json"), RUN_TITLE, RUN_START)


def _replace(page: str, start: str, block: str) -> str:
    head, _, rest = page.partition(start)
    _, _, tail = rest.partition(END)
    return head + block + tail


def render(page: str) -> str:
    """docs/state-machine.md with its generated block redrawn."""
    return _replace(page, START, generated_block())


def render_runner(page: str) -> str:
    """docs/runner.md with the run machine's generated block redrawn."""
    return _replace(page, RUN_START, run_block())


def main() -> int:
    for path, redraw in ((PAGE, render), (RUN_PAGE, render_runner)):
        path.write_text(redraw(path.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
