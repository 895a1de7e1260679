"""End-to-end tests of toolstitch.runner with the real SDK clients over loopback HTTP.

Every test plays scripted streams from ``toolstitch.testing.ScriptedServer`` to a real
``openai.AsyncOpenAI`` or ``anthropic.AsyncAnthropic`` client. Early dispatch is shown by
ordering: the server holds the stream open until the early tool has started, so the tool
cannot have started after the stream ended.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

import pydantic
import pytest

from toolstitch import (
    ArgumentsDelta,
    ArgumentsValue,
    CallDiscarded,
    CallReady,
    CallStarted,
    CallWarning,
    Event,
    FinishReason,
    Limits,
    SchemaViolation,
    TextDelta,
    ToolCall,
    TruncatedArguments,
    UnknownTool,
)
from toolstitch.messages import SystemMessage, UserMessage
from toolstitch.runner import (
    AnthropicModel,
    BatchRefused,
    Model,
    OpenAIChatModel,
    RoundEnded,
    RoundStarted,
    RunFailed,
    RunFinished,
    RunResult,
    Tool,
    ToolDropped,
    ToolResult,
    ToolResultReady,
    ToolRunner,
    ToolStarted,
    ToolTurn,
)
from toolstitch.runner._tool import require
from toolstitch.testing import AnthropicScript, OpenAIChatScript, Reply, ScriptedServer

if TYPE_CHECKING:
    import anthropic
    import openai
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import anthropic, openai

QUERY = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
HOTEL = {
    "type": "object",
    "properties": {"hotel": {"type": "string"}},
    "required": ["hotel"],
    "additionalProperties": False,
}


def arun(coro: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await asyncio.wait_for(coro, 30)

    return asyncio.run(main())


@asynccontextmanager
async def openai_model(replies: Sequence[Reply]) -> AsyncIterator[tuple[Model, ScriptedServer]]:
    async with (
        ScriptedServer(replies) as server,
        openai.AsyncOpenAI(
            base_url=server.openai_base_url, api_key="test", max_retries=0
        ) as client,
    ):
        yield OpenAIChatModel(client, "test-model"), server


@asynccontextmanager
async def anthropic_model(
    replies: Sequence[Reply],
) -> AsyncIterator[tuple[Model, ScriptedServer]]:
    async with (
        ScriptedServer(replies) as server,
        anthropic.AsyncAnthropic(
            base_url=server.anthropic_base_url, api_key="test", max_retries=0
        ) as client,
    ):
        yield AnthropicModel(client, "test-model", max_tokens=1024), server


async def consume(result: RunResult) -> list[Event]:
    return [event async for event in result.stream]


def position(events: list[Event], match: Callable[[Event], bool]) -> int:
    for n, event in enumerate(events):
        if match(event):
            return n
    raise AssertionError("no such event")


def assert_history_json_valid(server: ScriptedServer) -> None:
    """No request carried an arguments text that is not a JSON object."""
    for request in server.requests:
        for message in request.json.get("messages", []):
            for call in message.get("tool_calls") or ():
                assert isinstance(json.loads(call["function"]["arguments"]), dict)


# -- early and late tools, parallel calls ---------------------------------------------------


def test_openai_early_and_late_tools_with_early_start_before_stream_end() -> None:
    lookup_started = threading.Event()  # set from the worker thread of a sync tool
    ran: list[str] = []

    def lookup(q: str) -> dict[str, Any]:
        lookup_started.set()
        ran.append(f"lookup {q}")
        return {"q": q, "hits": 3}

    async def book(hotel: str) -> str:
        ran.append(f"book {hotel}")
        return f"booked {hotel}"

    tools = [
        Tool("lookup", lookup, QUERY, description="Search.", early=True),
        Tool("book", book, HOTEL),
    ]
    first = (
        OpenAIChatScript()
        .text("Let me look.")
        .call("c1", "lookup", '{"q": "paris"}', pieces=3)
        .hold(lookup_started, label="until lookup started")
        .call("c2", "book", '{"hotel": "Ritz"}', pieces=2)
        .finish("tool_calls")
        .usage(100, 20)
        .reply()
    )
    second = OpenAIChatScript().text("Booked the Ritz.").finish("stop").usage(150, 7).reply()

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([first, second]) as (model, server):
            result = await ToolRunner(model, tools).run([UserMessage("Book me Paris.")])
            return await consume(result), result, server

    events, result, server = arun(main())
    assert server.timeouts == []
    _check_early_before_stream_end(events)
    assert ran == ["lookup paris", "book Ritz"]
    _check_paris_result(result)
    _check_sent_back(server)
    assert isinstance(events[0], RoundStarted)
    assert isinstance(events[-1], RunFinished)
    assert events[-1].final_text == "Booked the Ritz."


def _check_early_before_stream_end(events: list[Any]) -> None:
    """The early tool c1 started before the rest of the stream; the late c2 after its end."""
    early = position(events, lambda e: isinstance(e, ToolStarted) and e.call.id == "c1")
    assert events[early].early
    # The early tool started before the rest of the stream: the second call, the finish.
    assert early < position(events, lambda e: isinstance(e, CallStarted) and e.id == "c2")
    assert early < position(events, lambda e: isinstance(e, FinishReason))
    late = position(events, lambda e: isinstance(e, ToolStarted) and e.call.id == "c2")
    assert not events[late].early
    assert late > position(events, lambda e: isinstance(e, FinishReason))


def _check_paris_result(result: RunResult) -> None:
    """The run's result: one tool turn with both calls and results, usage per round."""
    assert result.stop_reason == "completed"
    assert result.final_text == "Booked the Ritz."
    [turn] = result.tool_turns
    assert turn.text == "Let me look."
    assert [c.id for c in turn.tool_calls] == ["c1", "c2"]
    assert [r.content for r in turn.results] == ['{"q": "paris", "hits": 3}', "booked Ritz"]
    assert (turn.input_tokens, turn.output_tokens) == (100, 20)
    assert [(r.round, r.input_tokens, r.output_tokens) for r in result.rounds] == [
        (1, 100, 20),
        (2, 150, 7),
    ]


