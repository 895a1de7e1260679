"""Tool calls written in model text: the floor, toolstitch and the peers' re-parse, side by side.

An open-weight model writes its tool calls into its raw output between markers
(``<tool_call>{…}</tool_call>``, Qwen3-Coder's ``<function=…><parameter=…>``, …). This measures,
in one process, on the same output (one call whose arguments hold a long string, like a written
file) fed as ``str`` chunks of one character and of one "token" (4 characters):

* ``floor``: append each chunk to a list; at the end join, find the markers with ``str.find``,
  decode each call once (``json.loads``; the XML-ish formats: their values cut out with
  ``str.find``; pythonic: one ``ast.parse``);
* ``toolstitch``: ``deque(toolstitch.stitch(chunks, text_format=NAME), maxlen=0)``, every
  event consumed (taken and dropped, as a consumer does),
  on the path users get by default (the C extension when it is built);
* ``peer`` (hermes only): the method of vLLM's hermes parser and of SGLang's detectors,
  re-implemented here: on every delta, append it to the accumulated text, find the call region,
  re-parse the call text with ``partial_json_parser.loads``, re-dump its arguments and send the
  part of the dump that is stable (the common prefix of this dump and the last) beyond what was
  already sent; at the close marker, the rest of the dump. It is quadratic: it runs up to
  40 KB of arguments and is skipped (said so in the table) past that.

    python benchmarks/bench_text.py --quick                  # 1 KB and 10 KB, every format
    python benchmarks/bench_text.py                          # 1 KB → 4 MB (tens of minutes)
    python benchmarks/bench_text.py --formats hermes --sizes 64k,4m --chunk 4 --json out.json

Theory of operation
-------------------
Each format has a writer (``NAME + arguments`` → the text the model writes) and the floor's
reader of the joined text, both here (``FORMATS``). For each format, chunking and size the
output is written once and cut into chunks; every approach is first checked to give the call
that was written (a wrong one is reported, not timed); then the approaches are sampled in
interleaved rounds and each keeps its best sample (best of ``--repeat``; a sample repeats a run
until it lasts ``MIN_SAMPLE``; an approach stops sampling once its runs on that input add up to
``PATIENCE`` seconds). The figures to read are the ratios to the floor and toolstitch's growth
exponent, the least-squares slope of log time over log argument chars from 64 KB to 4 MB
(1 = linear).
"""

from __future__ import annotations

import argparse
import ast
import functools
import gc
import inspect
import json
import math
import random
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bench_compare import slope
from competitors import package, versions
from workloads import write_file_arguments

import toolstitch
from toolstitch.vocab.native import REASON

Arguments = dict[str, Any]
Call = tuple[str, Arguments]

TOOL = "write_file"
SIZES = (1_000, 10_000, 40_000, 64_000, 256_000, 1_000_000, 4_000_000)
QUICK_SIZES = (1_000, 10_000)
#: The peers' method is quadratic: it is measured up to this many argument chars.
PEER_MAX = 40_000
#: The growth exponent is fitted over the sizes in this range (argument chars, nominal).
GROWTH = (64_000, 4_000_000)
#: Issue 30's targets: growth exponent, and toolstitch/floor from RATIO_FROM chars up.
TARGET_EXPONENT = 1.05
TARGET_RATIO = 10.0
RATIO_FROM = 10_000
#: Seconds of runs after which an approach stops repeating on one input.
PATIENCE = 10.0
#: A sample repeats a run until it lasts this long (seconds), so that short runs are not lost
#: in the timer's noise.
MIN_SAMPLE = 0.02


# -- the formats: writers and the floor's readers ------------------------------------------------


def _bodies(text: str, start: str, end: str) -> Iterator[str]:
    """The text after each ``start`` up to ``end`` (``""``: up to the next start or the end)."""
    at = text.find(start)
    while at >= 0:
        at += len(start)
        stop = text.find(end or start, at)
        if stop < 0:
            if end:
                raise ValueError(f"{end!r} missing")
            stop = len(text)
        yield text[at:stop]
        at = text.find(start, stop)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _raw(value: object) -> str:
    """A value as an XML-ish format writes it: strings raw, anything else as JSON."""
    return value if isinstance(value, str) else _json(value)


