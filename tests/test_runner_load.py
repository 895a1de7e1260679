"""The runner under load (issue 12): 200 concurrent runs of four providers, through the real
``openai``, ``anthropic`` and ``google-genai`` clients over ``ScriptedServer``, with quick,
slow, failing and hung tools - and nothing left behind.

One load is 200 runs, 50 per model (OpenAI Chat, OpenAI Responses, Anthropic, Gemini), all
at once on one event loop. Each run's first response is one of five scripts, in turn:

* three calls: a quick sync tool, a slow async one and one that raises;
* a sync tool that blocks past ``tool_timeout`` (its thread abandoned) and a quick one;
* an async tool that ignores cancellation (its task abandoned) and an early tool;
* a call cut before the response's end marker (the run is ``"truncated"``);
* a plain answer (``"completed"`` at once).

The second response of a tool run is the answer, except for three runs per model whose
second request gets an HTTP 500 (``"error"``). The servers give the round-1 replies before
any round-2 one (``run`` opens every first model call before the runs are consumed), so the
counts are exact, whatever the order of the runs.

The memory check runs the load a second time, smaller (10 runs per model: tracemalloc makes
it several times slower), under ``tracemalloc``: what it leaves allocated after ``gc`` must
stay under ``RETAINED_BOUND`` (512 KiB).

Measured on the development machine (2 shared cores, Python 3.11): 200 runs, 280 tool calls
answered (40 cut calls never run), one load in about 7 s (the measured one of 40 runs in
about 5 s under tracemalloc), at most 56 threads (the 40 hung ones among them) and about 400
file descriptors more than before (one socket per open stream, both ends on loopback), 40
threads abandoned and reported, about 70 KiB retained by the second load. The test prints
its own figures (``pytest -s``).
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from toolstitch import Event
from toolstitch.messages import AssistantMessage, ToolResult
from toolstitch.runner import (
    STOP_REASONS,
    AnthropicModel,
    GeminiModel,
    Model,
    OpenAIChatModel,
    OpenAIResponsesModel,
    RunFailed,
    RunFinished,
    RunResult,
    Tool,
    ToolResultReady,
    ToolRunner,
)
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

EMPTY = {"type": "object", "properties": {}}
PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini")
RUNS_PER_MODEL = int(os.environ.get("LOAD_RUNS", "50"))
KINDS = 5  # the five first responses, in turn
#: The second load, under tracemalloc (which makes it several times slower), is smaller.
MEASURED_PER_MODEL = 10
ERRORS_PER_MODEL = 3  # second requests answered with an HTTP 500
TOOL_TIMEOUT = 0.2
#: The most the second load may leave allocated (tracemalloc, after gc): caches warmed by the
#: first load stay, so what remains is what a load leaks.
RETAINED_BOUND = 512 * 1024

#: The calls of each first response: (tool name, early?) per call; None for the answer.
CALLS: dict[int, tuple[str, ...]] = {
    0: ("quick", "slow", "fail"),
    1: ("hang", "quick"),
    2: ("stubborn", "early"),
    3: ("quick",),  # cut before its end marker
    4: (),
}


@dataclass
class Release:
    """What the hung tools wait for; set once the load has been looked at."""

    thread: threading.Event = field(default_factory=threading.Event)
    task: asyncio.Event = field(default_factory=asyncio.Event)


def tools(release: Release) -> list[Tool]:
    def quick() -> str:
        return "quick"

    async def slow() -> str:
        await asyncio.sleep(0.02)
        return "slow"

    def fail() -> str:
        raise ValueError("boom")

    def hang() -> str:
        release.thread.wait(20)
        return "late"

    async def stubborn() -> str:
        while not release.task.is_set():
            try:
                await release.task.wait()
            except asyncio.CancelledError:
                continue  # ignores cancellation, as a badly written tool does
        return "late"

    async def early() -> str:
        return "early"

    return [
        Tool("quick", quick, EMPTY),
        Tool("slow", slow, EMPTY),
        Tool("fail", fail, EMPTY),
        Tool("hang", hang, EMPTY),
        Tool("stubborn", stubborn, EMPTY),
        Tool("early", early, EMPTY, early=True),
    ]


SCRIPTS: dict[str, Callable[[], Any]] = {
    "openai-chat": OpenAIChatScript,
    "openai-responses": OpenAIResponsesScript,
    "anthropic": AnthropicScript,
    "gemini": GeminiScript,
}
#: The finish of a response that calls tools, as each provider says it.
TOOL_FINISH: dict[str, tuple[str, ...]] = {
    "openai-chat": ("tool_calls",),
    "anthropic": ("tool_use",),
    "openai-responses": (),
    "gemini": (),
}


def first_reply(provider: str, kind: int, n: int) -> Reply:
    names = CALLS[kind]
    if not names:
        return answer(provider)
    script = SCRIPTS[provider]()
    for k, name in enumerate(names):
        if provider == "gemini":  # no ids: the core numbers the calls
            script.call(name, {})
        else:
            script.call(f"c{n}_{k}", name, "{}")
    if kind != 3:  # kind 3 is cut before its end marker
        script.finish(*TOOL_FINISH[provider])
    reply: Reply = script.reply()
    return reply


def answer(provider: str) -> Reply:
    reply: Reply = SCRIPTS[provider]().text("Done.").finish().reply()
    return reply


def replies(provider: str, per_model: int) -> list[Reply]:
    first = [first_reply(provider, n % KINDS, n) for n in range(per_model)]
    second = sum(1 for n in range(per_model) if n % KINDS in (0, 1, 2))
    failing = [Reply.json({"error": {"message": "overloaded"}}, status=500)] * ERRORS_PER_MODEL
    return first + failing + [answer(provider) for _ in range(second - ERRORS_PER_MODEL)]


def model_of(provider: str, server: ScriptedServer) -> tuple[Model, Callable[[], Any]]:
    """The model, and the coroutine function that closes its client."""
    if provider in ("openai-chat", "openai-responses"):
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="t", max_retries=0)
        kind = OpenAIChatModel if provider == "openai-chat" else OpenAIResponsesModel
        return kind(client, "test-model"), client.close
    if provider == "anthropic":
        claude = anthropic.AsyncAnthropic(
            base_url=server.anthropic_base_url, api_key="t", max_retries=0
        )
        return AnthropicModel(claude, "test-model", max_tokens=256), claude.close
    google = genai.Client(api_key="t", http_options={"base_url": server.gemini_base_url})
    return GeminiModel(google.aio, "test-model"), google.aio.aclose


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def extra_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads started since ``before``, but the event loop's own default executor
    (``asyncio_N``: name resolution for the SDK clients; ``asyncio.run`` joins it)."""
    return [
        t
        for t in threading.enumerate()
        if t not in before and t.is_alive() and not t.name.startswith("asyncio_")
    ]


