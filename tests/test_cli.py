"""``toolstitch replay`` and ``toolstitch demo``: output, JSON contract, exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.expected import fixture_names, load, path
from toolstitch import cli

ROOT = Path(__file__).parents[1]
JSON_KEYS = [
    "provider",
    "calls",
    "discarded",
    "warnings",
    "server_calls",
    "stream_error",
    "finish_reason",
    "text",
]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("name", fixture_names())
def test_replay_json_on_every_fixture(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["replay", str(path(name)), "--json"], capsys)
    assert status == 0
    assert err == ""
    report = json.loads(out)  # exactly one JSON object
    assert list(report) == JSON_KEYS
    _, expected = load(name)
    assert report["provider"] == expected["provider"]
    assert [{k: c[k] for k in ("index", "id", "name", "arguments")} for c in report["calls"]] == (
        expected["calls"]
    )
    for call in report["calls"]:
        assert list(call) == ["index", "id", "name", "arguments"]
    for item in report["discarded"]:
        assert list(item) == ["index", "id", "name", "arguments", "code", "message"]
    assert [d["code"] for d in report["discarded"]] == [d["code"] for d in expected["discarded"]]
    for warning in report["warnings"]:
        assert list(warning) == ["index", "code", "message"]
    assert sorted((w["index"] is None, w["index"] or 0, w["code"]) for w in report["warnings"]) == (
        sorted((w[0] is None, w[0] or 0, w[1]) for w in expected["warnings"])
    )
    assert report["server_calls"] == expected["server_calls"]
    error = report["stream_error"]
    assert (error and error["code"]) == expected["stream_error"]
    if error is not None:
        assert list(error) == ["code", "message"]
    assert report["finish_reason"] == expected["finish_reason"]
    assert report["text"] == expected["text"]


@pytest.mark.parametrize("name", fixture_names())
def test_replay_plain_on_every_fixture(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["replay", str(path(name))], capsys)
    assert status == 0
    assert err == ""
    _, expected = load(name)
    assert f"provider: {expected['provider']} (detected)" in out
    for call in expected["calls"]:
        assert f"arguments: {call['arguments']}" in out
    assert out.count("ready at event") == len(expected["calls"])
    for item in expected["discarded"]:
        assert f"{item['code']}: " in out


def test_replay_plain_shows_positions_errors_and_snippets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(["replay", str(path("openai-chat/malformed-arguments"))], capsys)
    assert status == 0
    assert "0 calls ready" in out
    assert "2 calls discarded" in out
    assert "discarded at event 2 of 5 (byte " in out
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
    assert f"ready at event 5 of 10 (byte {first_end:,} of {len(body):,})" in out


def test_replay_named_provider(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        ["replay", str(path("gemini/json-array-body")), "--provider", "gemini"], capsys
    )
    assert status == 0
    assert "provider: gemini (given)" in out


def test_replay_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["replay", str(tmp_path / "missing.sse")], capsys)
    assert status == 2
    assert out == ""
    assert err.startswith("toolstitch: cannot read ")
    assert err.count("\n") == 1
    status, _, err = run(["replay", str(tmp_path)], capsys)  # a directory
    assert status == 2
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "body",
    [b"", b"hello\n", b'{"not": "a stream"}', b"data: {broken\n\n", b"[1, 2"],
)
def test_replay_unknown_format(
    body: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "body.sse"
    file.write_bytes(body)
    for extra in ([], ["--json"]):
        status, out, err = run(["replay", str(file), *extra], capsys)
        assert status == 2
        assert out == ""
        assert err.startswith("toolstitch: ")
        assert err.count("\n") == 1


def test_replay_wrong_provider(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(
        ["replay", str(path("anthropic/no-argument-tool")), "--provider", "openai-responses"],
        capsys,
    )
    assert status == 2
    assert out == ""
    assert "is anthropic, not openai-responses" in err


def test_replay_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["replay", "x.sse", "--provider", "cohere"])
    assert exc.value.code == 2
    capsys.readouterr()


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
    assert (status, err) == (0, "")
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
    status, out, err = run(["replay", stream, "--tools", tools], capsys)
    assert (status, err) == (0, "")
    assert "0 calls ready" in out
    assert (
        "2 calls discarded\n"
        "  [0] get_weather  id call_a1\n"
        "      schema-violation: /city: a string is not of type 'integer' (offset 9)\n"
        '      arguments: \'{"city": "Pa\'\n'
        "      discarded at event 4 of 10 (byte 1,000 of 2,198)\n"
        "  [1] get_time  id call_b2\n"
        "      unknown-tool: the tool name 'get_time' (so far) matches no declared tool; "
    ) in out


def test_replay_with_tools_warn_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = str(path("openai-chat/parallel-calls"))
    tools = tools_file(tmp_path, {"get_weather": CITY_INTEGER, "get_time": {}})
    argv = ["replay", stream, "--tools", tools, "--on-schema-violation", "warn"]
    status, out, err = run([*argv, "--json"], capsys)
    assert (status, err) == (0, "")
    report = json.loads(out)
    assert [c["name"] for c in report["calls"]] == ["get_weather", "get_time"]
    assert report["discarded"] == []
    assert report["warnings"] == [
        {
            "index": 0,
            "code": "schema-violation",
            "message": "/city: a string is not of type 'integer' (offset 9)",
        }
    ]
    status, out, _ = run(argv, capsys)
    assert status == 0
    assert "2 calls ready" in out
    assert (
        "\n1 warning\n  [0] schema-violation: /city: a string is not of type 'integer' (offset 9)\n"
    ) in out


def test_replay_policy_without_tools_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    stream = str(path("openai-chat/malformed-arguments"))
    for extra in ([], ["--json"]):
        _, plain, _ = run(["replay", stream, *extra], capsys)
        _, warned, _ = run(["replay", stream, "--on-schema-violation", "warn", *extra], capsys)
        assert warned == plain


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "cannot read "),
        (b"[{'name': 'x'}]", "is not JSON: "),
        (b"\xff\xfe\x00", "is not JSON: "),
        (b"null", "is not a tool list: "),
        (b"5", "is not a tool list: "),
        (b'"get_weather"', "is not a tool list: "),
        (b'{"type": "function", "function": {"name": "x"}}', "is not a tool list: "),
        (b'[{"description": "no name"}]', "is not a tool list: "),
        (b'{"x": {"type": "strin"}}', "is not a tool list: "),
    ],
)
def test_replay_bad_tools_file(
    content: bytes | None, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "tools.json"
    if content is not None:
        file.write_bytes(content)
    stream = str(path("openai-chat/parallel-calls"))
    for extra in ([], ["--json"]):
        status, out, err = run(["replay", stream, "--tools", str(file), *extra], capsys)
        assert status == 2
        assert out == ""
        assert err.startswith("toolstitch: ")
        assert reason in err
        assert err.count("\n") == 1


def test_demo(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["demo"], capsys)
    assert status == 0
    assert err == ""
    assert "READY      get_weather(" in out
    assert "DISCARDED  malformed-arguments" in out
    assert "DISCARDED  truncated-arguments" in out
    assert "+ '{\"ci'" in out
    assert "accumulating-args" in out
    status, again, _ = run([], capsys)  # no arguments: the demo
    assert status == 0
    assert again == out  # deterministic


def test_demo_one_example(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(["demo", "tool-call-cut-by-max-tokens.sse"], capsys)
    assert status == 0
    assert "provider: anthropic" in out
    assert "malformed" not in out


def test_examples_are_package_data() -> None:
    folder = ROOT / "src" / "toolstitch" / "examples"
    assert sorted(p.name for p in folder.glob("*.sse")) == [
        "parallel-calls-one-malformed.sse",
        "tool-call-cut-by-max-tokens.sse",
    ]


def test_python_dash_m(tmp_path: Path) -> None:
    env_path = str(ROOT / "src")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolstitch",
            "replay",
            str(path("openai-chat/parallel-calls")),
            "--json",
        ],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": env_path, "PATH": ""},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["calls"][0]["name"] == "get_weather"
    done = subprocess.run(
        [sys.executable, "-m", "toolstitch", "--version"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": env_path, "PATH": ""},
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("toolstitch ")