@dataclass(frozen=True)
class Tags:
    """Where an XML-ish format's call and values are: the floor cuts them out with ``find``."""

    call: str  # opens the call, the name follows
    name_end: str
    close: str  # closes the call
    key: str  # opens a parameter, its key follows
    key_end: str
    value: str  # opens the value after ``key_end`` ("" : the value follows at once)
    value_end: str
    strip: bool = False  # one leading and one trailing newline of a value are markup

    def read(self, text: str) -> list[Call]:
        calls = []
        for body in _bodies(text, self.call, self.close):
            at = body.find(self.name_end)
            name, arguments = body[:at].strip(), {}
            at = body.find(self.key, at)
            while at >= 0:
                at += len(self.key)
                key_end = body.find(self.key_end, at)
                key = body[at:key_end]
                start = key_end + len(self.key_end)
                if self.value:
                    start = body.find(self.value, start) + len(self.value)
                end = body.find(self.value_end, start)
                value = body[start:end]
                if self.strip:
                    value = value.removeprefix("\n").removesuffix("\n")
                arguments[key] = value
                at = body.find(self.key, end)
            calls.append((name, arguments))
        return calls


def _write_hermes(name: str, arguments: Arguments) -> str:
    return f"<tool_call>\n{_json({'name': name, 'arguments': arguments})}\n</tool_call>"


def _read_hermes(text: str) -> list[Call]:
    found = [json.loads(body) for body in _bodies(text, "<tool_call>", "</tool_call>")]
    return [(call["name"], call["arguments"]) for call in found]


def _write_mistral(name: str, arguments: Arguments) -> str:
    return f"[TOOL_CALLS]{name}[ARGS]{_json(arguments)}"


def _read_mistral(text: str) -> list[Call]:
    calls = []
    for body in _bodies(text, "[TOOL_CALLS]", ""):
        name, _, arguments = body.partition("[ARGS]")
        calls.append((name, json.loads(arguments)))
    return calls


def _write_llama3_json(name: str, arguments: Arguments) -> str:
    return f"<|python_tag|>{_json({'name': name, 'parameters': arguments})}"


def _read_llama3_json(text: str) -> list[Call]:
    found = [json.loads(body) for body in _bodies(text, "<|python_tag|>", "")]
    return [(call["name"], call["parameters"]) for call in found]


def _write_pythonic(name: str, arguments: Arguments) -> str:
    keywords = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return f"<|python_start|>[{name}({keywords})]<|python_end|>"


def _read_pythonic(text: str) -> list[Call]:
    calls = []
    for body in _bodies(text, "<|python_start|>", "<|python_end|>"):
        tree = ast.parse(body, mode="eval").body
        assert isinstance(tree, ast.List)
        for call in tree.elts:
            assert isinstance(call, ast.Call)
            assert isinstance(call.func, ast.Name)
            keywords = {str(k.arg): ast.literal_eval(k.value) for k in call.keywords}
            calls.append((call.func.id, keywords))
    return calls


DEEPSEEK_CALLS, DEEPSEEK_CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
DEEPSEEK_CALL, DEEPSEEK_CALL_END = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"
DEEPSEEK_SEP = "<｜tool▁sep｜>"


def _write_deepseek_v3(name: str, arguments: Arguments) -> str:
    call = f"function{DEEPSEEK_SEP}{name}\n```json\n{_json(arguments)}\n```"
    return f"{DEEPSEEK_CALLS}{DEEPSEEK_CALL}{call}{DEEPSEEK_CALL_END}{DEEPSEEK_CALLS_END}"


def _read_deepseek_v3(text: str) -> list[Call]:
    calls = []
    for body in _bodies(text, DEEPSEEK_CALL, DEEPSEEK_CALL_END):
        name, _, fenced = body.partition(DEEPSEEK_SEP)[2].partition("\n")
        arguments = fenced.removeprefix("```json\n").removesuffix("\n```")
        calls.append((name, json.loads(arguments)))
    return calls


def _write_deepseek_v31(name: str, arguments: Arguments) -> str:
    call = f"{name}{DEEPSEEK_SEP}{_json(arguments)}"
    return f"{DEEPSEEK_CALLS}{DEEPSEEK_CALL}{call}{DEEPSEEK_CALL_END}{DEEPSEEK_CALLS_END}"


