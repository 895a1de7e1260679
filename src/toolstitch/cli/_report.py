"""``toolstitch replay --json``: the report object and the error object (a public contract,
documented in docs/cli.md; ``SCHEMA_VERSION`` changes when a key changes meaning or goes)."""

from __future__ import annotations

from typing import Any

from toolstitch.messages import TextPart
from toolstitch.stitch.stitcher import StitchResult
from toolstitch.vocab.call_events import CallDiscarded, CallReady, CallWarning, ToolCall
from toolstitch.vocab.errors import StreamError, ToolCallError
from toolstitch.vocab.stream_events import ReasoningBlock, ServerToolCall

from ._input import Replay, Tools, Where
from ._turn import text_runs

__all__ = [
    "SCHEMA_VERSION",
    "call_names",
    "error_report",
    "positions",
    "report",
    "timeline_report",
]

#: The version of the ``--json`` objects' layout. 1 was the unversioned layout of 0.1;
#: 2 added ``schema_version`` and everything docs/cli.md lists as new in it.
SCHEMA_VERSION = 2


def _where(where: Where | None) -> dict[str, int] | None:
    return None if where is None else {"event": where.event, "byte": where.byte}


def _error_of(error: StreamError | ToolCallError) -> dict[str, str]:
    return {"code": error.code, "message": error.message}


def _error(error: StreamError | None) -> dict[str, str] | None:
    return None if error is None else _error_of(error)


def call_names(result: StitchResult) -> dict[int, str | None]:
    """The name of each call of ``result``, by index (complete or discarded)."""
    names: dict[int, str | None] = {d.index: d.name for d in result.discarded}
    names.update((c.index, c.name) for c in result.calls)
    return names


def _call(call: ToolCall, ready: Where | None) -> dict[str, Any]:
    return {
        "index": call.index,
        "id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "parsed_arguments": call.parsed_arguments,
        "ready_at": _where(ready),
    }


def _discarded(item: CallDiscarded, at: Where | None) -> dict[str, Any]:
    return {
        "index": item.index,
        "id": item.id,
        "name": item.name,
        "arguments": item.arguments,
        "code": item.error.code,
        "message": item.error.message,
        # How the call ended, for a truncated one (docs/concepts.md, "How a response ends").
        "ending": getattr(item.error, "ending", None),
        # Where the arguments (or, in a model's text, the text) broke, for an error that says.
        "offset": getattr(item.error, "offset", None),
        "line": getattr(item.error, "line", None),
        "column": getattr(item.error, "column", None),
        "discarded_at": _where(at),
    }


def _block(block: ReasoningBlock) -> dict[str, Any]:
    return {
        "kind": block.kind,
        "text": block.text,
        "summary": list(block.summary),
        "redacted": block.redacted,
        "signed": block.signature is not None,
    }


def _tools(tools: Tools | None, policy: str) -> dict[str, Any] | None:
    if tools is None:
        return None
    return {"file": tools.path, "declared": list(tools.names), "on_schema_violation": policy}


def positions(replay: Replay | None) -> tuple[dict[int, Where], dict[int, Where]]:
    """Where each call became ready, and where each was (first) discarded."""
    ready: dict[int, Where] = {}
    discarded: dict[int, Where] = {}
    for step in () if replay is None else replay.steps:
        event = step.event
        if isinstance(event, CallReady):
            ready[event.call.index] = step.where
        elif isinstance(event, CallDiscarded):
            discarded.setdefault(event.index, step.where)
    return ready, discarded


def report(
    result: StitchResult,
    replay: Replay | None = None,
    *,
    source: str | None = None,
    tools: Tools | None = None,
    policy: str = "discard",
    status: int | None = None,
) -> dict[str, Any]:
    """The ``--json`` object for ``result`` (its keys are a public contract: docs/cli.md).

    ``replay`` gives the moments (``ready_at``, ``discarded_at``; ``None`` without it),
    ``source`` the input's name, ``tools`` the ``--tools`` file and ``policy`` its
    ``--on-schema-violation``, ``status`` the exit status. Calls are in stream order;
    ``arguments`` is the JSON text as streamed.
    """
    ready, discarded = positions(replay)
    names = call_names(result)
    warnings: list[dict[str, Any]] = []
    for warning in result.warnings:
        index = warning.index if isinstance(warning, CallWarning) else None
        warnings.append(
            {
                "concerns": "stream" if index is None else "call",
                "index": index,
                "name": None if index is None else names.get(index),
                "code": warning.error.code,
                "message": warning.error.message,
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "input": source,
        "exit_status": status,
        "provider": result.provider or "unknown",
        "events": result.events,
        "bytes": result.bytes,
        "tools": _tools(tools, policy),
        "calls": [_call(c, ready.get(c.index)) for c in result.calls],
        "discarded": [_discarded(d, discarded.get(d.index)) for d in result.discarded],
        "discarded_omitted": result.discarded_omitted,
        "warnings": warnings,
        "server_calls": [_server(s) for s in result.server_calls],
        "custom_calls": [
            {"index": c.index, "id": c.id, "call_id": c.call_id, "name": c.name, "input": c.input}
            for c in result.custom_calls
        ],
        "stream_error": _error(result.stream_error),
        "finish_reason": result.finish_reason,
        "usage": result.usage,
        "text": result.text,
        "text_parts": _text_parts(result, replay),
        "reasoning": result.reasoning,
        "reasoning_blocks": [_block(b) for b in result.reasoning_blocks],
        "refusal": result.refusal,
    }


def _text_parts(result: StitchResult, replay: Replay | None) -> list[str]:
    """The runs of text apart: from the events when there are (a server call also ends a
    run), else from ``result.parts``."""
    if replay is not None:
        return text_runs(replay.steps)
    return [p.text for p in result.parts if isinstance(p, TextPart)]


def _server(server: ServerToolCall) -> dict[str, Any]:
    return {
        "index": server.index,
        "id": server.id,
        "name": server.name,
        "type": server.type,
        "arguments": server.arguments,
        "parsed_arguments": server.parsed_arguments,
        "error": None if server.error is None else _error_of(server.error),
    }


def timeline_report(replay: Replay) -> list[dict[str, Any]]:
    """``--json --timeline``'s ``timeline``: each event's moment, class name and call index."""
    out = []
    for step in replay.steps:
        event = step.event
        index = event.call.index if isinstance(event, CallReady) else getattr(event, "index", None)
        out.append(
            {
                "event": step.where.event,
                "byte": step.where.byte,
                "type": type(event).__name__,
                "index": index,
            }
        )
    return out


def error_report(code: str, message: str, source: str | None) -> dict[str, Any]:
    """The ``--json`` object for a replay that could not run (exit status 2)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "input": source,
        "exit_status": 2,
        "error": {"code": code, "message": message},
    }
