"""Refusals are their own stream events, never dropped and never mixed into the text."""

from __future__ import annotations

from toolstitch import Limits, RefusalDelta, stitch


def test_an_openai_chat_refusal_is_kept_apart_from_the_text() -> None:
    chunks = [
        {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"refusal": "I "}}]},
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"refusal": "can't."}}],
        },
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        },
    ]
    run = stitch(chunks)
    events = list(run)
    assert [e.text for e in events if isinstance(e, RefusalDelta)] == ["I ", "can't."]
    result = run.result
    assert (result.refusal, result.text, result.finish_reason) == ("I can't.", "", "stop")


def test_a_responses_refusal_is_kept_and_not_reported_unknown() -> None:
    events = [
        {"type": "response.created", "response": {"id": "r"}},
        {"type": "response.refusal.delta", "item_id": "m", "delta": "No."},
        {"type": "response.refusal.done", "item_id": "m", "refusal": "No."},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    ]
    result = stitch(events).result
    assert (result.refusal, result.text, result.warnings) == ("No.", "", ())


def test_openai_chat_reasoning_kept_for_its_block_is_bounded() -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"reasoning_content": "abcdef"}}]},
        {"choices": [{"index": 0, "delta": {"reasoning_content": "ghijkl"}}]},
        {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]},
    ]
    result = stitch(chunks, limits=Limits(max_reasoning_chars=8)).result
    assert result.reasoning == "abcdefghijkl"  # the deltas pass uncut
    assert [b.text for b in result.reasoning_blocks] == ["abcdefgh"]
    assert [w.error.code for w in result.warnings] == ["quirk-reasoning-over-limit"]
