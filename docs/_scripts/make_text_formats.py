"""Regenerate the generated parts of docs/text-formats.md from the formats and the test cases.

* the table of the text formats (``toolstitch.TEXT_FORMATS``: name, aliases, models, what the
  model writes, reasoning markers, opt-in);
* in each format's section, its declared variants and its states with their markers;
* the count of the ported peer cases (tests/text_cases) and of the ``differs`` notes, by
  reason.

Theory of operation
-------------------
The page has marked regions, ``<!-- generated:start (docs/_scripts/make_text_formats.py)
KEY -->`` … ``<!-- generated:end -->``, KEY being ``table``, ``format=NAME`` or
``differences``; everything else on the page is written by hand. ``render(page)`` rewrites
the inside of every region from the data and refuses a page that lacks a region (a format
without a section) or has one the data does not know. tests/test_docs_text_formats.py fails
when the committed page differs from what this script writes.

A ``differs`` note is free text; its reason is the first of ``REASONS`` whose pattern
matches it (the order matters: the narrower policies first, so that a note about a call
opener in reasoning that also mentions a stray close tag is counted under the former).

    python docs/_scripts/make_text_formats.py
"""

from __future__ import annotations

import html
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from toolstitch import TEXT_FORMATS
from toolstitch.text.formats import State, TextFormat

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "text-formats.md"
CASES = ROOT / "tests" / "text_cases"
SCRIPT = "docs/_scripts/make_text_formats.py"
START = re.compile(r"<!-- generated:start \(docs/_scripts/make_text_formats\.py\) (?P<key>\S+) -->")
END = "<!-- generated:end -->"

#: The peers whose cases are ported, in the order the page lists them.
PEERS: Final = {"vllm": "vLLM", "sglang": "SGLang", "ollama": "Ollama", "llamacpp": "llama.cpp"}

#: The reasons of the ``differs`` notes: key, what the page says, a pattern of the note.
REASONS: Final = (
    (
        "marker-in-string",
        "a JSON body never ends at a marker inside a JSON string",
        r"marker inside a JSON string",
    ),
    (
        "call-in-reasoning",
        "a call opener inside reasoning ends the reasoning",
        r"opener inside reasoning|call opener",
    ),
    (
        "close-tag",
        "a raw value ends at the first close tag",
        r"(first|own|their) close tag",
    ),
    (
        "variant",
        "a tolerated variant is read as the format's documented form, with a warning",
        r"\(variant\)",
    ),
    (
        "malformed",
        "a body that is not valid is discarded with its error (an event); its siblings stand; "
        "nothing is guessed",
        r"not valid|broken call|must be a JSON object|no repair|not guessed|without a name|"
        r"names no function|not a call header",
    ),
    (
        "truncated",
        "a call cut by the end of the output is discarded, never dispatched nor shown as text",
        r"cut by the end of the output|truncated",
    ),
    (
        "typed",
        "raw values are strings unless the tool's schema types them (then JSON, else a Python "
        "literal, else a string the schema check refuses)",
        r"raw values are strings|typed raw value|typed value|string=\"(true|false)\"|"
        r"not the integer the schema",
    ),
    (
        "unknown-tool",
        "with tools=, a call to an undeclared tool is discarded (unknown-tool); without, every "
        "well-formed call is a call",
        r"unknown-tool|undeclared tool|tool not in the list|no name check",
    ),
    (
        "marker-less",
        "marker-less reading is opt-in, and only where a call may start",
        r"marker-less|marked by <tool_call>",
    ),
    (
        "markup",
        "markup is never text: stray close tags and text inside a call section are dropped",
        r"markup is|stray|never content",
    ),
    (
        "text-kept",
        "text before, between and after calls, and inside raw values, is kept as written",
        r"text (before|between|after|around)|kept as text|kept as written|whitespace inside|"
        r"newlines?|indentation|final channel",
    ),
    (
        "reasoning",
        "every format reads its reasoning markers, primed or not",
        r"reasoning|think>",
    ),
    (
        "ready",
        "a call is ready at the byte that closes its arguments",
        r"ready when its arguments close",
    ),
    (
        "zero",
        "a zero-argument call is {}",
        r"zero-argument|name-only",
    ),
)


# -- markdown ----------------------------------------------------------------------------------


def code(text: str) -> str:
    """``text`` as an inline code span (a newline shown as ``\\n``), whatever it holds."""
    shown = text.replace("\n", "\\n")
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def prose(text: str) -> str:
    """``text`` as plain text in a table cell: markup shown, never read as HTML or links."""
    escaped = html.escape(text, quote=False)
    return re.sub(r"([\\`*_\[\]|])", r"\\\1", escaped)


