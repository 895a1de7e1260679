"""Builders for scripted replies: OpenAI Chat Completions and Anthropic Messages streams.

Each builder records what a provider would stream, step by step, with holds and sleeps in
between, and ``reply()`` turns it into a ``Reply`` (the SSE stream, plus the equivalent
non-streamed JSON body)::

    reply = (
        OpenAIChatScript()
        .call("call_1", "lookup", '{"q": "paris"}', pieces=3)
        .hold(lookup_started, label="until lookup started")
        .call("call_2", "book", '{"hotel": "Ritz"}')
        .finish("tool_calls")
        .usage(120, 30)
        .reply()
    )
"""

from __future__ import annotations

import json
from typing import Any

from ._server import Hold, Reply, Sleep, Step
from ._sse import DONE, frame

__all__ = ["AnthropicScript", "OpenAIChatScript", "cut"]


def cut(text: str, count: int) -> list[str]:
    """``text`` cut into ``count`` consecutive pieces (fewer if it is shorter)."""
    count = max(1, min(count, len(text)))
    size, extra = divmod(len(text), count)
    out: list[str] = []
    start = 0
    for n in range(count):
        end = start + size + (1 if n < extra else 0)
        out.append(text[start:end])
        start = end
    return [p for p in out if p] or [""]


class OpenAIChatScript:
    """A Chat Completions stream (``chat.completion.chunk`` objects, then ``[DONE]``)."""

    def __init__(self, *, model: str = "toolstitch-test", id: str = "chatcmpl-test") -> None:
        self.model = model
        self.id = id
        self.steps: list[Step] = []
        self._role_sent = False
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, dict[str, str]] = {}
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None
        self._done = False

    def _chunk(self, delta: dict[str, Any] | None, finish: str | None = None) -> OpenAIChatScript:
        body = dict(delta or {})
        if not self._role_sent:
            body = {"role": "assistant", **body}
            self._role_sent = True
        return self.raw(
            {
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": self.model,
                "choices": [{"index": 0, "delta": body, "finish_reason": finish}],
            }
        )

    def raw(self, data: Any, *, event: str | None = None) -> OpenAIChatScript:
        """Send ``data`` (a dict as JSON, or a string as is) as one SSE message."""
        self.steps.append(frame(data, event))
        return self

    def text(self, text: str, *, pieces: int = 1) -> OpenAIChatScript:
        """Stream visible text, in ``pieces`` chunks."""
        for piece in cut(text, pieces):
            self._text.append(piece)
            self._chunk({"content": piece})
        return self

    def reasoning(self, text: str) -> OpenAIChatScript:
        """Stream ``reasoning_content``."""
        self._reasoning.append(text)
        return self._chunk({"reasoning_content": text})

    def call(
        self,
        id: str | None,
        name: str,
        arguments: str = "",
        *,
        index: int | None = None,
        pieces: int = 1,
    ) -> OpenAIChatScript:
        """Start a tool call (next free index unless given) and stream its arguments."""
        if index is None:
            index = max(self._calls, default=-1) + 1
        self._calls[index] = {"id": id or "", "name": name, "arguments": ""}
        start: dict[str, Any] = {"index": index, "type": "function", "function": {"name": name}}
        if id is not None:
            start["id"] = id
        start["function"]["arguments"] = ""
        self._chunk({"tool_calls": [start]})
        if arguments:
            for piece in cut(arguments, pieces):
                self.arguments(index, piece)
        return self

    def arguments(self, index: int, fragment: str) -> OpenAIChatScript:
        """Stream one more arguments fragment of call ``index``."""
        self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        self._calls[index]["arguments"] += fragment
        return self._chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})

    def hold(self, until: Any, *, label: str = "", timeout: float = 10.0) -> OpenAIChatScript:
        """Stop here until ``until`` is set (see ``Hold``)."""
        self.steps.append(Hold(until, timeout, label))
        return self

    def sleep(self, seconds: float) -> OpenAIChatScript:
        self.steps.append(Sleep(seconds))
        return self

    def finish(self, reason: str = "stop") -> OpenAIChatScript:
        """The chunk with ``finish_reason``."""
        self._finish = reason
        return self._chunk({}, reason)

    def usage(self, prompt_tokens: int, completion_tokens: int) -> OpenAIChatScript:
        """The final usage chunk (``choices: []``)."""
        self._usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        return self.raw(
            {
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": self.model,
                "choices": [],
                "usage": self._usage,
            }
        )

    def error(self, message: str, *, type: str = "server_error") -> OpenAIChatScript:
        """An error object in the stream (the SDK raises ``APIError`` on it)."""
        return self.raw({"error": {"message": message, "type": type, "code": None}})

    def reply(self) -> Reply:
        """The ``Reply``: these chunks then ``data: [DONE]``."""
        steps = [*self.steps, DONE]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._text) or None}
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
                for _, call in sorted(self._calls.items())
            ]
        body: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion",
            "created": 0,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish or "stop"}],
        }
        if self._usage is not None:
            body["usage"] = self._usage
        return Reply(steps=steps, json_body=body)


