"""LangChain chat model streams (``chat_model.stream(...)`` / ``astream(...)``) → items.

What arrives: langchain-core ``AIMessageChunk`` objects, read through their dump
(``as_mapping``: langchain is never imported), or such dumps as dicts::

    {"type": "AIMessageChunk", "id": "lc_run--…",
     "content": "text" | [block, ...],
     "tool_call_chunks": [{"name", "args", "id", "index", "type": "tool_call_chunk"}, ...],
     "additional_kwargs": {"reasoning_content"?: "…", ...},
     "response_metadata": {"finish_reason" | "stop_reason" | "done_reason" | ...: "…", ...},
     "usage_metadata": {"input_tokens", "output_tokens", "total_tokens", ...} | None,
     "tool_calls", "invalid_tool_calls", "chunk_position", "name"}

Calls come from ``tool_call_chunks``: ``args`` is a piece of the arguments' JSON text
(LangChain's own chunks, made from whole ``tool_calls``, carry it whole), ``name`` and ``id``
usually only on a call's first chunk. A chunk with an ``index`` belongs to the call of that
index (its core index, unless a call read without index took it: the next free one,
``quirk-index-moved``), except that a new id on an index whose call has another one is
another call, as LangChain merges them (``quirk-index-reused``). A chunk without ``index``
follows the core's index-less rule: its id's call if the id is known; a new call if it names
a tool (LangChain never merges such chunks) or brings a new id while the latest call has
one; else the latest call (``quirk-index-missing`` when so continued). ``tool_calls`` and
``invalid_tool_calls`` are LangChain's parse of the chunks, read only when there are no
chunks (a whole ``AIMessage``, what ``stream()`` yields for a model that cannot stream).
Gemini's call signatures (``additional_kwargs["__gemini_function_call_thought_signatures__"]``,
call id → signature) go to their calls' ``ToolCall.signature``. A call ends at ``Finish``:
LangChain has no per-call stop.

Text is ``content`` when a string, else its ``text`` blocks (and plain strings). Reasoning is
``additional_kwargs["reasoning_content"]`` (DeepSeek, Ollama, Groq, xAI...), Anthropic's
``thinking`` blocks (their ``signature`` pieces become the block's signature) and
``redacted_thinking`` blocks, Bedrock Converse's ``reasoning_content`` blocks (``text`` and
``signature`` nested), and ``reasoning`` blocks (langchain-core's standard block: its
``reasoning`` text, ``extras.signature``; the OpenAI Responses API's: ``summary`` parts,
``encrypted_content``, ``id``; also as ``additional_kwargs["reasoning"]``): a
``ReasoningDelta`` per piece and a ``ReasoningBlock`` when the block ends (text, a call or
another block after it, or the end). A ``refusal`` block or key is a ``RefusalDelta``.
Blocks that repeat the calls (``tool_use``, ``input_json_delta``, ``tool_call_chunk``,
``tool_call``, ``function_call``...) are not read twice.

``usage_metadata`` is summed over the chunks, as LangChain adds chunks (each integration
sends it so: Anthropic's input and output counts come in two chunks), and each chunk that
carries some gives a ``Usage`` with the sum so far. The finish reason is the first of
``response_metadata``'s ``finish_reason`` (OpenAI-style, Gemini's upper case), ``stop_reason``
(Anthropic), ``stopReason`` (Bedrock), ``done_reason`` (Ollama), else the Responses API's
``incomplete_details.reason`` or final ``status``: a ``FinishReason`` as sent, and the last
one read says how the response ended (``Finish(ending_of(reason))``). Any other key, block
type or ``additional_kwargs`` key leaves a ``StreamWarning`` (``quirk-unknown-event``, once
per kind); ``response_metadata`` is the provider's metadata (model, ids, logprobs...): only
its finish reasons are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolstitch.core.deltas import Delta
from toolstitch.core.instructions import CallNote, Finish, Item, arguments
from toolstitch.core.record import CallRecords
from toolstitch.vocab.endings import ending_of
from toolstitch.vocab.stream_events import ReasoningBlock, RefusalDelta

from ._base import (
    Adapter,
    BoundedText,
    UnknownKinds,
    compact_json,
    finish_event,
    mapping,
    quirk_warning,
    reasoning_delta,
    stream_quirk,
    text_delta,
    usage_event,
)

__all__ = ["CODES", "MESSAGE_TYPES", "LangChainAdapter", "detects"]

#: The ``quirk-…`` codes this adapter declares: none of its own. It emits the shared
#: ``quirk-unknown-event`` and ``quirk-reasoning-over-limit``, and the call-routing codes
#: declared with the OpenAI-Chat ones (``quirk-index-missing``, ``quirk-index-invalid``,
#: ``quirk-index-negative``, ``quirk-index-reused``, ``quirk-index-moved``,
#: ``quirk-signature-late``), which mean the same here.
CODES: Final[dict[str, str]] = {}

#: The ``type`` of the messages a chat model streams: a chunk, or a whole ``AIMessage``
#: (what ``stream()`` yields for a model that does not stream). No provider's event has
#: either.
MESSAGE_TYPES: Final = frozenset({"AIMessageChunk", "ai"})

#: The fields of a langchain-core ``AIMessageChunk`` (``example``: langchain-core 0.3's).
_KEYS: Final = frozenset(
    {
        "type",
        "content",
        "tool_call_chunks",
        "additional_kwargs",
        "response_metadata",
        "usage_metadata",
        "tool_calls",
        "invalid_tool_calls",
        "chunk_position",
        "id",
        "name",
        "example",
    }
)

#: Content blocks that repeat what ``tool_call_chunks`` carries (Anthropic's ``tool_use``
#: start and ``input_json_delta`` pieces; langchain-core's standard blocks; the Responses
#: API's ``function_call`` and ``custom_tool_call`` items), or a server tool's input.
_MIRRORED_BLOCKS: Final = frozenset(
    {
        "tool_use",
        "input_json_delta",
        "tool_call_chunk",
        "tool_call",
        "invalid_tool_call",
        "function_call",
        "custom_tool_call",
    }
)

#: Gemini's call signatures (langchain-google-genai): call id → signature.
SIGNATURES: Final = "__gemini_function_call_thought_signatures__"

#: ``additional_kwargs`` keys read (``tool_calls``: the raw OpenAI entries older
#: langchain-openai copied there, repeating ``tool_call_chunks``).
_KWARGS: Final = frozenset({"reasoning_content", "reasoning", "refusal", "tool_calls", SIGNATURES})

#: Where integrations put the finish reason in ``response_metadata``, in the order read.
_REASON_KEYS: Final = ("finish_reason", "stop_reason", "stopReason", "done_reason")

#: The Responses API's final statuses (``response_metadata["status"]``).
_FINAL_STATUSES: Final = frozenset({"completed", "incomplete", "failed", "cancelled"})


def detects(payload: Mapping[str, Any], event: str | None = None) -> bool:
    """Whether ``payload`` is a langchain-core AI message (a chunk, or a whole one)."""
    kind = payload.get("type")
    return isinstance(kind, str) and kind in MESSAGE_TYPES


def _text(value: object) -> str | None:
    """A non-empty string, or ``None`` (LangChain writes an absent name or id as ``None``)."""
    return value if isinstance(value, str) and value else None


def _items(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _summed(total: Mapping[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """``total`` plus ``more``, as langchain-core adds usage: counts added, nested details
    summed key by key, anything else replaced. A new dict; neither argument changes."""
    out = dict(total)
    for key, value in more.items():
        old = out.get(key)
        if isinstance(value, Mapping):
            out[key] = _summed(old if isinstance(old, Mapping) else {}, value)
        elif type(value) is int and type(old) is int:
            out[key] = old + value
        else:
            out[key] = value
    return out


def _finish_reason(metadata: Mapping[str, Any]) -> str | None:
    """The finish reason in a chunk's ``response_metadata``, if it has one."""
    for key in _REASON_KEYS:
        reason = _text(metadata.get(key))
        if reason is not None:
            return reason
    reason = _text(mapping(metadata.get("incomplete_details")).get("reason"))
    if reason is not None:
        return reason
    status = metadata.get("status")
    return status if isinstance(status, str) and status in _FINAL_STATUSES else None