def anchor(name: str) -> str:
    """The id of a format's section (its heading sets it: ``{ #NAME }``)."""
    return name


# -- the table ---------------------------------------------------------------------------------


def _entry(fmt: TextFormat, state: State) -> str:
    """How a reasoning state is entered: the markers that lead to it (through a lead state,
    with the lead's marker), or the header rule that routes to it."""
    found: list[str] = []
    for other in fmt.states.values():
        if other.kind in ("reasoning", "body", "header") or other is state:
            continue
        for marker, move in other.moves.items():
            target = fmt.states[move.to]
            if target is state and other.kind != "lead":
                found.append(code(marker))
            elif target.kind == "lead" and target.otherwise == state.name:
                leads = " or ".join(code(m) for m in target.moves)
                found.append(f"{code(marker)} (then {leads})")
    if found:
        return " or ".join(dict.fromkeys(found))
    rules = [s.rule for s in fmt.states.values() if s.kind == "header" and s.rule]
    return f"the {code(state.name)} channel (the {code(rules[0])} header)" if rules else "—"


def _exits(fmt: TextFormat, state: State) -> list[str]:
    """The markers that end a reasoning state and go back to text (not into a call)."""
    return [
        code(marker)
        for marker, move in state.moves.items()
        if fmt.states[move.to].kind in ("content", "header") and move.variant is None
    ]


def reasoning_markers(fmt: TextFormat) -> str:
    """The table's reasoning cell: how each reasoning state is entered and left."""
    cells = []
    for state in fmt.states.values():
        if state.kind != "reasoning":
            continue
        exits = _exits(fmt, state)
        cells.append(_entry(fmt, state) + (f" … {' or '.join(exits)}" if exits else ""))
    if not cells:
        return "—"
    primed = "; may be primed" if fmt.primed is not None else ""
    return "; ".join(dict.fromkeys(cells)) + primed


def _natural(name: str) -> list[tuple[str, int]]:
    """A sort key that puts ``deepseek-v3`` before ``deepseek-v3.1`` and ``glm-4.5``."""
    return [(text, int(number or 0)) for text, number in re.findall(r"(\D*)(\d*)", name)]


def formats() -> list[TextFormat]:
    """The formats in the order the page lists them (by name, numbers as numbers)."""
    return sorted(TEXT_FORMATS.values(), key=lambda fmt: _natural(fmt.name))


