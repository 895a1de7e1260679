"""The SDKs' helper streams, with the real clients over ``ScriptedServer``.

``client.chat.completions.stream(...)`` (openai) and ``client.messages.stream(...)``
(anthropic) return a stream *manager*; ``stitch``/``astitch`` enter it, read the stream it
yields (the openai one wraps each raw chunk in a ``ChunkEvent`` and adds helper events that
repeat the chunks) and exit it at the end, at ``close()``, or when the run is abandoned: the
connection is closed every time. Also: an openai-chat stream's events that are not chunks
leave a warning, and a stream in which nothing was understood is a stream error.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from toolstitch import (
    CallReady,
    StitchResult,
    StreamDecodeError,
    StreamFailed,
    StreamWarning,
    TextDelta,
    astitch,
    stitch,
)
from toolstitch.adapters import detect
from toolstitch.testing import AnthropicScript, OpenAIChatScript, ScriptedServer

if TYPE_CHECKING:
    import anthropic
    import openai
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import anthropic, openai

MESSAGES: Any = [{"role": "user", "content": "hi"}]
CHAT = (
    OpenAIChatScript()
    .text("Hello", pieces=2)
    .call("c1", "lookup", '{"q": 1}', pieces=3)
    .call("c2", "fetch", '{"u": "x"}')
    .finish("tool_calls")
    .usage(3, 4)
)
MESSAGE = (
    AnthropicScript().text("Hello", pieces=2).call("t1", "lookup", '{"q": 1}').finish("tool_use")
)


def arun(coro: Any) -> Any:
    async def main() -> Any:
        return await asyncio.wait_for(coro, 30)

    return asyncio.run(main())


class Watched:
    """A stream manager wrapped to see that it was entered and exited, and to keep the
    stream it yielded (whose HTTP response tells whether the connection was closed)."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self.stream: Any = None
        self.exits = 0

    def __enter__(self) -> Any:
        self.stream = self.manager.__enter__()
        return self.stream

    def __exit__(self, *exc_info: Any) -> None:
        self.exits += 1
        self.manager.__exit__(*exc_info)

    async def __aenter__(self) -> Any:
        self.stream = await self.manager.__aenter__()
        return self.stream

    async def __aexit__(self, *exc_info: Any) -> None:
        self.exits += 1
        await self.manager.__aexit__(*exc_info)

    @property
    def closed(self) -> bool:
        stream = self.stream
        response = getattr(stream, "response", None) or stream._response
        return bool(response.is_closed)


async def managed_and_entered(
    open_stream: Callable[[], Any], provider: str
) -> tuple[StitchResult, StitchResult, Watched]:
    """One stream given to ``astitch`` as the manager, one entered by the caller."""
    manager = Watched(open_stream())
    managed = await astitch(manager).collect()
    async with open_stream() as stream:
        entered = await astitch(stream, provider).collect()
    return managed, entered, manager


def chat_summary(result: StitchResult) -> tuple[object, ...]:
    return (
        [(c.id, c.name, c.arguments) for c in result.calls],
        result.text,
        result.finish_reason,
        result.usage,
        result.warnings,
        result.stream_error,
    )


EXPECTED_CHAT = (
    [("c1", "lookup", '{"q": 1}'), ("c2", "fetch", '{"u": "x"}')],
    "Hello",
    "tool_calls",
    {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
    (),
    None,
)


def test_openai_stream_manager_is_entered_read_and_exited() -> None:
    with ScriptedServer([CHAT.reply()]) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="test")
        manager = Watched(client.chat.completions.stream(model="m", messages=MESSAGES))
        run = stitch(manager)
        result = run.result
        assert server.requests[0].json["stream"] is True
    assert chat_summary(result) == EXPECTED_CHAT
    assert result.provider == "openai-chat"
    assert manager.exits == 1
    assert manager.closed


def test_openai_helper_stream_and_its_events_as_dicts_count_once() -> None:
    with ScriptedServer([CHAT.reply(), CHAT.reply()]) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="test")
        with client.chat.completions.stream(model="m", messages=MESSAGES) as stream:
            objects = stitch(stream).result
        with client.chat.completions.stream(model="m", messages=MESSAGES) as stream:
            events = list(stream)
    kinds = {event.type for event in events}
    assert {"chunk", "content.delta", "tool_calls.function.arguments.done"} <= kinds
    dumped = [event.model_dump(mode="json", exclude_unset=True) for event in events]
    assert chat_summary(objects) == EXPECTED_CHAT
    assert chat_summary(stitch(dumped).result) == EXPECTED_CHAT
    assert chat_summary(stitch(dumped, "openai-chat").result) == EXPECTED_CHAT
    assert detect(dumped[0]) == "openai-chat"


