"""Load a script of docs/_scripts (they are not a package) as a module, for the docs tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[1] / "docs" / "_scripts"


def load_script(name: str) -> ModuleType:
    """``docs/_scripts/<name>``, executed as a fresh module."""
    path = SCRIPTS / name
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
