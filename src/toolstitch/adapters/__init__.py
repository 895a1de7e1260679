"""Provider adapters: one per stream format, each turning that API's events into events.

``ADAPTERS`` maps each provider id accepted by ``stitch(provider=...)`` and
``toolstitch replay --provider`` to its adapter class; ``detect`` names the provider of one
decoded stream event, or returns ``None`` when the event could come from any of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from . import anthropic_bedrock, cohere_chat, gemini_interactions, langchain, ollama_chat
from ._base import Adapter, as_mapping
from .anthropic import MESSAGE_EVENTS, AnthropicAdapter
from .anthropic_bedrock import AnthropicBedrockAdapter
from .bedrock_converse import BedrockConverseAdapter, is_bedrock_event, is_exception
from .cohere_chat import CohereChatAdapter
from .gemini import GeminiAdapter
from .gemini_interactions import GeminiInteractionsAdapter
from .langchain import LangChainAdapter
from .ollama_chat import OllamaChatAdapter
from .openai_chat import OpenAIChatAdapter
from .openai_responses import OpenAIResponsesAdapter

__all__ = [
    "ADAPTERS",
    "PROVIDERS",
    "Adapter",
    "AnthropicAdapter",
    "AnthropicBedrockAdapter",
    "BedrockConverseAdapter",
    "CohereChatAdapter",
    "GeminiAdapter",
    "GeminiInteractionsAdapter",
    "LangChainAdapter",
    "OllamaChatAdapter",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
    "as_mapping",
    "detect",
]

ADAPTERS: Final[dict[str, type[Adapter]]] = {
    "openai-chat": OpenAIChatAdapter,
    "openai-responses": OpenAIResponsesAdapter,
    "anthropic": AnthropicAdapter,
    "gemini": GeminiAdapter,
    "gemini-interactions": GeminiInteractionsAdapter,
    "bedrock-converse": BedrockConverseAdapter,
    "anthropic-bedrock": AnthropicBedrockAdapter,
    "cohere-chat": CohereChatAdapter,
    "ollama-chat": OllamaChatAdapter,
    "langchain": LangChainAdapter,
}

#: The provider ids, in the order the CLI lists them.
PROVIDERS: Final[tuple[str, ...]] = tuple(ADAPTERS)

_ANTHROPIC_TYPES = MESSAGE_EVENTS

#: The providers of Bedrock runtime streams besides ConverseStream, whose in-stream
#: exception frames are ConverseStream's.
_BEDROCK_RUNTIME: Final = frozenset({"anthropic-bedrock"})


def detect(payload: Mapping[str, Any], event: str | None = None) -> str | None:
    """The provider whose stream ``payload`` (one decoded event) belongs to, or ``None``."""
    kind = payload.get("type")
    if not isinstance(kind, str):
        kind = None  # a list or an object there is no event type of any provider's
    if kind in _ANTHROPIC_TYPES or event in _ANTHROPIC_TYPES:
        return "anthropic"
    if isinstance(kind, str) and kind.startswith("response."):
        return "openai-responses"
    if kind == "chunk" and isinstance(payload.get("chunk"), Mapping):
        return "openai-chat"  # the openai SDK's ChunkEvent, dumped to a dict
    if gemini_interactions.detects(payload):
        return "gemini-interactions"  # event_type "interaction.…" / "step.…"
    if langchain.detects(payload):
        return "langchain"  # an AIMessageChunk, whose usage_metadata is not Gemini's
    if "candidates" in payload or "usageMetadata" in payload or "promptFeedback" in payload:
        return "gemini"
    if "usage_metadata" in payload or "prompt_feedback" in payload:
        return "gemini"
    if anthropic_bedrock.detects(payload):
        return "anthropic-bedrock"  # {"chunk": {"bytes": …}}: no ConverseStream event
    if is_bedrock_event(payload, event):
        return "bedrock-converse"
    if cohere_chat.detects(payload, event):
        return "cohere-chat"
    if ollama_chat.detects(payload):
        return "ollama-chat"
    obj = payload.get("object")
    if "choices" in payload or (isinstance(obj, str) and obj.startswith("chat.completion")):
        return "openai-chat"
    return None


def shared_by(payload: Mapping[str, Any], event: str | None = None) -> frozenset[str]:
    """The providers besides ``detect``'s whose streams carry ``payload`` too, so that it
    neither confirms nor contradicts them when one of them is named: a Bedrock in-stream
    exception, which ``detect`` gives to ``"bedrock-converse"`` (a stream that starts with one
    is read as ConverseStream's), ends an ``"anthropic-bedrock"`` stream alike. Empty for
    every other event."""
    if is_bedrock_event(payload, event) and is_exception(next(iter(payload)), event):
        return _BEDROCK_RUNTIME
    return frozenset()
