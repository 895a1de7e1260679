"""Model outputs in every text format, written from what they must yield: for properties.

``render(format, parts)`` writes a model's raw output in a text format from its parts, in
order: text (``Text``), reasoning (``Thought``) and calls (``Call``), exactly as the format's
models write them; ``expected(format, parts)`` says what reading it must give: the calls
(name, arguments, and the id when the format carries one), the text and the reasoning. The
hypothesis strategy ``text_outputs(format)`` draws parts that the format can hold (a
marker-less format's calls start the output; a format without reasoning has none) and
returns ``(text, expected, tools)``, the tools typing the parameters whose values are not
strings (raw-value formats need them to give those values their JSON type).

The renderers are written here from the formats' documentation (docs/text-formats.md),
independently of the reader: they are the reference the reader is checked against.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hypothesis import strategies as st

__all__ = [
    "RENDERERS",
    "Call",
    "Expected",
    "Text",
    "Thought",
    "expected",
    "render",
    "text_outputs",
]


@dataclass(frozen=True)
class Text:
    """Text outside calls."""

    text: str


@dataclass(frozen=True)
class Thought:
    """Reasoning."""

    text: str


@dataclass(frozen=True)
class Call:
    """A tool call: its name and arguments (and the id, for a format that carries one)."""

    name: str
    arguments: dict[str, Any]
    id: str | None = None


Part = Text | Thought | Call


@dataclass(frozen=True)
class Expected:
    """What reading an output must give."""

    calls: tuple[tuple[str, dict[str, Any], str | None], ...]
    text: str
    reasoning: str
    tools: list[dict[str, Any]] = field(default_factory=list)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _raw(value: Any) -> str:
    """A value as a raw-value format writes it: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else _dumps(value)


def _think(text: str) -> str:
    return f"<think>{text}</think>"


# -- one writer per call shape ------------------------------------------------------------


def _hermes(call: Call) -> str:
    body = {"name": call.name, "arguments": call.arguments}
    return f"<tool_call>\n{_dumps(body)}\n</tool_call>"


def _qwen3_coder(call: Call) -> str:
    params = "".join(
        f"<parameter={k}>\n{_raw(v)}\n</parameter>\n" for k, v in call.arguments.items()
    )
    return f"<tool_call>\n<function={call.name}>\n{params}</function>\n</tool_call>"


def _seed_oss(call: Call) -> str:
    params = "".join(f"<parameter={k}>{_raw(v)}</parameter>\n" for k, v in call.arguments.items())
    return f"<seed:tool_call>\n<function={call.name}>\n{params}</function>\n</seed:tool_call>"


def _glm45(call: Call) -> str:
    params = "".join(
        f"<arg_key>{k}</arg_key>\n<arg_value>{_raw(v)}</arg_value>\n"
        for k, v in call.arguments.items()
    )
    return f"<tool_call>{call.name}\n{params}</tool_call>"


def _glm47(call: Call) -> str:
    params = "".join(
        f"<arg_key>{k}</arg_key><arg_value>{_raw(v)}</arg_value>" for k, v in call.arguments.items()
    )
    return f"<tool_call>{call.name}{params}</tool_call>"


def _minimax(call: Call) -> str:
    params = "".join(
        f'<parameter name="{k}">{_raw(v)}</parameter>\n' for k, v in call.arguments.items()
    )
    return (
        f'<minimax:tool_call>\n<invoke name="{call.name}">\n{params}</invoke>\n</minimax:tool_call>'
    )


def _dsml(call: Call) -> str:
    bar = "｜DSML｜"
    params = "".join(
        f'<{bar}parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">'
        f"{_raw(v)}</{bar}parameter>\n"
        for k, v in call.arguments.items()
    )
    return (
        f'<{bar}function_calls>\n<{bar}invoke name="{call.name}">\n{params}</{bar}invoke>\n'
        f"</{bar}function_calls>"
    )


def _kimi(call: Call) -> str:
    return (
        f"<|tool_calls_section_begin|><|tool_call_begin|>{call.id}<|tool_call_argument_begin|>"
        f"{_dumps(call.arguments)}<|tool_call_end|><|tool_calls_section_end|>"
    )