class _Reasoning:
    """One reasoning block as it streams: its text, summary parts and signature, each kept up
    to ``bound`` characters (``Limits.max_reasoning_chars``), and its id; ``key`` tells it
    from the next block (its kind and content-block index)."""

    __slots__ = ("_over", "bound", "id", "key", "kind", "signature", "summary", "text")

    def __init__(self, key: tuple[str, object], kind: str, bound: int) -> None:
        self.key = key
        self.kind = kind
        self.bound = bound
        self.text = BoundedText(bound)
        self.signature = BoundedText(bound)
        self.summary: dict[int, BoundedText] = {}
        self.id: str | None = None
        self._over = False

    def add(self, text: object, out: list[Item], part: int | None = None) -> None:
        """A piece of the block's text (of its summary part ``part``, when given)."""
        if not isinstance(text, str) or not text:
            return
        out.append(reasoning_delta(text))
        kept = self.text if part is None else self.summary.setdefault(part, BoundedText(self.bound))
        self._kept(kept.add(text), out)

    def sign(self, signature: object, out: list[Item]) -> None:
        """A piece of the block's signature."""
        if isinstance(signature, str) and signature:
            self._kept(self.signature.add(signature), out)

    def _kept(self, kept: bool, out: list[Item]) -> None:
        if not kept and not self._over:
            self._over = True
            out.append(
                stream_quirk(
                    "quirk-reasoning-over-limit",
                    f"a {self.kind} block passed max_reasoning_chars ({self.bound}); its "
                    "ReasoningBlock keeps the first characters only",
                )
            )

    def block(self) -> ReasoningBlock | None:
        """The block as a ``ReasoningBlock`` (``None`` if nothing of it came)."""
        signature = self.signature.text() or None
        if self.kind == "redacted_thinking":
            return ReasoningBlock(signature=signature, redacted=True, kind=self.kind)
        summary = tuple(self.summary[part].text() for part in sorted(self.summary))
        if not (len(self.text) or summary or signature or self.id):
            return None
        return ReasoningBlock(
            text=self.text.text(), summary=summary, signature=signature, id=self.id, kind=self.kind
        )


