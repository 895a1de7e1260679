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

import sys
from collections.abc import Mapping
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


def _block(definition: Mapping[str, Any], title: str, start: str) -> str:
    rows = ["| trigger | from | to | when |", "|---|---|---|---|"]
    for move in definition["transitions"]:
        sources = move["source"] if isinstance(move["source"], list) else [move["source"]]
        rows.append(
            f"| `{move['trigger']}` | {', '.join(f'`{s}`' for s in sources)} "
            f"| `{move['dest']}` | {move['when']} |"
        )
    diagram = mermaid_diagram(definition, title=title).strip()
    return "\n".join([start, "", "```mermaid", diagram, "```", "", *rows, "", END])


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
