"""``toolstitch replay`` and ``toolstitch demo``: output, JSON contract, exit statuses.

The terminal itself (colour, a pseudo-terminal, snapshots, pipes) is tests/test_cli_terminal.py.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolstitch
from fixtures.expected import fixture_names, load, path
from toolstitch import cli
from toolstitch.cli import _input as cli_input
from toolstitch.testing import AnthropicScript, OpenAIChatScript

ROOT = Path(__file__).parents[1]
JSON_KEYS = [
    "schema_version",
    "input",
    "exit_status",
    "provider",
    "events",
    "bytes",
    "tools",
    "calls",
    "discarded",
    "discarded_omitted",
    "warnings",
    "server_calls",
    "custom_calls",
    "stream_error",
    "finish_reason",
    "usage",
    "text",
    "text_parts",
    "reasoning",
    "reasoning_blocks",
    "refusal",
]
CALL_KEYS = ["index", "id", "name", "arguments", "parsed_arguments", "ready_at"]
DISCARD_KEYS = [
    "index", "id", "name", "arguments", "code", "message", "ending",
    "offset", "line", "column", "discarded_at",
]  # fmt: skip
WARNING_KEYS = ["concerns", "index", "name", "code", "message"]


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wide layout, so that a line is never wrapped unless a test asks; never colour."""
    monkeypatch.setenv("COLUMNS", "1000")
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def expected_status(expected: dict[str, object]) -> int:
    return 1 if expected["discarded"] or expected["stream_error"] else 0


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("name", fixture_names())
def test_replay_json_on_every_fixture(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["replay", str(path(name)), "--json"], capsys)
    _, expected = load(name)
    assert status == expected_status(expected)
    assert err == ""
    report = json.loads(out)  # exactly one JSON object
    assert list(report) == JSON_KEYS
    assert report["schema_version"] == cli.SCHEMA_VERSION == 2
    assert report["exit_status"] == status
    assert report["provider"] == expected["provider"]
    _check_json_calls(report, expected)
    _check_json_discarded_and_warnings(report, expected)
    _check_json_stream(report, expected)


def _check_json_calls(report: dict[str, Any], expected: dict[str, Any]) -> None:
    """The ready calls: the fixture's, each with its parsed arguments and where it became ready."""
    assert [{k: c[k] for k in ("index", "id", "name", "arguments")} for c in report["calls"]] == (
        expected["calls"]
    )
    for call in report["calls"]:
        assert list(call) == CALL_KEYS
        assert call["parsed_arguments"] == json.loads(call["arguments"])
        assert set(call["ready_at"]) == {"event", "byte"}


def _check_json_discarded_and_warnings(report: dict[str, Any], expected: dict[str, Any]) -> None:
    """The discarded calls and the warnings: the fixture's codes, each with its keys."""
    for item in report["discarded"]:
        assert list(item) == DISCARD_KEYS
    assert [d["code"] for d in report["discarded"]] == [d["code"] for d in expected["discarded"]]
    for warning in report["warnings"]:
        assert list(warning) == WARNING_KEYS
        assert warning["concerns"] == ("stream" if warning["index"] is None else "call")
    assert sorted((w["index"] is None, w["index"] or 0, w["code"]) for w in report["warnings"]) == (
        sorted((w[0] is None, w[0] or 0, w[1]) for w in expected["warnings"])
    )


def _check_json_stream(report: dict[str, Any], expected: dict[str, Any]) -> None:
    """The server calls, the stream error, the finish reason and the text: the fixture's."""
    assert [
        {k: s[k] for k in ("index", "id", "name", "type", "arguments")}
        for s in report["server_calls"]
    ] == expected["server_calls"]
    error = report["stream_error"]
    assert (error and error["code"]) == expected["stream_error"]
    if error is not None:
        assert list(error) == ["code", "message"]
    assert report["finish_reason"] == expected["finish_reason"]
    assert report["text"] == expected["text"]


