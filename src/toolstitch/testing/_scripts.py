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
from typing import Any, TypeVar

from ._server import Hold, Reply, Sleep, Step
from ._sse import DONE, frame

__all__ = ["AnthropicScript", "GeminiScript", "OpenAIChatScript", "OpenAIResponsesScript", "cut"]

_S = TypeVar("_S", bound="_Steps")


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


class _Steps:
    """What every builder shares: its ``steps``, and the pauses between them."""

    steps: list[Step]

    def hold(self: _S, until: Any, *, label: str = "", timeout: float = 10.0) -> _S:
        """Stop here until ``until`` is set (see ``Hold``)."""
        self.steps.append(Hold(until, timeout, label))
        return self

    def sleep(self: _S, seconds: float) -> _S:
        """Stop here for ``seconds``."""
        self.steps.append(Sleep(seconds))
        return self


class _TypedSteps(_Steps):
    """A builder of streams whose events name their ``type`` (Anthropic, Responses)."""

    def raw(self: _S, data: Any, *, event: str | None = None) -> _S:
        """Send ``data`` as one SSE message (``event`` defaults to its ``type``)."""
        if event is None and isinstance(data, dict):
            event = data.get("type")
        self.steps.append(frame(data, event))
        return self


class OpenAIChatScript(_Steps):
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


class AnthropicScript(_TypedSteps):
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


class OpenAIResponsesScript(_TypedSteps):
    """A Responses stream (typed ``response.*`` events, each with its ``sequence_number``):
    ``response.created``, then one output item per ``reasoning`` / ``text`` / ``call``
    (``output_item.added``, its deltas, its ``.done`` events, ``output_item.done``), then
    ``finish``'s ``response.completed`` (or ``incomplete`` / ``failed``)."""

    def __init__(self, *, model: str = "toolstitch-test", id: str = "resp_test") -> None:
        self.model = model
        self.id = id
        self.steps: list[Step] = []
        self._sequence = 1  # 0 is response.created, which reply() puts first
        self._output: list[dict[str, Any]] = []
        self._status = "completed"
        self._usage: dict[str, Any] | None = None

    def event(self, kind: str, **data: Any) -> OpenAIResponsesScript:
        """One ``kind`` event (``event:`` line and ``type``) with ``data`` and the next
        ``sequence_number``."""
        self.steps.append(frame({"type": kind, **data, "sequence_number": self._sequence}, kind))
        self._sequence += 1
        return self

    def _response(self, status: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "response",
            "created_at": 0,
            "model": self.model,
            "status": status,
            "output": [dict(item) for item in self._output],
            "usage": self._usage,
        }

    def _item(self, item: dict[str, Any], body: list[tuple[str, dict[str, Any]]]) -> int:
        """Stream one output item: added (as it starts), ``body``'s events, done (whole)."""
        index = len(self._output)
        self._output.append(item)
        start = {**item, "status": "in_progress"} if "status" in item else item
        if item["type"] == "function_call":
            start = {**start, "arguments": ""}
        elif item["type"] == "message":
            start = {**start, "content": []}
        elif item["type"] == "reasoning":
            start = {k: v for k, v in start.items() if k != "encrypted_content"}
            start["summary"] = []
        self.event("response.output_item.added", output_index=index, item=start)
        for kind, data in body:
            self.event(kind, output_index=index, item_id=item.get("id", ""), **data)
        self.event("response.output_item.done", output_index=index, item=item)
        return index

    def reasoning(
        self,
        id: str,
        summary: tuple[str, ...] | list[str] = (),
        *,
        encrypted_content: str | None = None,
    ) -> OpenAIResponsesScript:
        """A ``reasoning`` item: its ``summary_text`` parts streamed, then the whole item
        (with ``encrypted_content`` when given, as ``include=["reasoning.encrypted_content"]``
        gets it)."""
        item: dict[str, Any] = {
            "id": id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": text} for text in summary],
        }
        if encrypted_content is not None:
            item["encrypted_content"] = encrypted_content
        body: list[tuple[str, dict[str, Any]]] = []
        for n, text in enumerate(summary):
            part = {"summary_index": n}
            body.append(("response.reasoning_summary_part.added", part))
            body.append(("response.reasoning_summary_text.delta", {**part, "delta": text}))
            body.append(("response.reasoning_summary_text.done", {**part, "text": text}))
        self._item(item, body)
        return self

    def text(self, text: str, *, pieces: int = 1, id: str | None = None) -> OpenAIResponsesScript:
        """An assistant ``message`` item whose one ``output_text`` part streams ``text``."""
        part = {"type": "output_text", "text": text, "annotations": []}
        item = {
            "id": id or f"msg_{len(self._output)}",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [part],
        }
        where = {"content_index": 0}
        body: list[tuple[str, dict[str, Any]]] = [
            ("response.content_part.added", {**where, "part": {**part, "text": ""}})
        ]
        body += [
            ("response.output_text.delta", {**where, "delta": piece, "logprobs": []})
            for piece in cut(text, pieces)
        ]
        body.append(("response.output_text.done", {**where, "text": text, "logprobs": []}))
        body.append(("response.content_part.done", {**where, "part": part}))
        self._item(item, body)
        return self

    def call(
        self,
        call_id: str,
        name: str,
        arguments: str = "",
        *,
        pieces: int = 1,
        id: str | None = None,
    ) -> OpenAIResponsesScript:
        """A ``function_call`` item streaming ``arguments`` (``id`` is the item's id,
        ``call_id`` the call's)."""
        item = {
            "id": id or f"fc_{len(self._output)}",
            "type": "function_call",
            "status": "completed",
            "call_id": call_id,
            "name": name,
            "arguments": arguments,
        }
        body: list[tuple[str, dict[str, Any]]] = []
        if arguments:
            body += [
                ("response.function_call_arguments.delta", {"delta": piece})
                for piece in cut(arguments, pieces)
            ]
        body.append(("response.function_call_arguments.done", {"arguments": arguments}))
        self._item(item, body)
        return self

    def finish(
        self, status: str = "completed", *, input_tokens: int = 0, output_tokens: int = 0
    ) -> OpenAIResponsesScript:
        """``response.completed`` (``status="incomplete"``: ``response.incomplete``,
        ``"failed"``: ``response.failed``) with the whole response and its usage."""
        self._status = status
        self._usage = {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        }
        return self.event(f"response.{status}", response=self._response(status))

    def error(self, message: str, *, code: str = "server_error") -> OpenAIResponsesScript:
        """An ``error`` event (the SDK raises ``APIError`` on it)."""
        return self.event("error", code=code, message=message, param=None)

    def reply(self) -> Reply:
        """The ``Reply``: ``response.created``, these events."""
        created = frame(
            {
                "type": "response.created",
                "response": {**self._response("in_progress"), "output": [], "usage": None},
                "sequence_number": 0,
            },
            "response.created",
        )
        return Reply(steps=[created, *self.steps], json_body=self._response(self._status))