def _check_sent_back(server: ScriptedServer) -> None:
    """What went back to the model in the second request."""
    sent = server.requests[1].json
    assert sent["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"q": "paris"}'
    assert sent["messages"][2:] == [
        {"role": "tool", "tool_call_id": "c1", "content": '{"q": "paris", "hits": 3}'},
        {"role": "tool", "tool_call_id": "c2", "content": "booked Ritz"},
    ]
    assert sent["tools"][0]["function"]["name"] == "lookup"
    assert sent["stream_options"] == {"include_usage": True}


def test_anthropic_early_tool_and_usage_per_round() -> None:
    started = asyncio.Event()  # the server runs in the test's loop

    async def lookup(q: str) -> str:
        started.set()
        return f"found {q}"

    tools = [Tool("lookup", lookup, QUERY, early=True)]
    first = (
        AnthropicScript(input_tokens=50)
        .text("Looking.")
        .call("tu1", "lookup", '{"q": "a"}', pieces=2, close=False)
        .hold(started, label="until lookup started")
        .close_block()
        .call("tu2", "lookup", '{"q": "b"}')
        .finish("tool_use", output_tokens=12)
        .reply()
    )
    second = AnthropicScript(input_tokens=90).text("a and b.").finish(output_tokens=4).reply()

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with anthropic_model([first, second]) as (model, server):
            result = await ToolRunner(model, tools).run(
                [SystemMessage("Be brief."), UserMessage("Look up a and b.")]
            )
            return await consume(result), result, server

    events, result, server = arun(main())
    assert server.timeouts == []
    starts = [e for e in events if isinstance(e, ToolStarted)]
    assert [(s.call.id, s.early) for s in starts] == [("tu1", True), ("tu2", True)]
    assert events.index(starts[0]) < position(
        events, lambda e: isinstance(e, CallStarted) and e.id == "tu2"
    )
    assert result.final_text == "a and b."
    assert [(t.input_tokens, t.output_tokens) for t in result.tool_turns] == [(50, 12)]
    assert [(r.input_tokens, r.output_tokens) for r in result.rounds] == [(50, 12), (90, 4)]
    sent = server.requests[1].json
    assert sent["system"] == "Be brief."
    assert sent["messages"][1]["content"][1:] == [
        {"type": "tool_use", "id": "tu1", "name": "lookup", "input": {"q": "a"}},
        {"type": "tool_use", "id": "tu2", "name": "lookup", "input": {"q": "b"}},
    ]
    assert sent["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "tu1", "content": "found a"},
        {"type": "tool_result", "tool_use_id": "tu2", "content": "found b"},
    ]


def test_parallel_late_calls_run_concurrently() -> None:
    # Each tool waits until the other has started: only concurrent execution finishes.
    arrived: dict[str, asyncio.Event] = {}

    async def meet(name: str, other: str) -> str:
        arrived[name].set()
        await asyncio.wait_for(arrived[other].wait(), 5)
        return f"{name} met {other}"

    async def left() -> str:
        return await meet("left", "right")

    async def right() -> str:
        return await meet("right", "left")

    tools = [Tool("left", left, {"type": "object"}), Tool("right", right, {"type": "object"})]
    first = (
        OpenAIChatScript()
        .call("c1", "left", "{}")
        .call("c2", "right", "{}")
        .finish("tool_calls")
        .reply()
    )
    second = OpenAIChatScript().text("ok").finish().reply()

    async def main() -> RunResult:
        arrived.update(left=asyncio.Event(), right=asyncio.Event())
        async with openai_model([first, second]) as (model, _):
            result = await ToolRunner(model, tools, concurrency=2).run(["go"])
            await result.collect()
            return result

    result = arun(main())
    assert [r.content for r in result.tool_turns[0].results] == ["left met right", "right met left"]
    assert not any(r.is_error for r in result.tool_turns[0].results)


# -- approval ---------------------------------------------------------------------------------


def test_refused_batch_drops_the_early_result_and_ends_the_run() -> None:
    started = threading.Event()
    asked: list[str] = []

    def lookup(q: str) -> str:
        started.set()
        return "result"

    def book(hotel: str) -> str:  # pragma: no cover - must never run
        raise AssertionError("a refused tool ran")

    def should_execute(call: ToolCall) -> bool:
        asked.append(call.name)
        return call.name != "book"

    tools = [Tool("lookup", lookup, QUERY, early=True), Tool("book", book, HOTEL)]
    first = (
        OpenAIChatScript()
        .text("I will book.")
        .call("c1", "lookup", '{"q": "x"}')
        .hold(started, label="until lookup started")
        .call("c2", "book", '{"hotel": "Ritz"}')
        .finish("tool_calls")
        .reply()
    )

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([first]) as (model, server):
            result = await ToolRunner(model, tools).run(
                [UserMessage("Book.")], should_execute=should_execute
            )
            return await consume(result), result, server

    events, result, server = arun(main())
    assert asked == ["lookup", "book"]
    assert len(server.requests) == 1
    assert result.stop_reason == "refused"
    assert result.final_text == ""
    assert result.tool_turns == []
    assert [c.id for c in result.unresolved] == ["c1", "c2"]
    assert [c.id for c in result.refused] == ["c2"]
    assert result.pending is not None
    assert result.pending.text == "I will book."
    assert result.messages == [UserMessage("Book.")]  # nothing committed
    refused = [e for e in events if isinstance(e, BatchRefused)]
    assert [c.id for c in refused[0].refused] == ["c2"]
    dropped = [e for e in events if isinstance(e, ToolDropped)]
    assert [(d.call.id, d.reason) for d in dropped] == [("c1", "the batch was refused")]
    assert not any(isinstance(e, ToolStarted) and e.call.id == "c2" for e in events)
    assert isinstance(events[-1], RunFinished)
    assert events[-1].stop_reason == "refused"


def test_async_should_execute_approving_everything() -> None:
    async def should_execute(call: ToolCall) -> bool:
        await asyncio.sleep(0)
        return True

    tools = [Tool("lookup", lambda q: q.upper(), QUERY)]
    first = OpenAIChatScript().call("c1", "lookup", '{"q": "x"}').finish("tool_calls").reply()
    second = OpenAIChatScript().text("X").finish().reply()

    async def main() -> RunResult:
        async with openai_model([first, second]) as (model, _):
            result = await ToolRunner(model, tools).run(["go"], should_execute=should_execute)
            return await result.collect()

    result = arun(main())
    assert result.tool_turns[0].results[0].content == "X"
    assert result.final_text == "X"


# -- errors become error results --------------------------------------------------------------


def test_malformed_call_is_answered_with_an_error_result() -> None:
    tools = [Tool("lookup", lambda q: "found", QUERY)]
    first = (
        OpenAIChatScript()
        .call("c1", "lookup", '{"q": "a", "n": 03}', pieces=2)
        .call("c2", "lookup", '{"q": "b"}')
        .finish("tool_calls")
        .reply()
    )
    second = OpenAIChatScript().text("Only b.").finish().reply()

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([first, second]) as (model, server):
            result = await ToolRunner(model, tools).run(["go"])
            return await consume(result), result, server

    events, result, server = arun(main())
    assert any(isinstance(e, CallDiscarded) for e in events)
    [turn] = result.tool_turns
    bad, good = turn.results
    assert bad.call_id == "c1"
    assert bad.is_error
    assert "malformed-arguments" in bad.content
    assert "character 17" in bad.content  # the offset
    assert '{"q": "a", "n": 03}' in bad.content  # the snippet
    assert "^" in bad.content
    assert good.content == "found"
    ready = [e for e in events if isinstance(e, ToolResultReady)]
    assert [(r.result.call_id, r.executed, r.code) for r in ready] == [
        ("c1", False, "malformed-arguments"),
        ("c2", True, None),
    ]
    # The history never carries the invalid JSON: the call goes back with {}.
    assert_history_json_valid(server)
    sent = server.requests[1].json["messages"]
    assert sent[1]["tool_calls"][0]["function"] == {"name": "lookup", "arguments": "{}"}
    assert sent[2]["tool_call_id"] == "c1"
    assert sent[2]["content"].startswith("Error [malformed-arguments]")
    assert "03" not in json.dumps(sent[1])


def test_truncated_call_and_tool_failures_become_error_results() -> None:
    def boom(q: str) -> str:
        raise RuntimeError("disk on fire")

    async def slow(q: str) -> str:
        await asyncio.sleep(30)
        return "never"  # pragma: no cover

    tools = [
        Tool("boom", boom, QUERY),
        Tool("slow", slow, QUERY),
        Tool("lookup", lambda q: "ok", QUERY),
    ]
    first = (
        OpenAIChatScript()
        .call("c1", "boom", '{"q": "a"}')
        .call("c2", "slow", '{"q": "a"}')
        .call("c3", "lookup", '{"q": 7}')  # fails the schema
        .call("c4", "nosuch", '{"q": "a"}')
        .call("c5", "lookup", '{"q": "cut of')  # truncated by the end of the stream
        .finish("length")
        .reply()
    )
    second = OpenAIChatScript().text("Sorry.").finish().reply()

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([first, second]) as (model, server):
            result = await ToolRunner(model, tools, tool_timeout=0.2).run(["go"])
            return await consume(result), result, server

    events, result, server = arun(main())
    codes = {e.result.call_id: e.code for e in events if isinstance(e, ToolResultReady)}
    assert codes == {
        "c1": "tool-exception",
        "c2": "tool-timeout",
        "c3": "invalid-arguments",
        "c4": "unknown-tool",
        "c5": "truncated-arguments",
    }
    results = {r.call_id: r for r in result.tool_turns[0].results}
    assert all(r.is_error for r in results.values())
    _check_the_exception_is_kept_from_the_model(events, result, results["c1"])
    assert "0.2 seconds" in results["c2"].content
    assert "q: 7 is not of type 'string'" in results["c3"].content
    assert "boom, lookup, slow" in results["c4"].content
    assert "truncated-arguments" in results["c5"].content
    assert result.final_text == "Sorry."
    assert_history_json_valid(server)
    tool_messages = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["c1", "c2", "c3", "c4", "c5"]


@pytest.mark.parametrize("reason", ["length", "content_filter", None])
def test_a_call_cut_before_its_arguments_arrived_is_never_executed(reason: str | None) -> None:
    # The response ends right after the call's name: by the token limit, a content filter,
    # or a body that simply stops. delete_all({}) must never run.
    ran: list[dict[str, Any]] = []
    empty = {"type": "object", "properties": {}}

    def delete_all(**kwargs: Any) -> str:
        ran.append(kwargs)
        return "deleted"

    tools = [Tool("delete_all", delete_all, empty)]
    first = OpenAIChatScript().call("c1", "delete_all")
    if reason is not None:
        first = first.finish(reason)
    second = OpenAIChatScript().text("Sorry.").finish().reply()

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([first.reply(), second]) as (model, _):
            result = await ToolRunner(model, tools).run(["clean up"])
            return await consume(result), result

    events, result = arun(main())
    assert ran == []
    (discarded,) = [e for e in events if isinstance(e, CallDiscarded)]
    assert isinstance(discarded.error, TruncatedArguments)
    assert discarded.error.ending == {"length": "length", "content_filter": "content-filter"}.get(
        reason or "", "abandoned"
    )
    if reason is None:  # the stream broke off: the run ends there, nothing dispatched
        assert result.stop_reason == "truncated"
        assert not [e for e in events if isinstance(e, ToolResultReady)]
        return
    codes = {e.result.call_id: e.code for e in events if isinstance(e, ToolResultReady)}
    assert codes == {"c1": "truncated-arguments"}
    (reply,) = result.tool_turns[0].results
    assert reply.is_error
    assert result.final_text == "Sorry."


def test_a_call_without_parameters_runs_after_a_normal_end() -> None:
    ran: list[dict[str, Any]] = []
    empty = {"type": "object", "properties": {}}

    def ping(**kwargs: Any) -> str:
        ran.append(kwargs)
        return "pong"

    tools = [Tool("ping", ping, empty)]
    first = OpenAIChatScript().call("c1", "ping").finish("tool_calls").reply()
    second = OpenAIChatScript().text("Done.").finish().reply()

    async def main() -> RunResult:
        async with openai_model([first, second]) as (model, _):
            result = await ToolRunner(model, tools).run(["ping"])
            await consume(result)
            return result

    result = arun(main())
    assert ran == [{}]
    assert result.final_text == "Done."


def _check_the_exception_is_kept_from_the_model(
    events: list[Event], result: RunResult, raised: ToolResult
) -> None:
    """The model is told the exception's type, never its text; the application gets the
    traceback on the event."""
    assert "RuntimeError" in raised.content
    assert "disk on fire" not in raised.content
    (failure,) = [e.failure for e in events if isinstance(e, ToolResultReady) and e.failure]
    assert "disk on fire" in failure.traceback
    assert failure.code == "tool-exception"
    # ... and on the committed turn: only the tool that raised (not the timeout, nor the
    # errors decided without running), the very same ToolFailure.
    (kept,) = result.tool_turns[0].failures
    assert kept is failure


def test_early_result_of_a_corrupted_call_is_dropped() -> None:
    started = threading.Event()
    runs: list[str] = []

    def lookup(q: str) -> str:
        runs.append(q)
        started.set()
        return "early result"

    tools = [Tool("lookup", lookup, QUERY, early=True)]
    first = (
        OpenAIChatScript()
        .call("c1", "lookup", '{"q": "a"}')
        .hold(started, label="until lookup started")
        .arguments(0, " oops")  # trailing text: the call is corrupted
        .finish("tool_calls")
        .reply()
    )
    second = OpenAIChatScript().text("Retrying later.").finish().reply()

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([first, second]) as (model, server):
            result = await ToolRunner(model, tools).run(["go"])
            return await consume(result), result, server

    events, result, server = arun(main())
    assert server.timeouts == []
    assert runs == ["a"]  # it did start early
    warning = position(events, lambda e: isinstance(e, CallWarning))
    dropped = position(events, lambda e: isinstance(e, ToolDropped))
    assert warning < dropped
    [result_] = result.tool_turns[0].results
    assert result_.is_error
    assert "trailing-arguments" in result_.content
    assert "early result" not in json.dumps(server.requests[1].json)


def test_pydantic_parameters() -> None:
    class Query(pydantic.BaseModel):
        q: str
        limit: int = 3

    seen: list[Query] = []

    def lookup(query: Query) -> Query:
        seen.append(query)
        return query

    tools = [Tool("lookup", lookup, Query)]
    first = (
        OpenAIChatScript()
        .call("c1", "lookup", '{"q": "a"}')
        .call("c2", "lookup", '{"limit": 2}')
        .finish("tool_calls")
        .reply()
    )
    second = OpenAIChatScript().text("ok").finish().reply()

    async def main() -> tuple[RunResult, ScriptedServer]:
        async with openai_model([first, second]) as (model, server):
            result = await ToolRunner(model, tools).run(["go"])
            return await result.collect(), server

    result, server = arun(main())
    good, bad = result.tool_turns[0].results
    assert json.loads(good.content) == {"q": "a", "limit": 3}
    assert bad.is_error
    assert "q: Field required" in bad.content
    assert seen == [Query(q="a")]
    assert server.requests[0].json["tools"][0]["function"]["parameters"]["required"] == ["q"]


# -- rounds -----------------------------------------------------------------------------------


def looping_reply(n: int) -> Reply:
    return (
        OpenAIChatScript()
        .call(f"c{n}", "lookup", f'{{"q": "{n}"}}')
        .finish("tool_calls")
        .usage(10 * n, n)
        .reply()
    )


def test_max_rounds_forces_a_synthesis_without_tools() -> None:
    order: list[str] = []

    def lookup(q: str) -> str:
        return f"r{q}"

    def on_tool_turns(turns: list[ToolTurn]) -> None:
        order.append(f"turns {[t.round for t in turns]}")

    tools = [Tool("lookup", lookup, QUERY)]
    final = OpenAIChatScript().text("Best effort.").finish().usage(99, 2).reply()

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([looping_reply(1), looping_reply(2), final]) as (model, server):
            result = await ToolRunner(model, tools, max_rounds=2).run(
                ["go"], on_tool_turns=on_tool_turns
            )
            events: list[Event] = []
            async for event in result.stream:
                if isinstance(event, RoundStarted):
                    order.append(f"round {event.round} synthesis={event.synthesis}")
                events.append(event)
            return events, result, server

    _, result, server = arun(main())
    assert order == [
        "round 1 synthesis=False",
        "turns [1]",
        "round 2 synthesis=False",
        "turns [1, 2]",
        "round 3 synthesis=True",
    ]
    assert result.stop_reason == "max-rounds"
    assert result.final_text == "Best effort."
    assert [t.round for t in result.tool_turns] == [1, 2]
    assert [(r.input_tokens, r.output_tokens) for r in result.rounds] == [
        (10, 1),
        (20, 2),
        (99, 2),
    ]
    last = server.requests[2].json
    assert "tools" not in last
    assert last["messages"][-1]["role"] == "user"
    assert "Do not call any more tools" in last["messages"][-1]["content"]
    assert "tools" in server.requests[1].json
    assert result.messages[-1].text == "Best effort."


def test_anthropic_synthesis_keeps_tools_declared_with_tool_choice_none() -> None:
    tools = [Tool("lookup", lambda q: "r", QUERY)]
    first = AnthropicScript().call("tu1", "lookup", '{"q": "x"}').finish("tool_use").reply()
    final = AnthropicScript().text("Done.").finish().reply()

    async def main() -> tuple[RunResult, ScriptedServer]:
        async with anthropic_model([first, final]) as (model, server):
            result = await ToolRunner(model, tools, max_rounds=1).run(["go"])
            return await result.collect(), server

    result, server = arun(main())
    assert result.stop_reason == "max-rounds"
    assert result.final_text == "Done."
    assert server.requests[1].json["tool_choice"] == {"type": "none"}


def test_failed_synthesis_leaves_final_text_empty_and_the_error_in_the_stream() -> None:
    tools = [Tool("lookup", lambda q: "r", QUERY)]
    failure = Reply.json({"error": {"message": "overloaded", "type": "server_error"}}, status=400)

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([looping_reply(1), failure]) as (model, _):
            result = await ToolRunner(model, tools, max_rounds=1).run(["go"])
            return await consume(result), result

    events, result = arun(main())
    assert result.final_text == ""
    assert result.stop_reason == "error"
    assert isinstance(result.error, openai.BadRequestError)
    failed = [e for e in events if isinstance(e, RunFailed)]
    assert failed[0].round == 2
    assert "overloaded" in failed[0].message
    assert isinstance(events[-1], RunFinished)
    assert events[-1].stop_reason == "error"
    assert len(result.tool_turns) == 1


def test_error_event_inside_a_later_round_fails_the_run() -> None:
    tools = [Tool("lookup", lambda q: "r", QUERY)]
    first = AnthropicScript().call("tu1", "lookup", '{"q": "x"}').finish("tool_use").reply()
    broken = AnthropicScript().text("Half an answ").error("Overloaded").reply()

    async def main() -> tuple[list[Event], RunResult]:
        async with anthropic_model([first, broken]) as (model, _):
            result = await ToolRunner(model, tools).run(["go"])
            return await consume(result), result

    events, result = arun(main())
    assert result.stop_reason == "error"
    assert result.final_text == ""
    assert any(isinstance(e, TextDelta) and e.text == "Half an answ" for e in events)
    assert [e.round for e in events if isinstance(e, RunFailed)] == [2]


def test_an_error_opening_the_first_round_is_raised_by_run() -> None:
    failure = Reply.json({"error": {"message": "bad key", "type": "invalid_request"}}, status=400)

    async def main() -> None:
        async with openai_model([failure]) as (model, _):
            await ToolRunner(model, []).run(["go"])

    with pytest.raises(openai.BadRequestError, match="bad key"):
        arun(main())


def test_no_tool_call_is_the_final_answer_and_the_run_can_be_closed_early() -> None:
    reply = OpenAIChatScript().text("Hello", pieces=2).text(" there").finish().reply()

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([reply, reply]) as (model, _):
            result = await ToolRunner(model, []).run(["hi"])
            events = await consume(result)
            # A second run left before its end is closed cleanly.
            async with await ToolRunner(model, []).run(["hi"]) as other:
                async for event in other.stream:
                    if isinstance(event, TextDelta):
                        break
            return events, result

    events, result = arun(main())
    assert result.final_text == "Hello there"
    assert [type(e) for e in events if not isinstance(e, ArgumentsDelta)][-2:] == [
        RoundEnded,
        RunFinished,
    ]
    assert not any(isinstance(e, CallReady) for e in events)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_constructor_checks_and_missing_sdk_message() -> None:
    with pytest.raises(ValueError, match="max_rounds"):
        ToolRunner(object(), [], max_rounds=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="two tools"):
        ToolRunner(object(), [Tool("a", print, {}), Tool("a", print, {})])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="JSON Schema"):
        Tool("a", print, 3)  # type: ignore[arg-type]
    with pytest.raises(ImportError, match=r"pip install 'toolstitch\[openai\]'"):
        require("toolstitch_no_such_sdk", "openai")
    assert isinstance(OpenAIChatModel(object(), "m"), Model)


