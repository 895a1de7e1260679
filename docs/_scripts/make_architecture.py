"""Regenerate the layer diagram and the layer table in docs/architecture.md.

Both are drawn from the code's own data: the layer order is the ``layers`` contract of
``[tool.importlinter]`` in pyproject.toml (the contract the tests enforce), each layer's
description is the first paragraph of its package docstring, its modules are the files on
disk, and every arrow is an import that really exists (found by grimp, import-linter's own
import-graph builder). tests/test_docs.py fails when the committed page differs
from what this script writes.

    python docs/_scripts/make_architecture.py
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import grimp

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
START = "<!-- generated:start (docs/_scripts/make_architecture.py) -->"
END = "<!-- generated:end -->"


def layers() -> list[list[str]]:
    """The layer contract's layers, top first; each a list of its independent members."""
    config: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            return [[m.strip() for m in layer.split("|")] for layer in contract["layers"]]
    raise LookupError("pyproject.toml has no import-linter layers contract")


def _summary(module: str) -> str:
    doc = importlib.import_module(module).__doc__ or ""
    first = doc.strip().split("\n\n")[0]
    return " ".join(first.split())


def _modules(module: str) -> list[str]:
    path = ROOT / "src" / Path(*module.split("."))
    if path.is_dir():
        return sorted(
            p.stem for p in path.glob("*.py") if p.stem != "__init__" and not p.stem.startswith("_")
        ) + sorted(p.stem for p in path.glob("_*.py") if p.stem != "__init__")
    return []


def _node(module: str) -> str:
    return module.removeprefix("toolstitch.").replace(".", "_")


def diagram(stack: list[list[str]]) -> str:
    graph = grimp.build_graph("toolstitch")
    members = [m for layer in stack for m in layer]
    lines = ["flowchart TB"]
    for number, layer in enumerate(stack):
        lines.append(f'    subgraph L{number}[" "]')
        lines.append("    direction LR")
        for module in layer:
            lines.append(f'        {_node(module)}["{module.removeprefix("toolstitch.")}"]')
        lines.append("    end")
    for importer in members:
        for imported in members:
            if importer != imported and graph.direct_import_exists(
                importer=importer, imported=imported, as_packages=True
            ):
                lines.append(f"    {_node(importer)} --> {_node(imported)}")
    return "\n".join(lines)


def table(stack: list[list[str]]) -> str:
    rows = ["| layer | package | what it is | modules |", "|---:|---|---|---|"]
    depth = len(stack)
    for number, layer in enumerate(stack):
        for module in layer:
            names = ", ".join(f"`{name}`" for name in _modules(module)) or "—"
            rows.append(f"| {depth - number} | `{module}` | {_summary(module)} | {names} |")
    return "\n".join(rows)


def generated_block() -> str:
    stack = layers()
    return "\n".join(
        [
            START,
            "",
            "```mermaid",
            diagram(stack),
            "```",
            "",
            "An arrow is an import that exists in the code; layer 1 is the bottom.",
            "",
            table(stack),
            "",
            END,
        ]
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
