"""``toolstitch`` as a person sees it: under a pseudo-terminal, through pipes, in colour or not.

The terminal snapshots in tests/fixtures/cli/ are compared byte for byte with what the
command writes: ``*.txt`` through a pipe (plain text), ``*.ansi`` under a pseudo-terminal
(``pty``, ``COLUMNS=100``, rich's escapes included; the terminal's newline translation is
turned off so the bytes are exactly the command's). Nothing is stripped; the runs are
deterministic because the environment is fixed (``COLUMNS``, ``TERM``, ``PYTHONUTF8``, no
``NO_COLOR``/``FORCE_COLOR``) and the paths are relative to the repository.

To regenerate the snapshots after a deliberate change of the output::

    TOOLSTITCH_UPDATE_SNAPSHOTS=1 python -m pytest -n0 tests/test_cli_terminal.py

and review the diff (``cat tests/fixtures/cli/*.ansi`` shows the colours in a terminal).
"""

from __future__ import annotations

import io
import os
import re
import select
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from toolstitch import cli
from toolstitch.testing import OpenAIChatScript

if sys.platform == "win32":  # pragma: no cover
    pytest.skip("a pseudo-terminal needs POSIX", allow_module_level=True)

import fcntl
import pty
import termios

ROOT = Path(__file__).parents[1]
SNAPSHOTS = ROOT / "tests" / "fixtures" / "cli"
UPDATE = os.environ.get("TOOLSTITCH_UPDATE_SNAPSHOTS", "") not in ("", "0")
EXAMPLE = "src/toolstitch/examples/parallel-calls-one-malformed.sse"
REASONING = "tests/fixtures/anthropic/thinking-text-then-parallel-tools.sse"
COLUMNS = 100
ESC = b"\x1b["


def environment(**extra: str) -> dict[str, str]:
    """A fixed environment: nothing of the caller's (colour variables above all) leaks in."""
    env = {
        "PYTHONPATH": str(ROOT / "src"),
        "PATH": "",
        "COLUMNS": str(COLUMNS),
        "TERM": "xterm-256color",
        "PYTHONUTF8": "1",
    }
    env.update(extra)
    return env


def command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "toolstitch", *argv]


def under_pty(*argv: str, **env: str) -> tuple[int, bytes]:
    """Run the command with a pseudo-terminal as stdin, stdout and stderr; its exit status
    and every byte it wrote.

    The test keeps its own end of the follower open until the command has exited, so that
    the terminal is never hung up (Linux may drop unread output at a hang-up), and reads
    whatever is left once it has."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    modes = termios.tcgetattr(follower)
    modes[1] &= ~termios.ONLCR  # "\n" stays "\n": the bytes are the command's own
    termios.tcsetattr(follower, termios.TCSANOW, modes)
    chunks = []
    try:
        with subprocess.Popen(
            command(*argv),
            stdin=follower,
            stdout=follower,
            stderr=follower,
            cwd=ROOT,
            env=environment(**env),
        ) as process:
            while process.poll() is None:
                if select.select([leader], [], [], 0.05)[0]:
                    chunks.append(os.read(leader, 65536))
            while select.select([leader], [], [], 0)[0]:  # what it wrote before exiting
                chunks.append(os.read(leader, 65536))
            status = process.returncode
    finally:
        os.close(follower)
        os.close(leader)
    return status, b"".join(chunks)


def piped(*argv: str, **env: str) -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        command(*argv), capture_output=True, cwd=ROOT, env=environment(**env), check=False
    )
    return done.returncode, done.stdout, done.stderr


def check_snapshot(name: str, got: bytes) -> None:
    file = SNAPSHOTS / name
    if UPDATE:
        file.write_bytes(got)
    assert file.exists(), f"no snapshot {name}: run with TOOLSTITCH_UPDATE_SNAPSHOTS=1"
    assert got.decode() == file.read_bytes().decode()


# -- snapshots -------------------------------------------------------------------------------

SNAPSHOT_RUNS = {
    "replay": ("replay", EXAMPLE),
    "replay-timeline": ("replay", EXAMPLE, "--timeline"),
    "replay-reasoning": ("replay", REASONING),
}
STATUS = {"replay": 1, "replay-timeline": 1, "replay-reasoning": 0}
TERMINAL_RUNS = ("replay-timeline", "replay-reasoning")


@pytest.fixture(scope="module")
def terminal() -> dict[str, tuple[int, bytes]]:
    """Each terminal run once (a subprocess each: the slow part of this module)."""
    pytest.importorskip("rich")  # the cli extra, in the test dependency group
    return {name: under_pty(*SNAPSHOT_RUNS[name]) for name in TERMINAL_RUNS}


def plain(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, bytes]:
    """The run through a pipe, in process (stdout is not a terminal: plain text)."""
    for key, value in environment().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.chdir(ROOT)
    status = cli.main(list(SNAPSHOT_RUNS[name]))
    out, err = capsys.readouterr()
    assert err == ""
    return status, out.encode()


@pytest.mark.parametrize("name", SNAPSHOT_RUNS)
def test_plain_snapshot(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = plain(name, monkeypatch, capsys)
    assert status == STATUS[name]
    assert ESC not in out
    check_snapshot(f"{name}.txt", out)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_plain_through_a_real_pipe() -> None:
    status, out, err = piped(*SNAPSHOT_RUNS["replay-timeline"])
    assert (status, err) == (1, b"")
    assert out == (SNAPSHOTS / "replay-timeline.txt").read_bytes()


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("name", TERMINAL_RUNS)
def test_terminal_snapshot(name: str, terminal: dict[str, tuple[int, bytes]]) -> None:
    status, out = terminal[name]
    assert status == STATUS[name]
    assert ESC in out  # a terminal, no NO_COLOR: colour
    check_snapshot(f"{name}.ansi", out)


@pytest.mark.parametrize("name", TERMINAL_RUNS)
def test_terminal_shows_what_plain_shows(
    name: str,
    terminal: dict[str, tuple[int, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Colour changes the layout, never the information: every word of the plain output
    is on the terminal, in the same order."""
    _, text = plain(name, monkeypatch, capsys)
    words = iter(_visible(terminal[name][1]).split())
    for word in text.decode().split():
        assert word in words, word


