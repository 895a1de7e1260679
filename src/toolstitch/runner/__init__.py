"""The tool loop: call the model, forward its stream live, execute the calls, call again.

asyncio only; the core never imports this package. See docs/runner.md::

    runner = ToolRunner(OpenAIChatModel(client, "gpt-4.1"), [weather])
    result = await runner.run([UserMessage("Weather in Paris?")])
    async for event in result.stream:
        ...
    print(result.final_text)
"""

from __future__ import annotations

from toolstitch.messages import ToolResult

from ._models import AnthropicModel, Model, OpenAIChatModel
from ._run import DEFAULT_SYNTHESIS_PROMPT, RunResult, RunTimeout, ToolRunner
from ._run_events import (
    STOP_REASONS,
    BatchRefused,
    RoundEnded,
    RoundStarted,
    RunFailed,
    RunFinished,
    RunnerEvent,
    RunWarning,
    ToolDropped,
    ToolResultReady,
    ToolStarted,
    ToolTurn,
)
from ._tool import Tool

__all__ = [
    "DEFAULT_SYNTHESIS_PROMPT",
    "STOP_REASONS",
    "AnthropicModel",
    "BatchRefused",
    "Model",
    "OpenAIChatModel",
    "RoundEnded",
    "RoundStarted",
    "RunFailed",
    "RunFinished",
    "RunResult",
    "RunTimeout",
    "RunWarning",
    "RunnerEvent",
    "Tool",
    "ToolDropped",
    "ToolResult",
    "ToolResultReady",
    "ToolRunner",
    "ToolStarted",
    "ToolTurn",
]
