"""Bounds that keep one stream's memory and work finite, whatever the model sends."""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["Limits"]

# ijson's C backend turns an integer literal longer than ``sys.get_int_max_str_digits()``
# (4,300 by default) into a NULL event that crashes the interpreter when touched, and
# ``json.loads`` refuses such literals anyway; toolstitch stops well before yajl sees one.
_HARD_MAX_NUMBER_DIGITS = 4300


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Per-assembler bounds. A call that passes one is discarded with ``LimitExceeded``.

    ``max_argument_chars``
        Characters of argument text one call may accumulate (default 16 MiB of text).
    ``max_calls``
        Distinct calls one stream may open (default 1,024). Later calls are discarded
        without storing their text.
    ``max_depth``
        Nesting depth of the arguments (default 256; ``json.loads`` itself gives up near
        1,000 levels, so a deeper document could validate and still fail to load).
    ``max_name_chars``
        Characters of a function name (default 256).
    ``max_id_chars``
        Characters of a call id (default 256).
    ``max_number_digits``
        Digits in one run of a number literal (default 4,000, at most 4,300).
    ``max_reasoning_chars``
        Characters of one reasoning block's text (and, apart, of its signature) that an
        adapter collects for its ``ReasoningBlock`` (default 16 MiB of text). Past it the
        block keeps what came before and the stream gets a warning
        (``quirk-reasoning-over-limit``): such a block cannot be sent back as it was.
    """

    max_argument_chars: int = 16 * 1024 * 1024
    max_calls: int = 1024
    max_depth: int = 256
    max_name_chars: int = 256
    max_id_chars: int = 256
    max_number_digits: int = 4000
    max_reasoning_chars: int = 16 * 1024 * 1024

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if type(value) is not int or value < 1:
                raise ValueError(f"Limits.{field.name} must be a positive int, got {value!r}")
        if self.max_number_digits > _HARD_MAX_NUMBER_DIGITS:
            raise ValueError(
                f"Limits.max_number_digits must be at most {_HARD_MAX_NUMBER_DIGITS} "
                "(longer integer literals crash ijson's C backend)"
            )
