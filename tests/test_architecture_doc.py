"""docs/architecture.md cannot drift: its layer diagram and table are generated from the
import-linter contract, the package docstrings and the real import graph."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_architecture_page_is_generated_from_the_code() -> None:
    path = ROOT / "docs" / "_scripts" / "make_architecture.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert script.render(page) == page, (
        "docs/architecture.md is stale: run python docs/_scripts/make_architecture.py"
    )
    for layer in script.layers():
        for package in layer:
            assert f"`{package}`" in page