def _read_deepseek_v31(text: str) -> list[Call]:
    calls = []
    for body in _bodies(text, DEEPSEEK_CALL, DEEPSEEK_CALL_END):
        name, _, arguments = body.partition(DEEPSEEK_SEP)
        calls.append((name, json.loads(arguments)))
    return calls


def _write_dsml(name: str, arguments: Arguments) -> str:
    lines = [f'<｜DSML｜invoke name="{name}">']
    for key, value in arguments.items():
        kind = "true" if isinstance(value, str) else "false"
        lines.append(
            f'<｜DSML｜parameter name="{key}" string="{kind}">{_raw(value)}</｜DSML｜parameter>'
        )
    body = "\n".join([*lines, "</｜DSML｜invoke>"])
    return f"<｜DSML｜function_calls>\n{body}\n</｜DSML｜function_calls>"


def _write_kimi_k2(name: str, arguments: Arguments) -> str:
    return (
        f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0"
        f"<|tool_call_argument_begin|>{_json(arguments)}<|tool_call_end|>"
        "<|tool_calls_section_end|>"
    )


def _read_kimi_k2(text: str) -> list[Call]:
    calls = []
    for body in _bodies(text, "<|tool_call_begin|>", "<|tool_call_end|>"):
        header, _, arguments = body.partition("<|tool_call_argument_begin|>")
        name = header.strip().removeprefix("functions.").rpartition(":")[0]
        calls.append((name, json.loads(arguments)))
    return calls


def _write_glm(name: str, arguments: Arguments, newline: str) -> str:
    pairs = "".join(
        f"{newline}<arg_key>{key}</arg_key>{newline}<arg_value>{_raw(value)}</arg_value>"
        for key, value in arguments.items()
    )
    return f"<tool_call>{name}{pairs}{newline}</tool_call>"


def _write_minimax_m2(name: str, arguments: Arguments) -> str:
    parameters = "".join(
        f'<parameter name="{key}">{_raw(value)}</parameter>\n' for key, value in arguments.items()
    )
    return (
        f'<minimax:tool_call>\n<invoke name="{name}">\n{parameters}</invoke>\n</minimax:tool_call>'
    )


def _write_harmony(name: str, arguments: Arguments) -> str:
    return (
        f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
        f"{_json(arguments)}<|call|>"
    )


def _read_harmony(text: str) -> list[Call]:
    calls = []
    for body in _bodies(text, " to=functions.", "<|call|>"):
        name, _, rest = body.partition(" ")
        calls.append((name, json.loads(rest.partition("<|message|>")[2])))
    return calls


def _write_array(start: str, name: str, arguments: Arguments) -> str:
    return f"{start}{_json([{'name': name, 'arguments': arguments}])}"


def _read_array(start: str, text: str) -> list[Call]:
    found = [call for body in _bodies(text, start, "") for call in json.loads(body)]
    return [(call["name"], call["arguments"]) for call in found]


def _write_qwen3_coder(name: str, arguments: Arguments) -> str:
    parameters = "".join(
        f"<parameter={key}>\n{_raw(value)}\n</parameter>\n" for key, value in arguments.items()
    )
    return f"<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>"


def _write_seed_oss(name: str, arguments: Arguments) -> str:
    parameters = "".join(
        f"<parameter={key}>{_raw(value)}</parameter>\n" for key, value in arguments.items()
    )
    return f"<seed:tool_call>\n<function={name}>\n{parameters}</function>\n</seed:tool_call>"


GEMMA_QUOTE = '<|"|>'


def _gemma_value(value: object) -> str:
    return f"{GEMMA_QUOTE}{value}{GEMMA_QUOTE}" if isinstance(value, str) else _json(value)


def _write_gemma4(name: str, arguments: Arguments) -> str:
    pairs = ",".join(f"{key}:{_gemma_value(value)}" for key, value in arguments.items())
    return f"<|tool_call>call:{name}{{{pairs}}}<tool_call|>"


def _read_gemma4(text: str) -> list[Call]:
    """Calls whose values are all strings (what the writer makes of this benchmark's)."""
    calls = []
    for body in _bodies(text, "<|tool_call>", "<tool_call|>"):
        brace = body.find("{")
        name, arguments, at = body[len("call:") : brace], {}, brace + 1
        while body[at] != "}":
            colon = body.find(":" + GEMMA_QUOTE, at)
            start = colon + 1 + len(GEMMA_QUOTE)
            end = body.find(GEMMA_QUOTE, start)
            arguments[body[at:colon]] = body[start:end]
            at = end + len(GEMMA_QUOTE)
            at += body[at] == ","
        calls.append((name, arguments))
    return calls