@pytest.mark.parametrize("name", fixture_names())
def test_replay_plain_on_every_fixture(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["replay", str(path(name))], capsys)
    _, expected = load(name)
    assert status == expected_status(expected)
    assert err == ""
    assert f"provider: {expected['provider']} (detected)" in out
    for call in expected["calls"]:
        assert f"arguments: {call['arguments']}" in out
    assert out.count("ready at: event") == len(expected["calls"])
    for item in expected["discarded"]:
        assert f"{item['code']}: " in out


def test_replay_plain_shows_positions_errors_and_snippets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(["replay", str(path("openai-chat/malformed-arguments"))], capsys)
    assert status == 1
    assert "0 calls ready" in out
    assert "2 calls discarded" in out
    assert "discarded at: event 2 of 5 (byte " in out
    # the caret snippet, under the first bad character
    lines = out.splitlines()
    caret = next(i for i, line in enumerate(lines) if line.strip() == "^")
    assert lines[caret - 1].strip().startswith('{"cmd": "echo "hi""}')
    column = lines[caret].index("^")
    assert lines[caret - 1][column] == "h"


def test_replay_plain_ready_position(capsys: pytest.CaptureFixture[str]) -> None:
    body, _ = load("openai-chat/parallel-calls")
    _, out, _ = run(["replay", str(path("openai-chat/parallel-calls"))], capsys)
    assert f"stream: 10 events, {len(body):,} bytes; finish reason: tool_calls" in out
    first_end = body.index(b"\n\n", body.index(b'ris\\"}')) + 2
    assert f"ready at: event 5 of 10 (byte {first_end:,} of {len(body):,})" in out


def test_replay_named_provider(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        ["replay", str(path("gemini/json-array-body")), "--provider", "gemini"], capsys
    )
    assert status == 0
    assert "provider: gemini (given)" in out


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_replay_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["replay", str(tmp_path / "missing.sse")], capsys)
    assert status == 2
    assert out == ""
    assert err.startswith("toolstitch: cannot read ")
    assert err.count("\n") == 1
    status, _, err = run(["replay", str(tmp_path)], capsys)  # a directory
    assert status == 2
    assert err.count("\n") == 1


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_replay_unreadable_file_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing.sse")
    status, out, err = run(["replay", missing, "--json"], capsys)
    assert status == 2
    assert err.startswith("toolstitch: cannot read ")  # for the person, as without --json
    assert json.loads(out) == {
        "schema_version": 2,
        "input": missing,
        "exit_status": 2,
        "error": {"code": "unreadable-input", "message": err.removeprefix("toolstitch: ")[:-1]},
    }


@pytest.mark.parametrize(
    "body",
    [b"", b"hello\n", b'{"not": "a stream"}', b"data: {broken\n\n", b"[1, 2"],
)
def test_replay_unknown_format(
    body: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "body.sse"
    file.write_bytes(body)
    status, out, err = run(["replay", str(file)], capsys)
    assert status == 2
    assert out == ""
    assert err.startswith("toolstitch: ")
    assert err.count("\n") == 1
    status, out, err = run(["replay", str(file), "--json"], capsys)
    assert status == 2
    assert err.count("\n") == 1
    error = json.loads(out)["error"]
    assert error["code"] == "not-a-stream"
    assert f"toolstitch: {error['message']}\n" == err


def test_replay_wrong_provider(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(
        ["replay", str(path("anthropic/no-argument-tool")), "--provider", "openai-responses"],
        capsys,
    )
    assert status == 2
    assert out == ""
    assert "is anthropic, not openai-responses" in err


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "x.sse", "--provider", "cohere"],
        ["replay", "x.sse", "--json", "--color", "sometimes"],
        ["replay"],
        ["nonsense"],
    ],
)
def test_replay_bad_usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2  # argparse's own: a usage line on stderr
    out, err = capsys.readouterr()
    assert out == ""
    assert "usage: toolstitch" in err


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("openai-chat/parallel-calls", 0),  # every call ready
        ("openai-chat/malformed-arguments", 1),  # calls discarded
        ("openai-chat/error-event", 1),  # the stream failed
        ("anthropic/truncated-no-block-stop", 1),  # a call cut off
    ],
)
def test_exit_status(name: str, status: int, capsys: pytest.CaptureFixture[str]) -> None:
    for extra in ([], ["--json"], ["--timeline"]):
        assert run(["replay", str(path(name)), *extra], capsys)[0] == status


