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
  trailing text, limits);
* ``text``: for every format in ``TEXT_FORMATS``, the texts of the peers' test cases
  (tests/text_cases/*/*.json), short examples walked from its declaration (one through each
  marker of each state, with a sample of each header rule and body grammar, back to text),
  all of them in one text, and every marker of the declaration (moves and body options) in
  one text; each in one-character chunks and in mixed chunks, the case's priming and tools
  kept.
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
from toolstitch.text.formats import TEXT_FORMATS, State, TextFormat  # noqa: E402
from toolstitch.text.headers import HEADERS  # noqa: E402
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


# -- text: the fuzz_text.py input is FORMAT FLAGS SIZES... TEXT (see its docstring) -------------

TEXT_FORMAT_NAMES = tuple(TEXT_FORMATS)  # fuzz_text.FORMATS: byte 0 picks from it
_CHUNKINGS = (b"", bytes([5, 0, 17, 2]))  # one character at a time; mixed, an empty chunk
_TEXT_SAMPLES = {"content": "Hi. ", "reasoning": "Let me think. ", "skip": "\n", "lead": ""}
_HEADER_SAMPLES = {
    "name": ("get_weather",),
    "kimi": ("functions.get_weather:0",),
    "harmony": (
        "assistant<|channel|>commentary to=functions.get_weather <|constrain|>json",
        "assistant<|channel|>analysis",
        "assistant<|channel|>final",
    ),
    "ignored": ("function",),
}
_JSON = '{"city": "Paris", "a": 1, "b": {"c": [true, null, 2.5]}}'
_CALL = '{"name": "get_weather", "arguments": ' + _JSON + "}"


def text_input(fmt: str, text: str, chunking: bytes, primed: bool = False, tools: int = 0) -> bytes:
    flags = int(primed) | tools << 1 | len(chunking) << 3
    return bytes([TEXT_FORMAT_NAMES.index(fmt), flags]) + chunking + text.encode("utf-8")


def _tagged_sample(o: Any) -> str:
    """One call in a ``tagged`` body's markup, from its options."""

    def quoted(value: str) -> str:
        return f'"{value}"' if o.get("attributes") else value

    def param(key: str, value: str, raw: bool) -> str:
        typed = f' {o["type_attribute"]}="{str(raw).lower()}"' if o.get("type_attribute") else ""
        if o.get("trim_newlines"):
            value = f"\n{value}\n"
        value = f"{o.get('value', '')}{value}{o['value_close']}"
        return f"{o['param']}{quoted(key)}{typed}{o['key_end']}{value}"

    name = quoted("get_weather")
    head = f"{o['call']}{name}{o.get('name_end', chr(10))}" if "call" in o else f"{name}\n"
    params = param("city", "Paris", True) + "\n" + param("a", "1", False)
    return f"{head}\n{params}\n{o.get('call_close', '')}\n{o.get('close', '')}"


def _body_sample(state: State) -> str:
    o = state.options
    if state.grammar == "tagged":
        return _tagged_sample(o)
    if state.grammar == "json-calls":
        return f'{o.get("opening", "[")}{_CALL}, {{"name": "f", "arguments": {{}}}}]'
    if state.grammar == "pythonic":
        calls = 'get_weather(city="Paris", a=1, b={"c": [True, None]}), f()'
        return f"[{calls}]" if o.get("brackets", True) else calls
    if state.grammar == "json-call":
        return _CALL
    return _JSON


def _edges(fmt: TextFormat) -> dict[str, list[tuple[str, str]]]:
    """``state -> [(text, next state)]``: each marker of each state with a sample of the
    state's text before it (a header's sample routes as its rule says); a body's sample."""
    edges: dict[str, list[tuple[str, str]]] = {}
    for state in fmt.states.values():
        out = edges.setdefault(state.name, [])
        if state.kind == "body":
            out.append((_body_sample(state), str(state.then)))
            continue
        if state.kind == "lead":
            out.append(("", str(state.otherwise)))
        samples: tuple[str, ...] = (_TEXT_SAMPLES.get(state.kind, ""),)
        if state.kind == "header":
            samples = _HEADER_SAMPLES.get(str(state.rule), ("get_weather",))
        for marker, move in state.moves.items():
            for sample in samples:
                to = move.to
                if state.kind == "header":
                    to = HEADERS[str(state.rule)](sample).to or to
                target = fmt.states[to]
                kept = move.keep and target.kind == "body"
                if kept and _body_sample(target).startswith(marker):
                    out.append((sample, to))
                else:
                    out.append((sample + marker, to))
    return edges


def _paths(edges: dict[str, list[tuple[str, str]]], start: str) -> dict[str, str]:
    """The text of a shortest path from ``start`` to each state it reaches."""
    paths = {start: ""}
    queue = [start]
    for state in queue:
        for text, to in edges[state]:
            if to not in paths:
                paths[to] = paths[state] + text
                queue.append(to)
    return paths


def _home(edges: dict[str, list[tuple[str, str]]], fmt: TextFormat, state: str) -> str:
    """The text of a shortest path from ``state`` back to a content state (or ``""``)."""
    paths = _paths(edges, state)
    homes = [t for s, t in paths.items() if fmt.states[s].kind == "content"]
    return min(homes, key=len) if homes else ""


def _walks(fmt: TextFormat, start: str) -> list[str]:
    """From ``start``, one short text through each marker of each state it reaches."""
    edges = _edges(fmt)
    paths = _paths(edges, start)
    walks = []
    for state, prefix in paths.items():
        for text, to in edges[state]:
            walks.append(prefix + text + _home(edges, fmt, to) + "Bye.")
    return walks


def _markers(value: object) -> list[str]:
    """Every string in a body's options (its markers), in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [m for item in value for m in _markers(item)]
    if isinstance(value, dict):
        return [m for item in value.values() for m in _markers(item)]
    return []


def _soup(fmt: TextFormat) -> str:
    found: list[str] = []
    for state in fmt.states.values():
        found += [*state.moves, *_markers(dict(state.options))]
    unique = [m for k, m in enumerate(found) if m not in found[:k] and len(m) > 1]
    return " x ".join(unique) + " " + "".join(m[: len(m) // 2] for m in unique[:3])


def _cases() -> Iterator[tuple[str, str, bool, bool]]:
    """``(format, text, primed, has tools)`` of the peers' test cases."""
    for path in sorted((ROOT / "tests" / "text_cases").glob("*/*.json")):
        try:
            cases = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        for case in cases if isinstance(cases, list) else []:
            fmt, text = case.get("format"), case.get("text")
            if fmt in TEXT_FORMATS and isinstance(text, str):
                yield fmt, text, bool(case.get("primed_reasoning")), bool(case.get("tools"))


def text_seeds() -> list[bytes]:
    seeds = []
    for name, text, primed, tools in _cases():
        for chunking in _CHUNKINGS:
            seeds.append(text_input(name, text, chunking, primed, int(tools)))
    for name, fmt in TEXT_FORMATS.items():
        starts = [(fmt.start, False)] + ([(fmt.primed, True)] if fmt.primed else [])
        for start, from_reasoning in starts:
            walks = _walks(fmt, start)
            for text in [*walks, "\n".join(walks)[:3000]]:
                for tool_set, chunking in ((0, b""), (1, _CHUNKINGS[1])):
                    seeds.append(text_input(name, text, chunking, from_reasoning, tool_set))
        seeds.append(text_input(name, _soup(fmt), _CHUNKINGS[1]))
    return seeds


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
        "text": write("text", text_seeds()),
    }


if __name__ == "__main__":
    for target, count in build().items():
        print(f"{target}: {count} seeds in {SEEDS / target}")
