"""Every ``quirk-…`` code toolstitch emits, with what it means: each provider's own, combined.

Each adapter module declares the codes it emits (``CODES``), and ``adapters._base.SHARED_CODES``
the few that several adapters emit; this is their union, in the
order of docs/quirks.md (which has the table: providers, behaviour, tests; a test keeps the
two in step). ``toolstitch.QUIRK_CODES`` is this mapping.
"""

from __future__ import annotations

from typing import Final

from . import (
    _parallel,
    anthropic,
    bedrock_converse,
    cohere_chat,
    gemini,
    ollama_chat,
    openai_chat,
    openai_responses,
)
from ._base import SHARED_CODES

__all__ = ["QUIRK_CODES"]

QUIRK_CODES: Final[dict[str, str]] = {
    **SHARED_CODES,
    **openai_chat.CODES,
    **openai_responses.CODES,
    **_parallel.CODES,
    **anthropic.CODES,
    **gemini.CODES,
    **bedrock_converse.CODES,
    **cohere_chat.CODES,
    **ollama_chat.CODES,
}
