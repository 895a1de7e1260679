"""OpenAI Responses API streams → items.

What arrives: typed events ``response.created`` / ``in_progress``; per output item
``response.output_item.added`` (an item of type ``function_call`` carries ``call_id`` and
``name``), its deltas (``response.function_call_arguments.delta``, ``response.output_text.delta``,
reasoning text and summaries), the matching ``.done`` events and
``response.output_item.done`` with the finished item; then ``response.completed`` (or
``response.incomplete`` / ``response.failed``) with the whole response and its usage; an
``error`` event on failure.

Calls are keyed by ``output_index`` (some compatible servers rotate ``item_id`` between
events; ``item_id`` is used only when ``output_index`` is missing). The id of a call is its
``call_id``. ``function_call_arguments.done`` ends the call (``EndCall``); its text is
checked against the deltas as the core holds them (its ``CallRecord``): with no deltas at
all it *is* the arguments, a longer text that starts with the deltas supplies the missing
tail, any other difference keeps the deltas; each case leaves a warning.
``output_item.done`` does the same for servers that skip ``.done``.

A finished ``reasoning`` item (``output_item.done``) becomes a ``ReasoningBlock`` with its
``id``, its ``summary_text`` parts, its ``reasoning_text`` parts joined and its
``encrypted_content`` as the signature, all exactly as sent. A ``custom_tool_call`` item
(free-text ``input``, not JSON; ``response.custom_tool_call_input.delta`` / ``.done``) is
never a call of the core: it is reported once, complete, as a ``CustomToolCall`` event.

Every event type of the protocol that carries nothing for toolstitch is in ``IGNORED``
(lifecycle, content parts, built-in tool progress, audio); any other ``response.*`` type
leaves a ``StreamWarning`` (``quirk-unknown-event``, once per type).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import EndCall, Finish, Item, ServerDelta, ServerEnd, arguments
from toolstitch.core.record import CallRecords
from toolstitch.vocab.call_events import CallState
from toolstitch.vocab.stream_events import (
    CustomToolCall,
    ReasoningBlock,
    ReasoningDelta,
    RefusalDelta,
)

from ._base import (
    Adapter,
    BoundedText,
    UnknownKinds,
    finish_event,
    mapping,
    provider_error,
    quirk_warning,
    stream_quirk,
    text_delta,
    usage_event,
)

__all__ = ["CODES", "IGNORED", "OpenAIResponsesAdapter"]

#: The ``quirk-…`` codes this adapter emits, with what each means.
CODES: Final[dict[str, str]] = {
    "quirk-no-argument-deltas": "no arguments deltas; the arguments came only with .done / the "
    "finished item",
    "quirk-done-mismatch": "the .done (or finished item) arguments differ from the deltas",
    "quirk-call-only-in-completed": "a function call appeared only in response.completed",
    "quirk-custom-call-unfinished": "a custom tool call's input never completed (no .done, no "
    "finished item): it was not reported as a CustomToolCall",
}

#: Event types of the Responses stream that carry nothing toolstitch reports: lifecycle,
#: content-part and summary-part boundaries (their text comes with the deltas), the ``.done``
#: repeats of text already streamed, annotations, refusals' boundaries, audio, and the
#: progress of built-in tools the provider runs itself.
IGNORED: Final = frozenset(
    {
        "response.created",
        "response.in_progress",
        "response.queued",
        "response.content_part.added",
        "response.content_part.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.done",
        "response.output_text.annotation.added",
        "response.refusal.done",
        "response.audio.delta",
        "response.audio.done",
        "response.audio.transcript.delta",
        "response.audio.transcript.done",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.file_search_call.completed",
        "response.code_interpreter_call.in_progress",
        "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call.completed",
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call_code.done",
        "response.image_generation_call.in_progress",
        "response.image_generation_call.generating",
        "response.image_generation_call.partial_image",
        "response.image_generation_call.completed",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
        "response.shell_call_command.added",
        "response.shell_call_command.delta",
        "response.shell_call_command.done",
        "response.shell_call_output_content.delta",
        "response.shell_call_output_content.done",
        "response.compaction.compacting",
    }
)

_REASONING = frozenset(
    {
        "response.reasoning_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning.delta",
    }
)


#: The events whose ``delta`` is a piece of text for one stream event, and that event.
_PLAIN_DELTAS: Final[dict[str, type[ReasoningDelta] | type[RefusalDelta]]] = {
    **dict.fromkeys(_REASONING, ReasoningDelta),
    "response.refusal.delta": RefusalDelta,
}

_CUSTOM_INPUT = frozenset(
    {"response.custom_tool_call_input.delta", "response.custom_tool_call_input.done"}
)


class _Item:
    """What the adapter itself knows of one function-call item (its text is the core's)."""

    __slots__ = ("call_id", "ended", "index", "item_id", "name", "streamed", "warned")

    def __init__(self, index: int, item_id: str | None, call_id: str | None, name: str | None):
        self.index = index
        self.item_id = item_id
        self.call_id = call_id
        self.name = name
        self.streamed = False  # arguments text was handed to the core
        self.ended = False
        self.warned: set[str] = set()


class _Custom:
    """A ``custom_tool_call`` item whose input is still streaming."""

    __slots__ = ("call_id", "done", "id", "index", "input", "name")

    def __init__(self, index: int, item: Mapping[str, Any], bound: int) -> None:
        self.index = index
        self.id = _str(item.get("id"))
        self.call_id = _str(item.get("call_id"))
        self.name = _str(item.get("name"))
        self.input = BoundedText(bound)
        self.done = False


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _text_key(payload: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """Which text part an output_text event is about (indices that are not ints count as
    missing: they cannot be used as keys)."""
    return _int(payload.get("output_index")), _int(payload.get("content_index"))


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


class OpenAIResponsesAdapter(Adapter):
    """Adapter for OpenAI Responses API streams (``provider="openai-responses"``)."""

    name = "openai-responses"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self._items: dict[int, _Item] = {}
        self._by_item_id: dict[str, _Item] = {}
        self._text_seen: set[tuple[object, object]] = set()  # output texts that had deltas
        self._finished = False
        self._custom: dict[int, _Custom] = {}  # custom tool calls by output_index
        self._reasoning_done: set[int] = set()  # reasoning items already reported
        self._servers: set[int] = set()  # server calls already reported (output_index)
        self._unknown = UnknownKinds()

    # -- dispatch -----------------------------------------------------------------------------

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        kind = payload.get("type") or event
        out: list[Item] = []
        if not isinstance(kind, str):
            self._unknown_event(kind, out)  # no event type at all
            return out
        if kind == "response.function_call_arguments.delta":
            self._arguments_delta(payload, out)
        elif kind == "response.output_text.delta":
            self._text_delta(payload, out)
        elif kind in _PLAIN_DELTAS:
            text = payload.get("delta")
            if isinstance(text, str) and text:
                out.append(_PLAIN_DELTAS[kind](text=text))
        elif kind == "response.output_item.added":
            self._added(payload, out)
        elif kind == "response.function_call_arguments.done":
            item = self._find(payload)
            if item is not None:
                self._done(
                    item, payload.get("arguments"), "response.function_call_arguments.done", out
                )
        elif kind == "response.output_item.done":
            self._item_done(payload, out)
        elif kind == "response.output_text.done":
            self._text_done(payload, out)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self._completed(mapping(payload.get("response")), out)
        elif kind in _CUSTOM_INPUT:
            self._custom_input(kind, payload, out)
        elif kind == "error" or event == "error":
            error = payload.get("error", payload)
            out.append(provider_error(error))
        elif kind not in IGNORED:
            self._unknown_event(kind, out)
        return out

    def _unknown_event(self, kind: object, out: list[Item]) -> None:
        self._unknown.report(
            "a Responses event of type",
            kind,
            "is not part of the protocol as toolstitch knows it; it was skipped",
            out,
        )

    def _arguments_delta(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        item = self._find(payload)
        fragment = payload.get("delta")
        if item is not None and isinstance(fragment, str) and fragment and not item.ended:
            item.streamed = True
            out.append(arguments(item.index, fragment))

    def _text_delta(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        text = payload.get("delta")
        if isinstance(text, str) and text:
            self._text_seen.add(_text_key(payload))
            out.append(text_delta(text))

    def _text_done(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        # The whole text, for servers that sent no deltas for it.
        key = _text_key(payload)
        text = payload.get("text")
        if key not in self._text_seen and isinstance(text, str) and text:
            self._text_seen.add(key)
            out.append(text_delta(text))

    # -- calls ----------------------------------------------------------------------------

    def _find(self, payload: Mapping[str, Any]) -> _Item | None:
        index = _int(payload.get("output_index"))
        if index is not None and index in self._items:
            return self._items[index]
        item_id = _str(payload.get("item_id"))
        if item_id is not None:
            return self._by_item_id.get(item_id)
        return None

    def _start(self, index: int, item: Mapping[str, Any], out: list[Item]) -> _Item:
        state = _Item(
            index, _str(item.get("id")), _str(item.get("call_id")), _str(item.get("name"))
        )
        self._items[index] = state
        if state.item_id is not None:
            self._by_item_id[state.item_id] = state
        out.append(Delta(index=index, id=state.call_id, type="function", name=state.name))
        return state

    def _added(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        item = mapping(payload.get("item"))
        index = _int(payload.get("output_index"))
        if index is None:
            return
        if item.get("type") == "custom_tool_call":
            self._custom_start(index, item)
        elif item.get("type") == "function_call" and index not in self._items:
            self._start(index, item, out)
        elif item.get("status") == "completed":
            self._server_call(index, item, out)  # a server call that arrives finished

    def _done(self, item: _Item, text: object, where: str, out: list[Item]) -> None:
        """The server's final arguments text for ``item``: check it, then end the call."""
        so_far = self._so_far(item)
        if isinstance(text, str) and not item.ended and so_far is not None:
            if not so_far:
                if text:
                    item.streamed = True
                    out.append(Delta(index=item.index, arguments=text))
                self._warn(
                    item,
                    "quirk-no-argument-deltas",
                    f"no arguments deltas arrived; the arguments are those of {where}",
                    out,
                )
            elif text != so_far:
                if text.startswith(so_far):
                    tail = text[len(so_far) :]
                    out.append(Delta(index=item.index, arguments=tail))
                    message = (
                        f"{where} has {len(text) - len(so_far)} more characters than the "
                        "deltas; the missing tail was appended"
                    )
                else:
                    message = (
                        f"{where} differs from the accumulated deltas "
                        f"({len(text)} vs {len(so_far)} characters); the deltas were kept"
                    )
                self._warn(item, "quirk-done-mismatch", message, out)
        elif isinstance(text, str) and so_far is not None and text != so_far:
            self._warn(
                item,
                "quirk-done-mismatch",
                f"{where} differs from the arguments the call was assembled from",
                out,
            )
        if not item.ended:
            item.ended = True
            out.append(EndCall(item.index))

    def _server_call(self, index: int | None, data: Mapping[str, Any], out: list[Item]) -> None:
        """A finished item of a tool the provider ran itself that names it and carries JSON
        ``arguments`` (xAI's ``web_search_call``, ``x_search_call``, ``code_execution_call``…;
        OpenAI's own carry an ``action`` instead and stay progress only): reported once as a
        ``ServerToolCall``, never a call to dispatch."""
        kind = data.get("type")
        name, text = _str(data.get("name")), data.get("arguments")
        if (
            index is None
            or index in self._servers
            or not isinstance(kind, str)
            or not kind.endswith("_call")
            or name is None
            or not isinstance(text, str)
        ):
            return
        self._servers.add(index)
        call_id = _str(data.get("call_id")) or _str(data.get("id"))
        out.append(ServerDelta(Delta(index=index, id=call_id, name=name, arguments=text or None)))
        out.append(ServerEnd(index, call_id, kind))

    def _item_done(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        data = mapping(payload.get("item"))
        kind = data.get("type")
        index = _int(payload.get("output_index"))
        if kind == "reasoning":
            self._reasoning(index, data, out)
            return
        if kind == "custom_tool_call":
            if index is not None:
                custom = self._custom.get(index) or self._custom_start(index, data)
                self._custom_done(custom, data.get("input"), out)
            return
        if kind != "function_call":
            self._server_call(index, data, out)
            return
        item = self._items.get(index) if index is not None else None
        if item is None:
            item_id = _str(data.get("id"))
            item = self._by_item_id.get(item_id) if item_id is not None else None
        if item is None:
            if index is None:
                return
            item = self._start(index, data, out)
        elif item.call_id is None and _str(data.get("call_id")):
            item.call_id = _str(data.get("call_id"))
            out.append(Delta(index=item.index, id=item.call_id))
        if item.name is None and _str(data.get("name")):
            item.name = _str(data.get("name"))
            out.append(Delta(index=item.index, name=item.name))
        self._done(item, data.get("arguments"), "response.output_item.done", out)

    def _completed(self, response: Mapping[str, Any], out: list[Item]) -> None:
        # Function calls present only in the final response (events lost on the way).
        output = response.get("output")
        if isinstance(output, list):
            known = {item.call_id for item in self._items.values() if item.call_id}
            for position, raw in enumerate(output):
                data = mapping(raw)
                self._completed_other(position, data, out)
                if data.get("type") != "function_call" or position in self._items:
                    continue
                if _str(data.get("call_id")) in known:
                    continue
                item = self._start(position, data, out)
                item.warned.add("quirk-no-argument-deltas")  # implied by the warning below
                self._warn(
                    item,
                    "quirk-call-only-in-completed",
                    "the call appeared only in the final response object",
                    out,
                )
                self._done(item, data.get("arguments"), "response.completed", out)
        usage = mapping(response.get("usage"))
        if usage:
            out.append(usage_event(dict(usage)))
        status = response.get("status")
        details = mapping(response.get("incomplete_details"))
        reason = details.get("reason") if status == "incomplete" else status
        if isinstance(reason, str) and reason and not self._finished:
            self._finished = True
            out.append(finish_event(reason))
        error = response.get("error")
        if status == "failed" and error:
            out.append(provider_error(error))

    # -- reasoning items and custom tool calls -----------------------------------------------

    def _reasoning(self, index: int | None, data: Mapping[str, Any], out: list[Item]) -> None:
        """A finished reasoning item: one ``ReasoningBlock``, its fields exactly as sent."""
        if index is not None:
            if index in self._reasoning_done:
                return
            self._reasoning_done.add(index)
        summary = tuple(
            part["text"]
            for part in map(mapping, _list(data.get("summary")))
            if part.get("type") == "summary_text" and isinstance(part.get("text"), str)
        )
        text = "".join(
            part["text"]
            for part in map(mapping, _list(data.get("content")))
            if part.get("type") == "reasoning_text" and isinstance(part.get("text"), str)
        )
        signature = data.get("encrypted_content")
        out.append(
            ReasoningBlock(
                id=_str(data.get("id")),
                summary=summary,
                text=text,
                signature=signature if isinstance(signature, str) else None,
                kind="reasoning",
            )
        )

    def _completed_other(self, position: int, data: Mapping[str, Any], out: list[Item]) -> None:
        """Reasoning items and custom tool calls of the final response that no
        ``output_item.done`` reported (events lost on the way)."""
        kind = data.get("type")
        if kind == "reasoning" and position not in self._reasoning_done:
            self._reasoning(position, data, out)
        elif kind == "custom_tool_call":
            custom = self._custom.get(position) or self._custom_start(position, data)
            self._custom_done(custom, data.get("input"), out)

    def _custom_start(self, index: int, item: Mapping[str, Any]) -> _Custom:
        custom = self._custom.get(index)
        if custom is None:
            bound = self.records.limits.max_argument_chars
            custom = self._custom[index] = _Custom(index, item, bound)
        return custom

    def _custom_of(self, payload: Mapping[str, Any]) -> _Custom | None:
        index = _int(payload.get("output_index"))
        if index is not None and index in self._custom:
            return self._custom[index]
        item_id = _str(payload.get("item_id"))
        return next((c for c in self._custom.values() if item_id and c.id == item_id), None)

    def _custom_input(self, kind: str, payload: Mapping[str, Any], out: list[Item]) -> None:
        """``response.custom_tool_call_input.delta`` / ``.done``."""
        if kind.endswith(".delta"):
            self._custom_delta(payload, out)
            return
        custom = self._custom_of(payload)
        if custom is not None:
            self._custom_done(custom, payload.get("input"), out)

    def _custom_delta(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        custom = self._custom_of(payload)
        index = _int(payload.get("output_index"))
        if custom is None and index is not None:  # no output_item.added came for it
            custom = self._custom_start(index, {"id": payload.get("item_id")})
        fragment = payload.get("delta")
        if custom is None or custom.done or not isinstance(fragment, str) or not fragment:
            return
        if not custom.input.add(fragment):
            out.append(
                stream_quirk(
                    "quirk-custom-call-unfinished",
                    f"custom tool call {custom.call_id!r}: its input deltas passed "
                    f"max_argument_chars ({custom.input.bound}); only a final .done or "
                    "finished item can complete it",
                )
            )

    def _custom_done(self, custom: _Custom, text: object, out: list[Item]) -> None:
        """The custom call's input is complete: the final text when the server sent one
        (it is the whole input), else the deltas."""
        if custom.done:
            return
        if isinstance(text, str):
            value = text
        elif custom.input.cut:
            return  # the deltas are not the whole input; a later final text may come
        else:
            value = custom.input.text()
        custom.done = True
        out.append(
            CustomToolCall(
                index=custom.index,
                id=custom.id,
                call_id=custom.call_id,
                name=custom.name,
                input=value,
            )
        )

    def _warn(self, item: _Item, code: str, message: str, out: list[Item]) -> None:
        if code in item.warned:
            return
        item.warned.add(code)
        out.append(
            quirk_warning(code, message, index=item.index, call_id=item.call_id, name=item.name)
        )

    def _so_far(self, item: _Item) -> str | None:
        """The arguments text the core holds for ``item``; ``None`` once the core discarded
        the call (it keeps no text then, and nothing more can change it)."""
        if not item.streamed:
            return ""
        record = self.records.record(item.index)
        if record is None or record.state is CallState.DISCARDED:
            return None
        return record.text()

    def close(self) -> list[Item]:
        out: list[Item] = []
        for custom in self._custom.values():
            if not custom.done:
                out.append(
                    stream_quirk(
                        "quirk-custom-call-unfinished",
                        f"custom tool call {custom.call_id!r} ({custom.name!r}) never "
                        f"completed; {len(custom.input)} characters of input arrived",
                    )
                )
        out.append(Finish())
        return out
