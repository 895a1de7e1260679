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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import EndCall, Finish, Item, arguments
from toolstitch.core.record import CallRecords
from toolstitch.vocab.call_events import CallState
from toolstitch.vocab.stream_events import FinishReason, ReasoningDelta, TextDelta, Usage

from ._base import Adapter, mapping, provider_error, quirk_warning

__all__ = ["CODES", "OpenAIResponsesAdapter"]

#: The ``quirk-…`` codes this adapter emits, with what each means.
CODES: Final[dict[str, str]] = {
    "quirk-no-argument-deltas": "no arguments deltas; the arguments came only with .done / the "
    "finished item",
    "quirk-done-mismatch": "the .done (or finished item) arguments differ from the deltas",
    "quirk-call-only-in-completed": "a function call appeared only in response.completed",
}

_REASONING = frozenset(
    {
        "response.reasoning_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning.delta",
    }
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


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _text_key(payload: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """Which text part an output_text event is about (indices that are not ints count as
    missing: they cannot be used as keys)."""
    return _int(payload.get("output_index")), _int(payload.get("content_index"))


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

    # -- dispatch -----------------------------------------------------------------------------

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        kind = payload.get("type") or event
        out: list[Item] = []
        if not isinstance(kind, str):
            return out
        if kind == "response.function_call_arguments.delta":
            self._arguments_delta(payload, out)
        elif kind == "response.output_text.delta":
            self._text_delta(payload, out)
        elif kind in _REASONING:
            text = payload.get("delta")
            if isinstance(text, str) and text:
                out.append(ReasoningDelta(text=text))
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
        elif kind == "error" or event == "error":
            error = payload.get("error", payload)
            out.append(provider_error(error))
        return out

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
            out.append(TextDelta(text=text))

    def _text_done(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        # The whole text, for servers that sent no deltas for it.
        key = _text_key(payload)
        text = payload.get("text")
        if key not in self._text_seen and isinstance(text, str) and text:
            self._text_seen.add(key)
            out.append(TextDelta(text=text))

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
        if item.get("type") != "function_call" or index is None or index in self._items:
            return
        self._start(index, item, out)

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

    def _item_done(self, payload: Mapping[str, Any], out: list[Item]) -> None:
        data = mapping(payload.get("item"))
        if data.get("type") != "function_call":
            return
        index = _int(payload.get("output_index"))
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
            out.append(Usage(usage=dict(usage)))
        status = response.get("status")
        details = mapping(response.get("incomplete_details"))
        reason = details.get("reason") if status == "incomplete" else status
        if isinstance(reason, str) and reason and not self._finished:
            self._finished = True
            out.append(FinishReason(reason=reason))
        error = response.get("error")
        if status == "failed" and error:
            out.append(provider_error(error))

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
        return [Finish()]
