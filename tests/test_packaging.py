"""The distribution as users get it: the sdist and the wheel build, pass ``twine check
--strict``, carry the licence, the machine declarations, the examples and ``py.typed``, and
the wheel is an ``abi3`` wheel with the C extension when a compiler is there - and still
builds, on pure Python, when none is (docs/release.md).

The builds run once per session, without build isolation (the test group has ``build``,
``setuptools`` and ``twine``), from the checkout the tests run in; outside a checkout (no
``setup.py`` beside ``tests/``) the module skips.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.skipif(
        not (ROOT / "setup.py").is_file() or not (ROOT / "pyproject.toml").is_file(),
        reason="not run from a checkout of toolstitch (no setup.py beside tests/)",
    ),
    # Building the distribution is the same on either path: once, on the native pass
    # (tests/conftest.py).
    pytest.mark.once,
]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _built(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An sdist, and the wheel built from that sdist (``python -m build``'s default)."""
    out = tmp_path_factory.mktemp("dist")
    _built(_run("-m", "build", "--no-isolation", "--outdir", str(out), "."))
    return out


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_twine_check_strict_passes_for_the_sdist_and_the_wheel(dist: Path) -> None:
    files = sorted(str(path) for path in dist.iterdir())
    result = _built(_run("-m", "twine", "check", "--strict", *files))
    assert result.stdout.count("PASSED") == 2, result.stdout


def test_the_wheel_carries_the_licence_data_files_and_the_stable_abi_extension(
    dist: Path,
) -> None:
    wheel = _one(dist, "*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(
            next(name for name in names if name.endswith(".dist-info/METADATA"))
        )
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    for data in (
        "toolstitch/py.typed",
        "toolstitch/grammars/call-machine.json",
        "toolstitch/grammars/run-machine.json",
        "toolstitch/examples/parallel-calls-one-malformed.sse",
    ):
        assert data in names
    assert not [name for name in names if name.startswith("toolstitch/_c/")]  # sources stay out
    # One wheel per platform for every Python from 3.10 on: the stable ABI.
    assert "-cp310-abi3-" in wheel.name
    assert "toolstitch/_native.abi3.so" in names or "toolstitch/_native.pyd" in names
    text = metadata.decode()
    assert "License-Expression: MIT" in text
    for label in ("Documentation", "Changelog", "Issues"):
        assert f"Project-URL: {label}, " in text
    # Development tools are dependency groups, not extras users see.
    extras = {
        line.partition(": ")[2] for line in text.splitlines() if line.startswith("Provides-Extra:")
    }
    assert not extras & {"test", "bench", "lint", "docs"}, extras
    assert {"cli", "testing", "otel"} <= extras


def test_the_sdist_carries_the_licence_and_the_c_sources(dist: Path) -> None:
    sdist = _one(dist, "*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    top = names[0].split("/")[0]
    for member in ("LICENSE", "setup.py", "pyproject.toml", "src/toolstitch/_c/module.c"):
        assert f"{top}/{member}" in names
    assert any(name.startswith(f"{top}/tests/") for name in names)


def test_without_a_c_compiler_the_sdist_still_builds_a_pure_python_wheel(
    dist: Path, tmp_path: Path
) -> None:
    # A compiler that always fails stands for a machine without one; the sdist is built in a
    # fresh folder, so nothing compiled earlier can slip in.
    result = _built(
        _run(
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-cache-dir",
            "--verbose",  # pip shows the backend's output (the fallback's message) only then
            "--wheel-dir",
            str(tmp_path),
            str(_one(dist, "*.tar.gz")),
            env={"CC": "false", "TOOLSTITCH_BUILD_NATIVE": "auto"},
        )
    )
    with zipfile.ZipFile(_one(tmp_path, "*.whl")) as archive:
        names = archive.namelist()
    assert not [name for name in names if "_native" in name]
    assert "toolstitch/grammars/call-machine.json" in names
    assert "will run on pure Python" in result.stdout + result.stderr
