"""The runner's SDK models, two turns deep, with the real SDK clients over loopback HTTP.

Each case streams a tool round (reasoning, then a call) from ``ScriptedServer`` through the
model and a ``Stitcher``, appends ``StitchResult.message()`` and the tool's result to the
history, streams the final answer, and checks what the *second* request carried back: the
Chat ``reasoning_content`` (``include_reasoning=True``), the Responses reasoning item with
its ``encrypted_content``, Gemini's ``thoughtSignature``s and position-paired responses,
Anthropic's signed thinking block - byte for byte. Every case
runs with the SDK's async client and with its sync one (streamed in a worker thread).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from toolstitch import Stitcher, StitchResult, TextDelta
from toolstitch.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    Reasoning,
    TextPart,
    ToolResult,
    UserMessage,
)
from toolstitch.runner import (
    AnthropicModel,
    GeminiModel,
    Model,
    OpenAIChatModel,
    OpenAIResponsesModel,
    Tool,
    ToolRunner,
)
from toolstitch.runner._history import write_history
from toolstitch.runner._models import ENCRYPTED_REASONING, is_sync_client
from toolstitch.testing import (
    AnthropicScript,
    GeminiScript,
    OpenAIChatScript,
    OpenAIResponsesScript,
    Reply,
    ScriptedServer,
)

if TYPE_CHECKING:
    import anthropic
    import openai
    from google import genai
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import anthropic, genai, openai

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
QUESTION = "Weather in Paris?"
ANSWER = "18 °C in Paris."
ENCRYPTED = "gAAAAABo-opaque+reasoning/state=="
GEMINI_SIGNATURES = ("Cv4BAXLI2nx0aGluaw==", "EpwICpkIAXLI2nxjYWxs")
CLAUDE_SIGNATURE = "EqQBCkYIBxgCKkDsigned/thinking+block=="


def weather(city: str) -> str:
    return f"18 °C in {city}"


TOOLS = [Tool("get_weather", weather, CITY, description="Current weather.")]


def arun(coro: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await asyncio.wait_for(coro, 30)

    return asyncio.run(main())


ModelFactory = Callable[[ScriptedServer, bool], AbstractAsyncContextManager[Model]]


@asynccontextmanager
async def chat_model(server: ScriptedServer, sync: bool) -> AsyncIterator[Model]:
    options: dict[str, Any] = {"base_url": server.openai_base_url, "api_key": "t"}
    if sync:
        with openai.OpenAI(**options, max_retries=0) as client:
            yield OpenAIChatModel(client, "deepseek-test", include_reasoning=True)
    else:
        async with openai.AsyncOpenAI(**options, max_retries=0) as aclient:
            yield OpenAIChatModel(aclient, "deepseek-test", include_reasoning=True)


@asynccontextmanager
async def responses_model(server: ScriptedServer, sync: bool) -> AsyncIterator[Model]:
    options: dict[str, Any] = {"base_url": server.openai_base_url, "api_key": "t"}
    if sync:
        with openai.OpenAI(**options, max_retries=0) as client:
            yield OpenAIResponsesModel(client, "gpt-test", store=False)
    else:
        async with openai.AsyncOpenAI(**options, max_retries=0) as aclient:
            yield OpenAIResponsesModel(aclient, "gpt-test", store=False)


@asynccontextmanager
async def gemini_model(server: ScriptedServer, sync: bool) -> AsyncIterator[Model]:
    client = genai.Client(api_key="t", http_options={"base_url": server.gemini_base_url})
    try:
        yield GeminiModel(client if sync else client.aio, "gemini-test")
    finally:
        await client.aio.aclose()
        client.close()


@asynccontextmanager
async def anthropic_model(server: ScriptedServer, sync: bool) -> AsyncIterator[Model]:
    options: dict[str, Any] = {"base_url": server.anthropic_base_url, "api_key": "t"}
    if sync:
        with anthropic.Anthropic(**options, max_retries=0) as client:
            yield AnthropicModel(client, "claude-test", max_tokens=2048, thinking=1024)
    else:
        async with anthropic.AsyncAnthropic(**options, max_retries=0) as aclient:
            yield AnthropicModel(aclient, "claude-test", max_tokens=2048, thinking=1024)


def chat_round() -> Reply:
    return (
        OpenAIChatScript()
        .reasoning("The weather needs a lookup.")
        .call("call_1", "get_weather", '{"city": "Paris"}', pieces=3)
        .finish("tool_calls")
        .usage(12, 7)
        .reply()
    )


def responses_round() -> Reply:
    return (
        OpenAIResponsesScript()
        .reasoning("rs_1", ["The weather needs a lookup."], encrypted_content=ENCRYPTED)
        .call("call_1", "get_weather", '{"city": "Paris"}', pieces=3)
        .finish(input_tokens=12, output_tokens=7)
        .reply()
    )


def gemini_round() -> Reply:
    return (
        GeminiScript()
        .thought("The weather needs a lookup.", signature=GEMINI_SIGNATURES[0])
        .call("get_weather", {"city": "Paris"}, signature=GEMINI_SIGNATURES[1])
        .call("get_weather", {"city": "Rome"})
        .finish(prompt_tokens=12, candidates_tokens=7)
        .reply()
    )


def anthropic_round() -> Reply:
    return (
        AnthropicScript()
        .thinking("The weather needs a lookup.", signature=CLAUDE_SIGNATURE)
        .call("toolu_1", "get_weather", '{"city": "Paris"}', pieces=2)
        .finish("tool_use")
        .reply()
    )


def check_chat(requests: list[Any], body: bytes) -> None:
    second = requests[1]
    assistant = second["messages"][1]
    assert assistant["reasoning_content"] == "The weather needs a lookup."
    assert assistant["tool_calls"][0]["id"] == "call_1"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert second["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "18 °C in Paris",
    }


def check_responses(requests: list[Any], body: bytes) -> None:
    first, second = requests
    assert first["include"] == [ENCRYPTED_REASONING]
    assert first["store"] is False
    assert first["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "parameters": CITY,
            "description": "Current weather.",
            "strict": False,
        }
    ]
    items = second["input"]
    assert items[0] == {"type": "message", "role": "user", "content": QUESTION}
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "The weather needs a lookup."}],
        "encrypted_content": ENCRYPTED,
    }
    assert items[2]["type"] == "function_call"
    assert items[2]["call_id"] == "call_1"
    assert json.loads(items[2]["arguments"]) == {"city": "Paris"}
    assert items[3]["type"] == "function_call_output"
    assert items[3]["call_id"] == "call_1"
    assert json.dumps(ENCRYPTED).encode() in body


def check_gemini(requests: list[Any], body: bytes) -> None:
    first, second = requests
    declaration = first["tools"][0]["functionDeclarations"][0]
    # (the SDK spells this field in snake_case on the wire; the API reads either spelling)
    schema = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
    assert schema == CITY
    user, model, answers = second["contents"]
    assert user == {"role": "user", "parts": [{"text": QUESTION}]}
    assert model == {
        "role": "model",
        "parts": [
            {
                "text": "The weather needs a lookup.",
                "thought": True,
                "thoughtSignature": GEMINI_SIGNATURES[0],
            },
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                "thoughtSignature": GEMINI_SIGNATURES[1],
            },
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
        ],
    }
    # No ids on the wire: the responses are paired with the calls by position.
    assert [part["functionResponse"]["response"] for part in answers["parts"]] == [
        {"output": "18 °C in Paris"},
        {"output": "18 °C in Rome"},
    ]
    assert all("id" not in part["functionResponse"] for part in answers["parts"])
    for signature in GEMINI_SIGNATURES:
        assert json.dumps(signature).encode() in body


def check_anthropic(requests: list[Any], body: bytes) -> None:
    first, second = requests
    assert first["thinking"] == second["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assistant = second["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "The weather needs a lookup.",
                "signature": CLAUDE_SIGNATURE,
            },
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
    }
    result = second["messages"][2]["content"][0]
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == "toolu_1"
    assert json.dumps(CLAUDE_SIGNATURE).encode() in body


@dataclass(frozen=True)
class Case:
    factory: ModelFactory
    tool_round: Callable[[], Reply]
    answer: Callable[[], Reply]
    check: Callable[[list[Any], bytes], None]


CASES = {
    "openai-chat": Case(
        chat_model,
        chat_round,
        lambda: OpenAIChatScript().text(ANSWER, pieces=2).finish().reply(),
        check_chat,
    ),
    "openai-responses": Case(
        responses_model,
        responses_round,
        lambda: OpenAIResponsesScript().text(ANSWER, pieces=2).finish().reply(),
        check_responses,
    ),
    "gemini": Case(
        gemini_model,
        gemini_round,
        lambda: GeminiScript().text(ANSWER, pieces=2).finish().reply(),
        check_gemini,
    ),
    "anthropic": Case(
        anthropic_model,
        anthropic_round,
        lambda: AnthropicScript().text(ANSWER, pieces=2).finish().reply(),
        check_anthropic,
    ),
}
SYNC = pytest.mark.parametrize("sync", [False, True], ids=["async-client", "sync-client"])


async def stream_once(model: Model, history: list[Message]) -> StitchResult:
    stitcher = Stitcher(model.provider)
    async for event in model.stream(history, TOOLS):
        stitcher.feed(event)
    stitcher.close()
    return stitcher.result


@pytest.mark.parametrize("name", sorted(CASES))
@SYNC
def test_two_turns_send_back_what_the_provider_needs(name: str, sync: bool) -> None:
    case = CASES[name]

    async def main() -> tuple[StitchResult, ScriptedServer]:
        async with (
            ScriptedServer([case.tool_round(), case.answer()]) as server,
            case.factory(server, sync) as model,
        ):
            history: list[Message] = [UserMessage(QUESTION)]
            first = await stream_once(model, history)
            history.append(first.message())
            for call in first.calls:
                history.append(
                    ToolResult(
                        call_id=call.id, name=call.name, content=weather(**call.parsed_arguments)
                    )
                )
            return await stream_once(model, history), server

    final, server = arun(main())
    assert final.text == ANSWER
    assert final.calls == ()
    case.check([r.json for r in server.requests], server.requests[1].body)


@pytest.mark.parametrize("name", sorted(CASES))
@SYNC
def test_tool_runner_two_turns(name: str, sync: bool) -> None:
    """The runner as it is: a tool round, then the answer; the second request answers the
    call the first response made."""
    case = CASES[name]

    async def main() -> tuple[Any, list[Any], ScriptedServer]:
        async with (
            ScriptedServer([case.tool_round(), case.answer()]) as server,
            case.factory(server, sync) as model,
        ):
            result = await ToolRunner(model, TOOLS).run([QUESTION])
            events = [event async for event in result.stream]
            return result, events, server

    result, events, server = arun(main())
    assert result.stop_reason == "completed"
    assert result.final_text == ANSWER
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ANSWER
    assert next(r.content for r in result.tool_turns[0].results) == "18 °C in Paris"
    assert "18 °C in Paris" in json.dumps(server.requests[1].json, ensure_ascii=False)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"openai-chat"}))
def test_tool_runner_sends_reasoning_state_back(name: str) -> None:
    case = CASES[name]

    async def main() -> ScriptedServer:
        async with (
            ScriptedServer([case.tool_round(), case.answer()]) as server,
            case.factory(server, False) as model,
        ):
            result = await ToolRunner(model, TOOLS).run([QUESTION])
            async for _ in result.stream:
                pass
            return server

    server = arun(main())
    case.check([r.json for r in server.requests], server.requests[1].body)


# -- requests ------------------------------------------------------------------------------


def signed_history() -> list[Message]:
    turn = AssistantMessage(
        parts=(
            Reasoning(text="First thought.", signature="sig-1"),
            TextPart(text="Let me check."),
            Reasoning(signature="opaque-redacted", redacted=True),
            Reasoning(text="Second thought.", signature="sig-2"),
            FunctionCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"}),
        )
    )
    return [
        UserMessage(QUESTION),
        turn,
        ToolResult(call_id="toolu_1", name="get_weather", content="18 °C"),
    ]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_anthropic_request_sends_signed_thinking_blocks_in_order() -> None:
    model = AnthropicModel(object(), "claude-test", max_tokens=4000, thinking=2000)
    request = model.request(signed_history(), TOOLS)
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert request["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "First thought.", "signature": "sig-1"},
        {"type": "text", "text": "Let me check."},
        {"type": "redacted_thinking", "data": "opaque-redacted"},
        {"type": "thinking", "thinking": "Second thought.", "signature": "sig-2"},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    adaptive = AnthropicModel(object(), "m", thinking={"type": "adaptive"})
    assert adaptive.request([UserMessage("hi")], [])["thinking"] == {"type": "adaptive"}
    assert "thinking" not in AnthropicModel(object(), "m").request([UserMessage("hi")], [])


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("budget", [0, 4096, 5000])
def test_anthropic_thinking_budget_must_fit_below_max_tokens(budget: int) -> None:
    with pytest.raises(ValueError, match="below max_tokens"):
        AnthropicModel(object(), "m", max_tokens=4096, thinking=budget)
    with pytest.raises(TypeError, match="thinking is a budget"):
        AnthropicModel(object(), "m", thinking="on")  # type: ignore[arg-type]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_responses_request_include_and_tool_choice() -> None:
    history = [UserMessage("hi")]
    stored = OpenAIResponsesModel(object(), "m").request(history, TOOLS)
    assert "include" not in stored
    assert "store" not in stored
    unstored = OpenAIResponsesModel(object(), "m", store=False, include=["web_search.sources"])
    request = unstored.request(history, TOOLS, tool_choice="none")
    assert request["include"] == ["web_search.sources", ENCRYPTED_REASONING]
    assert request["store"] is False
    assert request["tool_choice"] == "none"
    assert len(request["tools"]) == 1
    assert "tools" not in unstored.request(history, [])


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_gemini_request_config() -> None:
    model = GeminiModel(object(), "gemini-test", temperature=0.5)
    request = model.request(
        [UserMessage("hi")], TOOLS, tool_choice="none", thinking_config={"include_thoughts": True}
    )
    config = request["config"]
    assert config["temperature"] == 0.5
    assert config["thinking_config"] == {"include_thoughts": True}
    assert config["tool_config"] == {"function_calling_config": {"mode": "NONE"}}
    assert config["tools"][0]["function_declarations"][0] == {
        "name": "get_weather",
        "parameters_json_schema": CITY,
        "description": "Current weather.",
    }
    required = model.request([UserMessage("hi")], TOOLS, tool_choice="required")
    assert required["config"]["tool_config"]["function_calling_config"]["mode"] == "ANY"
    bare = GeminiModel(object(), "g").request([UserMessage("hi")], [])
    assert bare == {"model": "g", "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


# -- sync clients --------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_sync_and_async_clients_are_told_apart() -> None:
    assert is_sync_client(openai.OpenAI(api_key="t"))
    assert not is_sync_client(openai.AsyncOpenAI(api_key="t"))
    assert is_sync_client(anthropic.Anthropic(api_key="t"))
    assert not is_sync_client(anthropic.AsyncAnthropic(api_key="t"))
    client = genai.Client(api_key="t")
    assert is_sync_client(client)
    assert not is_sync_client(client.aio)
    assert not is_sync_client(object())  # a client without close() is taken as async


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_sync_client_streams_without_blocking_the_loop() -> None:
    """The server holds the stream until a task of the same loop has run: a sync client
    read in the loop's thread would block it, and the hold would time out."""
    released = asyncio.Event()
    reply = (
        OpenAIChatScript()
        .text("one ")
        .hold(released, label="until the loop ran", timeout=5)
        .text("two")
        .finish()
        .reply()
    )

    async def main() -> tuple[list[str], ScriptedServer]:
        async def release() -> None:
            await asyncio.sleep(0)
            released.set()

        async with ScriptedServer([reply]) as server:
            with openai.OpenAI(base_url=server.openai_base_url, api_key="t") as client:
                model = OpenAIChatModel(client, "m", include_usage=False)
                texts: list[str] = []
                async for chunk in model.stream([UserMessage("hi")], []):
                    if chunk.choices and chunk.choices[0].delta.content:
                        texts.append(chunk.choices[0].delta.content)
                        if len(texts) == 1:
                            task = asyncio.create_task(release())
                await task
                return texts, server

    texts, server = arun(main())
    assert texts == ["one ", "two"]
    assert server.timeouts == []


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_leaving_a_sync_stream_early_closes_it() -> None:
    closed = threading.Event()

    class Stream:
        def __iter__(self) -> Any:
            yield from ("a", "b", "c")

        def close(self) -> None:
            closed.set()

    class Completions:
        def create(self, **request: Any) -> Stream:
            return Stream()

    class Client:
        chat = type("Chat", (), {"completions": Completions()})()

        def close(self) -> None: ...

    async def main() -> list[str]:
        model = OpenAIChatModel(Client(), "m")
        stream = model.stream([UserMessage("hi")], [])
        first = await stream.__anext__()
        await stream.aclose()  # type: ignore[attr-defined]
        return [first]

    assert arun(main()) == ["a"]
    assert closed.wait(5)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_client_of_the_wrong_kind_is_named_with_the_fix() -> None:
    async def first(model: Model) -> Any:
        async for event in model.stream([UserMessage("hi")], []):
            return event
        return None

    model = OpenAIResponsesModel(anthropic.AsyncAnthropic(api_key="t"), "m")
    with pytest.raises(TypeError, match=r"needs an openai\.AsyncOpenAI or openai\.OpenAI client"):
        arun(first(model))
    gemini = GeminiModel(openai.AsyncOpenAI(api_key="t"), "m")
    with pytest.raises(TypeError, match=r"google\.genai\.Client, or its \.aio"):
        arun(first(gemini))

    class AsyncLooking:  # async close(), but create() answers with a sync iterator
        chat = type("Chat", (), {"completions": type("C", (), {"create": lambda s, **k: []})()})()

        async def close(self) -> None: ...

    with pytest.raises(TypeError, match=r"not an async stream.*plain close"):
        arun(first(OpenAIChatModel(AsyncLooking(), "m")))

    class SyncLooking:  # plain close(), but create() is a coroutine function
        async def _create(self, **request: Any) -> list[Any]:
            return []

        chat = type("Chat", (), {"completions": None})()

        def close(self) -> None: ...

    sync_looking = SyncLooking()
    sync_looking.chat.completions = type("C", (), {"create": sync_looking._create})()
    with pytest.raises(TypeError, match="not a sync stream"):
        arun(first(OpenAIChatModel(sync_looking, "m")))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_owned_clients_are_created_and_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "t")
    monkeypatch.setenv("GOOGLE_API_KEY", "t")
    responses = OpenAIResponsesModel(None, "m")
    gemini = GeminiModel(None, "g")
    assert isinstance(responses.client, openai.AsyncOpenAI)
    assert not is_sync_client(gemini.client)
    assert hasattr(gemini.client, "models")

    async def main() -> None:
        await responses.aclose()
        await gemini.aclose()

    arun(main())
    assert responses.client.is_closed()


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_sync_stream_left_inside_a_read_is_closed_by_its_worker_after_the_read() -> None:
    """The consumer is cancelled while the worker thread waits for the next event: the
    stream is closed by the worker as soon as that read returns, and the thread ends."""
    reading, release, closed = threading.Event(), threading.Event(), threading.Event()

    class Stream:
        def __iter__(self) -> Any:
            yield "a"
            reading.set()
            release.wait(5)
            yield "b"

        def close(self) -> None:
            closed.set()

    class Client:
        def __init__(self) -> None:
            create = type("Completions", (), {"create": lambda self, **request: Stream()})
            self.chat = type("Chat", (), {"completions": create()})()

        def close(self) -> None: ...

    async def main() -> None:
        stream = OpenAIChatModel(Client(), "m").stream([UserMessage("hi")], [])
        assert await stream.__anext__() == "a"
        task = asyncio.ensure_future(stream.__anext__())
        await asyncio.get_running_loop().run_in_executor(None, reading.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not closed.is_set()  # the worker is inside the read: it closes the stream

    arun(main())
    release.set()
    assert closed.wait(5)
    for thread in threading.enumerate():
        if thread.name.startswith("toolstitch-model-stream"):
            thread.join(5)
            assert not thread.is_alive()


def test_a_sync_client_error_is_raised_from_the_first_event() -> None:
    async def main() -> None:
        async with ScriptedServer([]) as server:
            with openai.OpenAI(
                base_url=server.openai_base_url, api_key="t", max_retries=0
            ) as client:
                model = OpenAIResponsesModel(client, "m")
                with pytest.raises(openai.InternalServerError, match="no reply left"):
                    await ToolRunner(model, TOOLS).run([QUESTION])

    arun(main())


@pytest.mark.parametrize("name", sorted(CASES))
def test_messages_as_gives_the_history_in_the_models_wire_form(name: str) -> None:
    """``RunResult.messages_as()``: the run's history in its model's wire form, which reads
    back as the same history and starts as the second request did."""
    case = CASES[name]

    async def main() -> tuple[Any, ScriptedServer]:
        async with (
            ScriptedServer([case.tool_round(), case.answer()]) as server,
            case.factory(server, False) as model,
        ):
            result = await ToolRunner(model, TOOLS).run([QUESTION])
            return await result.collect(), server

    result, server = arun(main())
    # The chat model of CASES sends reasoning back (include_reasoning=True): so does this.
    options = {"include_reasoning": True} if name == "openai-chat" else {}
    wire = result.messages_as(**options)
    assert wire == write_history(result.messages, name, **options)
    items = wire[1] if isinstance(wire, tuple) else wire
    assert ANSWER in json.dumps(items[-1], ensure_ascii=False)  # the answer, last
    sent = server.requests[1].json
    key = {"anthropic": "messages", "gemini": "contents", "openai-chat": "messages"}
    assert items[:-1] == sent.get(key.get(name, "input"))  # everything but the answer
    other = result.messages_as("anthropic")  # another form on request
    assert other == write_history(result.messages, "anthropic")
