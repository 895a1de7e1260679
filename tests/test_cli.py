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
