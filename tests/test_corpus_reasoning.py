"""Reasoning blocks from real recordings carry the provider's signatures and ids byte for byte.

The expected values are read straight from the raw files (``json.loads`` of each ``data:``
line), independently of toolstitch's decoders and adapters; every stream is also fed line
by line and byte by byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolstitch.stitch.stitcher import stitch
from toolstitch.vocab.stream_events import ReasoningBlock

CORPUS = Path(__file__).parents[2] / "shared" / "corpus"

if not (CORPUS / "manifest.json").is_file():
    pytest.skip("the shared corpus is not beside the clone", allow_module_level=True)


def _data(name: str) -> list[dict[str, Any]]:
    out = []
    for line in (CORPUS / name).read_bytes().decode("utf-8").splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            out.append(json.loads(line[5:]))
    return out


def _blocks(body: bytes) -> list[list[ReasoningBlock]]:
    """The ``ReasoningBlock`` events of ``body`` fed whole, by line and by byte."""
    feeds: list[object] = [
        body,
        body.splitlines(keepends=True),
        [body[i : i + 1] for i in range(len(body))],
    ]
    return [[e for e in stitch(feed) if isinstance(e, ReasoningBlock)] for feed in feeds]


def test_anthropic_thinking_signature_byte_for_byte() -> None:
    name = "anthropic-messages-thinking-then-tool-use.sse"
    deltas = [e["delta"] for e in _data(name) if e.get("type") == "content_block_delta"]
    signature = "".join(d["signature"] for d in deltas if d.get("type") == "signature_delta")
    thinking = "".join(d["thinking"] for d in deltas if d.get("type") == "thinking_delta")
    assert signature
    assert thinking
    expected = [ReasoningBlock(text=thinking, signature=signature, kind="thinking")]
    for blocks in _blocks((CORPUS / name).read_bytes()):
        assert blocks == expected
        assert (blocks[0].signature or "").encode() == signature.encode()


@pytest.mark.parametrize(
    "name",
    [
        "openai-responses-gpt-5-reasoning-then-call.sse",
        "openai-responses-reasoning-summary-then-call.sse",
    ],
)
def test_responses_reasoning_item_id_and_encrypted_content_byte_for_byte(name: str) -> None:
    items = [
        e["item"]
        for e in _data(name)
        if e.get("type") == "response.output_item.done" and e["item"].get("type") == "reasoning"
    ]
    assert items
    expected = [
        ReasoningBlock(
            id=item["id"],
            summary=tuple(p["text"] for p in item.get("summary", [])),
            text="".join(p["text"] for p in item.get("content") or []),
            signature=item.get("encrypted_content"),
            kind="reasoning",
        )
        for item in items
    ]
    for blocks in _blocks((CORPUS / name).read_bytes()):
        assert blocks == expected
    if name.startswith("openai-responses-reasoning-summary"):
        assert all(block.signature for block in expected)  # the encrypted content is there
        assert all(block.summary for block in expected)
