"""The text formats: each declared as data in ``grammars/text-formats/NAME.json``, loaded,
checked and compiled here, once, at import.

A declaration names the format and its aliases (vLLM's ``--tool-call-parser`` names), the
models that write it, and its state machine: for each state, what its text means and which
markers leave it for which state (see ``grammars/text-formats/README.md`` for the schema).
States are of four kinds:

* ``"text": "content" | "reasoning" | "skip"``: text outside calls (``TextDelta``), reasoning
  (``ReasoningDelta``), or markup between calls (whitespace dropped; anything else dropped
  with a ``quirk-text-stray`` warning);
* ``"text": "lead"``: only the first character that is not whitespace is tried against the
  markers (a marker-less format's call list starts the output); otherwise state ``"else"``
  reads the text from there;
* ``"header": RULE``: the text up to the state's marker names the call (or routes the
  message), read by ``toolstitch.text.headers.HEADERS[RULE]``;
* ``"body": GRAMMAR``: a body grammar (``toolstitch.text.bodies.BODIES[GRAMMAR]``, made with
  the state's ``"options"``) reads the text until it says the body ended; state ``"then"``
  goes on from there.

A move (``"on": {marker: target}``) is a state's name or ``{"to", "keep", "call", "variant"}``:
``keep`` reads the marker again in the next state (a body that starts with it), ``call``
starts or ends a call at the marker, ``variant`` names a tolerated variant of the format
(declared in its ``"variants"``, reported once per stream as ``quirk-text-variant``).

``load`` checks everything a reader relies on (``FormatError`` otherwise): every target and
``then`` a state, every rule and grammar known, every variant declared, no marker of a state
inside another (``MarkerSet``), names and aliases unique. ``TEXT_FORMATS`` maps each canonical
name to its compiled ``TextFormat``; ``text_format(name)`` resolves aliases.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from toolstitch.text import bodies
from toolstitch.text.bodies import BODIES
from toolstitch.text.headers import HEADERS
from toolstitch.text.markers import MarkerSet

# Each module of toolstitch.text.bodies registers its grammars in BODIES as it is imported.
for _module in pkgutil.iter_modules(bodies.__path__):
    importlib.import_module(f"{bodies.__name__}.{_module.name}")

__all__ = [
    "CODES",
    "TEXT_FORMATS",
    "TEXT_FORMAT_NAMES",
    "FormatError",
    "Move",
    "State",
    "TextFormat",
    "load",
    "text_format",
]

#: The warning codes of the text layer, with what they mean (docs/quirks.md, docs/text-formats.md).
CODES: Final[dict[str, str]] = {
    "quirk-call-in-text": "a provider stream's text held tool calls written in a text format "
    "(its server's parser was off or failed): they are calls, and their markup left the text",
    "quirk-text-variant": "the model wrote a tolerated variant of its text format (named in "
    "the warning; reported once per variant and stream)",
    "quirk-text-stray": "text that is neither content nor a call stood between a format's "
    "markers (e.g. a stray brace after a call) and was dropped",
}

_KINDS: Final = frozenset({"content", "reasoning", "skip", "lead"})
_MOVE_KEYS: Final = frozenset({"to", "keep", "call", "variant"})
_STATE_KEYS: Final = frozenset({"text", "header", "body", "options", "then", "on", "else"})
_FORMAT_KEYS: Final = frozenset(
    {"name", "aliases", "models", "summary", "opt_in", "start", "primed", "variants", "states"}
)


class FormatError(ValueError):
    """A text-format declaration that a reader could not follow."""


@dataclass(frozen=True, slots=True)
class Move:
    """Where a marker leads (see the module docstring)."""

    to: str
    keep: bool = False
    call: str | None = None
    variant: str | None = None


@dataclass(frozen=True, slots=True)
class State:
    """One state of a format, compiled: its kind, its moves and their markers."""

    name: str
    kind: str  # content | reasoning | skip | lead | header | body
    moves: Mapping[str, Move]
    markers: MarkerSet | None
    rule: str | None = None  # header
    grammar: str | None = None  # body
    options: Mapping[str, Any] = field(default_factory=dict)
    then: str | None = None  # body
    otherwise: str | None = None  # lead


@dataclass(frozen=True, slots=True)
class TextFormat:
    """A text format, compiled from its declaration (kept as ``declaration``)."""

    name: str
    aliases: tuple[str, ...]
    models: str
    summary: str
    opt_in: bool
    start: str
    primed: str | None
    variants: Mapping[str, str]
    states: Mapping[str, State]
    declaration: Mapping[str, Any] = field(repr=False, compare=False)

    @property
    def reasoning(self) -> bool:
        """Whether the format has reasoning text at all (some state reads it)."""
        return any(s.kind == "reasoning" for s in self.states.values())


def _move(target: object, where: str) -> Move:
    if isinstance(target, str):
        return Move(to=target)
    if not isinstance(target, Mapping) or not isinstance(target.get("to"), str):
        raise FormatError(f"{where}: a move is a state's name or an object with 'to'")
    unknown = set(target) - _MOVE_KEYS
    if unknown:
        raise FormatError(f"{where}: unknown keys {sorted(unknown)}")
    call = target.get("call")
    if call not in (None, "start", "end"):
        raise FormatError(f"{where}: 'call' is 'start' or 'end', not {call!r}")
    return Move(
        to=target["to"],
        keep=bool(target.get("keep", False)),
        call=call,
        variant=target.get("variant"),
    )


def _kind(spec: Mapping[str, Any], where: str) -> tuple[str, str | None, str | None]:
    """A state's kind, and its header rule or body grammar."""
    if "body" in spec:
        grammar = spec["body"]
        if grammar not in BODIES:
            raise FormatError(f"{where}: no body grammar {grammar!r} (known: {sorted(BODIES)})")
        if not isinstance(spec.get("then"), str):
            raise FormatError(f"{where}: a body state says which state comes 'then'")
        return "body", None, grammar
    if "header" in spec:
        rule = spec["header"]
        if rule not in HEADERS:
            raise FormatError(f"{where}: no header rule {rule!r} (known: {sorted(HEADERS)})")
        return "header", rule, None
    kind = spec.get("text")
    if kind not in _KINDS:
        raise FormatError(f"{where}: 'text' is one of {sorted(_KINDS)}, or give 'header'/'body'")
    if kind == "lead" and not isinstance(spec.get("else"), str):
        raise FormatError(f"{where}: a lead state says which state reads the text 'else'")
    return str(kind), None, None


