"""Ways to cut a byte stream, shared by the decoder tests (results must not depend on them).

``split`` is ``toolstitch.testing.strategies.cut_bytes`` (the one byte cutter)."""

from __future__ import annotations

from toolstitch.testing.strategies import cut_bytes as split

__all__ = ["byte_by_byte", "split"]


def byte_by_byte(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]