@dataclass(frozen=True)
class Format:
    """One text format as this benchmark writes and floors it."""

    write: Callable[[str, Arguments], str]
    read: Callable[[str], list[Call]]


SEED = Tags("<function=", ">", "</function>", "<parameter=", ">", "", "</parameter>")
QWEN = replace(SEED, strip=True)
GLM = Tags(
    *("<tool_call>", "<arg_key>", "</tool_call>"),
    *("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
)
MINIMAX = Tags('<invoke name="', '">', "</invoke>", '<parameter name="', '">', "", "</parameter>")
DSML = Tags(
    *('<｜DSML｜invoke name="', '">', "</｜DSML｜invoke>", '<｜DSML｜parameter name="'),
    *('" string="true">', "", "</｜DSML｜parameter>"),
)

#: Canonical format name (issue 30's) → its writer and the floor's reader.
FORMATS: dict[str, Format] = {
    "hermes": Format(_write_hermes, _read_hermes),
    "qwen3-coder": Format(_write_qwen3_coder, QWEN.read),
    "mistral": Format(_write_mistral, _read_mistral),
    "llama3-json": Format(_write_llama3_json, _read_llama3_json),
    "pythonic": Format(_write_pythonic, _read_pythonic),
    "deepseek-v3": Format(_write_deepseek_v3, _read_deepseek_v3),
    "deepseek-v3.1": Format(_write_deepseek_v31, _read_deepseek_v31),
    "deepseek-v3.2": Format(_write_dsml, DSML.read),
    "kimi-k2": Format(_write_kimi_k2, _read_kimi_k2),
    "glm-4.5": Format(functools.partial(_write_glm, newline="\n"), GLM.read),
    "glm-4.7": Format(functools.partial(_write_glm, newline=""), GLM.read),
    "minimax-m2": Format(_write_minimax_m2, MINIMAX.read),
    "harmony": Format(_write_harmony, _read_harmony),
    "granite": Format(
        functools.partial(_write_array, "<|tool_call|>"),
        functools.partial(_read_array, "<|tool_call|>"),
    ),
    "seed-oss": Format(_write_seed_oss, SEED.read),
    "gemma4": Format(_write_gemma4, _read_gemma4),
    "phi4-mini": Format(
        functools.partial(_write_array, "functools"), functools.partial(_read_array, "functools")
    ),
}


# -- the approaches ------------------------------------------------------------------------------


def floor(form: Format, chunks: list[str]) -> list[Call]:
    """Append each chunk; at the end join, find the markers, decode each call once."""
    parts: list[str] = []
    append = parts.append
    for chunk in chunks:
        append(chunk)
    return form.read("".join(parts))


def available() -> bool:
    """Whether ``toolstitch.stitch`` reads text formats yet."""
    return "text_format" in inspect.signature(toolstitch.stitch).parameters


def registered() -> list[str]:
    """The text formats toolstitch registers (``toolstitch.TEXT_FORMATS``), hermes until then."""
    formats = getattr(toolstitch, "TEXT_FORMATS", None)
    return list(formats) if formats else ["hermes"]


def toolstitch_events(name: str, chunks: list[str]) -> int:
    """The timed path: every event of ``stitch(chunks, text_format=name)``, each taken and
    dropped as a consumer does. Not kept: a list of a million events would time Python's
    garbage collector walking it (4 MB of hermes arguments in 4-character pieces: 0.99 µs a
    piece kept, 0.58 µs dropped, 0.61 µs at 64 KB either way). The calls read."""
    run = toolstitch.stitch(chunks, text_format=name)
    deque(run, maxlen=0)
    return len(run.result.calls)


def toolstitch_calls(name: str, chunks: list[str]) -> tuple[list[Call], str]:
    """The calls toolstitch reads, and what it discarded or warned about ("" if nothing)."""
    result = toolstitch.stitch(chunks, text_format=name).collect()
    calls = [(call.name, call.parsed_arguments) for call in result.calls]
    trouble = [f"discarded: {d.error.code}" for d in result.discarded]
    trouble += [f"warning: {w.error.code}: {w.error}" for w in result.warnings]
    return calls, "; ".join(trouble)


HERMES_START, HERMES_END = "<tool_call>", "</tool_call>"


def _stable(previous: str, current: str, start: int) -> int:
    """Length of the common prefix of ``previous`` and ``current``, known to be ≥ ``start``."""
    limit = min(len(previous), len(current))
    while start < limit and previous[start] == current[start]:
        start += 1
    return start


def peer_hermes(chunks: list[str]) -> list[Call]:
    """The peers' method (SGLang's detectors; vLLM's hermes parser as of commit becf329, whose
    later versions re-scan the call text with a Python character loop instead, O(n) per delta
    too), re-implemented.

    Per delta: accumulate, find the call region after the last start marker, re-parse it with
    ``partial_json_parser`` (partial strings refused until the name is sent, so that a cut
    name is not sent), re-dump the arguments and send the stable part of the dump not yet
    sent. The stable part is found from where the sent text ends (cheaper than the peers'
    scan from the start: the measure is not inflated by it).
    """
    parser = package("partial_json_parser")
    loads, every = parser.loads, parser.Allow.ALL
    text, base = "", 0  # text before ``base`` belongs to calls already ended
    calls: list[Call] = []
    name: str | None = None
    sent, previous = "", ""
    for delta in chunks:
        text += delta
        begin = text.rfind(HERMES_START, base)
        if begin < 0:
            continue  # content
        region = text[begin + len(HERMES_START) :]
        end = region.find(HERMES_END)
        try:
            found = loads(
                region if end < 0 else region[:end], every if name else every & ~parser.Allow.STR
            )
        except ValueError:  # nothing parsable yet: wait for more
            continue
        if name is None and isinstance(found, dict) and isinstance(found.get("name"), str):
            name = found["name"]  # sent
        if name is not None and isinstance(found, dict) and "arguments" in found:
            dumped = _json(found["arguments"])
            if end >= 0:
                sent += dumped[len(sent) :]  # sent: the call is complete
            elif dumped != previous:
                sent += dumped[len(sent) : _stable(previous, dumped, len(sent))]  # sent
            previous = dumped
        if end >= 0:
            calls.append((name or "", json.loads(sent or "{}")))
            name, sent, previous = None, "", ""
            base = begin + len(HERMES_START) + end + len(HERMES_END)
    return calls


# -- measuring -----------------------------------------------------------------------------------


@functools.cache
def arguments(size: int) -> Arguments:
    """A ``write_file`` call's arguments of about ``size`` chars: a path and a long content."""
    content = json.loads(write_file_arguments(random.Random(size), size))["content"]
    return {"path": "src/module.py", "content": content}


def split(text: str, chunk: int) -> list[str]:
    return [text[at : at + chunk] for at in range(0, len(text), chunk)]


@dataclass
class Cell:
    """One format, chunking and size: each approach's best time, or why it has none."""

    format: str
    chunk: int
    size: int  # nominal argument chars
    chars: int  # the arguments' JSON text
    text_chars: int  # the whole output
    chunks: int
    seconds: dict[str, float] = field(default_factory=dict)  # the best sample's, per run
    samples: dict[str, int] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)  # not measured: why

    def ratio(self, approach: str) -> float | None:
        ours, base = self.seconds.get(approach), self.seconds.get("floor")
        return ours / base if ours is not None and base else None