def test_stdin_dash(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    name = "openai-chat/parallel-calls"
    body, _ = load(name)
    _, from_file, _ = run(["replay", str(path(name)), "--json"], capsys)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(body)))
    status, from_stdin, err = run(["replay", "-", "--json"], capsys)
    assert (status, err) == (0, "")
    expected = json.loads(from_file)
    expected["input"] = "-"
    assert json.loads(from_stdin) == expected
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(body)))
    _, plain, _ = run(["replay", "-"], capsys)
    assert plain.startswith("replay - (standard input)\n")


def test_stdin_dash_is_binary_safe(capsys: pytest.CaptureFixture[str]) -> None:
    """A binary AWS event stream through a real pipe: the same report as from the file."""
    file = ROOT / "tests" / "fixtures" / "bedrock-converse" / "parallel-calls.eventstream"
    piped = subprocess.run(
        [sys.executable, "-m", "toolstitch", "replay", "-", "--json"],
        input=file.read_bytes(),
        capture_output=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""},
        check=False,
    )
    assert (piped.returncode, piped.stderr) == (0, b"")
    report = json.loads(piped.stdout)
    _, named, _ = run(["replay", str(file), "--json"], capsys)
    assert report == {**json.loads(named), "input": "-"}
    assert [c["name"] for c in report["calls"]] == ["get_weather", "get_time"]


def test_every_json_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = "anthropic/thinking-text-then-parallel-tools"
    tools = tools_file(tmp_path, {"add": {}, "multiply": {}})
    argv = ["replay", str(path(name)), "--tools", tools, "--json", "--timeline"]
    status, out, _ = run(argv, capsys)
    report = json.loads(out)
    assert list(report) == [*JSON_KEYS, "timeline"]
    body, _ = load(name)
    assert (status, report["exit_status"], report["input"]) == (0, 0, str(path(name)))
    assert (report["events"], report["bytes"]) == (21, len(body))
    assert report["tools"] == {
        "file": tools,
        "declared": ["add", "multiply"],
        "on_schema_violation": "discard",
    }
    ready = {row["index"]: row for row in report["timeline"] if row["type"] == "CallReady"}
    for call in report["calls"]:
        row = ready[call["index"]]
        assert call["ready_at"] == {"event": row["event"], "byte": row["byte"]}
        assert call["parsed_arguments"] == {"a": 2, "b": 3}
    assert report["calls"][0]["ready_at"] == {"event": 14, "byte": 1743}
    assert report["usage"] == {"input_tokens": 100, "output_tokens": 42}
    assert report["reasoning"] == "Two tools."
    assert report["reasoning_blocks"] == [
        {"kind": "thinking", "text": "Two tools.", "summary": [], "redacted": False, "signed": True}
    ]
    assert report["text_parts"] == ["Doing both now."] == [report["text"]]
    assert report["refusal"] == ""
    assert report["custom_calls"] == []
    assert [row["event"] for row in report["timeline"]] == sorted(
        row["event"] for row in report["timeline"]
    )
    assert {row["type"] for row in report["timeline"]} >= {
        "ReasoningDelta",
        "ReasoningBlock",
        "TextDelta",
        "CallStarted",
        "ArgumentsDelta",
        "CallReady",
        "FinishReason",
        "Usage",
    }


