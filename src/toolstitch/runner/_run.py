"""``ToolRunner``: call the model, forward its stream, execute the calls, call again.

Theory of operation
-------------------
A run is a sequence of rounds, and a machine (``grammars/run-machine.json``, loaded per run
by ``_machine.RunMachine``): streaming, approving, executing, committing, then streaming
again, or synthesising after ``max_rounds``; its final states are the stop reasons, so a
run ends exactly once. Each round is one model call, played by one task (the round task)
that pumps the model's stream through a ``Stitcher`` and puts every event on a queue;
``RunResult.stream`` is an async generator that forwards that queue, so events of the
stream and of the tools arrive in the order they happened. When ``event_buffer`` events
wait, the round task stops reading until the consumer takes one.

Tools start only while someone consumes the run: every tool start and every
``should_execute`` question waits until the consumer is asking for an event
(``_Round.consumed``). A consumer that walked away starts nothing new.

Each round's ``Stitcher`` knows the tools (``ToolRunner._stitch_options``), so the core
refuses a call to an unknown tool at its name and one that breaks its tool's JSON Schema at
the fragment that made it certain (``CallDiscarded``); the runner answers those with error
results, like every other discarded call. While the stream plays, a ``CallReady`` for a
tool that is ``early=True`` and whose arguments fit the schema starts a child task:
``should_execute`` is asked, and if approved the tool runs, concurrently with the rest of
the stream (a raising ``should_execute`` ends the round at once). A later ``CallWarning``
that corrupts the call (trailing text, a conflicting id, an unexpected delta) drops that
result. A response that ends without its end marker is truncated: its early results are
dropped, nothing else runs, nothing is committed. When the stream has ended, the other
calls are asked in stream order; if any call is refused, every early result is dropped,
nothing of the round is committed and the run ends (``BatchRefused``). Otherwise the
approved calls that are not early run now (``concurrency`` at a time, through
``_exec.ToolExecutor``: each within ``tool_timeout`` of its own running time, abandoned at
its deadline, whatever it raises caught), and the round is committed: the assistant message
(``StitchResult.message()``, its calls as sent back) and one result per call, in call
order, everything made acceptable to the provider (``_send``).

A round whose response calls no tool is the final answer. After ``max_rounds`` tool rounds,
one more call with ``tool_choice="none"`` and a short instruction asks for the answer
("forced synthesis"). ``on_tool_turns`` is called after each committed tool round, with all
turns so far, before the next model call starts streaming - so its last call always comes
before the final answer streams.

``run`` itself opens the first model call (so that a request that cannot even start raises
there); every later failure is a ``RunFailed`` event and ``stop_reason="error"``
(``"timeout"`` past ``round_timeout`` / ``run_timeout``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import aclosing
from typing import Any, Final

from toolstitch.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    Reasoning,
    TextPart,
    ToolResult,
    UserMessage,
    tool_error,
)
from toolstitch.stitch.recovery import UNKNOWN_TOOL_NAME, tool_error_reply
from toolstitch.stitch.stitcher import IdFactory, Stitcher, StitchResult
from toolstitch.vocab.call_events import (
    CallDiscarded,
    CallReady,
    CallStarted,
    CallWarning,
    Event,
    ToolCall,
)
from toolstitch.vocab.errors import SchemaViolation, ToolCallError, TrailingArguments, UnknownTool
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.stream_events import TextDelta

from ._exec import Outcome, ToolExecutor
from ._history import read_history, write_history
from ._logging import ErrorMessage, ToolFailure, tool_failure
from ._machine import RunMachine
from ._models import Model
from ._otel import NO_TRACE, RunTrace, Tracer
from ._run_events import (
    BatchRefused,
    RoundEnded,
    RoundStarted,
    RunFailed,
    RunFinished,
    RunWarning,
    ToolDropped,
    ToolResultReady,
    ToolStarted,
    ToolTurn,
)
from ._send import clip, encodable, encodable_value, wire_name
from ._sync import SyncRunResult
from ._sync import start as start_sync
from ._tool import Tool, render

__all__ = ["DEFAULT_SYNTHESIS_PROMPT", "RunResult", "RunTimeout", "ToolRunner"]

#: The instruction appended for the forced-synthesis call.
DEFAULT_SYNTHESIS_PROMPT: Final = (
    "You have used all the tool rounds available. Do not call any more tools: answer now, "
    "as well as you can, with the information you already have."
)

#: The last event of a response, for the providers whose streams have one the runner can
#: see (the OpenAI SDKs consume ``[DONE]`` themselves: there the finish reason is the marker).
END_EVENTS: Final = {"anthropic": "message_stop"}

#: Warnings after which a call is not trusted to run (the text that was streamed is not
#: exactly one call).
CORRUPTING: Final = frozenset({"trailing-arguments", "conflicting-id", "unexpected-delta"})

ShouldExecute = Callable[[ToolCall], bool | Awaitable[bool]]
OnToolTurns = Callable[[list[ToolTurn]], Awaitable[None] | None]


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def tokens(usage: dict[str, Any] | None) -> tuple[int | None, int | None]:
    """(input, output) tokens from a provider's usage object (its own keys)."""
    if not usage:
        return None, None

    def num(*keys: str) -> int | None:
        for key in keys:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    tokens_in = num("prompt_tokens", "input_tokens", "promptTokenCount", "prompt_token_count")
    if tokens_in is not None and "input_tokens" in usage:
        # Anthropic counts cached input apart.
        for key in ("cache_creation_input_tokens", "cache_read_input_tokens"):
            extra = usage.get(key)
            if isinstance(extra, int) and not isinstance(extra, bool):
                tokens_in += extra
    tokens_out = num(
        "completion_tokens", "output_tokens", "candidatesTokenCount", "candidates_token_count"
    )
    return tokens_in, tokens_out


def _corrupted_message(call: ToolCall, error: ToolCallError) -> str:
    head = (
        f"Error [{error.code}]: the call to tool {call.name!r} (id {call.id}) was not run, because "
    )
    if isinstance(error, TrailingArguments):
        return (
            head + f"text followed its JSON arguments at line {error.line}, column "
            f"{error.column} (character {error.offset}):\n{error.snippet}\n"
            "Call the tool again with arguments that are exactly one JSON object, with "
            "nothing after it."
        )
    return head + f"the stream did not carry it cleanly ({error}). Call the tool again."


