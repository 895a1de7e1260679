"""The run machine (issue 12 item 1): declared in grammars/run-machine.json, loaded into
``transitions`` once per run, its final states the stop reasons, drawn into docs/runner.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from transitions import MachineError

from test_runner import QUERY, arun, consume, openai_model
from toolstitch import Event
from toolstitch.runner import STOP_REASONS, RunFinished, RunResult, Tool, ToolRunner
from toolstitch.runner._machine import DEFINITION, RunMachine
from toolstitch.testing import OpenAIChatScript

ROOT = Path(__file__).resolve().parents[1]
LIVE = ("streaming", "approving", "executing", "committing", "synthesising")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_final_states_are_the_documented_stop_reasons() -> None:
    assert set(STOP_REASONS) == set(DEFINITION["final"])
    assert set(DEFINITION["states"]) == set(LIVE) | set(STOP_REASONS)
    page = (ROOT / "docs" / "runner.md").read_text(encoding="utf-8")
    for reason in STOP_REASONS:
        assert f'| `"{reason}"` |' in page


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_machine_refuses_undeclared_moves_and_ends_once() -> None:
    machine = RunMachine()
    with pytest.raises(MachineError):
        machine.move("approved")  # nothing was streamed yet
    for trigger in ("calls", "approved", "executed", "synthesise"):
        machine.move(trigger)
    assert machine.state == "synthesising"
    assert machine.end("max-rounds")
    assert not machine.end("cancelled")  # already ended: the first end stays
    assert machine.stop_reason == "max-rounds"
    with pytest.raises(MachineError):
        machine.move("next_round")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("state", LIVE)
def test_every_live_state_can_end_as_error_timeout_or_cancelled(state: str) -> None:
    for reason in ("error", "timeout", "cancelled"):
        machine = RunMachine()
        machine.state = state
        assert machine.end(reason)
        assert machine.state == reason


def test_a_two_round_run_moves_along_the_machine() -> None:
    states: list[str] = []
    first = OpenAIChatScript().call("c1", "lookup", '{"q": "a"}').finish("tool_calls").reply()
    second = OpenAIChatScript().text("Done.").finish().reply()

    async def main() -> tuple[list[Event], RunResult]:
        async with openai_model([first, second]) as (model, _):
            tools = [Tool("lookup", lambda q: "r", QUERY)]
            result = await ToolRunner(model, tools).run(
                ["go"], on_tool_turns=lambda turns: states.append(result.state)
            )
            return await consume(result), result

    events, result = arun(main())
    assert states == ["committing"]
    assert result.state == result.stop_reason == "completed"
    assert sum(isinstance(e, RunFinished) for e in events) == 1


@pytest.mark.once  # a repository-file check (tests/conftest.py)
def test_the_run_machine_diagram_in_the_docs_is_generated() -> None:
    path = ROOT / "docs" / "_scripts" / "make_state_diagram.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = (ROOT / "docs" / "runner.md").read_text(encoding="utf-8")
    assert script.render_runner(page) == page, (
        "docs/runner.md is stale: run python docs/_scripts/make_state_diagram.py"
    )
    for move in DEFINITION["transitions"]:
        assert f"`{move['trigger']}`" in page