def table() -> str:
    rows = [
        "| format | aliases | models | what the model writes | reasoning | opt-in |",
        "|---|---|---|---|---|---|",
    ]
    for fmt in formats():
        aliases = ", ".join(code(a) for a in fmt.aliases if a != fmt.name) or "—"
        cells = [
            f"[{code(fmt.name)}](#{anchor(fmt.name)})",
            aliases,
            prose(fmt.models),
            prose(fmt.summary),
            reasoning_markers(fmt),
            "**yes**" if fmt.opt_in else "no",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    names = ", ".join(code(fmt.name) for fmt in formats())
    return "\n".join(
        [
            f"{len(TEXT_FORMATS)} formats, from `toolstitch.TEXT_FORMATS` "
            "(`grammars/text-formats/*.json`): "
            f"{names}. `text_format=` takes the name or an alias.",
            "",
            *rows,
        ]
    )


# -- a format's section ------------------------------------------------------------------------


def _option(key: str, value: Any) -> str:
    if value is True:
        return key
    if value is False:
        return f"no {key}"
    if isinstance(value, str):
        return f"{key} {code(value)}"
    if isinstance(value, list):
        return f"{key} " + ", ".join(code(str(v)) for v in value)
    return f"{key} {code(json.dumps(value))}"


def _move(marker: str, fmt: TextFormat, state: State) -> str:
    move = state.moves[marker]
    notes = []
    if move.keep:
        notes.append("read again there")
    if move.call is not None:
        notes.append(f"call {'starts' if move.call == 'start' else 'ends'}")
    if move.variant is not None:
        notes.append(f"variant {code(move.variant)}")
    tail = f" ({', '.join(notes)})" if notes else ""
    return f"{code(marker)} → {code(move.to)}{tail}"


_KIND: Final = {
    "content": "text",
    "reasoning": "reasoning",
    "skip": "markup (whitespace dropped, anything else a stray)",
    "lead": "the first character that is not whitespace",
}


def state_line(fmt: TextFormat, state: State) -> str:
    """One state, compactly: its kind, its markers and where they lead."""
    if state.kind == "body":
        options = "; ".join(_option(k, v) for k, v in state.options.items())
        described = f"body {code(state.grammar or '')}" + (f" ({options})" if options else "")
        return f"- {code(state.name)}: {described}, then {code(state.then or '')}"
    if state.kind == "header":
        kind = f"header read by the {code(state.rule or '')} rule"
    else:
        kind = _KIND[state.kind]
    moves = " · ".join(_move(m, fmt, state) for m in state.moves)
    otherwise = f" · else {code(state.otherwise)}" if state.otherwise else ""
    return f"- {code(state.name)}: {kind}: {moves}{otherwise}"


def format_block(fmt: TextFormat) -> str:
    start = f"starts in {code(fmt.start)}"
    if fmt.primed is not None:
        start += f", in {code(fmt.primed)} with `primed_reasoning=True`"
    lines = ["Declared variants (each reported once per stream, `quirk-text-variant`):", ""]
    if fmt.variants:
        lines += [f"- {code(name)}: {prose(text)}" for name, text in fmt.variants.items()]
    else:
        lines.append("- none")
    lines += ["", f"States ({start}):", ""]
    lines += [state_line(fmt, state) for state in fmt.states.values()]
    return "\n".join(lines)


# -- the peers' cases --------------------------------------------------------------------------


def cases() -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every ported case, with its peer (its directory)."""
    for path in sorted(CASES.glob("*/*.json")):
        for case in json.loads(path.read_text(encoding="utf-8")):
            yield path.parent.name, case


def reason(note: str) -> str:
    """The key of the reason of a ``differs`` note (``"other"`` if none matches)."""
    for key, _, pattern in REASONS:
        if re.search(pattern, note, re.IGNORECASE):
            return key
    return "other"


def differences() -> str:
    ported: Counter[str] = Counter()
    differing: dict[str, Counter[str]] = {key: Counter() for key, _, _ in REASONS}
    differing["other"] = Counter()
    others: list[tuple[str, str]] = []
    for peer, case in cases():
        ported[peer] += 1
        note = case.get("differs")
        if note is None:
            continue
        key = reason(note)
        differing[key][peer] += 1
        if key == "other":
            others.append((case["id"], note))
    total = sum(sum(c.values()) for c in differing.values())
    by_peer = ", ".join(f"{label} {ported[peer]}" for peer, label in PEERS.items())
    labels = {key: label for key, label, _ in REASONS} | {"other": "other (listed below)"}
    rows = [
        "| our policy | cases | " + " | ".join(PEERS.values()) + " |",
        "|---|---:|" + "---:|" * len(PEERS),
    ]
    ordered = sorted(
        differing.items(), key=lambda item: (item[0] == "other", -sum(item[1].values()))
    )
    for key, counts in ordered:
        if counts:
            cells = [str(counts[peer]) for peer in PEERS]
            rows.append(
                f"| {prose(labels[key])} | {sum(counts.values())} | " + " | ".join(cells) + " |"
            )
    lines = [
        f"{sum(ported.values())} cases ported ({by_peer}); in {total} of them our result differs "
        "from what the peer's test expects, each with a `differs` note saying why. By reason:",
        "",
        *rows,
    ]
    if others:
        lines += ["", "The others:", ""]
        lines += [f"- {code(case_id)}: {prose(note)}" for case_id, note in others]
    return "\n".join(lines)


# -- the page ----------------------------------------------------------------------------------


def block(key: str) -> str:
    """The generated text of region ``key``."""
    if key == "table":
        return table()
    if key == "differences":
        return differences()
    if key.startswith("format=") and key[len("format=") :] in TEXT_FORMATS:
        return format_block(TEXT_FORMATS[key[len("format=") :]])
    raise ValueError(f"docs/text-formats.md: a generated region of unknown key {key!r}")


def keys() -> list[str]:
    """The keys of the regions the page must have."""
    return ["table", *(f"format={name}" for name in TEXT_FORMATS), "differences"]


def render(page: str) -> str:
    """``page`` with every generated region rewritten (``ValueError`` if one is missing)."""
    out: list[str] = []
    seen: list[str] = []
    at = 0
    for found in START.finditer(page):
        key = found["key"]
        end = page.find(END, found.end())
        if end < 0:
            raise ValueError(f"docs/text-formats.md: region {key!r} has no end marker")
        out += [page[at : found.end()], "\n\n", block(key), "\n\n"]
        at = end
        seen.append(key)
    out.append(page[at:])
    missing = [key for key in keys() if key not in seen]
    if missing:
        raise ValueError(
            f"docs/text-formats.md lacks the generated regions {missing}: add a section with "
            f"'<!-- generated:start ({SCRIPT}) KEY -->' and '{END}' for each"
        )
    return "".join(out)


def main() -> int:
    page = PAGE.read_text(encoding="utf-8")
    PAGE.write_text(render(page), encoding="utf-8")
    print(f"wrote {PAGE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
