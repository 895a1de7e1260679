"""Build the seed corpus of every fuzz target from the test fixtures and the examples.

    python fuzz/seeds.py            # writes fuzz/corpus-seeds/<target>/

Sources: tests/fixtures/**/*.sse, the shared corpus (../shared/corpus/*.sse, when present)
and the bundled src/toolstitch/examples/*.sse. Each target gets the sources in its own
input format (see the target's docstring):

* ``sse`` and ``replay``: the response bodies as they are (replay: also with each
  provider-selector byte);
* ``adapters``: the bodies decoded into their events, one ``event\\tjson`` line each,
  behind the adapter-selector byte;
* ``assembler``: the tool-call deltas of the OpenAI Chat and Anthropic bodies as records,
  plus a few hand-written hostile ones (deep nesting, long numbers, split surrogate pairs,
  trailing text, limits).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from toolstitch.adapters import PROVIDERS  # noqa: E402 - the fuzz targets' selector order
from toolstitch.decode.jsonarray import JSONArrayDecoder  # noqa: E402
from toolstitch.decode.sse import SSEDecoder  # noqa: E402
from toolstitch.vocab.errors import StreamDecodeError  # noqa: E402

SEEDS = Path(__file__).resolve().parent / "corpus-seeds"
SHARED = ROOT.parent / "shared" / "corpus"
_API = {"anthropic-messages": "anthropic"}

RS, US = "\x1e", "\x1f"


def bodies() -> Iterator[tuple[str | None, bytes]]:
    """``(provider or None, body)`` for every recorded stream available."""
    for path in sorted((ROOT / "tests" / "fixtures").glob("*/*.sse")):
        yield path.parent.name, path.read_bytes()
    manifest = SHARED / "manifest.json"
    if manifest.is_file():
        for entry in json.loads(manifest.read_text(encoding="utf-8")):
            api = str(entry["api"])
            yield _API.get(api, api), (SHARED / str(entry["file"])).read_bytes()
    for path in sorted((ROOT / "src" / "toolstitch" / "examples").glob("*.sse")):
        yield None, path.read_bytes()


def events(body: bytes) -> list[tuple[str | None, Any]]:
    """The decoded events of one body (SSE or JSON array); ``[]`` if it does not decode."""
    out: list[tuple[str | None, Any]] = []
    try:
        if body.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
            array = JSONArrayDecoder()
            items = [*array.feed(body), *array.close()]
            return [(None, item) for item in items]
        sse = SSEDecoder()
        for message in [*sse.feed(body), *sse.close()]:
            if message.is_done or not message.data.strip():
                continue
            try:
                payload = json.loads(message.data)
            except ValueError:
                continue
            out.append((None if message.event == "message" else message.event, payload))
    except StreamDecodeError:
        return []
    return out


def _field(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return "\x02" if text == "" else text


def assembler_records(provider: str | None, body: bytes) -> list[str]:
    records: list[str] = []
    for event, payload in events(body):
        if not isinstance(payload, dict):
            continue
        for choice in payload.get("choices") or []:
            delta = (choice or {}).get("delta") or {}
            for entry in delta.get("tool_calls") or []:
                function = entry.get("function") or {}
                records.append(
                    "d"
                    + US.join(
                        _field(v)
                        for v in (
                            entry.get("index"),
                            entry.get("id"),
                            function.get("name"),
                            function.get("arguments"),
                            entry.get("type"),
                        )
                    )
                )
        kind = payload.get("type") or event
        index = payload.get("index")
        if kind == "content_block_start":
            block = payload.get("content_block") or {}
            if block.get("type") == "tool_use":
                records.append("d" + US.join(map(_field, (index, block.get("id"), block["name"]))))
        elif kind == "content_block_delta":
            delta = payload.get("delta") or {}
            if delta.get("type") == "input_json_delta":
                records.append(
                    "d" + US.join(map(_field, (index, None, None, delta["partial_json"])))
                )
        elif kind == "content_block_stop":
            records.append("e" + _field(index))
    if records:
        records.append("f")
    return records


HANDWRITTEN = [
    ["d0\x1fc1\x1frun\x1f" + "[" * 300],
    ['d0\x1fc1\x1frun\x1f{"a":' + "[" * 200 + "1" + "]" * 200 + "}"],
    ['d0\x1fc1\x1frun\x1f{"n":' + "9" * 4500 + "}"],
    ['d0\x1fc1\x1frun\x1f{"s":"\x0e', 'd0\x1f\x1f\x1f\x0f"}'],
    ['d0\x1fc1\x1frun\x1f{"s":"\\ud83d', 'd0\x1f\x1f\x1f\\ude80"} x'],
    ['d0\x1fc1\x1frun\x1f{"a":NaN}', 'd1\x1fc2\x1frun\x1f{"a":1}{}', "f"],
    ["L8\x1f2\x1f3\x1f4\x1f4\x1f3", 'd0\x1fc1\x1frun\x1f{"abcdefgh":1}', "d1", "d2", "d3"],
    ["d\x1f\x1frun", "d\x1fc9\x1f\x1f{}", 'd\x1fc10\x1fgo\x1f{"x":1e5}', "x-", "xs", "f"],
    ["m3\x1fid\x1f\x1f{}", "o3\x1f\x1fna\x1f", "o3\x1f\x1fme", "e3", "r", "d0\x1f\x1f\x1f  "],
    ['d0\x1fc1\x1frun\x1f{"e":1E1000000000000000000}'],
]


def write(target: str, seeds: list[bytes]) -> int:
    folder = SEEDS / target
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for seed in seeds:
        if not seed:
            continue
        name = hashlib.sha1(seed).hexdigest()
        path = folder / name
        if not path.exists():
            path.write_bytes(seed)
        written += 1
    return written


def build() -> dict[str, int]:
    sse: list[bytes] = []
    replay: list[bytes] = []
    adapters: list[bytes] = []
    assembler: list[bytes] = []
    for provider, body in bodies():
        sse.append(b"\x00\x00" + body)
        replay.append(body)
        if provider is not None:
            replay.append(bytes([1 + PROVIDERS.index(provider)]) + body)
        decoded = events(body)
        if provider is not None and decoded:
            lines = [
                (event or "") + "\t" + json.dumps(payload, ensure_ascii=False)
                for event, payload in decoded
            ]
            adapters.append(
                bytes([PROVIDERS.index(provider), 0]) + "\n".join(lines).encode("utf-8")
            )
        records = assembler_records(provider, body)
        if records:
            assembler.append(RS.join(records).encode("utf-8", "surrogatepass"))
    for records in HANDWRITTEN:
        assembler.append(RS.join(records).encode("utf-8", "surrogateescape"))
    return {
        "sse": write("sse", sse),
        "replay": write("replay", replay),
        "adapters": write("adapters", adapters),
        "assembler": write("assembler", assembler),
    }


if __name__ == "__main__":
    for target, count in build().items():
        print(f"{target}: {count} seeds in {SEEDS / target}")