def test_an_exception_from_should_execute_ends_the_run_with_an_error() -> None:
    def should_execute(call: ToolCall) -> bool:
        raise KeyError("policy store down")

    tools = [Tool("lookup", lambda q: "r", QUERY, early=True)]
    first = OpenAIChatScript().call("c1", "lookup", '{"q": "x"}').finish("tool_calls").reply()

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([first]) as (model, _):
            result = await ToolRunner(model, tools).run(["go"], should_execute=should_execute)
            return await consume(result), result

    events, result = arun(main())
    assert result.stop_reason == "error"
    assert isinstance(result.error, KeyError)
    failed = [e for e in events if isinstance(e, RunFailed)]
    assert [str(e.error) for e in failed] == ["'policy store down'"]
    assert isinstance(events[-1], RunFinished)
    assert events[-1].stop_reason == "error"


# -- the core checks the calls: unknown tools, schema violations, pydantic ----------------------


ModelFactory = Callable[
    [Sequence[Reply]], AbstractAsyncContextManager[tuple[Model, ScriptedServer]]
]


def _discarded_early_run(
    script: Callable[[asyncio.Event], Reply], model: ModelFactory, **options: Any
) -> tuple[list[Event], RunResult, ScriptedServer]:
    """Run ``script(seen)`` (which holds its stream until ``seen`` is set), setting ``seen``
    when the stream shows the second discard: so the discards came before the stream ended."""
    seen = asyncio.Event()

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        second = OpenAIChatScript().text("Done.").finish().reply()
        if model is anthropic_model:
            second = AnthropicScript().text("Done.").finish().reply()
        async with model([script(seen), second]) as (llm, server):
            tools = [Tool("lookup", lambda q: f"found {q}", QUERY)]
            result = await ToolRunner(llm, tools, **options).run(["go"])
            events: list[Event] = []
            async for event in result.stream:
                events.append(event)
                if sum(isinstance(e, CallDiscarded) for e in events) == 2:
                    seen.set()
            return events, result, server

    out: tuple[list[Event], RunResult, ScriptedServer] = arun(main())
    return out


