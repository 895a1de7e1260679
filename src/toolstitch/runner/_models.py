"""Models: one small protocol, and implementations over the official SDK clients.

A model streams one response: ``stream(messages, tools, **options)`` is an async iterator
of the provider's stream events (SDK objects or dicts), which the runner feeds to a
``Stitcher``. ``provider`` names the stream format (``"openai-chat"``,
``"openai-responses"``, ``"anthropic"``, ``"gemini"`` or ``"auto"``). The runner asks for a
response without tools with ``tool_choice="none"``.

Each SDK model takes the SDK's async client or its sync one. An async client streams in the
event loop. A sync client (``openai.OpenAI``, ``anthropic.Anthropic``, ``genai.Client``)
streams in a worker thread of the response's own, one event at a time, so the loop never
blocks on it and it never waits in a queue behind the tools' threads. Which one a client is
is read from its ``close``: a coroutine function means async (``genai.Client``'s async
form is ``client.aio``).

The SDKs are optional: a client is passed in, or created (lazily importing the SDK, with the
install command in the error when it is missing).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import aclosing, suppress
from typing import Any, Final, Protocol, runtime_checkable

from toolstitch.messages import (
    Message,
    to_anthropic,
    to_gemini,
    to_openai_chat,
    to_openai_responses,
)

from ._tool import Tool, require

__all__ = ["AnthropicModel", "GeminiModel", "Model", "OpenAIChatModel", "OpenAIResponsesModel"]

#: What ``OpenAIResponsesModel`` adds to ``include`` when the response is not stored.
ENCRYPTED_REASONING: Final = "reasoning.encrypted_content"

_END: Final = object()


@runtime_checkable
class Model(Protocol):
    """What the runner needs from a model."""

    #: The stream format, for ``Stitcher(provider)``: ``"openai-chat"``, ``"anthropic"``,
    #: ``"openai-responses"``, ``"gemini"`` or ``"auto"``.
    provider: str

    def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> AsyncIterator[Any]:
        """Stream one response to ``messages``, offering ``tools``.

        ``options`` are request options; ``tool_choice="none"`` means the response must not
        call tools. Errors (HTTP, network) are raised from the iteration.
        """
        ...


def is_sync_client(client: object) -> bool:
    """Whether ``client`` is an SDK's sync client: its ``close`` is a plain function."""
    close = getattr(client, "close", None)
    return callable(close) and not inspect.iscoroutinefunction(close)


async def _close(obj: object) -> None:
    """Close a stream or client: its ``aclose`` or ``close``, awaited when it is async."""
    for name in ("aclose", "close"):
        method = getattr(obj, name, None)
        if callable(method):
            outcome = method()
            if inspect.isawaitable(outcome):
                await outcome
            return


def _close_quietly(obj: object) -> None:
    """Close a sync stream, in its reader's thread; errors closing it are of no interest."""
    close = getattr(obj, "close", None)
    if callable(close):
        with suppress(Exception):
            close()