def test_json_discarded_at_and_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["replay", str(path("openai-chat/malformed-arguments")), "--json"], capsys)
    report = json.loads(out)
    assert [d["discarded_at"]["event"] for d in report["discarded"]] == [2, 3]
    _, out, _ = run(
        ["replay", str(path("cohere-chat/citations-and-unknown-event")), "--json"], capsys
    )
    warnings = json.loads(out)["warnings"]
    assert warnings
    assert all(w["concerns"] == "stream" and w["index"] is None for w in warnings)


# -- what the plain output shows ---------------------------------------------------------------


def test_warnings_say_what_they_concern(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["replay", str(path("cohere-chat/citations-and-unknown-event"))], capsys)
    assert "\n  stream: quirk-" in out
    assert "[0]" not in out
    assert "[-]" not in out
    stream = str(path("openai-chat/parallel-calls"))
    tools = tools_file(tmp_path, {"get_weather": CITY_INTEGER, "get_time": {}})
    _, out, _ = run(["replay", stream, "--tools", tools, "--on-schema-violation", "warn"], capsys)
    assert "\n  call 0 get_weather: schema-violation: /city: " in out


def body(script: AnthropicScript | OpenAIChatScript) -> bytes:
    return b"".join(step for step in script.reply().steps if isinstance(step, bytes))


SERVER_CALL = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
#: Text, a server tool call, text: two text blocks with nothing of the client's between them.
TWO_TEXT_BLOCKS = body(
    AnthropicScript()
    .text("Let me look.")
    .close_block()
    .raw({"type": "content_block_start", "index": 1, "content_block": SERVER_CALL})
    .raw({"type": "content_block_stop", "index": 1})
    .text("I found it.")
    .finish()
)


def test_text_blocks_kept_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "two-text.sse"
    file.write_bytes(TWO_TEXT_BLOCKS)
    status, out, _ = run(["replay", str(file)], capsys)
    assert status == 0
    assert "look.I found" not in out
    assert (
        "the turn, in stream order\n"
        "  text (12 characters)\n"
        "      Let me look.\n"
        "  server call web_search\n"
        "  text (11 characters)\n"
        "      I found it.\n"
    ) in out
    _, out, _ = run(["replay", str(file), "--json"], capsys)
    report = json.loads(out)
    assert report["text_parts"] == ["Let me look.", "I found it."]
    assert report["text"] == "Let me look.I found it."  # the result's own, as before


def test_reasoning_shown(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["replay", str(path("anthropic/thinking-text-then-parallel-tools"))], capsys)
    assert (
        "  reasoning (thinking, 10 characters, signed)\n"
        "      Two tools.\n"
        "  text (15 characters)\n"
        "      Doing both now.\n"
        "  call 2 add: ready\n"
    ) in out


def long_call(size: int) -> bytes:
    arguments = json.dumps({"text": "x" * (size - 12)})
    return body(OpenAIChatScript().call("c1", "save", arguments).finish("tool_calls"))


def test_long_arguments_clipped_with_their_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "long.sse"
    file.write_bytes(long_call(12_345))
    monkeypatch.setenv("COLUMNS", "60")
    status, out, _ = run(["replay", str(file), "--timeline"], capsys)
    assert status == 0
    assert all(len(line) <= 60 for line in out.splitlines())
    assert out.count("x") < 1_000
    assert "… (12,345 characters)" in out
    arguments = out[out.index("arguments: ") : out.index("… (12,345")]
    lines = arguments.splitlines()
    assert len(lines) > 5  # wrapped, each continuation under the value
    assert all(line.startswith(" " * 17 + "x") for line in lines[1:-1])
    status, out, _ = run(["replay", str(file), "--full"], capsys)
    assert "characters)" not in out
    assert out.count("x") >= 12_345 - 12


def test_tools_shown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = str(path("openai-chat/parallel-calls"))
    tools = tools_file(tmp_path, {"get_weather": {}, "get_time": {}})
    status, out, _ = run(["replay", stream, "--tools", tools], capsys)
    assert status == 0
    assert f"tools: {tools} declares 2 tools: get_weather, get_time; " in out
    assert out.count("      schema: valid\n") == 2


