"""OpenTelemetry spans of ``ToolRunner`` (GenAI semantic conventions), read with the SDK's
in-memory exporter, through the real ``openai`` client over ``ScriptedServer``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from test_runner import QUERY, arun, consume, openai_model
from toolstitch.runner import RunResult, Tool, ToolRunner
from toolstitch.testing import OpenAIChatScript, Reply

if TYPE_CHECKING:
    import openai
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import openai

SRC = Path(__file__).resolve().parents[1] / "src"


def exporter_and_provider() -> tuple[InMemorySpanExporter, TracerProvider]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, provider


def play(
    tools: Sequence[Tool], replies: Sequence[Reply], **options: Any
) -> tuple[RunResult, list[ReadableSpan]]:
    exporter, provider = exporter_and_provider()

    async def main() -> RunResult:
        async with openai_model(replies) as (model, _server):
            runner = ToolRunner(model, tools, tracer_provider=provider, **options)
            result = await runner.run(["go"])
            await consume(result)
            return result

    result = arun(main())
    return result, list(exporter.get_finished_spans())


def by_name(spans: list[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    named: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        named.setdefault(span.name, []).append(span)
    return named


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return int(span.context.span_id)


def trace_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return int(span.context.trace_id)


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_two_rounds_give_a_run_span_with_model_and_tool_spans() -> None:
    async def lookup(q: str) -> str:
        return f"found {q}"

    first = (
        OpenAIChatScript()
        .call("c1", "lookup", '{"q": "paris"}')
        .call("c2", "lookup", '{"q": "rome"}')
        .finish("tool_calls")
        .usage(100, 20)
        .reply()
    )
    second = OpenAIChatScript().text("Both found.").finish("stop").usage(150, 7).reply()
    result, spans = play([Tool("lookup", lookup, QUERY)], [first, second])
    assert result.stop_reason == "completed"
    named = by_name(spans)
    assert sorted(named) == ["chat test-model", "execute_tool lookup", "invoke_agent"]
    [run] = named["invoke_agent"]
    chats = named["chat test-model"]
    tools = named["execute_tool lookup"]
    assert (len(chats), len(tools)) == (2, 2)
    _check_run_span(run, [*chats, *tools])
    # The model calls, in order, each within the run.
    chats.sort(key=lambda s: s.start_time or 0)
    _check_chat_spans(run, chats)
    # The tools ran between the two model calls.
    _check_tool_spans(chats, tools)


def _check_run_span(run: ReadableSpan, children: list[ReadableSpan]) -> None:
    """The run span: the parent of every other span, in one trace, with the summed usage."""
    for child in children:
        assert parent_id(child) == span_id(run)
        assert trace_id(child) == trace_id(run)
    assert run.attributes is not None
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["toolstitch.stop_reason"] == "completed"
    assert run.attributes["gen_ai.usage.input_tokens"] == 250
    assert run.attributes["gen_ai.usage.output_tokens"] == 27
    assert run.status.status_code is StatusCode.UNSET


def _check_chat_spans(run: ReadableSpan, chats: list[ReadableSpan]) -> None:
    """The two model calls (in start order): client spans with each round's usage, in the run."""
    assert [c.kind for c in chats] == [SpanKind.CLIENT, SpanKind.CLIENT]
    assert [dict(c.attributes or {}) for c in chats] == [
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "test-model",
            "toolstitch.synthesis": False,
            "gen_ai.usage.input_tokens": input_tokens,
            "gen_ai.usage.output_tokens": output_tokens,
            "gen_ai.response.finish_reasons": (finish,),
        }
        for input_tokens, output_tokens, finish in [(100, 20, "tool_calls"), (150, 7, "stop")]
    ]
    assert all(c.status.status_code is StatusCode.UNSET for c in chats)
    assert (run.start_time or 0) <= (chats[0].start_time or 0)
    assert (chats[1].end_time or 0) <= (run.end_time or 0)


