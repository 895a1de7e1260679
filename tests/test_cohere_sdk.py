"""The ``cohere`` SDK's own stream objects: ``ClientV2.chat_stream`` over an in-process HTTP
transport that answers with a recorded body gives ``stitch`` exactly what the body's bytes give.

The SDK parses the SSE itself and yields its pydantic event models (``ToolCallStart…``,
``ToolPlanDelta…``, ``MessageEnd…``); toolstitch reads them by duck typing, never importing
the SDK. The reference is the same body fed as bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from toolstitch import StitchResult, stitch

cohere = pytest.importorskip("cohere")

FIXTURES = Path(__file__).parent / "fixtures" / "cohere-chat"
CORPUS = Path(__file__).parents[2] / "shared" / "corpus" / "formats-next"
BODIES = sorted(FIXTURES.glob("*.sse")) + sorted(CORPUS.glob("cohere-*.sse"))


def sdk_events(body: bytes) -> list[Any]:
    """The events the real SDK yields for a response whose body is ``body``."""

    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v2/chat"
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    with httpx.Client(transport=httpx.MockTransport(answer)) as http:
        client = cohere.ClientV2(api_key="test", base_url="http://cohere.test", httpx_client=http)
        stream = client.chat_stream(model="command-r", messages=[{"role": "user", "content": "hi"}])
        return list(stream)


def outcome(result: StitchResult) -> tuple[object, ...]:
    return (
        result.provider,
        [(c.index, c.id, c.name, c.arguments) for c in result.calls],
        [(d.index, d.error.code) for d in result.discarded],
        result.text,
        result.reasoning,
        [(b.kind, b.text) for b in result.reasoning_blocks],
        result.finish_reason,
        result.usage,
        None if result.stream_error is None else result.stream_error.code,
    )


@pytest.mark.parametrize("path", BODIES, ids=lambda p: p.name)
def test_the_sdk_objects_give_what_the_bytes_give(path: Path) -> None:
    body = path.read_bytes()
    events = sdk_events(body)
    assert events
    assert all(type(e).__module__.startswith("cohere.") for e in events)
    from_sdk = stitch(events).result
    from_bytes = stitch(body).result
    assert outcome(from_sdk) == outcome(from_bytes)
    assert from_sdk.provider == "cohere-chat"