def test_openai_stream_manager_closed_early_releases_the_connection() -> None:
    with ScriptedServer([CHAT.reply()]) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="test")
        manager = Watched(client.chat.completions.stream(model="m", messages=MESSAGES))
        with stitch(manager) as run:
            first = next(e for e in run if isinstance(e, TextDelta))
            assert manager.exits == 0
        assert manager.exits == 1
        assert manager.closed
        result = run.result  # what was read, ended there
    assert first.text == "Hel"
    assert result.text == "Hel"
    assert result.calls == ()
    assert result.finished


def test_an_abandoned_run_exits_the_manager() -> None:
    with ScriptedServer([CHAT.reply()]) as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="test")
        manager = Watched(client.chat.completions.stream(model="m", messages=MESSAGES))
        run = stitch(manager)
        next(iter(run))
        del run
        gc.collect()
        assert manager.exits == 1
        assert manager.closed


def test_async_openai_stream_manager_and_stream() -> None:
    async def main() -> tuple[StitchResult, StitchResult, Watched]:
        async with (
            ScriptedServer([CHAT.reply(), CHAT.reply()]) as server,
            openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test") as client,
        ):
            return await managed_and_entered(
                lambda: client.chat.completions.stream(model="m", messages=MESSAGES),
                "openai-chat",
            )

    managed, entered, manager = arun(main())
    assert chat_summary(managed) == EXPECTED_CHAT
    assert chat_summary(entered) == EXPECTED_CHAT
    assert manager.exits == 1
    assert manager.closed


def test_async_run_closed_early_exits_the_manager() -> None:
    async def main() -> tuple[list[str], StitchResult, Watched]:
        async with (
            ScriptedServer([CHAT.reply()]) as server,
            openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test") as client,
        ):
            manager = Watched(client.chat.completions.stream(model="m", messages=MESSAGES))
            seen: list[str] = []
            async with astitch(manager) as run:
                async for event in run:
                    if isinstance(event, CallReady):
                        seen.append(event.call.id)
                        break
                assert manager.exits == 0
            assert manager.exits == 1
            return seen, await run.collect(), manager

    seen, result, manager = arun(main())
    assert seen == ["c1"]
    assert [c.id for c in result.calls] == ["c1"]
    assert result.finish_reason is None
    assert manager.closed


def message_summary(result: StitchResult) -> tuple[object, ...]:
    return (
        [(c.id, c.name, c.arguments) for c in result.calls],
        result.text,
        result.finish_reason,
        result.stream_error,
    )


EXPECTED_MESSAGE = ([("t1", "lookup", '{"q": 1}')], "Hello", "tool_use", None)


def test_anthropic_stream_manager_sync_and_async() -> None:
    with ScriptedServer([MESSAGE.reply()]) as server:
        client = anthropic.Anthropic(base_url=server.anthropic_base_url, api_key="test")
        manager = Watched(client.messages.stream(model="m", max_tokens=9, messages=MESSAGES))
        result = stitch(manager).result
    assert message_summary(result) == EXPECTED_MESSAGE
    assert result.provider == "anthropic"
    assert manager.exits == 1
    assert manager.closed

    async def main() -> tuple[StitchResult, StitchResult, Watched]:
        async with (
            ScriptedServer([MESSAGE.reply(), MESSAGE.reply()]) as server,
            anthropic.AsyncAnthropic(base_url=server.anthropic_base_url, api_key="test") as client,
        ):
            return await managed_and_entered(
                lambda: client.messages.stream(model="m", max_tokens=9, messages=MESSAGES),
                "anthropic",
            )

    managed, entered, amanager = arun(main())
    assert message_summary(managed) == EXPECTED_MESSAGE
    assert message_summary(entered) == EXPECTED_MESSAGE
    assert amanager.exits == 1
    assert amanager.closed


def test_anthropic_stream_manager_closed_early() -> None:
    with ScriptedServer([MESSAGE.reply()]) as server:
        client = anthropic.Anthropic(base_url=server.anthropic_base_url, api_key="test")
        manager = Watched(client.messages.stream(model="m", max_tokens=9, messages=MESSAGES))
        run = stitch(manager)
        next(e for e in run if isinstance(e, TextDelta))
        run.close()
        run.close()  # idempotent
        assert manager.exits == 1
        assert manager.closed


