"""Faults cost nothing (issue 12): the runner under the faults a production agent meets,
through the real ``openai`` / ``anthropic`` clients over ``ScriptedServer``.

Each test is one fault: a tool that raises a ``BaseException``, a response cut before its
end marker, names and text no provider accepts, a consumer that walks away, a tool that
hangs or ignores cancellation, and the bounds of a run (timeouts, result size, buffer).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import pytest

from test_runner import QUERY, anthropic_model, arun, consume, openai_model
from toolstitch import Event, TextDelta
from toolstitch.runner import (
    STOP_REASONS,
    RunFailed,
    RunFinished,
    RunResult,
    RunWarning,
    Tool,
    ToolDropped,
    ToolResultReady,
    ToolRunner,
)
from toolstitch.runner._send import encodable_value
from toolstitch.testing import AnthropicScript, OpenAIChatScript, Reply, ScriptedServer

EMPTY = {"type": "object", "properties": {}}


def answer() -> Reply:
    return OpenAIChatScript().text("Done.").finish().reply()


def finals(events: list[Event]) -> list[RunFinished]:
    return [e for e in events if isinstance(e, RunFinished)]


def results(events: list[Event]) -> dict[str, ToolResultReady]:
    return {e.result.call_id: e for e in events if isinstance(e, ToolResultReady)}


def cut(reply: Reply) -> Reply:
    """``reply`` without its last step (``data: [DONE]`` of an OpenAI script)."""
    return Reply(steps=reply.steps[:-1], status=reply.status)


# -- (a) a BaseException from a tool is that call's error result ----------------------------


def test_base_exceptions_from_tools_become_error_results() -> None:
    def leave() -> str:
        sys.exit(2)

    def interrupt() -> str:
        raise KeyboardInterrupt

    async def cancel_itself() -> str:
        raise asyncio.CancelledError

    async def fine() -> str:
        return "ok"

    tools = [
        Tool("leave", leave, EMPTY),
        Tool("interrupt", interrupt, EMPTY),
        Tool("cancel_itself", cancel_itself, EMPTY, early=True),
        Tool("fine", fine, EMPTY),
    ]
    first = (
        OpenAIChatScript()
        .call("c1", "leave", "{}")
        .call("c2", "interrupt", "{}")
        .call("c3", "cancel_itself", "{}")
        .call("c4", "fine", "{}")
        .finish("tool_calls")
        .reply()
    )

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([first, answer()]) as (model, _):
            result = await ToolRunner(model, tools).run(["go"])
            return await consume(result), result

    events, result = arun(main())
    got = results(events)
    assert {cid: got[cid].code for cid in got} == {
        "c1": "tool-exception",
        "c2": "tool-exception",
        "c3": "tool-exception",
        "c4": None,
    }
    assert "SystemExit" in got["c1"].result.content
    assert "KeyboardInterrupt" in got["c2"].result.content
    assert "CancelledError" in got["c3"].result.content
    assert result.stop_reason == "completed"
    assert len(finals(events)) == 1


def test_cancelling_the_run_itself_still_cancels() -> None:
    started = asyncio.Event()
    never = asyncio.Event()

    async def wait() -> str:
        started.set()
        await never.wait()
        return "late"

    first = OpenAIChatScript().call("c1", "wait", "{}").finish("tool_calls").reply()

    async def main() -> RunResult:
        async with openai_model([first]) as (model, _):
            result = await ToolRunner(model, [Tool("wait", wait, EMPTY)]).run(["go"])
            task = asyncio.create_task(consume(result))
            await started.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return result

    result = arun(main())
    assert result.stop_reason == "cancelled"
    assert result.done


# -- (b) a response without its end marker is a truncated round ----------------------------


def test_a_response_cut_before_its_end_marker_is_truncated_and_runs_nothing() -> None:
    ran: list[str] = []
    started = asyncio.Event()

    async def lookup(q: str) -> str:
        ran.append(f"lookup {q}")
        started.set()
        return "hits"

    async def book(q: str) -> str:
        ran.append(f"book {q}")
        return "booked"

    tools = [Tool("lookup", lookup, QUERY, early=True), Tool("book", book, QUERY)]
    # No finish_reason, no [DONE]: the connection just closes.
    first = cut(
        OpenAIChatScript()
        .text("Looking")
        .call("c1", "lookup", '{"q": "a"}')
        .hold(started, label="until lookup started")
        .call("c2", "book", '{"q": "b"}')
        .reply()
    )

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([first]) as (model, server):
            result = await ToolRunner(model, tools).run(["go"])
            return await consume(result), result, server

    events, result, server = arun(main())
    assert server.timeouts == []
    assert ran == ["lookup a"]  # the early tool ran; the late one never does
    dropped = [e.call.id for e in events if isinstance(e, ToolDropped)]
    assert dropped == ["c1"]
    assert result.stop_reason == "truncated"
    assert result.tool_turns == []
    assert result.final_text == ""
    assert result.messages == [result.messages[0]]  # nothing committed
    assert result.pending is not None
    assert result.pending.text == "Looking"
    assert [e.stop_reason for e in finals(events)] == ["truncated"]
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply(steps=[]),
        Reply(steps=[b"<html><body>Gateway</body></html>"], content_type="text/html"),
        Reply(steps=[b"<html><body>Gateway</body></html>"]),
    ],
    ids=["empty", "html", "html-as-sse"],
)
def test_an_empty_or_html_200_body_is_not_a_completed_run(reply: Reply) -> None:
    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([reply]) as (model, _):
            result = await ToolRunner(model, []).run(["go"])
            return await consume(result), result

    events, result = arun(main())
    assert result.stop_reason == "truncated"
    assert len(finals(events)) == 1


@pytest.mark.parametrize("ending", ["no-message-delta", "no-message-stop"])
def test_anthropic_stream_without_message_stop_is_truncated(ending: str) -> None:
    ran: list[str] = []

    def book(q: str) -> str:
        ran.append(q)
        return "booked"

    script = AnthropicScript().text("Sure").call("t1", "book", '{"q": "x"}')
    if ending == "no-message-delta":
        first = script.reply()
    else:  # the stop_reason came, the message_stop did not
        first = cut(script.finish("tool_use").reply())

    async def main() -> tuple[list[Event], RunResult]:
        async with anthropic_model([first]) as (model, _):
            result = await ToolRunner(model, [Tool("book", book, QUERY)]).run(["go"])
            return await consume(result), result

    events, result = arun(main())
    assert ran == []
    assert result.stop_reason == "truncated"
    assert [e.stop_reason for e in finals(events)] == ["truncated"]


# -- (c) names and text sent back are always accepted --------------------------------------


def test_unknown_names_and_lone_surrogates_are_made_sendable() -> None:
    def lookup(q: str) -> str:
        return "bad \ud800 half"

    script = (
        OpenAIChatScript()
        .call("c1", "functions.lookup", '{"q": "a"}')
        .call("c2", "lookup", '{"q": "b"}')
        .finish("tool_calls")
        .reply()
    )
    # A text delta with a lone surrogate, escaped in the JSON (as a proxy may send it).
    text = (
        b'data: {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m", '
        b'"choices": [{"index": 0, "delta": {"content": "Let me \\ud83d look"}}]}\n\n'
    )
    first = Reply(steps=[text, *script.steps])

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([first, answer()]) as (model, server):
            result = await ToolRunner(model, [Tool("lookup", lookup, QUERY)]).run(["go"])
            return await consume(result), result, server

    events, result, server = arun(main())
    assert result.stop_reason == "completed"
    sent = server.requests[1].json["messages"]
    assert sent[1]["content"] == "Let me \ufffd look"
    assert [c["function"]["name"] for c in sent[1]["tool_calls"]] == ["unknown_tool", "lookup"]
    assert sent[3]["content"] == "bad \ufffd half"
    got = results(events)
    assert got["c1"].name == "functions.lookup"  # the original, kept in the event
    codes = {w.code for w in result.warnings}
    assert "lone-surrogate" in codes
    assert any(isinstance(e, RunWarning) and e.code == "lone-surrogate" for e in events)


# -- (d) an abandoned stream starts no new tool --------------------------------------------


def test_a_consumer_that_breaks_out_starts_no_late_tool() -> None:
    ran: list[str] = []

    def lookup(q: str) -> str:
        ran.append(f"lookup {q}")
        return "hits"

    def book(q: str) -> str:
        ran.append(f"book {q}")
        return "booked"

    tools = [Tool("lookup", lookup, QUERY, early=True), Tool("book", book, QUERY)]
    first = (
        OpenAIChatScript()
        .text("ok")
        .call("c1", "lookup", '{"q": "a"}')
        .call("c2", "book", '{"q": "b"}')
        .finish("tool_calls")
        .reply()
    )

    async def main() -> tuple[RunResult, list[str]]:
        async with openai_model([first, answer()]) as (model, server):
            result = await ToolRunner(model, tools).run(["go"])
            async for _ in result.stream:
                break  # and keep ``result``, without aclose
            for _ in range(200):  # let the round read the whole response
                if any(text.endswith(": sent") for _, text in server.log):
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)
            seen = list(ran)
            await result.aclose()
            return result, seen

    result, seen = arun(main())
    assert seen == []
    assert ran == []
    assert result.stop_reason == "cancelled"


# -- (e) sync tools on the runner's pool; deadlines; abandoned tools ------------------------


def test_a_hung_sync_tool_is_answered_at_its_deadline_and_abandoned() -> None:
    release = threading.Event()
    names: list[str] = []

    def hang() -> str:
        names.append(threading.current_thread().name)
        release.wait(30)
        return "late"

    first = OpenAIChatScript().call("c1", "hang", "{}").finish("tool_calls").reply()

    async def main() -> tuple[list[Event], RunResult, ScriptedServer, int]:
        async with openai_model([first, answer()]) as (model, server):
            runner = ToolRunner(model, [Tool("hang", hang, EMPTY)], tool_timeout=0.2)
            result = await runner.run(["go"])
            events = await consume(result)
            count = runner.abandoned_threads
            release.set()
            runner.close()
            return events, result, server, count

    events, result, server, count = arun(main())
    got = results(events)["c1"]
    assert got.code == "tool-timeout"
    assert got.abandoned
    assert [c.id for c in result.abandoned] == ["c1"]
    assert count == 1
    assert names[0].startswith("toolstitch-tool")  # not the loop's default executor
    assert result.stop_reason == "completed"
    assert "tool-timeout" in server.requests[1].json["messages"][-1]["content"]


def test_an_async_tool_that_ignores_cancellation_is_abandoned_not_awaited() -> None:
    release = asyncio.Event()
    finished: list[str] = []

    async def stubborn() -> str:
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                continue  # ignores cancellation
        finished.append("late")
        return "late value"

    first = OpenAIChatScript().call("c1", "stubborn", "{}").finish("tool_calls").reply()

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([first, answer()]) as (model, server):
            runner = ToolRunner(model, [Tool("stubborn", stubborn, EMPTY)], tool_timeout=0.2)
            result = await runner.run(["go"])
            events = await consume(result)
            assert finished == []  # the run ended while the tool still ran
            release.set()
            await asyncio.sleep(0)
            return events, result, server

    events, result, server = arun(main())
    got = results(events)["c1"]
    assert got.code == "tool-timeout"
    assert got.abandoned
    assert result.stop_reason == "completed"
    assert "late value" not in str(server.requests[1].json)


def test_waiting_for_a_thread_does_not_count_against_the_timeout() -> None:
    gate = threading.Event()  # never set: each slow call takes its 0.6 s

    def slow() -> str:
        gate.wait(0.6)
        return "slow"

    def quick() -> str:
        return "quick"

    tools = [Tool("slow", slow, EMPTY), Tool("quick", quick, EMPTY)]
    first = (
        OpenAIChatScript()
        .call("c1", "slow", "{}")
        .call("c2", "slow", "{}")
        .call("c3", "quick", "{}")
        .finish("tool_calls")
        .reply()
    )

    async def main() -> list[Event]:
        async with openai_model([first, answer()]) as (model, _):
            runner = ToolRunner(model, tools, tool_timeout=1.0, max_threads=1)
            events = await consume(await runner.run(["go"]))
            runner.close()
            return events

    got = results(arun(main()))
    # c3 waited about 1.2 s for the one thread, longer than its timeout, and still ran.
    assert [got[c].code for c in ("c1", "c2", "c3")] == [None, None, None]


# -- (f) every run ends with a stop reason; bounds ------------------------------------------


def test_stop_reason_is_set_after_aclose_before_and_while_iterating() -> None:
    first = OpenAIChatScript().text("Hello there").finish().reply()

    async def main() -> tuple[RunResult, RunResult]:
        async with openai_model([first, first]) as (model, _):
            runner = ToolRunner(model, [])
            untouched = await runner.run(["go"])
            await untouched.aclose()
            halfway = await runner.run(["go"])
            async for _ in halfway.stream:
                break
            await halfway.aclose()
            return untouched, halfway

    untouched, halfway = arun(main())
    assert (untouched.stop_reason, halfway.stop_reason) == ("cancelled", "cancelled")
    assert untouched.done
    assert halfway.done


def test_a_raising_callback_ends_the_run_with_error_once() -> None:
    def on_tool_turns(turns: list[Any]) -> None:
        raise RuntimeError("audit log down")

    first = OpenAIChatScript().call("c1", "lookup", '{"q": "a"}').finish("tool_calls").reply()

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([first, answer()]) as (model, _):
            tools = [Tool("lookup", lambda q: "r", QUERY)]
            result = await ToolRunner(model, tools).run(["go"], on_tool_turns=on_tool_turns)
            return await consume(result), result

    events, result = arun(main())
    assert result.stop_reason == "error"
    assert isinstance(result.error, RuntimeError)
    assert [type(e) for e in events[-2:]] == [RunFailed, RunFinished]
    assert len(finals(events)) == 1


def test_a_raising_early_should_execute_ends_the_round_before_the_stream_ends() -> None:
    release = asyncio.Event()

    def should_execute(call: Any) -> bool:
        raise KeyError("policy store down")

    tools = [Tool("lookup", lambda q: "r", QUERY, early=True)]
    first = (
        OpenAIChatScript()
        .call("c1", "lookup", '{"q": "x"}')
        .hold(release, label="held until the test ends")
        .finish("tool_calls")
        .reply()
    )

    async def main() -> tuple[list[Event], RunResult, ScriptedServer]:
        async with openai_model([first]) as (model, server):
            result = await ToolRunner(model, tools).run(["go"], should_execute=should_execute)
            events = await consume(result)
            release.set()
            return events, result, server

    events, result, server = arun(main())
    assert server.timeouts == []  # the run ended while the stream was held
    assert result.stop_reason == "error"
    assert isinstance(result.error, KeyError)
    assert len(finals(events)) == 1


def test_round_timeout_ends_a_held_stream_with_timeout() -> None:
    never = asyncio.Event()
    first = OpenAIChatScript().text("thinking").hold(never, timeout=5).finish().reply()

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([first]) as (model, _):
            result = await ToolRunner(model, [], round_timeout=0.3).run(["go"])
            events = await consume(result)
            never.set()
            return events, result

    events, result = arun(main())
    assert result.stop_reason == "timeout"
    assert [e.stop_reason for e in finals(events)] == ["timeout"]


def test_a_slow_async_should_execute_is_a_refusal_at_its_deadline() -> None:
    never = asyncio.Event()

    async def should_execute(call: Any) -> bool:
        await never.wait()
        return True

    first = OpenAIChatScript().call("c1", "lookup", '{"q": "a"}').finish("tool_calls").reply()

    async def main() -> RunResult:
        async with openai_model([first]) as (model, _):
            tools = [Tool("lookup", lambda q: "r", QUERY)]
            runner = ToolRunner(model, tools, approval_timeout=0.2)
            result = await runner.run(["go"], should_execute=should_execute)
            await result.collect()
            never.set()
            return result

    result = arun(main())
    assert result.stop_reason == "refused"
    assert [c.id for c in result.refused] == ["c1"]
    assert [w.code for w in result.warnings] == ["approval-timeout"]


def test_a_blocking_sync_should_execute_holds_neither_the_loop_nor_past_its_deadline() -> None:
    release = threading.Event()
    ticks: list[int] = []

    def should_execute(call: Any) -> bool:
        release.wait(30)  # a prompt nobody answers
        return True

    async def ticker() -> None:
        while not release.is_set():
            ticks.append(1)
            await asyncio.sleep(0.01)

    first = OpenAIChatScript().call("c1", "lookup", '{"q": "a"}').finish("tool_calls").reply()

    async def main() -> RunResult:
        async with openai_model([first]) as (model, _):
            tools = [Tool("lookup", lambda q: "r", QUERY)]
            runner = ToolRunner(model, tools, approval_timeout=0.3)
            ticking = asyncio.create_task(ticker())
            result = await runner.run(["go"], should_execute=should_execute)
            await result.collect()
            release.set()
            await ticking
            runner.close()
            return result

    result = arun(main())
    assert result.stop_reason == "refused"
    assert [w.code for w in result.warnings] == ["approval-timeout"]
    assert len(ticks) >= 5  # the loop went on while the approver blocked


def test_long_results_are_cut_with_a_note_and_a_small_buffer_still_flows() -> None:
    first = OpenAIChatScript().call("c1", "lookup", '{"q": "a"}').finish("tool_calls").reply()

    async def main() -> tuple[RunResult, ScriptedServer]:
        async with openai_model([first, answer()]) as (model, server):
            tools = [Tool("lookup", lambda q: "x" * 50, QUERY)]
            runner = ToolRunner(model, tools, max_result_chars=10, event_buffer=1)
            result = await (await runner.run(["go"])).collect()
            return result, server

    result, server = arun(main())
    content = server.requests[1].json["messages"][-1]["content"]
    assert content.startswith("x" * 10 + "\n[toolstitch: this result was 50 characters")
    assert [w.code for w in result.warnings] == ["result-truncated"]
    assert result.stop_reason == "completed"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_stop_reasons_are_the_documented_set() -> None:
    assert set(STOP_REASONS) == {
        "completed",
        "refused",
        "max-rounds",
        "truncated",
        "error",
        "cancelled",
        "timeout",
    }


# -- item 2: the tool turn sent back is StitchResult.message() -----------------------------


def test_anthropic_thinking_block_goes_back_signed_on_round_two() -> None:
    first = (
        AnthropicScript()
        .thinking("I should look it up.", signature="sig-1")
        .call("t1", "lookup", '{"q": "a"}')
        .finish("tool_use")
        .reply()
    )
    second = AnthropicScript().text("Done.").finish().reply()

    async def main() -> tuple[RunResult, ScriptedServer]:
        async with anthropic_model([first, second]) as (model, server):
            tools = [Tool("lookup", lambda q: "r", QUERY)]
            result = await (await ToolRunner(model, tools).run(["go"])).collect()
            return result, server

    result, server = arun(main())
    assert result.stop_reason == "completed"
    assistant = server.requests[1].json["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "I should look it up.",
        "signature": "sig-1",
    }
    assert assistant["content"][1]["type"] == "tool_use"
    assert result.tool_turns[0].assistant.reasoning[0].signature == "sig-1"


def test_text_past_max_text_chars_stops_the_round_as_truncated() -> None:
    first = OpenAIChatScript().text("a" * 30, pieces=3).text("b" * 30).finish().reply()

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([first]) as (model, _):
            result = await ToolRunner(model, [], max_text_chars=15).run(["go"])
            return await consume(result), result

    events, result = arun(main())
    assert result.stop_reason == "truncated"
    assert [w.code for w in result.warnings] == ["text-truncated"]
    assert "b" not in "".join(e.text for e in events if isinstance(e, TextDelta))
    assert len(finals(events)) == 1


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_encodable_arguments_replace_lone_surrogates_at_every_depth() -> None:
    value, count = encodable_value({"a": ["x\ud800", {"b\udc00": "ok \U0001f600"}], "n": 1})
    assert value == {"a": ["x\ufffd", {"b\ufffd": "ok \U0001f600"}], "n": 1}
    assert count == 2


def test_round_timeout_ends_a_stream_that_never_stops() -> None:
    # The stream keeps the queue full: the deadline is checked on the fast path too.
    first = OpenAIChatScript().text("x", pieces=1).hold(asyncio.Event(), timeout=3).reply()

    async def main() -> RunResult:
        async with openai_model([first]) as (model, _):
            result = await ToolRunner(model, [], round_timeout=0.2).run(["go"])
            async for _ in result.stream:
                await asyncio.sleep(0.05)  # a slow consumer
            return result

    assert arun(main()).stop_reason == "timeout"


def test_many_concurrent_runs_each_end_once_and_leave_no_task() -> None:
    release = threading.Event()

    def hang() -> str:
        release.wait(10)
        return "late"

    def fail() -> str:
        raise ValueError("boom")

    async def slow() -> str:
        await asyncio.sleep(0.01)
        return "slow"

    tools = [Tool("hang", hang, EMPTY), Tool("fail", fail, EMPTY), Tool("slow", slow, EMPTY)]
    runs = 24

    def script(n: int) -> Reply:
        name = ("hang", "fail", "slow")[n % 3]
        return OpenAIChatScript().call(f"c{n}", name, "{}").finish("tool_calls").reply()

    async def main() -> tuple[list[list[Event]], int, int]:
        replies = [script(n) for n in range(runs)] + [answer() for _ in range(runs)]
        async with openai_model(replies) as (model, _):
            runner = ToolRunner(model, tools, tool_timeout=0.3, max_threads=runs)
            before = asyncio.all_tasks()

            async def one() -> list[Event]:
                return await consume(await runner.run(["go"]))

            streams = await asyncio.gather(*(one() for _ in range(runs)))
            abandoned = runner.abandoned_threads
            release.set()
            runner.close()
            for _ in range(20):  # let finalizers (async generators closing) run
                await asyncio.sleep(0.01)
            left = len(asyncio.all_tasks() - before)
            return streams, abandoned, left

    streams, abandoned, left = arun(main())
    for events in streams:
        assert len(finals(events)) == 1
        assert finals(events)[0].stop_reason == "completed"
        assert len(results(events)) == 1  # every call answered exactly once
    assert abandoned == runs // 3  # the hung ones, one thread each, all reported
    assert left == 0