def _visible(ansi: bytes) -> str:
    """The text of rich's output, its SGR escapes taken out (for the comparison only)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", ansi.decode())


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_reasoning_is_dimmed_on_a_terminal(terminal: dict[str, tuple[int, bytes]]) -> None:
    assert b"\x1b[2mTwo tools.\x1b[0m" in terminal["replay-reasoning"][1]  # SGR 2: faint


# -- colour rules ----------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_no_color_on_a_terminal() -> None:
    status, out = under_pty("replay", EXAMPLE, NO_COLOR="1")
    assert status == 1
    assert ESC not in out
    assert b"call 0 get_weather" in out


class Tty(io.StringIO):
    """A standard output that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("env", "argv", "tty", "coloured"),
    [
        ({}, (), True, True),
        ({}, (), False, False),
        ({"NO_COLOR": "1"}, (), True, False),
        ({"NO_COLOR": ""}, (), True, True),  # empty: unset, as no-color.org says
        ({"TERM": "dumb"}, (), True, False),
        ({"FORCE_COLOR": "1"}, (), False, True),
        ({"FORCE_COLOR": ""}, (), False, False),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, (), False, False),  # NO_COLOR first
        ({}, ("--color", "never"), True, False),
        ({"NO_COLOR": "1"}, ("--color", "always"), False, True),  # the command line wins
        ({"FORCE_COLOR": "1"}, ("--json", "--color", "always"), True, False),  # JSON: never
    ],
)
def test_colour_rules(
    env: dict[str, str],
    argv: tuple[str, ...],
    tty: bool,
    coloured: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for key in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out = Tty() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert cli.main(["replay", str(ROOT / EXAMPLE), *argv]) == 1
    assert ("\x1b[" in out.getvalue()) is coloured


def test_without_rich_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the cli extra the output is the plain text, whatever colour is asked for."""
    monkeypatch.setitem(sys.modules, "rich.console", None)  # its import fails
    monkeypatch.setenv("COLUMNS", "80")
    out = Tty()
    monkeypatch.setattr(sys, "stdout", out)
    assert cli.main(["replay", str(ROOT / EXAMPLE), "--color", "always"]) == 1
    assert "\x1b[" not in out.getvalue()
    assert "call 0 get_weather  id call_Wx81pQ" in out.getvalue()


# -- pipes -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stream of 2,500 text deltas: some 95 KB of timeline, more than a pipe holds (64 KB)
    and the reader's buffer (8 KB) together."""
    script = OpenAIChatScript().text("word " * 2500, pieces=2500).finish("stop")
    file = tmp_path_factory.mktemp("cli") / "big.sse"
    file.write_bytes(b"".join(s for s in script.reply().steps if isinstance(s, bytes)))
    return file


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_reader_leaves_early(big: Path) -> None:
    """``toolstitch replay big.sse --timeline | head -1``: no traceback, status 141."""
    with subprocess.Popen(
        command("replay", str(big), "--timeline"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(),
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # like head: read a line, then go away
        err = process.stderr.read()
        status = process.wait()
    assert first.startswith(b"replay ")
    assert err == b""
    assert status == 128 + 13


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_head_in_a_shell(big: Path) -> None:
    """The same through a real shell pipeline, as a person types it."""
    line = " ".join(command("replay", str(big), "--timeline")) + " | head -n 2"
    done = subprocess.run(
        ["/bin/sh", "-c", line],
        capture_output=True,
        env=environment(PATH=os.environ.get("PATH", "/usr/bin:/bin")),
        check=False,
    )
    assert done.returncode == 0  # head's
    assert done.stdout.count(b"\n") == 2
    assert b"Traceback" not in done.stderr
    assert done.stderr == b""


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_docs_example_is_the_snapshot() -> None:
    """docs/cli.md shows the plain snapshot as it is: the page cannot drift from the output."""
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    marker = "<!-- cli-example: tests/fixtures/cli/replay-timeline.txt -->\n```text\n"
    shown = page.split(marker, 1)[1].split("```\n", 1)[0]
    assert shown == (SNAPSHOTS / "replay-timeline.txt").read_text(encoding="utf-8")


def test_a_long_timeline_in_colour_is_laid_out_plain(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rich's tables are slow on thousands of rows: past 1,000 the timeline is the plain
    table (the same columns), the rest of the output still in colour."""
    monkeypatch.setenv("COLUMNS", "100")
    out = Tty()
    monkeypatch.setattr(sys, "stdout", out)
    assert cli.main(["replay", str(big), "--timeline", "--color", "always"]) == 0
    head, table = out.getvalue().split("timeline (each event, when it came out)")
    assert "\x1b[" in head
    assert "\x1b[" not in table.split("\n", 1)[1]
    rows = table.splitlines()[2:]
    assert len(rows) == 2_501
    assert rows[-1].split() == ["2,501", rows[-1].split()[1], "finish", "stop"]
