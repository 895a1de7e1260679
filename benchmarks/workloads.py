"""Deterministic tool-call workloads for the benchmarks: OpenAI-shaped delta dicts.

Every workload is built from a fixed seed, so two machines build the same deltas; run
``python benchmarks/workloads.py`` to print their sizes and fingerprints.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from typing import Any

Delta = dict[str, Any]


@dataclass(frozen=True)
class Workload:
    name: str
    deltas: list[Delta]
    calls: int
    argument_chars: int

    def fingerprint(self) -> str:
        blob = json.dumps(self.deltas, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def split(text: str, rng: random.Random, low: int = 1, high: int = 12) -> list[str]:
    """Cut ``text`` into fragments of ``low``..``high`` characters, the way models stream."""
    out = []
    i = 0
    while i < len(text):
        k = rng.randint(low, high)
        out.append(text[i : i + k])
        i += k
    return out


def _header(index: int, name: str) -> Delta:
    return {
        "index": index,
        "id": f"call_{index:04d}",
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }


def _fragments(index: int, pieces: list[str]) -> list[Delta]:
    return [{"index": index, "function": {"arguments": piece}} for piece in pieces]


def small_arguments() -> str:
    return json.dumps(
        {
            "location": "Zürich, Switzerland",
            "unit": "celsius",
            "days": 3,
            "include": ["humidity", "wind"],
            "note": "café ☕ at 08:00",
        },
        ensure_ascii=False,
    )


def medium_arguments(rng: random.Random, target: int = 10_000) -> str:
    records = []
    size = 0
    words = ["alpha", "Grüße", "naïve", "日本語", "emoji 🚀", 'quote "q"', "back\\slash", "tab\tx"]
    while size < target:
        record = {
            "id": rng.randint(0, 10**6),
            "big": rng.randint(2**63, 2**70),
            "score": round(rng.uniform(-1000, 1000), 4),
            "ratio": rng.uniform(0, 1) * 1e-9,
            "title": " ".join(rng.choice(words) for _ in range(rng.randint(2, 6))),
            "tags": [rng.choice(words) for _ in range(rng.randint(0, 4))],
            "flags": {"on": rng.random() < 0.5, "none": None, "bell": "\u0007"},
            "nested": {"points": [[rng.randint(-9, 9) for _ in range(3)] for _ in range(2)]},
        }
        records.append(record)
        size += len(json.dumps(record))
    # ensure_ascii=True on one key's strings gives \uXXXX escapes, incl. surrogate pairs.
    text = json.dumps({"records": records, "escaped": "emoji 🚀 é"}, ensure_ascii=False)
    return text.replace('"escaped": "emoji 🚀 é"', '"escaped": "emoji \\ud83d\\ude80 \\u00e9"')


def write_file_arguments(rng: random.Random, target: int) -> str:
    lines = []
    size = 0
    idents = ["value", "result", "buffer", "count", "items", "config", "path", "données"]
    while size < target:
        indent = "    " * rng.randint(0, 3)
        ident = rng.choice(idents)
        kind = rng.randint(0, 4)
        if kind == 0:
            line = f'{indent}{ident} = "{rng.choice(idents)}\\n"  # note'
        elif kind == 1:
            line = f"{indent}if {ident} > {rng.randint(0, 999)}:"
        elif kind == 2:
            line = f"{indent}print(f'{{{ident}!r}}\\t{rng.random():.3f}')"
        elif kind == 3:
            line = f"{indent}return {{'{ident}': [{rng.randint(0, 9)}, {rng.randint(0, 9)}]}}"
        else:
            line = f"{indent}# {ident}: {rng.choice(idents)} → {rng.choice(idents)}"
        lines.append(line)
        size += len(line) + 1
    content = "\n".join(lines)
    return json.dumps(
        {"path": "src/module.py", "content": content, "overwrite": True, "mode": 420},
        ensure_ascii=False,
    )


def single(name: str, tool: str, arguments: str, seed: int) -> Workload:
    rng = random.Random(seed)
    deltas = [_header(0, tool), *_fragments(0, split(arguments, rng))]
    return Workload(name, deltas, 1, len(arguments))


def parallel(name: str, count: int, seed: int) -> Workload:
    rng = random.Random(seed)
    queues = []
    total = 0
    for index in range(count):
        text = medium_arguments(rng, 2_000)
        total += len(text)
        queues.append([_header(index, f"tool_{index}"), *_fragments(index, split(text, rng))])
    deltas: list[Delta] = []
    # Calls open in index order, then their fragments interleave at random.
    for queue in queues:
        deltas.append(queue.pop(0))
    live = [q for q in queues if q]
    while live:
        queue = rng.choice(live)
        deltas.append(queue.pop(0))
        live = [q for q in queues if q]
    return Workload(name, deltas, count, total)


def one_char(name: str, size: int, seed: int) -> Workload:
    rng = random.Random(seed)
    text = write_file_arguments(rng, size)
    deltas = [_header(0, "write_file"), *_fragments(0, list(text))]
    return Workload(name, deltas, 1, len(text))


def standard() -> list[Workload]:
    """The workloads of the core benchmark: ~150 B, ~10 KB, ~1 MB, parallel, one-char."""
    return [
        single("small", "get_weather", small_arguments(), 1),
        single("medium", "store_records", medium_arguments(random.Random(2)), 2),
        single("large", "write_file", write_file_arguments(random.Random(3), 1_000_000), 3),
        parallel("parallel8", 8, 4),
        one_char("one_char_100k", 100_000, 5),
    ]


def sweep(sizes: tuple[int, ...] = (16_000, 64_000, 256_000, 1_000_000)) -> list[Workload]:
    """``write_file`` calls of growing size, for the growth exponent."""
    return [
        single(
            f"write_file_{size // 1000}k",
            "write_file",
            write_file_arguments(random.Random(size), size),
            size,
        )
        for size in sizes
    ]


if __name__ == "__main__":
    for workload in [*standard(), *sweep()]:
        print(
            f"{workload.name:16} calls={workload.calls:2} deltas={len(workload.deltas):8,} "
            f"chars={workload.argument_chars:10,} fingerprint={workload.fingerprint()}"
        )