# -- nothing silent -----------------------------------------------------------------------------


def quirk_codes(result: StitchResult) -> list[str]:
    return [w.error.code for w in result.warnings if isinstance(w, StreamWarning)]


def test_an_event_that_is_not_a_chunk_leaves_a_warning() -> None:
    chunk = {"choices": [{"index": 0, "delta": {"content": "a"}}]}
    result = stitch([chunk, {"type": "keepalive"}, chunk], "openai-chat").result
    assert result.text == "aa"
    assert quirk_codes(result) == ["quirk-unknown-event"]
    assert "'keepalive'" in result.warnings[0].error.message
    assert result.stream_error is None


def test_choices_that_are_not_a_list_leave_a_warning() -> None:
    chunk = {"choices": [{"index": 0, "delta": {"content": "a"}}]}
    result = stitch([chunk, {"choices": {"index": 0}}], "openai-chat").result
    assert result.text == "a"
    assert quirk_codes(result) == ["quirk-unknown-event"]


def test_many_unknown_events_leave_two_warnings_with_the_count() -> None:
    chunk = {"choices": [{"index": 0, "delta": {"content": "a"}}]}
    result = stitch([chunk, *[{"x": n} for n in range(50)]], "openai-chat").result
    assert quirk_codes(result) == ["quirk-unknown-event", "quirk-unknown-event"]
    assert "50 events" in result.warnings[1].error.message


def test_protocol_chunks_leave_no_warning() -> None:
    body = (
        'data: {"choices":[],"prompt_filter_results":[]}\n\n'
        'data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n'
        'data: {"choices":[],"usage":{"prompt_tokens":1}}\n\n'
        'data: {"choices":[],"usage":null}\n\n'
        "data: [DONE]\n\n"
    )
    result = stitch(body, "openai-chat").result
    assert result.warnings == ()
    assert result.stream_error is None


@pytest.mark.parametrize(
    "events",
    [
        [{"type": "keepalive"}] * 15,
        [{"foo": 1}],
        [{}],
    ],
    ids=["15-unknown", "one", "empty-object"],
)
def test_a_named_stream_with_nothing_understood_is_a_stream_error(
    events: list[dict[str, Any]],
) -> None:
    run = stitch(events, "openai-chat")
    emitted = list(run)
    result = run.result
    assert isinstance(result.stream_error, StreamDecodeError)
    assert "nothing in the stream was understood" in str(result.stream_error)
    assert isinstance(emitted[-1], StreamFailed)
    assert result.finished
    assert result.calls == ()


def test_what_counts_as_understood() -> None:
    # A role chunk only, or [DONE] only, or unknown events and [DONE]: the format, but
    # nothing of a response (no call, text, finish reason or usage): a stream error.
    role = {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}
    for body in ([role], "data: [DONE]\n\n", 'data: {"foo": 1}\n\ndata: [DONE]\n\n'):
        error = stitch(body, "openai-chat").result.stream_error
        assert isinstance(error, StreamDecodeError), body
        assert "nothing in the stream was understood" in str(error)
    # A finish reason alone is a response (an empty one).
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    assert stitch([role, finish], "openai-chat").result.stream_error is None
    # No events at all: nothing to misunderstand.
    assert stitch(b"", "openai-chat").result.stream_error is None
    # An error event is the stream error itself, not a second one.
    failed = stitch([{"error": {"message": "boom"}}], "openai-chat").result
    assert failed.stream_error is not None
    assert failed.stream_error.code == "provider-error"
    # Another named provider: unknown events understood by nothing.
    assert stitch([{"foo": 1}], "anthropic").result.stream_error is not None


def test_an_abandoned_async_run_exits_the_manager() -> None:
    async def main() -> Watched:
        async with (
            ScriptedServer([CHAT.reply()]) as server,
            openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test") as client,
        ):
            manager = Watched(client.chat.completions.stream(model="m", messages=MESSAGES))
            run = astitch(manager)
            await run.__anext__()
            del run
            gc.collect()  # the loop's finaliser closes the run's generator: the manager exits
            for _ in range(10):
                if manager.exits:
                    break
                await asyncio.sleep(0)
            return manager

    manager = arun(main())
    assert manager.exits == 1
    assert manager.closed
