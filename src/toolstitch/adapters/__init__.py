"""Provider adapters: one per stream format, each turning that API's events into events.

``ADAPTERS`` maps each provider id accepted by ``stitch(provider=...)`` and
``toolstitch replay --provider`` to its adapter class; ``detect`` names the provider of one
decoded stream event, or returns ``None`` when the event could come from any of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from . import (
    anthropic_bedrock,
    cohere_chat,
    gemini_interactions,
    langchain,
    ollama_chat,
    openai_completions,
)
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
from .openai_completions import OpenAICompletionsAdapter
from .openai_responses import OpenAIResponsesAdapter
from .raw_text import RawTextAdapter

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
    "OpenAICompletionsAdapter",
    "OpenAIResponsesAdapter",
    "RawTextAdapter",
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
    "openai-completions": OpenAICompletionsAdapter,
    "text": RawTextAdapter,
}

#: The provider ids, in the order the CLI lists them.
PROVIDERS: Final[tuple[str, ...]] = tuple(ADAPTERS)

_ANTHROPIC_TYPES = MESSAGE_EVENTS

#: The providers of Bedrock runtime streams besides ConverseStream, whose in-stream
#: exception frames are ConverseStream's.
_BEDROCK_RUNTIME: Final = frozenset({"anthropic-bedrock"})


def _gemini(payload: Mapping[str, Any]) -> bool:
    return any(key in payload for key in _GEMINI_KEYS)


def _chat(payload: Mapping[str, Any]) -> bool:
    obj = payload.get("object")
    return "choices" in payload or (isinstance(obj, str) and obj.startswith("chat.completion"))


#: A test: ``(payload, SSE event name, the payload's ``type`` if a str)`` -> whether it is ...
Detector = Callable[[Mapping[str, Any], "str | None", "str | None"], bool]

_GEMINI_KEYS: Final = (
    "candidates",
    "usageMetadata",
    "promptFeedback",
    "usage_metadata",
    "prompt_feedback",
)

#: How ``detect`` tells the provider of one event: each provider's test, in the order asked
#: (the first that holds names it). The order matters where shapes overlap: the openai SDK's
#: ``ChunkEvent`` before the rest, the Gemini Interactions and LangChain shapes before
#: Gemini's (a chunk's ``usage_metadata``), InvokeModel's ``chunk`` before ConverseStream's,
#: and legacy completions chunks, then plain chat chunks, last.
DETECTORS: Final[tuple[tuple[str, Detector], ...]] = (
    ("anthropic", lambda p, e, k: k in _ANTHROPIC_TYPES or e in _ANTHROPIC_TYPES),
    ("openai-responses", lambda p, e, k: k is not None and k.startswith("response.")),
    ("openai-chat", lambda p, e, k: k == "chunk" and isinstance(p.get("chunk"), Mapping)),
    ("gemini-interactions", lambda p, e, k: gemini_interactions.detects(p)),
    ("langchain", lambda p, e, k: langchain.detects(p)),
    ("gemini", lambda p, e, k: _gemini(p)),
    ("anthropic-bedrock", lambda p, e, k: anthropic_bedrock.detects(p)),
    ("bedrock-converse", lambda p, e, k: is_bedrock_event(p, e)),
    ("cohere-chat", lambda p, e, k: cohere_chat.detects(p, e)),
    ("ollama-chat", lambda p, e, k: ollama_chat.detects(p)),
    ("openai-completions", lambda p, e, k: openai_completions.detects(p)),
    ("openai-chat", lambda p, e, k: _chat(p)),
)


def detect(payload: Mapping[str, Any], event: str | None = None) -> str | None:
    """The provider whose stream ``payload`` (one decoded event) belongs to, or ``None``
    (``DETECTORS``, in order)."""
    kind = payload.get("type")
    if not isinstance(kind, str):
        kind = None  # a list or an object there is no event type of any provider's
    for provider, matches in DETECTORS:
        if matches(payload, event, kind):
            return provider
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
