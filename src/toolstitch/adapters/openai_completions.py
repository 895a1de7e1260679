"""OpenAI's legacy completions stream (``/v1/completions``) → items.

What arrives (SSE; vLLM, SGLang, llama.cpp's server, TGI and most OpenAI-compatible
inference servers still serve it)::

    {"id", "object": "text_completion", "created", "model",
     "choices": [{"index": 0, "text": "…", "logprobs": null, "finish_reason": null}]}
    ...
    {"choices": [{"index": 0, "text": "", "finish_reason": "stop"}], "usage": {…}?}

``choices[].text`` of the followed choice (``choice=``) is the model's raw output, a
``TextDelta`` per chunk: read with ``text_format=`` it yields the tool calls written in it
(``toolstitch.stitch.textcalls``). ``finish_reason`` is the ``FinishReason``, ``usage`` the
``Usage``; an ``error`` object is a ``StreamFailed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolstitch.core.instructions import Finish, Item

from ._base import Adapter, finish_event, mapping, provider_error, text_delta, usage_event

__all__ = ["CODES", "OpenAICompletionsAdapter", "detects"]

#: The quirk codes this adapter emits: none.
CODES: dict[str, str] = {}


def detects(payload: Mapping[str, Any]) -> bool:
    """Whether ``payload`` is a chunk of a completions stream: ``object`` says so, or its
    choices carry ``text`` and no ``delta``."""
    if payload.get("object") == "text_completion":
        return True
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        return False
    first = choices[0]
    return isinstance(first, Mapping) and "text" in first and "delta" not in first


class OpenAICompletionsAdapter(Adapter):
    """Adapter for the legacy completions stream (``provider="openai-completions"``)."""

    name = "openai-completions"

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Item]:
        out: list[Item] = []
        error = payload.get("error")
        if error is not None:
            out.append(provider_error(error))
            return out
        choices = payload.get("choices")
        for entry in choices if isinstance(choices, list) else ():
            choice = mapping(entry)
            if choice.get("index", 0) != self.choice:
                continue
            text = choice.get("text")
            if isinstance(text, str) and text:
                out.append(text_delta(text))
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                out.append(finish_event(reason))
        usage = payload.get("usage")
        if isinstance(usage, Mapping) and usage:
            out.append(usage_event(dict(usage)))
        return out

    def close(self) -> list[Item]:
        return [Finish()]
