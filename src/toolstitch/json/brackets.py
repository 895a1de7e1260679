"""A lenient scanner of brackets and strings, for messages and the quirk layer.

Superseded by ``ArgumentsTokenizer.close_offset`` / ``closed`` / ``started`` / ``depth``;
kept until its last user (the quirk layer) has moved to them, then to be deleted. Both run
``json.lexicon.skim``.
"""

from __future__ import annotations

from toolstitch.json.lexicon import skim

__all__ = ["BracketScanner"]


class BracketScanner:
    """Brackets and strings of a JSON text fed in pieces: has the root value closed?

    Lenient by design: it does not validate (the tokenizer does), it only follows strings
    and brackets, for callers that must know where the root value ends or how deep a
    fragment leaves it.
    """

    __slots__ = ("closed", "depth", "escape", "in_string", "started")

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escape = False
        self.started = False
        self.closed = False

    def _run(self, text: str, *, commit: bool) -> int:
        """Scan ``text``; the offset just past the root's closing bracket, or -1."""
        close, depth, in_string, escape, started = skim(
            text, self.depth, self.in_string, self.escape, self.started
        )
        if commit:
            self.depth, self.in_string, self.escape, self.started = (
                depth,
                in_string,
                escape,
                started,
            )
            if close >= 0:
                self.closed = True
        return close

    def feed(self, text: str) -> None:
        if not self.closed:
            self._run(text, commit=True)

    def scan(self, text: str) -> int:
        """``feed`` that also returns where the root closed in ``text`` (or -1)."""
        if self.closed:
            return 0
        return self._run(text, commit=True)

    def close_offset(self, text: str) -> int:
        """Where in ``text`` (fed next) the root value would close: the offset after its
        closing bracket, or -1. Changes nothing."""
        if self.closed:
            return 0
        return self._run(text, commit=False)
