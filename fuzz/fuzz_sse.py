"""Fuzz target: the SSE decoder fed arbitrary bytes in arbitrary chunkings.

Input: byte 0 seeds the chunking (0: the whole body in one feed; otherwise cuts drawn from a
PRNG seeded with it, from one-byte chunks to long ones), byte 1 picks the limits (0: the
defaults; otherwise ``max_line_bytes`` and ``max_event_bytes`` small enough to be hit),
the rest is the stream.

Checked: only ``StreamDecodeError`` escapes; the messages are those of an independent,
deliberately naive reference decoder written from the WHATWG rules below (no limits), for
every chunking; with limits, the error (whether one is raised, and its ``offset``) and the
messages before it do not depend on the chunking; after an error every call raises again.
"""

from __future__ import annotations

import contextlib
import random
import re
import sys

import atheris
from _harness import KnownBug, known_bug

with atheris.instrument_imports(include=["toolstitch"]):
    from toolstitch.decode.sse import SSEDecoder, SSEMessage
    from toolstitch.vocab.errors import StreamDecodeError

_EOL = re.compile(rb"\r\n|\r|\n")


def reference(body: bytes) -> list[SSEMessage]:
    """The WHATWG event-stream interpretation, whole-body, plus dispatch at the end."""
    if body.startswith(b"\xef\xbb\xbf"):
        body = body[3:]
    lines = _EOL.split(body)
    out: list[SSEMessage] = []
    data: list[str] = []
    event = ""
    last_id: str | None = None
    retry: int | None = None

    def dispatch() -> None:
        nonlocal data, event, retry
        if data:
            out.append(SSEMessage(event or "message", "\n".join(data), last_id, retry))
        data, event, retry = [], "", None

    # A final line without terminator is still a line (toolstitch's documented difference).
    if lines and lines[-1] == b"":
        lines.pop()
    for raw in lines:
        line = raw.decode("utf-8", "replace")
        if not line:
            dispatch()
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\x00" not in value:
            last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            with contextlib.suppress(ValueError):
                retry = int(value)
    dispatch()
    return out


def chunks(body: bytes, seed: int) -> list[bytes]:
    if seed == 0 or not body:
        return [body]
    rng = random.Random(seed)
    scale = rng.choice((1, 2, 3, 7, 64))
    out = []
    pos = 0
    while pos < len(body):
        size = rng.randint(1, scale)
        out.append(body[pos : pos + size])
        pos += size
    return out


def decode(
    pieces: list[bytes], limits: dict[str, int]
) -> tuple[list[SSEMessage], StreamDecodeError | None]:
    decoder = SSEDecoder(**limits)
    out: list[SSEMessage] = []
    closing = False
    try:
        for piece in pieces:
            out.extend(decoder.feed(piece))
        closing = True
        out.extend(decoder.close())
    except StreamDecodeError as exc:
        if closing:
            # Died in close(): feed() after close() is a RuntimeError (documented), and
            # close() says the error again.
            try:
                decoder.close()
            except StreamDecodeError as repeat:
                assert repeat.offset == exc.offset  # noqa: PT017  (not a pytest test)
            else:
                raise AssertionError("close() forgot the error it raised") from None
            return out, exc

        def feed_more() -> object:
            return decoder.feed(b"x")

        for again in (feed_more, decoder.close):
            try:
                again()
            except StreamDecodeError as repeat:
                assert repeat.offset == exc.offset  # noqa: PT017  (not a pytest test)
            else:
                raise AssertionError("a dead decoder accepted more input") from None
        return out, exc
    assert decoder.close() == []
    return out, None


def run(data: bytes) -> None:
    if len(data) < 2:
        return
    seed, choice, body = data[0], data[1], data[2:]
    limits: dict[str, int] = {}
    if choice:
        limits = {"max_line_bytes": 1 + choice % 40, "max_event_bytes": 1 + choice // 4}
    got, error = decode(chunks(body, seed), limits)
    if not limits:
        assert error is None, error
        assert got == reference(body), (got, reference(body))
        return
    whole, whole_error = decode([body], limits)
    if error is None and whole_error is None:
        assert got == whole == reference(body)
        return
    assert error is not None, (error, whole_error)
    assert whole_error is not None, (error, whole_error)
    kinds = {"line" if "max_line_bytes" in str(e) else "event" for e in (error, whole_error)}
    if error.offset != whole_error.offset and kinds == {"line", "event"}:
        raise KnownBug("bug-3b")
    assert error.offset == whole_error.offset, (error.offset, whole_error.offset, str(error))
    expected = reference(body)
    assert got == expected[: len(got)], "messages before the error differ"


def TestOneInput(data: bytes) -> None:  # noqa: N802  (atheris' name)
    try:
        run(data)
    except (AssertionError, KnownBug) as exc:
        if known_bug(exc) is None:
            raise


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
