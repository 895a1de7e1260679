"""The formats-next corpus (../shared/corpus/formats-next) for the focused adapter tests: an
entry of its manifest, its body, and the check that a result gives exactly its calls."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from toolstitch import cli
from toolstitch.stitch.stitcher import StitchResult

CORPUS = Path(__file__).parents[2] / "shared" / "corpus" / "formats-next"


def entry(name: str) -> dict[str, Any]:
    """The manifest entry of ``name``; the test is skipped when the corpus is not there."""
    manifest = CORPUS / "manifest.json"
    if not manifest.is_file():
        pytest.skip(f"the formats-next corpus is not at {CORPUS}")
    found: dict[str, Any] = next(e for e in json.loads(manifest.read_text()) if e["file"] == name)
    return found


def body(item: dict[str, Any]) -> bytes:
    return (CORPUS / str(item["file"])).read_bytes()


def calls_of(result: StitchResult) -> list[tuple[int, str | None, str | None, object]]:
    return [(c.index, c.id, c.name, json.loads(c.arguments)) for c in result.calls]


def expected_calls(item: dict[str, Any]) -> list[tuple[int, str | None, str | None, object]]:
    return [
        (c["index"], c["id"], c["name"], json.loads(c["arguments_json"]))
        for c in item["expected_tool_calls"]
    ]


def replay_json(item: dict[str, Any]) -> dict[str, Any]:
    """``toolstitch replay FILE --json`` of the entry's file, as a dict."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(["replay", str(CORPUS / str(item["file"])), "--json"])
    report: dict[str, Any] = json.loads(out.getvalue())
    # 1 when a call was discarded or the stream failed (docs/cli.md)
    assert status == (1 if report["discarded"] or report["stream_error"] else 0)
    return report


def report_calls(report: dict[str, Any]) -> list[tuple[int, str | None, str | None, object]]:
    return [(c["index"], c["id"], c["name"], json.loads(c["arguments"])) for c in report["calls"]]


def check_replay(item: dict[str, Any], provider: str) -> dict[str, Any]:
    """``toolstitch replay --json`` of the entry gives its provider, its calls and its text."""
    report = replay_json(item)
    assert report["provider"] == provider
    assert report_calls(report) == expected_calls(item)
    assert report["text"] == item["expected_text"]
    return report
