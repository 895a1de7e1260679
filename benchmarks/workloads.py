"""Deterministic tool-call workloads for the benchmarks: OpenAI-shaped delta dicts.

Every workload is built from a fixed seed, so two machines build the same deltas; run
``python benchmarks/workloads.py`` to print their sizes and fingerprints (``--all`` adds the
1 KB - 16 MB size sweep and the fingerprints of the Anthropic-shaped events and SSE bodies).

The same streams come in three shapes: OpenAI Chat tool-call delta dicts (``Workload.deltas``),
Anthropic Messages events as dicts (``anthropic_events``) and raw OpenAI Chat SSE bytes
(``sse_body``, built from ``openai_chunks``).
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


#: The size sweep of the comparison benchmark: argument sizes from 1 KB to 16 MB (targets; the
#: generated texts come out a few per cent larger).
SWEEP_SIZES: tuple[int, ...] = (
    1_000,
    4_000,
    16_000,
    64_000,
    256_000,
    1_000_000,
    4_000_000,
    16_000_000,
)


def size_name(size: int) -> str:
    """``write_file_1k`` ... ``write_file_1m`` ... ``write_file_16m``."""
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"write_file_{size // 1_000_000}m"
    return f"write_file_{size // 1000}k"


def size_sweep(sizes: tuple[int, ...] = SWEEP_SIZES) -> list[Workload]:
    """The sweep of ``sweep()`` (same seeds, same deltas, same fingerprints) with short names."""
    return [
        single(size_name(size), "write_file", write_file_arguments(random.Random(size), size), size)
        for size in sizes
    ]


def by_name(name: str) -> Workload:
    """One standard workload or sweep size by name (``small`` ... ``write_file_16m``)."""
    for workload in standard():
        if workload.name == name:
            return workload
    for size in SWEEP_SIZES:
        if size_name(size) == name:
            return size_sweep((size,))[0]
    raise KeyError(name)


# -- the same streams in other shapes ------------------------------------------------------------


def fingerprint(obj: object) -> str:
    """A short stable digest of a JSON-able object or a list of bytes."""
    digest = hashlib.sha256()
    if isinstance(obj, list) and obj and isinstance(obj[0], bytes):
        for piece in obj:
            digest.update(len(piece).to_bytes(8, "big"))
            digest.update(piece)
    else:
        digest.update(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()[:16]


def arguments_by_index(workload: Workload) -> dict[int, str]:
    """The complete arguments text of each call, by index."""
    parts: dict[int, list[str]] = {}
    for delta in workload.deltas:
        fragment = delta["function"].get("arguments")
        if fragment:
            parts.setdefault(delta["index"], []).append(fragment)
    return {index: "".join(bucket) for index, bucket in parts.items()}


def expected(workload: Workload) -> dict[int, Any]:
    """What every approach must produce: the parsed arguments of each call, by index."""
    return {index: json.loads(text) for index, text in arguments_by_index(workload).items()}


def argument_bytes(workload: Workload) -> int:
    """UTF-8 size of all the calls' arguments (what memory is compared against)."""
    return sum(len(text.encode()) for text in arguments_by_index(workload).values())


def closing_positions(workload: Workload) -> dict[int, int]:
    """Per call index, the position in ``deltas`` of the delta that closes its arguments."""
    last: dict[int, int] = {}
    for position, delta in enumerate(workload.deltas):
        if delta["function"].get("arguments"):
            last[delta["index"]] = position
    return last


CHUNK_ID = "chatcmpl-bench0000000000000000000000"
MODEL = "gpt-bench-2025-01-01"
CREATED = 1_735_689_600


def openai_chunks(workload: Workload) -> list[dict[str, Any]]:
    """OpenAI Chat Completions stream chunks: one per delta, then one with the finish reason.

    The first chunk also carries ``role`` (as the API sends it); every chunk has the usual
    envelope (``id``, ``object``, ``created``, ``model``, ``system_fingerprint``).
    """
    chunks: list[dict[str, Any]] = []
    for position, delta in enumerate(workload.deltas):
        body: dict[str, Any] = {"tool_calls": [delta]}
        if position == 0:
            body = {"role": "assistant", "content": None, "refusal": None, **body}
        chunks.append(_chunk(body, None))
    chunks.append(_chunk({}, "tool_calls"))
    return chunks


def _chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": CHUNK_ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
        "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def sse_body(workload: Workload) -> list[bytes]:
    """The raw ``text/event-stream`` body of ``openai_chunks``, one piece per event.

    Each piece is ``data: {...}\n\n`` (compact JSON, UTF-8 as the API sends it), the way a
    live stream arrives, one network read per event; the last piece is ``data: [DONE]``.
    """
    pieces = [
        b"data: " + json.dumps(chunk, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"
        for chunk in openai_chunks(workload)
    ]
    pieces.append(b"data: [DONE]\n\n")
    return pieces


def anthropic_events(workload: Workload) -> list[dict[str, Any]]:
    """The same calls as an Anthropic Messages stream, events as dicts.

    ``message_start``; per call a ``tool_use`` block (``content_block_start``, one
    ``input_json_delta`` per argument fragment, ``content_block_stop``); ``message_delta``
    with ``stop_reason: tool_use``; ``message_stop``. The block index is the call index.
    Anthropic sends one block after the other, never interleaved, so the calls of
    ``parallel8`` come whole, in index order, with the same fragments.
    """
    headers: dict[int, Delta] = {}
    fragments: dict[int, list[str]] = {}
    for delta in workload.deltas:
        index = delta["index"]
        if "id" in delta:
            headers[index] = delta
        piece = delta["function"].get("arguments")
        if piece:
            fragments.setdefault(index, []).append(piece)
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_bench0000000000000000",
                "type": "message",
                "role": "assistant",
                "model": "claude-bench",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 100, "output_tokens": 1},
            },
        }
    ]
    output_tokens = 0
    for index in sorted(headers):
        header = headers[index]
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_" + header["id"],
                    "name": header["function"]["name"],
                    "input": {},
                },
            }
        )
        for piece in fragments.get(index, []):
            output_tokens += 1
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                }
            )
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
    )
    events.append({"type": "message_stop"})
    return events


def describe(workload: Workload) -> str:
    return (
        f"{workload.name:16} calls={workload.calls:2} deltas={len(workload.deltas):9,} "
        f"chars={workload.argument_chars:11,} fingerprint={workload.fingerprint()}"
    )


if __name__ == "__main__":
    import sys

    for workload in [*standard(), *sweep()]:
        print(describe(workload))
    if "--all" in sys.argv:
        print()
        for workload in size_sweep():
            print(describe(workload))
        for workload in standard():
            print(
                f"{workload.name:16} anthropic={fingerprint(anthropic_events(workload))} "
                f"sse={fingerprint(sse_body(workload))}"
            )