def _openai_bad_calls(seen: asyncio.Event) -> Reply:
    return (
        OpenAIChatScript()
        .call("c1", "lookup", '{"q": "a"}')
        .call("c2", "nosuch", "")
        .call("c3", "lookup", '{"q": 7')
        .hold(seen, label="until both discards were seen")
        .arguments(1, '{"q": "a"}')  # ignored: the call is already discarded
        .arguments(2, "}")
        .finish("tool_calls")
        .reply()
    )


def _anthropic_bad_calls(seen: asyncio.Event) -> Reply:
    return (
        AnthropicScript()
        .call("c1", "lookup", '{"q": "a"}')
        .call("c2", "nosuch", "")
        .call("c3", "lookup", '{"q": 7', close=False)
        .hold(seen, label="until both discards were seen")
        .arguments("}")
        .finish("tool_use")
        .reply()
    )


@pytest.mark.parametrize(
    ("model", "script"),
    [(openai_model, _openai_bad_calls), (anthropic_model, _anthropic_bad_calls)],
    ids=["openai", "anthropic"],
)
def test_unknown_tools_and_schema_violations_are_discarded_early_and_answered(
    model: ModelFactory, script: Callable[[asyncio.Event], Reply]
) -> None:
    events, result, server = _discarded_early_run(script, model)
    assert server.timeouts == []  # the discards were in the stream before it ended
    discarded = {e.id: e for e in events if isinstance(e, CallDiscarded)}
    assert isinstance(discarded["c2"].error, UnknownTool)
    assert discarded["c2"].arguments == ""  # at its name, before any arguments
    assert isinstance(discarded["c3"].error, SchemaViolation)
    assert discarded["c3"].error.path == "/q"
    assert discarded["c3"].arguments == '{"q": 7'  # at the fragment that made it certain
    assert [e.call.id for e in events if isinstance(e, CallReady)] == ["c1"]
    ready = [e for e in events if isinstance(e, ToolResultReady)]
    assert [(r.result.call_id, r.executed, r.code) for r in ready] == [
        ("c2", False, "unknown-tool"),
        ("c3", False, "invalid-arguments"),
        ("c1", True, None),
    ]
    _check_the_answers_to_discarded_calls(*result.tool_turns[0].results)
    # The run went on: the results were sent, the discarded calls with {} as arguments.
    assert result.final_text == "Done."
    assert result.stop_reason == "completed"
    calls = result.tool_turns[0].tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("c1", "lookup", {"q": "a"}),
        ("c2", "nosuch", {}),
        ("c3", "lookup", {}),
    ]
    assert len(server.requests) == 2
    assert_history_json_valid(server)


