"""Every error toolstitch reports, each with a stable ``code``.

The tree::

    Exception
     ├── ToolCallError                 a problem with one call (the model's fault)
     │    ├── MalformedArguments        "malformed-arguments"
     │    │    └── MalformedCall        "malformed-call"       (a text format's markup)
     │    ├── TruncatedArguments        "truncated-arguments"
     │    ├── MissingName               "missing-name"
     │    ├── LimitExceeded             "limit-exceeded"
     │    ├── UnknownTool               "unknown-tool"
     │    ├── SchemaViolation           "schema-violation"     (a discard, or a warning by policy)
     │    ├── TrailingArguments         "trailing-arguments"   (a warning: the call stands)
     │    ├── ConflictingId             "conflicting-id"       (a warning: the first id stands)
     │    ├── UnexpectedDelta           "unexpected-delta"     (a warning: the delta was ignored)
     │    ├── UnreadField               "unread-field"         (a warning: a key no shape reads)
     │    └── ProviderQuirk             "quirk-…"              (a warning: a quirk was normalised)
     ├── StreamError                   a problem with the stream as a whole
     │    ├── StreamDecodeError         "stream-decode-error"  (bytes that are not the format)
     │    └── ProviderError             "provider-error"       (an error event sent in the stream)
     └── UsageError                    toolstitch used wrongly (the caller's fault): raised
          └── InvalidDelta              "invalid-delta"  (also TypeError; ToolCallError until 1.0)

Call errors are *values*: the assembler puts them on ``CallDiscarded`` / ``CallWarning``
events and never raises them. Stream errors ride on ``StreamFailed`` events, except that the
stream layer raises ``StreamDecodeError`` for bytes in no known format. A ``UsageError`` is
always raised: ``InvalidDelta``, which ``Assembler.feed`` raises for input that is not a delta
at all (a programming error of the caller, not of the model), and which is a ``TypeError`` too.

``InvalidDelta`` used to sit under ``ToolCallError``. It still derives from it, so that
``except ToolCallError:`` written around ``feed`` keeps catching it; that base is deprecated
and goes in 1.0: catch ``InvalidDelta``, ``UsageError`` or ``TypeError`` instead. (No alias
or warning can carry this: ``except`` looks only at the class's bases.)

Every error carries what a caller needs to act on it, and ``str(error)`` is a message a
model can act on too. Errors are immutable: their fields are set by ``__init__`` and then
only read, because the events that carry them are frozen values (assigning raises
``AttributeError``; Python's own ``__traceback__``, ``__cause__``, ``__context__`` and
``add_note`` still work). ``ToolCallError.with_call`` gives a copy that names its call.
They pickle and copy with every field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self from Python 3.11 on

__all__ = [
    "ConflictingId",
    "InvalidDelta",
    "LimitExceeded",
    "MalformedArguments",
    "MalformedCall",
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
    "UsageError",
]

# What Python itself (raise, ``raise … from``, ``add_note``, contextlib, traceback clearing)
# sets on an exception after it was built: never a field of ours, so always allowed.
_PYTHON_SETS = frozenset(
    {"__traceback__", "__cause__", "__context__", "__suppress_context__", "__notes__"}
)

_E = TypeVar("_E", bound="_Error")


def _rebuild(cls: type[_E], args: tuple[Any, ...], fields: dict[str, Any]) -> _E:
    """An error of class ``cls`` with these ``args`` and fields, built without ``__init__``.

    How errors unpickle and copy, and how ``with_call`` builds its copy: the fields are
    values an ``__init__`` already took, and ``__setattr__`` would refuse them.
    """
    error = cls.__new__(cls, *args)  # BaseException.__new__ sets ``args``
    error.__dict__.update(fields)
    return error


class _Error(Exception):
    """What every error here shares: a ``code``, a ``message``, and fields that never change.

    ``__init__`` writes the fields straight into the instance dict; after it, ``__setattr__``
    and ``__delattr__`` refuse everything but what Python itself sets on exceptions.
    """

    code: str
    message: str

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.__dict__["message"] = message

    def __setattr__(self, name: str, value: object) -> None:
        if name not in _PYTHON_SETS:
            raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name not in _PYTHON_SETS:
            raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")
        super().__delattr__(name)

    def __reduce__(self) -> tuple[Any, ...]:
        # BaseException's own would call the class with ``args`` alone (the message), which
        # the required keyword-only fields refuse, and then set the fields, which we refuse.
        return _rebuild, (type(self), self.args, dict(vars(self)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((type(self), self.message))


class ToolCallError(_Error):
    """A problem with one tool call. ``code`` is stable; the message is for people."""

    code = "tool-call-error"
    index: int | None
    call_id: str | None
    name: str | None

    def __init__(
        self,
        message: str,
        *,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message)
        self.__dict__.update(index=index, call_id=call_id, name=name)

    def with_call(self, *, index: int | None, call_id: str | None, name: str | None) -> Self:
        """A new error like this one (same class, code, message and every other field) that
        names its call: ``index``, ``call_id`` and ``name``. The error itself never changes."""
        fields = {**vars(self), "index": index, "call_id": call_id, "name": name}
        if "__notes__" in fields:  # add_note appends in place: the copy gets its own list
            fields["__notes__"] = list(fields["__notes__"])
        return _rebuild(type(self), self.args, fields)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, index={self.index!r}, {self.message!r})"

    def __hash__(self) -> int:
        return hash((type(self), self.message, self.index))


class _OffsetError(ToolCallError):
    """An error located in the arguments text."""

    offset: int
    line: int
    column: int
    snippet: str

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
        self.__dict__.update(offset=offset, line=line, column=column, snippet=snippet)

    def placed(self, *, offset: int, line: int, column: int) -> Self:
        """A new error like this one, at another position: its offset, line and column (and
        the position its message states) are those given. A text format places a fault the
        core found in arguments copied from a model's text at its position in that text."""
        message = self.message
        said = f"at line {self.line}, column {self.column} (offset {self.offset})"
        where = f"at line {line}, column {column} (offset {offset}) of the model's text"
        message = message.replace(said, where) if said in message else f"{message} ({where})"
        fields = {**vars(self), "offset": offset, "line": line, "column": column}
        fields["message"] = message
        if "__notes__" in fields:
            fields["__notes__"] = list(fields["__notes__"])
        return _rebuild(type(self), (message,), fields)


