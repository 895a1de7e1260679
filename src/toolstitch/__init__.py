"""toolstitch: streamed LLM tool-call fragments in, complete and validated tool calls out.

The core is sans-I/O: feed an ``Assembler`` the tool-call deltas of one response and it
returns events (``CallStarted``, ``ArgumentsDelta``, ``CallReady``, ``CallDiscarded``,
``CallWarning``) the moment each becomes true. See docs/ for the concepts.
"""

from __future__ import annotations

from toolstitch.adapters.quirk_codes import QUIRK_CODES as _ADAPTER_CODES
from toolstitch.core.assembler import Assembler
from toolstitch.core.deltas import Delta
from toolstitch.core.ids import GENERATED_ID_PREFIX
from toolstitch.json.tokenizer import BACKEND as JSON_BACKEND
from toolstitch.stitch.recovery import ToolErrorReply, tool_error_reply
from toolstitch.stitch.stitcher import AsyncStitch, Stitch, Stitcher, StitchResult, astitch, stitch
from toolstitch.text.formats import CODES as _TEXT_CODES
from toolstitch.text.formats import TEXT_FORMATS, TextFormat
from toolstitch.vocab.call_events import (
    ArgumentsDelta,
    ArgumentsValue,
    CallDiscarded,
    CallReady,
    CallSnapshot,
    CallStarted,
    CallState,
    CallWarning,
    Event,
    ToolCall,
)
from toolstitch.vocab.endings import Ending
from toolstitch.vocab.errors import (
    ConflictingId,
    InvalidDelta,
    LimitExceeded,
    MalformedArguments,
    MalformedCall,
    MissingName,
    ProviderError,
    ProviderQuirk,
    SchemaViolation,
    StreamDecodeError,
    StreamError,
    ToolCallError,
    TrailingArguments,
    TruncatedArguments,
    UnexpectedDelta,
    UnknownTool,
    UnreadField,
    UsageError,
)
from toolstitch.vocab.limits import Limits
from toolstitch.vocab.native import NATIVE
from toolstitch.vocab.stream_events import (
    CustomToolCall,
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    RefusalDelta,
    ServerToolCall,
    StreamEvent,
    StreamFailed,
    StreamWarning,
    TextDelta,
    TextSignature,
    Usage,
)

from ._version import __version__
from .adapters import PROVIDERS

#: Every ``quirk-…`` code toolstitch emits, with what it means: each provider adapter's, and
#: the text formats' (docs/quirks.md has the table).
QUIRK_CODES: dict[str, str] = {**_ADAPTER_CODES, **_TEXT_CODES}

__all__ = [
    "GENERATED_ID_PREFIX",
    "JSON_BACKEND",
    "NATIVE",
    "PROVIDERS",
    "QUIRK_CODES",
    "TEXT_FORMATS",
    "ArgumentsDelta",
    "ArgumentsValue",
    "Assembler",
    "AsyncStitch",
    "CallDiscarded",
    "CallReady",
    "CallSnapshot",
    "CallStarted",
    "CallState",
    "CallWarning",
    "ConflictingId",
    "CustomToolCall",
    "Delta",
    "Ending",
    "Event",
    "FinishReason",
    "InvalidDelta",
    "LimitExceeded",
    "Limits",
    "MalformedArguments",
    "MalformedCall",
    "MissingName",
    "ProviderError",
    "ProviderQuirk",
    "ReasoningBlock",
    "ReasoningDelta",
    "RefusalDelta",
    "SchemaViolation",
    "ServerToolCall",
    "Stitch",
    "StitchResult",
    "Stitcher",
    "StreamDecodeError",
    "StreamError",
    "StreamEvent",
    "StreamFailed",
    "StreamWarning",
    "TextDelta",
    "TextFormat",
    "TextSignature",
    "ToolCall",
    "ToolCallError",
    "ToolErrorReply",
    "TrailingArguments",
    "TruncatedArguments",
    "UnexpectedDelta",
    "UnknownTool",
    "UnreadField",
    "Usage",
    "UsageError",
    "__version__",
    "astitch",
    "stitch",
    "tool_error_reply",
]
