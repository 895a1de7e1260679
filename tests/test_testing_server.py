"""toolstitch.testing: the scripted server, with the real SDK clients over loopback HTTP."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from toolstitch import StitchResult, stitch
from toolstitch.testing import (
    AnthropicScript,
    GeminiScript,
    Hold,
    OpenAIChatScript,
    OpenAIResponsesScript,
    Reply,
    ScriptedServer,
    Sleep,
    cut,
)

if TYPE_CHECKING:
    import anthropic
    import openai
    from google import genai
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import anthropic, genai, openai

FIXTURES = Path(__file__).parent / "fixtures"
OPENAI_FIXTURES = sorted(
    p for p in (FIXTURES / "openai-chat").glob("*.sse") if p.stem != "error-event"
)
ANTHROPIC_FIXTURES = sorted(
    p for p in (FIXTURES / "anthropic").glob("*.sse") if p.stem != "error-event"
)
RESPONSES_FIXTURES = sorted(
    p for p in (FIXTURES / "openai-responses").glob("*.sse") if p.stem != "error-event"
)
# The SDK reads Gemini's SSE only (one JSON object per data line), and raises on errors.
GEMINI_FIXTURES = sorted(
    p
    for p in (FIXTURES / "gemini").glob("*.sse")
    if p.stem not in {"error-object", "json-array-body"}
)


def arun(coro: Any) -> Any:
    async def main() -> Any:
        return await asyncio.wait_for(coro, 30)

    return asyncio.run(main())


def summary(result: StitchResult) -> tuple[object, ...]:
    return (
        [(c.id, c.name, c.arguments) for c in result.calls],
        [(d.id, d.name, d.error.code) for d in result.discarded],
        result.text,
        result.finish_reason,
    )


@pytest.mark.parametrize("path", OPENAI_FIXTURES, ids=lambda p: p.stem)
def test_recorded_openai_streams_replay_through_the_sdk(path: Path) -> None:
    async def main() -> list[Any]:
        async with (
            ScriptedServer([Reply.sse(path)]) as server,
            openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test") as client,
        ):
            stream = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            async with stream:
                return [chunk async for chunk in stream]

    chunks = arun(main())
    direct = stitch(path.read_bytes()).result
    assert summary(stitch(chunks, "openai-chat").result) == summary(direct)


@pytest.mark.parametrize("path", ANTHROPIC_FIXTURES, ids=lambda p: p.stem)
def test_recorded_anthropic_streams_replay_through_the_sdk(path: Path) -> None:
    async def main() -> list[Any]:
        async with (
            ScriptedServer([Reply.sse(path, event_names=True)]) as server,
            anthropic.AsyncAnthropic(base_url=server.anthropic_base_url, api_key="test") as client,
        ):
            stream = await client.messages.create(
                model="m",
                max_tokens=10,
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
            )
            async with stream:
                return [event async for event in stream]

    events = arun(main())
    direct = stitch(path.read_bytes()).result
    assert summary(stitch(events, "anthropic").result) == summary(direct)


@pytest.mark.parametrize("path", RESPONSES_FIXTURES, ids=lambda p: p.stem)
def test_recorded_responses_streams_replay_through_the_sdk(path: Path) -> None:
    async def main() -> list[Any]:
        async with (
            ScriptedServer([Reply.sse(path, event_names=True)]) as server,
            openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test") as client,
        ):
            stream = await client.responses.create(model="m", input="hi", stream=True)
            async with stream:
                return [event async for event in stream]

    events = arun(main())
    direct = stitch(path.read_bytes(), "openai-responses").result
    assert summary(stitch(events, "openai-responses").result) == summary(direct)


@pytest.mark.parametrize("path", GEMINI_FIXTURES, ids=lambda p: p.stem)
def test_recorded_gemini_streams_replay_through_the_sdk(path: Path) -> None:
    async def main() -> list[Any]:
        async with ScriptedServer([Reply.sse(path)]) as server:
            client = genai.Client(api_key="test", http_options={"base_url": server.gemini_base_url})
            stream = await client.aio.models.generate_content_stream(model="m", contents="hi")
            return [chunk async for chunk in stream]

    chunks = arun(main())
    direct = stitch(path.read_bytes(), "gemini").result
    assert summary(stitch(chunks, "gemini").result) == summary(direct)


def responses_script() -> OpenAIResponsesScript:
    return (
        OpenAIResponsesScript()
        .reasoning("rs_1", ["Look it up."], encrypted_content="gAAAA-enc")
        .text("Looking.", pieces=2)
        .call("call_1", "lookup", '{"q": "paris"}', pieces=3)
        .finish(input_tokens=3, output_tokens=4)
    )


def gemini_script() -> GeminiScript:
    return (
        GeminiScript()
        .thought("Look it up.", signature="c2lnLTE=")
        .text("Looking.", pieces=2)
        .call("lookup", {"q": "paris"}, signature="c2lnLTI=")
        .finish(prompt_tokens=3, candidates_tokens=4)
    )


def test_responses_script_streams_through_the_sdk() -> None:
    async def main() -> list[Any]:
        async with (
            ScriptedServer([responses_script().reply()]) as server,
            openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test") as client,
        ):
            stream = await client.responses.create(model="m", input="hi", stream=True)
            async with stream:
                return [event async for event in stream]

    events = arun(main())
    assert [e.sequence_number for e in events] == list(range(len(events)))
    result = stitch(events, "openai-responses").result
    assert [(c.id, c.name, c.arguments) for c in result.calls] == [
        ("call_1", "lookup", '{"q": "paris"}')
    ]
    assert result.text == "Looking."
    assert [(b.id, b.summary, b.signature) for b in result.reasoning_blocks] == [
        ("rs_1", ("Look it up.",), "gAAAA-enc")
    ]
    assert result.finish_reason == "completed"
    assert events[-1].response.usage.output_tokens == 4


def test_gemini_script_streams_through_the_sdk() -> None:
    async def main() -> tuple[list[Any], ScriptedServer]:
        async with ScriptedServer([gemini_script().reply()]) as server:
            client = genai.Client(api_key="test", http_options={"base_url": server.gemini_base_url})
            stream = await client.aio.models.generate_content_stream(model="gm", contents="hi")
            return [chunk async for chunk in stream], server

    chunks, server = arun(main())
    result = stitch(chunks, "gemini").result
    assert [(c.name, c.parsed_arguments, c.signature) for c in result.calls] == [
        ("lookup", {"q": "paris"}, "c2lnLTI=")
    ]
    assert result.text == "Looking."
    assert [(b.text, b.signature) for b in result.reasoning_blocks] == [("Look it up.", "c2lnLTE=")]
    assert result.finish_reason == "STOP"
    assert server.requests[0].path.endswith("/models/gm:streamGenerateContent")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_responses_and_gemini_non_streamed_requests_get_json() -> None:
    async def main() -> tuple[Any, Any]:
        async with ScriptedServer([responses_script().reply(), gemini_script().reply()]) as server:
            async with openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k") as oc:
                response = await oc.responses.create(model="m", input="hi")
            client = genai.Client(api_key="k", http_options={"base_url": server.gemini_base_url})
            content = await client.aio.models.generate_content(model="gm", contents="hi")
            return response, content

    response, content = arun(main())
    assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]
    assert response.output[0].encrypted_content == "gAAAA-enc"
    assert response.output_text == "Looking."
    assert response.output[2].arguments == '{"q": "paris"}'
    parts = content.candidates[0].content.parts
    assert [p.thought for p in parts] == [True, None, None, None]
    assert content.function_calls[0].args == {"q": "paris"}
    assert parts[3].thought_signature == b"sig-2"
    assert content.usage_metadata.candidates_token_count == 4


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_hold_keeps_the_stream_open_until_the_event_is_set() -> None:
    order: list[str] = []
    release = asyncio.Event()
    reply = (
        OpenAIChatScript()
        .text("first")
        .hold(release, label="until released")
        .text("second")
        .finish()
        .reply()
    )

    async def main() -> ScriptedServer:
        async with (
            ScriptedServer([reply]) as server,
            openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test") as client,
        ):
            stream = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            async with stream:
                async for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content:
                        order.append(chunk.choices[0].delta.content)
                        if chunk.choices[0].delta.content == "first":
                            order.append("set")
                            release.set()
            return server

    server = arun(main())
    assert order == ["first", "set", "second"]
    texts = [text for _, text in server.log]
    assert texts.index("reply 1: until released: waiting") < texts.index(
        "reply 1: until released: released"
    )
    assert server.timeouts == []


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_hold_timeout_is_recorded_and_the_reply_goes_on() -> None:
    never = threading.Event()
    reply = Reply.sse(
        'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
        'data: {"choices":[{"index":0,"delta":{"content":"b"}}]}\n\n'
        "data: [DONE]\n\n",
        holds={1: Hold(never, timeout=0.05, label="never"), 2: Sleep(0)},
    )

    async def main() -> tuple[ScriptedServer, str]:
        async with (
            ScriptedServer([reply]) as server,
            openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test") as client,
        ):
            stream = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            text = ""
            async with stream:
                async for chunk in stream:
                    text += chunk.choices[0].delta.content or ""
            return server, text

    server, text = arun(main())
    assert text == "ab"
    assert server.timeouts == ["never"]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_requests_are_recorded_and_non_streamed_requests_get_json() -> None:
    openai_reply = (
        OpenAIChatScript().text("Calling.").call("c1", "f", '{"a": 1}').finish("tool_calls")
    ).usage(3, 4)
    anthropic_reply = AnthropicScript(input_tokens=5).text("Hi").call("t1", "f", '{"a": 1}')
    anthropic_reply.finish("tool_use", output_tokens=6)

    async def main() -> tuple[Any, Any, ScriptedServer]:
        async with ScriptedServer([openai_reply.reply(), anthropic_reply.reply()]) as server:
            async with openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k") as oc:
                completion = await oc.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}]
                )
            async with anthropic.AsyncAnthropic(
                base_url=server.anthropic_base_url, api_key="k"
            ) as ac:
                message = await ac.messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
                )
            return completion, message, server

    completion, message, server = arun(main())
    assert completion.choices[0].message.content == "Calling."
    assert completion.choices[0].message.tool_calls[0].function.arguments == '{"a": 1}'
    assert completion.usage.completion_tokens == 4
    assert message.content[1].input == {"a": 1}
    assert message.usage.output_tokens == 6
    assert [(r.method, r.path) for r in server.requests] == [
        ("POST", "/v1/chat/completions"),
        ("POST", "/v1/messages"),
    ]
    assert server.requests[0].json["messages"] == [{"role": "user", "content": "hi"}]
    headers = server.requests[1].headers
    assert "k" in (
        headers.get("x-api-key"),
        headers.get("authorization", "").removeprefix("Bearer "),
    )


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_thread_mode_with_the_sync_client_and_error_statuses() -> None:
    reply = OpenAIChatScript().text("hello").finish().reply()
    server = ScriptedServer([reply], max_requests=2)
    with (
        server,
        openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0) as client,
    ):
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        with stream:
            text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        with pytest.raises(openai.InternalServerError, match="no reply left"):
            client.chat.completions.create(model="m", messages=[])
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="m", messages=[])
    assert text == "hello"
    assert len(server.requests) == 2


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_raw_http_unknown_route_and_chunked_body() -> None:
    async def request(port: int, head: bytes, body: bytes) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head + body)
        await writer.drain()
        data = await reader.read()
        writer.close()
        await writer.wait_closed()
        return data

    async def main() -> tuple[bytes, bytes, ScriptedServer]:
        async with ScriptedServer([Reply.json({"ok": True})]) as server:
            missing = await request(server.port, b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n", b"")
            unrouted = await request(
                server.port, b"POST /v1beta/models/m:countTokens HTTP/1.1\r\nHost: x\r\n\r\n", b""
            )
            assert unrouted.startswith(b"HTTP/1.1 404")
            chunked = await request(
                server.port,
                b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
                b'5\r\n{"a":\r\n3\r\n 1}\r\n0\r\n\r\n',
            )
            return missing, chunked, server

    missing, chunked, server = arun(main())
    assert missing.startswith(b"HTTP/1.1 404")
    assert chunked.startswith(b"HTTP/1.1 200")
    assert chunked.endswith(b'{"ok": true}')
    assert server.requests[2].json == {"a": 1}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_cut() -> None:
    assert cut("abcdefg", 3) == ["abc", "de", "fg"]
    assert cut("ab", 5) == ["a", "b"]
    assert cut("", 2) == [""]
