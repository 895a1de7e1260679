"""The layering rules hold: data flows one way, and the core stays sans-I/O.

bytes → stream decoding → provider adapters (+ quirk layer) → core → runner / CLI. A module
may import from its own layer or below, never above; importing ``toolstitch`` loads no
event loop, no socket code and no provider SDK.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "toolstitch"

CORE = {
    "_assembler", "_brackets", "_deltas", "_diagnose", "_errors", "_events", "_limits",
    "_machine", "_partial", "_recovery", "_schema", "_tokenizer", "_toolcheck", "_tools",
    "_version",
}  # fmt: skip
DECODING = {"_sse", "_jsonarray"}
PROVIDERS = {"adapters", "_quirks", "_stream_events"}
ENTRY = {"_stitch"}
CONSUMERS = {"runner", "testing", "messages", "cli", "__main__"}
LAYERS = [CORE, DECODING, PROVIDERS, ENTRY, CONSUMERS]


def _layer(module: str) -> int:
    for number, members in enumerate(LAYERS):
        if module in members:
            return number
    raise AssertionError(f"{module} is in no layer: add it to tests/test_layers.py")


def _imports(path: Path) -> set[str]:
    """The toolstitch modules (first component below the package) that ``path`` imports."""
    package = ["toolstitch", *path.parent.relative_to(PACKAGE).parts]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            absolute = [*base, *(node.module or "").split(".")] if node.module else base
            names = [".".join(absolute)]
            if not node.module:  # "from . import x": each x is a module of the package
                names = [".".join([*base, alias.name]) for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "toolstitch" and len(parts) > 1:
                found.add(parts[1])
    return found


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        top = relative.parts[0].removesuffix(".py")
        if top == "__init__":
            continue
        out.append((top, path))
    return out


@pytest.mark.parametrize(("module", "path"), _modules(), ids=lambda value: str(value))
def test_no_module_imports_from_a_layer_above_its_own(module: str, path: Path) -> None:
    own = _layer(module)
    for imported in _imports(path):
        if imported == module:
            continue
        assert _layer(imported) <= own, f"{path.name} ({module}) imports {imported}"


def test_importing_toolstitch_loads_no_io_and_no_sdk() -> None:
    code = (
        "import sys, toolstitch\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "{'asyncio', 'socket', 'ssl', 'openai', 'anthropic', 'google', 'jsonschema', 'httpx'}"
        " or m.startswith(('toolstitch.runner', 'toolstitch.testing'))]\n"
        "print(','.join(sorted(bad)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""
