"""OpenTelemetry spans for the runner, following the GenAI semantic conventions.

A small facade over ``opentelemetry-api`` (the optional ``[otel]`` extra), imported only
when a ``ToolRunner`` is made: without the package nothing is imported and every hook is a
no-op (``NO_TRACE``). With it, spans go to the global tracer provider, or to the one given
as ``ToolRunner(tracer_provider=...)``:

* a run span, ``invoke_agent`` (``gen_ai.operation.name="invoke_agent"``), from ``run`` to
  the run's end, with the stop reason;
* under it, a span per model call, ``chat {model}`` (kind ``CLIENT``): provider, requested
  model, token usage, finish reasons;
* and a span per tool execution, ``execute_tool {name}`` (kind ``INTERNAL``): the tool's
  name and call id, error status with the exception recorded when the tool raised or timed
  out.

Parents are given explicitly (a run is an async generator driven by its consumer, so the
ambient context is not the run's); a tool's span is the current span while the runner
awaits it, so an async tool's own spans nest under it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from toolstitch.vocab.call_events import ToolCall

    from ._exec import Outcome
    from ._run import RunResult
    from ._run_events import RoundEnded

__all__ = ["NO_TRACE", "RunTrace", "Tracer", "provider_name"]

#: ``gen_ai.provider.name`` for the runner's stream formats (``Model.provider``).
PROVIDER_NAMES: Final = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
}

#: Round outcomes (``_Round.outcome``) that make the model call's span an error.
FAILED_OUTCOMES: Final = {"failed": None, "timeout": "timeout", "truncated": "truncated"}

#: Stop reasons that make the run's span an error.
FAILED_STOPS: Final = frozenset({"error", "timeout"})

INSTALL_HINT: Final = "pip install 'toolstitch[otel]'"


def provider_name(provider: str) -> str | None:
    """``gen_ai.provider.name`` for a ``Model.provider`` (``None`` for ``"auto"``)."""
    if provider == "auto":
        return None
    return PROVIDER_NAMES.get(provider, provider)


def error_type(error: BaseException) -> str:
    """``error.type`` for an exception: its fully qualified class name."""
    cls = type(error)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


class _NoSpan:
    """A tool span that records nothing (tracing off)."""

    __slots__ = ()

    async def wait(self, awaitable: Awaitable[Outcome]) -> Outcome:
        return await awaitable

    def end(self, outcome: Outcome, code: str | None) -> None:
        return None


class RunTrace:
    """The spans of one run; this base class records nothing (``NO_TRACE``)."""

    __slots__ = ()

    def model_call(self, synthesis: bool) -> None:
        """A model call is being opened (its span starts)."""

    def model_failed(self, error: BaseException) -> None:
        """Opening the model call raised."""

    def model_ended(
        self, ended: RoundEnded, outcome: str | None, failure: BaseException | None
    ) -> None:
        """The model call's round ended (``ended``) with ``outcome`` (``_Round.outcome``)."""

    def tool(self, call: ToolCall) -> _NoSpan | _ToolSpan:
        """A tool starts running (its span starts)."""
        return _NO_SPAN

    def end(self, result: RunResult) -> None:
        """The run ended (idempotent)."""


_NO_SPAN: Final = _NoSpan()
NO_TRACE: Final = RunTrace()


class Tracer:
    """The runner's tracer: ``start`` gives each run its ``RunTrace``."""

    __slots__ = ("_otel", "_tracer")

    def __init__(self, tracer_provider: Any = None) -> None:
        try:
            from opentelemetry import trace
        except ImportError:
            if tracer_provider is not None:
                raise ImportError(
                    f"ToolRunner(tracer_provider=...) needs opentelemetry-api: {INSTALL_HINT}"
                ) from None
            self._otel: Any = None
            self._tracer: Any = None
            return
        from toolstitch._version import __version__

        self._otel = trace
        self._tracer = trace.get_tracer("toolstitch", __version__, tracer_provider)

    @property
    def enabled(self) -> bool:
        return self._tracer is not None

    def start(self, model: Any) -> RunTrace:
        """The spans of a new run over ``model`` (its run span starts now)."""
        if self._tracer is None:
            return NO_TRACE
        return _OtelRun(self._otel, self._tracer, model)