class GeminiScript(_Steps):
    """A Gemini ``streamGenerateContent?alt=sse`` stream: each step one
    ``GenerateContentResponse`` chunk whose one candidate holds model ``parts`` (wire
    camelCase), the last with ``finishReason`` and ``usageMetadata``. No end marker: the
    stream just ends."""

    def __init__(self, *, model: str = "toolstitch-test", id: str = "resp-test") -> None:
        self.model = model
        self.id = id
        self.steps: list[Step] = []
        self._parts: list[dict[str, Any]] = []
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None

    def _chunk(self, candidate: dict[str, Any], usage: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = {
            "candidates": [{**candidate, "index": 0}],
            "modelVersion": self.model,
            "responseId": self.id,
        }
        if usage is not None:
            body["usageMetadata"] = usage
        self.steps.append(frame(body))

    def parts(self, *parts: dict[str, Any]) -> GeminiScript:
        """One chunk with these ``parts`` as they are."""
        self._parts.extend(parts)
        self._chunk({"content": {"role": "model", "parts": list(parts)}})
        return self

    def text(self, text: str, *, pieces: int = 1, signature: str | None = None) -> GeminiScript:
        """Text in ``pieces`` chunks (``signature``, a ``thoughtSignature``, on the last)."""
        chunks = cut(text, pieces)
        for n, piece in enumerate(chunks):
            self.parts(_signed({"text": piece}, signature if n == len(chunks) - 1 else None))
        return self

    def thought(self, text: str, *, signature: str | None = None) -> GeminiScript:
        """A ``thought: true`` text part (a thought summary)."""
        return self.parts(_signed({"text": text, "thought": True}, signature))

    def call(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        id: str | None = None,
        signature: str | None = None,
    ) -> GeminiScript:
        """A whole ``functionCall`` part (Gemini never streams arguments)."""
        function: dict[str, Any] = {"name": name, "args": dict(args or {})}
        if id is not None:
            function = {"id": id, **function}
        return self.parts(_signed({"functionCall": function}, signature))

    def finish(
        self, reason: str = "STOP", *, prompt_tokens: int = 0, candidates_tokens: int = 0
    ) -> GeminiScript:
        """The last chunk: ``finishReason`` and ``usageMetadata``."""
        self._finish = reason
        self._usage = {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": candidates_tokens,
            "totalTokenCount": prompt_tokens + candidates_tokens,
        }
        self._chunk(
            {"content": {"role": "model", "parts": []}, "finishReason": reason}, self._usage
        )
        return self

    def raw(self, data: Any) -> GeminiScript:
        """Send ``data`` (a dict as JSON, or a string as is) as one SSE message."""
        self.steps.append(frame(data))
        return self

    def reply(self) -> Reply:
        """The ``Reply``; its ``json_body`` (for ``generateContent``) has every part."""
        candidate: dict[str, Any] = {
            "content": {"role": "model", "parts": [dict(p) for p in self._parts]},
            "index": 0,
        }
        if self._finish is not None:
            candidate["finishReason"] = self._finish
        body: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": self.model,
            "responseId": self.id,
        }
        if self._usage is not None:
            body["usageMetadata"] = self._usage
        return Reply(steps=list(self.steps), json_body=body)


def _signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
    return part if signature is None else {**part, "thoughtSignature": signature}
