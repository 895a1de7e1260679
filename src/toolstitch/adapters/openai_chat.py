"""OpenAI Chat Completions chunks (and every OpenAI-compatible server) → items.

What arrives: ``chat.completion.chunk`` objects, ``{"choices": [{"index", "delta": {"role",
"content", "reasoning_content" | "reasoning", "tool_calls": [...]}, "finish_reason"}],
"usage"}``; a final chunk with ``choices: []`` and ``usage`` when usage was requested;
``data: [DONE]`` (handled by the stream decoder). An error may arrive instead of a chunk,
as ``{"error": {...}}`` (Groq sends it as ``event: error``).

Tool-call entries go through this provider's quirk layer (``_openai_chat_quirks.ChatQuirks``),
which normalises what servers bend and warns about it, reading the core's record of each call.
The adapter follows one choice (``choice``, default 0); the others are ignored. ``feed`` and
``close`` are generators (see adapters/_base.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from toolstitch.core.instructions import Item
from toolstitch.core.record import CallRecords
from toolstitch.vocab.stream_events import (
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    TextDelta,
    Usage,
)
from toolstitch.vocab.text import ChunkedText

from ._base import Adapter, mapping, provider_error
from ._openai_chat_quirks import CODES, ChatQuirks

__all__ = ["CODES", "OpenAIChatAdapter"]


class OpenAIChatAdapter(Adapter):
    """Adapter for OpenAI Chat Completions streams (``provider="openai-chat"``)."""

    name = "openai-chat"

    def __init__(self, *, choice: int = 0, records: CallRecords | None = None) -> None:
        super().__init__(choice=choice, records=records)
        self.quirks = ChatQuirks(self.records)
        # The reasoning text being read, until the text, a call or the finish follows it:
        # one block's text (the same text its ReasoningDelta events carry), and its key.
        self._reasoning: ChunkedText | None = None
        self._reasoning_key = "reasoning_content"

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> Iterator[Item]:
        if "error" in payload and not payload.get("choices"):
            if payload["error"] is not None or event == "error":
                yield provider_error(payload["error"])
            return
        if event == "error":
            yield provider_error(payload)
            return
        choices = payload.get("choices")
        if isinstance(choices, list):
            for position, raw in enumerate(choices):
                choice = mapping(raw)
                index = choice.get("index", position)
                if index != self.choice:
                    continue
                yield from self._choice(choice)
        usage = payload.get("usage")
        if usage is not None:
            usage_map = mapping(usage)
            if usage_map:
                yield Usage(usage=dict(usage_map))

    def _choice(self, choice: Mapping[str, Any]) -> Iterator[Item]:
        delta = mapping(choice.get("delta"))
        if not delta:
            # Some servers put a whole message instead of a delta.
            delta = mapping(choice.get("message"))
        key = "reasoning_content"
        reasoning = delta.get(key)
        if not isinstance(reasoning, str):
            key = "reasoning"
            reasoning = delta.get(key)
        if isinstance(reasoning, str) and reasoning:
            yield ReasoningDelta(text=reasoning)
            if self._reasoning is None:
                self._reasoning, self._reasoning_key = ChunkedText(), key
            self._reasoning.append(reasoning)
        content = delta.get("content")
        tool_calls = delta.get("tool_calls")
        reason = choice.get("finish_reason")
        if self._reasoning is not None and (content or tool_calls or reason):
            yield self._reasoning_block()
        if isinstance(content, str) and content:
            yield TextDelta(text=content)
        if tool_calls is not None:
            if isinstance(tool_calls, (list, tuple)):
                tool_calls = [mapping(t) if not isinstance(t, Mapping) else t for t in tool_calls]
            yield from self.quirks.feed(tool_calls)
        function_call = delta.get("function_call")
        if function_call is not None:
            # The deprecated ``functions`` API: one call, no index, no id.
            fc = mapping(function_call)
            yield from self.quirks.feed([{"index": 0, "type": "function", "function": fc}])
        if isinstance(reason, str) and reason:
            yield FinishReason(reason=reason)
            yield from self.quirks.finish_reason(reason)

    def _reasoning_block(self) -> ReasoningBlock:
        """The reasoning read so far as one block (``kind``: the key it came in), ended by
        what followed it; DeepSeek-style servers want it back (``message()``)."""
        text, self._reasoning = self._reasoning, None
        assert text is not None
        return ReasoningBlock(text=text.text(), kind=self._reasoning_key)

    def close(self) -> Iterator[Item]:
        if self._reasoning is not None:
            yield self._reasoning_block()
        yield from self.quirks.close()
