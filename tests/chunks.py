"""Ways to cut a byte stream, shared by the decoder tests (results must not depend on them).

``split`` is ``toolstitch.testing.strategies.cut_bytes`` (the one byte cutter); ``aws_frames``
cuts an AWS event stream at the frame boundaries botocore's own parser finds."""

from __future__ import annotations

from toolstitch.testing.strategies import cut_bytes as split

__all__ = ["aws_frames", "byte_by_byte", "split"]


def byte_by_byte(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


def aws_frames(body: bytes) -> list[bytes]:
    """``body``, an AWS event stream, cut at its frame boundaries (by botocore)."""
    from botocore.eventstream import EventStreamBuffer  # the test group's reference decoder

    buffer = EventStreamBuffer()
    buffer.add_data(body)
    cuts, at = [], 0
    for message in buffer:
        at += message.prelude.total_length
        cuts.append(at)
    return split(body, cuts)
