"""The docs site (mkdocs.yml) builds in strict mode, with every page and the whole API reference.

One build of the real site (a module fixture would build it once per xdist worker, so every
check of the built site is in one test), and two builds of a two-page copy that inherits
the real configuration: intact, and with both a link to a missing page and a link to a
missing API entry. Strict mode must pass the first and fail the second with a warning for
each broken link, so the real build's success means something.
"""

from __future__ import annotations

import html
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import toolstitch
from docs_scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: The site is built from the repository's files, the same on either path: once, on the native
#: pass (tests/conftest.py).
pytestmark = pytest.mark.once


def _api_script() -> ModuleType:
    return load_script("make_api_doc.py")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # the theme's notice about MkDocs 2
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=config.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        check=False,
    )


def _built_page(site: Path, page: Path) -> Path:
    """Where mkdocs writes ``page`` (relative to docs/): ``a/b.md`` -> ``a/b/index.html``."""
    if page.name == "index.md":
        return site / page.parent / "index.html"
    return site / page.with_suffix("") / "index.html"


def _sources() -> list[Path]:
    return sorted(
        path.relative_to(DOCS) for path in DOCS.rglob("*.md") if "_scripts" not in path.parts
    )


def _tables(site: Path, page: str) -> str:
    """The HTML of every table of ``page``, as rendered."""
    text = html.unescape(_built_page(site, Path(page)).read_text(encoding="utf-8"))
    return "".join(re.findall(r"<table>.*?</table>", text, re.DOTALL))


def _problems_of(site: Path) -> list[str]:
    """Everything the built site lacks, in words (an empty list: nothing)."""
    problems = [
        f"{page} was not built" for page in _sources() if not _built_page(site, page).is_file()
    ]
    script = _api_script()
    for module in script.PUBLIC_MODULES:
        page = _built_page(site, Path(script.reference_path(module)))
        text = page.read_text(encoding="utf-8") if page.is_file() else ""
        problems += [
            f"{module}.{name} has no entry in {page.relative_to(site)}"
            for name in script.public_names(module)
            if f'id="{module}.{name}"' not in text
        ]
    for drawn in ("state-machine.md", "runner.md"):
        text = _built_page(site, Path(drawn)).read_text(encoding="utf-8")
        if '<pre class="mermaid"><code>' not in text or "language-mermaid" in text:
            problems.append(f"{drawn}: the state diagram is not a Mermaid drawing")
    performance = _built_page(site, Path("performance.md")).read_text(encoding="utf-8")
    if not (site / "performance.png").is_file() or 'src="../performance.png"' not in performance:
        problems.append("performance.md: the plot is missing")
    quirks = _tables(site, "quirks.md")
    problems += [
        f"quirks.md: {code} is not in a table"
        for code in toolstitch.QUIRK_CODES
        if f"<code>{code}</code>" not in quirks
    ]
    if "<code>malformed-arguments</code>" not in _tables(site, "concepts.md"):
        problems.append("concepts.md: the error codes are not in a table")
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    searched = {doc["location"].split("#")[0] for doc in index["docs"]}
    problems += [
        f"{module}'s reference is not in the search index"
        for module in script.PUBLIC_MODULES
        if f"reference/{module}/" not in searched
    ]
    return problems


def test_the_site_builds_strict_with_every_page_and_the_whole_api_reference(
    tmp_path: Path,
) -> None:
    built = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stdout
    assert "WARNING" not in built.stdout, built.stdout
    assert _problems_of(tmp_path / "site") == []


# A two-page copy of the site: the real configuration (INHERIT), its own docs/ and nav.
COPY_CONFIG = """\
INHERIT: {root}/mkdocs.yml
docs_dir: docs
nav: [index.md, other.md]
"""
#: The broken links, each with the target its warning must name. One build holds both: strict
#: mode reports every warning before it aborts, so each is seen failing on its own line.
BROKEN = {
    "a link to a missing page": ("[gone](gone.md)", "gone.md"),
    "a link to a missing API entry": ("[`Gone`](other.md#toolstitch.Gone)", "toolstitch.Gone"),
}


@pytest.mark.parametrize("broken", [False, True], ids=["intact", "two broken links"])
def test_strict_mode_fails_on_a_broken_link_or_a_missing_reference(
    tmp_path: Path, broken: bool
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(COPY_CONFIG.format(root=ROOT), encoding="utf-8")
    for shared in ("src", "docs/_scripts"):  # the paths mkdocs.yml names, relative to itself
        (tmp_path / shared).symlink_to(ROOT / shared, target_is_directory=True)
    links = " ".join(link for link, _ in BROKEN.values()) if broken else ""
    (tmp_path / "docs" / "index.md").write_text(
        f"# Home\n\nSee [the other page](other.md#toolstitch.Limits). {links}\n", encoding="utf-8"
    )
    (tmp_path / "docs" / "other.md").write_text(
        '# Other\n\n<a id="toolstitch.Limits"></a>Limits.\n', encoding="utf-8"
    )
    built = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    if not broken:
        assert built.returncode == 0, built.stdout
        assert "WARNING" not in built.stdout, built.stdout
        return
    assert built.returncode != 0
    warnings = re.findall(r"^WARNING .*$", built.stdout, re.MULTILINE)
    for what, (_, target) in BROKEN.items():
        assert [w for w in warnings if target in w], (what, built.stdout)
    assert f"Aborted with {len(BROKEN)} warnings in strict mode!" in built.stdout, built.stdout


# Mermaid 11's state-diagram grammar: a state id in a transition line is a word (no "-": a
# hyphenated id is a parse error and the page shows the source instead of the drawing).
TRANSITION = re.compile(r"^\s*(\[\*\]|[A-Za-z_]\w*) --> (\[\*\]|[A-Za-z_]\w*)(: \w+)?$")


@pytest.mark.parametrize("page", ["state-machine.md", "runner.md"])
def test_the_state_diagrams_are_mermaid_that_parses(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```mermaid\n(.*?)\n```", text, re.DOTALL)
    assert len(blocks) == 1
    lines = blocks[0].splitlines()
    assert lines[0] == lines[2] == "---"
    assert re.fullmatch(r'title: "[^"]+"', lines[1]), lines[1]
    moves = [line for line in lines if "-->" in line]
    assert moves
    assert [line for line in moves if not TRANSITION.match(line)] == []


def test_every_public_subpackage_has_a_reference_page() -> None:
    """A new subpackage is internal (its docstring says so), the command, or in the reference."""
    script = _api_script()
    public = set(script.PUBLIC_MODULES)
    for path in sorted((ROOT / "src" / "toolstitch").iterdir()):
        name = path.stem if path.suffix == ".py" else path.name
        if name.startswith("_") or not (path.suffix == ".py" or (path / "__init__.py").is_file()):
            continue
        module = f"toolstitch.{name}"
        doc = importlib.import_module(module).__doc__ or ""
        if module == "toolstitch.cli" or "\nInternal: " in doc:
            assert module not in public, module
        else:
            assert module in public, f"{module}: add it to make_api_doc.PUBLIC_MODULES and the nav"
