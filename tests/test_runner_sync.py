"""``ToolRunner.run_sync`` with the real SDK clients (sync and async) over loopback HTTP.

The scripted server runs in a thread of its own (``with ScriptedServer(...)``), so the test
itself is plain sync code, as a user's would be. Every test checks that the run's thread
(and the model's stream reader) is gone when the run is over or closed.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest

from toolstitch import CallReady, TextDelta
from toolstitch.runner import (
    AnthropicModel,
    Model,
    OpenAIChatModel,
    RoundStarted,
    RunFinished,
    SyncRunResult,
    Tool,
    ToolResultReady,
    ToolRunner,
    ToolStarted,
)
from toolstitch.runner._sync import IN_LOOP
from toolstitch.testing import AnthropicScript, OpenAIChatScript, Reply, ScriptedServer

if TYPE_CHECKING:
    import anthropic
    import openai
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import anthropic, openai

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ANSWER = "18 °C in Paris."
OURS = ("toolstitch-run-sync", "toolstitch-model-stream")


def ours() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(OURS)]


def run_threads() -> list[threading.Thread]:
    """The runs' own threads: gone as soon as ``close()`` returns or the stream ended."""
    return [t for t in threading.enumerate() if t.name.startswith(OURS[0])]


def settled() -> list[threading.Thread]:
    """Our threads left once a sync client's reader finished the read it was in (it is
    closed by the reader after that read: see ``_models._threaded``)."""
    for thread in ours():
        thread.join(10.0)
    return ours()


def chat_rounds() -> list[Reply]:
    return [
        OpenAIChatScript()
        .call("call_1", "get_weather", '{"city": "Paris"}', pieces=3)
        .finish("tool_calls")
        .reply(),
        OpenAIChatScript().text(ANSWER, pieces=3).finish().reply(),
    ]


def anthropic_rounds() -> list[Reply]:
    return [
        AnthropicScript()
        .call("toolu_1", "get_weather", '{"city": "Paris"}', pieces=2)
        .finish("tool_use")
        .reply(),
        AnthropicScript().text(ANSWER, pieces=3).finish().reply(),
    ]


@contextmanager
def model_for(provider: str, sync: bool, server: ScriptedServer) -> Iterator[Model]:
    """The real SDK client (sync or async) of ``provider`` against ``server``."""
    client: Any
    if provider == "openai":
        kind = openai.OpenAI if sync else openai.AsyncOpenAI
        client = kind(base_url=server.openai_base_url, api_key="t", max_retries=0)
        model: Model = OpenAIChatModel(client, "gpt-test")
    else:
        akind = anthropic.Anthropic if sync else anthropic.AsyncAnthropic
        client = akind(base_url=server.anthropic_base_url, api_key="t", max_retries=0)
        model = AnthropicModel(client, "claude-test")
    try:
        yield model
    finally:
        if sync:
            client.close()
        else:
            asyncio.run(client.close())


def weather_tool(calls: list[str]) -> Tool:
    def weather(city: str) -> str:
        calls.append(city)
        return f"18 °C in {city}"

    return Tool("get_weather", weather, CITY, description="Current weather.")


ROUNDS: dict[str, Callable[[], list[Reply]]] = {
    "openai": chat_rounds,
    "anthropic": anthropic_rounds,
}


@pytest.mark.parametrize("provider", sorted(ROUNDS))
@pytest.mark.parametrize("sync", [True, False], ids=["sync-client", "async-client"])
def test_run_sync_two_rounds(provider: str, sync: bool) -> None:
    calls: list[str] = []
    with ScriptedServer(ROUNDS[provider]()) as server, model_for(provider, sync, server) as model:
        runner = ToolRunner(model, [weather_tool(calls)])
        result = runner.run_sync("Weather in Paris?")
        assert isinstance(result, SyncRunResult)
        events = list(result.stream)
        runner.close()
        requests = [r.json for r in server.requests]
    kinds = [type(e) for e in events]
    assert kinds.count(RoundStarted) == 2
    assert kinds.index(ToolStarted) < kinds.index(ToolResultReady) < kinds.index(TextDelta)
    assert isinstance(events[-1], RunFinished)
    assert events[-1].stop_reason == "completed"
    assert result.stop_reason == "completed"
    assert result.final_text == ANSWER
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ANSWER
    assert calls == ["Paris"]
    assert [r.content for r in result.tool_turns[0].results] == ["18 °C in Paris"]
    assert len(result.messages) == 4  # question, calls, result, answer
    assert "18 °C in Paris" in json.dumps(requests[1], ensure_ascii=False)
    assert settled() == []


def held_round(release: threading.Event) -> Reply:
    """A call, then the response held open (never finished while the test reads)."""
    return (
        OpenAIChatScript()
        .call("call_1", "get_weather", '{"city": "Paris"}')
        .hold(release, label="until the test ends", timeout=10.0)
        .finish("tool_calls")
        .reply()
    )


