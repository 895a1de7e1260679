"""Where a small stream's time goes: construction, the start of a call, the fragments, the
ready path and the end, for the Assembler, the Anthropic Stitcher and SSE bytes.

Each stage is a prefix of one whole run (``Assembler()``; then the header delta; then every
fragment but the closing one; ...): a stage's cost is its prefix minus the one before it.

    python benchmarks/bench_stages.py                    # timing (best of rounds), small
    python benchmarks/bench_stages.py --workload medium
    python benchmarks/bench_stages.py --callgrind        # instruction counts (repeatable)
    python benchmarks/bench_stages.py --cache-sim        # ... and simulated misses

``--callgrind`` reruns this script under ``valgrind --tool=callgrind`` (with
``PYTHONHASHSEED=0`` and the garbage collector off) and reads the instructions of each
prefix from one dump per prefix: counts do not depend on the machine's load, so they
compare commits on a shared machine. Figures are per run of the prefix, with an empty loop
of the same length subtracted.

``--cache-sim`` adds callgrind's cache and branch simulation (``--cache-sim=yes
--branch-sim=yes``) and reports, beside the instructions, the first-level instruction and
data cache misses and the mispredicted branches (conditional and indirect) of each stage:
the reasons a stage of Python can cost more time per instruction than the floor's few
bytecodes and C calls. The simulated machine is callgrind's model, not this one's caches;
the counts compare stages and commits, not cycles.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from competitors import LIMITS, floor_json, floor_json_anthropic, floor_sse
from workloads import (
    Workload,
    anthropic_events,
    by_name,
    medium_arguments,
    parallel,
    single,
    small_arguments,
    sse_body,
)

from toolstitch import Assembler, Stitcher

Prefix = Callable[[], object]


def _assembler_prefixes(deltas: list[dict[str, Any]]) -> list[tuple[str, Prefix]]:
    head, middle, last = deltas[:1], deltas[1:-1], deltas[-1:]

    def run(parts: list[list[dict[str, Any]]], finish: bool) -> Prefix:
        def go() -> object:
            assembler = Assembler(limits=LIMITS)
            feed = assembler.feed
            for part in parts:
                for delta in part:
                    feed(delta)
            return assembler.finish() if finish else assembler

        return go

    return [
        ("construction: Assembler()", run([], False)),
        ("start of the call (header delta)", run([head], False)),
        ("fragments but the closing one", run([head, middle], False)),
        ("closing fragment (ready path)", run([head, middle, last], False)),
        ("finish()", run([head, middle, last], True)),
    ]


def _anthropic_prefixes(events: list[dict[str, Any]]) -> list[tuple[str, Prefix]]:
    starts = [i for i, e in enumerate(events) if e["type"] == "content_block_start"]
    stops = [i for i, e in enumerate(events) if e["type"] == "content_block_stop"]
    first, stop = starts[0], stops[-1]
    cuts = [
        ("construction: Stitcher(provider='anthropic')", 0, False),
        ("message_start", first, False),
        ("content_block_start (start of the call)", first + 1, False),
        ("input_json_delta events but the last", stop - 1, False),
        ("last input_json_delta", stop, False),
        ("content_block_stop (ready path)", stop + 1, False),
        ("message_delta, message_stop, close()", len(events), True),
    ]

    return [
        (name, _stitcher_run("anthropic", events[:count], close)) for name, count, close in cuts
    ]


def _sse_prefixes(pieces: list[bytes]) -> list[tuple[str, Prefix]]:
    cuts = [
        ("construction: Stitcher()", 0, False),
        ("first chunk (detection, start of the call)", 1, False),
        ("chunks but the closing one", len(pieces) - 3, False),
        ("closing chunk (ready path)", len(pieces) - 2, False),
        ("finish chunk, [DONE], close()", len(pieces), True),
    ]

    return [(name, _stitcher_run("auto", pieces[:count], close)) for name, count, close in cuts]


def _stitcher_run(provider: str, part: list[Any], close: bool) -> Prefix:
    """A new ``Stitcher(provider)`` fed ``part``, then closed if ``close``."""

    def go() -> object:
        stitcher = Stitcher(provider, limits=LIMITS)
        feed = stitcher.feed
        for piece in part:
            feed(piece)
        return stitcher.close() if close else stitcher

    return go


def workload_named(name: str) -> Workload:
    """``workloads.by_name``, without building the large workloads for the small ones."""
    if name == "small":
        return single("small", "get_weather", small_arguments(), 1)
    if name == "medium":
        return single("medium", "store_records", medium_arguments(random.Random(2)), 2)
    if name == "parallel8":
        return parallel("parallel8", 8, 4)
    return by_name(name)


def groups(workload_name: str) -> list[tuple[str, list[tuple[str, Prefix]], Prefix]]:
    """(title, prefixes, the floor's whole run) for each shape."""
    workload = workload_named(workload_name)
    events = anthropic_events(workload)
    pieces = sse_body(workload)
    return [
        (
            "Assembler (OpenAI delta dicts)",
            _assembler_prefixes(workload.deltas),
            lambda: floor_json(workload.deltas),
        ),
        (
            "Stitcher (Anthropic event dicts)",
            _anthropic_prefixes(events),
            lambda: floor_json_anthropic(events),
        ),
        ("Stitcher (OpenAI Chat SSE bytes)", _sse_prefixes(pieces), lambda: floor_sse(pieces)),
    ]


def _empty() -> None:
    return None


def _loop(fn: Prefix, count: int) -> None:
    for _ in range(count):
        fn()


# -- timing ---------------------------------------------------------------------------------


def _best(fn: Prefix, loops: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        _loop(fn, loops)
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def timing(workload_name: str, loops: int, rounds: int) -> dict[str, list[float]]:
    gc.disable()
    out: dict[str, list[float]] = {}
    for title, prefixes, floor in groups(workload_name):
        figures = [_best(fn, loops, rounds) for _, fn in prefixes]
        out[title] = [_best(floor, loops, rounds), *figures]
    return out


# -- callgrind ------------------------------------------------------------------------------


def _segments(workload_name: str, loops: int) -> None:
    """Run under callgrind: each prefix ``loops`` times between two ``os.getppid()`` calls,
    which ``--dump-before=getppid`` turns into dump boundaries."""
    gc.disable()
    everything: list[Prefix] = [_empty]
    for _, prefixes, floor in groups(workload_name):
        everything += [floor, *(fn for _, fn in prefixes)]
    for fn in everything:
        fn()  # warm: imports, caches, interned strings
    os.getppid()
    for fn in everything:
        _loop(fn, loops)
        os.getppid()


#: What ``--cache-sim`` reports: a column name and the callgrind events it adds up.
SIMULATED: Final = (
    ("instructions", ("Ir",)),
    ("I1 misses", ("I1mr",)),
    ("D1 misses", ("D1mr", "D1mw")),
    ("mispredicted branches", ("Bcm", "Bim")),
)


def callgrind(
    workload_name: str, loops: int, simulate: bool = False
) -> dict[str, dict[str, list[float]]]:
    """Per shape, per column (``instructions``; with ``simulate``, every one of
    ``SIMULATED``): the floor's whole run, then each prefix, per run."""
    options = ["--cache-sim=yes", "--branch-sim=yes"] if simulate else []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        env = dict(os.environ, PYTHONHASHSEED="0")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                *options,
                "--dump-before=getppid",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--segments",
                "--workload",
                workload_name,
                "--loops",
                str(loops),
            ],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        dumps = sorted(
            Path(tmp).glob("cg.out.*"), key=lambda p: int(p.name.rsplit(".", 1)[-1] or 0)
        )
        totals = [_totals(p) for p in dumps]
    # dump 1 ends the warm-up; then one dump per segment (the exit's dump is not globbed).
    empty, *segments = totals[1:]
    columns = SIMULATED if simulate else SIMULATED[:1]
    out_figures: dict[str, dict[str, list[float]]] = {}
    at = 0
    for title, prefixes, _ in groups(workload_name):
        size = len(prefixes) + 1
        out_figures[title] = {
            column: [
                (_sum(s, events) - _sum(empty, events)) / loops for s in segments[at : at + size]
            ]
            for column, events in columns
        }
        at += size
    return out_figures


def _sum(totals: dict[str, int], events: tuple[str, ...]) -> int:
    return sum(totals.get(event, 0) for event in events)


def _totals(path: Path) -> dict[str, int]:
    """A dump's totals by event name (``Ir``, and with the simulations ``I1mr``, ``Bcm``...)."""
    text = path.read_text(errors="replace")
    names = re.search(r"^events:\s*(.+)$", text, re.M)
    found = re.search(r"^summary:\s*(.+)$", text, re.M) or re.search(
        r"^totals:\s*(.+)$", text, re.M
    )
    if names is None or found is None:
        return {}
    return dict(zip(names.group(1).split(), map(int, found.group(1).split()), strict=False))


def _stages(values: list[float]) -> list[float]:
    """``values``: the floor's whole run, then each prefix. Each stage's own cost (its prefix
    minus the one before), then the whole run."""
    prefixes = values[1:]
    return [b - a for a, b in zip([0.0, *prefixes], prefixes, strict=False)] + prefixes[-1:]


def render(figures: dict[str, list[float]], workload_name: str, unit: str) -> str:
    lines = []
    names = {title: [n for n, _ in prefixes] for title, prefixes, _ in groups(workload_name)}
    for title, values in figures.items():
        floor = values[0]
        lines.append(f"\n{title}, {workload_name}: floor (whole run) {floor:,.0f} {unit}")
        lines.append(f"| stage | {unit} | × floor |")
        lines.append("|---|---:|---:|")
        stages = [*names[title], "**whole run**"]
        for name, value in zip(stages, _stages(values), strict=True):
            lines.append(f"| {name} | {value:,.0f} | {value / floor:.2f} |")
    return "\n".join(lines)


def render_simulated(figures: dict[str, dict[str, list[float]]], workload_name: str) -> str:
    """One table per shape: each stage's count of every ``SIMULATED`` column, and × the
    floor's whole run."""
    lines = []
    names = {title: [n for n, _ in prefixes] for title, prefixes, _ in groups(workload_name)}
    header = " | ".join(column for column, _ in SIMULATED)
    for title, columns in figures.items():
        floors = {column: values[0] or 1.0 for column, values in columns.items()}
        described = ", ".join(f"{values[0]:,.0f} {c}" for c, values in columns.items())
        lines.append(f"\n{title}, {workload_name}: floor (whole run) {described}")
        lines.append(f"| stage | {header} |")
        lines.append("|---|" + "---:|" * len(SIMULATED))
        stages = [*names[title], "**whole run**"]
        by_column = {column: _stages(values) for column, values in columns.items()}
        for at, name in enumerate(stages):
            cells = [
                f"{values[at]:,.0f} ({values[at] / floors[column]:.2f})"
                for column, values in by_column.items()
            ]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workload", default="small")
    parser.add_argument("--callgrind", action="store_true", help="instruction counts")
    parser.add_argument(
        "--cache-sim",
        action="store_true",
        help="instructions, cache misses and mispredicted branches (callgrind's simulation)",
    )
    parser.add_argument("--loops", type=int, default=0, help="runs per prefix")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--segments", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.segments:
        _segments(args.workload, args.loops)
        return 0
    if args.cache_sim:
        simulated = callgrind(args.workload, args.loops or 20, simulate=True)
        print(render_simulated(simulated, args.workload))
    elif args.callgrind:
        counted = callgrind(args.workload, args.loops or 20)
        figures = {title: columns["instructions"] for title, columns in counted.items()}
        print(render(figures, args.workload, "instructions"))
    else:
        loops = args.loops or 200
        seconds = timing(args.workload, loops, args.rounds)
        figures = {k: [v * 1e9 for v in vs] for k, vs in seconds.items()}
        print(render(figures, args.workload, "ns"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
