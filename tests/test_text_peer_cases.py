"""The peers' public test cases for tool calls in model text, run as our own fixtures.

``tests/text_cases/<peer>/*.json`` hold the cases ported from vLLM, SGLang, Ollama and
llama.cpp (their schema and the text rule: ``tests/text_cases/README.md``). Each case is run
through ``toolstitch.stitch(..., text_format=...)`` under several chunkings, and every chunking
must give the case's calls, text, reasoning and discarded codes, and the same result as the
whole text. The schema test checks the files themselves (and that every format has a case), so
it holds whatever the engine does.

Theory of operation: a case's ``text`` is cut as whole, 1, 4 and 7 characters at a time, by
three random cuttings seeded with the case's id (reproducible), and by the peer's own deltas
when the case gives ``chunks``. Each run is reduced to an ``Outcome`` (calls as name, parsed
arguments and id; text; reasoning; discarded codes; warning codes); the case's expectations
are checked on each outcome, then every outcome is compared with the whole text's.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import toolstitch

CASES_DIR = Path(__file__).parent / "text_cases"

#: The canonical format names (docs/text-formats.md; the peers' parser names are aliases).
FORMATS = (
    "hermes",
    "qwen3-coder",
    "mistral",
    "llama3-json",
    "pythonic",
    "deepseek-v3",
    "deepseek-v3.1",
    "deepseek-v3.2",
    "kimi-k2",
    "glm-4.5",
    "glm-4.7",
    "minimax-m2",
    "harmony",
    "granite",
    "seed-oss",
    "gemma4",
    "phi4-mini",
)
PEERS = ("vllm", "sglang", "ollama", "llamacpp")
REQUIRED: dict[str, type] = {"id": str, "format": str, "source": str, "text": str, "calls": list}
OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "tools": list,
    "primed_reasoning": bool,
    "text_out": str,
    "text_exact": bool,
    "reasoning": str,
    "discarded": list,
    "warnings": list,
    "chunks": list,
    "peer": (str, dict, list),
    "differs": str,
    "note": str,
}
CALL_KEYS = {"name", "arguments", "id"}
RANDOM_CUTTINGS = 3


def case_files() -> list[Path]:
    return sorted(CASES_DIR.glob("**/*.json"))


def load_cases() -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for path in case_files():
        cases = json.loads(path.read_text(encoding="utf-8"))
        out += [(path, case) for case in cases] if isinstance(cases, list) else [(path, {})]
    return out


ALL_CASES = load_cases()


def good_call(call: object) -> bool:
    return (
        isinstance(call, dict)
        and {"name", "arguments"} <= call.keys() <= CALL_KEYS
        and isinstance(call["name"], str)
        and isinstance(call["arguments"], dict)
        and isinstance(call.get("id", ""), str)
    )


def schema_problems(case: dict[str, Any]) -> list[str]:
    """What is wrong with one case, per the README's schema (empty when nothing is)."""
    problems = [f"missing {key!r}" for key in REQUIRED if key not in case]
    for key, value in case.items():
        expected = REQUIRED.get(key) or OPTIONAL.get(key)
        if expected is None:
            problems.append(f"unknown key {key!r}")
        elif not isinstance(value, expected):
            problems.append(f"{key!r} is {type(value).__name__}")
    if problems:
        return problems
    if case["format"] not in FORMATS:
        problems.append(f"unknown format {case['format']!r}")
    if not case["id"].startswith(tuple(f"{peer}-" for peer in PEERS)):
        problems.append("the id does not start with its peer")
    if not case["text"]:
        problems.append("empty text")
    for call in case["calls"]:
        if not good_call(call):
            problems.append(f"bad call {call!r}")
    for key in ("discarded", "warnings", "chunks"):
        if not all(isinstance(item, str) for item in case.get(key, [])):
            problems.append(f"{key!r} holds a non-string")
    if "chunks" in case and "".join(case["chunks"]) != case["text"]:
        problems.append("the chunks do not add up to the text")
    if "peer" in case and "differs" not in case:
        problems.append("'peer' without 'differs'")
    if "tools" in case:
        names = {tool.get("function", {}).get("name") for tool in case["tools"]}
        if None in names:
            problems.append("a tool without function.name")
    return problems


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_case_file_is_a_list_of_valid_cases() -> None:
    assert case_files(), f"no case files under {CASES_DIR}"
    for path in case_files():
        data = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(data, list), f"{path}: not a list of cases"
        assert data, f"{path}: no cases"
        assert path.parent.name in PEERS, f"{path}: not in a peer's directory"
    problems = {
        f"{path.relative_to(CASES_DIR)}: {case.get('id')}": found
        for path, case in ALL_CASES
        if (found := schema_problems(case))
    }
    assert not problems, problems


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_case_ids_are_unique() -> None:
    ids = [case.get("id") for _, case in ALL_CASES]
    assert sorted({i for i in ids if ids.count(i) > 1}, key=str) == []


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_every_format_has_a_case() -> None:
    covered = {case.get("format") for _, case in ALL_CASES}
    assert [name for name in FORMATS if name not in covered] == []


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_schema_check_finds_problems() -> None:
    good = {"id": "vllm-x", "format": "hermes", "source": "s", "text": "t", "calls": []}
    assert schema_problems(good) == []
    assert schema_problems({**good, "format": "qwen3_coder"}) == ["unknown format 'qwen3_coder'"]
    assert schema_problems({**good, "peer": "p"}) == ["'peer' without 'differs'"]
    assert schema_problems({**good, "chunks": ["x"]}) == ["the chunks do not add up to the text"]
    assert schema_problems({**good, "color": 1}) == ["unknown key 'color'"]
    assert schema_problems({**good, "calls": [{"name": "f"}]}) == ["bad call {'name': 'f'}"]


