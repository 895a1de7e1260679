"""The tokenizer alone: the native ``Scanner`` against ``ArgumentsTokenizer`` (docs/native.md).

    python benchmarks/bench_scanner.py                  # timeit medians, interleaved rounds
    python benchmarks/bench_scanner.py --once native    # one pass, for valgrind --tool=callgrind
    python benchmarks/bench_scanner.py --once python
    python benchmarks/bench_scanner.py --once none      # the baseline: build the workload only

The workload is ``medium_arguments`` (about 10 KB) cut by ``split`` into 1-12 character
fragments (seed 2); each pass makes a fresh tokenizer and feeds every fragment, appending to a
list first as the assembler appends to the call's text.
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from workloads import medium_arguments, split

from toolstitch.json.tokenizer import ArgumentsTokenizer, make_tokenizer
from toolstitch.vocab.native import NATIVE


def fragments() -> list[str]:
    rng = random.Random(2)
    return split(medium_arguments(rng), rng)


def pass_native(pieces: list[str]) -> None:
    parts: list[str] = []
    scanner = make_tokenizer(max_depth=256, max_number_digits=4000, text=lambda: "".join(parts))
    append, feed = parts.append, scanner.feed
    for piece in pieces:
        append(piece)
        feed(piece)
    assert scanner.closed


def pass_python(pieces: list[str]) -> None:
    parts: list[str] = []
    tokenizer = ArgumentsTokenizer(max_depth=256, max_number_digits=4000)
    append, feed = parts.append, tokenizer.feed
    for piece in pieces:
        append(piece)
        feed(piece)
    assert tokenizer.closed


def pass_none(pieces: list[str]) -> None:
    parts: list[str] = []
    append = parts.append
    for piece in pieces:
        append(piece)


PASSES: dict[str, Callable[[list[str]], None]] = {
    "native": pass_native,
    "python": pass_python,
    "none": pass_none,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--once", choices=sorted(PASSES))
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    pieces = fragments()
    if args.once:
        PASSES[args.once](pieces)
        return
    if not NATIVE:
        sys.exit("the C extension is not in use")
    times: dict[str, list[float]] = {name: [] for name in PASSES}
    for _ in range(args.rounds):
        for name, run in PASSES.items():
            best = min(timeit.repeat(functools.partial(run, pieces), number=5, repeat=3))
            times[name].append(best / 5)
    chars = sum(map(len, pieces))
    print(f"{chars} characters in {len(pieces)} fragments; median of {args.rounds} rounds")
    for name, values in times.items():
        median = statistics.median(values)
        per = median / len(pieces) * 1e9
        print(f"{name:>7}: {median * 1e3:8.3f} ms per pass, {per:7.1f} ns per fragment")


if __name__ == "__main__":
    main()