# -- the timeline ------------------------------------------------------------------------------


def test_timeline(capsys: pytest.CaptureFixture[str]) -> None:
    name = "openai-chat/malformed-arguments"
    body, _ = load(name)
    status, out, _ = run(["replay", str(path(name)), "--timeline"], capsys)
    assert status == 1
    _, table = out.split("timeline (each event, when it came out)\n")
    rows = table.splitlines()
    assert rows[0].split() == ["event", "byte", "what", "detail"]
    replayed = cli_input.replay(body, "auto", {}, states=True)
    events = [r for r in rows[1:] if r[:5].strip()]  # a caret snippet has no event number
    assert len(events) == len(replayed.steps)
    for row, step in zip(events, replayed.steps, strict=True):
        number, byte, *_ = row.split()
        assert (number, byte) == (f"{step.where.event:,}", f"{step.where.byte:,}")
    discards = [r for r in events if "DISCARDED" in r]
    assert len(discards) == 2
    assert discards[0].split()[:4] == ["2", discards[0].split()[1], "call", "0"]
    assert any(r.strip() == "^" for r in rows)  # the caret snippet, under its row


def test_timeline_ready_moment_matches_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["replay", str(path("openai-chat/parallel-calls")), "--timeline"], capsys)
    ready = [line.split() for line in out.splitlines() if " READY " in line]
    assert [(r[0], r[1], r[3]) for r in ready] == [("5", "1,244", "0"), ("7", "1,797", "1")]
    assert "ready at: event 5 of 10 (byte 1,244 of 2,198)" in out


# -- --tools ----------------------------------------------------------------------------------

CITY_INTEGER = {"type": "object", "properties": {"city": {"type": "integer"}}}
#: The same declaration (get_weather, whose city must be an integer) in every accepted form.
TOOL_FILES = {
    "openai-chat": [
        {"type": "function", "function": {"name": "get_weather", "parameters": CITY_INTEGER}}
    ],
    "openai-responses": [{"type": "function", "name": "get_weather", "parameters": CITY_INTEGER}],
    "anthropic": [{"name": "get_weather", "input_schema": CITY_INTEGER}],
    "gemini": [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "parameters": {"type": "OBJECT", "properties": {"city": {"type": "INTEGER"}}},
                }
            ]
        }
    ],
    "mapping": {"get_weather": CITY_INTEGER},
}


def tools_file(tmp_path: Path, tools: object) -> str:
    file = tmp_path / "tools.json"
    file.write_text(json.dumps(tools))
    return str(file)


