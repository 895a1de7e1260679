"""Every ```python block of README.md, docs/*.md and docs/providers/*.md runs as written.

Each page's blocks run in order in one namespace, which a harness prepares per page: the
names the examples take as given (``openai_stream``, ``response``, ``client``, ``deltas``,
``dispatch``…) are real objects - SDK streams and HTTP responses from a
``toolstitch.testing.ScriptedServer`` whose chunks include what the SDKs really produce (the
usage chunk of ``stream_options.include_usage``, Azure's prompt-filter chunk with
``choices: []``), recorded fixture bodies, and recorders for the functions the examples call.
A top-level ``await`` runs in an event loop. Pages are found by glob, so a new page is
picked up at once.

A block that cannot run (a fragment, pseudo-code) is skipped only through an explicit marker
on the line before its fence, ``<!-- not-run: reason -->``; each such block is reported as a
skipped test with its reason (``test_marked_blocks_are_reported``), and their number is kept
small (``MAX_NOT_RUN``).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from toolstitch import stitch
from toolstitch.decode.eventstream import EventStreamDecoder
from toolstitch.decode.sse import SSEDecoder
from toolstitch.testing import OpenAIChatScript, Reply, ScriptedServer

if TYPE_CHECKING:
    import openai
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import openai

ROOT = Path(__file__).resolve().parents[1]
BEDROCK_BODY = (
    ROOT / "tests" / "fixtures" / "bedrock-converse" / "reasoning-signed-then-call.eventstream"
)
PAGES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "providers").glob("*.md")]
)
MARKER = re.compile(r"^<!--\s*not-run:\s*(?P<reason>.+?)\s*-->$")
FENCE = re.compile(r"^```python\s*$")
#: At most this many blocks may be marked not-run, over all pages.
MAX_NOT_RUN = 6


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # 1-based line of the fence
    source: str
    not_run: str | None  # the marker's reason


def blocks(page: Path) -> list[Block]:
    """The ```python blocks of ``page``, each with the marker before it, if any."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    n = 0
    while n < len(lines):
        if not FENCE.match(lines[n]):
            n += 1
            continue
        start = n
        body: list[str] = []
        n += 1
        while n < len(lines) and lines[n].strip() != "```":
            body.append(lines[n])
            n += 1
        before = next((line.strip() for line in reversed(lines[:start]) if line.strip()), "")
        marker = MARKER.match(before)
        found.append(
            Block(
                page=str(page.relative_to(ROOT)),
                line=start + 1,
                source="\n".join(body) + "\n",
                not_run=None if marker is None else marker["reason"],
            )
        )
        n += 1
    return found


ALL = [block for page in PAGES for block in blocks(page)]
PAGES_WITH_CODE = sorted({b.page for b in ALL if b.not_run is None})


# -- the harness ----------------------------------------------------------------------------

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
WRITE_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
    "additionalProperties": False,
}
OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {"name": name, "parameters": schema, "strict": True},
    }
    for name, schema in (("get_weather", WEATHER_SCHEMA), ("write_file", WRITE_SCHEMA))
]
#: One delta, a call's first: what an example that feeds a single ``delta`` is given.
WRITE_FILE_DELTA = {
    "index": 0,
    "id": "w1",
    "type": "function",
    "function": {"name": "write_file", "arguments": '{"path": "app.py", "content": "imp'},
}
#: Azure OpenAI's first chunk: the prompt's content-filter results, no choice at all.
PROMPT_FILTER = {
    "id": "",
    "object": "",
    "created": 0,
    "model": "",
    "choices": [],
    "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
}


def chat_stream(*, malformed: bool = True) -> OpenAIChatScript:
    """A stream with every kind of chunk the SDKs hand out: Azure's prompt filter, the
    role, text, a good call, a malformed one, a write_file call, the finish, usage.

    Without the malformed call for the openai helper stream: with ``strict`` tools it parses
    each call's arguments itself, and raises on invalid JSON before toolstitch sees them."""
    script = (
        OpenAIChatScript()
        .raw(PROMPT_FILTER)
        .text("Let me check.")
        .call("c1", "get_weather", '{"city": "Paris"}', pieces=3)
    )
    if malformed:
        script.call("c2", "get_weather", '{"city": Paris}', pieces=2)
    script.call("c3", "write_file", '{"path": "app.py", "content": "import os\\n"}', pieces=4)
    return script.finish("tool_calls").usage(12, 34)


def round_trip(*calls: tuple[str, str, str]) -> list[Reply]:
    """A tool round (these calls) and the final answer: what a tool loop asks for."""
    first = OpenAIChatScript().text("On it.")
    for call_id, name, arguments in calls:
        first.call(call_id, name, arguments, pieces=2)
    return [first.finish("tool_calls").reply(), OpenAIChatScript().text("Done.").finish().reply()]


#: The replies each page's blocks ask the server for, after the harness's own two (the
#: ``openai_stream`` and ``response`` it opens): in request order.
PAGE_REPLIES: dict[str, list[Reply]] = {
    "README.md": [
        chat_stream(malformed=False).reply(),  # the helper-stream block
        *round_trip(("w1", "get_weather", '{"city": "Paris"}')),
    ],
    "docs/runner.md": round_trip(
        ("w1", "get_weather", '{"city": "Paris"}'),
        ("b1", "book_table", '{"restaurant": "Chez Nous", "people": 2}'),
    )
    + round_trip(("s1", "get_weather", '{"city": "Paris"}')),  # "Sync use"
}


