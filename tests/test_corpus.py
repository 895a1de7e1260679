"""Conformance: every real recorded stream of ../shared/corpus yields exactly its manifest.

The corpus sits beside the clone (``<parent>/shared/corpus``), on developers' machines and in
CI alike. Each stream goes through ``toolstitch replay --json`` (the public contract) and
through ``stitch`` fed whole, line by line and byte by byte; each must give exactly the
manifest's client calls (arguments compared with ``json.loads``), its truncated call as a
discarded call with the raw text, its server tool calls, its in-stream error and its text.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from toolstitch import cli
from toolstitch.stitch.stitcher import StitchResult, stitch
from toolstitch.vocab.errors import ProviderError

CORPUS = Path(__file__).parents[2] / "shared" / "corpus"

if not (CORPUS / "manifest.json").is_file():
    pytest.skip(
        f"the shared corpus is not at {CORPUS} (it sits beside the clone: ../shared/corpus)",
        allow_module_level=True,
    )

MANIFEST: list[dict[str, Any]] = json.loads((CORPUS / "manifest.json").read_text())
ENTRIES = {entry["file"]: entry for entry in MANIFEST}
API_TO_PROVIDER = {
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
    "anthropic-messages": "anthropic",
    "gemini": "gemini",
}


def _body(entry: dict[str, Any]) -> bytes:
    return (CORPUS / str(entry["file"])).read_bytes()


def _replay_json(path: Path, *extra: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(["replay", str(path), "--json", *extra])
    report: dict[str, Any] = json.loads(out.getvalue())
    # 1 when a call was discarded or the stream failed (docs/cli.md)
    assert status == (1 if report["discarded"] or report["stream_error"] else 0)
    return report


def _check_report(entry: dict[str, Any], report: dict[str, Any]) -> None:
    assert report["provider"] == API_TO_PROVIDER[entry["api"]]
    expected = [c for c in entry["expected_tool_calls"] if not c.get("truncated")]
    truncated = [c for c in entry["expected_tool_calls"] if c.get("truncated")]
    _check_calls(report["calls"], expected)
    assert [(d["index"], d["id"], d["name"], d["arguments"]) for d in report["discarded"]] == [
        (c["index"], c["id"], c["name"], c["arguments_json"]) for c in truncated
    ]
    assert all(d["code"] == "truncated-arguments" for d in report["discarded"])
    _check_server_calls(report["server_calls"], entry.get("expected_server_tool_calls", []))
    _check_stream_error(report["stream_error"], entry)
    assert report["text"] == entry["expected_text"]


def _check_calls(calls: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    """The ready calls: the manifest's names, indices and arguments; ids given or generated."""
    assert [c["name"] for c in calls] == [c["name"] for c in expected]
    used_ids: set[str] = set()
    for got, want in zip(calls, expected, strict=True):
        assert got["index"] == want["index"]
        assert json.loads(got["arguments"]) == json.loads(want["arguments_json"])
        if want["id"] is not None:
            assert got["id"] == want["id"]
        else:
            # Generated: unique per position, never the function name alone.
            assert got["id"]
            assert got["id"] != got["name"]
        assert got["id"] not in used_ids
        used_ids.add(got["id"])


def _check_server_calls(got: list[dict[str, Any]], servers: list[dict[str, Any]]) -> None:
    """The provider's server tool calls: the manifest's, with the same arguments."""
    assert [(s["index"], s["id"], s["name"], s["type"]) for s in got] == [
        (s["index"], s["id"], s["name"], s["type"]) for s in servers
    ]
    for got_s, want_s in zip(got, servers, strict=True):
        assert json.loads(got_s["arguments"]) == json.loads(want_s["arguments_json"])


def _check_stream_error(error: dict[str, Any] | None, entry: dict[str, Any]) -> None:
    """A provider error where the manifest expects one (its code in the message), else none."""
    if "expected_error" in entry:
        assert error is not None
        assert error["code"] == "provider-error"
        assert entry["expected_error"]["code"] in error["message"]
    else:
        assert error is None


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_replay_json_matches_manifest(name: str) -> None:
    entry = ENTRIES[name]
    _check_report(entry, _replay_json(CORPUS / name))


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_replay_with_named_provider_matches_auto(name: str) -> None:
    entry = ENTRIES[name]
    named = _replay_json(CORPUS / name, "--provider", API_TO_PROVIDER[entry["api"]])
    assert named == _replay_json(CORPUS / name)


def _summary(result: StitchResult) -> tuple[object, ...]:
    return (
        result.provider,
        result.calls,
        [(d.index, d.id, d.name, d.arguments, d.error.code) for d in result.discarded],
        [(w.error.code, w.error.message) for w in result.warnings],
        result.server_calls,
        None if result.stream_error is None else result.stream_error.message,
        result.text,
        result.reasoning,
        result.finish_reason,
        result.usage,
    )


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_any_chunking_gives_the_same_result(name: str) -> None:
    body = _body(ENTRIES[name])
    whole = _summary(stitch(body).result)
    assert _summary(stitch(body.splitlines(keepends=True)).result) == whole
    assert _summary(stitch([body[i : i + 1] for i in range(len(body))]).result) == whole
    assert _summary(stitch(body[i : i + 7] for i in range(0, len(body), 7)).result) == whole


def test_the_error_stream_surfaces_the_provider_error() -> None:
    entry = next(e for e in MANIFEST if "expected_error" in e)
    result = stitch(_body(entry)).result
    assert isinstance(result.stream_error, ProviderError)
    assert result.stream_error.kind == entry["expected_error"]["code"]
    payload = result.stream_error.payload
    assert isinstance(payload, dict)
    assert payload["type"] == entry["expected_error"]["type"]
    assert payload["status_code"] == entry["expected_error"]["status_code"]
    assert result.calls == ()


def test_totals() -> None:
    """The corpus as the README describes it: 54 streams, 76 expected calls."""
    assert len(MANIFEST) == 54
    assert sum(len(e["expected_tool_calls"]) for e in MANIFEST) == 76
    per_api = Counter(e["api"] for e in MANIFEST)
    assert per_api == {
        "openai-chat": 25,
        "anthropic-messages": 10,
        "gemini": 10,
        "openai-responses": 9,
    }
    produced = 0
    for entry in MANIFEST:
        result = stitch(_body(entry)).result
        produced += len(result.calls) + len(result.discarded)
    assert produced == 76
