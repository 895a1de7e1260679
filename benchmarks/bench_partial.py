"""The live partial-arguments view, read after every delta, against jiter re-parsing.

A UI that shows a call's arguments as they stream reads them after every delta. toolstitch
keeps the value up to date from its tokenizer's events (``CallSnapshot.partial_arguments``);
the usual way is to re-parse the whole buffer each time with jiter's partial mode (what
openai-python and the anthropic SDK do). Both run here in one process on ``write_file``
calls of 10 KB, 100 KB and 1 MB; jiter gets a time budget per run and is extrapolated
(quadratically, from the largest size it finished) past it, marked ``~``.

    python benchmarks/bench_partial.py [--budget SECONDS]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import time
from collections.abc import Callable
from typing import Any

from workloads import Delta, Workload, single, write_file_arguments

from toolstitch import Assembler, CallReady

SIZES = (10_000, 100_000, 1_000_000)


def toolstitch_view(deltas: list[Delta], deadline: float) -> Any:
    assembler = Assembler(partial_arguments=True)
    feed, call = assembler.feed, assembler.call
    value: Any = None
    for delta in deltas:
        feed(delta)
        snapshot = call(0)
        if snapshot is not None:
            value = snapshot.partial_arguments
    return value


def jiter_view(deltas: list[Delta], deadline: float) -> Any:
    import jiter  # the [bench] extra

    parts: list[str] = []
    value: Any = None
    for count, delta in enumerate(deltas):
        fragment = delta["function"].get("arguments")
        if fragment:
            parts.append(fragment)
            buffer = "".join(parts)
            value = jiter.from_json(buffer.encode(), partial_mode="trailing-strings")
        if count % 512 == 0 and time.perf_counter() > deadline:
            raise TimeoutError(count)
    return value


def _run(fn: Callable[[list[Delta], float], Any], workload: Workload, budget: float) -> float:
    gc.collect()
    start = time.perf_counter()
    fn(workload.deltas, start + budget)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per jiter run")
    args = parser.parse_args(argv)
    print("| arguments | deltas | toolstitch view | jiter re-parse | jiter / toolstitch |")
    print("|---:|---:|---:|---:|---:|")
    last: tuple[int, float] | None = None
    warm = single("warm", "write_file", write_file_arguments(random.Random(0), 2_000), 0)
    toolstitch_view(warm.deltas, float("inf"))  # imports and first-call costs, untimed
    jiter_view(warm.deltas, float("inf"))
    for size in SIZES:
        text = write_file_arguments(random.Random(size), size)
        workload = single(f"write_file_{size // 1000}k", "write_file", text, size)
        ours = _run(toolstitch_view, workload, float("inf"))
        # Both must show the same complete value at the end.
        expected = json.loads(text)
        assert toolstitch_view(workload.deltas, float("inf")) == expected
        try:
            theirs = _run(jiter_view, workload, args.budget)
            shown = f"{theirs:.2f} s"
            last = (len(text), theirs)
        except TimeoutError:
            if last is None:
                print(f"| {len(text):,} | jiter did not finish within {args.budget} s |")
                continue
            chars, seconds = last
            theirs = seconds * (len(text) / chars) ** 2  # re-parsing everything: quadratic
            shown = f"~{theirs:.0f} s (extrapolated)"
        print(
            f"| {len(text):,} | {len(workload.deltas):,} | {ours:.3f} s | {shown} "
            f"| {theirs / ours:,.1f}× |"
        )
    # A ready call is the same either way; the view adds nothing to CallReady's timing.
    assert any(
        isinstance(e, CallReady)
        for e in Assembler(partial_arguments=True).feed_all(
            single("w", "write_file", '{"a": 1}', 0).deltas
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
