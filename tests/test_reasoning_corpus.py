"""Real recorded reasoning streams become a ``message()`` whose wire form carries every
signature and id byte for byte.

The expected values are read from the raw recording here, independently of toolstitch
(``json.loads`` of its ``data:`` lines), and compared with what ``to_anthropic``,
``to_gemini`` and ``to_openai_responses`` write from ``StitchResult.message()``, for the
body fed whole, line by line and byte by byte. The recordings sit in ``../shared/corpus``,
beside the clone; without them this module skips, saying where it looked.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chunks import byte_by_byte
from toolstitch import stitch
from toolstitch.messages import AssistantMessage, to_anthropic, to_gemini, to_openai_responses

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"

if not (CORPUS / "manifest.json").is_file():
    print(f"test_reasoning_corpus: skipped, no shared corpus at {CORPUS} (../shared/corpus)")
    pytest.skip(
        f"the shared corpus is not at {CORPUS} (it sits beside the clone: ../shared/corpus)",
        allow_module_level=True,
    )

CHUNKINGS: dict[str, Callable[[bytes], list[bytes]]] = {
    "whole": lambda body: [body],
    "lines": lambda body: body.splitlines(keepends=True),
    "bytes": byte_by_byte,
}


def _events(name: str) -> list[dict[str, Any]]:
    """The recording's events, read with nothing but ``json.loads``."""
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    return [
        json.loads(line[len("data:") :])
        for line in lines
        if line.startswith("data:") and line[len("data:") :].strip() not in ("", "[DONE]")
    ]


def _message(name: str, chunking: str) -> AssistantMessage:
    body = (CORPUS / name).read_bytes()
    result = stitch(CHUNKINGS[chunking](body)).result
    assert result.stream_error is None
    assert not result.discarded
    return result.message()


# -- Gemini 3 -------------------------------------------------------------------------------

GEMINI = ["gemini-stream-3-pro-no-args-thought-signature.sse", "gemini-stream-3-pro-call-ids.sse"]


def _gemini_parts(name: str) -> list[dict[str, Any]]:
    """Every part of the recording that carries something to send back: a functionCall, a
    thought, text, or a signature (Gemini's closing ``{"text": ""}`` carries nothing)."""
    parts: list[dict[str, Any]] = []
    for event in _events(name):
        for candidate in event.get("candidates", []):
            for part in candidate.get("content", {}).get("parts", []):
                if "functionCall" in part or part.get("text") or "thoughtSignature" in part:
                    parts.append(part)
    return parts


@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
@pytest.mark.parametrize("name", GEMINI)
def test_gemini_3_signatures_and_ids_go_back_byte_for_byte(name: str, chunking: str) -> None:
    raw = _gemini_parts(name)
    assert any("thoughtSignature" in part for part in raw)  # the recording is what we think
    _, contents = to_gemini([_message(name, chunking)])
    (turn,) = contents
    assert turn["role"] == "model"
    written = turn["parts"]
    assert len(written) == len(raw)
    for sent, received in zip(written, raw, strict=True):
        assert sent.get("thoughtSignature") == received.get("thoughtSignature")
        if "functionCall" in received:
            call = received["functionCall"]
            assert sent["functionCall"]["name"] == call["name"]
            assert sent["functionCall"]["args"] == call.get("args", {})
            assert sent["functionCall"].get("id") == call.get("id")


# -- Anthropic extended thinking ------------------------------------------------------------

ANTHROPIC = "anthropic-messages-thinking-then-tool-use.sse"


def _anthropic_blocks(name: str) -> list[dict[str, Any]]:
    """The recording's content blocks by index: thinking text and signature joined from
    their deltas, tool_use ids and names from their starts."""
    blocks: dict[int, dict[str, Any]] = {}
    for event in _events(name):
        if event.get("type") == "content_block_start":
            block = dict(event["content_block"])
            blocks[event["index"]] = block
        elif event.get("type") == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            if delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] += delta["signature"]
    return [blocks[index] for index in sorted(blocks)]


@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
def test_claude_thinking_goes_back_signed_before_its_tool_use(chunking: str) -> None:
    raw = _anthropic_blocks(ANTHROPIC)
    assert [b["type"] for b in raw] == ["thinking", "tool_use"]
    assert raw[0]["signature"]
    _, messages = to_anthropic([_message(ANTHROPIC, chunking)])
    (turn,) = messages
    thinking, tool_use = turn["content"]
    assert thinking == {
        "type": "thinking",
        "thinking": raw[0]["thinking"],
        "signature": raw[0]["signature"],
    }
    assert (tool_use["type"], tool_use["id"], tool_use["name"]) == (
        "tool_use",
        raw[1]["id"],
        raw[1]["name"],
    )


# -- OpenAI Responses reasoning -------------------------------------------------------------

RESPONSES = [
    "openai-responses-reasoning-summary-then-call.sse",
    "openai-responses-gpt-5-reasoning-then-call.sse",
]


def _responses_items(name: str) -> list[dict[str, Any]]:
    """The recording's finished output items (``response.output_item.done``), in order."""
    return [
        event["item"]
        for event in _events(name)
        if event.get("type") == "response.output_item.done"
        and event["item"]["type"] in ("reasoning", "function_call")
    ]


@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
@pytest.mark.parametrize("name", RESPONSES)
def test_responses_reasoning_item_goes_back_before_its_call(name: str, chunking: str) -> None:
    raw = _responses_items(name)
    assert [item["type"] for item in raw] == ["reasoning", "function_call"]
    reasoning, call = raw
    items = to_openai_responses([_message(name, chunking)])
    assert [item["type"] for item in items] == ["reasoning", "function_call"]
    sent_reasoning, sent_call = items
    assert sent_reasoning["id"] == reasoning["id"]
    assert sent_reasoning.get("encrypted_content") == reasoning.get("encrypted_content")
    assert sent_reasoning["summary"] == [
        {"type": "summary_text", "text": part["text"]} for part in reasoning["summary"]
    ]
    assert (sent_call["call_id"], sent_call["name"]) == (call["call_id"], call["name"])
    assert json.loads(sent_call["arguments"]) == json.loads(call["arguments"])
