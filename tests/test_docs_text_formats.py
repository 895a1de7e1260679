"""docs/text-formats.md cannot drift: its generated parts are the data's, and every text it
marks as an example yields, read as its format, exactly what the page says it yields.

An example on the page is an HTML comment ``<!-- example: FORMAT [OPTIONS] -->`` (OPTIONS a
JSON object: ``primed_reasoning``, ``tools`` naming a tool set of the page), then a ``text``
code block (the model's output, byte for byte), then a ``json`` block: what ``stitch(...,
text_format=FORMAT)`` yields (``calls``, ``text``, ``reasoning``, ``discarded``,
``warnings``; an absent key is empty). A tool set is ``<!-- example-tools: NAME -->`` before a
``json`` block.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from docs_scripts import load_script
from toolstitch import TEXT_FORMATS, StitchResult, stitch
from toolstitch.stitch.textcalls import PROVIDER_TEXT_INDEX
from toolstitch.text.formats import CODES
from toolstitch.text.headers import MAX_HEADER_CHARS
from toolstitch.text.reader import MAX_STRAY_WARNINGS

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "text-formats.md"
EXAMPLE = re.compile(r"^<!-- example: (?P<format>\S+)(?: (?P<options>\{.*\}))? -->$")
TOOLS = re.compile(r"^<!-- example-tools: (?P<name>\S+) -->$")
FENCE = re.compile(r"^(?P<ticks>`{3,})(?P<lang>\w*)$")
#: The keys of a yields block.
KEYS = {"calls", "text", "reasoning", "discarded", "warnings"}


@dataclass(frozen=True)
class Example:
    line: int  # 1-based line of the marker
    format: str
    options: dict[str, Any]
    text: str
    expected: dict[str, Any]


def _fence(lines: list[str], start: int, lang: str) -> tuple[str, int]:
    """The code block whose fence is the first after line ``start`` (0-based): its text and
    the index past its closing fence; it must be a ``lang`` block."""
    n = start + 1
    while n < len(lines) and not FENCE.match(lines[n]):
        n += 1
    opening = FENCE.match(lines[n]) if n < len(lines) else None
    assert opening is not None, f"docs/text-formats.md:{start + 1}: no code block follows"
    assert opening["lang"] == lang, f"docs/text-formats.md:{n + 1}: a {lang} block expected"
    close = n + 1
    while lines[close] != opening["ticks"]:
        close += 1
    return "\n".join(lines[n + 1 : close]), close + 1


def _page() -> tuple[list[Example], dict[str, Any]]:
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    examples: list[Example] = []
    tool_sets: dict[str, Any] = {}
    for n, line in enumerate(lines):
        if found := TOOLS.match(line):
            tool_sets[found["name"]] = json.loads(_fence(lines, n, "json")[0])
        elif found := EXAMPLE.match(line):
            text, after = _fence(lines, n, "text")
            expected = json.loads(_fence(lines, after - 1, "json")[0])
            options = json.loads(found["options"] or "{}")
            examples.append(Example(n + 1, found["format"], options, text, expected))
    return examples, tool_sets


EXAMPLES, TOOL_SETS = _page()


def _read(example: Example, chunks: list[str]) -> StitchResult:
    options = dict(example.options)
    if "tools" in options:
        options["tools"] = TOOL_SETS[options["tools"]]
    return stitch(chunks, text_format=example.format, **options).collect()


def _nth(items: list[Any], k: int, empty: Any) -> Any:
    return items[k] if k < len(items) else empty


def _yields(result: StitchResult, expected: dict[str, Any]) -> dict[str, Any]:
    """What ``result`` shows of what ``expected`` describes, in its terms."""
    calls = []
    for k, call in enumerate(result.calls):
        seen = {"name": call.name, "arguments": call.parsed_arguments}
        if "id" in _nth(expected.get("calls", []), k, {}):
            seen["id"] = call.id
        calls.append(seen)
    discarded = []
    for k, event in enumerate(result.discarded):
        want = _nth(expected.get("discarded", []), k, {})
        discarded.append({key: getattr(event.error, key) for key in {"code", *want}})
    warnings = []
    for k, warning in enumerate(result.warnings):
        variant = re.fullmatch(
            r"\S+ \((?P<variant>[^)]+)\)", _nth(expected.get("warnings", []), k, "")
        )
        named = variant is not None and f"'{variant['variant']}'" in warning.error.message
        warnings.append(variant[0] if variant is not None and named else warning.error.code)
    return {
        "calls": calls,
        "text": result.text,
        "reasoning": result.reasoning,
        "discarded": discarded,
        "warnings": warnings,
    }


def _id(example: Example) -> str:
    return f"{example.format}:{example.line}"


@pytest.mark.parametrize("example", EXAMPLES, ids=_id)
def test_each_example_yields_what_the_page_says(example: Example) -> None:
    assert set(example.expected) <= KEYS, example.expected
    assert example.format in TEXT_FORMATS, f"{example.format}: use a canonical name"
    want = {
        key: example.expected.get(key, "" if key in ("text", "reasoning") else []) for key in KEYS
    }
    assert _yields(_read(example, [example.text]), example.expected) == want


@pytest.mark.parametrize("example", EXAMPLES, ids=_id)
def test_each_example_yields_the_same_one_character_at_a_time(example: Example) -> None:
    whole = _yields(_read(example, [example.text]), example.expected)
    assert _yields(_read(example, list(example.text)), example.expected) == whole


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_format_has_an_example_and_the_examples_use_the_page_tools() -> None:
    assert {e.format for e in EXAMPLES} == set(TEXT_FORMATS)
    named = {e.options["tools"] for e in EXAMPLES if "tools" in e.options}
    assert named <= set(TOOL_SETS)


@pytest.mark.once  # a repository-file check (tests/conftest.py)
def test_the_page_is_generated_from_the_formats_and_the_cases() -> None:
    script = load_script("make_text_formats.py")
    page = PAGE.read_text(encoding="utf-8")
    assert script.render(page) == page, (
        "docs/text-formats.md is stale: run python docs/_scripts/make_text_formats.py"
    )
    for fmt in TEXT_FORMATS.values():
        assert f"{{ #{script.anchor(fmt.name)} }}" in page, f"{fmt.name} has no section"
        for variant in fmt.variants:
            assert f"- `{variant}`:" in page


@pytest.mark.once  # a repository-file check (tests/conftest.py)
def test_a_page_without_a_formats_region_is_refused() -> None:
    script = load_script("make_text_formats.py")
    page = PAGE.read_text(encoding="utf-8")
    start = "<!-- generated:start (docs/_scripts/make_text_formats.py) format=hermes -->"
    with pytest.raises(ValueError, match="format=hermes"):
        script.render(page.replace(start, ""))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_warnings_and_bounds_are_the_codes() -> None:
    page = PAGE.read_text(encoding="utf-8")
    warnings = page[page.index("### Warnings") : page.index("### Bounds")]
    for code in CODES:
        assert re.search(rf"^\| `{code}` \|", warnings, re.MULTILINE), code
    bounds = page[page.index("### Bounds") : page.index("## The formats, one by one")]
    assert f"{MAX_HEADER_CHARS:,} characters" in bounds
    assert f"| {MAX_STRAY_WARNINGS} per stream |" in bounds
    assert f"numbered from {PROVIDER_TEXT_INDEX}" in page
