"""A discarded call, whatever the reason, becomes a tool-error reply the model can act on."""

from __future__ import annotations

import json

import pytest

from toolstitch import (
    GENERATED_ID_PREFIX,
    Assembler,
    CallDiscarded,
    Delta,
    Event,
    LimitExceeded,
    Limits,
)
from toolstitch.stitch.recovery import (
    SAFE_ARGUMENTS,
    UNKNOWN_TOOL_NAME,
    ToolErrorReply,
    tool_error_reply,
)


def discarded(events: list[Event]) -> CallDiscarded:
    found = [e for e in events if isinstance(e, CallDiscarded)]
    assert len(found) == 1, events
    return found[0]


def one_call(*deltas: Delta, limits: Limits | None = None) -> CallDiscarded:
    asm = Assembler(limits=limits)
    events = asm.feed_all(deltas)
    events += asm.finish()
    return discarded(events)


def check_wire(reply: ToolErrorReply) -> None:
    """Both wire forms are plain JSON with only valid JSON for arguments."""
    entry, message = reply.to_openai()
    assert json.loads(json.dumps([entry, message])) == [entry, message]
    assert json.loads(entry["function"]["arguments"]) == {}
    assert entry["id"] == message["tool_call_id"] == reply.call_id
    assert entry["type"] == "function"
    assert message["role"] == "tool"
    assert message["content"] == reply.content
    block, result = reply.to_anthropic()
    assert block == {"type": "tool_use", "id": reply.call_id, "name": reply.name, "input": {}}
    assert result["tool_use_id"] == reply.call_id
    assert result["is_error"] is True
    assert reply.safe_arguments == SAFE_ARGUMENTS == "{}"
    assert len(reply.content) <= 2000


def test_malformed_arguments_give_offset_and_caret() -> None:
    event = one_call(Delta(index=0, id="call_1", name="get_weather", arguments='{"days": 03}'))
    reply = tool_error_reply(event)
    check_wire(reply)
    assert reply.call_id == "call_1"
    assert reply.name == "get_weather"
    assert reply.code == "malformed-arguments"
    assert "[malformed-arguments]" in reply.content
    assert "character 10" in reply.content
    assert "line 1, column 11" in reply.content
    assert '{"days": 03}\n          ^' in reply.content
    assert "call_1" in reply.content


def test_truncated_arguments() -> None:
    event = one_call(Delta(index=2, id="toolu_9", name="write_file", arguments='{"path": "a'))
    reply = tool_error_reply(event)
    check_wire(reply)
    assert reply.code == "truncated-arguments"
    assert "cut off" in reply.content
    assert "11 characters" in reply.content
    assert reply.index == 2


def test_missing_name_gets_a_placeholder_name() -> None:
    event = one_call(Delta(index=0, id="call_7", arguments="{}"))
    reply = tool_error_reply(event)
    check_wire(reply)
    assert reply.name == UNKNOWN_TOOL_NAME
    assert reply.code == "missing-name"
    assert "no function name" in reply.content


def test_limit_exceeded() -> None:
    event = one_call(
        Delta(index=0, id="c", name="deep", arguments="[" * 5),
        limits=Limits(max_depth=3),
    )
    # A top-level array is malformed before it is deep: use an object instead.
    assert event.error.code == "malformed-arguments"
    event = one_call(
        Delta(index=0, id="c", name="deep", arguments='{"a":' + "[" * 5),
        limits=Limits(max_depth=3),
    )
    reply = tool_error_reply(event)
    check_wire(reply)
    assert reply.code == "limit-exceeded"
    assert "max_depth" in reply.content


def test_max_calls_overflow_call_without_id_gets_a_generated_id() -> None:
    asm = Assembler(limits=Limits(max_calls=1))
    asm.feed(Delta(index=0, id="a", name="f", arguments="{}"))
    event = discarded(asm.feed(Delta(index=5, name="f")))
    reply = tool_error_reply(event)
    check_wire(reply)
    assert reply.call_id == f"{GENERATED_ID_PREFIX}5"
    assert tool_error_reply(event) == reply  # deterministic
    assert tool_error_reply(event, fallback_id="call_x").call_id == "call_x"


def test_own_id_wins_over_fallback() -> None:
    event = one_call(Delta(index=0, id="call_1", name="f", arguments="{]"))
    assert tool_error_reply(event, fallback_id="other").call_id == "call_1"


def test_an_unusable_name_is_replaced_and_quoted() -> None:
    event = one_call(Delta(index=0, id="c", name="rm -rf /; echo", arguments="{x"))
    reply = tool_error_reply(event)
    check_wire(reply)
    assert reply.name == UNKNOWN_TOOL_NAME
    assert "'rm -rf /; echo'" in reply.content