def _check_tool_spans(chats: list[ReadableSpan], tools: list[ReadableSpan]) -> None:
    """The two tool spans: between the model calls, internal, one per call id."""
    for tool in tools:
        assert (chats[0].end_time or 0) <= (tool.start_time or 0)
        assert (tool.end_time or 0) <= (chats[1].start_time or 0)
        assert tool.kind is SpanKind.INTERNAL
        assert tool.status.status_code is StatusCode.UNSET
    assert sorted(dict(t.attributes or {}).items() for t in tools) == sorted(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup",
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
        }.items()
        for call_id in ("c1", "c2")
    )


def test_a_failing_or_timed_out_tool_has_an_error_span() -> None:
    def boom(q: str) -> str:
        raise RuntimeError("disk on fire")

    async def slow(q: str) -> str:
        await asyncio.sleep(30)
        return "never"  # pragma: no cover

    tools = [Tool("boom", boom, QUERY), Tool("slow", slow, QUERY)]
    first = (
        OpenAIChatScript()
        .call("c1", "boom", '{"q": "a"}')
        .call("c2", "slow", '{"q": "a"}')
        .finish("tool_calls")
        .reply()
    )
    second = OpenAIChatScript().text("Sorry.").finish().reply()
    result, spans = play(tools, [first, second], tool_timeout=0.2)
    assert result.stop_reason == "completed"
    named = by_name(spans)
    [boom_span] = named["execute_tool boom"]
    assert boom_span.status.status_code is StatusCode.ERROR
    assert boom_span.attributes is not None
    assert boom_span.attributes["error.type"] == "RuntimeError"
    assert boom_span.attributes["toolstitch.code"] == "tool-exception"
    [exception] = [e for e in boom_span.events if e.name == "exception"]
    assert exception.attributes is not None
    assert exception.attributes["exception.type"] == "RuntimeError"
    assert exception.attributes["exception.message"] == "disk on fire"
    assert "boom" in str(exception.attributes["exception.stacktrace"])
    [slow_span] = named["execute_tool slow"]
    assert slow_span.status.status_code is StatusCode.ERROR
    assert slow_span.attributes is not None
    assert slow_span.attributes["error.type"] == "tool-timeout"
    assert [e.name for e in slow_span.events] == ["exception"]
    # The run went on: neither the model calls nor the run are errors.
    assert all(s.status.status_code is StatusCode.UNSET for s in named["chat test-model"])
    assert named["invoke_agent"][0].status.status_code is StatusCode.UNSET


def test_an_async_tool_runs_under_its_span() -> None:
    from opentelemetry import trace

    seen: list[Any] = []

    async def lookup(q: str) -> str:
        seen.append(trace.get_current_span().get_span_context().span_id)
        return "ok"

    first = OpenAIChatScript().call("c1", "lookup", '{"q": "a"}').finish("tool_calls").reply()
    second = OpenAIChatScript().text("Done.").finish().reply()
    _, spans = play([Tool("lookup", lookup, QUERY)], [first, second])
    [tool_span] = by_name(spans)["execute_tool lookup"]
    assert seen == [span_id(tool_span)]


def test_a_failed_model_call_ends_the_run_span_as_an_error() -> None:
    failing = Reply.json({"error": {"message": "overloaded", "type": "server_error"}}, status=500)
    exporter, provider = exporter_and_provider()

    async def main() -> None:
        async with openai_model([failing]) as (model, _server):
            runner = ToolRunner(model, [], tracer_provider=provider)
            with pytest.raises(openai.InternalServerError):
                await runner.run(["go"])

    arun(main())
    named = by_name(list(exporter.get_finished_spans()))
    [chat] = named["chat test-model"]
    [run] = named["invoke_agent"]
    assert parent_id(chat) == span_id(run)
    for span in (chat, run):
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes is not None
        assert span.attributes["error.type"] == "openai.InternalServerError"


