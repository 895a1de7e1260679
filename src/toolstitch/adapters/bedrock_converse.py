"""AWS Bedrock ``ConverseStream`` → items.

What arrives: one event per item, ``{"<eventType>": payload}``, as boto3 / aioboto3 hand them
over (``converse_stream(...)["stream"]``) and as the ``Stitcher`` builds them from the binary
``application/vnd.amazon.eventstream`` frames (``:event-type`` → the key, the JSON payload →
the value; an ``:message-type: exception`` frame → ``{"<exceptionType>": payload}``). The
events: ``messageStart``; per content block, keyed by its ``contentBlockIndex``, an optional
``contentBlockStart`` (only tool blocks have one), ``contentBlockDelta`` events (``text``,
``reasoningContent`` {``text`` | ``signature`` | ``redactedContent``}, ``toolUse`` {``input``:
a JSON text fragment}, Nova's ``toolResult``) and ``contentBlockStop``; ``messageStop`` with
the ``stopReason``; ``metadata`` with the ``usage``. Every wire payload carries a padding field
``"p"`` (against length side channels), which means nothing and is never read.

A ``toolUse`` block is one call whose index is the block index; its ``input`` fragments are
the arguments (an empty concatenation is ``{}``) and ``contentBlockStop`` ends it
(``EndCall``). A block started with ``"type": "server_tool_use"`` (Nova's built-in tools) is
run by Bedrock: its deltas are ``ServerDelta`` and its end ``ServerEnd``, as for Anthropic's
server tools. The ``toolResult`` blocks that follow such a call hold the tool's output: they
are not calls, and each is reported by a ``StreamWarning`` (``quirk-tool-result-block``). A
reasoning block's text streams as ``ReasoningDelta`` events and, at its stop, the block is
reported whole as a ``ReasoningBlock`` (``kind="reasoningContent"``) with its ``signature``, or,
for ``redactedContent``, ``redacted=True`` and that content as the signature (a ``str`` as
received; boto3's ``bytes`` as their base64 text, the wire form). An exception event
(``throttlingException``, ``modelStreamErrorException``, ``validationException``,
``internalServerException``, ``serviceUnavailableException``, any other ``…Exception`` or any
exception frame) becomes a ``StreamFailed`` whose ``ProviderError.kind`` is its name. Event
keys, block kinds and delta kinds this module does not know leave a ``StreamWarning`` with a
stable code; nothing is dropped silently.

Bounds: reasoning text kept for a block's ``ReasoningBlock`` stops at ``max_reasoning_chars``
and the open blocks tracked at ``max_calls`` (the core's ``Limits``), each with a warning.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import EndCall, Finish, Item, ServerDelta, ServerEnd, arguments
from toolstitch.core.record import CallRecords
from toolstitch.vocab.endings import Ending
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.stream_events import (
    ReasoningBlock,
    StreamFailed,
)

from ._base import (
    Adapter,
    BoundedText,
    UnknownKinds,
    finish_event,
    mapping,
    provider_error,
    quirk_warning,
    reasoning_delta,
    stream_quirk,
    text_delta,
    usage_event,
)

__all__ = [
    "CODES",
    "EVENTS",
    "EXCEPTIONS",
    "BedrockConverseAdapter",
    "exception_failure",
    "is_bedrock_event",
    "is_exception",
]

#: The ``quirk-…`` codes only this adapter emits (it also uses ``quirk-index-invalid`` and
#: ``quirk-index-negative``, declared with the OpenAI-Chat codes).
CODES: Final[dict[str, str]] = {
    "quirk-tool-result-block": "a Bedrock toolResult block (a server tool's output) was "
    "reported, not taken as a call",
    "quirk-block-index-reused": "a Bedrock tool block reused the index of an earlier call and "
    "was moved to the next free index",
    "quirk-too-many-open-blocks": "more Bedrock content blocks open at once than max_calls; "
    "later ones are not tracked",
}

#: The ConverseStream event names (the keys of boto3's event dicts).
EVENTS: Final = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    }
)
#: The in-stream exceptions ConverseStream documents.
EXCEPTIONS: Final = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
    }
)
#: What ``Stitcher`` passes as ``event`` with an exception frame's ``{exceptionType: payload}``.
EXCEPTION_EVENT: Final = "exception"

_SERVER_KIND = "server_tool_use"


def is_bedrock_event(payload: Mapping[str, Any], event: str | None = None) -> bool:
    """Whether ``payload`` is a ConverseStream event: a mapping whose single key is an event
    or exception name (or that came from an exception frame)."""
    if len(payload) != 1:
        return False
    (key,) = payload
    if not isinstance(key, str):
        return False
    return (
        key in EVENTS or key in EXCEPTIONS or key.endswith("Exception") or event == EXCEPTION_EVENT
    )


def is_exception(key: object, event: str | None) -> bool:
    """Whether ``{key: ...}`` is an in-stream exception of a Bedrock runtime stream: it came
    from an exception frame (``event="exception"``) or its key is an ``…Exception`` name."""
    return event == EXCEPTION_EVENT or (isinstance(key, str) and key.endswith("Exception"))


def exception_failure(name: str, value: object) -> StreamFailed:
    """The ``StreamFailed`` of an in-stream exception ``{name: value}`` of a Bedrock runtime
    stream (ConverseStream's and InvokeModelWithResponseStream's are the same frames): a
    ``ProviderError`` whose ``kind`` is the exception name, its payload without the ``"p"``
    padding (a bare string payload is the message)."""
    data = {k: v for k, v in mapping(value).items() if k != "p"}
    if not data and isinstance(value, str):
        data = {"message": value}
    return provider_error({**data, "code": name})


class _Block:
    """One content block with state: a call (client or server), a reasoning block, or a
    Nova ``toolResult`` block."""

    __slots__ = ("core", "id", "kind", "name", "redacted", "signature", "text")

    def __init__(self, kind: str, core: int = 0, block_id: str | None = None) -> None:
        self.kind = kind  # "toolUse", _SERVER_KIND, "reasoning" or "toolResult"
        self.core = core  # the call's index in the core
        self.id = block_id
        self.name: str | None = None
        self.text: BoundedText | None = None  # a reasoning block's text, kept for its report
        self.signature: str | None = None
        self.redacted = False


def _int_index(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class BedrockConverseAdapter(Adapter):
    """Adapter for Bedrock ConverseStream (``provider="bedrock-converse"``)."""

    name = "bedrock-converse"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        limits = getattr(records, "limits", None)
        if not isinstance(limits, Limits):
            limits = Limits()
        self._max_text = limits.max_reasoning_chars
        self._max_blocks = limits.max_calls
        self._blocks: dict[int, _Block] = {}  # open blocks with state, by block index
        self._cores: set[int] = set()  # call indices given out
        self._warned: set[str] = set()  # codes reported once per stream
        self._unknown_kinds = UnknownKinds()  # unknown keys, reported once each

    # -- events -----------------------------------------------------------------------------

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        out: list[Item] = []
        for key, value in payload.items():
            if key == "contentBlockDelta":
                self._delta(mapping(value), out)
            elif key == "contentBlockStart":
                self._start(mapping(value), out)
            elif key == "contentBlockStop":
                self._stop(mapping(value), out)
            elif key == "messageStop":
                reason = mapping(value).get("stopReason")
                if isinstance(reason, str) and reason:
                    out.append(finish_event(reason))
            elif key == "metadata":
                usage = mapping(mapping(value).get("usage"))
                if usage:
                    out.append(usage_event(dict(usage)))
            elif key == "messageStart":
                pass  # only the role: no message id is sent
            elif is_exception(key, event):
                out.append(exception_failure(str(key), value))
            else:
                self._unknown(f"event {key!r}", out)
        return out

    def _unknown(self, what: str, out: list[Item]) -> None:
        self._unknown_kinds.report("Bedrock", what, "is not read; skipped", out)

    def _start(self, data: Mapping[str, Any], out: list[Item]) -> None:
        index = _int_index(data.get("contentBlockIndex"))
        start = mapping(data.get("start"))
        if index is None:
            if start:
                out.append(
                    stream_quirk(
                        "quirk-index-invalid",
                        f"a contentBlockStart came with contentBlockIndex "
                        f"{data.get('contentBlockIndex')!r}; it was ignored",
                    )
                )
            return
        for kind, value in start.items():
            if kind == "toolUse":
                self._tool_start(index, mapping(value), out)
            elif kind == "toolResult":
                self._result_start(index, mapping(value), out)
            else:
                self._unknown(f"contentBlockStart.start.{kind}", out)

    def _tool_start(self, index: int, tool: Mapping[str, Any], out: list[Item]) -> None:
        block_id = _str(tool.get("toolUseId"))
        name = _str(tool.get("name"))
        kind = _SERVER_KIND if tool.get("type") == _SERVER_KIND else "toolUse"
        block = self._call_block(index, kind, block_id, name, out)
        if block is None:
            return
        block.name = name
        delta = Delta(index=block.core, id=block_id, name=name)
        out.append(ServerDelta(delta) if kind == _SERVER_KIND else delta)

    def _call_block(
        self, index: int, kind: str, block_id: str | None, name: str | None, out: list[Item]
    ) -> _Block | None:
        """A new call block at ``index``, with its core index (the block index if free)."""
        core = index
        code = None
        if index < 0:
            code, why = "quirk-index-negative", f"the block's index {index} is negative"
        elif index in self._cores:
            code, why = "quirk-block-index-reused", f"block index {index} already had a call"
        if code is not None:
            core = max(self._cores, default=-1) + 1
        block = self._track(index, _Block(kind, core, block_id), out)
        if block is None:
            return None
        self._cores.add(core)
        if code is not None:
            out.append(
                quirk_warning(code, f"{why}: the call has index {core}", index=core, name=name)
            )
        return block

    def _track(self, index: int, block: _Block, out: list[Item]) -> _Block | None:
        if index not in self._blocks and len(self._blocks) >= self._max_blocks:
            if "quirk-too-many-open-blocks" not in self._warned:
                self._warned.add("quirk-too-many-open-blocks")
                out.append(
                    stream_quirk(
                        "quirk-too-many-open-blocks",
                        f"more than max_calls={self._max_blocks} content blocks open at once: "
                        f"block {index} and later ones are not tracked",
                    )
                )
            return None
        self._blocks[index] = block
        return block

    def _result_start(self, index: int, result: Mapping[str, Any], out: list[Item]) -> None:
        self._track(index, _Block("toolResult", block_id=_str(result.get("toolUseId"))), out)
        status = result.get("status")
        out.append(
            stream_quirk(
                "quirk-tool-result-block",
                f"content block {index} is the result of server tool call "
                f"{result.get('toolUseId')!r} (status {status!r}), run by Bedrock: not a call",
            )
        )

    def _delta(self, data: Mapping[str, Any], out: list[Item]) -> None:
        index = _int_index(data.get("contentBlockIndex"))
        delta = data.get("delta")
        if type(delta) is not dict:
            delta = mapping(delta)
        for kind, value in delta.items():
            if kind == "text":
                if isinstance(value, str) and value:
                    out.append(text_delta(value))
            elif kind == "toolUse":
                self._input(index, mapping(value).get("input"), out)
            elif kind == "reasoningContent":
                self._reasoning(index, mapping(value), out)
            elif kind == "toolResult":
                block = self._blocks.get(index) if index is not None else None
                if block is None or block.kind != "toolResult":
                    self._unknown("a toolResult delta outside a toolResult block", out)
            else:
                self._unknown(f"contentBlockDelta.delta.{kind}", out)

    def _input(self, index: int | None, fragment: object, out: list[Item]) -> None:
        if index is None or not isinstance(fragment, str):
            return
        block = self._blocks.get(index)
        if block is None:
            # Input with no contentBlockStart: a call without a name, which the core
            # discards (missing-name) rather than lose.
            block = self._call_block(index, "toolUse", None, None, out)
            if block is None:
                return
            out.append(Delta(index=block.core))
        if not fragment:
            return
        if block.kind == "toolUse":
            out.append(arguments(block.core, fragment))
        elif block.kind == _SERVER_KIND:
            out.append(ServerDelta(Delta(index=block.core, arguments=fragment)))

    def _reasoning(self, index: int | None, content: Mapping[str, Any], out: list[Item]) -> None:
        text = content.get("text")
        if isinstance(text, str) and text:
            out.append(reasoning_delta(text))
        block = self._blocks.get(index) if index is not None else None
        if block is None and index is not None:
            block = self._track(index, _Block("reasoning"), out)
        if block is None or block.kind != "reasoning":
            return
        if isinstance(text, str) and text:
            if block.text is None:
                block.text = BoundedText(self._max_text)
            if not block.text.add(text):
                out.append(
                    stream_quirk(
                        "quirk-reasoning-over-limit",
                        f"reasoning block {index} passed max_reasoning_chars={self._max_text}; "
                        "its ReasoningBlock keeps the first characters only",
                    )
                )
        signature = content.get("signature")
        if isinstance(signature, str):
            block.signature = (block.signature or "") + signature
        redacted = content.get("redactedContent")
        if isinstance(redacted, (bytes, bytearray)):
            redacted = base64.b64encode(redacted).decode("ascii")
        if isinstance(redacted, str):
            block.redacted = True
            block.signature = (block.signature or "") + redacted

    def _stop(self, data: Mapping[str, Any], out: list[Item]) -> None:
        index = _int_index(data.get("contentBlockIndex"))
        block = self._blocks.pop(index, None) if index is not None else None
        if block is not None:
            self._end(block, out)

    def _end(self, block: _Block, out: list[Item], ending: Ending | None = Ending.CLOSED) -> None:
        """``block`` is over: its stop came (``ending`` ``CLOSED``), or the stream ended
        without it (``None``: as the stream's finish reason says)."""
        if block.kind == "toolUse":
            out.append(EndCall(block.core, ending))
        elif block.kind == _SERVER_KIND:
            out.append(ServerEnd(block.core, block.id, _SERVER_KIND, ending))
        elif block.kind == "reasoning":
            out.append(
                ReasoningBlock(
                    text="" if block.text is None else block.text.text(),
                    signature=block.signature,
                    redacted=block.redacted,
                    kind="reasoningContent",
                )
            )

    def close(self) -> list[Item]:
        # Blocks whose stop never came: calls are resolved by Finish; the rest ends here.
        out: list[Item] = []
        for _, block in sorted(self._blocks.items()):
            if block.kind != "toolUse":
                self._end(block, out, None)
        self._blocks.clear()
        out.insert(0, Finish())
        return out
