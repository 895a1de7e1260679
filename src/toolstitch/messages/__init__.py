"""One neutral message shape, and conversion both ways to each provider's wire form.

A conversation is a list of ``Message``: ``SystemMessage``, ``UserMessage``,
``AssistantMessage`` (text, tool calls, reasoning) and ``ToolResult`` (one per call, success
or error). All are frozen dataclasses. ``to_*`` gives a provider's wire form, ``from_*``
reads it back:

=====================  ==========================================  =============================
provider               ``to_*`` returns                            tool calls / results
=====================  ==========================================  =============================
OpenAI Chat            ``messages`` (list of dicts)                ``tool_calls`` / ``tool``
                                                                   messages with ``tool_call_id``
OpenAI Responses       ``input`` items (list of dicts)             ``function_call`` /
                                                                   ``function_call_output``
Anthropic              ``(system, messages)``                      ``tool_use`` / ``tool_result``
Gemini                 ``(system_instruction, contents)``          ``functionCall`` /
                                                                   ``functionResponse``
=====================  ==========================================  =============================

Rules worth knowing:

* Arguments are always a dict here, so the wire form never carries invalid JSON.
* An error result is ``is_error=True``. Anthropic has a flag for it (``is_error``) and Gemini
  a key (``response: {"error": ...}``); the OpenAI forms have neither, so there the content
  itself says it: ``tool_error`` makes every error content start with ``"Error"`` (adding
  ``"Error: "`` when the message does not), the OpenAI writers add the same prefix to an
  error content that lacks it, and the OpenAI readers take a content starting with
  ``"Error:"`` or ``"Error ["`` as an error.
* Gemini calls may have no id: reading, a call without one gets
  ``f"{GENERATED_ID_PREFIX}{n}"`` (``n`` counts the calls of the conversation) and each
  ``functionResponse`` without one is paired *by position* with the calls of the model turn
  before it; writing, such generated ids are left out again (ids an ``id_factory`` made are
  the caller's own: written as they are). ``thoughtSignature`` values are
  carried on ``FunctionCall.signature``, ``Reasoning.signature`` and
  ``AssistantMessage.signature`` (the text part's) and written back where they came from.
* Anthropic needs its ``thinking`` blocks signed: reasoning without a signature is not
  written (it would be rejected). OpenAI Chat writes reasoning as ``reasoning_content`` only
  when asked (``include_reasoning=True``; DeepSeek-style servers want it back, others refuse
  unknown keys).
* The neutral order inside one assistant turn is reasoning, text, calls.

Layout: ``_neutral`` holds the shape and the rules several forms share (arguments, content
text, the OpenAI error prefix, grouped results); each wire form has its own module
(``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini``) with its roles, part
types and id rules. Import from ``toolstitch.messages`` itself: the module names are not
part of the API.
"""

from __future__ import annotations

from ._neutral import (
    ERROR_PREFIX,
    AssistantMessage,
    FunctionCall,
    Message,
    Reasoning,
    SystemMessage,
    ToolResult,
    UserMessage,
    tool_error,
    tool_result,
)
from .anthropic import from_anthropic, to_anthropic
from .gemini import from_gemini, to_gemini
from .openai_chat import from_openai_chat, to_openai_chat
from .openai_responses import from_openai_responses, to_openai_responses

__all__ = [
    "ERROR_PREFIX",
    "AssistantMessage",
    "FunctionCall",
    "Message",
    "Reasoning",
    "SystemMessage",
    "ToolResult",
    "UserMessage",
    "from_anthropic",
    "from_gemini",
    "from_openai_chat",
    "from_openai_responses",
    "to_anthropic",
    "to_gemini",
    "to_openai_chat",
    "to_openai_responses",
    "tool_error",
    "tool_result",
]
