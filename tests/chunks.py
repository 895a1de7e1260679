"""Ways to cut a byte stream, shared by the decoder tests (results must not depend on them)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable


def split(body: bytes, cuts: Iterable[int]) -> list[bytes]:
    """``body`` cut at ``cuts`` (any order, repeats allowed)."""
    points = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(points)]


def byte_by_byte(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]
