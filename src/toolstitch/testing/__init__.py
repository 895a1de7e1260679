"""Offline testing: a scripted OpenAI-, Anthropic- and Gemini-compatible server; generated streams.

``ScriptedServer`` listens on 127.0.0.1 (an ephemeral port) and answers
``POST /v1/chat/completions``, ``POST /v1/messages``, ``POST /v1/responses`` and
``POST /v1beta/models/{model}:streamGenerateContent`` with scripted or recorded streams,
recording every request. ``OpenAIChatScript``, ``AnthropicScript``,
``OpenAIResponsesScript`` and ``GeminiScript`` build replies;
``Reply.sse`` plays a recorded ``.sse`` file. ``Hold`` keeps a stream open until an event is
set, so that a test can show what happens *before* the stream ends by ordering, not timing::

    started = asyncio.Event()
    script = OpenAIChatScript().call("c1", "lookup", '{"q": 1}').hold(started).finish("tool_calls")
    async with ScriptedServer([script.reply()]) as server:
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test")
        ...

``toolstitch.testing.strategies`` (not imported here: it needs hypothesis, ``pip install
'toolstitch[testing]'``) generates the streams that break agents, for every provider, each
with the outcome toolstitch reports; ``GeneratedStream.reply()`` plays one here.

``PythonAssembler`` and ``PythonStitcher`` are the pure-Python path's classes, beside the
native ones in the same process (for differential tests and benchmarks; docs/native.md).
"""

from __future__ import annotations

from ._paths import PythonAssembler, PythonStitcher
from ._scripts import AnthropicScript, GeminiScript, OpenAIChatScript, OpenAIResponsesScript, cut
from ._server import Hold, RecordedRequest, Reply, ScriptedServer, Sleep

__all__ = [
    "AnthropicScript",
    "GeminiScript",
    "Hold",
    "OpenAIChatScript",
    "OpenAIResponsesScript",
    "PythonAssembler",
    "PythonStitcher",
    "RecordedRequest",
    "Reply",
    "ScriptedServer",
    "Sleep",
    "cut",
]
