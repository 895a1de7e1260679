"""The native scanner against the Python tokenizer: one comparison, for the tests and the fuzzer.

``compare(fragments, ...)`` feeds the same fragments to an ``ArgumentsTokenizer`` and to the
C extension's ``Scanner`` (made by ``make_tokenizer``, as the assembler makes it) and asserts,
after every feed, the same result or the same exception (type, and ``offset`` / ``limit`` for
``DigitsExceeded``), and the same ``fed``, ``closed``, ``started``, ``depth`` and
``close_offset`` of the next fragment. It stops at the first exception or at the close
(neither tokenizer is fed after those). Returns the scanner, so callers can ask whether it
stayed native.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolstitch.json.tokenizer import ArgumentsTokenizer, Tokenizer, make_tokenizer

Outcome = tuple[Any, ...]


def outcome(tokenizer: Tokenizer, fragment: str) -> Outcome:
    """What feeding ``fragment`` did: ``("ok", closed)`` or ``("raise", type, offset, limit)``."""
    try:
        return ("ok", tokenizer.feed(fragment))
    except Exception as exc:  # any exception is compared, not judged
        return ("raise", type(exc), getattr(exc, "offset", None), getattr(exc, "limit", None))


def state(tokenizer: Tokenizer, lookahead: str) -> tuple[object, ...]:
    return (
        tokenizer.fed,
        tokenizer.closed,
        tokenizer.started,
        tokenizer.depth,
        tokenizer.close_offset(lookahead),
    )


def compare(
    fragments: Sequence[str], *, max_depth: int = 256, max_digits: int = 4000, thorough: bool = True
) -> Any:
    """Feed both tokenizers ``fragments`` and assert they agree after each (see module doc).

    ``thorough=False`` (the fuzzer, for speed) skips the close offset of the fragment just fed
    (that of the next one is always compared)."""
    parts: list[str] = []

    def text() -> str:
        return "".join(parts)

    reference = ArgumentsTokenizer(max_depth=max_depth, max_number_digits=max_digits)
    scanner = make_tokenizer(max_depth=max_depth, max_number_digits=max_digits, text=text)
    assert not isinstance(scanner, ArgumentsTokenizer), "the extension is not loaded"
    assert state(scanner, "}") == state(reference, "}")
    for position, fragment in enumerate(fragments):
        parts.append(fragment)
        expected = outcome(reference, fragment)
        got = outcome(scanner, fragment)
        assert got == expected, (position, fragments, got, expected)
        if expected[0] == "raise":
            break
        following = fragments[position + 1] if position + 1 < len(fragments) else "}"
        assert state(scanner, following) == state(reference, following), (position, fragments)
        if thorough:
            assert state(scanner, fragment) == state(reference, fragment), (position, fragments)
        if expected[1]:
            break
    reference.close()
    scanner.close()
    return scanner