class AnthropicScript:
    """A Messages stream (``message_start`` … ``message_stop``)."""

    def __init__(
        self, *, model: str = "toolstitch-test", id: str = "msg_test", input_tokens: int = 0
    ) -> None:
        self.model = model
        self.id = id
        self.input_tokens = input_tokens
        self.steps: list[Step] = []
        self._blocks: list[dict[str, Any]] = []
        self._open: int | None = None
        self._stop: str | None = None
        self._output_tokens = 0
        self._finished = False

    def _event(self, kind: str, data: dict[str, Any]) -> AnthropicScript:
        self.steps.append(frame({"type": kind, **data}, kind))
        return self

    def raw(self, data: Any, *, event: str | None = None) -> AnthropicScript:
        """Send ``data`` as one SSE message (``event`` defaults to its ``type``)."""
        if event is None and isinstance(data, dict):
            event = data.get("type")
        self.steps.append(frame(data, event))
        return self

    def _start(self, block: dict[str, Any]) -> int:
        self.close_block()
        index = len(self._blocks)
        self._blocks.append(dict(block))
        self._open = index
        self._event("content_block_start", {"index": index, "content_block": block})
        return index

    def close_block(self) -> AnthropicScript:
        """End the open content block (``content_block_stop``)."""
        if self._open is not None:
            index, self._open = self._open, None
            self._event("content_block_stop", {"index": index})
        return self

    def text(self, text: str, *, pieces: int = 1) -> AnthropicScript:
        """Stream text (in the open text block, or a new one)."""
        if self._open is None or self._blocks[self._open]["type"] != "text":
            self._start({"type": "text", "text": ""})
        assert self._open is not None
        for piece in cut(text, pieces):
            self._blocks[self._open]["text"] += piece
            self._event(
                "content_block_delta",
                {"index": self._open, "delta": {"type": "text_delta", "text": piece}},
            )
        return self

    def thinking(self, text: str, *, signature: str = "sig") -> AnthropicScript:
        """A complete thinking block."""
        index = self._start({"type": "thinking", "thinking": "", "signature": ""})
        self._blocks[index].update(thinking=text, signature=signature)
        self._event(
            "content_block_delta",
            {"index": index, "delta": {"type": "thinking_delta", "thinking": text}},
        )
        self._event(
            "content_block_delta",
            {"index": index, "delta": {"type": "signature_delta", "signature": signature}},
        )
        return self.close_block()

    def call(
        self, id: str, name: str, arguments: str = "", *, pieces: int = 1, close: bool = True
    ) -> AnthropicScript:
        """A ``tool_use`` block streaming ``arguments``; ``close=False`` leaves it open (add
        fragments with ``arguments``, end it with ``close_block``)."""
        index = self._start({"type": "tool_use", "id": id, "name": name, "input": {}})
        self._blocks[index]["partial"] = ""
        if arguments:
            for piece in cut(arguments, pieces):
                self.arguments(piece)
        if close:
            self.close_block()
        return self

    def arguments(self, fragment: str) -> AnthropicScript:
        """One more ``input_json_delta`` for the open tool block."""
        assert self._open is not None, "no open tool_use block"
        self._blocks[self._open]["partial"] += fragment
        return self._event(
            "content_block_delta",
            {"index": self._open, "delta": {"type": "input_json_delta", "partial_json": fragment}},
        )

    def hold(self, until: Any, *, label: str = "", timeout: float = 10.0) -> AnthropicScript:
        """Stop here until ``until`` is set (see ``Hold``)."""
        self.steps.append(Hold(until, timeout, label))
        return self

    def sleep(self, seconds: float) -> AnthropicScript:
        self.steps.append(Sleep(seconds))
        return self

    def finish(self, stop_reason: str = "end_turn", *, output_tokens: int = 0) -> AnthropicScript:
        """``message_delta`` (stop reason, output tokens) and ``message_stop``."""
        self.close_block()
        self._stop = stop_reason
        self._output_tokens = output_tokens
        self._finished = True
        self._event(
            "message_delta",
            {
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        )
        return self._event("message_stop", {})

    def error(self, message: str, *, type: str = "overloaded_error") -> AnthropicScript:
        """An ``error`` event (the SDK raises on it)."""
        return self._event("error", {"error": {"type": type, "message": message}})

    def reply(self) -> Reply:
        """The ``Reply``: ``message_start``, these events."""
        start = frame(
            {
                "type": "message_start",
                "message": {
                    "id": self.id,
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": self.input_tokens, "output_tokens": 1},
                },
            },
            "message_start",
        )
        content: list[dict[str, Any]] = []
        for block in self._blocks:
            block = dict(block)
            partial = block.pop("partial", None)
            if block["type"] == "tool_use" and partial:
                try:
                    block["input"] = json.loads(partial)
                except ValueError:
                    block["input"] = {}
            content.append(block)
        body = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": self._stop or "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self._output_tokens},
        }
        return Reply(steps=[start, *self.steps], json_body=body)
