"""The native fast feed against the pure-Python path and the floor, in one process.

For each workload (small ~150 B, medium ~10 KB, parallel8, write_file_64k, write_file_1m) and
shape (OpenAI deltas fed to ``Assembler.feed``; Anthropic events fed to
``Stitcher(provider="anthropic")``; SSE body bytes fed to ``Stitcher()``, end to end)
it times the floor (append, one ``json.loads`` per call), the native path and the pure-Python
one (``toolstitch.testing.PythonAssembler``/``PythonStitcher``), interleaved round by round;
the figures to read are the ratios to the floor. ``--memory`` measures the memory per open
call on both paths; ``--only APPROACH --workload NAME --loops N`` runs one approach alone
(for ``valgrind --tool=callgrind``, see docs/native.md).

The floor itself moves from one process to the next (by up to half on the Anthropic
``parallel8`` workload: the heap's layout, not the load), and every ratio with it.
``--processes K`` measures each cell (shape and workload) in K fresh processes, one after
another, and reports the median of the K ratios with their range: the figure to compare with
a target.

    python benchmarks/bench_native.py [--quick] [--memory] [--processes K]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from competitors import (
    floor_json,
    floor_json_anthropic,
    floor_sse,
    toolstitch_anthropic,
    toolstitch_anthropic_pure,
    toolstitch_assembler,
    toolstitch_pure,
    toolstitch_sse,
    toolstitch_sse_pure,
)
from workloads import Workload, anthropic_events, by_name, sse_body

import toolstitch
from toolstitch.core import assembler as core
from toolstitch.testing import PythonAssembler
from toolstitch.vocab.native import REASON

WORKLOADS = ("small", "medium", "parallel8", "write_file_64k", "write_file_1m")


Approach = Callable[[list[Any]], dict[int, Any]]
SHAPES: dict[str, dict[str, Approach]] = {
    "openai": {"floor": floor_json, "native": toolstitch_assembler, "pure": toolstitch_pure},
    "anthropic": {
        "floor": floor_json_anthropic,
        "native": toolstitch_anthropic,
        "pure": toolstitch_anthropic_pure,
    },
    "sse": {"floor": floor_sse, "native": toolstitch_sse, "pure": toolstitch_sse_pure},
}


def inputs(workload: Workload, shape: str) -> list[Any]:
    if shape == "sse":
        return sse_body(workload)
    return workload.deltas if shape == "openai" else anthropic_events(workload)


def cached_inputs(workload: str, shape: str, path: str | None) -> list[dict[str, Any]]:
    """The input of ``--only``, kept in ``path`` so that a run under callgrind spends its
    start on imports, not on making the workload."""
    if path is not None and os.path.exists(path):
        with open(path, "rb") as file:
            data: list[dict[str, Any]] = pickle.load(file)  # our own file
        return data
    data = inputs(by_name(workload), shape)
    if path is not None:
        with open(path, "wb") as file:
            pickle.dump(data, file)
    return data


def _time(fn: Approach, data: list[dict[str, Any]], loops: int) -> float:
    gc.collect()
    start = time.perf_counter()
    for _ in range(loops):
        fn(data)
    return (time.perf_counter() - start) / loops


def measure(workload: Workload, shape: str, rounds: int) -> dict[str, float]:
    """Median seconds per run of each approach, in interleaved rounds of ~20 ms samples."""
    approaches = SHAPES[shape]
    data = inputs(workload, shape)
    want = approaches["floor"](data)
    for name, fn in approaches.items():
        if fn(data) != want:
            raise SystemExit(f"{name} gave a wrong result on {workload.name}/{shape}")
    loops = max(1, int(0.02 / max(_time(approaches["pure"], data, 1), 1e-7)))
    samples: dict[str, list[float]] = {name: [] for name in approaches}
    for _ in range(rounds):
        for name, fn in approaches.items():
            samples[name].append(_time(fn, data, loops))
    return {name: statistics.median(values) for name, values in samples.items()}


def memory_per_open_call(cls: Any) -> float:
    """``tests/test_memory.py``'s measure: traced bytes per call of 2,000 open calls."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_memory import kept_per_open_call  # type: ignore[import-not-found,unused-ignore]

    per_call: float = kept_per_open_call(cls)
    return per_call


def measure_apart(shape: str, workload: str, rounds: int, processes: int) -> list[dict[str, float]]:
    """``measure`` of one cell in ``processes`` fresh processes, one after another."""
    command = [sys.executable, __file__, "--cell", f"{shape}:{workload}", "--rounds", str(rounds)]
    runs = []
    for _ in range(processes):
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout))
    return runs


def row(shape: str, workload: str, runs: list[dict[str, float]]) -> str:
    """One table row: the medians over ``runs`` (one ``measure`` each); with several runs,
    each ratio is the median of the runs' ratios, followed by their range."""
    cells = [shape, workload]
    for name in ("floor", "native", "pure"):
        cells.append(f"{statistics.median(run[name] for run in runs) * 1e6:,.1f}")
    for name in ("native", "pure"):
        ratios = sorted(run[name] / run["floor"] for run in runs)
        figure = f"{statistics.median(ratios):.2f}x"
        if len(ratios) > 1:
            figure += f" ({ratios[0]:.2f}–{ratios[-1]:.2f})"
        cells.append(figure)
    return "| " + " | ".join(cells) + " |"


def table(rounds: int, processes: int) -> None:
    where = "in this process" if processes == 1 else f"in each of {processes} processes"
    print(
        f"toolstitch {toolstitch.__version__}, {REASON}; Python "
        f"{sys.version.split()[0]}; medians of {rounds} interleaved rounds {where}\n"
    )
    print("| shape | workload | floor µs | native µs | pure µs | native/floor | pure/floor |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for shape in SHAPES:
        for name in WORKLOADS:
            if processes == 1:
                runs = [measure(by_name(name), shape, rounds)]
            else:
                runs = measure_apart(shape, name, rounds, processes)
            print(row(shape, name, runs), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 9")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 9, --quick 3)")
    parser.add_argument(
        "--processes", type=int, default=1, help="measure each cell in K fresh processes"
    )
    parser.add_argument("--memory", action="store_true", help="memory per open call only")
    parser.add_argument("--only", help="run one approach alone: SHAPE:APPROACH")
    parser.add_argument("--cell", help="measure one SHAPE:WORKLOAD, print its medians as JSON")
    parser.add_argument("--workload", default="medium")
    parser.add_argument("--loops", type=int, default=200)
    parser.add_argument("--data", help="with --only: a pickle of the input, made if missing")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 9)
    if args.only:
        shape, name = args.only.split(":")
        data = cached_inputs(args.workload, shape, args.data)
        for _ in range(args.loops):
            SHAPES[shape][name](data)
        return 0
    if args.cell:
        shape, name = args.cell.split(":")
        print(json.dumps(measure(by_name(name), shape, rounds)))
        return 0
    if args.memory:
        for label, cls in (("native", core.Assembler), ("pure", PythonAssembler)):
            print(f"{label}: {memory_per_open_call(cls):,.0f} B per open call")
        return 0
    table(rounds, max(1, args.processes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
