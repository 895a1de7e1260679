"""The runner's logger, and what becomes of a tool's exception.

Everything the runner logs goes to the standard ``logging`` logger ``toolstitch.runner``,
which has a ``NullHandler``: nothing is printed unless the application configures logging
(``logging.basicConfig(level=logging.INFO)``, or a handler on that logger).

A tool's exception has two audiences. The application gets all of it: ``ToolFailure``
keeps the exception and its traceback text (for the result event, ``tool_turns`` and the
log, at ``WARNING``). The model gets a message that says which tool failed and how (the
exception's type), never its text or traceback, which may hold paths, hosts, keys or
customer data: ``tool_failure`` makes both. An ``error_message(exception, call) -> str``
hook chooses the model's message instead; a tool that means its message for the model
raises ``ToolError``, whose text is sent as it is.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from toolstitch.vocab.call_events import ToolCall

__all__ = [
    "TRACEBACK_CHARS",
    "ErrorMessage",
    "ToolError",
    "ToolFailure",
    "default_error_message",
    "logger",
    "tool_failure",
]

#: The logger of everything under ``toolstitch.runner``.
logger: Final = logging.getLogger("toolstitch.runner")
logger.addHandler(logging.NullHandler())

#: The longest traceback text kept per failure: a longer one keeps its last characters
#: (where the exception is), after a line saying how much was cut.
TRACEBACK_CHARS: Final = 20_000

ErrorMessage = Callable[[BaseException, ToolCall], str]


class ToolError(Exception):
    """Raised by a tool to tell the model something: its text is the model's message (the
    default ``error_message`` sends it as it is, after ``"Error [tool-error]: "``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFailure:
    """A tool's exception: ``exception`` itself, ``traceback`` (its text, bounded by
    ``TRACEBACK_CHARS``; kept for the application, never sent to the model), ``message``
    (what the model is told) and ``code`` (``"tool-error"`` for a ``ToolError``, else
    ``"tool-exception"``)."""

    exception: BaseException = field(compare=False, hash=False)
    traceback: str
    message: str
    code: str


def default_error_message(exception: BaseException, call: ToolCall) -> str:
    """The model's message for a tool's exception: the tool, the call id and the
    exception's type; a ``ToolError``'s own text."""
    if isinstance(exception, ToolError):
        return f"Error [tool-error]: {exception}"
    return (
        f"Error [tool-exception]: the tool {call.name!r} (call id {call.id}) failed with "
        f"{type(exception).__name__}. Check the arguments and try again, or continue "
        "without this result."
    )


def traceback_text(exception: BaseException) -> str:
    """``exception``'s traceback as text: a longer one than ``TRACEBACK_CHARS`` keeps its
    last ``TRACEBACK_CHARS`` characters, after a line saying how many were cut."""
    text = "".join(traceback.format_exception(type(exception), exception, exception.__traceback__))
    if len(text) <= TRACEBACK_CHARS:
        return text
    cut = len(text) - TRACEBACK_CHARS
    return f"[{cut} characters of the traceback cut]\n" + text[cut:]


def tool_failure(
    exception: BaseException, call: ToolCall, error_message: ErrorMessage | None = None
) -> ToolFailure:
    """What ``exception`` (raised by the tool of ``call``) becomes, logged at ``WARNING``.

    ``error_message`` replaces ``default_error_message``; if it raises or returns something
    other than a non-empty ``str``, that is logged too and the default message is used.
    """
    text = traceback_text(exception)
    code = "tool-error" if isinstance(exception, ToolError) else "tool-exception"
    logger.warning(
        "tool %r (call id %s) raised %s",
        call.name,
        call.id,
        type(exception).__name__,
        exc_info=(type(exception), exception, exception.__traceback__),
    )
    message: object = None
    if error_message is not None:
        try:
            message = error_message(exception, call)
        except Exception:
            logger.exception("the error_message hook raised for tool %r", call.name)
        else:
            if not isinstance(message, str) or not message:
                logger.error(
                    "the error_message hook returned %r for tool %r, not a message",
                    message,
                    call.name,
                )
    if not isinstance(message, str) or not message:
        message = default_error_message(exception, call)
    return ToolFailure(exception=exception, traceback=text, message=message, code=code)
