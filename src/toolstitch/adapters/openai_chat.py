"""OpenAI Chat Completions chunks (and every OpenAI-compatible server) → events.

What arrives: ``chat.completion.chunk`` objects, ``{"choices": [{"index", "delta": {"role",
"content", "reasoning_content" | "reasoning", "tool_calls": [...]}, "finish_reason"}],
"usage"}``; a final chunk with ``choices: []`` and ``usage`` when usage was requested;
``data: [DONE]`` (handled by the stream decoder). An error may arrive instead of a chunk,
as ``{"error": {...}}`` (Groq sends it as ``event: error``).

Tool-call entries go through the quirk layer (``toolstitch.adapters.chat_quirks.ChatQuirks``), which
normalises what servers bend and warns about it. The adapter follows one choice (``choice``,
default 0); the others are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolstitch.adapters.chat_quirks import ChatQuirks
from toolstitch.core.assembler import Assembler
from toolstitch.vocab.call_events import Event
from toolstitch.vocab.stream_events import FinishReason, ReasoningDelta, TextDelta, Usage

from ._base import Adapter, mapping, provider_error

__all__ = ["OpenAIChatAdapter"]


class OpenAIChatAdapter(Adapter):
    """Adapter for OpenAI Chat Completions streams (``provider="openai-chat"``)."""

    name = "openai-chat"

    def __init__(self, assembler: Assembler, *, choice: int = 0) -> None:
        super().__init__(assembler, choice=choice)
        self.quirks = ChatQuirks(assembler)

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Event]:
        out: list[Event] = []
        if "error" in payload and not payload.get("choices"):
            if payload["error"] is not None or event == "error":
                out.append(provider_error(payload["error"]))
            return out
        if event == "error":
            out.append(provider_error(payload))
            return out
        choices = payload.get("choices")
        if isinstance(choices, list):
            for position, raw in enumerate(choices):
                choice = mapping(raw)
                index = choice.get("index", position)
                if index != self.choice:
                    continue
                self._choice(choice, out)
        usage = payload.get("usage")
        if usage is not None:
            usage_map = mapping(usage)
            if usage_map:
                out.append(Usage(usage=dict(usage_map)))
        return out

    def _choice(self, choice: Mapping[str, Any], out: list[Event]) -> None:
        delta = mapping(choice.get("delta"))
        if not delta:
            # Some servers put a whole message instead of a delta.
            delta = mapping(choice.get("message"))
        reasoning = delta.get("reasoning_content")
        if not isinstance(reasoning, str):
            reasoning = delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            out.append(ReasoningDelta(text=reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            out.append(TextDelta(text=content))
        tool_calls = delta.get("tool_calls")
        if tool_calls is not None:
            if isinstance(tool_calls, (list, tuple)):
                tool_calls = [mapping(t) if not isinstance(t, Mapping) else t for t in tool_calls]
            out.extend(self.quirks.feed(tool_calls))
        function_call = delta.get("function_call")
        if function_call is not None:
            # The deprecated ``functions`` API: one call, no index, no id.
            fc = mapping(function_call)
            out.extend(self.quirks.feed([{"index": 0, "type": "function", "function": fc}]))
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            out.append(FinishReason(reason=reason))
            out.extend(self.quirks.finish_reason(reason))

    def close(self) -> list[Event]:
        return self.quirks.close()