def _unknown_tool_message(runner: ToolRunner, name: str, call_id: str) -> str:
    names = ", ".join(sorted(runner.tools)) or "(none)"
    return (
        f"Error [unknown-tool]: there is no tool named {name!r} (call id {call_id}); nothing "
        f"was run. The tools you can call are: {names}."
    )


def _invalid_arguments_message(name: str, call_id: str, problem: str) -> str:
    return (
        f"Error [invalid-arguments]: the arguments of the call to tool {name!r} (id {call_id}) "
        f"do not match its parameters schema, so it was not run: {problem}. Call the tool "
        "again with arguments that match the schema."
    )


class _Slot:
    """One call of a round, from its ``CallStarted`` to its result."""

    __slots__ = (
        "approved",
        "ask_error",
        "asked",
        "call",
        "code",
        "corrupted",
        "discarded",
        "dropped",
        "early",
        "failure",
        "index",
        "outcome",
        "problem",
        "result",
        "schema_error",
        "started",
        "task",
        "tool",
    )

    def __init__(self, index: int) -> None:
        self.index = index
        self.call: ToolCall | None = None
        self.discarded: CallDiscarded | None = None
        self.tool: Tool | None = None
        self.problem: ToolResult | None = None  # an error result decided without running
        self.code: str | None = None
        self.corrupted: ToolCallError | None = None
        self.schema_error: SchemaViolation | None = None  # the core's first, as a warning
        self.approved: bool | None = None
        self.ask_error: BaseException | None = None  # should_execute raised
        self.asked = asyncio.Event()
        self.early = False
        self.task: asyncio.Task[None] | None = None
        self.started = False
        self.dropped = False
        self.result: ToolResult | None = None
        self.outcome: Outcome | None = None
        self.failure: ToolFailure | None = None  # the tool raised


class _Done:
    """End of a round on the queue; ``outcome`` as decided by the round task."""

    __slots__ = ("error", "outcome")

    def __init__(self, outcome: str, error: BaseException | None = None) -> None:
        # "answer", "tools", "refused", "truncated", "failed", "raised", "timeout"
        self.outcome = outcome
        self.error = error


