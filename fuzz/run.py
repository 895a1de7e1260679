"""Run every fuzz target, one process at a time, with a time budget and the seed corpus.

    python fuzz/run.py --budget 600                 # 600 s per target
    python fuzz/run.py --budget 60 --targets sse replay
    python fuzz/run.py --plan sse=1300:512,assembler=1100:512,adapters=900:1024,replay=500:1024
    python fuzz/run.py --targets text --plan text=4200:1024   # the text layer alone

Builds the seeds first (``fuzz/seeds.py``), keeps each target's growing corpus in
``fuzz/corpus-<target>/``, writes crash reproducers to ``fuzz/corpus-findings/`` and the
libFuzzer logs to ``fuzz/corpus-logs/`` (all gitignored), and prints per target: executions,
coverage (libFuzzer's ``cov:`` figure, instrumented Python edges), features (``ft:``), time
and findings. A target that stops on a finding is restarted for the rest of its budget
(at most ``--restarts`` times), so one finding does not end the campaign.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS = ("assembler", "sse", "adapters", "replay", "text")
_STATUS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)", re.M)
_UNITS = re.compile(r"stat::number_of_executed_units: (\d+)")


@dataclass
class Figures:
    target: str
    executions: int = 0
    cov: int = 0
    ft: int = 0
    seconds: float = 0.0
    findings: list[str] = field(default_factory=list)


def run_target(target: str, budget: float, max_len: int, restarts: int) -> Figures:
    corpus = HERE / f"corpus-{target}"
    seeds = HERE / "corpus-seeds" / target
    findings = HERE / "corpus-findings"
    logs = HERE / "corpus-logs"
    for folder in (corpus, findings, logs):
        folder.mkdir(parents=True, exist_ok=True)
    figures = Figures(target)
    start = time.monotonic()
    attempt = 0
    while attempt <= restarts:
        left = budget - (time.monotonic() - start)
        if left < 5:
            break
        before = set(findings.iterdir())
        log = logs / f"{target}-{attempt}.log"
        command = [
            sys.executable,
            str(HERE / f"fuzz_{target}.py"),
            str(corpus),
            str(seeds),
            f"-max_total_time={int(left)}",
            f"-max_len={max_len}",
            "-timeout=20",
            "-rss_limit_mb=3072",
            "-print_final_stats=1",
            f"-artifact_prefix={findings}/{target}-",
        ]
        with log.open("w") as out:
            process = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
        text = log.read_text(errors="replace")
        units = _UNITS.findall(text)
        status = _STATUS.findall(text)
        if units:
            figures.executions += int(units[-1])
        elif status:
            figures.executions += int(status[-1][0])
        if status:
            figures.cov = max(figures.cov, int(status[-1][1]))
            figures.ft = max(figures.ft, int(status[-1][2]))
        new = sorted(set(findings.iterdir()) - before)
        figures.findings += [path.name for path in new]
        if process.returncode == 0 and not new:
            break
        attempt += 1
    figures.seconds = time.monotonic() - start
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=300, help="seconds per target")
    parser.add_argument("--targets", nargs="*", choices=TARGETS, default=list(TARGETS))
    parser.add_argument("--max-len", type=int, default=4096)
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument(
        "--plan",
        default="",
        help="per-target overrides, e.g. sse=1200:512,replay=600 (seconds[:max_len])",
    )
    args = parser.parse_args()
    plan: dict[str, tuple[float, int]] = {}
    for item in filter(None, args.plan.split(",")):
        name, _, spec = item.partition("=")
        seconds, _, length = spec.partition(":")
        plan[name] = (float(seconds), int(length) if length else args.max_len)
    subprocess.run([sys.executable, str(HERE / "seeds.py")], check=True)
    results = []
    for target in args.targets:
        budget, max_len = plan.get(target, (args.budget, args.max_len))
        figures = run_target(target, budget, max_len, args.restarts)
        results.append(figures)
        print(
            f"{target:<10} executions {figures.executions:>11,}  cov {figures.cov:>5}  "
            f"ft {figures.ft:>6}  time {figures.seconds:>7.0f} s  "
            f"findings {len(figures.findings)} {' '.join(figures.findings)}",
            flush=True,
        )
    total = sum(f.executions for f in results)
    print(f"{'total':<10} executions {total:>11,}")
    return 1 if any(f.findings for f in results) else 0


if __name__ == "__main__":
    sys.exit(main())