def _check_the_answers_to_discarded_calls(
    good: ToolResult, unknown: ToolResult, invalid: ToolResult
) -> None:
    """The tool's result for c1; an error naming the tools for c2, the schema's path for c3."""
    assert good.content == "found a"
    assert unknown.is_error
    assert unknown.content == (
        "Error [unknown-tool]: there is no tool named 'nosuch' (call id c2); nothing was run. "
        "The tools you can call are: lookup."
    )
    assert invalid.is_error
    assert invalid.content.startswith(
        "Error [invalid-arguments]: the arguments of the call to tool 'lookup' (id c3) do not "
        "match its parameters schema, so it was not run: /q: a number is not of type 'string'"
    )


def test_warn_policy_completes_the_call_but_does_not_run_it() -> None:
    events, result, _ = _discarded_early_run(
        lambda seen: (
            OpenAIChatScript()
            .call("c1", "lookup", '{"q": "a"}')
            .call("c2", "nosuch", "")
            .call("c3", "lookup", '{"q": 7}')
            .finish("tool_calls")
            .reply()
        ),
        openai_model,
        on_schema_violation="warn",
    )
    warnings = [e for e in events if isinstance(e, CallWarning)]
    assert [(w.index, w.error.code) for w in warnings] == [(2, "schema-violation")]
    assert [e.call.id for e in events if isinstance(e, CallReady)] == ["c1", "c3"]
    assert [e.id for e in events if isinstance(e, CallDiscarded)] == ["c2"]
    codes = {
        e.result.call_id: (e.executed, e.code) for e in events if isinstance(e, ToolResultReady)
    }
    assert codes == {
        "c1": (True, None),
        "c2": (False, "unknown-tool"),
        "c3": (False, "invalid-arguments"),
    }
    invalid = result.tool_turns[0].results[2]
    assert "/q: 7 is not of type 'string'" in invalid.content
    # Complete, so the history keeps the arguments the model sent.
    assert result.tool_turns[0].tool_calls[2].arguments == {"q": 7}
    assert result.final_text == "Done."


