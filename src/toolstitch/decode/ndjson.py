"""Incremental decoder for newline-delimited JSON (NDJSON, ``application/x-ndjson``).

Ollama's ``/api/chat`` answers with one JSON object per line, each line ended by ``\\n``
(with ``"stream": false``, the body is the final object alone, still ended by ``\\n``).
``NDJSONDecoder`` returns each line's object as soon as the bytes that end the line arrive.

    decoder = NDJSONDecoder()
    for chunk in body_chunks:
        for item in decoder.feed(chunk):
            ...
    for item in decoder.close():
        ...

A line that is not one JSON object does not stop the stream: the next line is framed as
well as ever. So such a line is not raised; it comes back *in its place* as a
``StreamDecodeError`` value (with the line's byte offset), and the caller decides what it
means (the ``Stitcher``: a stream error before the provider is known, a ``StreamFailed``
event after, as for an SSE event whose data is not JSON). Only a line past the size bound
is raised: it cannot be framed without buffering it.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn, TypeAlias

from toolstitch.json.lexicon import WHITESPACE_BYTES, load_json
from toolstitch.vocab.errors import StreamDecodeError

__all__ = ["NDJSONDecoder", "NDJSONItem"]

#: What ``feed`` and ``close`` return per line: its object, or the error that says why the
#: line is not one.
NDJSONItem: TypeAlias = dict[str, Any] | StreamDecodeError

_NEWLINE = 0x0A


class NDJSONDecoder:
    """Decode newline-delimited JSON; feed bytes in any chunking.

    Lines end at ``\\n``; a ``\\r`` before it (CRLF) is JSON whitespace and is tolerated, and
    so are blank lines (nothing but JSON whitespace: space, tab, CR). A last line without its
    ``\\n`` is decoded at ``close()``. Each line is read with ``json.loads`` as UTF-8 (invalid
    bytes replaced with U+FFFD, as ``SSEDecoder`` does); ``NaN``/``Infinity`` and unpaired
    UTF-16 surrogate escapes (``"\\ud800"``), which ``json.loads`` accepts, are refused as
    ``JSONArrayDecoder`` refuses them.

    ``feed`` returns, in order, one item per non-blank line completed by the chunk: the
    line's object (a ``dict``), or for a line that is not a JSON object a
    ``StreamDecodeError`` whose ``offset`` is the byte offset of the line's start. The
    decoder goes on with the next line.

    Cost is linear in the input: each byte is scanned for the newline once, and a line that
    spans chunks is kept in one growing buffer. Memory is bounded: a line longer than
    ``max_line_bytes`` (16 MiB by default; its ``\\n`` excluded, a CR counted) raises
    ``StreamDecodeError`` with ``offset`` = line start + ``max_line_bytes``, after buffering
    no more than that. The lines completed earlier in the same chunk are returned by that
    ``feed`` (the next ``feed`` or ``close`` raises the error), never lost with the error,
    and the decoder is dead afterwards: every later ``feed`` or ``close`` raises
    again.
    """

    def __init__(self, *, max_line_bytes: int = 16 * 1024 * 1024) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self.max_line_bytes = max_line_bytes
        self._offset = 0  # stream bytes received so far
        self._pending = bytearray()  # the line not yet ended
        self._pending_start = 0
        self._closed = False
        self._error: StreamDecodeError | None = None

    def feed(self, chunk: bytes) -> list[NDJSONItem]:
        """Decode ``chunk``; return the items of the lines it completed, in order."""
        self._check_usable()
        if not chunk:
            return []
        if not isinstance(chunk, bytes):
            chunk = bytes(chunk)
        base = self._offset
        self._offset += len(chunk)
        out: list[NDJSONItem] = []
        limit = self.max_line_bytes
        pending = self._pending
        try:
            pos = 0
            while True:
                end = chunk.find(b"\n", pos)
                if end < 0:
                    break
                if pending:
                    if len(pending) + end - pos > limit:
                        self._too_long(self._pending_start)
                    pending += chunk[pos:end]
                    line, start = bytes(pending), self._pending_start
                    pending.clear()
                else:
                    start = base + pos
                    if end - pos > limit:
                        self._too_long(start)
                    line = chunk[pos:end]
                self._line(line, start, out)
                pos = end + 1
            if pos < len(chunk):
                if not pending:
                    self._pending_start = base + pos
                if len(pending) + len(chunk) - pos > limit:
                    self._too_long(self._pending_start)
                pending += chunk[pos:] if pos else chunk
        except StreamDecodeError:
            if not out:
                raise
            return out  # the lines before the fault; the next feed or close raises it
        return out

    def close(self) -> list[NDJSONItem]:
        """Signal the end of the body; return the item of a last line without ``\\n``.

        Calling ``close`` again returns ``[]`` (or raises the decoder's error again, if it
        died of one); ``feed`` after ``close`` raises ``RuntimeError``.
        """
        if self._error is not None:
            raise StreamDecodeError(self._error.message, offset=self._error.offset)
        if self._closed:
            return []
        self._closed = True
        out: list[NDJSONItem] = []
        if self._pending:
            line = bytes(self._pending)
            self._pending.clear()
            self._line(line, self._pending_start, out)
        return out

    # -- internals --------------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._closed:
            raise RuntimeError("NDJSONDecoder.feed() called after close()")
        if self._error is not None:
            raise StreamDecodeError(self._error.message, offset=self._error.offset)

    def _too_long(self, start: int) -> NoReturn:
        message = (
            f"NDJSON line longer than max_line_bytes={self.max_line_bytes} bytes "
            f"(the line starts at byte {start})"
        )
        offset = start + self.max_line_bytes
        self._error = StreamDecodeError(message, offset=offset)
        self._pending = bytearray()
        raise StreamDecodeError(message, offset=offset)

    def _line(self, raw: bytes, start: int, out: list[NDJSONItem]) -> None:
        """One complete line (its ``\\n`` removed) that starts at byte ``start``."""
        if not raw.strip(WHITESPACE_BYTES):
            return  # a blank line (or a lone CR): nothing to decode
        text = raw.decode("utf-8", "replace")
        try:
            value = load_json(text)
        except (ValueError, RecursionError) as exc:
            reason = exc.args[0] if isinstance(exc, ValueError) and exc.args else exc
            out.append(_bad(f"the line is not JSON ({reason})", start))
            return
        if type(value) is not dict:
            out.append(_bad(f"the line is a JSON {_kind(value)}, not an object", start))
            return
        if "\\u" in text and _has_lone_surrogate(value):
            out.append(_bad("an unpaired UTF-16 surrogate escape in a string", start))
            return
        out.append(value)


def _bad(reason: str, start: int) -> StreamDecodeError:
    return StreamDecodeError(f"NDJSON line at byte {start}: {reason}", offset=start)


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None or isinstance(value, bool):
        return "literal"
    return "number"


def _has_lone_surrogate(value: object) -> bool:
    """Whether a decoded value holds an unpaired surrogate (``json.loads`` joins the escaped
    pairs, so any surrogate left over had no partner). Only asked of lines with an escape."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
