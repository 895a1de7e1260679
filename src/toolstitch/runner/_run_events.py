"""The runner's own events, and ``ToolTurn``.

``RunResult.stream`` forwards every core event (``CallStarted``, ``ArgumentsDelta``,
``CallReady``, ``CallDiscarded``, ``CallWarning``) and stream event (``TextDelta``,
``ReasoningDelta``, ``FinishReason``, ``Usage``, …) of every round, and adds these. All
subclass the core's ``Event`` and carry the ``round`` (1-based) they belong to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolstitch.messages import AssistantMessage, FunctionCall, Message, Reasoning, ToolResult
from toolstitch.vocab.call_events import Event, ToolCall

from ._logging import ToolFailure
from ._machine import STOP_REASONS

__all__ = [
    "STOP_REASONS",
    "BatchRefused",
    "RoundEnded",
    "RoundStarted",
    "RunFailed",
    "RunFinished",
    "RunWarning",
    "RunnerEvent",
    "ToolDropped",
    "ToolResultReady",
    "ToolStarted",
    "ToolTurn",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerEvent(Event):
    """Base class of the runner's events."""

    round: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundStarted(RunnerEvent):
    """A model call is about to stream. ``synthesis`` is true for the last call, made
    without tools after ``max_rounds`` tool rounds."""

    synthesis: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStarted(RunnerEvent):
    """A tool began to run. ``early`` when it started before the model's stream ended."""

    call: ToolCall
    early: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultReady(RunnerEvent):
    """The result of one call is known: what the tool returned, or an error result.

    ``executed`` is false for an error decided without running anything (unknown tool,
    arguments that fail the schema, a malformed, truncated or corrupted call); ``code`` is
    the error's code (``None`` for a success); ``seconds`` the tool's own running time
    (not the wait for a thread or a ``concurrency`` slot). ``name`` is the tool name as the
    model sent it (the history may carry ``unknown_tool`` instead, see docs/runner.md);
    ``abandoned`` is true for a ``tool-timeout`` whose tool was still running and was left
    behind (never awaited). ``failure`` is the tool's exception with its traceback (for the
    application and its logs; the model gets only ``result``'s safe message). An early result
    may still be dropped afterwards (``ToolDropped``).
    """

    result: ToolResult
    early: bool = False
    executed: bool = True
    code: str | None = None
    seconds: float = 0.0
    name: str = ""
    abandoned: bool = False
    failure: ToolFailure | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDropped(RunnerEvent):
    """An early tool's result will not be committed: ``reason`` says why (the batch was
    refused, the call turned out corrupted, the round failed)."""

    call: ToolCall
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchRefused(RunnerEvent):
    """``should_execute`` refused ``refused`` among the round's ``calls``: nothing of the
    round is committed and the run ends."""

    calls: tuple[ToolCall, ...]
    refused: tuple[ToolCall, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundEnded(RunnerEvent):
    """A round is over (its tools too). Tokens as the provider reported them."""

    finish_reason: str | None
    input_tokens: int | None
    output_tokens: int | None
    usage: dict[str, Any] | None = field(default=None, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFailed(RunnerEvent):
    """A round failed (the model call raised, or the provider sent an error in the stream);
    the run ends. ``message`` is ``str(error)``."""

    error: BaseException = field(hash=False, compare=False)
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished(RunnerEvent):
    """The last event of a run, exactly once while someone reads the stream.
    ``stop_reason`` is one of ``STOP_REASONS``: ``"completed"`` (the model answered),
    ``"max-rounds"`` (answered by forced synthesis), ``"refused"``, ``"truncated"`` (a
    response ended without its end marker), ``"error"``, ``"timeout"``; ``"cancelled"`` is
    set on the result only (a closed or cancelled stream has nobody to tell)."""

    stop_reason: str
    final_text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunWarning(RunnerEvent):
    """Something the runner changed or could not keep, with a stable ``code``:
    ``"lone-surrogate"`` (replaced by U+FFFD in what is sent back), ``"tool-name-replaced"``
    (a name no provider accepts, sent back as ``unknown_tool``), ``"result-truncated"`` (a
    result longer than ``max_result_chars``), ``"text-truncated"`` (a response's text longer
    than ``max_text_chars``)."""

    code: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolTurn:
    """One committed tool round: what the assistant said and called, and the answers.

    ``tool_calls`` are the calls as kept in the history (arguments always a valid JSON
    object: ``{}`` for a call that was malformed); ``results`` has one entry per call, in
    the same order, success or error. ``failures`` keeps the ``ToolFailure`` (exception and
    traceback) of each tool of the round that raised, in call order: for the application,
    never sent to the model. Tokens are the round's, as the provider reported them.
    """

    round: int
    text: str
    tool_calls: tuple[FunctionCall, ...]
    results: tuple[ToolResult, ...]
    reasoning: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    failures: tuple[ToolFailure, ...] = field(default=(), compare=False)
    #: The assistant turn as sent back (``StitchResult.message()``: reasoning blocks with
    #: their signatures, in stream order), when the runner built it.
    message: AssistantMessage | None = field(default=None, compare=False)

    @property
    def assistant(self) -> AssistantMessage:
        """The assistant message of this turn, as kept in the history."""
        if self.message is not None:
            return self.message
        return AssistantMessage(
            text=self.text,
            tool_calls=self.tool_calls,
            reasoning=(Reasoning(text=self.reasoning),) if self.reasoning else (),
        )

    def messages(self) -> list[Message]:
        """The assistant message followed by the results."""
        return [self.assistant, *self.results]
