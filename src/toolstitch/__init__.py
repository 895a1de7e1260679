"""toolstitch: streamed LLM tool-call fragments in, complete and validated tool calls out.

The core is sans-I/O: feed an ``Assembler`` the tool-call deltas of one response and it
returns events (``CallStarted``, ``ArgumentsDelta``, ``CallReady``, ``CallDiscarded``,
``CallWarning``) the moment each becomes true. See docs/ for the concepts.
"""

from __future__ import annotations

from ._assembler import GENERATED_ID_PREFIX, Assembler
from ._deltas import Delta
from ._errors import (
    ConflictingId,
    InvalidDelta,
    LimitExceeded,
    MalformedArguments,
    MissingName,
    ProviderError,
    ProviderQuirk,
    StreamDecodeError,
    StreamError,
    ToolCallError,
    TrailingArguments,
    TruncatedArguments,
    UnexpectedDelta,
)
from ._events import (
    ArgumentsDelta,
    CallDiscarded,
    CallReady,
    CallSnapshot,
    CallStarted,
    CallState,
    CallWarning,
    Event,
    ToolCall,
)
from ._limits import Limits
from ._tokenizer import BACKEND as JSON_BACKEND
from ._version import __version__

__all__ = [
    "GENERATED_ID_PREFIX",
    "JSON_BACKEND",
    "ArgumentsDelta",
    "Assembler",
    "CallDiscarded",
    "CallReady",
    "CallSnapshot",
    "CallStarted",
    "CallState",
    "CallWarning",
    "ConflictingId",
    "Delta",
    "Event",
    "InvalidDelta",
    "LimitExceeded",
    "Limits",
    "MalformedArguments",
    "MissingName",
    "ProviderError",
    "ProviderQuirk",
    "StreamDecodeError",
    "StreamError",
    "ToolCall",
    "ToolCallError",
    "TrailingArguments",
    "TruncatedArguments",
    "UnexpectedDelta",
    "__version__",
]
