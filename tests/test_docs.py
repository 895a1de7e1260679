"""Docs that cannot drift: generated blocks, error tables and the README's commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import toolstitch
from docs_scripts import load_script
from toolstitch.core import machine

ROOT = Path(__file__).resolve().parents[1]


def _load_script(name: str) -> object:
    return load_script(name)


@pytest.mark.once  # a repository-file check (tests/conftest.py)
def test_state_diagram_page_is_generated_from_the_grammar() -> None:
    script = _load_script("make_state_diagram.py")
    page = (ROOT / "docs" / "state-machine.md").read_text(encoding="utf-8")
    assert script.render(page) == page, (  # type: ignore[attr-defined]
        "docs/state-machine.md is stale: run python docs/_scripts/make_state_diagram.py"
    )
    for move in machine.DEFINITION["transitions"]:
        assert f"`{move['trigger']}`" in page


@pytest.mark.once  # a repository-file check (tests/conftest.py)
def test_architecture_page_is_generated_from_the_code() -> None:
    script = _load_script("make_architecture.py")
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert script.render(page) == page, (  # type: ignore[attr-defined]
        "docs/architecture.md is stale: run python docs/_scripts/make_architecture.py"
    )
    for layer in script.layers():  # type: ignore[attr-defined]
        for package in layer:
            assert f"`{package}`" in page


def _error_classes() -> list[type[Exception]]:
    return [
        obj
        for name in toolstitch.__all__
        if isinstance(obj := getattr(toolstitch, name), type)
        and issubclass(obj, (toolstitch.ToolCallError, toolstitch.StreamError))
        and obj not in (toolstitch.ToolCallError, toolstitch.StreamError, toolstitch.UsageError)
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("error", _error_classes(), ids=lambda cls: cls.__name__)
def test_every_error_code_is_in_the_concepts_table(error: type[Exception]) -> None:
    table = (ROOT / "docs" / "concepts.md").read_text(encoding="utf-8")
    code: str = getattr(error, "code")  # noqa: B009  (mypy: not every Exception has it)
    if code == "provider-quirk":
        code = "quirk-…"  # the per-instance quirk codes are listed in docs/quirks.md
    row = re.search(rf"^\| `{error.__name__}` \| `{re.escape(code)}` \|", table, re.MULTILINE)
    assert row is not None, f"{error.__name__} ({code}) missing from docs/concepts.md"


# A line of the drawn tree: the branch art, a class name, then its code in quotes (leaves).
TREE_LINE = re.compile(
    r'^(?P<art>[ │├└─]*)(?P<name>[A-Za-z]\w*)(?:\s+"(?P<code>[^"]+)")?(?P<rest>.*)$'
)


def _public_parent(cls: type) -> type:
    """The nearest base that is not private (``_OffsetError`` is an implementation detail)."""
    return next(base for base in cls.__mro__[1:] if not base.__name__.startswith("_"))


def _check_drawn_under(cls: type, parent: type, match: re.Match[str], exported: set[type]) -> None:
    """One drawn class: under its public parent, its other bases named, a leaf with its code."""
    assert _public_parent(cls) is parent, f"{cls.__name__} is drawn under {parent}"
    # Every other base is named on the line (InvalidDelta: TypeError, ToolCallError).
    for base in cls.__bases__:
        if base is not parent and not base.__name__.startswith("_"):
            assert base.__name__ in match["rest"], f"{cls.__name__}: {base.__name__}"
    if not any(other is not cls and issubclass(other, cls) for other in exported):
        # A leaf shows its code.
        code = getattr(cls, "code")  # noqa: B009  (mypy: not every class has it)
        assert match["code"] == ("quirk-…" if cls is toolstitch.ProviderQuirk else code)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_drawn_exception_tree_is_the_class_tree() -> None:
    script = _load_script("make_api_doc.py")
    tree: str = script.error_tree()  # type: ignore[attr-defined]
    exported = {
        obj
        for name in toolstitch.__all__
        if isinstance(obj := getattr(toolstitch, name), type) and issubclass(obj, BaseException)
    }
    drawn: list[type] = []
    stack: list[tuple[int, type]] = []  # (column of the name, class) of the open branches
    for line in tree.splitlines():
        match = TREE_LINE.match(line)
        assert match is not None, line
        column, name = len(match["art"]), match["name"]
        cls = Exception if name == "Exception" else getattr(toolstitch, name)
        assert (cls is Exception) == (not drawn and not stack), f"{name}: the root is Exception"
        while stack and stack[-1][0] >= column:
            stack.pop()
        if stack:
            _check_drawn_under(cls, stack[-1][1], match, exported)
            drawn.append(cls)
        stack.append((column, cls))
    assert len(drawn) == len(set(drawn))
    assert set(drawn) == exported
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert f"```\n{tree}\n```" in page


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.DOTALL)
    test_commands = [block for block in blocks if "pytest" in block]
    assert len(test_commands) == 1
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_commands[0].strip() in [line.strip() for line in ci]


@pytest.mark.once  # a repository-file check (tests/conftest.py)
def test_api_reference_is_generated_from_the_code() -> None:
    script = _load_script("make_api_doc.py")
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert script.render() == page, (  # type: ignore[attr-defined]
        "docs/api.md is stale: run python docs/_scripts/make_api_doc.py"
    )
    pages: dict[str, str] = script.reference_pages()  # type: ignore[attr-defined]
    on_disk = {
        f"reference/{path.name}": path.read_text(encoding="utf-8")
        for path in (ROOT / "docs" / "reference").glob("*.md")
    }
    assert on_disk == pages, "docs/reference/ is stale: run python docs/_scripts/make_api_doc.py"


def test_the_readme_first_example_prints_what_the_readme_says() -> None:
    """The README's first example runs as written, alone, and prints its ``text`` block."""
    import contextlib
    import io

    section = (ROOT / "README.md").read_text().split("## A first example", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    shown = section.split("```text\n", 1)[1].split("```", 1)[0]
    assert len(code.splitlines()) <= 20
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # the project's own documentation
    assert out.getvalue() == shown
