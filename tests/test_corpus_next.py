"""Conformance for the newer formats: every recording of ../shared/corpus/formats-next yields its
manifest's calls and text.

The recordings (Bedrock ConverseStream, Cohere v2 chat, Ollama /api/chat) sit beside the clone
with their own manifest. Each is fed through ``stitch`` whole, in small chunks and byte by byte
(a recording the AWS SDK already decoded, one JSON event per line, is fed line by line as
events, the way boto3 hands them over), as events (the lines of a line-framed body; the event
dicts botocore's own decoder makes of an event-stream body) and through
``toolstitch replay --json``. Its calls
must be the manifest's, in position order (id, name, and arguments compared with
``json.loads``), and its text the manifest's. An entry whose API has no adapter yet skips,
saying so.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer

from toolstitch import cli
from toolstitch.adapters import ADAPTERS
from toolstitch.stitch.stitcher import StitchResult, stitch
from toolstitch.vocab.errors import StreamDecodeError

CORPUS = Path(__file__).parents[2] / "shared" / "corpus" / "formats-next"

if not (CORPUS / "manifest.json").is_file():
    pytest.skip(
        f"the formats-next corpus is not at {CORPUS} (it sits beside the clone: "
        "../shared/corpus/formats-next)",
        allow_module_level=True,
    )

MANIFEST: list[dict[str, Any]] = json.loads((CORPUS / "manifest.json").read_text())
ENTRIES = {entry["file"]: entry for entry in MANIFEST}
API_TO_PROVIDER = {
    "bedrock-converse": "bedrock-converse",
    "cohere-chat": "cohere-chat",
    "ollama-chat": "ollama-chat",
}
#: Framings whose lines are whole JSON events (fed as events as well as bytes).
LINE_FRAMINGS = ("json-lines", "ndjson")


def _entry(name: str) -> dict[str, Any]:
    """The manifest entry, or a skip when this branch has no adapter for its API."""
    entry = ENTRIES[name]
    provider = API_TO_PROVIDER.get(entry["api"])
    if provider is None:
        pytest.fail(f"{name}: api {entry['api']!r} has no provider id in API_TO_PROVIDER")
    if provider not in ADAPTERS:
        pytest.skip(f"{name}: no {provider!r} adapter is registered on this branch")
    return entry


def _body(entry: dict[str, Any]) -> bytes:
    return (CORPUS / str(entry["file"])).read_bytes()


def _line_events(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.splitlines() if line.strip()]


def _events(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The recording as the SDK's events: its lines, or what botocore decodes of its frames
    (``{event_type: payload}``, as boto3 gives them)."""
    body = _body(entry)
    if entry["framing"] in LINE_FRAMINGS:
        return _line_events(body)
    if entry["framing"] != "aws-eventstream":
        pytest.skip(f"{entry['file']}: a {entry['framing']} body has no SDK event form here")
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    out = []
    for message in buffer:
        name = message.headers.get(":event-type") or message.headers[":exception-type"]
        out.append({name: json.loads(message.payload)})
    return out


def _bytes_result(entry: dict[str, Any], pieces: list[bytes]) -> StitchResult:
    """``stitch`` over byte pieces. An SDK-decoded recording (JSON lines) is not a wire body:
    while no NDJSON framing reads it as bytes, that case skips."""
    try:
        return stitch(pieces).result
    except StreamDecodeError as exc:
        if entry["framing"] != "json-lines":
            raise
        pytest.skip(f"{entry['file']}: JSON lines are not read as bytes on this branch ({exc})")


def _check(entry: dict[str, Any], result: StitchResult) -> None:
    assert result.provider == API_TO_PROVIDER[entry["api"]]
    expected = sorted(entry["expected_tool_calls"], key=lambda c: c["position"])
    calls = result.calls
    assert [c.name for c in calls] == [c["name"] for c in expected]
    for got, want in zip(calls, expected, strict=True):
        assert got.id == want["id"]
        assert json.loads(got.arguments) == json.loads(want["arguments_json"])
    assert result.discarded == ()
    assert result.stream_error is None
    assert result.text == entry["expected_text"]


def _pieces(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_whole(name: str) -> None:
    entry = _entry(name)
    _check(entry, _bytes_result(entry, [_body(entry)]))


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_small_chunks(name: str) -> None:
    entry = _entry(name)
    _check(entry, _bytes_result(entry, _pieces(_body(entry), 7)))


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_byte_by_byte(name: str) -> None:
    entry = _entry(name)
    _check(entry, _bytes_result(entry, _pieces(_body(entry), 1)))


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_as_events(name: str) -> None:
    entry = _entry(name)
    events = _events(entry)
    _check(entry, stitch(events).result)
    _check(entry, stitch(events, API_TO_PROVIDER[entry["api"]]).result)


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_replay_json(name: str) -> None:
    entry = _entry(name)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(["replay", str(CORPUS / name), "--json"])
    if status != 0 and entry["framing"] == "json-lines":
        pytest.skip(f"{name}: JSON lines are not read as bytes on this branch")
    assert status == 0
    report = json.loads(out.getvalue())
    assert report["provider"] == API_TO_PROVIDER[entry["api"]]
    expected = sorted(entry["expected_tool_calls"], key=lambda c: c["position"])
    assert [(c["id"], c["name"]) for c in report["calls"]] == [
        (c["id"], c["name"]) for c in expected
    ]
    for got, want in zip(report["calls"], expected, strict=True):
        assert json.loads(got["arguments"]) == json.loads(want["arguments_json"])
    assert report["discarded"] == []
    assert report["stream_error"] is None
    assert report["text"] == entry["expected_text"]


def test_the_bedrock_recordings_are_both_read() -> None:
    """Both Bedrock recordings are in the manifest, and this branch reads them (no skip)."""
    bedrock = [e for e in MANIFEST if e["api"] == "bedrock-converse"]
    assert {e["framing"] for e in bedrock} == {"aws-eventstream", "json-lines"}
    for entry in bedrock:
        if entry["framing"] == "aws-eventstream":
            _check(entry, stitch(_body(entry)).result)
        _check(entry, stitch(_events(entry)).result)
