"""Gemini ``streamGenerateContent`` (AI Studio and Vertex AI) → items.

What arrives: ``GenerateContentResponse`` chunks, ``{"candidates": [{"content": {"parts":
[...]}, "finishReason"}], "usageMetadata"}``, as SSE (``alt=sse``) or as the elements of one
JSON array. A part holds ``text`` (``thought: true`` for reasoning) or a ``functionCall``.

Two ways a call arrives:

* Whole: ``{"functionCall": {"name", "args": {...}, "id"?}}``, often without ``id``, several
  in one chunk. Each becomes a call at the next position (0, 1, …), fed as compact JSON text
  in the order the keys arrived, and ends at once. A call without ``id`` gets the core's
  generated id, unique per position (``toolstitch_call_<position>``) - never the function
  name, which would make two parallel calls to one tool indistinguishable.
* Streamed (Vertex ``streamFunctionCallArguments``): ``{"name", "willContinue": true}`` opens
  the call; parts ``{"partialArgs": [{"jsonPath": "$.a.b[0]", "stringValue" | "numberValue" |
  "boolValue" | "nullValue", "willContinue"?}], "willContinue": true}`` add values (a string
  with ``willContinue`` goes on in the next partial for the same path); an empty
  ``functionCall: {}`` closes the call. ``_PathWriter`` turns the path-addressed values into
  JSON text as they arrive, so the core validates and reports progress incrementally. A part
  without ``willContinue`` also closes the call, and so does the candidate's
  ``finishReason: "STOP"`` when the closing part never came (both with a warning); a stream
  that ends otherwise leaves the call truncated.

Signatures (``thoughtSignature``, a sibling of the part's ``functionCall`` / ``text``),
exactly as received: on a ``functionCall`` part, a ``CallNote`` for the call before its
arguments (``ToolCall.signature``); on a text part, a ``TextSignature`` after the part's
text; on a thought part, the ``signature`` of its ``ReasoningBlock``. Thought parts
(``thought: true``) stream as ``ReasoningDelta`` events, and consecutive ones, across
chunks, make one thought, reported as a ``ReasoningBlock(kind="thought")`` when it ends: at a
thought part that carries a signature (that part included, even with no text), at the next
text or ``functionCall`` part, at the candidate's ``finishReason`` or at the end of the
stream. So a signature stays on the part it came with (Gemini refuses signatures moved or
merged between parts); only unsigned neighbours are joined.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import CallNote, EndCall, Finish, Item
from toolstitch.core.record import CallRecords
from toolstitch.vocab.stream_events import (
    ReasoningBlock,
    TextSignature,
)

from ._base import (
    Adapter,
    BoundedText,
    UnknownKinds,
    compact_json,
    finish_event,
    get,
    mapping,
    provider_error,
    quirk_warning,
    reasoning_delta,
    stream_quirk,
    text_delta,
    usage_event,
)

__all__ = ["CODES", "GeminiAdapter", "PathError", "parse_json_path"]

#: The ``quirk-…`` codes this adapter emits, with what each means.
CODES: Final[dict[str, str]] = {
    "quirk-partial-args-unterminated": "streamed partialArgs were not closed by an empty "
    "functionCall",
    "quirk-partial-args-out-of-order": "a partialArgs jsonPath went back into a value already "
    "closed",
}

_STEP = re.compile(
    r"""\.(?P<name>[^.\[\]]+)|\[(?P<index>\d+)\]|\[(?P<quote>['"])(?P<key>(?:\\.|(?!(?P=quote)).)*)(?P=quote)\]"""
)


class PathError(ValueError):
    """A ``jsonPath`` that is not ``$`` followed by ``.key``, ``['key']`` or ``[n]`` steps."""


def parse_json_path(path: str) -> list[str | int]:
    """``"$.a.b[0]['c d']"`` → ``["a", "b", 0, "c d"]``."""
    if not path.startswith("$"):
        raise PathError(f"jsonPath {path!r} does not start with '$'")
    steps: list[str | int] = []
    pos = 1
    while pos < len(path):
        match = _STEP.match(path, pos)
        if match is None:
            raise PathError(f"jsonPath {path!r} cannot be read at offset {pos}")
        if match.group("name") is not None:
            steps.append(match.group("name"))
        elif match.group("index") is not None:
            steps.append(int(match.group("index")))
        else:
            steps.append(re.sub(r"\\(.)", r"\1", match.group("key")))
        pos = match.end()
    return steps


def _signature(part: Mapping[str, Any]) -> str | None:
    """A part's ``thoughtSignature`` as received: the wire's base64 text (an SDK object's
    dump gives the SDK's base64 text of the same bytes; raw bytes are written as base64)."""
    value = get(part, "thoughtSignature", "thought_signature")
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value if isinstance(value, str) else None


class _Container:
    __slots__ = ("array", "count", "keys", "step")

    def __init__(self, step: str | int | None, array: bool) -> None:
        self.step = step  # the key or index under which it sits in its parent
        self.array = array
        self.count = 0  # members written
        self.keys: set[str] = set()


class _PathWriter:
    """Writes JSON text for path-addressed values that arrive in document order.

    ``write(steps, value, more)`` returns the text to append; ``close()`` the text that
    closes everything. A path that goes back into a container already closed, or names a
    member already written, raises ``PathError``: the text cannot express it.
    """

    def __init__(self) -> None:
        self.stack: list[_Container] = []
        self.open_string: list[str | int] | None = None
        self.closed = False

    def write(self, steps: list[str | int], value: object, more: bool) -> str:
        out: list[str] = []
        if not self.stack:
            self.stack.append(_Container(None, False))
            out.append("{")
        if self.open_string is not None:
            if steps == self.open_string and isinstance(value, str):
                out.append(json.dumps(value, ensure_ascii=False)[1:-1])
                if not more:
                    out.append('"')
                    self.open_string = None
                return "".join(out)
            out.append('"')
            self.open_string = None
        if not steps:
            raise PathError("a partialArg addresses the arguments object itself")
        # The containers open now, below the root, are the path's first steps: keep the
        # common part, close the rest.
        parents = steps[:-1]
        depth = 0
        while (
            depth + 1 < len(self.stack)
            and depth < len(parents)
            and self.stack[depth + 1].step == parents[depth]
        ):
            depth += 1
        while len(self.stack) > depth + 1:
            out.append("]" if self.stack.pop().array else "}")
        for position, step in enumerate(parents[depth:], start=depth):
            child_is_array = isinstance(steps[position + 1], int)
            out.append(self._member(step))
            out.append("[" if child_is_array else "{")
            self.stack.append(_Container(step, child_is_array))
        out.append(self._member(steps[-1]))
        if isinstance(value, str):
            out.append(json.dumps(value, ensure_ascii=False)[: -1 if more else None])
            if more:
                self.open_string = steps
        else:
            if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
                # numberValue is a double: SDKs hand 1 over as 1.0; the wire says 1.
                value = int(value)
            out.append(json.dumps(value, ensure_ascii=False))
        return "".join(out)

    def _member(self, step: str | int) -> str:
        top = self.stack[-1]
        if top.array:
            if not isinstance(step, int) or step != top.count:
                raise PathError(f"array index [{step}] is not the next one ([{top.count}])")
        else:
            if not isinstance(step, str) or step in top.keys:
                raise PathError(f"member {step!r} was already written or is not a key")
            top.keys.add(step)
        text = "," if top.count else ""
        top.count += 1
        if top.array:
            return text
        return text + json.dumps(step, ensure_ascii=False) + ":"

    def close(self) -> str:
        out: list[str] = []
        if self.open_string is not None:
            out.append('"')
            self.open_string = None
        if not self.stack:
            out.append("{}")
        while self.stack:
            out.append("]" if self.stack.pop().array else "}")
        self.closed = True
        return "".join(out)


_VALUE_KEYS = (
    ("stringValue", "string_value"),
    ("numberValue", "number_value"),
    ("boolValue", "bool_value"),
    ("nullValue", "null_value"),
)


class _Streamed:
    __slots__ = ("broken", "id", "index", "name", "writer")

    def __init__(self, index: int, call_id: str | None, name: str | None) -> None:
        self.index = index
        self.id = call_id
        self.name = name
        self.writer = _PathWriter()
        self.broken = False


#: The top-level fields of a ``GenerateContentResponse`` (wire and SDK spellings): an event
#: with none of them is not part of the protocol (``quirk-unknown-event``).
_KNOWN_FIELDS: Final = frozenset(
    {
        "candidates",
        "usageMetadata",
        "usage_metadata",
        "promptFeedback",
        "prompt_feedback",
        "modelVersion",
        "model_version",
        "responseId",
        "response_id",
        "createTime",
        "create_time",
    }
)

#: The keys of a part this adapter reads; a part with others (``executableCode``,
#: ``codeExecutionResult``, ``inlineData``…) leaves ``quirk-unknown-event`` once per kind.
_READ_PART_KEYS: Final = frozenset(
    {"text", "thought", "thoughtSignature", "thought_signature", "functionCall", "function_call"}
)


class GeminiAdapter(Adapter):
    """Adapter for Gemini ``streamGenerateContent`` (``provider="gemini"``)."""

    name = "gemini"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self._position = 0
        self._open: _Streamed | None = None
        # The thought being read (its text so far), until it ends: one block's reasoning
        # text, the same text the ReasoningDelta events carry.
        self._thought: BoundedText | None = None
        self._unknown = UnknownKinds()

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        out: list[Item] = []
        if "error" in payload and not payload.get("candidates"):
            if payload["error"] is not None:
                out.append(provider_error(payload["error"]))
            return out
        candidates = payload.get("candidates")
        if isinstance(candidates, list):
            for position, raw in enumerate(candidates):
                candidate = mapping(raw)
                if candidate.get("index", position) != self.choice:
                    continue
                self._candidate(candidate, out)
        usage = mapping(get(payload, "usageMetadata", "usage_metadata"))
        if usage:
            out.append(usage_event(dict(usage)))
        blocked = mapping(get(payload, "promptFeedback", "prompt_feedback")).get("blockReason")
        if isinstance(blocked, str) and blocked:
            out.append(finish_event(blocked))  # the prompt was refused: no candidates
        if _KNOWN_FIELDS.isdisjoint(payload):
            self._unknown.report("a Gemini event with keys", sorted(payload), "was skipped", out)
        return out

    def _candidate(self, candidate: Mapping[str, Any], out: list[Item]) -> None:
        parts = mapping(candidate.get("content")).get("parts")
        if isinstance(parts, list):
            for raw in parts:
                self._part(mapping(raw), out)
        reason = get(candidate, "finishReason", "finish_reason")
        if isinstance(reason, str) and reason:
            self._end_thought(None, out)
            if self._open is not None and reason == "STOP":
                self._finish_open(
                    "the stream's finishReason STOP came before the empty functionCall that "
                    "closes the streamed arguments; the call was closed there",
                    out,
                )
            out.append(finish_event(reason))

    def _part(self, part: Mapping[str, Any], out: list[Item]) -> None:
        if not _READ_PART_KEYS.issuperset(part):
            # code execution, inline data, a function response...: not read here
            unread = part.keys() - _READ_PART_KEYS
            self._unknown.report("a Gemini part with", sorted(unread), "was not read", out)
        signature = _signature(part)
        call = get(part, "functionCall", "function_call")
        if call is not None:
            self._end_thought(None, out)
            self._function_call(mapping(call), signature, out)
            return
        text = part.get("text")
        text = text if isinstance(text, str) else ""
        if part.get("thought") is True:
            if text:
                out.append(reasoning_delta(text))
                if self._thought is None:
                    self._thought = BoundedText(self.records.limits.max_reasoning_chars)
                if not self._thought.add(text):
                    out.append(
                        stream_quirk(
                            "quirk-reasoning-over-limit",
                            "a Gemini thought passed max_reasoning_chars; its ReasoningBlock "
                            "keeps the first characters only",
                        )
                    )
            if signature is not None:
                self._end_thought(signature, out)
            return
        if text or signature is not None:
            self._end_thought(None, out)
        if text:
            out.append(text_delta(text))
        if signature is not None:
            out.append(TextSignature(signature=signature))

    def _end_thought(self, signature: str | None, out: list[Item]) -> None:
        """End the thought being read (with the signature that ends it, if any); a signature
        with no thought open is a thought of its own, with no text."""
        thought, self._thought = self._thought, None
        if thought is None and signature is None:
            return
        text = "" if thought is None else thought.text()
        out.append(ReasoningBlock(text=text, signature=signature, kind="thought"))

    # -- function calls -----------------------------------------------------------------------

    def _function_call(
        self, call: Mapping[str, Any], signature: str | None, out: list[Item]
    ) -> None:
        name = call.get("name") if isinstance(call.get("name"), str) else None
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        more = get(call, "willContinue", "will_continue") is True
        partial = get(call, "partialArgs", "partial_args")
        args = call.get("args")
        if name:
            if not self._named(name, call_id, more, partial, args, signature, out):
                return
        elif self._open is None:
            if partial or (isinstance(args, Mapping) and args):
                # Arguments without a call to belong to: a call without a name (the core
                # discards it with MissingName at the end of the stream).
                self._whole(call_id, None, args, signature, out)
            return
        elif signature is not None:
            # A signature on a later part of streamed arguments: still before they close.
            out.append(CallNote(index=self._open.index, signature=signature))
        if isinstance(partial, list):
            for raw in partial:
                self._partial(mapping(raw), out)
        if self._open is not None and not more:
            empty = not name and not partial and args is None
            if empty:
                self._close_open(out)
            else:
                self._finish_open(
                    "the last partialArgs part had no willContinue and no empty functionCall "
                    "followed; the call was closed there",
                    out,
                )

    def _named(
        self,
        name: str,
        call_id: str | None,
        more: bool,
        partial: object,
        args: object,
        signature: str | None,
        out: list[Item],
    ) -> bool:
        """A ``functionCall`` with a name: a whole call (False: nothing more to do with the
        part), or the opening of streamed arguments (True)."""
        if self._open is not None:
            self._finish_open(
                "a new functionCall began before the empty functionCall that closes the "
                "streamed arguments; the call was closed there",
                out,
            )
        if not more and not partial:
            self._whole(call_id, name, args, signature, out)
            return False
        index = self._next()
        self._open = _Streamed(index, call_id, name)
        out.append(Delta(index=index, id=call_id, name=name))
        if signature is not None:
            out.append(CallNote(index=index, signature=signature))
        if isinstance(args, Mapping) and args:
            # Arguments given whole on the opening part: write them as paths.
            self._write_object(args, out)
        return True

    def _next(self) -> int:
        index = self._position
        self._position += 1
        return index

    def _whole(
        self,
        call_id: str | None,
        name: str | None,
        args: object,
        signature: str | None,
        out: list[Item],
    ) -> None:
        index = self._next()
        if signature is not None:
            # Before the delta that completes the call (a note may precede its first delta).
            out.append(CallNote(index=index, signature=signature))
        # No args at all: no text; the call's end gives it the empty-arguments object
        # (core.machine.at_end), as for every provider.
        text = None if args is None else compact_json(args)
        out.append(Delta(index=index, id=call_id, name=name, arguments=text))
        out.append(EndCall(index))

    def _partial(self, partial: Mapping[str, Any], out: list[Item]) -> None:
        state = self._open
        if state is None or state.broken:
            return
        path = get(partial, "jsonPath", "json_path")
        value: object = None
        found = False
        for keys in _VALUE_KEYS:
            for key in keys:
                if key in partial:
                    value = partial[key]
                    found = True
                    break
            if found:
                break
        if not isinstance(path, str) or not found:
            return
        if keys[0] == "nullValue":
            value = None
        more = get(partial, "willContinue", "will_continue") is True
        try:
            text = state.writer.write(parse_json_path(path), value, more and isinstance(value, str))
        except PathError as exc:
            state.broken = True
            out.append(
                quirk_warning(
                    "quirk-partial-args-out-of-order",
                    f"partialArgs {path!r} cannot be written in order ({exc}); the call's "
                    "arguments stop here",
                    index=state.index,
                    call_id=state.id,
                    name=state.name,
                )
            )
            return
        if text:
            out.append(Delta(index=state.index, arguments=text))

    def _write_object(self, args: Mapping[str, Any], out: list[Item]) -> None:
        state = self._open
        assert state is not None
        text = compact_json(args)
        # Open the root and write the members verbatim; later partials cannot extend them.
        state.writer.stack.append(_Container(None, False))
        state.writer.stack[0].keys.update(str(k) for k in args)
        state.writer.stack[0].count = len(args)
        out.append(Delta(index=state.index, arguments=text[:-1]))

    def _close_open(self, out: list[Item]) -> None:
        state = self._open
        if state is None:
            return
        self._open = None
        if not state.broken:
            text = state.writer.close()
            out.append(Delta(index=state.index, arguments=text))
        out.append(EndCall(state.index))

    def _finish_open(self, message: str, out: list[Item]) -> None:
        state = self._open
        if state is None:
            return
        out.append(
            quirk_warning(
                "quirk-partial-args-unterminated",
                message,
                index=state.index,
                call_id=state.id,
                name=state.name,
            )
        )
        self._close_open(out)

    def close(self) -> list[Item]:
        out: list[Item] = []
        self._end_thought(None, out)
        if self._open is not None:
            # The stream ended inside streamed arguments: they are truncated (or, if none
            # came, what the response's end says decides: ``ending=None``).
            state, self._open = self._open, None
            out.append(EndCall(state.index, None))
        out.append(Finish())
        return out
