"""Ids on the caller's terms: ``id_factory(index, position)`` through every front door.

The factory makes the id of a call that completes without one; an id already used in the
stream is suffixed (``-2``…) as the default scheme does, so ids stay unique whatever the
factory returns; a factory that returns anything but a non-empty ``str`` raises
``UsageError``.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolstitch import (
    Assembler,
    CallDiscarded,
    CallReady,
    Stitcher,
    UsageError,
    astitch,
    stitch,
)
from toolstitch.cli import main
from toolstitch.runner import OpenAIChatModel, Tool, ToolRunner
from toolstitch.stitch.recovery import tool_error_reply
from toolstitch.testing import OpenAIChatScript, ScriptedServer

if TYPE_CHECKING:
    import openai
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import openai

GEMINI_TWO_CALLS = [
    {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"functionCall": {"name": "f", "args": {"a": 1}}},
                        {"functionCall": {"name": "g", "args": {}}},
                    ],
                },
                "finishReason": "STOP",
            }
        ]
    }
]


def named(index: int, position: int) -> str:
    return f"mine-{index}-{position}"


def test_the_factory_gets_index_and_position() -> None:
    asm = Assembler(id_factory=named)
    asm.feed({"index": 3, "function": {"name": "f", "arguments": "{}"}})
    asm.feed({"index": 1, "function": {"name": "g", "arguments": "{}"}})
    ids = {e.call.index: e.call.id for e in asm.finish() if isinstance(e, CallReady)}
    assert ids == {3: "mine-3-0", 1: "mine-1-1"}


def test_the_prediction_agrees_with_the_close() -> None:
    asm = Assembler(id_factory=named)
    assert asm.generated_id(5) == "mine-5-0"  # an index not seen: the next position
    asm.feed({"index": 5, "function": {"name": "f", "arguments": "{}"}})
    predicted = asm.generated_id(5)
    (ready,) = asm.finish()
    assert isinstance(ready, CallReady)
    assert ready.call.id == predicted == "mine-5-0"


def test_a_provided_id_is_never_replaced() -> None:
    asm = Assembler(id_factory=named)
    events = asm.feed({"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"}})
    assert [e.call.id for e in events if isinstance(e, CallReady)] == ["c1"]


@pytest.mark.parametrize("bad", [None, "", 7, b"id"])
def test_a_factory_that_returns_no_id_is_a_usage_error(bad: object) -> None:
    asm = Assembler(id_factory=lambda index, position: bad)  # type: ignore[arg-type,return-value]
    asm.feed({"index": 0, "function": {"name": "f", "arguments": "{}"}})
    with pytest.raises(UsageError, match="id_factory returned"):
        asm.finish()


def test_a_factory_must_be_callable() -> None:
    with pytest.raises(TypeError, match="id_factory must be a callable"):
        Assembler(id_factory="call_")  # type: ignore[arg-type]


# Provided ids are distinct (two equal provider ids are the provider's duplicate, not ours);
# the factory's ids may collide with them, with each other, or with the default scheme.
FACTORIES = {
    "constant": lambda index, position: "x",
    "by-position": lambda index, position: f"x-{position}",
    "default-look-alike": lambda index, position: f"toolstitch_call_{index}",
    "suffix-look-alike": lambda index, position: "x-2",
}


@given(
    calls=st.lists(
        st.one_of(st.none(), st.sampled_from(["x", "x-2", "x-3", "x-0", "toolstitch_call_1"])),
        max_size=8,
    ).filter(lambda ids: len([i for i in ids if i]) == len({i for i in ids if i})),
    factory=st.sampled_from(sorted(FACTORIES)),
    gaps=st.lists(st.integers(0, 2), min_size=8, max_size=8),
)
def test_ids_are_unique_across_provided_and_generated(
    calls: list[str | None], factory: str, gaps: list[int]
) -> None:
    asm = Assembler(id_factory=FACTORIES[factory])
    index = 0
    for call_id, gap in zip(calls, gaps, strict=False):
        index += gap
        delta: dict[str, Any] = {"index": index, "function": {"name": "f", "arguments": "{}"}}
        if call_id is not None:
            delta["id"] = call_id
        asm.feed(delta)
        index += 1
    asm.finish()
    ids = [call.id for call in asm.complete()]
    assert len(ids) == len(calls)
    assert len(set(ids)) == len(ids)
    assert {i for i in calls if i} <= set(ids)  # a provided id is kept as it came


# -- every front door ---------------------------------------------------------------------------


def test_stitcher_stitch_and_astitch_take_it() -> None:
    stitcher = Stitcher(id_factory=named)
    for chunk in GEMINI_TWO_CALLS:
        stitcher.feed(chunk)
    stitcher.close()
    expected = ["mine-0-0", "mine-1-1"]
    assert [c.id for c in stitcher.result.calls] == expected
    assert [c.id for c in stitch(GEMINI_TWO_CALLS, id_factory=named).result.calls] == expected
    run = astitch(GEMINI_TWO_CALLS, id_factory=named)
    assert [c.id for c in asyncio.run(run.collect()).calls] == expected


def test_the_quirk_layer_predicts_the_factory_id() -> None:
    # A second object under index 0 becomes a call the layer creates with the core's id.
    chunk = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"a":1}{"a":2}'},
                        }
                    ]
                },
            }
        ]
    }
    result = stitch([chunk], "openai-chat", id_factory=named).result
    assert [(c.index, c.id) for c in result.calls] == [(0, "c1"), (1, "mine-1-1")]


def test_replay_takes_an_id_prefix(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    body = tmp_path / "gemini.json"
    body.write_text(json.dumps(GEMINI_TWO_CALLS))
    assert main(["replay", str(body), "--json", "--id-prefix", "call_"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in report["calls"]] == ["call_0", "call_1"]


def test_tool_error_reply_can_answer_under_the_factory_id() -> None:
    stitcher = Stitcher("openai-chat", id_factory=named)
    delta = {"index": 0, "function": {"name": "f", "arguments": '{"a": '}}
    stitcher.feed({"choices": [{"index": 0, "delta": {"tool_calls": [delta]}}]})
    (discarded,) = (e for e in stitcher.close() if isinstance(e, CallDiscarded))
    assert tool_error_reply(discarded).call_id == "toolstitch_call_0"
    fallback = stitcher.assembler.generated_id(discarded.index)
    assert tool_error_reply(discarded, fallback_id=fallback).call_id == "mine-0-0"


def test_tool_runner_takes_it_and_answers_a_discarded_call_under_it() -> None:
    query = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    tools = [Tool("lookup", lambda q: "found", query)]
    first = (
        OpenAIChatScript()
        .call(None, "lookup", '{"q": "a"}')
        .call(None, "lookup", '{"q": ')
        .finish("tool_calls")
    )
    second = OpenAIChatScript().text("done").finish("stop")

    async def run() -> list[Any]:
        async with (
            ScriptedServer([first.reply(), second.reply()]) as server,
            openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test") as client,
        ):
            runner = ToolRunner(OpenAIChatModel(client, "m"), tools, id_factory=named)
            result = await runner.run(["go"])
            async for _ in result.stream:
                pass
            return [request.json for request in server.requests]

    requests = asyncio.run(run())
    messages = requests[1]["messages"]
    assistant = next(m for m in messages if m["role"] == "assistant")
    assert [c["id"] for c in assistant["tool_calls"]] == ["mine-0-0", "mine-1-1"]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert answered == ["mine-0-0", "mine-1-1"]


def test_messages_keep_a_factory_id_and_drop_only_toolstitch_ids() -> None:
    # to_gemini leaves out the ids toolstitch generated (Gemini pairs calls by position);
    # a factory's ids are the caller's own and are written as they are.
    from toolstitch.messages import AssistantMessage, FunctionCall, to_gemini

    default = stitch(GEMINI_TWO_CALLS).result.calls
    chosen = stitch(GEMINI_TWO_CALLS, id_factory=named).result.calls

    def written(calls: Any) -> list[object]:
        turn = AssistantMessage(
            tool_calls=tuple(FunctionCall(id=c.id, name=c.name, arguments={}) for c in calls)
        )
        _, contents = to_gemini([turn])
        return [part["functionCall"].get("id") for part in contents[0]["parts"]]

    assert written(default) == [None, None]
    assert written(chosen) == ["mine-0-0", "mine-1-1"]