def test_hostile_text_stays_bounded_and_escaped() -> None:
    text = '{"a": "' + "x" * 10_000 + "\x00"
    event = one_call(Delta(index=0, id="c", name="f", arguments=text))
    reply = tool_error_reply(event)
    check_wire(reply)
    assert "\x00" not in reply.content
    assert "\\x00" in reply.content


def test_bad_arguments() -> None:
    with pytest.raises(TypeError):
        tool_error_reply("nope")  # type: ignore[arg-type]
    event = one_call(Delta(index=0, id="c", name="f", arguments="{x"))
    with pytest.raises(ValueError, match="fallback_id"):
        tool_error_reply(event, fallback_id="")


def test_reply_is_frozen_and_slotted() -> None:
    reply = tool_error_reply(one_call(Delta(index=0, id="c", name="f", arguments="{x")))
    with pytest.raises(AttributeError):
        reply.call_id = "other"  # type: ignore[misc]
    assert not hasattr(reply, "__dict__")


# -- every hostile input of docs/safety.md that discards a call gets a usable reply -------------


def h(arguments: str) -> Delta:
    """A delta that opens call 0 (id ``c``, name ``f``) with ``arguments``."""
    return Delta(index=0, id="c", name="f", arguments=arguments)


HOSTILE: dict[str, tuple[list[Delta], str, Limits | None]] = {
    # name: (deltas, expected discard code and limit/offset, limits)
    "NaN": ([h('{"a": NaN}')], "malformed-arguments@6", None),
    "-Infinity": ([h('{"a": -Infinity}')], "malformed-arguments@7", None),
    "single quotes": ([h("{'a': 1}")], "malformed-arguments@1", None),
    "comment": ([h('{"a": 1 /* x */}')], "malformed-arguments@8", None),
    "trailing comma": ([h('{"a": 1,}')], "malformed-arguments@8", None),
    "leading zero": ([h('{"a": 01}')], "malformed-arguments@7", None),
    "top-level array": ([h("[1]")], "malformed-arguments@0", None),
    "top-level string": ([h('"x"')], "malformed-arguments@0", None),
    "raw NUL": ([h('{"a": "\x00"}')], "malformed-arguments@7", None),
    "escaped lone surrogate": (
        [h('{"a": "\\ud800"}')],
        "malformed-arguments@13",
        None,
    ),
    "raw lone surrogate": (
        [h('{"a": "\ud800"}')],
        "malformed-arguments@8",
        None,
    ),
    "no-break space": ([h('{"a":\xa01}')], "malformed-arguments@5", None),
    "truncated": ([h('{"a": [1, 2')], "truncated-arguments", None),
    "no name": ([Delta(index=0, id="c", arguments="{}")], "missing-name", None),
    "too deep": (
        [h('{"a":' + "[" * 300)],
        "limit-exceeded:max_depth",
        None,
    ),
    "too many digits": (
        [h('{"a":' + "1" * 5000 + "}")],
        "limit-exceeded:max_number_digits",
        None,
    ),
    "huge exponent": (
        [h('{"a":1e1000000000000000000}')],
        "limit-exceeded:number_exponent",
        None,
    ),
    "long id": (
        [Delta(index=0, id="i" * 300, name="f", arguments="{}")],
        "limit-exceeded:max_id_chars",
        None,
    ),
    "long name": (
        [Delta(index=0, id="c", name="n" * 300, arguments="{}")],
        "limit-exceeded:max_name_chars",
        None,
    ),
    "long arguments": (
        [h('{"a": "' + "x" * 100)],
        "limit-exceeded:max_argument_chars",
        Limits(max_argument_chars=50),
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_every_discard_reason_gets_a_reply(name: str) -> None:
    deltas, expected, limits = HOSTILE[name]
    event = one_call(*deltas, limits=limits)
    error = event.error
    got = error.code
    if isinstance(error, LimitExceeded):
        got += f":{error.limit}"
    elif getattr(error, "offset", None) is not None:
        got += f"@{error.offset}"  # type: ignore[attr-defined]
    assert got == expected  # the row of docs/safety.md
    reply = tool_error_reply(event)
    check_wire(reply)
    assert reply.code == error.code
    assert reply.call_id
    assert f"[{error.code}]" in reply.content


def test_a_reply_is_call_like_for_the_messages_module() -> None:
    messages = pytest.importorskip("toolstitch.messages")
    event = one_call(Delta(index=3, name="f", arguments="{x"))
    reply = tool_error_reply(event)
    assert reply.id == reply.call_id == f"{GENERATED_ID_PREFIX}3"
    result = messages.tool_error(reply, reply.content)
    assert result.call_id == reply.call_id
    assert result.name == "f"
    assert result.is_error
    assert result.content == reply.content  # it already reads as an error: "Error [..."