def close_by(how: str, result: SyncRunResult) -> None:
    if how == "close":
        result.close()
    elif how == "with":
        with result:
            pass
    else:
        stream = result.stream
        del result, stream


@pytest.mark.parametrize("how", ["close", "with", "gc"])
def test_closing_early_cancels_the_run(how: str) -> None:
    release = threading.Event()
    calls: list[str] = []
    with ScriptedServer([held_round(release)]) as server, model_for("openai", True, server) as m:
        runner = ToolRunner(m, [weather_tool(calls)])
        result = runner.run_sync("Weather in Paris?")
        seen = []
        for event in result.stream:
            seen.append(event)
            if isinstance(event, CallReady):
                break
        inner = result.run_result
        close_by(how, result)
        del result
        gc.collect()
        assert run_threads() == []
        assert inner.stop_reason == "cancelled"
        release.set()
        assert settled() == []
        runner.close()
        assert len(server.requests) == 1
    assert inner.stop_reason == "cancelled"
    assert calls == []  # the call was complete, but nothing ran after the close
    assert isinstance(seen[-1], CallReady)


def test_misuse_is_a_clear_error() -> None:
    with (
        ScriptedServer(chat_rounds() + chat_rounds()) as server,
        model_for("openai", True, server) as model,
    ):
        runner = ToolRunner(model, [weather_tool([])])
        result = runner.run_sync("Weather in Paris?").collect()
        with pytest.raises(RuntimeError, match=r"iterated only once.*run_sync"):
            iter(result.stream)
        closed = runner.run_sync("Weather in Paris?")
        next(closed.stream)
        closed.close()
        with pytest.raises(RuntimeError, match=r"closed.*run_sync"):
            next(closed.stream)
        runner.close()
    assert result.stop_reason == "completed"
    assert closed.stop_reason == "cancelled"
    assert settled() == []


def test_an_error_opening_the_run_is_raised() -> None:
    with ScriptedServer([]) as server, model_for("openai", True, server) as model:
        runner = ToolRunner(model, [weather_tool([])])
        with pytest.raises(openai.APIStatusError):
            runner.run_sync("Weather in Paris?")
        runner.close()
    assert settled() == []


def test_from_a_worker_thread_of_a_running_loop() -> None:
    """Another thread runs an event loop; run_sync from its worker thread works, and
    from the loop's own thread it refuses, naming ``await runner.run(...)``."""
    calls: list[str] = []
    with ScriptedServer(chat_rounds()) as server, model_for("openai", True, server) as model:
        runner = ToolRunner(model, [weather_tool(calls)])

        def work() -> tuple[str | None, str]:
            result = runner.run_sync("Weather in Paris?").collect()
            return result.stop_reason, result.final_text

        async def main() -> tuple[str | None, str]:
            with pytest.raises(RuntimeError) as refused:
                runner.run_sync("Weather in Paris?")
            assert str(refused.value) == IN_LOOP
            assert "await runner.run(...)" in IN_LOOP
            return await asyncio.to_thread(work)

        assert asyncio.run(main()) == ("completed", ANSWER)
        runner.close()
    assert calls == ["Paris"]
    assert settled() == []


def test_an_async_client_serves_run_after_run() -> None:
    """Each run has a loop of its own; the same async client serves the next one too."""
    calls: list[str] = []
    with (
        ScriptedServer(chat_rounds() + chat_rounds()) as server,
        model_for("openai", False, server) as model,
    ):
        runner = ToolRunner(model, [weather_tool(calls)])
        answers = [runner.run_sync("Weather in Paris?").collect().final_text for _ in range(2)]
        runner.close()
    assert answers == [ANSWER, ANSWER]
    assert calls == ["Paris", "Paris"]
    assert settled() == []


def test_closing_from_another_thread_wakes_its_reader() -> None:
    release = threading.Event()
    calls: list[str] = []
    with ScriptedServer([held_round(release)]) as server, model_for("openai", True, server) as m:
        runner = ToolRunner(m, [weather_tool(calls)])
        result = runner.run_sync("Weather in Paris?")
        ready = threading.Event()
        ended: list[str] = []

        def read() -> None:
            try:
                for event in result.stream:
                    if isinstance(event, CallReady):
                        ready.set()  # the next read waits for the held response
            except RuntimeError as exc:  # the close came before that read began
                ended.append(str(exc))
            else:
                ended.append("end")

        reader = threading.Thread(target=read)
        reader.start()
        assert ready.wait(10.0)
        result.close()
        reader.join(10.0)
        alive = reader.is_alive()
        release.set()
        assert settled() == []
        runner.close()
    assert not alive
    assert len(ended) == 1
    assert result.stop_reason == "cancelled"
    assert calls == []
