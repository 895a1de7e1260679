"""A model's raw output, as ``str`` pieces → items (``provider="text"``).

What arrives: the text a model generated, special tokens written as text (what an inference
server detokenizes with ``skip_special_tokens=False``, or what a local runtime prints), one
``str`` per piece. Each piece is a ``TextDelta``; the end of the pieces is a normal end of
the response (``Ending.COMPLETE``: there is no finish reason to read). With ``text_format=``
(``stitch``, ``Stitcher``) the ``Stitcher`` reads that text as the format, and the tool calls
written in it become calls (``toolstitch.stitch.textcalls``); without it, the text is text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolstitch.core.instructions import Finish, Item
from toolstitch.vocab.endings import Ending

from ._base import Adapter, text_delta

__all__ = ["CODES", "RawTextAdapter"]

#: The quirk codes this adapter emits: none.
CODES: dict[str, str] = {}


class RawTextAdapter(Adapter):
    """Adapter for a model's raw output as ``str`` pieces (``provider="text"``)."""

    name = "text"

    def feed(self, payload: object, *, event: str | None = None) -> Iterable[Item]:
        if not isinstance(payload, str):
            raise TypeError(
                f"a text stream is fed str pieces of the model's output, not a "
                f"{type(payload).__name__}"
            )
        return [text_delta(payload)] if payload else []

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> Iterable[Item]:
        raise TypeError("a text stream is fed str pieces of the model's output, not events")

    def close(self) -> list[Item]:
        return [Finish(Ending.COMPLETE)]
