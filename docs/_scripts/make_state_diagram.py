"""Regenerate the state diagram and transition table in docs/state-machine.md.

Both are drawn from grammars/call-machine.json through the same ``transitions.Machine`` the
library loads, so the picture cannot drift from the code. tests/test_docs.py fails when the
committed page differs from what this script writes.

    python docs/_scripts/make_state_diagram.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from toolstitch.core.machine import DEFINITION, mermaid_diagram

PAGE = Path(__file__).resolve().parents[1] / "state-machine.md"
START = "<!-- generated:start (docs/_scripts/make_state_diagram.py) -->"
END = "<!-- generated:end -->"


def generated_block() -> str:
    rows = ["| trigger | from | to | when |", "|---|---|---|---|"]
    for move in DEFINITION["transitions"]:
        sources = move["source"] if isinstance(move["source"], list) else [move["source"]]
        rows.append(
            f"| `{move['trigger']}` | {', '.join(f'`{s}`' for s in sources)} "
            f"| `{move['dest']}` | {move['when']} |"
        )
    return "\n".join(
        [START, "", "```mermaid", mermaid_diagram().strip(), "```", "", *rows, "", END]
    )


def render(page: str) -> str:
    head, _, rest = page.partition(START)
    _, _, tail = rest.partition(END)
    return head + generated_block() + tail


def main() -> int:
    page = PAGE.read_text(encoding="utf-8")
    PAGE.write_text(render(page), encoding="utf-8")
    print(f"wrote {PAGE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