def _state(name: str, spec: object, fmt: str) -> State:
    where = f"text format {fmt!r}, state {name!r}"
    if not isinstance(spec, Mapping):
        raise FormatError(f"{where}: a state is an object")
    unknown = set(spec) - _STATE_KEYS
    if unknown:
        raise FormatError(f"{where}: unknown keys {sorted(unknown)}")
    kind, rule, grammar = _kind(spec, where)
    on = spec.get("on", {})
    if not isinstance(on, Mapping):
        raise FormatError(f"{where}: 'on' maps markers to moves")
    moves = {marker: _move(target, f"{where}, marker {marker!r}") for marker, target in on.items()}
    if kind == "body" and moves:
        raise FormatError(f"{where}: a body state has no markers of its own (its grammar reads)")
    if kind == "header" and not moves:
        raise FormatError(f"{where}: a header ends at a marker")
    try:
        markers = MarkerSet(moves) if moves else None
    except ValueError as exc:
        raise FormatError(f"{where}: {exc}") from None
    options = spec.get("options", {})
    if not isinstance(options, Mapping):
        raise FormatError(f"{where}: 'options' is an object")
    return State(
        name=name,
        kind=kind,
        moves=MappingProxyType(moves),
        markers=markers,
        rule=rule,
        grammar=grammar,
        options=MappingProxyType(dict(options)),
        then=spec.get("then"),
        otherwise=spec.get("else"),
    )


def _check_targets(fmt: TextFormat) -> None:
    states = fmt.states
    for state in states.values():
        where = f"text format {fmt.name!r}, state {state.name!r}"
        targets = [m.to for m in state.moves.values()]
        targets += [t for t in (state.then, state.otherwise) if t is not None]
        for target in targets:
            if target not in states:
                raise FormatError(f"{where}: no state {target!r}")
        for move in state.moves.values():
            if move.variant is not None and move.variant not in fmt.variants:
                raise FormatError(f"{where}: variant {move.variant!r} is not declared")
    for start in (fmt.start, fmt.primed):
        if start is not None and start not in states:
            raise FormatError(f"text format {fmt.name!r}: no state {start!r}")


