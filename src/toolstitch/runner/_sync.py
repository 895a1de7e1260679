"""``ToolRunner.run_sync``: the async run, driven in a private event loop of its own thread.

Theory of operation
-------------------
``run_sync`` starts a thread (``toolstitch-run-sync``) that runs its own event loop with
``asyncio.run``; there ``ToolRunner.run`` opens the first model call (an error opening it is
raised by ``run_sync``, as by ``run``) and the pump forwards the run's events to the calling
thread. The pump asks the async stream for an event only when the sync consumer asks for
one (``__next__``): one request, one event, handed over through a thread-safe queue that
holds at most the events asked for (never a blocking put in the loop). So the consumer
is "asking" exactly when it waits, the runner's own gate (tools start only while someone
consumes the run) and its ``event_buffer`` backpressure hold as they do for ``run``, and
nothing is buffered between the threads beyond what was asked for.

Closing (``close()``, leaving a ``with`` block, or the stream being garbage collected)
cancels the pump's task in the loop: the run's stream is closed, the round task and the
tools are cancelled, the run ends with ``stop_reason="cancelled"`` (unless it had already
ended), the loop shuts down and the thread is joined before ``close()`` returns.

The pump holds no reference to the user's objects, so an abandoned result can be
collected; a finalizer on the stream then closes the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import weakref
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from toolstitch.messages import AssistantMessage, Message
from toolstitch.vocab.call_events import Event, ToolCall

from ._run_events import RoundEnded, RunWarning, ToolTurn

if TYPE_CHECKING:
    from ._run import OnToolTurns, RunResult, ShouldExecute, ToolRunner

__all__ = ["SyncRunResult", "SyncStream", "start"]

IN_LOOP = (
    "run_sync() was called from a thread that is running an event loop; it would block that "
    "loop. Use `await runner.run(...)` there (or call run_sync from another thread)."
)


class _End:
    """The run's stream ended (``error``: what the async stream raised, if anything)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class _Pump:
    """The loop thread's side: owns the loop, the async ``RunResult`` and the hand-over."""

    def __init__(self) -> None:
        # At most one item per request of the consumer (and the end): never a blocking put
        # in the loop, even when a reader was interrupted while it waited.
        self.handoff: queue.SimpleQueue[Event | _End] = queue.SimpleQueue()
        self.opened = threading.Event()
        self.open_error: BaseException | None = None
        self.result: RunResult | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None
        self.demand: asyncio.Event | None = None
        self.thread: threading.Thread | None = None
        self.closed = False
        self.finished = False  # the consumer saw the end

    def start(
        self,
        runner: ToolRunner,
        messages: Sequence[Any] | str,
        options: dict[str, Any],
    ) -> None:
        self.thread = threading.Thread(
            target=asyncio.run,
            args=(self.main(runner, messages, options),),
            name="toolstitch-run-sync",
            daemon=True,
        )
        self.thread.start()
        self.opened.wait()
        if self.open_error is not None:
            self.thread.join()
            error, self.open_error = self.open_error, None
            raise error

    async def main(
        self, runner: ToolRunner, messages: Sequence[Any] | str, options: dict[str, Any]
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.demand = asyncio.Event()
        try:
            self.result = await runner.run(messages, **options)
        except BaseException as exc:
            self.open_error = exc
            self.opened.set()
            return
        self.opened.set()
        result = self.result
        try:
            await self.pump(result)
        except asyncio.CancelledError:
            pass  # closed by the consumer
        finally:
            await result.aclose()  # a no-op once the run ended; else "cancelled"
            self.handoff.put(_End())  # wakes a reader when another thread closed the run

    async def pump(self, result: RunResult) -> None:
        assert self.demand is not None
        stream = result.stream
        while True:
            await self.demand.wait()
            self.demand.clear()
            try:
                event = await stream.__anext__()
            except StopAsyncIteration:
                self.handoff.put(_End())
                return
            except Exception as exc:  # the run's own failures are events; this is a bug
                self.handoff.put(_End(exc))
                return
            self.handoff.put(event)

    # -- the consumer's side -----------------------------------------------------------------

    def next(self) -> Event:
        if self.closed:
            raise RuntimeError(
                "this run_sync stream was closed; start a new run with runner.run_sync(...) "
                "to read events again (after close() only the result's attributes are left)"
            )
        if self.finished:
            raise StopIteration
        loop, demand = self.loop, self.demand
        assert loop is not None
        assert demand is not None
        try:
            loop.call_soon_threadsafe(demand.set)
        except RuntimeError:  # the loop is gone
            self.finished = True
            raise StopIteration from None
        item = self.handoff.get()
        if isinstance(item, _End):
            self.finished = True
            self.join()
            if item.error is not None:
                raise item.error
            raise StopIteration
        return item

    def close(self) -> None:
        """Cancel the run (if it still goes on) and wait for its thread to end."""
        if self.closed:
            return
        self.closed = True
        loop, task = self.loop, self.task
        if loop is not None and task is not None and not self.finished:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(task.cancel)
        self.join()

    def join(self) -> None:
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()


class SyncStream(Iterator[Event]):
    """The events of a ``run_sync`` run, live, as a plain iterator. Iterate it once.

    ``close()`` (or leaving the result's ``with`` block, or dropping every reference to
    the stream and its result) cancels the run and ends its thread."""

    def __init__(self, pump: _Pump) -> None:
        self._pump = pump
        self._iterated = False
        self._finalizer = weakref.finalize(self, pump.close)

    def __iter__(self) -> SyncStream:
        if self._iterated:
            raise RuntimeError(
                "the stream of a run can be iterated only once; keep the events you need "
                "while iterating, or start a new run with runner.run_sync(...)"
            )
        self._iterated = True
        return self

    def __next__(self) -> Event:
        self._iterated = True
        return self._pump.next()

    def close(self) -> None:
        """Stop the run: close the model's stream, cancel the tools, end the thread."""
        self._finalizer()


class SyncRunResult:
    """What ``ToolRunner.run_sync`` returns: ``RunResult``'s attributes, with ``stream`` a
    plain iterator of the run's events (also ``for event in result``).

    Iterate the stream once, to the end (or ``collect()``), and ``final_text``,
    ``tool_turns``, ``stop_reason``, ``messages`` and the rest are complete. Leaving early:
    ``close()`` or ``with runner.run_sync(...) as result:``; the run ends
    ``"cancelled"``."""

    def __init__(self, pump: _Pump) -> None:
        self._pump = pump
        self._stream = SyncStream(pump)

    @property
    def stream(self) -> SyncStream:
        """Every event of the run, live. Can be iterated once."""
        return self._stream

    def __iter__(self) -> SyncStream:
        return iter(self._stream)

    def collect(self) -> SyncRunResult:
        """Consume the rest of the stream; return ``self``."""
        for _ in self._stream:
            pass
        return self

    def close(self) -> None:
        """Stop the run (see ``SyncStream.close``)."""
        self._stream.close()

    def __enter__(self) -> SyncRunResult:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def run_result(self) -> RunResult:
        """The async ``RunResult`` underneath (owned by the run's thread while it runs)."""
        assert self._pump.result is not None
        return self._pump.result

    @property
    def final_text(self) -> str:
        return self.run_result.final_text

    @property
    def tool_turns(self) -> list[ToolTurn]:
        return self.run_result.tool_turns

    @property
    def stop_reason(self) -> str | None:
        return self.run_result.stop_reason

    @property
    def state(self) -> str:
        return self.run_result.state

    @property
    def done(self) -> bool:
        return self.run_result.done

    @property
    def messages(self) -> list[Message]:
        return self.run_result.messages

    @property
    def error(self) -> BaseException | None:
        return self.run_result.error

    @property
    def unresolved(self) -> tuple[ToolCall, ...]:
        return self.run_result.unresolved

    @property
    def refused(self) -> tuple[ToolCall, ...]:
        return self.run_result.refused

    @property
    def pending(self) -> AssistantMessage | None:
        return self.run_result.pending

    @property
    def rounds(self) -> list[RoundEnded]:
        return self.run_result.rounds

    @property
    def warnings(self) -> list[RunWarning]:
        return self.run_result.warnings

    @property
    def abandoned(self) -> list[ToolCall]:
        return self.run_result.abandoned


def start(
    runner: ToolRunner,
    messages: Sequence[Any] | str,
    *,
    system: Any = None,
    should_execute: ShouldExecute | None = None,
    on_tool_turns: OnToolTurns | None = None,
) -> SyncRunResult:
    """``ToolRunner.run_sync``: refuse a running loop's thread, open the run in a thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(IN_LOOP)
    pump = _Pump()
    options = {
        "system": system,
        "should_execute": should_execute,
        "on_tool_turns": on_tool_turns,
    }
    pump.start(runner, messages, options)
    return SyncRunResult(pump)