def _timed(fn: Callable[[], object], loops: int = 1) -> tuple[float, object]:
    """Seconds per run of ``fn`` over ``loops`` runs, and what the last run returned."""
    gc.collect()
    result = None
    start = time.perf_counter()
    for _ in range(loops):
        result = fn()
    return (time.perf_counter() - start) / loops, result


def _candidates(cell: Cell, chunks: list[str], want: list[Call]) -> dict[str, Callable[[], object]]:
    """The approaches to time on this cell, each checked first; the others get a status."""
    name = cell.format
    out: dict[str, Callable[[], object]] = {
        "floor": functools.partial(floor, FORMATS[name], chunks)
    }
    if not available():
        cell.status["toolstitch"] = "stitch has no text_format yet"
    else:
        got, trouble = toolstitch_calls(name, chunks)
        if got == want:
            out["toolstitch"] = functools.partial(toolstitch_events, name, chunks)
        else:
            why = trouble or f"{len(got)} calls"
            cell.status["toolstitch"] = f"wrong calls ({why[:60]}{'…' if len(why) > 60 else ''})"
    if name == "hermes":
        if cell.size > PEER_MAX:
            cell.status["peer"] = f"skipped: quadratic, measured up to {_size(PEER_MAX)}"
        elif versions()["partial-json-parser"] == "absent":
            cell.status["peer"] = "partial-json-parser is not installed"
        else:
            out["peer"] = functools.partial(peer_hermes, chunks)
    return out


