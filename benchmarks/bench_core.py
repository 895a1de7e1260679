"""Core benchmark: toolstitch's Assembler against "concatenate, then json.loads once".

Both run in this one process, interleaved round by round, on the same deltas, so machine
drift hits both alike; the figure to read is the ratio. Also measures what the per-call
state machine would cost if ``transitions`` ran it (it does not: see docs/concepts.md).

    python benchmarks/bench_core.py            # full run (about a minute)
    python benchmarks/bench_core.py --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from competitors import floor_json, toolstitch_assembler
from workloads import Delta, Workload, standard, sweep

import toolstitch
from toolstitch.core.machine import DEFINITION, TABLE, build_machine

APPROACHES: dict[str, Callable[[list[Delta]], dict[int, Any]]] = {
    "floor_json": floor_json,
    "toolstitch": toolstitch_assembler,
}


def _time(fn: Callable[[list[Delta]], object], deltas: list[Delta], loops: int) -> float:
    gc.collect()
    start = time.perf_counter()
    for _ in range(loops):
        fn(deltas)
    return (time.perf_counter() - start) / loops


def measure(workload: Workload, rounds: int) -> dict[str, float]:
    """Median seconds per run of each approach, sampled in interleaved rounds.

    Each sample repeats the run enough times to last about 20 ms, so that small workloads
    are not lost in timer noise.
    """
    expected = floor_json(workload.deltas)
    for name, fn in APPROACHES.items():
        if fn(workload.deltas) != expected:
            raise SystemExit(f"{name} gave a wrong result on {workload.name}")
    once = _time(toolstitch_assembler, workload.deltas, 1)
    loops = max(1, int(0.02 / max(once, 1e-7)))
    samples: dict[str, list[float]] = {name: [] for name in APPROACHES}
    for _ in range(rounds):
        for name, fn in APPROACHES.items():
            samples[name].append(_time(fn, workload.deltas, loops))
    return {name: statistics.median(values) for name, values in samples.items()}


def transitions_costs(repeats: int = 200) -> tuple[float, float, float]:
    """Median ns of: building a Machine, one state-changing trigger, one table lookup."""

    class Model:
        pass

    build, trigger, lookup = [], [], []
    for _ in range(repeats):
        model = Model()
        start = time.perf_counter_ns()
        machine = build_machine(DEFINITION)
        machine.add_model(model)
        build.append(time.perf_counter_ns() - start)
        start = time.perf_counter_ns()
        model.receive_id()  # type: ignore[attr-defined]
        trigger.append(time.perf_counter_ns() - start)
        state = toolstitch.CallState.AWAITING_ID
        start = time.perf_counter_ns()
        state = TABLE[state, "receive_id"]
        lookup.append(time.perf_counter_ns() - start)
    return statistics.median(build), statistics.median(trigger), statistics.median(lookup)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, smaller sweep")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 7
    print(
        f"toolstitch {toolstitch.__version__}, ijson backend {toolstitch.JSON_BACKEND}, "
        f"Python {sys.version.split()[0]}; medians of {rounds} interleaved rounds\n"
    )
    print("| workload | deltas | chars | floor ns/delta | toolstitch ns/delta | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for workload in standard():
        medians = measure(workload, rounds)
        n = len(workload.deltas)
        floor, ours = medians["floor_json"], medians["toolstitch"]
        print(
            f"| {workload.name} | {n:,} | {workload.argument_chars:,} | {floor / n * 1e9:,.0f} "
            f"| {ours / n * 1e9:,.0f} | {ours / floor:.2f}x |"
        )
    sizes = (16_000, 64_000, 256_000) if args.quick else (16_000, 64_000, 256_000, 1_000_000)
    points = []
    print("\n| sweep | chars | floor ms | toolstitch ms | ratio |")
    print("|---|---:|---:|---:|---:|")
    for workload in sweep(sizes):
        medians = measure(workload, rounds)
        points.append((workload.argument_chars, medians["toolstitch"]))
        print(
            f"| {workload.name} | {workload.argument_chars:,} | {medians['floor_json'] * 1e3:.1f} "
            f"| {medians['toolstitch'] * 1e3:.1f} | "
            f"{medians['toolstitch'] / medians['floor_json']:.2f}x |"
        )
    (x0, y0), (x1, y1) = points[0], points[-1]
    exponent = math.log(y1 / y0) / math.log(x1 / x0)
    print(f"\ngrowth exponent of toolstitch over the sweep (1 = linear): {exponent:.2f}")
    build, trigger, lookup = transitions_costs()
    print(
        f"\ntransitions: Machine for one call {build / 1e3:,.1f} µs, one trigger "
        f"{trigger / 1e3:,.1f} µs; the derived table lookup used instead: {lookup:,.0f} ns"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
