"""The run machine: a run's lifecycle, declared in ``grammars/run-machine.json``.

The declaration is read once (``DEFINITION``) with the loader of the call machine
(``toolstitch.core.machine``) and each run loads it into its own ``transitions.Machine``
(``build_machine``, the same one place; tens of microseconds a run, nothing per event). The
machine refuses a move the declaration does not allow (``transitions.MachineError``), so a
run reaches exactly one final state; the final states are the stop reasons.
"""

from __future__ import annotations

from typing import Any, Final

from toolstitch.core.machine import build_machine, load_definition

__all__ = ["DEFINITION", "END_TRIGGERS", "STOP_REASONS", "RunMachine"]

#: The run machine as ``grammars/run-machine.json`` declares it.
DEFINITION: Final[dict[str, Any]] = load_definition("run-machine.json")

#: Every ``RunResult.stop_reason``: the final states, in declaration order.
STOP_REASONS: Final[tuple[str, ...]] = tuple(DEFINITION["final"])

#: The trigger that ends a run with each stop reason.
END_TRIGGERS: Final[dict[str, str]] = {
    move["dest"]: move["trigger"]
    for move in DEFINITION["transitions"]
    if move["dest"] in STOP_REASONS
}


class RunMachine:
    """One run's machine: ``state`` is where the run is; ``stop_reason`` once it ended."""

    def __init__(self) -> None:
        self.state: str = DEFINITION["initial"]
        self._machine = build_machine(DEFINITION)
        self._machine.add_model(self, initial=DEFINITION["initial"])

    @property
    def ended(self) -> bool:
        return self.state in STOP_REASONS

    @property
    def stop_reason(self) -> str | None:
        return self.state if self.ended else None

    def move(self, trigger: str) -> None:
        """Take ``trigger``; a move the declaration does not allow raises ``MachineError``."""
        self._machine.events[trigger].trigger(self)

    def end(self, stop_reason: str) -> bool:
        """End the run with ``stop_reason`` unless it has ended; whether this ended it."""
        if self.ended:
            return False
        self.move(END_TRIGGERS[stop_reason])
        return True