class LangChainAdapter(Adapter):
    """Adapter for langchain-core ``AIMessageChunk`` streams (``provider="langchain"``)."""

    name = "langchain"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self._by_index: dict[int, int] = {}  # LangChain's index -> core index
        self._by_id: dict[str, int] = {}  # call id -> core index
        self._id_of: dict[int, str] = {}  # core index -> its call's id
        self._cores: set[int] = set()  # the core indices of the calls so far
        self._next = 0  # the next free core index
        self._last: int | None = None  # the core index of the latest call
        self._warned: set[tuple[str, int]] = set()  # (code, core index): once per call
        self._signed: set[str] = set()  # ids whose Gemini signature was handed on
        self._pending: dict[str, str] = {}  # signatures of ids no call has had yet
        self._reasoning: _Reasoning | None = None  # the reasoning block still open
        self._reason: str | None = None  # the last finish reason read
        self._usage: dict[str, Any] = {}
        self._unknown = UnknownKinds()

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        out: list[Item] = []
        kind = payload.get("type")
        if kind is not None and not detects(payload):
            self._unknown.report("a message of type", kind, "(not an AI message) was skipped", out)
            return out
        for key in payload:
            if key not in _KEYS:
                self._unknown.report("a message field", key, "was ignored", out)
        kwargs = mapping(payload.get("additional_kwargs"))
        if kwargs:
            self._kwargs(kwargs, out)
        content = payload.get("content")
        if isinstance(content, str):
            if content:
                self._text(content, out)
        elif content is not None:
            self._blocks(content, out)
        self._calls(payload, mapping(kwargs.get(SIGNATURES)), out)
        usage = payload.get("usage_metadata")
        if isinstance(usage, Mapping) and usage:
            self._usage = _summed(self._usage, usage)
            out.append(usage_event(_summed({}, self._usage)))
        reason = _finish_reason(mapping(payload.get("response_metadata")))
        if reason is not None:
            self._end_reasoning(out)
            self._reason = reason
            out.append(finish_event(reason))
        return out

    # -- text and reasoning -----------------------------------------------------------------

    def _text(self, text: str, out: list[Item]) -> None:
        self._end_reasoning(out)
        out.append(text_delta(text))

    def _kwargs(self, kwargs: Mapping[str, Any], out: list[Item]) -> None:
        for key in kwargs:
            if key not in _KWARGS:
                self._unknown.report("an additional_kwargs key", key, "was ignored", out)
        content = kwargs.get("reasoning_content")
        if isinstance(content, str) and content:
            self._open("reasoning_content", None, out).add(content, out)
        reasoning = kwargs.get("reasoning")
        if isinstance(reasoning, Mapping):
            self._reasoning_block("reasoning", reasoning, out)
        elif isinstance(reasoning, str) and reasoning:
            self._open("reasoning", None, out).add(reasoning, out)
        refusal = kwargs.get("refusal")
        if isinstance(refusal, str) and refusal:
            self._end_reasoning(out)
            out.append(RefusalDelta(text=refusal))

    def _blocks(self, content: object, out: list[Item]) -> None:
        if not isinstance(content, list):
            self._unknown.report("content of type", type(content).__name__, "was ignored", out)
            return
        for block in content:
            if isinstance(block, str):
                if block:
                    self._text(block, out)
            else:
                self._block(mapping(block), out)

    def _block(self, block: Mapping[str, Any], out: list[Item]) -> None:
        kind = block.get("type")
        if kind == "text" or (kind is None and "text" in block):  # untyped: older langchain-aws
            text = block.get("text")
            if isinstance(text, str) and text:
                self._text(text, out)
        elif kind is None and all(key == "index" for key in block):
            pass  # nothing but a block's index (a block's end, in langchain-aws)
        elif not isinstance(kind, str):
            self._unknown.report("a content block of type", kind, "was skipped", out)
        elif kind in ("thinking", "reasoning", "redacted_thinking"):
            self._reasoning_block(kind, block, out)
        elif kind == "reasoning_content":  # Bedrock Converse's: its text or signature nested
            nested = mapping(block.get("reasoning_content"))
            text, signature = nested.get("text"), nested.get("signature")
            piece = {"index": block.get("index"), "reasoning": text, "signature": signature}
            self._reasoning_block(kind, piece, out)
        elif kind == "refusal":
            refusal = block.get("refusal")
            self._end_reasoning(out)
            if isinstance(refusal, str) and refusal:
                out.append(RefusalDelta(text=refusal))
        elif kind not in _MIRRORED_BLOCKS:
            self._unknown.report("a content block of type", kind, "was skipped", out)

    def _reasoning_block(self, kind: str, block: Mapping[str, Any], out: list[Item]) -> None:
        """A ``thinking``, ``redacted_thinking`` or ``reasoning`` block (or a piece of one)."""
        reasoning = self._open(kind, block.get("index"), out)
        reasoning.add(block.get("thinking" if kind == "thinking" else "reasoning"), out)
        for part in map(mapping, _items(block.get("summary"))):
            position = part.get("index")
            reasoning.add(part.get("text"), out, position if type(position) is int else 0)
        for signature in (
            block.get("data" if kind == "redacted_thinking" else "signature"),
            mapping(block.get("extras")).get("signature"),
            block.get("encrypted_content"),
        ):
            reasoning.sign(signature, out)
        block_id = _text(block.get("id"))
        if block_id is not None:
            reasoning.id = block_id
        if kind == "redacted_thinking":
            self._end_reasoning(out)  # whole in one block: nothing more will come

    def _open(self, kind: str, index: object, out: list[Item]) -> _Reasoning:
        """The reasoning block of ``kind`` at content index ``index``: the one open, or a new
        one (the one open then ends)."""
        reasoning = self._reasoning
        if reasoning is not None and reasoning.key == (kind, index):
            return reasoning
        self._end_reasoning(out)
        bound = self.records.limits.max_reasoning_chars
        reasoning = self._reasoning = _Reasoning((kind, index), kind, bound)
        return reasoning

    def _end_reasoning(self, out: list[Item]) -> None:
        reasoning, self._reasoning = self._reasoning, None
        if reasoning is not None:
            block = reasoning.block()
            if block is not None:
                out.append(block)

    # -- calls ------------------------------------------------------------------------------

    def _calls(
        self, payload: Mapping[str, Any], signatures: Mapping[str, Any], out: list[Item]
    ) -> None:
        chunks = _items(payload.get("tool_call_chunks"))
        if not chunks:  # a whole message: its parsed calls (and those that did not parse)
            chunks = [_whole(call) for call in _items(payload.get("tool_calls"))]
            chunks += _items(payload.get("invalid_tool_calls"))
        if signatures:  # an earlier call's go before this chunk's fragments may complete it
            self._late_signatures(signatures, out)
        if chunks:
            self._end_reasoning(out)  # reasoning precedes the calls it led to
        for chunk in chunks:
            if isinstance(chunk, Mapping):
                self._chunk(chunk, signatures, out)
            else:
                self._unknown.report("a tool call chunk", type(chunk).__name__, "was skipped", out)

    def _chunk(
        self, chunk: Mapping[str, Any], signatures: Mapping[str, Any], out: list[Item]
    ) -> None:
        """One tool-call chunk: the delta (or fragment) of its call, and any warning."""
        name, call_id = _text(chunk.get("name")), _text(chunk.get("id"))
        args = chunk.get("args")
        fragment = args if isinstance(args, str) and args else None
        given = chunk.get("index")
        core, note = self._route(given, call_id, name)
        started = core not in self._cores
        self._cores.add(core)
        self._last = core
        new_id = call_id is not None and call_id not in self._by_id
        if call_id is not None and new_id:
            self._by_id[call_id] = core
            self._id_of.setdefault(core, call_id)
            self._sign(core, call_id, signatures.get(call_id), out)
        if started or name is not None or new_id:
            delta = Delta(index=core, id=call_id if new_id else None, name=name, arguments=fragment)
            out.append(delta)
        elif fragment is not None:
            out.append(arguments(core, fragment))
        if given is not None and not (type(given) is int and given >= 0):
            code = "quirk-index-negative" if type(given) is int else "quirk-index-invalid"
            note = (code, f"the chunk's index {given!r} is not an index: read as missing")
        if note is not None and (note[0], core) not in self._warned:
            self._warned.add((note[0], core))
            out.append(quirk_warning(note[0], note[1], index=core, call_id=call_id, name=name))

    def _route(
        self, given: object, call_id: str | None, name: str | None
    ) -> tuple[int, tuple[str, str] | None]:
        """The core index of a chunk's call, and the quirk (code, message) of that reading."""
        if type(given) is int and given >= 0:
            return self._indexed(given, call_id)
        if call_id is not None and call_id in self._by_id:
            core = self._by_id[call_id]
        elif name is not None or self._last is None:
            return self._free(), None  # a call's first chunk (LangChain never merges it)
        elif call_id is not None and self._last in self._id_of:
            return self._free(), None  # a new id, and the latest call has its own
        else:
            core = self._last  # (given the id, if it brings one)
        return core, ("quirk-index-missing", f"a chunk without index was read as call {core}'s")

    def _indexed(self, given: int, call_id: str | None) -> tuple[int, tuple[str, str] | None]:
        """The core index of a chunk with LangChain index ``given``, and the quirk."""
        core = self._by_index.get(given)
        if core is not None:
            known = self._id_of.get(core)
            if call_id is None or known is None or known == call_id:
                return core, None
            new = self._by_index[given] = self._free()  # as LangChain merges: another call
            message = f"index {given} is call {core}'s (id {known!r}); id {call_id!r} is call {new}"
            return new, ("quirk-index-reused", message)
        core = self._by_id.get(call_id) if call_id is not None else None
        if core is not None:  # a known id under a new index: still its call
            self._by_index[given] = core
            return core, None
        note = None
        if given in self._cores:
            core = self._free()
            note = ("quirk-index-moved", f"index {given} is taken by a call read without index")
        else:
            core = given
            self._next = max(self._next, given + 1)
        self._by_index[given] = core
        return core, note

    def _free(self) -> int:
        """The next free core index, taken."""
        core = self._next
        self._next += 1
        return core

    # -- Gemini's call signatures -----------------------------------------------------------

    def _sign(self, core: int, call_id: str, signature: object, out: list[Item]) -> None:
        """Hand call ``core`` its signature (before its first delta), if one came for it."""
        pending = self._pending.pop(call_id, None)
        given = signature if isinstance(signature, str) and signature else pending
        if given is not None and call_id not in self._signed:
            self._signed.add(call_id)
            out.append(CallNote(index=core, signature=given))

    def _late_signatures(self, signatures: Mapping[str, Any], out: list[Item]) -> None:
        """Signatures for calls already read: each handed on while its call is still open
        (else a warning: its ``ToolCall`` is out). Those of calls not read yet are kept for
        them (``_sign``), up to ``Limits.max_calls``."""
        for call_id, signature in signatures.items():
            if call_id in self._signed or not isinstance(signature, str) or not signature:
                continue
            core = self._by_id.get(call_id)
            if core is None:
                if len(self._pending) < self.records.limits.max_calls:
                    self._pending[call_id] = signature
                continue
            self._signed.add(call_id)
            record = self.records.record(core)
            if record is None or not record.state.is_final:
                out.append(CallNote(index=core, signature=signature))
            else:
                out.append(
                    quirk_warning(
                        "quirk-signature-late",
                        "the call's signature came after the call was complete; the ToolCall "
                        "does not carry it",
                        index=core,
                        call_id=call_id,
                    )
                )

    def close(self) -> list[Item]:
        out: list[Item] = []
        self._end_reasoning(out)
        out.append(Finish(ending_of(self._reason)))
        return out


def _whole(value: object) -> dict[str, Any]:
    """A parsed call of a whole message (``args`` an object) as a chunk of its JSON text."""
    call = mapping(value)
    args = call.get("args")
    text = args if isinstance(args, str) else compact_json({} if args is None else args)
    return {
        "name": call.get("name"),
        "id": call.get("id"),
        "index": call.get("index"),
        "args": text,
    }
