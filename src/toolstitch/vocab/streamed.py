"""What every reader of a stream reports with, whether it reads a provider's events (the
adapters) or a model's text (the text formats): a stream quirk, bounded text, reasoning
blocks as they stream.
"""

from __future__ import annotations

from typing import Any

from toolstitch.vocab._quick import one_field
from toolstitch.vocab.errors import ProviderQuirk
from toolstitch.vocab.stream_events import ReasoningBlock, ReasoningDelta, StreamWarning
from toolstitch.vocab.text import ChunkedText

__all__ = ["BoundedText", "ReasoningText", "reasoning_delta", "stream_quirk"]

#: ``ReasoningDelta(text=...)``, quickly: the commonest event of a reasoning model's stream.
reasoning_delta = one_field(ReasoningDelta, "text", str)


def stream_quirk(code: str, message: str) -> StreamWarning:
    """A ``StreamWarning`` carrying a ``ProviderQuirk`` (a quirk that concerns no call)."""
    return StreamWarning(error=ProviderQuirk(code, message))


class BoundedText:
    """Text an adapter collects for a stream event it reports later (a reasoning block's
    text or signature), kept up to ``bound`` characters (``Limits.max_reasoning_chars``).

    ``add`` keeps what fits and returns ``False`` the first time something did not (the
    caller warns once); ``cut`` says whether anything was left out."""

    __slots__ = ("_text", "bound", "cut")

    def __init__(self, bound: int, start: str = "") -> None:
        self._text = ChunkedText()
        self.bound = bound
        self.cut = False
        if start:
            self.add(start)

    def add(self, fragment: str) -> bool:
        room = self.bound - self._text.length
        if len(fragment) <= room:
            self._text.append(fragment)
            return True
        if room > 0:
            self._text.append(fragment[:room])
        first, self.cut = not self.cut, True
        return not first

    def __len__(self) -> int:
        return self._text.length

    def text(self) -> str:
        return self._text.text()


class ReasoningText:
    """One reasoning block as it streams: a ``ReasoningDelta`` per piece, and when the block
    ends the ``ReasoningBlock`` that reports it whole (``kind``: the provider's name for it).

    The text kept for the block is a ``BoundedText`` of ``bound`` characters
    (``Limits.max_reasoning_chars``); past it, one ``quirk-reasoning-over-limit`` warning, and
    the ``ReasoningDelta`` events go on uncut.
    """

    __slots__ = ("_text", "bound", "kind")

    def __init__(self, kind: str, bound: int) -> None:
        self.kind = kind
        self.bound = bound
        self._text = BoundedText(bound)

    def add(self, text: object, out: list[Any]) -> None:
        """A piece of the block (ignored unless a non-empty string)."""
        if isinstance(text, str) and text:
            out.append(reasoning_delta(text))
            if not self._text.add(text):
                out.append(
                    stream_quirk(
                        "quirk-reasoning-over-limit",
                        f"a {self.kind} block passed max_reasoning_chars ({self.bound}); its "
                        "ReasoningBlock keeps the first characters only",
                    )
                )

    def end(self, out: list[Any]) -> None:
        """The block is over: report it (nothing when it had no text); the next piece
        starts a new block."""
        if len(self._text):
            out.append(ReasoningBlock(text=self._text.text(), kind=self.kind))
            self._text = BoundedText(self.bound)