@dataclass(frozen=True)
class Outcome:
    """One run's result, reduced to what the cases assert."""

    calls: tuple[tuple[str, Any, str | None], ...]
    text: str
    reasoning: str
    discarded: tuple[str, ...]
    warnings: tuple[str, ...]


def run(case: dict[str, Any], chunks: list[str]) -> Outcome:
    options: dict[str, Any] = {
        "text_format": case["format"],
        "tools": case.get("tools"),
        "primed_reasoning": case.get("primed_reasoning", False),
    }
    result = toolstitch.stitch(iter(chunks), **options).collect()
    return Outcome(
        calls=tuple((c.name, c.parsed_arguments, c.id) for c in result.calls),
        text=result.text,
        reasoning=result.reasoning,
        discarded=tuple(d.error.code for d in result.discarded),
        warnings=tuple(str(getattr(w.error, "code", w.error)) for w in result.warnings),
    )


def cuttings(case: dict[str, Any]) -> dict[str, list[str]]:
    """The chunkings a case is run under, by name."""
    text: str = case["text"]
    out = {"whole": [text]}
    for size in (1, 4, 7):
        out[f"{size}-char"] = [text[i : i + size] for i in range(0, len(text), size)]
    for n in range(RANDOM_CUTTINGS):
        rng = random.Random(f"{case['id']}/{n}")
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 12))))
        out[f"random-{n}"] = [
            text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)
        ]
    if "chunks" in case:
        out["peer-chunks"] = list(case["chunks"])
    return out


def same_text(got: str, want: str, exact: bool) -> bool:
    return got == want if exact else got.strip() == want.strip()


def expectation_problems(case: dict[str, Any], outcome: Outcome) -> list[str]:
    """How ``outcome`` differs from what the case expects (empty when it does not)."""
    problems = []
    want_calls = case["calls"]
    got = [(name, args) for name, args, _ in outcome.calls]
    want = [(call["name"], call["arguments"]) for call in want_calls]
    if got != want:
        problems.append(f"calls {got!r} != {want!r}")
    for index, call in enumerate(want_calls[: len(outcome.calls)]):
        if "id" in call and outcome.calls[index][2] != call["id"]:
            problems.append(f"call {index} id {outcome.calls[index][2]!r} != {call['id']!r}")
    exact = case.get("text_exact", False)
    if not same_text(outcome.text, case.get("text_out", ""), exact):
        problems.append(f"text {outcome.text!r} != {case.get('text_out', '')!r}")
    if not same_text(outcome.reasoning, case.get("reasoning", ""), exact):
        problems.append(f"reasoning {outcome.reasoning!r} != {case.get('reasoning', '')!r}")
    if list(outcome.discarded) != case.get("discarded", []):
        problems.append(f"discarded {list(outcome.discarded)!r} != {case.get('discarded', [])!r}")
    missing = [code for code in case.get("warnings", []) if code not in outcome.warnings]
    if missing:
        problems.append(f"warnings {missing!r} missing from {list(outcome.warnings)!r}")
    return problems


def comparable(case: dict[str, Any], outcome: Outcome) -> Outcome:
    """``outcome`` as chunkings must agree on it: the ids dropped unless the format carries
    them (the case gives one), and the warning codes as a set (a warning about stray text
    may come once per piece of it)."""
    calls = outcome.calls
    if not any("id" in call for call in case["calls"]):
        calls = tuple((name, args, None) for name, args, _ in calls)
    warnings = tuple(sorted(set(outcome.warnings)))
    return Outcome(calls, outcome.text, outcome.reasoning, outcome.discarded, warnings)


@pytest.mark.parametrize(
    "case",
    [pytest.param(case, id=str(case.get("id"))) for _, case in ALL_CASES],
)
def test_peer_case(case: dict[str, Any]) -> None:
    outcomes = {name: run(case, chunks) for name, chunks in cuttings(case).items()}
    problems = {
        name: found
        for name, outcome in outcomes.items()
        if (found := expectation_problems(case, outcome))
    }
    assert not problems, f"{case['source']}: {problems}"
    whole = comparable(case, outcomes["whole"])
    differ = {
        name: outcome for name, outcome in outcomes.items() if comparable(case, outcome) != whole
    }
    assert not differ, f"not the whole text's result {whole!r}: {differ!r}"