class MalformedArguments(_OffsetError):
    """The arguments can no longer become a JSON object.

    ``offset`` is the 0-based index (in characters of the arguments text) of the first
    character that no valid JSON object text can contain at that place; ``line`` and
    ``column`` are 1-based; ``snippet`` shows the text around it with a caret under it;
    ``expected`` says what would have been valid there.
    """

    code = "malformed-arguments"
    expected: str

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
        self.__dict__.update(expected=expected)


class MalformedCall(MalformedArguments):
    """A call written into a model's text whose markup is not its format's (a header that
    names no tool, a parameter tag that never closes, a call list that is not a list): the
    call is discarded, its siblings stand. A ``MalformedArguments`` whose fault lies in the
    markup around the arguments rather than in them.

    ``offset``, ``line`` and ``column`` are the position in the model's text (0-based offset,
    1-based line and column) of the first character that the format cannot have there;
    ``snippet`` shows the text around it; ``expected`` says what would have been valid.
    """

    code = "malformed-call"


class TrailingArguments(_OffsetError):
    """Non-whitespace text after the arguments object closed. A warning: the call stands."""

    code = "trailing-arguments"


class TruncatedArguments(ToolCallError):
    """The call ended before its arguments object closed: the provider closed it, or the
    response ended, with an unclosed prefix; or the response was cut (the token limit, a
    content filter, an error, a stream that stopped...) before its arguments arrived at all.

    ``ending`` says how the call ended (an ``Ending`` value: ``"closed"``, ``"complete"``,
    ``"length"``, ``"content-filter"``, ``"error"``, ``"abandoned"``...; see
    docs/concepts.md, "How a response ends"), or ``None`` where it was not said.
    """

    code = "truncated-arguments"
    ending: str | None

    def __init__(
        self,
        message: str,
        *,
        ending: str | None = None,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message, index=index, call_id=call_id, name=name)
        self.__dict__.update(ending=ending)


