"""One neutral message shape, and conversion both ways to each provider's wire form.

A conversation is a list of ``Message``: ``SystemMessage``, ``UserMessage``,
``AssistantMessage`` (text, tool calls, reasoning, and their order in ``parts``) and
``ToolResult`` (one per call, success or error). All are frozen dataclasses. ``to_*`` gives
a provider's wire form, ``from_*`` reads it back:

| provider | ``to_*`` returns | tool calls / results |
| --- | --- | --- |
| OpenAI Chat | ``messages`` (list of dicts) | ``tool_calls`` / ``tool`` (by ``tool_call_id``) |
| OpenAI Responses | ``input`` (list of items) | ``function_call`` / ``function_call_output`` |
| Anthropic | ``(system, messages)`` | ``tool_use`` / ``tool_result`` |
| Gemini | ``(system_instruction, contents)`` | ``functionCall`` / ``functionResponse`` |
| Gemini Interactions | ``(system_instruction, input)`` | ``function_call`` / ``function_result`` |
| Bedrock Converse | ``(system, messages)`` | ``toolUse`` / ``toolResult`` |
| Ollama | ``messages`` (list of dicts) | ``tool_calls`` / ``tool`` (by ``tool_name``) |

Rules worth knowing:

* Arguments are always a dict here, so the wire form never carries invalid JSON.
* An error result is ``is_error=True``. Anthropic has a flag for it (``is_error``) and Gemini
  a key (``response: {"error": ...}``); the OpenAI forms and Ollama have neither, so there
  the content itself says it: ``tool_error`` makes every error content start with
  ``"Error"`` (adding ``"Error: "`` when the message does not), those writers add the same
  prefix to an error content that lacks it, and their readers take a content starting with
  ``"Error:"`` or ``"Error ["`` as an error.
* Gemini calls may have no id: reading, a call without one gets
  ``f"{GENERATED_ID_PREFIX}{n}"`` (``n`` counts the calls of the conversation) and each
  ``functionResponse`` without one is paired *by position* with the calls of the model turn
  before it; writing, such generated ids are left out again (ids an ``id_factory`` made are
  the caller's own: written as they are). ``thoughtSignature`` values are
  carried on ``FunctionCall.signature``, ``Reasoning.signature`` and
  ``AssistantMessage.signature`` (the text part's) and written back where they came from.
* Ollama calls may have no id either (generated the same way when read, left out when
  written), and its results carry only ``tool_name``: each ``tool`` message is paired with
  the first unanswered call of that name in the turn before it, else the next by position.
  Its reasoning is one ``thinking`` string, with no signature.
* Anthropic needs its ``thinking`` blocks signed: reasoning without a signature is not
  written (it would be rejected); so does Bedrock (``reasoningContent``), whose
  ``redactedContent`` is written as base64 text, or as ``bytes`` for boto3 with
  ``to_bedrock(..., binary=True)``. OpenAI Chat writes reasoning as ``reasoning_content`` only
  when asked (``include_reasoning=True``; DeepSeek-style servers want it back, others refuse
  unknown keys).
* The neutral order inside one assistant turn is reasoning, text, calls. A turn whose order
  matters on the way back (Anthropic interleaved thinking, Gemini parts that each carry a
  signature, a ``StitchResult.message()``) keeps it in ``AssistantMessage.parts``
  (``Reasoning``, ``TextPart``, ``FunctionCall``), and every writer follows it
  (docs/reasoning.md).
* Responses custom tool calls (free-text input) are not ``FunctionCall``s: a streamed
  ``CustomToolCall`` goes back as ``custom_call_item(call)`` and its answer as
  ``custom_call_output(call_id, output)``, appended to the ``input`` items.

Layout: ``_neutral`` holds the shape and the rules several forms share (arguments, content
text, the OpenAI error prefix, grouped results); each wire form has its own module
(``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini``, ``gemini_interactions``,
``bedrock``, ``ollama``) with its roles, part types and id rules. Import from
``toolstitch.messages`` itself: the module names are not part of the API.
"""

from __future__ import annotations

from ._neutral import (
    ERROR_PREFIX,
    AssistantMessage,
    AssistantPart,
    FunctionCall,
    Message,
    Reasoning,
    SystemMessage,
    TextPart,
    ToolResult,
    UserMessage,
    tool_error,
    tool_result,
)
from .anthropic import from_anthropic, to_anthropic
from .bedrock import from_bedrock, to_bedrock
from .gemini import from_gemini, to_gemini
from .gemini_interactions import from_gemini_interactions, to_gemini_interactions
from .ollama import from_ollama, to_ollama
from .openai_chat import from_openai_chat, to_openai_chat
from .openai_responses import (
    custom_call_item,
    custom_call_output,
    from_openai_responses,
    to_openai_responses,
)

__all__ = [
    "ERROR_PREFIX",
    "AssistantMessage",
    "AssistantPart",
    "FunctionCall",
    "Message",
    "Reasoning",
    "SystemMessage",
    "TextPart",
    "ToolResult",
    "UserMessage",
    "custom_call_item",
    "custom_call_output",
    "from_anthropic",
    "from_bedrock",
    "from_gemini",
    "from_gemini_interactions",
    "from_ollama",
    "from_openai_chat",
    "from_openai_responses",
    "to_anthropic",
    "to_bedrock",
    "to_gemini",
    "to_gemini_interactions",
    "to_ollama",
    "to_openai_chat",
    "to_openai_responses",
    "tool_error",
    "tool_result",
]