class _OtelRun(RunTrace):
    __slots__ = ("_call", "_model", "_otel", "_provider", "_span", "_tracer", "ended")

    def __init__(self, otel: Any, tracer: Any, model: Any) -> None:
        self._otel = otel
        self._tracer = tracer
        self._provider = provider_name(getattr(model, "provider", "auto"))
        name = getattr(model, "model", None)
        self._model = name if isinstance(name, str) and name else None
        attributes = self._common("invoke_agent")
        self._span = tracer.start_span(
            "invoke_agent", kind=otel.SpanKind.INTERNAL, attributes=attributes
        )
        self._call: Any = None  # the open model call's span
        self.ended = False

    def _common(self, operation: str) -> dict[str, Any]:
        attributes: dict[str, Any] = {"gen_ai.operation.name": operation}
        if self._provider is not None:
            attributes["gen_ai.provider.name"] = self._provider
        if self._model is not None:
            attributes["gen_ai.request.model"] = self._model
        return attributes

    def _child(self, name: str, kind: Any, attributes: dict[str, Any]) -> Any:
        context = self._otel.set_span_in_context(self._span)
        return self._tracer.start_span(name, context=context, kind=kind, attributes=attributes)

    def model_call(self, synthesis: bool) -> None:
        self._end_call(None, "cancelled")  # a call left open (cannot happen): closed first
        name = f"chat {self._model}" if self._model else "chat"
        attributes = self._common("chat")
        attributes["toolstitch.synthesis"] = synthesis
        self._call = self._child(name, self._otel.SpanKind.CLIENT, attributes)

    def model_failed(self, error: BaseException) -> None:
        call, self._call = self._call, None
        if call is not None:
            _failed(self._otel, call, error_type(error), error)
            call.end()

    def model_ended(
        self, ended: RoundEnded, outcome: str | None, failure: BaseException | None
    ) -> None:
        call = self._call
        if call is None:
            return
        if ended.input_tokens is not None:
            call.set_attribute("gen_ai.usage.input_tokens", ended.input_tokens)
        if ended.output_tokens is not None:
            call.set_attribute("gen_ai.usage.output_tokens", ended.output_tokens)
        if ended.finish_reason is not None:
            call.set_attribute("gen_ai.response.finish_reasons", (ended.finish_reason,))
        if outcome in FAILED_OUTCOMES:
            kind = FAILED_OUTCOMES[outcome] or (
                error_type(failure) if failure is not None else "_OTHER"
            )
            self._end_call(failure, kind)
        else:
            self._end_call(None, None)

    def _end_call(self, failure: BaseException | None, kind: str | None) -> None:
        call, self._call = self._call, None
        if call is None:
            return
        if kind is not None:
            _failed(self._otel, call, kind, failure)
        call.end()

    def tool(self, call: ToolCall) -> _ToolSpan:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        span = self._child(f"execute_tool {call.name}", self._otel.SpanKind.INTERNAL, attributes)
        return _ToolSpan(self._otel, span)

    def end(self, result: RunResult) -> None:
        if self.ended:
            return
        self.ended = True
        stop = result.stop_reason
        # A model call still open: the run was closed, cancelled or timed out during it.
        self._end_call(None, stop if stop in FAILED_STOPS or stop == "cancelled" else None)
        span = self._span
        if stop is not None:
            span.set_attribute("toolstitch.stop_reason", stop)
        for key in ("input", "output"):
            counts = [getattr(r, f"{key}_tokens") for r in result.rounds]
            known = [n for n in counts if n is not None]
            if known:
                span.set_attribute(f"gen_ai.usage.{key}_tokens", sum(known))
        if stop in FAILED_STOPS:
            error = result.error
            _failed(self._otel, span, error_type(error) if error else stop, error)
        span.end()


class _ToolSpan:
    """The span of one tool execution."""

    __slots__ = ("_otel", "_span")

    def __init__(self, otel: Any, span: Any) -> None:
        self._otel = otel
        self._span = span

    async def wait(self, awaitable: Awaitable[Outcome]) -> Outcome:
        """Await the tool's run with this span current; a cancellation ends the span."""
        try:
            with self._otel.use_span(
                self._span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                return await awaitable
        except BaseException as exc:  # the round dropped or cancelled the tool
            _failed(self._otel, self._span, error_type(exc), None)
            self._span.end()
            raise

    def end(self, outcome: Outcome, code: str | None) -> None:
        """The tool ended with ``outcome`` (``code``: its result's error code, if any)."""
        span = self._span
        if outcome.timed_out:
            span.set_attribute("toolstitch.tool.abandoned", outcome.abandoned)
            _failed(self._otel, span, "tool-timeout", TimeoutError("the tool timed out"))
        elif outcome.error is not None:
            _failed(self._otel, span, error_type(outcome.error), outcome.error)
        if code is not None:
            span.set_attribute("toolstitch.code", code)
        span.end()


def _failed(otel: Any, span: Any, kind: str, error: BaseException | None) -> None:
    """Mark ``span`` as an error of ``error.type`` ``kind`` (recording ``error``)."""
    span.set_attribute("error.type", kind)
    if error is not None:
        span.record_exception(error)
    description = f"{kind}: {error}" if error is not None else kind
    span.set_status(otel.Status(otel.StatusCode.ERROR, description))