class MissingName(ToolCallError):
    """The call never received a function name."""

    code = "missing-name"


class LimitExceeded(ToolCallError):
    """A call went past one of the assembler's ``Limits``; ``limit`` names the field.

    ``offset`` is where in the arguments text the limit was passed, when that is meaningful.
    """

    code = "limit-exceeded"
    limit: str
    value: int
    offset: int | None

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
        self.__dict__.update(limit=limit, value=value, offset=offset)


class UnknownTool(ToolCallError):
    """With tools declared: the name can no longer become a declared tool's name.

    ``declared`` lists the declared names; ``closest`` is the most similar one, if any.
    """

    code = "unknown-tool"
    declared: tuple[str, ...]
    closest: str | None

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
        self.__dict__.update(declared=declared, closest=closest)


class SchemaViolation(ToolCallError):
    """The arguments break the tool's JSON Schema.

    ``path`` is a JSON Pointer to the offending value (``/items/3/name``), ``keyword`` the
    schema keyword it breaks, ``offset`` where in the arguments text the violation became
    certain (the value's or key's first character), when known.
    """

    code = "schema-violation"
    path: str
    keyword: str
    offset: int | None

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
        self.__dict__.update(path=path, keyword=keyword, offset=offset)


class ConflictingId(ToolCallError):
    """A later delta named a different id for a call that already had one. A warning."""

    code = "conflicting-id"
    received: str

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
        self.__dict__.update(received=received)


class UnexpectedDelta(ToolCallError):
    """A delta that cannot apply any more (e.g. name text after the call was ready). A warning."""

    code = "unexpected-delta"


class UnreadField(ToolCallError):
    """A delta mapping carried a key that no delta shape reads (a typo such as
    ``argumentz``, another library's field): the rest of the delta was applied, and the key
    is reported once per call, never dropped in silence. A warning. ``key`` names it
    (``function.…`` for a key of the ``function`` mapping)."""

    code = "unread-field"
    key: str

    def __init__(
        self,
        message: str,
        *,
        key: str,
        index: int | None = None,
        call_id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message, index=index, call_id=call_id, name=name)
        self.__dict__.update(key=key)


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
        self.__dict__.update(code=code)


class StreamError(_Error):
    """A problem with the stream as a whole rather than with one call."""

    code = "stream-error"


class StreamDecodeError(StreamError):
    """The bytes are not the expected stream format (or pass a decoder's size limit)."""

    code = "stream-decode-error"
    offset: int | None

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        super().__init__(message)
        self.__dict__.update(offset=offset)


class ProviderError(StreamError):
    """The provider sent an error inside the stream (e.g. Anthropic ``event: error``)."""

    code = "provider-error"
    kind: str | None
    payload: object

    def __init__(self, message: str, *, kind: str | None = None, payload: object = None) -> None:
        super().__init__(message)
        self.__dict__.update(kind=kind, payload=payload)


class UsageError(_Error):
    """toolstitch was used wrongly: the caller's fault, neither the model's nor the provider's.

    Raised (never put on an event), before anything changed. Catch it to tell a bug in your
    own code from bad model output, which arrives as events instead.
    """

    code = "usage-error"


class InvalidDelta(UsageError, ToolCallError, TypeError):
    """Raised by ``Assembler.feed`` for input that is not a tool-call delta at all.

    The caller's fault, not the model's; the assembler's state is exactly as before. A
    ``TypeError`` too. Also, deprecated, a ``ToolCallError`` (its old place in the tree), so
    that ``except ToolCallError:`` around ``feed`` keeps working; that base goes in 1.0.
    """

    code = "invalid-delta"
