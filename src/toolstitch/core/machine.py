"""The per-call state machine: loaded from ``grammars/call-machine.json``, run from a table.

Theory of operation
-------------------
The life of a call is declared once, as data, in ``grammars/call-machine.json``. That
declaration is loaded into a ``transitions.Machine``: it is the authority, and it rejects an
inconsistent definition (unknown states, a bad initial state). From the Machine we derive
``TABLE``, a plain dict ``(state, trigger) -> state``; the assembler consults it on every
state *change* and never runs ``transitions`` per fragment or per call (one trigger costs
6-12 µs, more than the whole per-fragment budget). A missing key is an illegal move and
raises ``IllegalTransition``, naming the state and the trigger.

The derivation runs at build/test time, not at import: ``render_table()`` writes the table
into ``core/_table.py`` (committed; regenerate with ``python -m toolstitch.core.machine``), and
a test regenerates it with ``transitions`` and fails if the file is stale. So
``import toolstitch`` never imports ``transitions``; only ``build_machine``,
``derive_table``, ``render_table`` and ``mermaid_diagram`` do, when called.

Next to the table, the rules the table alone cannot say, as small pure functions the
assembler asks (it never re-derives them):

* ``next_state(state, trigger)``: a move, or ``IllegalTransition``;
* ``on_first_id(state, has_arguments)`` and ``on_arguments(state)``: the triggers a call's
  first id and its first non-empty arguments fragment fire (arguments that came before the
  id are kept: the id then moves the call straight on to ``accumulating-args``);
* ``is_ready(closed, named, has_id)``: the readiness rule. A call is ready - ``CallReady`` -
  when its arguments object has closed *and* its name and id are known; whichever of the
  three arrives last (the closing fragment, the last piece of the name, the id) triggers it;
* ``at_end(named, closed, blank, ending)``: what ``finish``/``end`` does with a call still
  open: no name → discarded (``MissingName``); closed → ready (with a generated id if it
  never got one); nothing but whitespace → ready with the empty-arguments object, but only
  when the provider closed the call or the response ended normally (``ending`` in
  ``vocab.endings.WHOLE``), discarded (``TruncatedArguments``) after any cut; an open
  prefix → discarded (``TruncatedArguments``).

Invariants the assembler keeps with this table:

* a call's state only moves forward along the table; ``complete`` and ``discarded`` are final;
* every call that starts ends exactly once, in ``complete`` or ``discarded``;
* fragments that do not change the state (the common case) cost no table lookup at all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolstitch.core._table import TABLE
from toolstitch.vocab.call_events import CallState
from toolstitch.vocab.endings import WHOLE, Ending

if TYPE_CHECKING:
    from transitions import Machine

__all__ = [
    "DEFINITION",
    "EMPTY",
    "MISSING_NAME",
    "READY",
    "TABLE",
    "TRUNCATED",
    "IllegalTransition",
    "at_end",
    "build_machine",
    "is_ready",
    "load_definition",
    "mermaid_diagram",
    "next_state",
    "on_arguments",
    "on_first_id",
    "render_table",
]

_GRAMMAR_NAME = "call-machine.json"


def _grammar_text(name: str = _GRAMMAR_NAME) -> str:
    # Installed wheels carry the file inside the package; a source checkout (including an
    # editable install) reads it from the top-level grammars/ folder.
    packaged = resources.files("toolstitch").joinpath("grammars").joinpath(name)
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    checkout = Path(__file__).resolve().parents[3] / "grammars" / name
    return checkout.read_text(encoding="utf-8")


def load_definition(name: str = _GRAMMAR_NAME) -> dict[str, Any]:
    """A machine declaration of ``grammars/`` (the call machine unless ``name`` says
    another, such as the runner's ``run-machine.json``), as the JSON file states it."""
    definition: dict[str, Any] = json.loads(_grammar_text(name))
    return definition


def build_machine(definition: Mapping[str, Any]) -> Machine:
    """A ``transitions.Machine`` (no model attached) for ``definition``."""
    from transitions import Machine

    transitions = [
        {"trigger": t["trigger"], "source": t["source"], "dest": t["dest"]}
        for t in definition["transitions"]
    ]
    return Machine(
        model=None,
        states=list(definition["states"]),
        transitions=transitions,
        initial=definition["initial"],
        auto_transitions=False,
        ignore_invalid_triggers=False,
    )


def derive_table(machine: Machine) -> dict[tuple[CallState, str], CallState]:
    """Read every (source, trigger) -> dest move out of ``machine``."""
    table: dict[tuple[CallState, str], CallState] = {}
    for trigger, event in machine.events.items():
        for source, moves in event.transitions.items():
            for move in moves:
                table[CallState(source), trigger] = CallState(move.dest)
    return table


def mermaid_diagram(
    definition: Mapping[str, Any] | None = None,
    *,
    title: str = "toolstitch: the life of one tool call",
) -> str:
    """The machine drawn by ``transitions`` as a Mermaid state diagram (for docs/)."""
    from transitions.extensions.diagrams import GraphMachine

    definition = DEFINITION if definition is None else definition
    machine = GraphMachine(
        model=None,
        states=list(definition["states"]),
        transitions=[
            {"trigger": t["trigger"], "source": t["source"], "dest": t["dest"]}
            for t in definition["transitions"]
        ],
        initial=definition["initial"],
        auto_transitions=False,
        graph_engine="mermaid",
        title=title,
        show_state_attributes=False,
    )

    class _Unstyled:
        """A model that stays in the initial state; only the shape of the graph matters."""

    model = _Unstyled()
    machine.add_model(model)
    drawing: str = model.get_graph().draw(None)  # type: ignore[attr-defined]
    return drawing


class IllegalTransition(RuntimeError):
    """An internal error: the assembler tried a move the grammar does not allow."""

    def __init__(self, state: CallState, trigger: str) -> None:
        super().__init__(f"no transition {trigger!r} from state {state.value!r}")
        self.state = state
        self.trigger = trigger


def render_table(definition: Mapping[str, Any] | None = None) -> str:
    """The text of ``core/_table.py``: the table derived by ``transitions`` from the grammar."""
    table = derive_table(build_machine(DEFINITION if definition is None else definition))
    lines = [
        '"""The per-call move table, derived from grammars/call-machine.json by transitions.',
        "",
        "GENERATED: do not edit. Regenerate with ``python -m toolstitch.core.machine``;",
        "tests/test_machine.py fails when this file is stale.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Mapping",
        "",
        "from toolstitch.vocab.call_events import CallState",
        "",
        "_S = CallState",
        "",
        "TABLE: Mapping[tuple[CallState, str], CallState] = {",
    ]
    for (source, trigger), dest in table.items():
        lines.append(f'    (_S.{source.name}, "{trigger}"): _S.{dest.name},')
    lines.append("}")
    return "\n".join(lines) + "\n"


_AWAITING_ID = CallState.AWAITING_ID
_ACCUMULATING_NAME = CallState.ACCUMULATING_NAME


def next_state(state: CallState, trigger: str) -> CallState:
    """The state ``trigger`` moves a call in ``state`` to; ``IllegalTransition`` if none."""
    try:
        return TABLE[state, trigger]
    except KeyError:
        raise IllegalTransition(state, trigger) from None


def on_first_id(state: CallState, has_arguments: bool) -> tuple[str, ...]:
    """The triggers a call's first id fires: ``receive_id``, and ``receive_arguments`` too
    if arguments arrived before it (they are kept)."""
    if state is not _AWAITING_ID:
        return ()
    return ("receive_id", "receive_arguments") if has_arguments else ("receive_id",)


def on_arguments(state: CallState) -> tuple[str, ...]:
    """The triggers a non-empty arguments fragment fires (only the first after the id)."""
    return ("receive_arguments",) if state is _ACCUMULATING_NAME else ()


def is_ready(closed: bool, named: bool, has_id: bool) -> bool:
    """The readiness rule: the arguments object has closed and the name and id are known."""
    return closed and named and has_id


#: What ``at_end`` decides for a call still open when the provider ends it.
READY, EMPTY, MISSING_NAME, TRUNCATED = "ready", "empty", "missing-name", "truncated"


def at_end(named: bool, closed: bool, blank: bool, ending: Ending) -> str:
    """The rule at ``finish``/``end`` for an open call (see the module docstring): the
    empty-arguments object only for a call that ``ending`` leaves whole (the provider closed
    it, or the response ended normally: ``vocab.endings.WHOLE``)."""
    if not named:
        return MISSING_NAME
    if closed:
        return READY
    if blank and ending in WHOLE:
        return EMPTY
    return TRUNCATED


DEFINITION = load_definition()

if __name__ == "__main__":
    Path(__file__).with_name("_table.py").write_text(render_table(), encoding="utf-8")