def _deepseek_v3(call: Call) -> str:
    return (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
        f"{call.name}\n```json\n{_dumps(call.arguments)}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )


def _deepseek_v31(call: Call) -> str:
    return (
        f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{call.name}<｜tool▁sep｜>"
        f"{_dumps(call.arguments)}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )


def _mistral(call: Call) -> str:
    return f"[TOOL_CALLS]{call.name}[ARGS]{_dumps(call.arguments)}"


def _granite(call: Call) -> str:
    return f"<|tool_call|>[{_dumps({'arguments': call.arguments, 'name': call.name})}]"


def _phi4(call: Call) -> str:
    return f"functools[{_dumps({'name': call.name, 'arguments': call.arguments})}]"


def _harmony(call: Call) -> str:
    return (
        f"<|start|>assistant<|channel|>commentary to=functions.{call.name} <|constrain|>json"
        f"<|message|>{_dumps(call.arguments)}<|call|>"
    )


def _llama3(call: Call) -> str:
    return _dumps({"name": call.name, "parameters": call.arguments})


def _python_literal(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float, str)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_python_literal(v) for v in value) + "]"
    return "{" + ", ".join(f"{k!r}: {_python_literal(v)}" for k, v in value.items()) + "}"


def _pythonic(call: Call) -> str:
    args = ", ".join(f"{k}={_python_literal(v)}" for k, v in call.arguments.items())
    return f"<|python_start|>[{call.name}({args})]<|python_end|>"


def _gemma_value(value: Any) -> str:
    if isinstance(value, str):
        return f'<|"|>{value}<|"|>'
    if isinstance(value, list):
        return "[" + ",".join(_gemma_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_gemma_value(v)}" for k, v in value.items()) + "}"
    return _dumps(value)


def _gemma(call: Call) -> str:
    return f"<|tool_call>call:{call.name}{_gemma_value(call.arguments)}<tool_call|>"


@dataclass(frozen=True)
class _Writer:
    """How one format writes each kind of part."""

    call: Callable[[Call], str]
    thought: Callable[[str], str] | None = _think
    text: Callable[[str], str] = str
    raw_values: bool = False  # values carry no type: the tools must type them
    carries_id: bool = False
    calls_first: bool = False  # marker-less: calls only at the very start
    nested: bool = True  # values may be arrays and objects


def _harmony_text(text: str) -> str:
    return f"<|start|>assistant<|channel|>final<|message|>{text}<|end|>"


def _harmony_thought(text: str) -> str:
    return f"<|start|>assistant<|channel|>analysis<|message|>{text}<|end|>"


#: One writer per format with a renderer here (every declared format).
RENDERERS: Final[dict[str, _Writer]] = {
    "hermes": _Writer(_hermes),
    "qwen3-coder": _Writer(_qwen3_coder, raw_values=True),
    "seed-oss": _Writer(
        _seed_oss, thought=lambda t: f"<seed:think>{t}</seed:think>", raw_values=True
    ),
    "glm-4.5": _Writer(_glm45, raw_values=True),
    "glm-4.7": _Writer(_glm47, raw_values=True),
    "minimax-m2": _Writer(_minimax, raw_values=True),
    "deepseek-v3.2": _Writer(_dsml, raw_values=True),
    "kimi-k2": _Writer(_kimi, carries_id=True),
    "deepseek-v3": _Writer(_deepseek_v3),
    "deepseek-v3.1": _Writer(_deepseek_v31),
    "mistral": _Writer(_mistral, thought=lambda t: f"[THINK]{t}[/THINK]"),
    "granite": _Writer(_granite),
    "phi4-mini": _Writer(_phi4, thought=None),
    "harmony": _Writer(_harmony, thought=_harmony_thought, text=_harmony_text),
    "pythonic": _Writer(_pythonic, thought=None),
    "llama3-json": _Writer(_llama3, thought=None, calls_first=True),
    "gemma4": _Writer(
        _gemma, thought=lambda t: f"<|channel>thought\n{t}<channel|>", raw_values=True
    ),
}


def render(fmt: str, parts: Sequence[Part]) -> str:
    """The output a model writing ``fmt`` writes for ``parts``."""
    writer = RENDERERS[fmt]
    out = []
    for part in parts:
        if isinstance(part, Call):
            out.append(writer.call(part))
        elif isinstance(part, Thought):
            assert writer.thought is not None, f"{fmt} has no reasoning"
            out.append(writer.thought(part.text))
        else:
            out.append(writer.text(part.text))
    return "".join(out)