class _Search(pydantic.BaseModel):
    q: str
    limit: int = 3

    @pydantic.field_validator("q")
    @classmethod
    def _lower(cls, value: str) -> str:
        if value != value.lower():
            raise ValueError("must be lower case")
        return value


@pytest.mark.parametrize("policy", ["discard", "warn"])
def test_pydantic_decides_what_runs_whatever_the_core_says(policy: str) -> None:
    seen: list[_Search] = []

    def search(query: _Search) -> str:
        seen.append(query)
        return f"{query.q} x{query.limit}"

    first = (
        OpenAIChatScript()
        # The schema says integer; pydantic (lax) takes "2": pydantic decides, it runs.
        .call("c1", "search", '{"q": "a", "limit": "2"}', pieces=3)
        # The schema accepts any string; pydantic's validator refuses: it does not run.
        .call("c2", "search", '{"q": "ABC"}')
        .call("c3", "nosuch", "{}")  # an unknown name is still refused by the core
        .finish("tool_calls")
        .reply()
    )
    second = OpenAIChatScript().text("ok").finish().reply()

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([first, second]) as (model, _):
            tools = [Tool("search", search, _Search)]
            result = await ToolRunner(model, tools, on_schema_violation=policy).run(["go"])
            return await consume(result), result

    events, result = arun(main())
    assert seen == [_Search(q="a", limit=2)]
    ran, refused, unknown = result.tool_turns[0].results
    assert ran.content == "a x2"
    assert refused.is_error
    assert refused.content.startswith("Error [invalid-arguments]")
    assert "q: Value error, must be lower case" in refused.content
    assert unknown.content.startswith("Error [unknown-tool]")
    assert [e.id for e in events if isinstance(e, CallDiscarded)] == ["c3"]
    # The core checks the pydantic schema too, as warnings, only where it cannot overrule.
    warnings = [(w.index, w.error.code) for w in events if isinstance(w, CallWarning)]
    assert warnings == ([(0, "schema-violation")] if policy == "warn" else [])


