"""The ``toolstitch.runner`` logger, and ``tool_failure``: a tool's exception for the
application (traceback) and for the model (a safe message)."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolstitch.runner import ToolError
from toolstitch.runner._logging import (
    TRACEBACK_CHARS,
    default_error_message,
    logger,
    tool_failure,
)
from toolstitch.vocab.call_events import ToolCall

CALL = ToolCall(index=0, id="c1", name="lookup", arguments="{}", parsed_arguments={})
SRC = Path(__file__).resolve().parents[1] / "src"


def raised(exc: BaseException) -> BaseException:
    """``exc`` with a traceback (raised from a function named in it)."""

    def connect_to_database() -> None:
        raise exc

    try:
        connect_to_database()
    except BaseException as caught:
        return caught
    raise AssertionError("unreachable")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_logger_has_a_null_handler() -> None:
    assert logger.name == "toolstitch.runner"
    assert any(isinstance(h, logging.NullHandler) for h in logger.handlers)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_nothing_is_printed_without_logging_configured() -> None:
    # A fresh interpreter: no handler anywhere but ours (pytest's capture is not there).
    script = textwrap.dedent(
        """
        from toolstitch.runner._logging import tool_failure
        from toolstitch.vocab.call_events import ToolCall
        call = ToolCall(index=0, id="c1", name="t", arguments="{}", parsed_arguments={})
        try:
            raise RuntimeError("boom")
        except RuntimeError as exc:
            tool_failure(exc, call)
        print("done")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC)},
        check=True,
    )
    assert (done.stdout, done.stderr) == ("done\n", "")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_traceback_kept_message_safe(caplog: pytest.LogCaptureFixture) -> None:
    exc = raised(ConnectionError("postgres://admin:hunter2@db.internal:5432 refused"))
    with caplog.at_level(logging.WARNING, logger="toolstitch.runner"):
        failure = tool_failure(exc, CALL)
    assert failure.exception is exc
    assert failure.code == "tool-exception"
    assert "connect_to_database" in failure.traceback
    assert "hunter2" in failure.traceback  # the application sees everything
    assert "hunter2" not in failure.message  # the model does not
    assert "connect_to_database" not in failure.message
    assert failure.message == (
        "Error [tool-exception]: the tool 'lookup' (call id c1) failed with ConnectionError. "
        "Check the arguments and try again, or continue without this result."
    )
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.name == "toolstitch.runner"
    assert record.exc_info is not None
    assert record.exc_info[1] is exc
    assert record.getMessage() == "tool 'lookup' (call id c1) raised ConnectionError"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_base_exceptions_are_described_too() -> None:
    failure = tool_failure(raised(SystemExit(2)), CALL)
    assert "failed with SystemExit" in failure.message
    assert "SystemExit: 2" in failure.traceback


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_tool_error_text_is_for_the_model() -> None:
    failure = tool_failure(raised(ToolError("no city named 'Atlantis'")), CALL)
    assert failure.code == "tool-error"
    assert failure.message == "Error [tool-error]: no city named 'Atlantis'"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_error_message_hook_decides() -> None:
    seen: list[tuple[BaseException, ToolCall]] = []

    def hook(exc: BaseException, call: ToolCall) -> str:
        seen.append((exc, call))
        return f"{call.name} is unavailable, try later"

    exc = raised(TimeoutError("upstream"))
    failure = tool_failure(exc, CALL, hook)
    assert failure.message == "lookup is unavailable, try later"
    assert seen == [(exc, CALL)]
    assert "TimeoutError: upstream" in failure.traceback


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_failing_hook_falls_back_to_the_default(caplog: pytest.LogCaptureFixture) -> None:
    def broken(exc: BaseException, call: ToolCall) -> str:
        raise KeyError("oops")

    def silent(exc: BaseException, call: ToolCall) -> str:
        return None  # type: ignore[return-value]

    exc = raised(ValueError("x"))
    with caplog.at_level(logging.WARNING, logger="toolstitch.runner"):
        assert tool_failure(exc, CALL, broken).message == default_error_message(exc, CALL)
        assert tool_failure(exc, CALL, silent).message == default_error_message(exc, CALL)
    messages = [r.getMessage() for r in caplog.records]
    assert "the error_message hook raised for tool 'lookup'" in messages
    assert "the error_message hook returned None for tool 'lookup', not a message" in messages


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_long_traceback_keeps_its_end() -> None:
    failure = tool_failure(raised(RuntimeError("x" * (3 * TRACEBACK_CHARS) + "END")), CALL)
    head, _, kept = failure.traceback.partition("\n")
    assert head.startswith("[")
    assert head.endswith(" characters of the traceback cut]")
    assert len(kept) == TRACEBACK_CHARS
    assert kept.rstrip().endswith("END")
