"""Running one tool call so that nothing it does escapes, and nothing of it is waited on past
its deadline.

* Sync functions run on the runner's own thread pool (``ToolExecutor``), never on the event
  loop's default executor, so a hung tool cannot starve the SDK clients or other runners;
  the pool is bounded (``max_threads``).
* The timeout measures the tool's own running time: for a sync function it starts when a
  worker thread picks the call up, not while the call waits for a free thread.
* The call runs inside a guard that catches every ``BaseException`` the tool raises
  (``SystemExit``, ``KeyboardInterrupt``, a ``CancelledError`` it raised itself), so the
  event loop and the other runs never see it; the call gets an error result.
* At the deadline an async tool is cancelled and a thread is left to finish, and neither is
  awaited: a tool that ignores cancellation is *abandoned*, its late value thrown away.
  Abandoned calls are counted (``ToolExecutor.abandoned``).
* Cancellation of the run itself (the caller's task) still propagates.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._tool import Tool

__all__ = ["Outcome", "ToolExecutor"]

_Guarded = tuple[bool, Any]  # (True, value) or (False, the BaseException raised)


@dataclass(slots=True)
class Outcome:
    """How one tool run ended: ``value`` (``ok``), ``error`` (it raised), or ``timed_out``
    (``abandoned`` when it was still running then). ``seconds``: its own running time."""

    ok: bool = False
    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    abandoned: bool = False
    seconds: float = 0.0


async def _guard(awaitable: Awaitable[Any]) -> _Guarded:
    try:
        return True, await awaitable
    except BaseException as exc:
        return False, exc


def _guard_sync(function: Callable[[], Any]) -> _Guarded:
    try:
        return True, function()
    except BaseException as exc:
        return False, exc


class ToolExecutor:
    """The runner's thread pool for sync tools, and the calls it abandoned."""

    def __init__(self, max_threads: int) -> None:
        self.max_threads = max_threads
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        #: Abandoned calls still running (threads and tasks); they leave when they end.
        self._threads: set[concurrent.futures.Future[_Guarded]] = set()
        self._tasks: set[asyncio.Task[_Guarded]] = set()

    @property
    def abandoned(self) -> int:
        """How many abandoned calls are still running (threads and tasks)."""
        return len(self._threads) + len(self._tasks)

    @property
    def abandoned_threads(self) -> int:
        """How many abandoned threads are still running."""
        return len(self._threads)

    def pool(self) -> concurrent.futures.ThreadPoolExecutor:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=self.max_threads, thread_name_prefix="toolstitch-tool"
            )
        return self._pool

    def shutdown(self) -> None:
        """Refuse new sync calls; queued ones are cancelled, running ones left to end."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    async def run(self, tool: Tool, arguments: Mapping[str, Any], timeout: float | None) -> Outcome:
        """Run ``tool`` on ``arguments`` (already checked) within ``timeout`` seconds."""
        try:
            args, kwargs = tool.call_arguments(arguments)
        except Exception as exc:
            return Outcome(error=exc)
        call = functools.partial(tool.function, *args, **kwargs)
        if tool.is_async:
            return await self.bounded(call(), timeout)
        return await self._run_thread(call, timeout)

    async def bounded(
        self, awaitable: Awaitable[Any], timeout: float | None, began: float | None = None
    ) -> Outcome:
        """Await ``awaitable`` as a guarded task for at most ``timeout`` seconds; at the
        deadline it is cancelled and abandoned (never awaited)."""
        if began is None:
            began = time.monotonic()
        task = asyncio.ensure_future(_guard(awaitable))
        try:
            done, _ = await asyncio.wait({task}, timeout=timeout)
        except BaseException:  # the run is cancelled: so is the tool, not awaited
            self._abandon_task(task)
            raise
        if not done:
            self._abandon_task(task)
            return Outcome(timed_out=True, abandoned=True, seconds=time.monotonic() - began)
        return _ended(task.result(), time.monotonic() - began)

    def _abandon_task(self, task: asyncio.Task[_Guarded]) -> None:
        task.cancel()
        if not task.done():
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def run_sync_call(self, call: Callable[[], Any], timeout: float | None) -> Outcome:
        """Run the sync ``call`` on the pool, as a sync tool runs (guarded, within
        ``timeout`` of its own running time, abandoned at the deadline)."""
        return await self._run_thread(call, timeout)

    async def _run_thread(self, call: Callable[[], Any], timeout: float | None) -> Outcome:
        loop = asyncio.get_running_loop()
        started = asyncio.Event()

        def work() -> _Guarded:
            try:
                loop.call_soon_threadsafe(started.set)
            except RuntimeError:  # the loop is gone: nobody waits for this call any more
                return False, RuntimeError("the event loop closed")
            return _guard_sync(call)

        future = self.pool().submit(work)
        waiter = asyncio.wrap_future(future, loop=loop)
        try:
            await started.wait()  # queueing for a thread does not count against the timeout
            began = time.monotonic()
            done, _ = await asyncio.wait({waiter}, timeout=timeout)
        except BaseException:
            self._abandon_thread(future, waiter)
            raise
        if not done:
            self._abandon_thread(future, waiter)
            return Outcome(timed_out=True, abandoned=True, seconds=time.monotonic() - began)
        outcome = _ended(waiter.result(), time.monotonic() - began)
        if outcome.ok and inspect.isawaitable(outcome.value):
            # A sync function that returned an awaitable: await it within what is left.
            left = None if timeout is None else max(timeout - outcome.seconds, 0.0)
            return await self.bounded(outcome.value, left, began)
        return outcome

    def _abandon_thread(
        self, future: concurrent.futures.Future[_Guarded], waiter: asyncio.Future[_Guarded]
    ) -> None:
        waiter.cancel()  # a call still queued never starts
        if future.cancel() or future.done():
            return
        self._threads.add(future)
        future.add_done_callback(self._threads.discard)


def _ended(guarded: _Guarded, seconds: float) -> Outcome:
    ok, value = guarded
    if ok:
        return Outcome(ok=True, value=value, seconds=seconds)
    return Outcome(error=value, seconds=seconds)