def test_core_options_reach_the_core() -> None:
    first = (
        OpenAIChatScript()
        .call("c1", "lookup", '{"q": "paris"}', pieces=4)
        .call("c2", "lookup", '{"q": "' + "x" * 60 + '"}')
        .finish("tool_calls")
        .reply()
    )
    second = OpenAIChatScript().text("ok").finish().reply()

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([first, second]) as (model, _):
            runner = ToolRunner(
                model,
                [Tool("lookup", lambda q: "r", QUERY)],
                limits=Limits(max_argument_chars=40),
                watch_strings={"lookup": ["/q"]},
                partial_arguments=False,
            )
            assert runner._stitch_options["partial_arguments"] is False
            result = await runner.run(["go"])
            return await consume(result), result

    events, result = arun(main())
    grown = "".join(
        e.value for e in events if isinstance(e, ArgumentsValue) and e.index == 0 and not e.done
    )
    assert grown == "paris"
    [gone] = [e for e in events if isinstance(e, CallDiscarded)]
    assert (gone.id, gone.error.code) == ("c2", "limit-exceeded")
    assert [r.is_error for r in result.tool_turns[0].results] == [False, True]
    with pytest.raises(ValueError, match="on_schema_violation"):
        ToolRunner(object(), [], on_schema_violation="ignore")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ToolRunner(object(), [], watch_strings={"lookup": "/q"})  # type: ignore[arg-type]


