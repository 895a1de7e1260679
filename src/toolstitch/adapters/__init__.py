"""Provider adapters: one per stream format, each turning that API's events into events.

``ADAPTERS`` maps each provider id accepted by ``stitch(provider=...)`` and
``toolstitch replay --provider`` to its adapter class; ``detect`` names the provider of one
decoded stream event, or returns ``None`` when the event could come from any of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from . import cohere_chat, ollama_chat
from ._base import Adapter, as_mapping
from .anthropic import MESSAGE_EVENTS, AnthropicAdapter
from .bedrock_converse import BedrockConverseAdapter, is_bedrock_event
from .cohere_chat import CohereChatAdapter
from .gemini import GeminiAdapter
from .ollama_chat import OllamaChatAdapter
from .openai_chat import OpenAIChatAdapter
from .openai_responses import OpenAIResponsesAdapter

__all__ = [
    "ADAPTERS",
    "PROVIDERS",
    "Adapter",
    "AnthropicAdapter",
    "BedrockConverseAdapter",
    "CohereChatAdapter",
    "GeminiAdapter",
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
    "bedrock-converse": BedrockConverseAdapter,
    "cohere-chat": CohereChatAdapter,
    "ollama-chat": OllamaChatAdapter,
}

#: The provider ids, in the order the CLI lists them.
PROVIDERS: Final[tuple[str, ...]] = tuple(ADAPTERS)

_ANTHROPIC_TYPES = MESSAGE_EVENTS


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
    if "candidates" in payload or "usageMetadata" in payload or "promptFeedback" in payload:
        return "gemini"
    if "usage_metadata" in payload or "prompt_feedback" in payload:
        return "gemini"
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
