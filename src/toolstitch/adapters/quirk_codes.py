"""Every ``quirk-…`` code toolstitch emits, with what it means: each provider's own, combined.

Each adapter module declares the codes it emits (``CODES``); this is their union, in the
order of docs/quirks.md (which has the table: providers, behaviour, tests; a test keeps the
two in step). ``toolstitch.QUIRK_CODES`` is this mapping.
"""

from __future__ import annotations

from typing import Final

from . import _parallel, anthropic, gemini, openai_chat, openai_responses

__all__ = ["QUIRK_CODES"]

QUIRK_CODES: Final[dict[str, str]] = {
    **openai_chat.CODES,
    **openai_responses.CODES,
    **_parallel.CODES,
    **anthropic.CODES,
    **gemini.CODES,
}