class _Round:
    """One model call and its tools; ``play`` runs as the round task."""

    def __init__(
        self,
        runner: ToolRunner,
        number: int,
        synthesis: bool,
        iterator: AsyncIterator[Any],
        first: Any,
        should_execute: ShouldExecute | None,
        semaphore: asyncio.Semaphore,
        machine: RunMachine,
    ) -> None:
        self.runner = runner
        self.machine = machine
        self.semaphore = semaphore
        self.number = number
        self.synthesis = synthesis
        self.iterator = iterator
        self.first = first
        self.should_execute = should_execute
        self.queue: asyncio.Queue[Event | _Done] = asyncio.Queue()
        self.stitcher = Stitcher(
            getattr(runner.model, "provider", "auto"), **runner._stitch_options
        )
        self.slots: dict[int, _Slot] = {}
        self.order: list[_Slot] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.failure: BaseException | None = None
        self.refused: tuple[ToolCall, ...] = ()
        self.calls: tuple[ToolCall, ...] = ()
        self.turn: ToolTurn | None = None
        self.outcome: str | None = None  # as the round task decided (see _Done)
        self.warnings: list[RunWarning] = []
        #: Set while the consumer waits for the next event: tools start only then.
        self.asking = asyncio.Event()
        #: Set each time the consumer took an event: the round reads on when there is room.
        self.drained = asyncio.Event()
        self.aborted: BaseException | None = None  # an early should_execute raised
        self.task: asyncio.Task[None] | None = None
        self.reading = False
        self.abandoned: list[ToolCall] = []  # calls whose tool was left running
        self.text_chars = 0
        self.overflow = False  # the text passed max_text_chars
        self.last: Any = None  # the last raw event of the stream
        self.trace: RunTrace = NO_TRACE  # the run's spans (_otel)

    # -- helpers ---------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        self.queue.put_nowait(event)

    def warn(self, code: str, message: str) -> None:
        warning = RunWarning(round=self.number, code=code, message=message)
        self.warnings.append(warning)
        self.emit(warning)

    async def consumed(self) -> None:
        """Return once the consumer is asking for an event (at once if it is now).

        This is the gate of every tool start and every ``should_execute`` question: a
        stream nobody reads any more (left with ``break``, say) starts nothing new."""
        await self.asking.wait()

    async def room(self) -> None:
        """Wait while ``event_buffer`` events wait for the consumer (backpressure)."""
        while self.queue.qsize() >= self.runner.event_buffer:
            self.drained.clear()
            await self.drained.wait()

    def abort(self, error: BaseException) -> None:
        """An early ``should_execute`` raised: end the round now, not at the stream's end."""
        if self.aborted is None:
            self.aborted = error
            if self.reading and self.task is not None:
                self.task.cancel()

    def slot(self, index: int) -> _Slot:
        slot = self.slots.get(index)
        if slot is None:
            slot = self.slots[index] = _Slot(index)
            self.order.append(slot)
        return slot

    async def ask(self, slot: _Slot) -> bool:
        assert slot.call is not None
        if slot.ask_error is not None:
            raise slot.ask_error
        if slot.approved is None:
            try:
                decision = await self._decide(slot.call)
            except BaseException as exc:
                slot.ask_error = exc
                slot.asked.set()
                raise
            slot.approved = decision
            slot.asked.set()
        return slot.approved

    async def _decide(self, call: ToolCall) -> bool:
        """``should_execute(call)``, asked while the consumer reads, within
        ``approval_timeout`` (an async answer that comes later is a refusal)."""
        if self.should_execute is None:
            return True
        await self.consumed()
        runner = self.runner
        should_execute = self.should_execute
        if inspect.iscoroutinefunction(should_execute):
            outcome = await runner._executor.bounded(should_execute(call), runner.approval_timeout)
        else:
            # A sync approver runs on the runner's pool, so a blocking one (a prompt, a
            # network check) holds neither the event loop nor past ``approval_timeout``.
            outcome = await runner._executor.run_sync_call(
                functools.partial(should_execute, call), runner.approval_timeout
            )
            if outcome.ok and inspect.isawaitable(outcome.value):  # it returned a coroutine
                outcome = await runner._executor.bounded(outcome.value, runner.approval_timeout)
        if outcome.timed_out:
            self.warn(
                "approval-timeout",
                f"should_execute did not answer for call {call.id} ({call.name!r}) within "
                f"{runner.approval_timeout:g} seconds: the call counts as refused",
            )
            return False
        if outcome.error is not None:
            raise outcome.error
        return bool(outcome.value)

    def drop(self, slot: _Slot, reason: str) -> None:
        if slot.dropped:
            return
        slot.dropped = True
        if slot.task is not None and not slot.task.done():
            slot.task.cancel()
        if slot.started and slot.call is not None:
            self.emit(ToolDropped(round=self.number, call=slot.call, reason=reason))

    # -- the stream ------------------------------------------------------------------------

    def handle(self, events: list[Event]) -> None:
        for event in events:
            self.emit(event)
            if isinstance(event, CallStarted):
                self.slot(event.index)
            elif isinstance(event, CallReady):
                self.ready(self.slot(event.index), event.call)
            elif isinstance(event, CallDiscarded):
                self.slot(event.index).discarded = event
            elif isinstance(event, CallWarning):
                self.warned(self.slot(event.index), event.error)
            elif isinstance(event, TextDelta):
                self.count_text(len(event.text))

    def count_text(self, chars: int) -> None:
        """Bound the response's text: past ``max_text_chars`` the round stops reading."""
        self.text_chars += chars
        limit = self.runner.max_text_chars
        if limit is not None and self.text_chars > limit and not self.overflow:
            self.overflow = True
            self.warn(
                "text-truncated",
                f"the response's text passed max_text_chars ({limit}); the rest is not read",
            )

    def warned(self, slot: _Slot, error: ToolCallError) -> None:
        if isinstance(error, SchemaViolation):
            if slot.schema_error is None:
                slot.schema_error = error
        elif error.code in CORRUPTING:
            if slot.corrupted is None:
                slot.corrupted = error
            self.drop(slot, f"the call turned out corrupted ({error.code})")

    def ready(self, slot: _Slot, call: ToolCall) -> None:
        slot.call = call
        if self.synthesis:
            return
        tool = self.runner.tools.get(call.name)
        slot.tool = tool
        problem = self._problem(slot, call, tool)
        if problem is not None:
            slot.code, message = problem
            slot.problem = tool_error(call, message)
            return
        assert tool is not None
        if tool.early and slot.corrupted is None:
            slot.early = True
            slot.task = asyncio.create_task(self.early(slot))
            self.tasks.append(slot.task)

    def _problem(self, slot: _Slot, call: ToolCall, tool: Tool | None) -> tuple[str, str] | None:
        """Why a complete call cannot run: ``(code, message)``, or ``None``.

        The core has checked the name and (for a JSON Schema tool) the arguments as they
        streamed; under ``on_schema_violation="discard"`` such calls never get here. Under
        ``"warn"`` a JSON Schema tool's call that broke its schema is complete but is not run.
        A pydantic tool's arguments are validated by pydantic, which alone decides.
        """
        if tool is None:  # the core refuses undeclared names; kept for any model's stream
            return "unknown-tool", _unknown_tool_message(self.runner, call.name, call.id)
        if tool.model is not None:
            problem = tool.check(call.parsed_arguments)
        elif slot.schema_error is not None:
            problem = str(slot.schema_error)
        else:
            return None
        if problem is None:
            return None
        return "invalid-arguments", _invalid_arguments_message(call.name, call.id, problem)

    async def early(self, slot: _Slot) -> None:
        try:
            approved = await self.ask(slot)
        except Exception as exc:
            self.abort(exc)
            return
        if approved and not slot.dropped:
            await self.execute(slot, early=True)

    async def execute(self, slot: _Slot, *, early: bool) -> None:
        call, tool = slot.call, slot.tool
        assert call is not None
        assert tool is not None
        runner = self.runner
        async with self.semaphore:
            await self.consumed()
            if slot.dropped:
                return
            slot.started = True
            self.emit(ToolStarted(round=self.number, call=call, early=early))
            traced = self.trace.tool(call)
            run = runner._executor.run(tool, call.parsed_arguments, runner.tool_timeout)
            outcome = await traced.wait(run)
        slot.outcome = outcome
        slot.result, slot.code, failure = self._result_of(call, outcome)
        traced.end(outcome, slot.code)
        slot.failure = failure
        self.emit(
            ToolResultReady(
                round=self.number,
                result=slot.result,
                early=early,
                executed=True,
                code=slot.code,
                seconds=outcome.seconds,
                name=call.name,
                abandoned=outcome.abandoned,
                failure=failure,
            )
        )

    def _result_of(
        self, call: ToolCall, outcome: Outcome
    ) -> tuple[ToolResult, str | None, ToolFailure | None]:
        """The result a tool run gives the model, its error code, and for an exception the
        ``ToolFailure`` (traceback kept for the application, never sent to the model)."""
        if outcome.timed_out:
            return (
                tool_error(
                    call,
                    f"Error [tool-timeout]: the tool {call.name!r} (call id {call.id}) did not "
                    f"finish within {self.runner.tool_timeout:g} seconds and was abandoned. Try "
                    "again with a smaller request, or continue without this result.",
                ),
                "tool-timeout",
                None,
            )
        if outcome.ok:
            try:
                content = render(outcome.value)
            except Exception as exc:
                outcome.error = exc
            else:
                return (
                    ToolResult(call_id=call.id, name=call.name, content=self._clip(call, content)),
                    None,
                    None,
                )
        error = outcome.error
        assert error is not None
        failure = tool_failure(error, call, self.runner.error_message)
        return tool_error(call, failure.message), failure.code, failure

    def _clip(self, call: ToolCall, content: str) -> str:
        limit = self.runner.max_result_chars
        clipped = clip(content, limit)
        if clipped is not content:
            self.warn(
                "result-truncated",
                f"the result of call {call.id} ({call.name!r}) had {len(content)} characters; "
                f"the model gets the first {limit}",
            )
        return clipped

    # -- the round -------------------------------------------------------------------------

    async def play(self) -> None:
        self.task = asyncio.current_task()
        try:
            outcome = await self._play()
        except asyncio.CancelledError:
            if self.aborted is None:  # the round is closed or timed out: nobody reads on
                raise
            _uncancel(self.task)
            outcome, self.failure = "raised", self.aborted
        except Exception as exc:  # a callback of the caller raised
            outcome, self.failure = "raised", exc
        finally:
            await self._cancel_tasks()
        if outcome == "raised":
            for slot in self.order:
                self.drop(slot, "a callback raised")
        self.queue.put_nowait(_Done(outcome, self.failure))

    async def _cancel_tasks(self) -> None:
        for task in self.tasks:
            if not task.done():
                task.cancel()
        if self.tasks:  # also retrieves the exceptions of the tasks that failed
            await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _read(self) -> None:
        self.reading = True
        try:
            if self.first is not _END:
                self.handle(self.stitcher.feed(self.first))
                self.last = self.first
                await self.room()
                async for raw in self.iterator:
                    if self.overflow:
                        break
                    self.handle(self.stitcher.feed(raw))
                    self.last = raw
                    await self.room()
            # Stopped at max_text_chars: the rest of the response is never read, a cut.
            self.handle(self.stitcher.close(cancelled=self.overflow))
        finally:
            self.reading = False
            aclose = getattr(self.iterator, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _play(self) -> str:
        try:
            await self._read()
        except Exception as exc:
            self.failure = exc
        if self.aborted is not None:
            raise self.aborted
        summary = self.stitcher.result
        if self.failure is None and summary.stream_error is not None:
            self.failure = summary.stream_error
        cut = self.overflow or not self._marked(summary)  # cut, or no end marker
        read = "failed" if self.failure is not None else "truncated" if cut else "read"
        self.trace.model_ended(ToolRunner._ended(self, summary), read, self.failure)
        if self.failure is not None:
            for slot in self.order:
                self.drop(slot, "the round failed")
            return "failed"
        if cut:
            for slot in self.order:
                self.drop(slot, "the response ended without its end marker")
            return "truncated"
        if self.synthesis or not self.order:
            return "answer"
        self.calls = tuple(slot.call for slot in self.order if slot.call is not None)
        self.machine.move("calls")
        refused = await self._ask_all()
        if refused:
            self.refused = tuple(refused)
            for slot in self.order:
                self.drop(slot, "the batch was refused")
            self.emit(BatchRefused(round=self.number, calls=self.calls, refused=self.refused))
            return "refused"
        self.machine.move("approved")
        self._answer_errors()
        await self._run_late()
        self.machine.move("executed")
        self.turn = self._commit()
        return "tools"

    def _marked(self, summary: StitchResult) -> bool:
        """Whether the response ended with its end marker: a finish reason, and the
        provider's last event where it has one the runner sees (``END_EVENTS``)."""
        if summary.finish_reason is None:
            return False
        end = END_EVENTS.get(summary.provider or "")
        return end is None or _event_type(self.last) == end

    async def _ask_all(self) -> list[ToolCall]:
        """Ask about every call that could run (early ones were asked at their CallReady);
        return the refused ones. Every call is asked, even after a refusal."""
        refused: list[ToolCall] = []
        for slot in self.order:
            if not self._runnable(slot):
                continue
            assert slot.call is not None
            if slot.early and slot.approved is None:
                await slot.asked.wait()
            if not await self.ask(slot):
                refused.append(slot.call)
        return refused

    def _answer_errors(self) -> None:
        """Give each call that cannot run its error result, in call order."""
        for slot in self.order:
            error = self._error_result(slot)
            if error is not None:
                slot.result = error
                self.emit(
                    ToolResultReady(
                        round=self.number,
                        result=error,
                        early=False,
                        executed=False,
                        code=slot.code,
                        name=_received_name(slot),
                    )
                )

    async def _run_late(self) -> None:
        """Run the approved calls that did not start early; wait for every tool."""
        for slot in self.order:
            if self._runnable(slot) and not slot.early:
                task = asyncio.create_task(self.execute(slot, early=False))
                slot.task = task
                self.tasks.append(task)
        if self.tasks:
            await asyncio.gather(*self.tasks)

    def _runnable(self, slot: _Slot) -> bool:
        return (
            slot.call is not None
            and slot.tool is not None
            and slot.problem is None
            and slot.corrupted is None
        )

    def _error_result(self, slot: _Slot) -> ToolResult | None:
        if slot.discarded is not None:
            return self._discarded_result(slot, slot.discarded)
        if slot.call is not None and slot.corrupted is not None:
            slot.code = slot.corrupted.code
            return tool_error(slot.call, _corrupted_message(slot.call, slot.corrupted))
        return slot.problem

    def _discarded_result(self, slot: _Slot, discarded: CallDiscarded) -> ToolResult:
        """The error result for a call the core discarded (its id, or a generated one)."""
        # A call without id is answered under the id the core would have given it.
        fallback = None if discarded.id else self.stitcher.assembler.generated_id(discarded.index)
        reply = tool_error_reply(discarded, fallback_id=fallback)
        error = discarded.error
        if isinstance(error, UnknownTool):
            slot.code = error.code
            message = _unknown_tool_message(self.runner, discarded.name or "", reply.call_id)
            return tool_error(reply, message)
        if isinstance(error, SchemaViolation):
            slot.code = "invalid-arguments"
            message = _invalid_arguments_message(reply.name, reply.call_id, str(error))
            return tool_error(reply, message)
        slot.code = reply.code
        return ToolResult(
            call_id=reply.call_id, name=reply.name, content=reply.content, is_error=True
        )

    # -- what is sent back ------------------------------------------------------------------

    def send_text(self, text: str, what: str) -> str:
        """``text`` made encodable (lone surrogates replaced, with a warning)."""
        fixed, count = encodable(text)
        if count:
            self.warn(
                "lone-surrogate",
                f"{what} had {count} lone surrogate(s), replaced by U+FFFD in the history",
            )
        return fixed

    def send_name(self, name: str) -> str:
        """A name every provider accepts (``unknown_tool`` otherwise, with a warning)."""
        sent = wire_name(self.send_text(name, "a tool name"))
        if sent != name:
            self.warn(
                "tool-name-replaced",
                f"the tool name {name!r} is not one providers accept; sent back as {sent!r}",
            )
        return sent

    def _sent_call(self, slot: _Slot, result: ToolResult) -> FunctionCall:
        if slot.call is None:
            name = self.send_name(result.name or UNKNOWN_TOOL_NAME)
            return FunctionCall(id=result.call_id, name=name)
        call = slot.call
        arguments, count = encodable_value(call.parsed_arguments)
        if count:
            self.warn(
                "lone-surrogate",
                f"the arguments of call {call.id} had {count} lone surrogate(s), replaced by "
                "U+FFFD in the history",
            )
        return FunctionCall(
            id=call.id,
            name=self.send_name(call.name),
            arguments=arguments,
            signature=call.signature,
            caller=call.caller,
        )

    def _sent_result(self, result: ToolResult) -> ToolResult:
        name = None if result.name is None else wire_name(encodable(result.name)[0])
        content = self.send_text(result.content, f"the result of call {result.call_id}")
        if name == result.name and content is result.content:
            return result
        return ToolResult(
            call_id=result.call_id, name=name, content=content, is_error=result.is_error
        )

    def _commit(self) -> ToolTurn:
        calls: list[FunctionCall] = []
        results: list[ToolResult] = []
        for slot in self.order:
            result = slot.result
            if result is None:  # cannot happen: every slot ends with a result
                raise AssertionError(f"call {slot.index} has no result")
            calls.append(self._sent_call(slot, result))
            results.append(self._sent_result(result))
        summary = self.stitcher.result
        tokens_in, tokens_out = tokens(summary.usage)
        text = self.send_text(summary.text, "the response text")
        return ToolTurn(
            round=self.number,
            text=text,
            tool_calls=tuple(calls),
            results=tuple(results),
            reasoning=summary.reasoning,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            message=self.sent_message(summary, calls),
            failures=tuple(s.failure for s in self.order if s.failure and not s.dropped),
        )

    def sent_message(
        self, summary: StitchResult, calls: Sequence[FunctionCall]
    ) -> AssistantMessage | None:
        """``summary.message()`` (reasoning blocks with their signatures, in stream order)
        with ``calls`` (as sent back) in place of its calls and its text made encodable;
        ``None`` if its calls do not pair with ``calls`` one to one."""
        parts = summary.message().ordered_parts()
        if sum(isinstance(part, FunctionCall) for part in parts) != len(calls):
            return None
        pending = iter(calls)
        sent: list[Reasoning | TextPart | FunctionCall] = []
        for part in parts:
            if isinstance(part, FunctionCall):
                sent.append(next(pending))
            elif isinstance(part, TextPart):
                sent.append(TextPart(text=encodable(part.text)[0], signature=part.signature))
            elif isinstance(part, Reasoning):
                sent.append(_encodable_reasoning(part))
            else:
                sent.append(part)
        return AssistantMessage(parts=tuple(sent))


def _encodable_reasoning(part: Reasoning) -> Reasoning:
    text, count = encodable(part.text)
    if not count:
        return part
    return Reasoning(
        text=text,
        signature=part.signature,
        id=part.id,
        redacted=part.redacted,
        summary=part.summary,
    )


def _refused(result: RunResult, play: _Round, summary: StitchResult) -> None:
    """A refused batch ends the run: keep its calls and its uncommitted assistant message."""
    result.unresolved = play.calls
    result.refused = play.refused
    result.pending = summary.message()
    result._end("refused")


def _answered(result: RunResult, play: _Round, summary: StitchResult) -> None:
    """The final answer: its text, and its assistant message in the history."""
    text = play.send_text(summary.text, "the answer")
    result.final_text = text
    if summary.text or summary.reasoning:
        message = play.sent_message(summary, ())
        if message is None:  # the model called tools anyway (forced synthesis)
            message = AssistantMessage(
                text=text,
                reasoning=(Reasoning(text=summary.reasoning),) if summary.reasoning else (),
            )
        result.messages.append(message)


def _declared_schema(tool: Tool, policy: str) -> dict[str, Any]:
    """What the core is told of ``tool``'s arguments.

    A pydantic tool's schema is given only where it cannot stop a call that pydantic would
    accept (its lax mode takes ``"3"`` for an ``int``, say): under ``"warn"``. Otherwise the
    core knows its name only (``{}`` accepts any arguments) and pydantic alone decides.
    """
    if tool.model is not None and policy != "warn":
        return {}
    return tool.parameters


def _event_type(raw: Any) -> Any:
    """The ``type`` of a raw provider event (an SDK object or a dict)."""
    if isinstance(raw, Mapping):
        return raw.get("type")
    return getattr(raw, "type", None)


def _received_name(slot: _Slot) -> str:
    """The tool name as the model sent it (``""`` if it sent none)."""
    if slot.call is not None:
        return slot.call.name
    return (slot.discarded.name if slot.discarded is not None else None) or ""


def _uncancel(task: asyncio.Task[Any] | None) -> None:
    """Undo a cancellation the round made itself (Python 3.11+ counts them)."""
    uncancel = getattr(task, "uncancel", None)
    if uncancel is not None:
        uncancel()


class _End:
    pass


_END: Final = _End()


class RunResult:
    """What ``ToolRunner.run`` returns.

    ``stream`` (also ``async for event in result``) forwards every event of every round as
    it happens; iterate it once, to the end (or ``await collect()``), and the other
    attributes are complete: ``final_text``, ``tool_turns`` (the committed tool rounds),
    ``stop_reason`` (one of ``STOP_REASONS``, see docs/runner.md; ``None`` only while the
    run goes on), ``error`` (the error that ended the run), ``unresolved`` and ``refused``
    (the calls of a refused batch, and those that were refused), ``pending`` (the
    uncommitted assistant message of a refused batch or of a truncated response),
    ``rounds`` (one ``RoundEnded`` per round, with its tokens), ``warnings`` (every
    ``RunWarning``), ``abandoned`` (the calls whose tool was still running at its deadline
    and was left behind) and ``messages`` (the conversation: the input plus everything
    committed, ending with the final answer). ``done`` says whether the run is over.
    Leaving early: ``await aclose()`` (or ``async with``) closes the model's stream and
    cancels the tools; the run then ends with ``stop_reason="cancelled"``.
    """

    def __init__(self) -> None:
        self.final_text = ""
        self.tool_turns: list[ToolTurn] = []
        self._machine = RunMachine()  # one per run: grammars/run-machine.json
        self.error: BaseException | None = None
        self.unresolved: tuple[ToolCall, ...] = ()
        self.refused: tuple[ToolCall, ...] = ()
        self.pending: AssistantMessage | None = None
        self.rounds: list[RoundEnded] = []
        self.warnings: list[RunWarning] = []
        self.abandoned: list[ToolCall] = []
        self.messages: list[Message] = []
        self.done = False
        #: The run's model's ``provider`` (the wire form of ``messages_as``).
        self.provider = "auto"
        self._stream: AsyncGenerator[Event, None] | None = None
        self._trace: RunTrace = NO_TRACE  # the run's spans (_otel)
        self._primed: Any = None  # the first model stream, until the run takes it over

    @property
    def stream(self) -> AsyncIterator[Event]:
        """Every event of the run, live. Can be iterated once."""
        assert self._stream is not None
        return self._stream

    def __aiter__(self) -> AsyncIterator[Event]:
        return self.stream

    async def collect(self) -> RunResult:
        """Consume the rest of the stream; return ``self``."""
        async for _ in self.stream:
            pass
        return self

    async def aclose(self) -> None:
        """Stop the run: close the model's stream, cancel the tools."""
        if self._stream is not None:
            await self._stream.aclose()
        primed, self._primed = self._primed, None
        aclose = getattr(primed, "aclose", None)
        if aclose is not None:
            await aclose()
        self._end("cancelled")

    def messages_as(self, provider: str | None = None, **options: Any) -> Any:
        """``messages`` in a provider's wire form (``write_history``): the run's model's
        unless ``provider`` names another. A list of dicts for ``"openai-chat"``,
        ``"openai-responses"`` and ``"ollama-chat"``, ``(system, messages)`` for
        ``"anthropic"`` and ``"bedrock-converse"``, ``(system_instruction, contents)`` for
        ``"gemini"``; ``options`` go to the writer (``include_reasoning=True`` for OpenAI
        Chat). A provider without a wire form raises ``ValueError``."""
        return write_history(self.messages, provider or self.provider, **options)

    @property
    def stop_reason(self) -> str | None:
        """Why the run ended (one of ``STOP_REASONS``); ``None`` while it goes on."""
        return self._machine.stop_reason

    @property
    def state(self) -> str:
        """Where the run is in its machine (grammars/run-machine.json): a live state
        (``"streaming"``, ``"approving"``, ``"executing"``, ``"committing"``,
        ``"synthesising"``) or its stop reason."""
        return self._machine.state

    def _end(self, stop_reason: str) -> None:
        """The run is over: ``stop_reason`` unless it already ended."""
        self._machine.end(stop_reason)
        self.done = True
        self._trace.end(self)

    async def __aenter__(self) -> RunResult:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class RunTimeout(TimeoutError):
    """``round_timeout`` or ``run_timeout`` passed; ``RunResult.error`` of a
    ``"timeout"`` run."""


class ToolRunner:
    """The tool loop over ``model`` with ``tools`` (see the module docs).

    ``max_rounds`` (default 10) bounds the model calls that may use tools; after that many
    tool rounds one more call, without tools, asks for the final answer.
    ``concurrency`` (default 8) bounds the tools running at once. ``tool_timeout`` (default
    60 seconds, ``None`` for none) bounds each tool's own running time; a tool still running
    then is answered with ``tool-timeout`` and abandoned, never awaited (a thread cannot be
    stopped). Sync tools run on the runner's own pool of ``max_threads`` (default 32)
    threads. ``approval_timeout`` (default 300 s) bounds an async ``should_execute``
    (a late answer is a refusal); ``round_timeout`` (default 600 s) one round, its stream
    and its tools; ``run_timeout`` (default 3600 s) the whole run; ``None`` for none.
    ``event_buffer`` (default 256) is how many events may wait for the consumer before the
    round stops reading the model's stream; ``max_result_chars`` (default 100,000) cuts a
    longer tool result, with a note for the model; ``max_text_chars`` (default 1,000,000)
    bounds a response's text (past it the round stops reading and is ``"truncated"``).
    ``synthesis_prompt`` is the instruction
    of the forced-synthesis call.

    The tools' schemas go to the core (the ``Stitcher`` of each round, as
    ``Assembler(tools=...)``), which checks every call as it streams: a call to an unknown
    tool is discarded at its name (``UnknownTool``), one whose arguments break its tool's
    JSON Schema at the fragment that made it certain (``SchemaViolation``), and the runner
    answers both with error results. With ``on_schema_violation="warn"`` the violations are
    ``CallWarning`` events instead and the call completes; it is still not run. A pydantic
    tool is validated by pydantic, which decides what runs: its schema is checked by the
    core in addition only under ``"warn"`` (as warnings), since a discard would overrule
    pydantic's own (lax) validation. ``limits``, ``watch_strings`` and ``partial_arguments``
    go to the core as they are (see docs/schema.md); so does ``id_factory(index, position)``,
    the ids of calls that arrive without one (each round is a stream of its own: a factory
    that must give ids unique across rounds keeps its own counter or uses uuids).
    ``text_format`` (with ``primed_reasoning``) reads the tool calls a model writes into its
    text in that format (docs/text-formats.md): for a server whose own tool-call parser is
    off or fails, the calls in the response's text are run like any other.

    With ``opentelemetry-api`` installed (the ``[otel]`` extra), each run leaves GenAI spans
    (a run span, a ``chat`` span per model call, an ``execute_tool`` span per tool run) on
    the global tracer provider, or on ``tracer_provider``; see docs/runner.md "Tracing".
    """

    def __init__(
        self,
        model: Model,
        tools: Sequence[Tool],
        *,
        max_rounds: int = 10,
        concurrency: int = 8,
        tool_timeout: float | None = 60.0,
        max_threads: int = 32,
        approval_timeout: float | None = 300.0,
        round_timeout: float | None = 600.0,
        run_timeout: float | None = 3600.0,
        event_buffer: int = 256,
        max_result_chars: int | None = 100_000,
        max_text_chars: int | None = 1_000_000,
        synthesis_prompt: str = DEFAULT_SYNTHESIS_PROMPT,
        limits: Limits | None = None,
        on_schema_violation: str = "discard",
        watch_strings: Mapping[str, Iterable[str]] | None = None,
        partial_arguments: bool | None = None,
        id_factory: IdFactory | None = None,
        error_message: ErrorMessage | None = None,
        tracer_provider: Any = None,
        text_format: str | None = None,
        primed_reasoning: bool = False,
    ) -> None:
        _check_positive(max_rounds=max_rounds, concurrency=concurrency)
        _check_positive(max_threads=max_threads, event_buffer=event_buffer)
        _check_optional(tool_timeout=tool_timeout, approval_timeout=approval_timeout)
        _check_optional(round_timeout=round_timeout, run_timeout=run_timeout)
        _check_optional(max_result_chars=max_result_chars, max_text_chars=max_text_chars)
        self.model = model
        self.tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self.tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self.tools[tool.name] = tool
        self.max_rounds = max_rounds
        self.concurrency = concurrency
        self.tool_timeout = tool_timeout
        self.approval_timeout = approval_timeout
        self.round_timeout = round_timeout
        self.run_timeout = run_timeout
        self.event_buffer = event_buffer
        self.max_result_chars = max_result_chars
        self.max_text_chars = max_text_chars
        self.synthesis_prompt = synthesis_prompt
        #: ``error_message(exception, call) -> str``: what the model is told of a tool's
        #: exception (``None``: the tool, the call id and the exception's type only).
        self.error_message = error_message
        self._executor = ToolExecutor(max_threads)
        #: OpenTelemetry spans (docs/runner.md "Tracing"); a no-op without opentelemetry.
        self._tracer = Tracer(tracer_provider)
        #: The ``Stitcher`` keywords of every round: what the core checks.
        self._stitch_options: dict[str, Any] = {
            "limits": limits,
            "tools": {
                tool.name: _declared_schema(tool, on_schema_violation)
                for tool in self.tools.values()
            },
            "on_schema_violation": on_schema_violation,
            "watch_strings": watch_strings,
            "partial_arguments": partial_arguments,
            "id_factory": id_factory,
            "text_format": text_format,
            "primed_reasoning": primed_reasoning,
        }
        Stitcher(**self._stitch_options)  # refuse bad options here, not in the first round

    @property
    def abandoned_threads(self) -> int:
        """How many threads of abandoned sync tools (of every run) are still running."""
        return self._executor.abandoned_threads

    def close(self) -> None:
        """Shut the runner's thread pool down (without waiting for abandoned threads)."""
        self._executor.shutdown()

    async def run(
        self,
        messages: Sequence[Any] | str,
        *,
        system: Any = None,
        should_execute: ShouldExecute | None = None,
        on_tool_turns: OnToolTurns | None = None,
    ) -> RunResult:
        """Start a run on ``messages``: neutral messages (a ``str`` among them is a user
        message), one ``str``, or the history in the model's own wire format (OpenAI Chat
        message dicts, Responses input items, Anthropic messages with ``system=``, Gemini
        contents), read with ``read_history``.

        ``should_execute(call)`` (sync or async) is asked once per call that could run;
        ``on_tool_turns(turns)`` (sync or async) after each committed tool round. The first
        model call is opened here: an error opening it is raised. Iterate the result's
        ``stream`` to drive the run.
        """
        provider = getattr(self.model, "provider", "auto")
        history = read_history(messages, provider, system=system)
        result = RunResult()
        result.messages = history
        result.provider = provider
        deadline = _deadline(self.run_timeout)
        trace = result._trace = self._tracer.start(self.model)
        try:
            iterator, first = await self._open(history, synthesis=False, trace=trace)
        except BaseException as exc:
            result.error = exc
            result._end("error")
            raise
        result._primed = iterator
        result._stream = self._drive(
            result, iterator, first, should_execute, on_tool_turns, deadline
        )
        return result

    def run_sync(
        self,
        messages: Sequence[Any] | str,
        *,
        system: Any = None,
        should_execute: ShouldExecute | None = None,
        on_tool_turns: OnToolTurns | None = None,
    ) -> SyncRunResult:
        """``run`` for sync code: the run in a private event loop of its own thread; the
        result's ``stream`` is a plain iterator (see ``_sync`` and docs/runner.md). Not
        from a thread running an event loop: there, ``await runner.run(...)``."""
        return start_sync(
            self,
            messages,
            system=system,
            should_execute=should_execute,
            on_tool_turns=on_tool_turns,
        )

    async def _open(
        self, history: list[Message], *, synthesis: bool, trace: RunTrace = NO_TRACE
    ) -> tuple[Any, Any]:
        tools = list(self.tools.values())
        trace.model_call(synthesis)
        if synthesis:
            messages = [*history, UserMessage(self.synthesis_prompt)]
            stream = self.model.stream(messages, tools, tool_choice="none")
        else:
            stream = self.model.stream(history, tools)
        iterator = stream.__aiter__()
        try:
            first = await iterator.__anext__()
        except StopAsyncIteration:
            first = _END
        except BaseException as exc:
            trace.model_failed(exc)
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()
            raise
        return iterator, first

    async def _drive(
        self,
        result: RunResult,
        iterator: Any,
        first: Any,
        should_execute: ShouldExecute | None,
        on_tool_turns: OnToolTurns | None,
        run_deadline: float | None,
    ) -> AsyncGenerator[Event, None]:
        history = result.messages
        result._primed = None
        semaphore = asyncio.Semaphore(self.concurrency)
        number = 0
        try:
            while not result.done:
                number += 1
                synthesis = number > self.max_rounds
                yield RoundStarted(round=number, synthesis=synthesis)
                deadline = _earliest(run_deadline, _deadline(self.round_timeout))
                if iterator is None:
                    try:
                        iterator, first = await _within(
                            self._open(history, synthesis=synthesis, trace=result._trace),
                            deadline,
                        )
                    except asyncio.TimeoutError:
                        error = RunTimeout("the run ran past its timeout opening a round")
                        async for event in self._fail(result, number, error, "timeout"):
                            yield event
                        return
                    except Exception as exc:
                        async for event in self._fail(result, number, exc):
                            yield event
                        return
                play = _Round(
                    self,
                    number,
                    synthesis,
                    iterator,
                    first,
                    should_execute,
                    semaphore,
                    result._machine,
                )
                play.trace = result._trace
                iterator = first = None
                # aclosing: leaving early closes the round (its task cancelled) right away.
                async with aclosing(self._forward(play, deadline)) as events:
                    async for event in events:
                        yield event
                async with aclosing(self._conclude(result, play, on_tool_turns)) as events:
                    async for event in events:
                        yield event
        finally:
            if iterator is not None:
                aclose = getattr(iterator, "aclose", None)
                if aclose is not None:
                    await aclose()
            result._end("cancelled")  # closed or cancelled before its end

    async def _forward(self, play: _Round, deadline: float | None) -> AsyncGenerator[Event, None]:
        """Play the round as its own task and forward its events; the round's outcome in
        ``play.outcome`` (``"timeout"`` when ``deadline`` passed first)."""
        task = asyncio.create_task(play.play())
        try:
            while True:
                item = await self._next(play, deadline)
                if isinstance(item, _Done):
                    break
                yield item
        finally:
            if not task.done():
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            self._abandoned_of(play)
        if item.outcome == "raised":
            assert item.error is not None
            play.failure, play.outcome = item.error, "failed"
        else:
            play.outcome = item.outcome

    @staticmethod
    async def _next(play: _Round, deadline: float | None) -> Event | _Done:
        """The round's next event; the consumer is "asking" while it waits."""
        play.asking.set()
        try:
            if not play.queue.empty():  # no task, no timer: the common case
                if deadline is not None and time.monotonic() >= deadline:
                    raise asyncio.TimeoutError
                return play.queue.get_nowait()
            item: Event | _Done = await _within(play.queue.get(), deadline)
        except asyncio.TimeoutError:
            play.failure = RunTimeout("the round or the run ran past its timeout")
            return _Done("timeout", play.failure)
        finally:
            play.asking.clear()
            play.drained.set()
        return item

    def _abandoned_of(self, play: _Round) -> None:
        play.abandoned = [
            s.call
            for s in play.order
            if s.call is not None and s.outcome is not None and s.outcome.abandoned
        ]

    async def _conclude(
        self, result: RunResult, play: _Round, on_tool_turns: OnToolTurns | None
    ) -> AsyncGenerator[Event, None]:
        """The end of a round: its ``RoundEnded``, and what its outcome means for the run
        (``result.done`` once the run is over)."""
        number = play.number
        summary = play.stitcher.result
        result.abandoned.extend(play.abandoned)
        ended = self._ended(play, summary)
        result._trace.model_ended(ended, play.outcome, play.failure)
        if play.outcome in ("answer", "tools"):
            async for event in self._concluded(result, play, summary, ended, on_tool_turns):
                yield event
            return
        result.warnings.extend(play.warnings)
        result.rounds.append(ended)
        yield ended
        if play.outcome == "refused":
            _refused(result, play, summary)
            yield RunFinished(round=number, stop_reason="refused", final_text="")
        elif play.outcome == "truncated":
            result.pending = summary.message()
            result._end("truncated")
            yield RunFinished(round=number, stop_reason="truncated", final_text="")
        else:
            assert play.failure is not None
            stop = "timeout" if play.outcome == "timeout" else "error"
            async for event in self._fail(result, number, play.failure, stop):
                yield event

    async def _concluded(
        self,
        result: RunResult,
        play: _Round,
        summary: StitchResult,
        ended: RoundEnded,
        on_tool_turns: OnToolTurns | None,
    ) -> AsyncGenerator[Event, None]:
        """A round that went as planned: its answer, or its tool turn committed."""
        number = play.number
        if play.outcome == "answer":
            before = len(play.warnings)
            _answered(result, play, summary)  # may warn, after the round's stream
            for warning in play.warnings[before:]:
                yield warning
            result.warnings.extend(play.warnings)
            result.rounds.append(ended)
            yield ended
            stop = "max-rounds" if play.synthesis else "completed"
            result._end(stop)
            yield RunFinished(round=number, stop_reason=stop, final_text=result.final_text)
            return
        result.warnings.extend(play.warnings)
        turn = play.turn
        assert turn is not None
        result.messages.extend(turn.messages())
        result.tool_turns.append(turn)
        result.rounds.append(ended)
        yield ended
        if on_tool_turns is not None:
            try:
                await _maybe_await(on_tool_turns(list(result.tool_turns)))
            except Exception as exc:
                async for event in self._fail(result, number, exc):
                    yield event
                return
        result._machine.move("synthesise" if number >= self.max_rounds else "next_round")

    @staticmethod
    def _ended(play: _Round, summary: StitchResult) -> RoundEnded:
        tokens_in, tokens_out = tokens(summary.usage)
        return RoundEnded(
            round=play.number,
            finish_reason=summary.finish_reason,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            usage=summary.usage,
        )

    async def _fail(
        self, result: RunResult, number: int, error: BaseException, stop: str = "error"
    ) -> AsyncIterator[Event]:
        result.error = error
        result.final_text = ""
        result._end(stop)
        yield RunFailed(round=number, error=error, message=str(error))
        yield RunFinished(round=number, stop_reason=stop, final_text="")


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if value < 1:
            raise ValueError(f"{name} must be at least 1")


def _check_optional(**values: float | None) -> None:
    for name, value in values.items():
        if value is not None and value <= 0:
            raise ValueError(f"{name} must be positive or None")


def _deadline(seconds: float | None) -> float | None:
    return None if seconds is None else time.monotonic() + seconds


def _earliest(*deadlines: float | None) -> float | None:
    known = [d for d in deadlines if d is not None]
    return min(known) if known else None


async def _within(awaitable: Awaitable[Any], deadline: float | None) -> Any:
    """``awaitable`` within ``deadline`` (a ``time.monotonic()`` value, or ``None``)."""
    if deadline is None:
        return await awaitable
    # Not asyncio.wait_for: before Python 3.12 it can swallow a cancellation that arrives
    # as the awaitable completes, and a cancelled run must stay cancelled.
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=max(deadline - time.monotonic(), 0.0))
    except BaseException:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise asyncio.TimeoutError
    return task.result()
