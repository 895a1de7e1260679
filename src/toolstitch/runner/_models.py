"""Models: one small protocol, and implementations over the official async SDK clients.

A model streams one response: ``stream(messages, tools, **options)`` is an async iterator
of the provider's stream events (SDK objects or dicts), which the runner feeds to a
``Stitcher``. ``provider`` names the stream format (``"openai-chat"``, ``"anthropic"``, or
``"auto"``). The runner asks for a response without tools with ``tool_choice="none"``.

The SDKs are optional: a client is passed in, or created (lazily importing the SDK, with the
install command in the error when it is missing).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, runtime_checkable

from toolstitch.messages import Message, to_anthropic, to_openai_chat

from ._tool import Tool, require

__all__ = ["AnthropicModel", "Model", "OpenAIChatModel"]


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


class _SDKModel:
    """What the two SDK models share: stream one request, close the client they own."""

    client: Any
    _owned: bool

    def request(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> dict[str, Any]:
        raise NotImplementedError

    def _create(self, request: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> AsyncIterator[Any]:
        response = await self._create(self.request(messages, tools, **options))
        try:
            async for event in response:
                yield event
        finally:
            await response.close()

    async def aclose(self) -> None:
        """Close the client if this model created it."""
        if self._owned:
            await self.client.close()


class OpenAIChatModel(_SDKModel):
    """Chat Completions over ``openai.AsyncOpenAI`` (any ``base_url``: OpenAI, DeepSeek, GLM,
    Kimi, Qwen, Grok, Doubao, Gemini's OpenAI-compatible endpoint, Ollama, vLLM …).

    ``client`` is an ``AsyncOpenAI`` (``None`` creates one from the environment; the model
    closes only a client it created, in ``aclose``). ``include_usage`` asks for the final
    usage chunk (``stream_options``); turn it off for servers that refuse it.
    ``include_reasoning`` sends reasoning back as ``reasoning_content`` (DeepSeek-style
    servers want it in tool loops). ``options`` go into every request (``temperature``, …).
    ``tool_choice="none"`` leaves the tools out of the request altogether.
    """

    provider = "openai-chat"

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        include_usage: bool = True,
        include_reasoning: bool = False,
        **options: Any,
    ) -> None:
        self._owned = client is None
        if client is None:
            client = require("openai", "openai").AsyncOpenAI()
        self.client = client
        self.model = model
        self.include_usage = include_usage
        self.include_reasoning = include_reasoning
        self.options = options

    def request(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> dict[str, Any]:
        """The keyword arguments of ``client.chat.completions.create``."""
        params = {**self.options, **options}
        choice = params.pop("tool_choice", None)
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

    def _create(self, request: dict[str, Any]) -> Any:
        return self.client.chat.completions.create(**request)


class AnthropicModel(_SDKModel):
    """Messages over ``anthropic.AsyncAnthropic``.

    ``client`` is an ``AsyncAnthropic`` (``None`` creates one from the environment).
    ``max_tokens`` is required by the API. ``options`` go into every request.
    ``tool_choice`` may be ``"auto"``, ``"none"``, ``"required"`` (Anthropic ``any``) or an
    Anthropic ``tool_choice`` dict; with ``"none"`` the tools stay declared (Anthropic needs
    them to read the ``tool_use`` blocks of the history) but cannot be called.
    """

    provider = "anthropic"

    def __init__(self, client: Any, model: str, *, max_tokens: int = 4096, **options: Any) -> None:
        self._owned = client is None
        if client is None:
            client = require("anthropic", "anthropic").AsyncAnthropic()
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.options = options

    def request(
        self, messages: Sequence[Message], tools: Sequence[Tool], **options: Any
    ) -> dict[str, Any]:
        """The keyword arguments of ``client.messages.create``."""
        params = {**self.options, **options}
        choice = params.pop("tool_choice", None)
        system, wire = to_anthropic(messages)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": wire,
            "stream": True,
        }
        if system is not None:
            request["system"] = system
        if tools:
            request["tools"] = [tool.to_anthropic() for tool in tools]
            if isinstance(choice, str):
                kind = {"required": "any"}.get(choice, choice)
                request["tool_choice"] = {"type": kind}
            elif choice is not None:
                request["tool_choice"] = choice
        request.update(params)
        return request

    def _create(self, request: dict[str, Any]) -> Any:
        return self.client.messages.create(**request)
