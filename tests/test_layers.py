"""The layering rules hold: data flows one way, and the core stays sans-I/O.

bytes → stream decoding → provider adapters → core → front door → runner / CLI. The order is
the ``[tool.importlinter]`` contract in pyproject.toml (docs/architecture.md draws it); this
test runs import-linter on it, and checks that importing ``toolstitch`` loads no event loop,
no socket code and no provider SDK.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.once  # a repository-file check (tests/conftest.py)
def test_the_import_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


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
