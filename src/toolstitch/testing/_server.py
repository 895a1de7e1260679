"""A small HTTP server on 127.0.0.1 that plays scripted replies, for offline tests.

It speaks just enough HTTP/1.1 for the official SDK clients (``openai``, ``anthropic``,
``google-genai``): one request per connection, ``Connection: close``, bodies by
``Content-Length`` (or chunked). Each ``POST`` takes the next ``Reply`` from the queue,
whatever its path among ``ROUTES`` (Chat Completions, Messages, Responses, each with or
without ``/v1``) and Gemini's ``/v1beta/models/{model}:streamGenerateContent`` (or
``:generateContent``, which gets the reply's JSON body); the request is recorded first.
A reply is a list of steps - bytes to send, ``Hold`` (wait for an event), ``Sleep`` - so a
test can keep the stream open until something has happened.

Two ways to run it: ``async with ScriptedServer(...)`` in the test's own event loop (holds
may then wait on an ``asyncio.Event``), or ``with ScriptedServer(...)`` in a background
thread (holds wait on a ``threading.Event``). Either way it listens on an ephemeral port,
serves at most ``max_requests`` requests and stops by itself after ``lifetime`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ._sse import named, split

__all__ = ["Hold", "RecordedRequest", "Reply", "ScriptedServer", "Sleep"]

ROUTES: Final = frozenset(
    {
        "/v1/chat/completions",
        "/chat/completions",
        "/v1/messages",
        "/messages",
        "/v1/responses",
        "/responses",
    }
)
#: Gemini's routes: ``/v1beta/models/{model}`` (or ``/v1``) then one of these methods.
GEMINI_METHODS: Final = (":streamGenerateContent", ":generateContent")
_GEMINI_PREFIXES: Final = ("/v1beta/models/", "/v1/models/")


def routed(path: str) -> bool:
    """Whether ``path`` is one the server answers."""
    if path in ROUTES:
        return True
    return path.startswith(_GEMINI_PREFIXES) and path.endswith(GEMINI_METHODS)


def streaming(path: str, body: Any) -> bool:
    """Whether the request asks for a stream: Gemini's by its method, the others unless the
    body says ``"stream": false`` (or is not a JSON object)."""
    if path.endswith(GEMINI_METHODS):
        return path.endswith(GEMINI_METHODS[0])
    return not isinstance(body, dict) or body.get("stream", False) is not False


_MAX_HEADERS: Final = 100
_MAX_BODY: Final = 16 * 1024 * 1024
_READ_TIMEOUT: Final = 10.0


@dataclass(frozen=True, slots=True)
class Hold:
    """Stop sending until ``until`` is set (an ``asyncio.Event`` of the server's loop, a
    ``threading.Event``, or a zero-argument callable returning an awaitable), at most
    ``timeout`` seconds. A hold that times out is recorded in ``ScriptedServer.timeouts``
    (with its ``label``) and the reply goes on."""

    until: Any
    timeout: float = 10.0
    label: str = ""


@dataclass(frozen=True, slots=True)
class Sleep:
    """Stop sending for ``seconds``."""

    seconds: float


Step = bytes | Hold | Sleep


@dataclass(slots=True)
class Reply:
    """One scripted HTTP response.

    ``steps`` are sent in order (bytes are written and flushed one step at a time; ``Hold``
    and ``Sleep`` pause). ``json_body``, when set, is what a request with ``"stream":
    false`` gets instead. ``status`` and ``content_type`` as in HTTP.
    """

    steps: list[Step] = field(default_factory=list)
    status: int = 200
    content_type: str = "text/event-stream"
    json_body: Any = None

    @classmethod
    def json(cls, body: Any, *, status: int = 200) -> Reply:
        """A plain JSON response (e.g. an error: ``Reply.json({...}, status=500)``)."""
        data = json.dumps(body).encode()
        return cls(steps=[data], status=status, content_type="application/json", json_body=body)

    @classmethod
    def sse(
        cls,
        source: str | bytes | Path,
        *,
        holds: dict[int, Any] | None = None,
        event_names: bool = False,
    ) -> Reply:
        """Play a recorded SSE stream (a ``.sse`` file, or its text), one SSE message per
        step. ``holds`` maps a message count to a hold: ``{2: event}`` waits for ``event``
        after the first two messages (the value may be a ``Hold``, a ``Sleep``, or what
        ``Hold.until`` takes). ``event_names=True`` adds ``event: <type>`` to messages
        that lack an ``event:`` line (the ``anthropic`` SDK skips unnamed events, and some
        recordings drop the names)."""
        if isinstance(source, Path):
            data = source.read_bytes()
        elif isinstance(source, str):
            data = source.encode()
        else:
            data = source
        events = split(data)
        if event_names:
            events = [named(event) for event in events]
        pauses = holds or {}
        steps: list[Step] = []
        for count in range(len(events) + 1):
            if count in pauses:
                steps.append(_pause(pauses[count]))
            if count < len(events):
                steps.append(events[count])
        return cls(steps=steps)


def _pause(value: Any) -> Step:
    """A ``holds`` value as a step: a ``Hold`` or ``Sleep`` as it is, else what to hold for."""
    return value if isinstance(value, (Hold, Sleep)) else Hold(value)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request the server received. ``json`` is the body decoded (``None`` if it was
    not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any


_REASONS: Final = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests"}


class ScriptedServer:
    """Plays ``replies`` (``Reply`` objects, in order) to the requests it receives.

    ``url`` is ``http://127.0.0.1:PORT``; ``openai_base_url`` (``url + "/v1"``, for Chat
    Completions and Responses), ``anthropic_base_url`` and ``gemini_base_url`` (``url``;
    ``genai.Client(http_options={"base_url": ...})``) are what the SDK clients take.
    ``requests`` lists the requests received, ``log`` what was sent and held (``(seconds,
    text)``), ``timeouts`` the labels of holds that timed out. A request with no reply left
    gets a 500 error.
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        max_requests: int = 64,
        lifetime: float = 60.0,
    ) -> None:
        self.replies: deque[Reply] = deque(replies)
        self.max_requests = max_requests
        self.lifetime = lifetime
        self.requests: list[RecordedRequest] = []
        self.log: list[tuple[float, str]] = []
        self.timeouts: list[str] = []
        self.port = 0
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._served = 0
        self._started = time.monotonic()
        self._expiry: asyncio.TimerHandle | None = None

    # -- addresses -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    @property
    def gemini_base_url(self) -> str:
        return self.url

    def add(self, *replies: Reply) -> None:
        """Queue more replies."""
        self.replies.extend(replies)

    def note(self, text: str) -> None:
        self.log.append((time.monotonic() - self._started, text))

    # -- running in the caller's loop ------------------------------------------------------

    async def start(self) -> None:
        """Listen (in the running loop)."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self._expiry = asyncio.get_running_loop().call_later(self.lifetime, self._expire)
        self._started = time.monotonic()

    def _expire(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()

    async def stop(self) -> None:
        """Stop listening and end every connection still open."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        server, self._server = self._server, None
        if server is not None:
            server.close()
        handlers = list(self._handlers)
        for task in handlers:
            task.cancel()
        if handlers:
            await asyncio.gather(*handlers, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    async def __aenter__(self) -> ScriptedServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- running in a thread ---------------------------------------------------------------

    def __enter__(self) -> ScriptedServer:
        ready = threading.Event()
        failure: list[BaseException] = []

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            try:
                await self.start()
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                return
            ready.set()
            try:
                await asyncio.wait_for(self._stop.wait(), self.lifetime)
            except asyncio.TimeoutError:
                pass
            finally:
                await self.stop()

        self._thread = threading.Thread(
            target=asyncio.run, args=(main(),), name="toolstitch-scripted-server", daemon=True
        )
        self._thread.start()
        if not ready.wait(10.0):
            raise RuntimeError("the scripted server did not start")
        if failure:
            raise failure[0]
        return self

    def __exit__(self, *exc_info: object) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(10.0)
            self._thread = None

    # -- HTTP ------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await asyncio.wait_for(reader.readline(), _READ_TIMEOUT)
        if not line:
            return
        method, _, rest = line.decode("latin-1").strip().partition(" ")
        target = rest.rsplit(" ", 1)[0]
        path = target.split("?", 1)[0]
        headers: dict[str, str] = {}
        for _ in range(_MAX_HEADERS):
            raw = await asyncio.wait_for(reader.readline(), _READ_TIMEOUT)
            text = raw.decode("latin-1").strip()
            if not text:
                break
            name, _, value = text.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await self._body(reader, headers)
        try:
            decoded = json.loads(body) if body else None
        except ValueError:
            decoded = None
        self._served += 1
        if self._served > self.max_requests:
            await self._send_json(writer, 429, {"error": {"message": "too many requests"}})
            return
        self.requests.append(RecordedRequest(method, path, headers, body, decoded))
        self.note(f"request {len(self.requests)}: {method} {path}")
        if method != "POST" or not routed(path):
            await self._send_json(writer, 404, {"error": {"message": f"no route {path}"}})
            return
        if not self.replies:
            await self._send_json(
                writer, 500, {"error": {"message": "the scripted server has no reply left"}}
            )
            return
        reply = self.replies.popleft()
        if not streaming(path, decoded) and reply.json_body is not None:
            await self._send_json(writer, reply.status, reply.json_body)
            return
        await self._play(writer, reply)

    async def _body(self, reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            total = 0
            while True:
                size_line = await asyncio.wait_for(reader.readline(), _READ_TIMEOUT)
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    await asyncio.wait_for(reader.readline(), _READ_TIMEOUT)
                    return b"".join(chunks)
                total += size
                if total > _MAX_BODY:
                    raise ValueError("request body too large")
                chunks.append(await asyncio.wait_for(reader.readexactly(size), _READ_TIMEOUT))
                await asyncio.wait_for(reader.readline(), _READ_TIMEOUT)
        length = int(headers.get("content-length", "0") or "0")
        if length > _MAX_BODY:
            raise ValueError("request body too large")
        return await asyncio.wait_for(reader.readexactly(length), _READ_TIMEOUT) if length else b""

    @staticmethod
    def _head(status: int, content_type: str, length: int | None = None) -> bytes:
        lines = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
            f"Content-Type: {content_type}",
            "Cache-Control: no-cache",
            "Connection: close",
        ]
        if length is not None:
            lines.append(f"Content-Length: {length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _send_json(self, writer: asyncio.StreamWriter, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        writer.write(self._head(status, "application/json", len(data)) + data)
        await writer.drain()

    async def _play(self, writer: asyncio.StreamWriter, reply: Reply) -> None:
        if reply.content_type != "text/event-stream":
            data = b"".join(s for s in reply.steps if isinstance(s, bytes))
            writer.write(self._head(reply.status, reply.content_type, len(data)) + data)
            await writer.drain()
            return
        writer.write(self._head(reply.status, reply.content_type))
        await writer.drain()
        number = len(self.requests)
        for step in reply.steps:
            if isinstance(step, bytes):
                writer.write(step)
                await writer.drain()
            elif isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, Hold):
                label = step.label or "hold"
                self.note(f"reply {number}: {label}: waiting")
                if await _wait(step.until, step.timeout):
                    self.note(f"reply {number}: {label}: released")
                else:
                    self.timeouts.append(label)
                    self.note(f"reply {number}: {label}: timed out")
        self.note(f"reply {number}: sent")


async def _wait(until: Any, timeout: float) -> bool:
    """Wait for ``until``; false if ``timeout`` passed first."""
    if isinstance(until, asyncio.Event):
        waiter: Awaitable[Any] = until.wait()
    elif isinstance(until, threading.Event):
        waiter = _poll(until)
    elif callable(until):
        factory: Callable[[], Awaitable[Any]] = until
        waiter = factory()
    else:
        raise TypeError(f"cannot wait for a {type(until).__name__}")
    try:
        await asyncio.wait_for(waiter, timeout)
    except asyncio.TimeoutError:
        return False
    return True


async def _poll(event: threading.Event) -> None:
    while not event.is_set():
        await asyncio.sleep(0.001)
