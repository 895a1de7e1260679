"""The entry point: a provider stream in, events and a result out.

Theory of operation
-------------------
``Stitcher`` is the sans-I/O engine. Feed it what you have, in order - the response body's
bytes in any chunking, or the stream's events as dicts or as the official SDK's objects -
and it returns the events each piece caused; ``close()`` ends the stream. Underneath, bytes
go through a stream decoder (``SSEDecoder``, or ``JSONArrayDecoder`` when the body starts
with ``[``: Gemini without ``alt=sse``), each decoded event goes to the provider's adapter
(detected from the first events that only one provider sends, unless named), which returns
items: deltas, instructions (``EndCall``, ``Finish``, and ``ServerDelta``/``ServerEnd`` for
calls the provider runs itself) and stream-level events. The ``Stitcher`` drives: it applies
each delta and instruction to its ``Assembler`` as it comes (server calls to a second one it
owns, whose outcomes become ``ServerToolCall`` events) and passes the events through, in
order. ``result`` is a ``StitchResult`` summarising everything so far.

``stitch`` and ``astitch`` drive a ``Stitcher`` over an iterable (or async iterable)
source and yield the events one by one; their ``result`` is there at the end::

    run = stitch(response.iter_bytes())
    for event in run:
        if isinstance(event, CallReady):
            dispatch(event.call)
    print(run.result.finish_reason)
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass, field
from typing import Any, Final

from toolstitch.adapters import ADAPTERS, PROVIDERS, Adapter, as_mapping, detect
from toolstitch.adapters._base import provider_error
from toolstitch.adapters.openai_chat import sdk_chunk
from toolstitch.core.assembler import Assembler
from toolstitch.core.ids import IdFactory
from toolstitch.decode.jsonarray import JSONArrayDecoder
from toolstitch.decode.sse import SSEDecoder
from toolstitch.json.lexicon import WHITESPACE_BYTES
from toolstitch.stitch.driver import Driver
from toolstitch.vocab.call_events import (
    ArgumentsDelta,
    CallDiscarded,
    CallReady,
    CallSnapshot,
    CallStarted,
    CallWarning,
    Event,
    ToolCall,
)
from toolstitch.vocab.errors import StreamDecodeError, StreamError
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningDelta,
    ServerToolCall,
    StreamFailed,
    StreamWarning,
    TextDelta,
    Usage,
)

__all__ = ["AsyncStitch", "IdFactory", "Stitch", "StitchResult", "Stitcher", "astitch", "stitch"]

#: Events buffered while the provider is still unknown; past this, the stream is not one of
#: the known formats.
MAX_UNDETECTED_EVENTS: Final = 64

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True, kw_only=True)
class StitchResult:
    """What one stream produced.

    ``calls`` are the complete calls in stream order (the order they started); ``discarded``
    the calls that can never be valid, each with its ``error``; ``warnings`` every
    ``CallWarning`` and ``StreamWarning``; ``server_calls`` the calls the provider ran itself
    (never to dispatch); ``stream_error`` the first error of the stream as a whole (an error
    event sent by the provider, or bytes that are not the format); ``text`` and ``reasoning``
    the concatenated text deltas; ``finish_reason`` the first finish reason the provider gave;
    ``usage`` the provider's usage objects merged in arrival order; ``events`` and ``bytes``
    how many provider events and bytes were read; ``finished`` whether the stream was closed.
    """

    provider: str | None
    calls: tuple[ToolCall, ...] = ()
    discarded: tuple[CallDiscarded, ...] = ()
    warnings: tuple[CallWarning | StreamWarning, ...] = ()
    server_calls: tuple[ServerToolCall, ...] = ()
    stream_error: StreamError | None = None
    text: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    usage: dict[str, Any] | None = field(default=None, hash=False)
    events: int = 0
    bytes: int = 0
    finished: bool = False


def _check_provider(provider: str) -> str:
    if provider != "auto" and provider not in ADAPTERS:
        raise ValueError(
            f"unknown provider {provider!r}: use 'auto' or one of {', '.join(PROVIDERS)}"
        )
    return provider


def _is_error(payload: Mapping[str, Any], event: str | None) -> bool:
    return (
        event == "error"
        or payload.get("type") == "error"
        or (payload.get("error") is not None and len(payload) <= 2)
    )


class Stitcher:
    """The sans-I/O engine behind ``stitch``: feed bytes or events, get events back.

    ``provider`` is ``"auto"`` (detect it from the first events) or one of
    ``"openai-chat"``, ``"openai-responses"``, ``"anthropic"``, ``"gemini"``. ``choice``
    selects the choice (OpenAI Chat) or candidate (Gemini) to follow when the response has
    several. ``limits``, ``empty_arguments``, ``tools``, ``on_schema_violation``,
    ``watch_strings`` and ``partial_arguments`` go to the ``Assembler`` as they are, with the
    same meaning and the same events: with ``tools`` (an OpenAI tools list, Chat or
    Responses, Anthropic tools, Gemini function declarations, or a mapping name → JSON
    Schema) an unknown tool is discarded with ``UnknownTool`` at the delta that made it
    certain and the arguments are checked against the tool's schema as they stream
    (``SchemaViolation``: a discard, or a ``CallWarning`` with ``on_schema_violation="warn"``);
    ``watch_strings`` streams ``ArgumentsValue`` events; ``calls`` then carries
    ``partial_arguments``. See docs/schema.md. ``id_factory(index, position) -> str``, also
    the ``Assembler``'s, makes the ids of calls that arrive without one (see docs/concepts.md).

    ``feed`` takes either bytes (``bytes``, ``bytearray``, ``memoryview``, or ``str`` text)
    or one event (a mapping, or an SDK object with ``model_dump``/``to_dict``), never both
    kinds in one stream. A stream that turns out not to be any known format raises
    ``StreamDecodeError`` (from ``feed`` once that is certain, else from ``close``); after
    the format is known, bad bytes and error events become ``StreamFailed`` events instead.
    """

    def __init__(
        self,
        provider: str = "auto",
        *,
        limits: Limits | None = None,
        choice: int = 0,
        empty_arguments: str = "{}",
        tools: object = None,
        on_schema_violation: str = "discard",
        watch_strings: Mapping[str, Iterable[str]] | None = None,
        partial_arguments: bool | None = None,
        id_factory: IdFactory | None = None,
    ) -> None:
        self.assembler = Assembler(
            limits=limits,
            empty_arguments=empty_arguments,
            tools=tools,
            on_schema_violation=on_schema_violation,
            watch_strings=watch_strings,
            partial_arguments=partial_arguments,
            id_factory=id_factory,
        )
        self.choice = choice
        _check_provider(provider)
        self.adapter: Adapter | None = None
        if provider != "auto":
            self.adapter = self._adapter(provider)
        self._drive = Driver(self.assembler).drive
        #: Provider events read so far (SSE messages, JSON array elements or fed objects).
        self.events_read = 0
        #: Bytes fed so far (0 when fed events).
        self.bytes_read = 0
        self._mode: str | None = None  # "bytes" or "events"
        self._head = b""  # leading bytes kept until the framing is known
        self._sse: SSEDecoder | None = None
        self._array: JSONArrayDecoder | None = None
        self._dead = False  # a decoder failed: later bytes are ignored
        self._queue: list[tuple[Mapping[str, Any], str | None]] = []
        self._closed = False
        self._verified = False  # a named provider was confirmed by the events
        self._understood = False  # some event meant something (see ``_not_understood``)
        self._mismatch = False  # ... or contradicted by them
        # The result so far.
        self._order: dict[int, int] = {}
        self._calls: dict[int, ToolCall] = {}
        self._discarded: list[CallDiscarded] = []
        self._warnings: list[CallWarning | StreamWarning] = []
        self._server: list[ServerToolCall] = []
        self._stream_error: StreamError | None = None
        self._errors = 0
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None

    # -- public -----------------------------------------------------------------------------

    @property
    def provider(self) -> str | None:
        """The provider id, once named or detected."""
        return None if self.adapter is None else self.adapter.name

    @property
    def calls(self) -> tuple[CallSnapshot, ...]:
        """Snapshots of every client call so far (the assembler's view)."""
        return self.assembler.calls

    @property
    def result(self) -> StitchResult:
        """Everything so far; final once ``close`` has been called."""
        order = self._order
        calls = sorted(self._calls.values(), key=lambda c: order.get(c.index, c.index))
        return StitchResult(
            provider=self.provider,
            calls=tuple(calls),
            discarded=tuple(self._discarded),
            warnings=tuple(self._warnings),
            server_calls=tuple(self._server),
            stream_error=self._stream_error,
            text="".join(self._text),
            reasoning="".join(self._reasoning),
            finish_reason=self._finish,
            usage=None if self._usage is None else dict(self._usage),
            events=self.events_read,
            bytes=self.bytes_read,
            finished=self._closed,
        )

    def feed(self, data: object) -> list[Event]:
        """Take the next piece of the stream (bytes, or one event); return its events."""
        if self._closed:
            raise RuntimeError("Stitcher.feed() called after close()")
        if type(data) is dict and self._mode == "events":  # the common case, directly
            self.events_read += 1
            return self._observe(self._payload(data, None))
        if isinstance(data, (bytes, bytearray, memoryview, str)):
            self._set_mode("bytes")
            chunk = data.encode() if isinstance(data, str) else bytes(data)
            return self._observe(self._bytes(chunk))
        self._set_mode("events")
        data = sdk_chunk(data)  # the openai SDK's helper stream: its chunks, not its repeats
        if data is None:
            self.events_read += 1
            return []
        payload = as_mapping(data)
        if payload is None:
            raise TypeError(
                f"cannot read a {type(data).__name__} as a stream event: give bytes, a mapping, "
                "or an SDK object with model_dump()/to_dict()"
            )
        self.events_read += 1
        return self._observe(self._payload(payload, None))

    def close(self) -> list[Event]:
        """The stream ended: flush the decoder, resolve every open call. Idempotent."""
        if self._closed:
            return []
        out: list[Event] = []
        if self._mode == "bytes" and not self._dead:
            if self._sse is None and self._array is None and self._head.strip(WHITESPACE_BYTES):
                self._frame(b"", out)
            try:
                if self._sse is not None:
                    for message in self._sse.close():
                        self._message(message.event, message.data, message.is_done, out)
                elif self._array is not None:
                    for element in self._array.close():
                        self._element(element, out)
            except StreamDecodeError as exc:
                self._decode_failed(exc, out)
        if self.adapter is None:
            if self._errors:
                self._closed = True
                return self._observe(out)
            what = (
                "no stream events at all"
                if not self.events_read
                else (f"none of its {self.events_read} events belongs to a known provider")
            )
            raise StreamDecodeError(
                f"cannot tell the stream format: {what} (known: {', '.join(PROVIDERS)})"
            )
        self._drive(self.adapter.close(), out)
        self._closed = True
        self._observe(out)
        if not self._understood and self.events_read and not self._errors:
            out.append(self._not_understood())
            self._observe(out[-1:])
        return out

    def _not_understood(self) -> StreamFailed:
        """The stream error for a stream of which nothing at all was understood."""
        return StreamFailed(
            error=StreamDecodeError(
                f"nothing in the stream was understood as {self.provider}: none of its "
                f"{self.events_read} events is part of that protocol (no call, text, finish "
                "reason or usage); is it another provider's stream?"
            )
        )

    # -- bytes ------------------------------------------------------------------------------

    def _set_mode(self, mode: str) -> None:
        if self._mode is None:
            self._mode = mode
        elif self._mode != mode:
            raise TypeError("a stream is fed either bytes or events, not both")

    def _bytes(self, chunk: bytes) -> list[Event]:
        self.bytes_read += len(chunk)
        out: list[Event] = []
        if self._dead or not chunk:
            return out
        if self._sse is None and self._array is None:
            self._head += chunk
            head = self._head
            if len(head) < len(_BOM) and _BOM.startswith(head):
                return out  # maybe a BOM, split
            body = head[len(_BOM) :] if head.startswith(_BOM) else head
            if body.strip(WHITESPACE_BYTES):
                self._frame(b"", out)
            return out
        self._decode(chunk, out)
        return out

    def _frame(self, chunk: bytes, out: list[Event]) -> None:
        """Pick the framing from the first significant byte, then decode what was kept."""
        head, self._head = self._head + chunk, b""
        body = head[len(_BOM) :] if head.startswith(_BOM) else head
        if body.lstrip(WHITESPACE_BYTES).startswith(b"["):
            self._array = JSONArrayDecoder()
            head = body
        else:
            self._sse = SSEDecoder()
        self._decode(head, out)

    def _decode(self, chunk: bytes, out: list[Event]) -> None:
        try:
            if self._sse is not None:
                for message in self._sse.feed(chunk):
                    self._message(message.event, message.data, message.is_done, out)
            elif self._array is not None:
                for element in self._array.feed(chunk):
                    self._element(element, out)
        except StreamDecodeError as exc:
            self._decode_failed(exc, out)

    def _decode_failed(self, exc: StreamDecodeError, out: list[Event]) -> None:
        self._dead = True
        if (self.adapter is None and not self._errors) or self._mismatch:
            raise exc
        out.append(StreamFailed(error=exc))

    def _message(self, event: str, data: str, done: bool, out: list[Event]) -> None:
        self.events_read += 1
        if done or not data.strip():
            self._understood = self._understood or done  # ``[DONE]`` is the protocol's
            return
        try:
            payload = json.loads(data)
        except ValueError as exc:
            self._bad_event(f"event {self.events_read}: the data is not JSON ({exc})", out)
            return
        if not isinstance(payload, dict):
            self._bad_event(f"event {self.events_read}: the data is not a JSON object", out)
            return
        out.extend(self._payload(payload, None if event == "message" else event))

    def _element(self, element: object, out: list[Event]) -> None:
        self.events_read += 1
        if not isinstance(element, dict):
            self._bad_event(f"array element {self.events_read} is not a JSON object", out)
            return
        out.extend(self._payload(element, None))

    def _bad_event(self, message: str, out: list[Event]) -> None:
        error = StreamDecodeError(message)
        if self.adapter is None and not self._errors:
            raise error
        out.append(StreamFailed(error=error))

    # -- events -----------------------------------------------------------------------------

    def _payload(self, payload: Mapping[str, Any], event: str | None) -> list[Event]:
        if self.adapter is not None:
            if not self._verified:
                found = detect(payload, event)
                if found is not None:
                    self._verified = self._understood = True
                    if found != self.adapter.name:
                        self._mismatch = True
                        raise StreamDecodeError(
                            f"the stream is {found}, not {self.adapter.name} "
                            f"(event {self.events_read})"
                        )
            out: list[Event] = []
            self._drive(self.adapter.feed(payload, event=event), out)
            return out
        provider = detect(payload, event)
        if provider is None:
            if _is_error(payload, event):
                error = payload.get("error", payload)
                return [provider_error(error if error is not None else payload)]
            self._queue.append((payload, event))
            if len(self._queue) > MAX_UNDETECTED_EVENTS:
                raise StreamDecodeError(
                    f"cannot tell the stream format: the first {len(self._queue)} events "
                    f"belong to no known provider (known: {', '.join(PROVIDERS)})"
                )
            return []
        adapter = self.adapter = self._adapter(provider)
        self._understood = True
        out = []
        queued, self._queue = self._queue, []
        for item, name in queued:
            self._drive(adapter.feed(item, event=name), out)
        self._drive(adapter.feed(payload, event=event), out)
        return out

    def _adapter(self, provider: str) -> Adapter:
        return ADAPTERS[provider](choice=self.choice, records=self.assembler)

    def _observe(self, events: list[Event]) -> list[Event]:
        if events and not self._understood:
            # Anything but a warning says the adapter understood an event.
            self._understood = any(type(e) is not StreamWarning for e in events)
        for event in events:
            if type(event) is ArgumentsDelta:
                continue  # the most frequent event, and nothing to note in the result
            if isinstance(event, TextDelta):
                self._text.append(event.text)
            elif isinstance(event, CallStarted):
                self._order.setdefault(event.index, len(self._order))
            elif isinstance(event, CallReady):
                self._calls[event.call.index] = event.call
            elif isinstance(event, (CallWarning, StreamWarning)):
                self._warnings.append(event)
            elif isinstance(event, CallDiscarded):
                self._discarded.append(event)
                self._order.pop(event.index, None)  # never a call: its place is not needed
            elif isinstance(event, ReasoningDelta):
                self._reasoning.append(event.text)
            elif isinstance(event, FinishReason):
                if self._finish is None:
                    self._finish = event.reason
            elif isinstance(event, Usage):
                if self._usage is None:
                    self._usage = {}
                self._usage.update(event.usage)
            elif isinstance(event, ServerToolCall):
                self._server.append(event)
            elif isinstance(event, StreamFailed):
                self._errors += 1
                if self._stream_error is None:
                    self._stream_error = event.error
        return events


# -- drivers ----------------------------------------------------------------------------------


def _is_manager(source: object, enter: str, exit: str) -> bool:
    """A context manager that is not itself the stream (an SDK's stream manager)."""
    kind = type(source)
    return callable(getattr(kind, enter, None)) and callable(getattr(kind, exit, None))


def _sync_chunks(source: object) -> Iterator[object]:
    """The pieces of a sync source. A stream manager (the ``openai`` SDK's
    ``chat.completions.stream(...)``, the ``anthropic`` SDK's ``messages.stream(...)``: a
    context manager that is not iterable) is entered here and exited when the stream ends,
    or when this generator is closed or collected (``Stitch.close``, an abandoned run): its
    connection is never left open."""
    if isinstance(source, (bytes, bytearray, memoryview, str)):
        yield source
        return
    if isinstance(source, Iterable):
        yield from source
        return
    iter_bytes = getattr(source, "iter_bytes", None)
    if callable(iter_bytes):
        yield from iter_bytes()
        return
    if _is_manager(source, "__enter__", "__exit__"):
        with source as stream:  # type: ignore[attr-defined]
            yield from _sync_chunks(stream)
        return
    raise TypeError(
        f"stitch() needs bytes or an iterable of bytes or events, got {type(source).__name__}"
    )


async def _managed_chunks(manager: Any) -> AsyncIterator[object]:
    """The pieces of an async stream manager (``AsyncChatCompletionStreamManager``,
    ``AsyncMessageStreamManager``), entered here and exited when the stream ends, or when
    this generator is closed (``AsyncStitch.aclose``) or finalised by the event loop."""
    async with manager as stream:
        if isinstance(stream, AsyncIterable):
            async for item in stream:
                yield item
        else:
            for item in _sync_chunks(stream):
                yield item


class _Run:
    """What ``Stitch`` and ``AsyncStitch`` share: a ``Stitcher`` over a source, the events
    it produced that were not handed out yet, and the figures read so far."""

    def __init__(
        self,
        source: object,
        provider: str = "auto",
        *,
        limits: Limits | None = None,
        choice: int = 0,
        empty_arguments: str = "{}",
        tools: object = None,
        on_schema_violation: str = "discard",
        watch_strings: Mapping[str, Iterable[str]] | None = None,
        partial_arguments: bool | None = None,
        id_factory: IdFactory | None = None,
    ) -> None:
        self.stitcher = Stitcher(
            provider,
            limits=limits,
            choice=choice,
            empty_arguments=empty_arguments,
            tools=tools,
            on_schema_violation=on_schema_violation,
            watch_strings=watch_strings,
            partial_arguments=partial_arguments,
            id_factory=id_factory,
        )
        self._source = source
        self._pending: deque[Event] = deque()
        self._done = False

    def _take(self, item: object | None, *, end: bool = False) -> None:
        """Feed one piece of the source (or its end) and keep the events it caused."""
        if end:
            self._done = True
            self._pending.extend(self.stitcher.close())
        else:
            self._pending.extend(self.stitcher.feed(item))

    @property
    def provider(self) -> str | None:
        return self.stitcher.provider

    @property
    def events_read(self) -> int:
        return self.stitcher.events_read

    @property
    def bytes_read(self) -> int:
        return self.stitcher.bytes_read


class Stitch(_Run, Iterator[Event]):
    """Iterate a stream's events; ``result`` holds the outcome (see ``stitch``)."""

    _chunks: Iterator[object] | None = None

    def __iter__(self) -> Stitch:
        return self

    def __next__(self) -> Event:
        pending = self._pending
        while not pending:
            if self._done:
                raise StopIteration
            self._pull()
        return pending.popleft()

    def _pull(self) -> None:
        if self._chunks is None:
            self._chunks = _sync_chunks(self._source)
        try:
            item = next(self._chunks)
        except StopIteration:
            self._take(None, end=True)
            return
        self._take(item)

    def close(self) -> None:
        """Stop reading the source and release it (a stream manager that ``stitch`` entered
        is exited, so its connection closes). What was read stays: ``result`` then ends the
        stream there (calls still open are resolved as at any end). Idempotent."""
        chunks, self._chunks = self._chunks, iter(())
        if isinstance(chunks, Generator):
            chunks.close()

    def __enter__(self) -> Stitch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def result(self) -> StitchResult:
        """The outcome. Reading it consumes whatever of the stream is left."""
        for _ in self:
            pass
        return self.stitcher.result

    def collect(self) -> StitchResult:
        """Consume the rest of the stream and return the outcome."""
        return self.result


class AsyncStitch(_Run, AsyncIterator[Event]):
    """The async twin of ``Stitch`` (see ``astitch``)."""

    _aiter: AsyncIterator[object] | None = None
    _iter: Iterator[object] | None = None

    def __aiter__(self) -> AsyncStitch:
        return self

    async def __anext__(self) -> Event:
        pending = self._pending
        while not pending:
            if self._done:
                raise StopAsyncIteration
            await self._pull()
        return pending.popleft()

    async def _pull(self) -> None:
        item: object
        if self._aiter is None and self._iter is None:
            source = self._source
            if isinstance(source, AsyncIterable):
                self._aiter = source.__aiter__()
            elif callable(getattr(source, "aiter_bytes", None)):
                self._aiter = source.aiter_bytes().__aiter__()  # type: ignore[attr-defined]
            elif not isinstance(source, Iterable) and _is_manager(
                source, "__aenter__", "__aexit__"
            ):
                self._aiter = _managed_chunks(source)
            else:
                self._iter = _sync_chunks(source)
        try:
            if self._aiter is not None:
                item = await self._aiter.__anext__()
            else:
                assert self._iter is not None
                item = next(self._iter)
        except (StopAsyncIteration, StopIteration):
            self._take(None, end=True)
            return
        self._take(item)

    async def aclose(self) -> None:
        """Stop reading the source and release it (a stream manager that ``astitch``
        entered is exited, so its connection closes; a sync source is closed as ``Stitch``
        closes it). What was read stays: ``await collect()`` then ends the stream there.
        Idempotent."""
        aiter, self._aiter = self._aiter, None
        chunks, self._iter = self._iter, iter(())
        if isinstance(aiter, AsyncGenerator):
            await aiter.aclose()
        if isinstance(chunks, Generator):
            chunks.close()

    async def __aenter__(self) -> AsyncStitch:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def result(self) -> StitchResult:
        """The outcome, once the iteration has ended (``await collect()`` gets there)."""
        if not self._done or self._pending:
            raise RuntimeError(
                "the stream has not been read to the end: iterate it, or await collect()"
            )
        return self.stitcher.result

    async def collect(self) -> StitchResult:
        """Consume the rest of the stream and return the outcome."""
        async for _ in self:
            pass
        return self.stitcher.result


def stitch(
    source: object,
    provider: str = "auto",
    *,
    limits: Limits | None = None,
    choice: int = 0,
    empty_arguments: str = "{}",
    tools: object = None,
    on_schema_violation: str = "discard",
    watch_strings: Mapping[str, Iterable[str]] | None = None,
    partial_arguments: bool | None = None,
    id_factory: IdFactory | None = None,
) -> Stitch:
    """Reassemble the tool calls of one streamed response; iterate it for the events.

    ``source`` is the response body (``bytes``), an iterable of byte chunks (e.g.
    ``httpx.Response.iter_bytes()``, a file opened in binary mode), an iterable of stream
    events as dicts or SDK objects (e.g. an ``openai`` ``Stream``, an ``anthropic``
    ``MessageStream``, ``google-genai``'s ``generate_content_stream``), or an object with
    ``iter_bytes()``. ``provider`` is ``"auto"`` or one of ``"openai-chat"``,
    ``"openai-responses"``, ``"anthropic"``, ``"gemini"``. The keywords are ``Stitcher``'s:
    ``limits``, ``choice``, ``empty_arguments``, and the declared-tool options ``tools``,
    ``on_schema_violation``, ``watch_strings``, ``partial_arguments`` (as ``Assembler`` takes
    them; see docs/schema.md), and ``id_factory``, the caller's ids for calls without one.

    ``source`` may also be a stream *manager*, the ``openai`` SDK's
    ``client.chat.completions.stream(...)`` or the ``anthropic`` SDK's
    ``client.messages.stream(...)``: ``stitch`` enters it, reads the stream (the openai
    helper stream's ``chunk`` events; the events that repeat them are skipped) and exits it
    when the stream ends, on ``close()`` (or leaving ``with stitch(...) as run:``), or when
    the run is abandoned, so its connection is always released.

    Iterating yields every event as it becomes true: the core's call events (``CallStarted``,
    ``ArgumentsDelta``, ``ArgumentsValue``, ``CallReady``, ``CallDiscarded``, ``CallWarning``)
    and the stream events (``TextDelta``, ``ReasoningDelta``, ``FinishReason``, ``Usage``,
    ``ServerToolCall``, ``StreamFailed``, ``StreamWarning``). ``.result`` is the
    ``StitchResult`` (reading it first consumes the stream)::

        run = stitch(body)
        for event in run:
            ...
        run.result.calls
    """
    return Stitch(
        source,
        provider,
        limits=limits,
        choice=choice,
        empty_arguments=empty_arguments,
        tools=tools,
        on_schema_violation=on_schema_violation,
        watch_strings=watch_strings,
        partial_arguments=partial_arguments,
        id_factory=id_factory,
    )


def astitch(
    source: object,
    provider: str = "auto",
    *,
    limits: Limits | None = None,
    choice: int = 0,
    empty_arguments: str = "{}",
    tools: object = None,
    on_schema_violation: str = "discard",
    watch_strings: Mapping[str, Iterable[str]] | None = None,
    partial_arguments: bool | None = None,
    id_factory: IdFactory | None = None,
) -> AsyncStitch:
    """The async twin of ``stitch``: ``source`` may also be an async iterable (e.g.
    ``httpx.Response.aiter_bytes()``, an ``openai`` ``AsyncStream``) or an async stream
    manager (``AsyncOpenAI().chat.completions.stream(...)``,
    ``AsyncAnthropic().messages.stream(...)``), entered and exited as ``stitch`` does (on
    ``await run.aclose()``, ``async with astitch(...) as run:``, or the loop's finaliser
    for an abandoned run)::

        run = astitch(response.aiter_bytes())
        async for event in run:
            ...
        run.result.calls
    """
    return AsyncStitch(
        source,
        provider,
        limits=limits,
        choice=choice,
        empty_arguments=empty_arguments,
        tools=tools,
        on_schema_violation=on_schema_violation,
        watch_strings=watch_strings,
        partial_arguments=partial_arguments,
        id_factory=id_factory,
    )