def _sample(cell: Cell, approach: str, seconds: float) -> None:
    cell.samples[approach] = cell.samples.get(approach, 0) + 1
    cell.seconds[approach] = min(seconds, cell.seconds.get(approach, math.inf))


def measure(name: str, chunk: int, size: int, repeat: int) -> Cell:
    """Check every approach on one output, then time them in interleaved rounds."""
    args = arguments(size)
    text = FORMATS[name].write(TOOL, args)
    chunks = split(text, chunk)
    want = [(TOOL, args)]
    cell = Cell(name, chunk, size, len(_json(args)), len(text), len(chunks))
    runners = _candidates(cell, chunks, want)
    loops: dict[str, int] = {}
    for approach, run in list(runners.items()):
        seconds, result = _timed(run)  # the first sample (toolstitch's calls were checked)
        if approach != "toolstitch" and result != want:
            if approach == "floor":
                raise SystemExit(f"bench_text: the floor misreads {name}: fix its writer")
            cell.status[approach] = "wrong calls"
            del runners[approach]
            continue
        _sample(cell, approach, seconds)
        loops[approach] = max(1, int(MIN_SAMPLE / max(seconds, 1e-7)))
    spent = {approach: cell.seconds[approach] for approach in runners}
    for _ in range(repeat - 1):
        for approach, run in runners.items():
            if spent[approach] < PATIENCE:
                seconds, _ = _timed(run, loops[approach])
                spent[approach] += seconds * loops[approach]
                _sample(cell, approach, seconds)
    return cell


def growth(cells: list[Cell], approach: str) -> float | None:
    low, high = GROWTH
    points = [
        (float(c.chars), c.seconds[approach])
        for c in cells
        if low <= c.size <= high and approach in c.seconds
    ]
    return slope(points)


@dataclass
class Verdict:
    """Issue 30's targets for one format and chunking."""

    format: str
    chunk: int
    exponent: float | None
    floor_exponent: float | None
    worst_ratio: float | None  # toolstitch/floor, from RATIO_FROM chars up
    exponent_met: bool | None
    ratio_met: bool | None


def verdict(cells: list[Cell]) -> Verdict:
    exponent = growth(cells, "toolstitch")
    ratios = [r for c in cells if c.size >= RATIO_FROM and (r := c.ratio("toolstitch"))]
    worst = max(ratios) if ratios else None
    return Verdict(
        cells[0].format,
        cells[0].chunk,
        exponent,
        growth(cells, "floor"),
        worst,
        None if exponent is None else exponent <= TARGET_EXPONENT,
        None if worst is None else worst <= TARGET_RATIO,
    )


# -- output --------------------------------------------------------------------------------------


def _size(size: int) -> str:
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000} MB"
    return f"{size / 1000:g} KB" if size >= 1000 else f"{size} B"


def _duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def _time_cell(cell: Cell, approach: str) -> str:
    if approach in cell.seconds:
        return _duration(cell.seconds[approach])
    return cell.status.get(approach, "—")


def _ratio_cell(cell: Cell, approach: str) -> str:
    ratio = cell.ratio(approach)
    if ratio is None:
        return "—"
    return f"{ratio:,.0f}×" if ratio >= 100 else f"{ratio:.2f}×"