def test_run_reads_a_history_in_the_models_wire_format_and_the_error_hook_speaks() -> None:
    def boom(q: str) -> str:
        raise RuntimeError("secret path /etc/x")

    first = OpenAIChatScript().call("c1", "boom", '{"q": "a"}').finish("tool_calls").reply()
    second = OpenAIChatScript().text("Done.").finish().reply()
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "go"},
    ]

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([first, second]) as (model, server):
            runner = ToolRunner(
                model,
                [Tool("boom", boom, QUERY)],
                error_message=lambda exc, call: f"{call.name} is down; try later",
            )
            result = await runner.run(history)
            return await consume(result), result, server

    events, result, server = arun(main())
    assert server.requests[0].json["messages"][:2] == history  # read, then written back alike
    (ready,) = [e for e in events if isinstance(e, ToolResultReady)]
    assert ready.result.content == "Error: boom is down; try later"
    assert ready.failure is not None
    assert "secret path" in ready.failure.traceback
    assert "secret path" not in json.dumps(server.requests[1].json)
    assert result.final_text == "Done."


def test_calls_a_server_left_in_the_text_run_with_text_format() -> None:
    # An OpenAI-compatible server whose own parser was off: the call arrives in `content`.
    ran: list[dict[str, Any]] = []

    def search(q: str) -> str:
        ran.append({"q": q})
        return "found"

    call = '<tool_call>\n{"name": "search", "arguments": {"q": "cats"}}\n</tool_call>'
    first = OpenAIChatScript().text("Looking. ").text(call).finish("stop").reply()
    second = OpenAIChatScript().text("Cats found.").finish().reply()

    async def main() -> tuple[RunResult, list[Event], ScriptedServer]:
        async with openai_model([first, second]) as (model, server):
            runner = ToolRunner(model, [Tool("search", search, QUERY)], text_format="hermes")
            result = await runner.run(["find cats"])
            return result, await consume(result), server

    result, events, server = arun(main())
    assert ran == [{"q": "cats"}]
    assert result.final_text == "Cats found."
    sent = server.requests[1].json["messages"][-2]
    assert sent["content"] == "Looking. "
    assert [c["function"]["name"] for c in sent["tool_calls"]] == ["search"]
    assert any(getattr(e, "error", None) and e.error.code == "quirk-call-in-text" for e in events)