async def until(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    """Poll ``condition`` (threads and tasks end on their own time) for up to ``seconds``."""
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        await asyncio.sleep(0.01)
    return True


@dataclass
class Figures:
    runs: int = 0
    calls: int = 0
    seconds: float = 0.0
    peak_threads: int = 0
    peak_fds: int = 0
    abandoned_threads: int = 0
    stops: Counter[str] = field(default_factory=Counter)


def check_run(events: list[Event], result: RunResult) -> int:
    """The invariants of one run; how many calls were answered."""
    _check_the_end(events, result)
    answered = Counter(
        (e.round, e.result.call_id) for e in events if isinstance(e, ToolResultReady)
    )
    assert set(answered.values()) <= {1}  # one ToolResultReady per call
    for turn in result.tool_turns:
        ids = [call.id for call in turn.tool_calls]
        assert [r.call_id for r in turn.results] == ids
        assert {k for r, k in answered if r == turn.round} == set(ids)
    _check_the_history(result)
    return len(answered)


def _check_the_end(events: list[Event], result: RunResult) -> None:
    """One ``RunFinished``, last, with the result's stop reason; a ``RunFailed`` iff an error."""
    finals = [e for e in events if isinstance(e, RunFinished)]
    assert len(finals) == 1  # ended once
    assert events[-1] is finals[0]  # and last
    assert finals[0].stop_reason == result.stop_reason in STOP_REASONS
    failed = [e for e in events if isinstance(e, RunFailed)]
    assert len(failed) == (result.stop_reason == "error")


def _check_the_history(result: RunResult) -> None:
    """The history answers every call it holds exactly once."""
    history_calls = [
        call.id for m in result.messages if isinstance(m, AssistantMessage) for call in m.tool_calls
    ]
    history_results = [m.call_id for m in result.messages if isinstance(m, ToolResult)]
    assert sorted(history_results) == sorted(history_calls)  # one result per call id
    assert len(set(history_results)) == len(history_results)


async def load(release: Release, figures: Figures, per_model: int = RUNS_PER_MODEL) -> None:
    """One load: ``per_model`` runs of each model at once; every invariant checked;
    everything closed."""
    if True:
        servers = [
            ScriptedServer(replies(p, per_model), max_requests=2 * per_model) for p in PROVIDERS
        ]
        for server in servers:
            await server.start()
        models = [model_of(p, s) for p, s in zip(PROVIDERS, servers, strict=True)]
        runners = [
            ToolRunner(model, tools(release), tool_timeout=TOOL_TIMEOUT, max_threads=64)
            for model, _ in models
        ]
        began = time.monotonic()
        results = await asyncio.gather(
            *(runner.run(["go"]) for runner in runners for _ in range(per_model))
        )
        streams = await asyncio.gather(*(consume(r) for r in results))
        figures.seconds = time.monotonic() - began
        figures.runs = len(results)
        figures.calls = sum(check_run(e, r) for e, r in zip(streams, results, strict=True))
        figures.stops = Counter(r.stop_reason for r in results if r.stop_reason)
        figures.abandoned_threads = sum(r.abandoned_threads for r in runners)
        for runner in runners:
            runner.close()
        for _, close in models:
            await close()
        for server in servers:
            await server.stop()


async def consume(result: RunResult) -> list[Event]:
    return [event async for event in result.stream]


def expected(per_model: int) -> tuple[Counter[str], int, int]:
    """(stop reasons, calls answered, hung threads) of a load of ``per_model`` runs per
    model (a multiple of ``KINDS``): each kind is a fifth of the runs."""
    each = len(PROVIDERS) * per_model // KINDS  # runs of each kind
    stops = Counter(
        {
            "completed": 3 * each - len(PROVIDERS) * ERRORS_PER_MODEL + each,
            "truncated": each,
            "error": len(PROVIDERS) * ERRORS_PER_MODEL,
        }
    )
    return stops, each * (3 + 2 + 2), each  # kinds 0, 1, 2: 3 + 2 + 2 calls; one hung


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd (Linux)")
def test_two_hundred_concurrent_runs_leave_nothing_behind() -> None:
    async def main() -> tuple[Figures, Figures, int, int]:
        tasks = asyncio.all_tasks()
        threads = set(threading.enumerate())
        fds_before = fds()
        peak = Figures()

        async def sample() -> None:
            while True:
                peak.peak_threads = max(peak.peak_threads, len(extra_threads(threads)))
                peak.peak_fds = max(peak.peak_fds, fds() - fds_before)
                await asyncio.sleep(0.005)

        sampler = asyncio.create_task(sample())
        release = Release()
        first = Figures()
        try:
            await asyncio.wait_for(load(release, first), 30)
        except BaseException:  # the stubborn tasks must end for asyncio.run to return
            release.thread.set()
            release.task.set()
            raise
        # What is left: only the hung threads the runners reported, and the tasks that
        # ignore cancellation; once they are let go, nothing.
        left = await until(lambda: len(extra_threads(threads)) == first.abandoned_threads)
        names = Counter(t.name.rstrip("_0123456789") for t in extra_threads(threads))
        if not left:
            release.thread.set()
            release.task.set()
        assert left, (names, first.abandoned_threads)
        release.thread.set()
        release.task.set()
        assert await until(lambda: not extra_threads(threads))
        assert await until(lambda: asyncio.all_tasks() - tasks == {sampler})
        # The second load, measured: what it leaves allocated is what a load leaks.
        second, release = Figures(), Release()
        gc.collect()
        tracemalloc.start()
        try:
            try:
                await asyncio.wait_for(load(release, second, MEASURED_PER_MODEL), 30)
            finally:
                release.thread.set()
                release.task.set()
            assert await until(lambda: not extra_threads(threads))
            assert await until(lambda: asyncio.all_tasks() - tasks == {sampler})
            sampler.cancel()
            await asyncio.gather(sampler, return_exceptions=True)
            gc.collect()
            retained, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        first.peak_threads, first.peak_fds = peak.peak_threads, peak.peak_fds
        gc.collect()
        return first, second, retained, fds() - fds_before

    first, second, retained, fds_left = asyncio.run(main())
    print(
        f"\nload: {first.runs} runs, {first.calls} calls answered, {first.seconds:.2f} s "
        f"({second.seconds:.2f} s under tracemalloc); peak {first.peak_threads} threads and "
        f"{first.peak_fds} fds more than before; {first.abandoned_threads} threads abandoned; "
        f"second load retained {retained / 1024:.0f} KiB; stops {dict(first.stops)}"
    )
    for figures, per_model in ((first, RUNS_PER_MODEL), (second, MEASURED_PER_MODEL)):
        stops, calls, hung = expected(per_model)
        assert figures.runs == len(PROVIDERS) * per_model
        assert figures.calls == calls
        assert figures.stops == stops
        assert figures.abandoned_threads == hung
    assert fds_left <= 0
    assert retained < RETAINED_BOUND