class _SDKModel:
    """What the SDK models share: stream one request (in the loop, or in a worker thread
    for a sync client), close the client they own.

    A subclass says how to build its request (``request``), which client method streams it
    (``_method``, reached through ``_path`` on the client) and what a client must be
    (``_wants``, for the error when it is not).
    """

    _path: tuple[str, ...] = ()
    _wants: str = ""

    def __init__(self, client: Any, model: str, options: dict[str, Any]) -> None:
        self._owned = client is None
        self.client: Any = self._default_client() if client is None else client
        self.model = model
        self.options = options

    def _default_client(self) -> Any:
        """The client made from the environment when none is given (the model owns it)."""
        raise NotImplementedError

    def _params(self, options: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """Every request's options with this one's, and the ``tool_choice`` among them."""
        params = {**self.options, **options}
        return params, params.pop("tool_choice", None)

    def request(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def sync(self) -> bool:
        """Whether the client is a sync one (its stream is read in a worker thread)."""
        return is_sync_client(self.client)

    def _method(self) -> Callable[..., Any]:
        """The client's streaming method, or a ``TypeError`` saying what client to pass."""
        target: Any = self.client
        for name in self._path:
            target = getattr(target, name, None)
        if not callable(target):
            raise TypeError(
                f"{type(self).__name__} needs {self._wants}; got a "
                f"{type(self.client).__name__} without .{'.'.join(self._path)}()"
            )
        method: Callable[..., Any] = target
        return method

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> AsyncIterator[Any]:
        request = self.request(messages, tools, **options)
        method = self._method()
        source = _threaded(self, method, request) if self.sync else _awaited(self, method, request)
        async with aclosing(source) as events:
            async for event in events:
                yield event

    async def aclose(self) -> None:
        """Close the client if this model created it."""
        if self._owned:
            await _close(self.client)


def _misuse(model: _SDKModel, got: object, expected: str) -> TypeError:
    return TypeError(
        f"{type(model).__name__}: the client's {'.'.join(model._path)}() gave a "
        f"{type(got).__name__}, not {expected}. Pass {model._wants} (a sync client is "
        "recognised by its plain close() method)."
    )


async def _awaited(
    model: _SDKModel, method: Callable[..., Any], request: dict[str, Any]
) -> AsyncGenerator[Any, None]:
    """An async client's stream, read in the loop."""
    response = method(**request)
    if inspect.isawaitable(response):
        response = await response
    if not hasattr(response, "__aiter__"):
        await _close(response)
        raise _misuse(model, response, "an async stream")
    try:
        async for event in response:
            yield event
    finally:
        await _close(response)


async def _threaded(
    model: _SDKModel, method: Callable[..., Any], request: dict[str, Any]
) -> AsyncGenerator[Any, None]:
    """A sync client's stream, opened and read in a worker thread of its own (one event at
    a time: the thread never reads ahead of the consumer). Left early, the stream is closed
    at once when no read is under way, else by the worker after the read it is in (which
    ends with the next event, the end of the body or the client's read timeout)."""
    worker = ThreadPoolExecutor(1, thread_name_prefix="toolstitch-model-stream")
    response: Any = None
    # The worker's own future (not the loop's wrapper, which is done once cancelled): while
    # it runs, the worker is inside a read and only the worker may close the stream.
    pending: Future[Any] | None = None
    try:
        pending = worker.submit(functools.partial(method, **request))
        response = await asyncio.wrap_future(pending)
        if inspect.isawaitable(response) or not hasattr(response, "__iter__"):
            raise _misuse(model, response, "a sync stream")
        iterator = iter(response)
        while True:
            pending = worker.submit(next, iterator, _END)
            event = await asyncio.wrap_future(pending)
            if event is _END:
                return
            yield event
    finally:
        if response is not None:
            if pending is None or pending.done():
                _close_quietly(response)  # (a coroutine the misuse gave is closed unawaited)
            else:
                worker.submit(_close_quietly, response)
        worker.shutdown(wait=False)


class OpenAIChatModel(_SDKModel):
    """Chat Completions over ``openai.AsyncOpenAI`` or ``openai.OpenAI`` (any ``base_url``:
    OpenAI, DeepSeek, GLM, Kimi, Qwen, Grok, Doubao, Gemini's OpenAI-compatible endpoint,
    Ollama, vLLM …).

    ``client`` is an ``AsyncOpenAI`` or ``OpenAI`` (``None`` creates an ``AsyncOpenAI``
    from the environment; the model closes only a client it created, in ``aclose``).
    ``include_usage`` asks for the final usage chunk (``stream_options``); turn it off for
    servers that refuse it. ``include_reasoning`` sends reasoning back as
    ``reasoning_content`` (DeepSeek-style servers want it in tool loops). ``options`` go
    into every request (``temperature``, …). ``tool_choice="none"`` leaves the tools out of
    the request altogether.
    """

    provider = "openai-chat"
    _path = ("chat", "completions", "create")
    _wants = "an openai.AsyncOpenAI or openai.OpenAI client"

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        include_usage: bool = True,
        include_reasoning: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(client, model, options)
        self.include_usage = include_usage
        self.include_reasoning = include_reasoning

    def _default_client(self) -> Any:
        return require("openai", "openai").AsyncOpenAI()

    def request(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> dict[str, Any]:
        """The keyword arguments of ``client.chat.completions.create``."""
        params, choice = self._params(options)
        request: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_chat(messages, include_reasoning=self.include_reasoning),
            "stream": True,
        }
        if tools and choice != "none":
            request["tools"] = [tool.to_openai() for tool in tools]
            if choice is not None:
                request["tool_choice"] = choice
        if self.include_usage:
            request["stream_options"] = {"include_usage": True}
        request.update(params)
        return request


class OpenAIResponsesModel(_SDKModel):
    """The Responses API over ``openai.AsyncOpenAI`` or ``openai.OpenAI``.

    The history goes as ``input`` items (``toolstitch.messages.to_openai_responses``): each
    assistant turn's reasoning items with their ``id``, ``summary`` and
    ``encrypted_content``, before the ``function_call`` items that followed them, as the API
    wants them back in a tool loop. ``store`` is sent when given; with ``store=False`` the
    server keeps nothing, so ``include=["reasoning.encrypted_content"]`` is asked for (added
    to any ``include`` of the options) and the reasoning travels in the history instead.
    ``options`` go into every request (``reasoning={"effort": ...}``, ``instructions``, …).
    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"`` or a Responses
    ``tool_choice`` object; with ``"none"`` the tools stay declared but cannot be called.
    """

    provider = "openai-responses"
    _path = ("responses", "create")
    _wants = "an openai.AsyncOpenAI or openai.OpenAI client"

    def __init__(
        self, client: Any, model: str, *, store: bool | None = None, **options: Any
    ) -> None:
        super().__init__(client, model, options)
        self.store = store

    _default_client = OpenAIChatModel._default_client

    def request(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> dict[str, Any]:
        """The keyword arguments of ``client.responses.create``."""
        params, choice = self._params(options)
        request: dict[str, Any] = {
            "model": self.model,
            "input": to_openai_responses(messages),
            "stream": True,
        }
        if tools:
            request["tools"] = [_responses_tool(tool) for tool in tools]
            if choice is not None:
                request["tool_choice"] = choice
        if self.store is not None:
            request["store"] = self.store
        include = list(params.pop("include", None) or ())
        if self.store is False and ENCRYPTED_REASONING not in include:
            include.append(ENCRYPTED_REASONING)
        if include:
            request["include"] = include
        request.update(params)
        return request


def _responses_tool(tool: Tool) -> dict[str, Any]:
    """A Responses ``tools`` entry: the Chat one's function, flattened."""
    entry: dict[str, Any] = {"type": "function", **tool.to_openai()["function"]}
    entry.setdefault("strict", False)
    return entry


class AnthropicModel(_SDKModel):
    """Messages over ``anthropic.AsyncAnthropic`` or ``anthropic.Anthropic``.

    ``client`` is an ``AsyncAnthropic`` or ``Anthropic`` (``None`` creates an
    ``AsyncAnthropic`` from the environment). ``max_tokens`` is required by the API.
    ``thinking`` turns on extended thinking: a budget in tokens (``{"type": "enabled",
    "budget_tokens": n}``, which must be below ``max_tokens``) or the API's ``thinking``
    object as it is. The signed thinking blocks of a turn go back with it in the history
    (``to_anthropic``), in their place before its ``tool_use`` blocks, as the API requires
    within a tool loop. ``options`` go into every request. ``tool_choice`` may be
    ``"auto"``, ``"none"``, ``"required"`` (Anthropic ``any``) or an Anthropic
    ``tool_choice`` dict; with ``"none"`` the tools stay declared (Anthropic needs them to
    read the ``tool_use`` blocks of the history) but cannot be called.
    """

    provider = "anthropic"
    _path = ("messages", "create")
    _wants = "an anthropic.AsyncAnthropic or anthropic.Anthropic client"

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        max_tokens: int = 4096,
        thinking: int | dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        if isinstance(thinking, int) and not isinstance(thinking, bool):
            if not 0 < thinking < max_tokens:
                raise ValueError(
                    f"AnthropicModel: a thinking budget of {thinking} tokens must be positive "
                    f"and below max_tokens ({max_tokens}); raise max_tokens or lower the budget"
                )
            thinking = {"type": "enabled", "budget_tokens": thinking}
        elif thinking is not None and not isinstance(thinking, dict):
            raise TypeError(
                "AnthropicModel: thinking is a budget in tokens or the API's thinking object "
                f"(a dict), not a {type(thinking).__name__}"
            )
        super().__init__(client, model, options)
        self.max_tokens = max_tokens
        self.thinking = thinking

    def _default_client(self) -> Any:
        return require("anthropic", "anthropic").AsyncAnthropic()

    def request(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> dict[str, Any]:
        """The keyword arguments of ``client.messages.create``."""
        params, choice = self._params(options)
        system, wire = to_anthropic(messages)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": wire,
            "stream": True,
        }
        if system is not None:
            request["system"] = system
        if self.thinking is not None:
            request["thinking"] = dict(self.thinking)
        if tools:
            request["tools"] = [tool.to_anthropic() for tool in tools]
            if isinstance(choice, str):
                kind = {"required": "any"}.get(choice, choice)
                request["tool_choice"] = {"type": kind}
            elif choice is not None:
                request["tool_choice"] = choice
        request.update(params)
        return request


#: Gemini's function-calling modes for the runner's ``tool_choice`` strings.
_GEMINI_MODES: Final = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


class GeminiModel(_SDKModel):
    """Gemini ``generateContent`` over ``google-genai``.

    ``client`` is a ``genai.Client`` (sync: streamed with ``client.models`` in a worker
    thread) or its ``client.aio`` (async: streamed in the loop); ``None`` creates
    ``genai.Client().aio`` from the environment. The history goes as ``contents`` with a
    ``system_instruction`` (``toolstitch.messages.to_gemini``): every ``thoughtSignature``
    on the part it came with, and calls without ids answered by position (the ids the
    stitcher generated for them are left out). Tools are declared with their JSON Schema
    as it is (``parameters_json_schema``). ``options`` are ``GenerateContentConfig``
    fields (``temperature``, ``thinking_config``, …) for every request. ``tool_choice`` is
    ``"auto"``, ``"none"``, ``"required"`` (``ANY``) or a ``tool_config`` dict.
    """

    provider = "gemini"
    _path = ("models", "generate_content_stream")
    _wants = "a google.genai.Client, or its .aio for async use"

    def __init__(self, client: Any, model: str, **options: Any) -> None:
        super().__init__(client, model, options)

    def _default_client(self) -> Any:
        return require("google.genai", "gemini").Client().aio

    def request(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> dict[str, Any]:
        """The keyword arguments of ``client.models.generate_content_stream``."""
        config, choice = self._params(options)
        system, contents = to_gemini(messages)
        if system is not None:
            config["system_instruction"] = system
        if tools:
            config["tools"] = [{"function_declarations": [_gemini_function(t) for t in tools]}]
            if isinstance(choice, str):
                mode = _GEMINI_MODES.get(choice, choice.upper())
                config["tool_config"] = {"function_calling_config": {"mode": mode}}
            elif choice is not None:
                config["tool_config"] = choice
        request: dict[str, Any] = {"model": self.model, "contents": contents}
        if config:
            request["config"] = config
        return request


def _gemini_function(tool: Tool) -> dict[str, Any]:
    """A ``functionDeclarations`` entry: the Chat one's function, its JSON Schema as
    ``parameters_json_schema`` (untranslated, unlike ``parameters``)."""
    entry: dict[str, Any] = dict(tool.to_openai()["function"])
    entry["parameters_json_schema"] = entry.pop("parameters")
    return entry