class Recorder:
    """Stands for whatever the examples call on an object of theirs (``editor.append``):
    every call is recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def record(*args: Any, **kwargs: Any) -> None:
            self.calls.append((name, args))

        return record


def recorder(calls: list[tuple[str, tuple[Any, ...]]], name: str) -> Any:
    def record(*args: Any, **kwargs: Any) -> None:
        calls.append((name, args))

    return record


def body(script: OpenAIChatScript) -> bytes:
    """The SSE body of a script, as a recording of it holds it."""
    return b"".join(step for step in script.reply().steps if isinstance(step, bytes))


def tool_deltas() -> list[dict[str, Any]]:
    """The ``delta.tool_calls`` entries of ``chat_stream``, as dicts, in order."""
    decoder = SSEDecoder()
    deltas: list[dict[str, Any]] = []
    for message in decoder.feed(body(chat_stream())) + decoder.close():
        if message.is_done:
            continue
        for choice in json.loads(message.data)["choices"]:
            deltas.extend(choice["delta"].get("tool_calls") or [])
    return deltas


class FakeBedrock:
    """Stands for ``boto3.client("bedrock-runtime")``: ``converse_stream`` gives the events of
    a Bedrock fixture (signed reasoning, then a call), as boto3 decodes them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.requests: list[dict[str, Any]] = []

    def converse_stream(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        decoder = EventStreamDecoder()
        frames = decoder.feed(BEDROCK_BODY.read_bytes()) + decoder.close()
        events = []
        for frame in frames:
            payload = json.loads(frame.payload)
            payload.pop("p", None)  # the padding boto3 drops
            events.append({str(frame.headers[":event-type"]): payload})
        return {"stream": iter(events)}


def with_bedrock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The Bedrock page's setting: a ``boto3`` whose client is ``FakeBedrock``, and a recorded
    body named as the page names it, in the working directory."""
    monkeypatch.setitem(sys.modules, "boto3", types.SimpleNamespace(client=FakeBedrock))
    (tmp_path / "converse-stream.eventstream").write_bytes(BEDROCK_BODY.read_bytes())
    monkeypatch.chdir(tmp_path)


def get_weather(city: str) -> dict[str, Any]:
    return {"city": city, "temperature_c": 18}


@pytest.fixture
def harness(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Any]:
    page: str = request.param
    if page == "docs/providers/bedrock-converse.md":
        with_bedrock(monkeypatch, tmp_path)
    replies = [chat_stream().reply(), chat_stream().reply(), *PAGE_REPLIES.get(page, [])]
    with ScriptedServer(replies) as server:
        # An example that builds its own client from the environment reaches the server.
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        sync_client = openai.OpenAI()
        http = httpx.Client()
        openai_stream = sync_client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        response = http.send(
            http.build_request(
                "POST",
                f"{server.openai_base_url}/chat/completions",
                json={"model": "m", "messages": [], "stream": True},
            ),
            stream=True,
        )
        calls: list[tuple[str, tuple[Any, ...]]] = []
        deltas = tool_deltas()
        namespace: dict[str, Any] = {
            "__name__": f"doc_example_{page}",
            "openai_stream": openai_stream,
            "response": response,
            "client": openai.AsyncOpenAI(),
            "messages": [{"role": "user", "content": "Is it warm in Paris?"}],
            "openai_tools": OPENAI_TOOLS,
            "tools": OPENAI_TOOLS,
            "schema": WEATHER_SCHEMA,
            "get_weather": get_weather,
            "deltas": deltas,
            "delta": WRITE_FILE_DELTA,
            "run": stitch(body(chat_stream())),
            "editor": Recorder(),
            **{
                name: recorder(calls, name)
                for name in (
                    "dispatch",
                    "start_tool",
                    "report",
                    "reply_with_error",
                    "render_row",
                    "show",
                )
            },
        }
        try:
            yield page, namespace, calls, server
        finally:
            openai_stream.close()
            response.close()
            http.close()
            sync_client.close()


def run_block(block: Block, namespace: dict[str, Any]) -> None:
    code = compile(
        block.source,
        f"{block.page}:{block.line}",
        "exec",
        flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
        dont_inherit=True,
    )
    result = eval(code, namespace)  # the project's own documentation
    if inspect.iscoroutine(result):
        asyncio.run(result)


# -- the tests ------------------------------------------------------------------------------


@pytest.mark.parametrize("harness", PAGES_WITH_CODE, indirect=True)
def test_every_block_of_the_page_runs(harness: Any) -> None:
    page, namespace, calls, server = harness
    for block in ALL:
        if block.page == page and block.not_run is None:
            try:
                run_block(block, namespace)
            except Exception as exc:  # say which block
                raise AssertionError(f"{block.page}:{block.line}: {exc!r}") from exc
    assert not server.replies, "the examples made fewer requests than the page's script"
    if page == "README.md":  # the examples did their work on every kind of chunk
        appended = [args[0] for name, args in namespace["editor"].calls if name == "append"]
        assert "".join(appended) == "import os\n"
        started = [args[0] for name, args in calls if name == "start_tool"]
        reported = [args[0].code for name, args in calls if name == "report"]
        dispatched = [args[0].id for name, args in calls if name == "dispatch"]
        assert started == ["get_weather", "write_file"]
        assert reported == ["malformed-arguments"]
        assert dispatched == ["c1", "c3", "c1", "c3"]  # stitch(response), the helper stream


NOT_RUN = [b for b in ALL if b.not_run is not None]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    "block", NOT_RUN or [None], ids=[f"{b.page}:{b.line}" for b in NOT_RUN] or ["none"]
)
def test_marked_blocks_are_reported(block: Block | None) -> None:
    if block is None:
        return
    pytest.skip(f"not run ({block.page}:{block.line}): {block.not_run}")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_pages_are_found_and_markers_are_few() -> None:
    found = {b.page for b in ALL}
    assert "README.md" in found
    assert "docs/runner.md" in found
    assert len(NOT_RUN) <= MAX_NOT_RUN
