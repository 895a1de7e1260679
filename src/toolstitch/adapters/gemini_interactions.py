"""Gemini Interactions API streams (``POST /v1beta/interactions`` with ``stream: true``) → items.

What arrives: SSE events named by their ``event_type`` (also their ``event:`` line), then
``event: done`` / ``data: [DONE]``:

* ``interaction.created`` (the interaction's ``id``, ``status: "in_progress"``) and
  ``interaction.status_update`` (``interaction_id``, ``status``, maybe ``usage``);
* per step, ``step.start {index, step}``, ``step.delta {index, delta}`` (zero or more) and
  ``step.stop {index}`` (maybe with the cumulative ``usage``);
* ``interaction.completed {interaction: {id, status, usage}}``: ``status`` is
  ``"completed"``, or ``"requires_action"`` when a function call waits for its result
  (also ``"failed"``, ``"cancelled"``, ``"incomplete"``...);
* ``error {error: {code, message}}``.

Steps, keyed by their ``index``:

* ``function_call`` (``{id, name, arguments: {}}``; a ``signature`` when it has one): one
  call of the core whose index is the step index, started with its id and name. Its
  arguments arrive as JSON *text* in ``arguments_delta`` deltas (``arguments``; older SDKs
  said ``partial_arguments``), each fed as a fragment, and ``step.stop`` ends the call
  (``EndCall``: the provider closed it). The ``{}`` of the start is a placeholder and is
  not fed: a call with no arguments text is settled by the core's end rule (``{}`` when the
  step stopped or the interaction ended normally, truncated after a cut). Non-empty
  arguments on the start, with no delta after them, are the arguments: fed as compact JSON
  when the step ends. A ``signature`` goes to the call (``CallNote``: ``ToolCall.signature``).
* ``model_output``: its ``text`` deltas (and any text ``content`` on the start) are
  ``TextDelta`` events.
* ``thought``: its ``thought_summary`` text (and any ``summary`` on the start) streams as
  ``ReasoningDelta`` events; its ``thought_signature`` delta (or a non-empty ``signature``
  on the start) is kept byte for byte, and ``step.stop`` reports the thought as one
  ``ReasoningBlock(kind="thought", signature=...)``. Should one step carry more, each
  signature stays on the text before it: summary text after a signature, or a second
  signature, starts a new block (signatures are never joined or moved).
* Tools the API runs itself (``SERVER_STEPS``: ``google_search_call``,
  ``code_execution_call``, ``url_context_call``...): ``ServerDelta`` / ``ServerEnd``, so that
  the ``Stitcher`` reports each as a ``ServerToolCall``, never as a call to dispatch; their
  ``arguments`` object (on the start or a delta) is fed once, compactly.
* Their results, ``function_result``, ``user_input`` and media processing steps
  (``IGNORED_STEPS``) carry nothing for toolstitch; so do citation deltas and the result
  deltas (``IGNORED_DELTAS``).

``interaction.completed``'s ``usage`` (and any other ``usage`` on the way) → ``Usage``; its
``status`` → ``FinishReason``, and ``"failed"`` → ``StreamFailed`` too; an ``error`` event →
``StreamFailed`` (``provider_error``). ``close`` ends every thought still open, feeds the
start arguments of calls never stopped, ends the server steps still open and then
``Finish(ending_of(status))``: ``Ending.COMPLETE`` for ``completed`` and
``requires_action``, the cut the status names otherwise, ``Ending.ABANDONED`` when the
stream stopped before ``interaction.completed``. Any other event, step or delta type, a
media delta (``image``, ``audio``...), and an event whose step index is not a non-negative
integer leave a ``quirk-unknown-event`` ``StreamWarning`` (once per kind).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import (
    CallNote,
    EndCall,
    Finish,
    Item,
    ServerDelta,
    ServerEnd,
    arguments,
)
from toolstitch.core.record import CallRecords
from toolstitch.vocab.endings import ending_of
from toolstitch.vocab.stream_events import ReasoningBlock

from ._base import (
    Adapter,
    BoundedText,
    ReasoningText,
    UnknownKinds,
    compact_json,
    finish_event,
    get,
    mapping,
    provider_error,
    text_delta,
    usage_event,
)

__all__ = [
    "EVENT_TYPES",
    "IGNORED_DELTAS",
    "IGNORED_STEPS",
    "SERVER_STEPS",
    "GeminiInteractionsAdapter",
    "detects",
]

#: The ``event_type`` values of the Interactions stream.
EVENT_TYPES: Final = frozenset(
    {
        "interaction.created",
        "interaction.status_update",
        "interaction.completed",
        "step.start",
        "step.delta",
        "step.stop",
        "error",
    }
)

#: The steps of tools the API runs itself, by step type (and delta type): the tool's name
#: for the ``ServerToolCall`` (an MCP call's own ``name`` when it has one).
SERVER_STEPS: Final[dict[str, str]] = {
    "google_search_call": "google_search",
    "code_execution_call": "code_execution",
    "url_context_call": "url_context",
    "google_maps_call": "google_maps",
    "file_search_call": "file_search",
    "mcp_server_tool_call": "mcp_server_tool",
    "retrieval_call": "retrieval",
    "tool_search_call": "tool_search",
}

#: Step types that carry nothing toolstitch reports: the results of the API's own tools,
#: function results and user input (steps of the input, echoed), media processing.
IGNORED_STEPS: Final = frozenset(
    {
        "google_search_result",
        "code_execution_result",
        "url_context_result",
        "google_maps_result",
        "file_search_result",
        "mcp_server_tool_result",
        "retrieval_result",
        "tool_search_result",
        "function_result",
        "user_input",
        "processing_call",
        "processing_result",
    }
)

#: Delta types that carry nothing toolstitch reports: the result steps' deltas and the
#: citations of a text (``text_annotation_delta``).
IGNORED_DELTAS: Final = (IGNORED_STEPS - {"user_input"}) | {"text_annotation_delta"}

#: Delta types of media output, which toolstitch does not read (reported once each).
_MEDIA_DELTAS: Final = frozenset({"image", "audio", "video", "document"})


def detects(payload: Mapping[str, Any]) -> bool:
    """Whether ``payload`` is an event of an Interactions stream: its ``event_type`` starts
    with ``interaction.`` or ``step.`` (no other provider's event has the key)."""
    kind = payload.get("event_type")
    return isinstance(kind, str) and kind.startswith(("interaction.", "step."))


def _index(value: object) -> int | None:
    """A step index, if ``value`` is one (a non-negative int, not a bool)."""
    return value if type(value) is int and value >= 0 else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class _Call:
    """A ``function_call`` step: a call of the core at the step's index."""

    __slots__ = ("ended", "id", "name", "start", "streamed")

    def __init__(self, call_id: str | None, name: str | None, start: object) -> None:
        self.id = call_id
        self.name = name
        # Non-empty arguments on the step's start: fed when the step ends, unless deltas came.
        self.start = start if isinstance(start, Mapping) and start else None
        self.streamed = False  # an arguments delta was fed
        self.ended = False


class _Thought(ReasoningText):
    """A ``thought`` step: its summary text (``ReasoningText``: ``ReasoningDelta`` events and
    the bounded text of the block) and its signature, reported together as one
    ``ReasoningBlock`` when the step stops."""

    __slots__ = ("signature",)

    def __init__(self, bound: int) -> None:
        super().__init__("thought", bound)
        self.signature: str | None = None

    def add(self, text: object, out: list[Item]) -> None:
        """A piece of the summary; after a signature, it starts a new block (the signature
        stays on the text it came after)."""
        if self.signature is not None and isinstance(text, str) and text:
            self.end(out)
        super().add(text, out)

    def sign(self, signature: str, out: list[Item]) -> None:
        """The block's signature; one already held ends its block first (never joined)."""
        if self.signature is not None:
            self.end(out)
        self.signature = signature

    def end(self, out: list[Item]) -> None:
        """Report the block (its text and signature; nothing if it has neither); the next
        piece starts a new block."""
        if len(self._text) or self.signature is not None:
            text = self._text.text()
            out.append(ReasoningBlock(text=text, signature=self.signature, kind=self.kind))
        self._text = BoundedText(self.bound)
        self.signature = None


class _Server:
    """A step of a tool the API runs itself: a call of the server-side assembler."""

    __slots__ = ("fed", "id", "kind")

    def __init__(self, kind: str, call_id: str | None) -> None:
        self.kind = kind
        self.id = call_id
        self.fed = False  # its arguments object was fed


class GeminiInteractionsAdapter(Adapter):
    """Adapter for Gemini Interactions API streams (``provider="gemini-interactions"``)."""

    name = "gemini-interactions"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self._started: set[int] = set()  # step indices whose step.start came
        self._calls: dict[int, _Call] = {}
        self._thoughts: dict[int, _Thought] = {}
        self._servers: dict[int, _Server] = {}
        self._status: str | None = None  # interaction.completed's status
        self._completed = False
        self._unknown = UnknownKinds()

    # -- dispatch -------------------------------------------------------------------------------

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        kind = payload.get("event_type") or event
        out: list[Item] = []
        if kind == "step.delta":
            self._delta(payload, out)
        elif kind == "step.start":
            self._start(payload, out)
        elif kind == "step.stop":
            self._stop(payload, out)
        elif kind == "interaction.completed":
            self._completed_event(mapping(payload.get("interaction")), out)
        elif kind == "interaction.status_update":
            self._usage(payload, out)
        elif kind == "error":
            error = payload.get("error")
            out.append(provider_error(payload if error is None else error))
        elif kind != "interaction.created":
            self._unknown.report(
                "an Interactions event of type",
                kind,
                "is not part of the protocol as toolstitch knows it; it was skipped",
                out,
            )
        return out

    def _step_index(self, payload: Mapping[str, Any], what: str, out: list[Item]) -> int | None:
        """The event's step index, or ``None`` (reported once per value) when it has none."""
        index = _index(payload.get("index"))
        if index is None:
            self._unknown.report(
                f"a {what} with index", payload.get("index"), "cannot be keyed; skipped", out
            )
        return index

    def _usage(self, data: Mapping[str, Any], out: list[Item]) -> None:
        usage = mapping(data.get("usage"))
        if usage:
            out.append(usage_event(dict(usage)))

    # -- steps ----------------------------------------------------------------------------------

    def _start(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        index = self._step_index(payload, "step.start", out)
        if index is None:
            return
        step = mapping(payload.get("step"))
        kind = step.get("type")
        if index in self._started:
            self._unknown.report("a second step.start of step", index, "was skipped", out)
            return
        self._started.add(index)
        if kind == "function_call":
            self._call_start(index, step, out)
        elif kind == "model_output":
            for content in map(mapping, _list(step.get("content"))):
                self._content(content, out)
        elif kind == "thought":
            thought = self._thought(index)
            for content in map(mapping, _list(step.get("summary"))):
                self._summary(thought, content, out)
            signature = _str(step.get("signature"))
            if signature is not None:
                thought.sign(signature, out)
        elif isinstance(kind, str) and kind in SERVER_STEPS:
            server = self._server(index, kind, step, out)
            self._server_arguments(index, server, step.get("arguments"), out)
        elif not (isinstance(kind, str) and kind in IGNORED_STEPS):
            self._unknown.report("a step of type", kind, "was skipped", out)

    def _call_start(self, index: int, step: Mapping[str, Any], out: list[Item]) -> None:
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _Call(
                _str(step.get("id")), _str(step.get("name")), step.get("arguments")
            )
        else:  # its arguments came first, without a name: the start names it now
            call.id = call.id or _str(step.get("id"))
            call.name = call.name or _str(step.get("name"))
        out.append(Delta(index=index, id=call.id, name=call.name))
        signature = _str(step.get("signature"))
        if signature is not None:
            out.append(CallNote(index=index, signature=signature))

    def _stop(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        index = self._step_index(payload, "step.stop", out)
        if index is None:
            return
        thought = self._thoughts.pop(index, None)
        if thought is not None:
            thought.end(out)
        call = self._calls.get(index)
        if call is not None and not call.ended:
            self._feed_start(index, call, out)
            call.ended = True
            out.append(EndCall(index))
        server = self._servers.pop(index, None)
        if server is not None:
            out.append(ServerEnd(index, server.id, server.kind))
        self._usage(payload, out)

    def _feed_start(self, index: int, call: _Call, out: list[Item]) -> None:
        """The arguments the step started with, when no delta brought any."""
        if call.start is not None and not call.streamed:
            call.streamed = True
            out.append(Delta(index=index, arguments=compact_json(call.start)))

    # -- deltas ---------------------------------------------------------------------------------

    def _delta(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        delta = mapping(payload.get("delta"))
        kind = delta.get("type")
        if kind == "text":
            text = delta.get("text")
            if isinstance(text, str) and text:
                out.append(text_delta(text))
            return
        if not isinstance(kind, str):
            self._unknown.report("a step.delta of type", kind, "was skipped", out)
            return
        if kind in IGNORED_DELTAS:
            return
        if kind in _MEDIA_DELTAS:
            self._unknown.report("a step.delta of type", kind, "was not read", out)
            return
        known = kind in ("arguments_delta", "thought_summary", "thought_signature")
        if not (known or kind in SERVER_STEPS):
            self._unknown.report("a step.delta of type", kind, "was skipped", out)
            return
        index = self._step_index(payload, "step.delta", out)
        if index is not None:
            self._step_delta(index, kind, delta, out)

    def _step_delta(self, index: int, kind: str, delta: Mapping[str, Any], out: list[Item]) -> None:
        """A delta of step ``index`` of one of the kinds read here."""
        if kind == "arguments_delta":
            fragment = get(delta, "arguments", "partial_arguments")
            if isinstance(fragment, str) and fragment:
                self._arguments(index, fragment, out)
        elif kind == "thought_summary":
            self._summary(self._thought(index), mapping(delta.get("content")), out)
        elif kind == "thought_signature":
            signature = _str(delta.get("signature"))
            if signature is not None:
                self._thought(index).sign(signature, out)
        else:
            server = self._servers.get(index) or self._server(index, kind, {}, out)
            self._server_arguments(index, server, delta.get("arguments"), out)

    def _arguments(self, index: int, fragment: str, out: list[Item]) -> None:
        call = self._calls.get(index)
        if call is None:
            # Arguments of a step that never started as a function call: a call without a
            # name (the core discards it with MissingName when it ends).
            call = self._calls[index] = _Call(None, None, None)
            call.streamed = True
            out.append(Delta(index=index, arguments=fragment))
            return
        call.streamed = True
        out.append(arguments(index, fragment))

    def _content(self, content: Mapping[str, Any], out: list[Item]) -> None:
        """One content object of a model output: its text, if it is text."""
        kind = content.get("type")
        if kind == "text":
            text = content.get("text")
            if isinstance(text, str) and text:
                out.append(text_delta(text))
        else:
            self._unknown.report("a model_output content of type", kind, "was not read", out)

    def _summary(self, thought: _Thought, content: Mapping[str, Any], out: list[Item]) -> None:
        """One content object of a thought's summary: its text, if it is text."""
        kind = content.get("type", "text")
        if kind == "text":
            thought.add(content.get("text"), out)
        else:
            self._unknown.report("a thought_summary of type", kind, "was not read", out)

    def _thought(self, index: int) -> _Thought:
        thought = self._thoughts.get(index)
        if thought is None:
            bound = self.records.limits.max_reasoning_chars
            thought = self._thoughts[index] = _Thought(bound)
        return thought

    # -- tools the API runs itself --------------------------------------------------------------

    def _server(self, index: int, kind: str, step: Mapping[str, Any], out: list[Item]) -> _Server:
        server = self._servers[index] = _Server(kind, _str(step.get("id")))
        name = _str(step.get("name")) or SERVER_STEPS[kind]
        out.append(ServerDelta(Delta(index=index, id=server.id, name=name)))
        return server

    def _server_arguments(
        self, index: int, server: _Server, value: object, out: list[Item]
    ) -> None:
        """The server call's arguments object, fed once (the first non-empty one)."""
        args = mapping(value)
        if args and not server.fed:
            server.fed = True
            out.append(ServerDelta(Delta(index=index, arguments=compact_json(args))))

    # -- the end --------------------------------------------------------------------------------

    def _completed_event(self, interaction: Mapping[str, Any], out: list[Item]) -> None:
        self._usage(interaction, out)
        if self._completed:
            return
        self._completed = True
        status = _str(interaction.get("status"))
        self._status = status
        if status is not None:
            out.append(finish_event(status))
        if status == "failed":  # a StreamFailed besides the finish
            error = interaction.get("error")
            out.append(
                provider_error(
                    error
                    if error is not None
                    else {"status": status, "message": f"the interaction ended {status}"}
                )
            )

    def close(self) -> list[Item]:
        out: list[Item] = []
        ending = ending_of(self._status)
        for index in sorted(self._thoughts):
            self._thoughts[index].end(out)
        self._thoughts.clear()
        for index, call in sorted(self._calls.items()):
            if not call.ended:
                self._feed_start(index, call, out)
        for index, server in sorted(self._servers.items()):
            out.append(ServerEnd(index, server.id, server.kind, ending))
        self._servers.clear()
        out.append(Finish(ending))
        return out


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
