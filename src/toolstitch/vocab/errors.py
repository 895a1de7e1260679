"""Every error toolstitch reports, each with a stable ``code``.

The tree::

    Exception
     ├── ToolCallError                 a problem with one call (the model's fault)
     │    ├── MalformedArguments        "malformed-arguments"
     │    ├── TruncatedArguments        "truncated-arguments"
     │    ├── MissingName               "missing-name"
     │    ├── LimitExceeded             "limit-exceeded"
     │    ├── UnknownTool               "unknown-tool"
     │    ├── SchemaViolation           "schema-violation"     (a discard, or a warning by policy)
     │    ├── TrailingArguments         "trailing-arguments"   (a warning: the call stands)
     │    ├── ConflictingId             "conflicting-id"       (a warning: the first id stands)
     │    ├── UnexpectedDelta           "unexpected-delta"     (a warning: the delta was ignored)
     │    ├── ProviderQuirk             "quirk-…"              (a warning: a quirk was normalised)
     │    └── InvalidDelta              "invalid-delta"        (raised: the caller's fault)
     └── StreamError                   a problem with the stream as a whole
          ├── StreamDecodeError         "stream-decode-error"  (bytes that are not the format)
          └── ProviderError             "provider-error"       (an error event sent in the stream)

Call errors are *values*: the assembler puts them on ``CallDiscarded`` / ``CallWarning``
events and never raises them, except ``InvalidDelta``, which ``Assembler.feed`` raises for
input that is not a delta at all (a programming error of the caller, not of the model).
Every error carries what a caller needs to act on it, and ``str(error)`` is a message a
model can act on too.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ConflictingId",
    "InvalidDelta",
    "LimitExceeded",
    "MalformedArguments",
    "MissingName",
    "ProviderError",
    "ProviderQuirk",
    "SchemaViolation",
    "StreamDecodeError",
    "StreamError",
    "ToolCallError",
    "TrailingArguments",
    "TruncatedArguments",
    "UnexpectedDelta",
    "UnknownTool",
]


class ToolCallError(Exception):
    """A problem with one tool call. ``code`` is stable; the message is for people."""

    code: str = "tool-call-error"

    def __init__(
        self,
        message: str,
        *,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.index = index
        self.call_id = call_id
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, index={self.index!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((type(self), self.message, self.index))


class _OffsetError(ToolCallError):
    """An error located in the arguments text."""

    def __init__(
        self,
        message: str,
        *,
        offset: int,
        line: int,
        column: int,
        snippet: str,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message, index=index, call_id=call_id, name=name)
        self.offset = offset
        self.line = line
        self.column = column
        self.snippet = snippet


class MalformedArguments(_OffsetError):
    """The arguments can no longer become a JSON object.

    ``offset`` is the 0-based index (in characters of the arguments text) of the first
    character that no valid JSON object text can contain at that place; ``line`` and
    ``column`` are 1-based; ``snippet`` shows the text around it with a caret under it;
    ``expected`` says what would have been valid there.
    """

    code = "malformed-arguments"

    def __init__(
        self,
        message: str,
        *,
        offset: int,
        line: int,
        column: int,
        snippet: str,
        expected: str,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(
            message,
            offset=offset,
            line=line,
            column=column,
            snippet=snippet,
            index=index,
            call_id=call_id,
            name=name,
        )
        self.expected = expected


class TrailingArguments(_OffsetError):
    """Non-whitespace text after the arguments object closed. A warning: the call stands."""

    code = "trailing-arguments"


class TruncatedArguments(ToolCallError):
    """The stream ended (or the provider closed the call) before the object closed."""

    code = "truncated-arguments"


class MissingName(ToolCallError):
    """The call never received a function name."""

    code = "missing-name"


class LimitExceeded(ToolCallError):
    """A call went past one of the assembler's ``Limits``; ``limit`` names the field."""

    code = "limit-exceeded"

    def __init__(
        self,
        message: str,
        *,
        limit: str,
        value: int,
        offset: int | None = None,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message, index=index, call_id=call_id, name=name)
        self.limit = limit
        self.value = value
        #: Where in the arguments text the limit was passed, when that is meaningful.
        self.offset = offset


class UnknownTool(ToolCallError):
    """With tools declared: the name can no longer become a declared tool's name.

    ``declared`` lists the declared names; ``closest`` is the most similar one, if any.
    """

    code = "unknown-tool"

    def __init__(
        self,
        message: str,
        *,
        declared: tuple[str, ...],
        closest: str | None,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message, index=index, call_id=call_id, name=name)
        self.declared = declared
        self.closest = closest


class SchemaViolation(ToolCallError):
    """The arguments break the tool's JSON Schema.

    ``path`` is a JSON Pointer to the offending value (``/items/3/name``), ``keyword`` the
    schema keyword it breaks, ``offset`` where in the arguments text the violation became
    certain (the value's or key's first character), when known.
    """

    code = "schema-violation"

    def __init__(
        self,
        message: str,
        *,
        path: str,
        keyword: str,
        offset: int | None = None,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message, index=index, call_id=call_id, name=name)
        self.path = path
        self.keyword = keyword
        self.offset = offset


class ConflictingId(ToolCallError):
    """A later delta named a different id for a call that already had one. A warning."""

    code = "conflicting-id"

    def __init__(
        self,
        message: str,
        *,
        received: str,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message, index=index, call_id=call_id, name=name)
        self.received = received


class UnexpectedDelta(ToolCallError):
    """A delta that cannot apply any more (e.g. name text after the call was ready). A warning."""

    code = "unexpected-delta"


class ProviderQuirk(ToolCallError):
    """A provider behaviour that the quirk layer recognised and normalised. A warning.

    ``code`` is set per instance to one of the stable ``quirk-…`` codes listed in
    docs/quirks.md, so that no normalisation is ever silent.
    """

    code = "provider-quirk"

    def __init__(
        self,
        code: str,
        message: str,
        *,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message, index=index, call_id=call_id, name=name)
        self.code = code


class InvalidDelta(ToolCallError, TypeError):
    """Raised by ``Assembler.feed`` for input that is not a tool-call delta at all.

    The caller's fault, not the model's; the assembler's state is exactly as before.
    """

    code = "invalid-delta"


class StreamError(Exception):
    """A problem with the stream as a whole rather than with one call."""

    code: str = "stream-error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((type(self), self.message))


class StreamDecodeError(StreamError):
    """The bytes are not the expected stream format (or pass a decoder's size limit)."""

    code = "stream-decode-error"

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


class ProviderError(StreamError):
    """The provider sent an error inside the stream (e.g. Anthropic ``event: error``)."""

    code = "provider-error"

    def __init__(self, message: str, *, kind: str | None = None, payload: object = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.payload = payload


def _join_choices(choices: Sequence[str]) -> str:
    """``["a", "b", "c"]`` → ``"a, b or c"``."""
    if len(choices) <= 1:
        return "".join(choices)
    return ", ".join(choices[:-1]) + " or " + choices[-1]