def _figure(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def table(cells: list[Cell]) -> list[str]:
    """One format and chunking: a row per size, then the growth exponents."""
    first = cells[0]
    peer = first.format == "hermes"
    head = "| arguments | chars | chunks | floor | toolstitch | toolstitch/floor |"
    head += " peer | peer/floor |" if peer else ""
    out = [f"### {first.format}, {first.chunk} char(s) per chunk", "", head]
    out.append("|---:" * (8 if peer else 6) + "|")
    for cell in cells:
        row = (
            f"| {_size(cell.size)} | {cell.chars:,} | {cell.chunks:,} | {_time_cell(cell, 'floor')}"
            f" | {_time_cell(cell, 'toolstitch')} | {_ratio_cell(cell, 'toolstitch')} |"
        )
        if peer:
            row += f" {_time_cell(cell, 'peer')} | {_ratio_cell(cell, 'peer')} |"
        out.append(row)
    found = verdict(cells)
    low, high = GROWTH
    out += [
        "",
        f"growth exponent {_size(low)} → {_size(high)}: toolstitch "
        f"{_figure(found.exponent, 3)}, floor {_figure(found.floor_exponent, 3)}",
        "",
    ]
    return out


def _met(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "**no**")


def summary(verdicts: list[Verdict]) -> list[str]:
    out = [
        f"### Targets: growth exponent ≤ {TARGET_EXPONENT} ({_size(GROWTH[0])} → "
        f"{_size(GROWTH[1])}), toolstitch ≤ {TARGET_RATIO:g}× the floor from "
        f"{_size(RATIO_FROM)} up",
        "",
        "| format | chars per chunk | exponent | floor's | met | worst ratio | met |",
        "|---|---:|---:|---:|---|---:|---|",
    ]
    for v in verdicts:
        worst = "—" if v.worst_ratio is None else f"{v.worst_ratio:.2f}×"
        out.append(
            f"| {v.format} | {v.chunk} | {_figure(v.exponent, 3)} | "
            f"{_figure(v.floor_exponent, 3)} | {_met(v.exponent_met)} | {worst} | "
            f"{_met(v.ratio_met)} |"
        )
    return out


def facts(repeat: int) -> dict[str, Any]:
    return {
        "toolstitch": toolstitch.__version__,
        "path": REASON,
        "python": sys.version.split()[0],
        "versions": versions(),
        "repeat": repeat,
        "patience_seconds": PATIENCE,
        "peer_max_chars": PEER_MAX,
    }


# -- main ----------------------------------------------------------------------------------------


def _sizes(text: str) -> tuple[int, ...]:
    """``1k,64k,4m`` or plain numbers (thousands of 1000, as the rest of benchmarks/)."""
    scale = {"k": 1_000, "m": 1_000_000}
    out = []
    for item in text.lower().replace("b", "").split(","):
        item = item.strip()
        factor = scale.get(item[-1:], 1)
        out.append(int(float(item.rstrip("km")) * factor))
    return tuple(out)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(item) for item in text.split(","))


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--formats", help="comma-separated names (default: every registered one)")
    parser.add_argument("--sizes", type=_sizes, help="argument sizes, e.g. 1k,64k,4m")
    parser.add_argument("--chunk", type=_ints, default=(1, 4), help="chars per chunk (1,4)")
    parser.add_argument("--repeat", type=int, default=5, help="best of N samples (default 5)")
    parser.add_argument("--quick", action="store_true", help="the smallest sizes only")
    parser.add_argument("--json", type=Path, help="write the results here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    names = args.formats.split(",") if args.formats else registered()
    unknown = [name for name in names if name not in FORMATS]
    if unknown:
        print(f"no generator in bench_text.py for: {', '.join(unknown)}", file=sys.stderr)
        names = [name for name in names if name in FORMATS]
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    began = time.perf_counter()
    info = facts(args.repeat)
    print(
        f"toolstitch {info['toolstitch']}, {info['path']}; Python {info['python']}; "
        f"seconds per run, best of {args.repeat} samples of ≥ {MIN_SAMPLE * 1e3:g} ms (fewer "
        f"past {PATIENCE:g} s of runs per input)\n"
    )
    cells: list[Cell] = []
    verdicts: list[Verdict] = []
    for name in names:
        for chunk in args.chunk:
            group = []
            for size in sizes:
                group.append(measure(name, chunk, size, args.repeat))
                print(
                    f"[{time.perf_counter() - began:7.1f} s] {name}, {chunk} char(s), "
                    f"{_size(size)}",
                    file=sys.stderr,
                    flush=True,
                )
            print("\n".join(table(group)), flush=True)
            cells += group
            verdicts.append(verdict(group))
    print("\n".join(summary(verdicts)))
    if args.json:
        data = {
            "facts": info,
            "skipped_formats": unknown,
            "cells": [asdict(cell) for cell in cells],
            "verdicts": [asdict(v) for v in verdicts],
            "seconds": time.perf_counter() - began,
        }
        args.json.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
