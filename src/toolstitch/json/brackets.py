"""A lenient scanner of brackets and strings, for messages and the quirk layer."""

from __future__ import annotations

import re

from toolstitch.json.diagnose import WHITESPACE

__all__ = ["BracketScanner"]

_STRUCTURE = re.compile(r'["{}\[\]]')
_STRING_RUN = re.compile(r'[^"\\]*')


class BracketScanner:
    """Brackets and strings of a JSON text fed in pieces: has the root value closed?

    Lenient by design: it does not validate (the tokenizer does), it only follows strings
    and brackets, for callers that must know where the root value ends or how deep a
    fragment leaves it.

    Regular expressions skip string bodies and the text between brackets, so Python runs once
    per quote or bracket, not once per character.
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
        depth, in_string, escape, started = self.depth, self.in_string, self.escape, self.started
        n = len(text)
        i = 0
        close = -1
        while i < n:
            if in_string:
                if escape:
                    escape = False
                    i += 1
                    continue
                i = _STRING_RUN.match(text, i).end()  # type: ignore[union-attr]
                if i >= n:
                    break
                if text[i] == "\\":
                    escape = True
                else:
                    in_string = False
                i += 1
                continue
            found = _STRUCTURE.search(text, i)
            stop = n if found is None else found.start()
            if not started and text[i:stop].strip(WHITESPACE):
                started = True
            if found is None:
                break
            ch = text[stop]
            i = stop + 1
            if ch == '"':
                in_string = True
            elif ch == "{" or ch == "[":
                depth += 1
                started = True
            else:
                depth -= 1
                if depth <= 0:
                    close = i
                    break
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