def test_a_closed_run_ends_its_spans_as_cancelled() -> None:
    exporter, provider = exporter_and_provider()
    reply = OpenAIChatScript().text("Hello").sleep(5).text(" there").finish().reply()

    async def main() -> RunResult:
        async with openai_model([reply]) as (model, _server):
            result = await ToolRunner(model, [], tracer_provider=provider).run(["go"])
            async for _ in result.stream:
                break
            await result.aclose()
            return result

    result = arun(main())
    assert result.stop_reason == "cancelled"
    named = by_name(list(exporter.get_finished_spans()))
    [chat] = named["chat test-model"]
    [run] = named["invoke_agent"]
    assert attrs(chat)["error.type"] == "cancelled"
    assert attrs(run)["toolstitch.stop_reason"] == "cancelled"


def run_script(*parts: str) -> str:
    """Run ``parts`` (each dedented) in a fresh interpreter; its output."""
    done = subprocess.run(
        [sys.executable, "-c", "\n".join(textwrap.dedent(part) for part in parts)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC)},
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


RUN = """
import asyncio
import openai
from toolstitch.runner import OpenAIChatModel, ToolRunner
from toolstitch.testing import OpenAIChatScript, ScriptedServer

async def main():
    reply = OpenAIChatScript().text("Hi.").finish().usage(3, 2).reply()
    async with ScriptedServer([reply]) as server, openai.AsyncOpenAI(
        base_url=server.openai_base_url, api_key="test", max_retries=0
    ) as client:
        result = await ToolRunner(OpenAIChatModel(client, "test-model"), []).run(["go"])
        await result.collect()
        return result

result = asyncio.run(main())
print(result.stop_reason, result.final_text)
"""


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_without_opentelemetry_nothing_is_imported_and_the_run_is_unchanged() -> None:
    # A fresh interpreter where opentelemetry cannot be imported.
    out = run_script(
        "import sys\nsys.modules['opentelemetry'] = None\n",
        RUN,
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n",
    )
    assert out == "completed Hi.\n['opentelemetry']\n"  # only the blocked entry


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_tracer_provider_without_opentelemetry_names_the_extra() -> None:
    out = run_script(
        """
        import sys
        sys.modules['opentelemetry'] = None
        from toolstitch.runner._otel import Tracer
        try:
            Tracer(object())
        except ImportError as exc:
            print(exc)
        """
    )
    assert "pip install 'toolstitch[otel]'" in out


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_importing_the_runner_imports_no_opentelemetry() -> None:
    out = run_script(
        """
        import sys
        import toolstitch.runner
        print(any(m.startswith('opentelemetry') for m in sys.modules))
        """
    )
    assert out == "False\n"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_spans_go_to_the_global_tracer_provider() -> None:
    # A fresh interpreter: the global provider can be set once per process.
    out = run_script(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        """,
        RUN,
        "print(sorted(s.name for s in exporter.get_finished_spans()))\n",
    )
    assert out == "completed Hi.\n['chat test-model', 'invoke_agent']\n"


def test_a_truncated_response_is_an_error_model_call_in_a_truncated_run() -> None:
    no_finish = OpenAIChatScript().text("Half an ans").reply()
    result, spans = play([], [no_finish])
    assert result.stop_reason == "truncated"
    named = by_name(spans)
    [chat] = named["chat test-model"]
    assert chat.status.status_code is StatusCode.ERROR
    assert attrs(chat)["error.type"] == "truncated"
    assert "gen_ai.response.finish_reasons" not in attrs(chat)
    [run] = named["invoke_agent"]
    assert attrs(run)["toolstitch.stop_reason"] == "truncated"
    assert run.status.status_code is StatusCode.UNSET


def test_the_forced_synthesis_call_is_marked() -> None:
    looping = OpenAIChatScript().call("c1", "lookup", '{"q": "a"}').finish("tool_calls").reply()
    final = OpenAIChatScript().text("As far as I know.").finish().reply()
    tools = [Tool("lookup", lambda q: "more", QUERY)]
    result, spans = play(tools, [looping, final], max_rounds=1)
    assert result.stop_reason == "max-rounds"
    chats = sorted(by_name(spans)["chat test-model"], key=lambda s: s.start_time or 0)
    assert [attrs(c)["toolstitch.synthesis"] for c in chats] == [False, True]
    assert [attrs(c)["gen_ai.response.finish_reasons"] for c in chats] == [
        ("tool_calls",),
        ("stop",),
    ]
