"""Fuzz target: arbitrary files through ``toolstitch replay``'s code path, in-process.

Input: the file's bytes. If the first byte is 1-4 it names the provider (``--provider``,
in ``PROVIDERS`` order) and is not part of the file; otherwise the provider is ``auto``.

The target runs exactly what ``toolstitch replay FILE`` runs after reading the file
(``cli._replay``: a ``Stitcher`` fed the body line by line, then closed), then both outputs
(``cli.report`` serialised with ``json.dumps``, and the plain text of ``cli._plain``). The
same body is also fed through ``stitch`` in a second chunking (drawn from the body's hash)
and the two ``--json`` reports must be equal unless a decode error cut either stream (the
events completed earlier in a failing chunk are lost, as the decoders document).

Expected: ``cli._Failure`` (exit status 2: an unknown format, which wraps
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
    from toolstitch import StreamDecodeError, cli
    from toolstitch.adapters import PROVIDERS
    from toolstitch.stitch.stitcher import Stitcher


def _rechunked(body: bytes, provider: str) -> dict[str, object] | None:
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
    return cli.report(stitcher.result)


def run(data: bytes) -> None:
    provider = "auto"
    body = data
    if data and 1 <= data[0] <= len(PROVIDERS):
        provider, body = PROVIDERS[data[0] - 1], data[1:]
    try:
        replay = cli._replay(body, provider)
    except cli._Failure as failure:
        assert str(failure)  # noqa: PT017  (not a pytest test)
        return
    result = replay.result
    for call in result.calls:
        check_ready(call)
    for discarded in result.discarded:
        check_discarded(discarded)
    report = cli.report(result)
    json.dumps(report, ensure_ascii=False, indent=2)
    cli._plain("fuzzed.sse", replay, provider, io.StringIO())
    if isinstance(result.stream_error, StreamDecodeError):
        # Documented: the events a decoder completed earlier in the chunk that fails are
        # lost with the error, so what precedes a decode error depends on the chunking.
        return
    again = _rechunked(body, provider)
    stream_error = None if again is None else again["stream_error"]
    decode_failed = isinstance(stream_error, dict) and stream_error["code"] == "stream-decode-error"
    if again is not None and not decode_failed:
        assert again == report, "the report depends on the chunking"


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
