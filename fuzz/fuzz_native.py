"""Fuzz target: the native ``Scanner`` against the Python ``ArgumentsTokenizer``.

Input format: byte 0 picks ``max_depth`` (1-8, or 256), byte 1 the digit cap (1-24, or
4,000), byte 2 seeds the split; the rest, decoded as UTF-8 with ``surrogatepass`` (invalid
bytes then become lone low surrogates through ``surrogateescape``, so raw halves of every kind
occur), is cut into fragments of 1-16 code points (or fed whole when byte 2 is 0). Both
tokenizers are fed the same fragments (``tests/native_diff.py``): any difference in a
result, an exception, an offset or a state, and any crash, is a finding.

``TOOLSTITCH_NATIVE_SO=<path to _native.abi3.so>`` loads that build of the extension (the
sanitizer build of docs/native.md) instead of the one beside the sources.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

import _harness  # noqa: F401  (puts src/ and tests/ on sys.path)
import atheris


def _load_native() -> None:
    """Make ``toolstitch._native`` the build named by ``TOOLSTITCH_NATIVE_SO``, if set."""
    path = os.environ.get("TOOLSTITCH_NATIVE_SO")
    if not path:
        return
    loader = importlib.machinery.ExtensionFileLoader("toolstitch._native", path)
    spec = importlib.util.spec_from_file_location("toolstitch._native", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules["toolstitch._native"] = module


_load_native()

if os.environ.get("TOOLSTITCH_NATIVE_SO"):
    # Under the preloaded sanitizer runtime, libasan's coverage hooks shadow libFuzzer's, so
    # instrumenting Python gives no feedback, only cost: the run mutates its seeds instead.
    from native_diff import compare
    from toolstitch.vocab import native
else:
    with atheris.instrument_imports(include=["toolstitch.json"]):
        from native_diff import compare
        from toolstitch.vocab import native

assert native.extension is not None, native.REASON
if os.environ.get("TOOLSTITCH_NATIVE_SO"):
    assert native.extension.__file__ == os.environ["TOOLSTITCH_NATIVE_SO"]


def decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def fragments(text: str, seed: int) -> list[str]:
    """``text`` cut into 1-16 code points at a time by a small LCG seeded with ``seed`` (a
    ``random.Random`` per input cost a tenth of the run), or whole for seed 0."""
    if seed == 0 or not text:
        return [text] if text else []
    state = seed
    pieces = []
    start = 0
    while start < len(text):
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        stop = start + 1 + (state >> 16) % 16
        pieces.append(text[start:stop])
        start = stop
    return pieces


def TestOneInput(data: bytes) -> None:  # noqa: N802  (atheris' name)
    if len(data) < 3:
        return
    depth = 256 if data[0] >= 128 else 1 + data[0] % 8
    digits = 4000 if data[1] >= 128 else 1 + data[1] % 24
    compare(
        fragments(decode_text(data[3:]), data[2]),
        max_depth=depth,
        max_digits=digits,
        thorough=False,
    )


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