def compile_format(declaration: Mapping[str, Any]) -> TextFormat:
    """A declaration, checked and compiled (``FormatError`` if a reader could not follow it)."""
    name = declaration.get("name")
    if not isinstance(name, str) or not name:
        raise FormatError("a text format has a 'name'")
    unknown = set(declaration) - _FORMAT_KEYS
    if unknown:
        raise FormatError(f"text format {name!r}: unknown keys {sorted(unknown)}")
    states = declaration.get("states")
    if not isinstance(states, Mapping) or not states:
        raise FormatError(f"text format {name!r}: 'states' maps names to states")
    variants = declaration.get("variants", {})
    if not isinstance(variants, Mapping):
        raise FormatError(f"text format {name!r}: 'variants' maps names to descriptions")
    fmt = TextFormat(
        name=name,
        aliases=tuple(declaration.get("aliases", ())),
        models=str(declaration.get("models", "")),
        summary=str(declaration.get("summary", "")),
        opt_in=bool(declaration.get("opt_in", False)),
        start=str(declaration.get("start", "content")),
        primed=declaration.get("primed"),
        variants=MappingProxyType(dict(variants)),
        states=MappingProxyType({s: _state(s, spec, name) for s, spec in states.items()}),
        declaration=declaration,
    )
    _check_targets(fmt)
    return fmt


def _declarations() -> Iterator[tuple[str, str]]:
    """``(file name, text)`` of every declaration: inside the installed package, or in a
    source checkout's top-level grammars/ folder."""
    packaged = resources.files("toolstitch").joinpath("grammars").joinpath("text-formats")
    if packaged.is_dir():
        entries = [(e.name, e) for e in packaged.iterdir() if e.name.endswith(".json")]
        for file_name, entry in sorted(entries, key=lambda pair: pair[0]):
            yield file_name, entry.read_text(encoding="utf-8")
        return
    folder = Path(__file__).resolve().parents[3] / "grammars" / "text-formats"
    for path in sorted(folder.glob("*.json")):
        yield path.name, path.read_text(encoding="utf-8")


def load() -> dict[str, TextFormat]:
    """Every declared format, compiled, by canonical name (checked: see the module
    docstring)."""
    formats: dict[str, TextFormat] = {}
    names: dict[str, str] = {}
    for file_name, text in _declarations():
        fmt = compile_format(json.loads(text))
        if file_name != f"{fmt.name}.json":
            raise FormatError(f"{file_name}: declares {fmt.name!r} (the file is NAME.json)")
        for alias in (fmt.name, *fmt.aliases):
            if names.get(alias, fmt.name) != fmt.name:
                raise FormatError(f"{alias!r} names both {names[alias]!r} and {fmt.name!r}")
            names[alias] = fmt.name
        formats[fmt.name] = fmt
    return formats


#: Every text format by canonical name (``toolstitch.TEXT_FORMATS``).
TEXT_FORMATS: Final[Mapping[str, TextFormat]] = MappingProxyType(load())
_BY_ALIAS: Final = {alias: f for f in TEXT_FORMATS.values() for alias in (f.name, *f.aliases)}
#: Every name ``text_format=`` takes: the canonical names, then the aliases.
TEXT_FORMAT_NAMES: Final[tuple[str, ...]] = (
    *TEXT_FORMATS,
    *sorted(set(_BY_ALIAS) - set(TEXT_FORMATS)),
)


def text_format(name: str | TextFormat) -> TextFormat:
    """The format of a canonical name or an alias (``ValueError`` listing the known ones)."""
    if isinstance(name, TextFormat):
        return name
    found = _BY_ALIAS.get(name)
    if found is None:
        raise ValueError(
            f"unknown text format {name!r} (known: {', '.join(TEXT_FORMATS)}; vLLM's "
            f"parser names work too: {', '.join(sorted(set(_BY_ALIAS) - set(TEXT_FORMATS)))})"
        )
    return found