@pytest.mark.parametrize("form", TOOL_FILES)
def test_replay_with_tools_shows_the_discards(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = str(path("openai-chat/parallel-calls"))
    tools = tools_file(tmp_path, TOOL_FILES[form])
    status, out, err = run(["replay", stream, "--tools", tools, "--json"], capsys)
    assert (status, err) == (1, "")
    report = json.loads(out)
    assert list(report) == JSON_KEYS
    assert report["calls"] == []
    assert [(d["index"], d["code"], d["arguments"]) for d in report["discarded"]] == [
        (0, "schema-violation", '{"city": "Pa'),  # at the fragment where the string starts
        (1, "unknown-tool", ""),  # at its name, before any arguments
    ]
    assert report["discarded"][0]["message"] == (
        "/city: a string is not of type 'integer' (offset 9)"
    )
    assert "Declared tools: 'get_weather'." in report["discarded"][1]["message"]
    assert report["tools"]["declared"] == ["get_weather"]
    status, out, err = run(["replay", stream, "--tools", tools], capsys)
    assert (status, err) == (1, "")
    assert "0 calls ready" in out
    assert (
        "2 calls discarded\n"
        "  call 0 get_weather  id call_a1\n"
        "      schema-violation: /city: a string is not of type 'integer' (offset 9)\n"
        '      arguments received: {"city": "Pa\n'
        "      discarded at: event 4 of 10 (byte 1,000 of 2,198)\n"
        "  call 1 get_time  id call_b2\n"
        "      unknown-tool: the tool name 'get_time' (so far) matches no declared tool; "
    ) in out
    assert "      arguments received: (none)\n" in out


def test_replay_with_tools_warn_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = str(path("openai-chat/parallel-calls"))
    tools = tools_file(tmp_path, {"get_weather": CITY_INTEGER, "get_time": {}})
    argv = ["replay", stream, "--tools", tools, "--on-schema-violation", "warn"]
    status, out, err = run([*argv, "--json"], capsys)
    assert (status, err) == (0, "")  # a warning is not a failure
    report = json.loads(out)
    assert [c["name"] for c in report["calls"]] == ["get_weather", "get_time"]
    assert report["discarded"] == []
    assert report["warnings"] == [
        {
            "concerns": "call",
            "index": 0,
            "name": "get_weather",
            "code": "schema-violation",
            "message": "/city: a string is not of type 'integer' (offset 9)",
        }
    ]
    assert report["tools"]["on_schema_violation"] == "warn"
    status, out, _ = run(argv, capsys)
    assert status == 0
    assert "2 calls ready" in out
    assert "      schema: violated (kept with a warning: see below)\n" in out
    assert (
        "\n1 warning\n"
        "  call 0 get_weather: schema-violation: /city: a string is not of type 'integer' "
        "(offset 9)\n"
    ) in out


def test_replay_policy_without_tools_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    stream = str(path("openai-chat/malformed-arguments"))
    for extra in ([], ["--json"]):
        _, plain, _ = run(["replay", stream, *extra], capsys)
        _, warned, _ = run(["replay", stream, "--on-schema-violation", "warn", *extra], capsys)
        assert warned == plain


@pytest.mark.parametrize(
    ("content", "reason", "code"),
    [
        (None, "cannot read ", "unreadable-tools"),
        (b"[{'name': 'x'}]", "is not JSON: ", "bad-tools"),
        (b"\xff\xfe\x00", "is not JSON: ", "bad-tools"),
        (b"null", "is not a tool list: ", "bad-tools"),
        (b"5", "is not a tool list: ", "bad-tools"),
        (b'"get_weather"', "is not a tool list: ", "bad-tools"),
        (b'{"type": "function", "function": {"name": "x"}}', "is not a tool list: ", "bad-tools"),
        (b'[{"description": "no name"}]', "is not a tool list: ", "bad-tools"),
        (b'{"x": {"type": "strin"}}', "is not a tool list: ", "bad-tools"),
    ],
)
def test_replay_bad_tools_file(
    content: bytes | None,
    reason: str,
    code: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    file = tmp_path / "tools.json"
    if content is not None:
        file.write_bytes(content)
    stream = str(path("openai-chat/parallel-calls"))
    status, out, err = run(["replay", stream, "--tools", str(file)], capsys)
    assert status == 2
    assert out == ""
    assert err.startswith("toolstitch: ")
    assert reason in err
    assert err.count("\n") == 1
    status, out, err = run(["replay", stream, "--tools", str(file), "--json"], capsys)
    assert status == 2
    error = json.loads(out)["error"]
    assert error["code"] == code
    assert reason in error["message"]


# -- demo --------------------------------------------------------------------------------------


def test_demo(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["demo"], capsys)
    assert status == 0
    assert err == ""
    assert "READY get_weather {" in out
    assert "DISCARDED malformed-arguments" in out
    assert "DISCARDED truncated-arguments" in out
    assert "+ '{\"ci'" in out
    assert "accumulating-args" in out
    status, again, _ = run([], capsys)  # no arguments: the demo
    assert status == 0
    assert again == out  # deterministic


def test_demo_and_timeline_share_one_table(capsys: pytest.CaptureFixture[str]) -> None:
    name = "parallel-calls-one-malformed.sse"
    _, demo, _ = run(["demo", name], capsys)
    example = ROOT / "src" / "toolstitch" / "examples" / name
    _, replayed, _ = run(["replay", str(example), "--timeline"], capsys)
    table = replayed.split("timeline (each event, when it came out)\n")[1]
    assert table in demo


def test_demo_one_example(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(["demo", "tool-call-cut-by-max-tokens.sse"], capsys)
    assert status == 0
    assert "provider: anthropic" in out
    assert "malformed" not in out


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_examples_are_package_data() -> None:
    folder = ROOT / "src" / "toolstitch" / "examples"
    assert sorted(p.name for p in folder.glob("*.sse")) == [
        "parallel-calls-one-malformed.sse",
        "tool-call-cut-by-max-tokens.sse",
    ]


def test_python_dash_m_version() -> None:
    """(``python -m toolstitch replay`` itself runs in test_stdin_dash_is_binary_safe.)"""
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-m", "toolstitch", "--version"],
        capture_output=True,
        text=True,
        env={**env, "TOOLSTITCH_PURE_PYTHON": "1"},
        check=False,
    )
    assert done.returncode == 0
    # which path runs: the C extension or pure Python (here forced)
    assert done.stdout.startswith("toolstitch ")
    assert "pure Python (TOOLSTITCH_PURE_PYTHON is set)" in done.stdout


def test_version_names_the_active_path(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    expected = "native (" if toolstitch.NATIVE else "pure Python ("
    assert out.split(": ", 1)[1].startswith(expected)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_core_never_imports_rich() -> None:
    """Nor does the command, unless colour is on."""
    stream = str(path("openai-chat/parallel-calls"))
    code = (
        "import sys, toolstitch, toolstitch.runner, toolstitch.cli\n"
        f"assert toolstitch.cli.main(['replay', {stream!r}, '--timeline']) == 0\n"
        "assert 'rich' not in sys.modules, sorted(m for m in sys.modules if 'rich' in m)\n"
    )
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": ""}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr


def test_control_characters_are_shown_not_obeyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded stream cannot clear the screen or restyle the terminal it is shown on."""
    file = tmp_path / "hostile.sse"
    hostile = "bad\x1b[2J\x1b]0;title\x07\rover\x9b1m"
    file.write_bytes(body(OpenAIChatScript().text(hostile).finish("stop")))
    for argv in ([], ["--timeline"], ["--color", "always"]):
        _, out, _ = run(["replay", str(file), *argv], capsys)
        text = out.replace("\x1b[0m", "").replace("\x1b[1m", "").replace("\x1b[2m", "")
        for style in ("\x1b[1;32m", "\x1b[1;31m", "\x1b[36m", "\x1b[33m", "\x1b[1;33m"):
            text = text.replace(style, "")
        assert not set(text) & {"\x1b", "\x07", "\r", "\x9b"}, argv
    _, out, _ = run(["replay", str(file)], capsys)
    assert "bad\\x1b[2J\\x1b]0;title\\x07\\rover" not in out  # not Python's repr …
    assert "bad\\x1b[2J\\x1b]0;title\\x07\\x0dover\\x9b1m" in out  # … one escape per character
    _, out, _ = run(["replay", str(file), "--json"], capsys)
    assert json.loads(out)["text"] == hostile  # the JSON carries it exactly


def test_replay_json_says_how_a_cut_call_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A call whose arguments never arrived, cut by the token limit: discarded, its ending
    # named in the report.
    start = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [start]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
    ]
    path = tmp_path / "cut.sse"
    path.write_text("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n")
    assert cli.main(["replay", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    (discarded,) = report["discarded"]
    assert (discarded["code"], discarded["ending"]) == ("truncated-arguments", "length")
    assert report["discarded_omitted"] == 0
    assert report["calls"] == []
