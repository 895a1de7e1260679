"""Fuzz target: arbitrary files through ``toolstitch replay``'s code path, in-process.

Input: the file's bytes. If the first byte is 1 to ``len(PROVIDERS)`` it names the provider
(``--provider``, in ``PROVIDERS`` order) and is not part of the file; otherwise the provider
is ``auto``.

The target runs exactly what ``toolstitch replay FILE`` runs after reading the file
(``cli._input.replay``: a ``Stitcher`` fed the body piece by piece, then closed), then both
outputs (``cli.report`` serialised with ``json.dumps``, and the plain text of
``cli.summary`` rendered). The same body is also fed through a ``Stitcher`` in a second
chunking (drawn from the body's hash), and the two outcomes (calls, discards with their
codes and endings, the stream error, text, reasoning, finish reason) must be equal: the
decoders hand over what they completed before a fault, so not even a decode error makes
the outcome depend on the chunking.

Expected: ``cli._input.Failure`` (exit status 2: an unknown format, which wraps
``StreamDecodeError``). Anything else escaping is a finding. Also checked: every call in the
result is valid (``_harness.check_ready``), every discard agrees with the reference checker.
"""

from __future__ import annotations

import io
import json
import sys
import zlib

import atheris
from _harness import check_discarded, check_ready, known_bug

with atheris.instrument_imports(include=["toolstitch"]):
    from toolstitch import StitchResult, StreamDecodeError
    from toolstitch.adapters import PROVIDERS
    from toolstitch.cli import report
    from toolstitch.cli._input import Failure, replay
    from toolstitch.cli._render import render
    from toolstitch.cli._view import SHOWN_CHARS, Context, summary
    from toolstitch.stitch.stitcher import Stitcher


def _outcome(result: StitchResult) -> tuple[object, ...]:
    """What a stream yielded, independent of how it was cut."""
    return (
        result.provider,
        [(c.index, c.id, c.name, c.arguments) for c in result.calls],
        [(d.index, d.error.code, getattr(d.error, "ending", None)) for d in result.discarded],
        None if result.stream_error is None else result.stream_error.code,
        result.text,
        result.reasoning,
        result.finish_reason,
    )


def _rechunked(body: bytes, provider: str) -> tuple[object, ...] | None:
    seed = zlib.crc32(body)
    stitcher = Stitcher(provider)
    pos = 0
    try:
        while pos < len(body):
            size = 1 + (seed >> (pos % 24)) % 37
            stitcher.feed(body[pos : pos + size])
            pos += size
        stitcher.close()
    except StreamDecodeError:
        return None
    return _outcome(stitcher.result)


def run(data: bytes) -> None:
    provider = "auto"
    body = data
    if data and 1 <= data[0] <= len(PROVIDERS):
        provider, body = PROVIDERS[data[0] - 1], data[1:]
    try:
        done = replay(body, provider, {}, states=False)
    except Failure as failure:
        assert str(failure)  # noqa: PT017  (not a pytest test)
        return
    result = done.result
    for call in result.calls:
        check_ready(call)
    for discarded in result.discarded:
        check_discarded(discarded)
    found = report(result, done, source="fuzzed.sse", tools=None, policy="discard", status=0)
    json.dumps(found, ensure_ascii=False, indent=2)
    context = Context("fuzzed.sse", provider, None, "discard", SHOWN_CHARS)
    render(summary(done, context), io.StringIO(), colour=False)
    again = _rechunked(body, provider)
    if again is not None:
        assert again == _outcome(result), "the outcome depends on the chunking"


def TestOneInput(data: bytes) -> None:  # noqa: N802  (atheris' name)
    try:
        run(data)
    except (AssertionError, RuntimeError, TypeError) as exc:
        if known_bug(exc) is None:
            raise


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
