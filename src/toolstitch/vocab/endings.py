"""How a call or a response ended: the one vocabulary of end conditions, and the one table
that reads a provider's finish reason into it.

A call still open when it ends is settled by ``core.machine.at_end``. What that rule needs
to know besides the call itself is *how* it ended, and that is an ``Ending``:

* ``CLOSED`` - the provider closed the call itself (an Anthropic, Bedrock or Cohere block
  stop, a Responses ``output_item.done``, a Gemini or Ollama call that arrives whole);
* ``COMPLETE`` - the response ended normally, with its calls complete (``tool_calls``,
  ``stop``, ``tool_use``, ``end_turn``, ``STOP``, ``completed``... see ``FINISH_REASONS``);
* every other member is a cut: the token limit (``LENGTH``), a content filter
  (``CONTENT_FILTER``), another finish reason that is not a normal end (``INCOMPLETE``), an
  error event in the stream (``ERROR``), bytes that are not the format (``DECODE_ERROR``),
  a consumer that stopped reading (``CANCELLED``), or a body that stopped with neither a
  finish reason nor the protocol's last event (``ABANDONED``).

Only the first two let a call whose arguments never arrived become the empty-arguments
object (``WHOLE``); after a cut such a call is discarded (``TruncatedArguments`` naming the
ending). docs/concepts.md, "How a response ends", has the table per provider.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["EMPTY_ARGUMENTS", "FINISH_REASONS", "WHOLE", "Ending", "ending_of", "settle"]

#: The arguments of a call that arrived without any, when its ending leaves it whole: the
#: default of every front door's ``empty_arguments``.
EMPTY_ARGUMENTS: Final = "{}"


class Ending(str, enum.Enum):
    """How a call or a response ended; the values are stable strings."""

    CLOSED = "closed"
    COMPLETE = "complete"
    LENGTH = "length"
    CONTENT_FILTER = "content-filter"
    INCOMPLETE = "incomplete"
    ERROR = "error"
    DECODE_ERROR = "decode-error"
    CANCELLED = "cancelled"
    ABANDONED = "abandoned"

    def __str__(self) -> str:
        return self.value

    @property
    def cut(self) -> bool:
        """Whether this ending cut the response short (anything but ``WHOLE``)."""
        return self not in WHOLE


#: The endings after which a call whose arguments never arrived is complete, with the
#: empty-arguments object: the provider closed it, or the response ended normally.
WHOLE: Final = frozenset({Ending.CLOSED, Ending.COMPLETE})

#: Every provider's finish reason (lower case, ``-`` read as ``_``) that toolstitch knows, and
#: what it means. OpenAI Chat and the OpenAI-compatible servers ``finish_reason``; Anthropic
#: and Bedrock ``stop_reason``/``stopReason``; Gemini ``finishReason``; Cohere
#: ``finish_reason``; Ollama ``done_reason``; the Responses and Gemini Interactions status.
#: A reason not listed here is not a normal end: ``INCOMPLETE``.
FINISH_REASONS: Final[dict[str, Ending]] = {
    # A normal end, its calls complete.
    "stop": Ending.COMPLETE,
    "tool_calls": Ending.COMPLETE,
    "function_call": Ending.COMPLETE,
    "end_turn": Ending.COMPLETE,
    "tool_use": Ending.COMPLETE,
    "stop_sequence": Ending.COMPLETE,
    "completed": Ending.COMPLETE,
    "complete": Ending.COMPLETE,
    "tool_call": Ending.COMPLETE,
    "requires_action": Ending.COMPLETE,
    "eos": Ending.COMPLETE,
    "end_of_turn": Ending.COMPLETE,
    # The token limit.
    "length": Ending.LENGTH,
    "max_tokens": Ending.LENGTH,
    "max_output_tokens": Ending.LENGTH,
    "model_length": Ending.LENGTH,
    "model_context_window_exceeded": Ending.LENGTH,
    "context_window_exceeded": Ending.LENGTH,
    # A filter, a guardrail, a refusal.
    "content_filter": Ending.CONTENT_FILTER,
    "content_filtered": Ending.CONTENT_FILTER,
    "guardrail_intervened": Ending.CONTENT_FILTER,
    "safety": Ending.CONTENT_FILTER,
    "recitation": Ending.CONTENT_FILTER,
    "blocklist": Ending.CONTENT_FILTER,
    "prohibited_content": Ending.CONTENT_FILTER,
    "spii": Ending.CONTENT_FILTER,
    "image_safety": Ending.CONTENT_FILTER,
    "refusal": Ending.CONTENT_FILTER,
    # The provider failed.
    "error": Ending.ERROR,
    "failed": Ending.ERROR,
    "abort": Ending.ERROR,
    "aborted": Ending.ERROR,
    "malformed_function_call": Ending.ERROR,
}


def ending_of(reason: object) -> Ending:
    """What the provider's finish reason ``reason`` says of the response's end: an ``Ending``
    from ``FINISH_REASONS``; ``INCOMPLETE`` for a reason not there; ``ABANDONED`` for none
    (``None`` or empty: no reason was given). An ``Ending`` is returned as it is."""
    if isinstance(reason, Ending):
        return reason
    if not isinstance(reason, str) or not reason:
        return Ending.ABANDONED
    return FINISH_REASONS.get(reason.lower().replace("-", "_"), Ending.INCOMPLETE)


def settle(said: Ending | str | None, cut: Ending | None) -> Ending | str | None:
    """The ending that applies to a call, from what the provider ``said`` of it (an
    ``Ending``, or a finish reason as sent, or ``None`` for none: ``ending_of`` reads it) and
    the cut already seen in the stream (``cut``: the first error, decode failure or
    cancellation, if any). A call the provider closed is closed; otherwise the first cut is
    the cause, whatever the stream said after it."""
    if said is Ending.CLOSED or cut is None:
        return said
    return cut
