"""The tool loop: call the model, forward its stream live, execute the calls, call again.

asyncio underneath (``ToolRunner.run_sync`` for sync code); the core never imports
this package. See docs/runner.md::

    runner = ToolRunner(OpenAIChatModel(client, "gpt-4.1"), [weather])
    result = await runner.run([UserMessage("Weather in Paris?")])
    async for event in result.stream:
        ...
    print(result.final_text)
"""

from __future__ import annotations

from toolstitch.messages import ToolResult

from ._history import read_history, write_history
from ._logging import ToolError, ToolFailure
from ._models import (
    AnthropicModel,
    GeminiModel,
    Model,
    OpenAIChatModel,
    OpenAIResponsesModel,
)
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
from ._sync import SyncRunResult, SyncStream
from ._tool import Tool, tool

__all__ = [
    "DEFAULT_SYNTHESIS_PROMPT",
    "STOP_REASONS",
    "AnthropicModel",
    "BatchRefused",
    "GeminiModel",
    "Model",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "RoundEnded",
    "RoundStarted",
    "RunFailed",
    "RunFinished",
    "RunResult",
    "RunTimeout",
    "RunWarning",
    "RunnerEvent",
    "SyncRunResult",
    "SyncStream",
    "Tool",
    "ToolDropped",
    "ToolError",
    "ToolFailure",
    "ToolResult",
    "ToolResultReady",
    "ToolRunner",
    "ToolStarted",
    "ToolTurn",
    "read_history",
    "tool",
    "write_history",
]