def _type_of(value: Any) -> str:
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string")):
        if isinstance(value, kind):
            return name
    return "array" if isinstance(value, list) else "object" if value is not None else "null"


def _tools(calls: Sequence[Call]) -> list[dict[str, Any]]:
    """OpenAI tools typing every parameter of ``calls`` by the value it has (the same
    parameter keeps one type: the strategy draws each name's parameters once)."""
    tools: dict[str, dict[str, Any]] = {}
    for call in calls:
        properties = tools.setdefault(call.name, {})
        for key, value in call.arguments.items():
            properties[key] = {"type": _type_of(value)}
    return [
        {
            "type": "function",
            "function": {"name": name, "parameters": {"type": "object", "properties": props}},
        }
        for name, props in tools.items()
    ]


def expected(fmt: str, parts: Sequence[Part]) -> Expected:
    """What reading ``render(fmt, parts)`` must give."""
    writer = RENDERERS[fmt]
    calls = tuple(
        (p.name, p.arguments, p.id if writer.carries_id else None)
        for p in parts
        if isinstance(p, Call)
    )
    return Expected(
        calls=calls,
        text="".join(p.text for p in parts if isinstance(p, Text)),
        reasoning="".join(p.text for p in parts if isinstance(p, Thought)),
        tools=_tools([p for p in parts if isinstance(p, Call)]),
    )


# -- the strategy -----------------------------------------------------------------------------

#: Text and reasoning: no character that starts a marker of any format.
_PLAIN: Final = st.text(
    alphabet=st.sampled_from("abcdefghij XYZ.,;:!?'é中😀\n\t-_=+*&%$#@"), min_size=1, max_size=24
)
#: A string value: in a JSON-bodied format anything JSON can hold, markers included.
_JSON_STRING: Final = st.text(max_size=24)
#: A raw value's text cannot hold its close tag: no '<' (text alone cannot tell it), and no
#: leading or trailing newline (template markup in Qwen3-Coder).
_RAW_STRING: Final = st.text(
    alphabet=st.characters(exclude_characters="<\r", exclude_categories=["Cs"]),
    max_size=24,
).map(lambda s: s.strip("\n"))
_NAMES: Final = st.sampled_from(["get_weather", "search", "run_code", "t", "a_b"])
_KEYS: Final = st.sampled_from(["city", "query", "n", "flag", "items", "opts", "x_y"])


def _scalars(strings: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.one_of(
        strings,
        st.integers(-(10**6), 10**6),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda f: f == f),
    )


def _values(writer: _Writer) -> st.SearchStrategy[Any]:
    strings = _RAW_STRING if writer.raw_values else _JSON_STRING
    scalars = _scalars(strings)
    if not writer.nested:
        return scalars
    inner = _scalars(_JSON_STRING if not writer.raw_values else st.just("v"))
    return st.one_of(
        scalars,
        st.lists(inner, max_size=3),
        st.dictionaries(_KEYS, inner, max_size=3),
    )


@st.composite
def text_outputs(draw: st.DrawFn, fmt: str) -> tuple[str, Expected]:
    """An output of ``fmt`` and what reading it must give (see the module docstring)."""
    writer = RENDERERS[fmt]
    values = _values(writer)
    signatures: dict[str, dict[str, Any]] = {}  # each tool's parameters keep their type

    def call(position: int) -> Call:
        name = draw(_NAMES)
        keys = signatures.setdefault(name, {})
        arguments = {}
        for key in draw(st.lists(_KEYS, max_size=3, unique=True)):
            value = draw(values)
            if key in keys and _type_of(keys[key]) != _type_of(value):
                value = keys[key]
            keys.setdefault(key, value)
            arguments[key] = value
        return Call(name, arguments, f"functions.{name}:{position}")

    kinds = ["text", "call"] + (["thought"] if writer.thought is not None else [])
    parts: list[Part] = []
    count = 0
    if writer.calls_first:  # marker-less: the calls start the output, ';' between them
        calls = [call(n) for n in range(draw(st.integers(1, 3)))]
        text = "; ".join(writer.call(c) for c in calls)
        return text, expected(fmt, calls)
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=6)):
        if kind == "call":
            parts.append(call(count))
            count += 1
        elif kind == "thought":
            parts.append(Thought(draw(_PLAIN)))
        else:
            parts.append(Text(draw(_PLAIN)))
    return render(fmt, parts), expected(fmt, parts)
