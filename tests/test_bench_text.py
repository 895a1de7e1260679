"""benchmarks/bench_text.py's approaches agree on the calls (nothing here is timed).

The benchmark is ``python benchmarks/bench_text.py``; on the smallest inputs this checks that
its floor reads back the call each format's writer wrote, that the peers' method and
toolstitch give that same call, and that a run prints its tables and writes its JSON.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_text

TOOL = bench_text.TOOL
#: Escapes, quotes, a backslash, non-ASCII and newlines: what a written file holds.
TRICKY = {"path": "src/données.py", "content": 'x = "a\\n"\n\tif x:  # → ok \' " \\ end\n'}

needs_peer = pytest.mark.skipif(
    importlib.util.find_spec("partial_json_parser") is None,
    reason="partial-json-parser (the bench dependency group) is not installed",
)
needs_engine = pytest.mark.skipif(
    not bench_text.available(), reason="toolstitch.stitch() has no text_format yet"
)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("name", sorted(bench_text.FORMATS))
@pytest.mark.parametrize("chunk", [1, 4])
def test_the_floor_reads_the_call_the_writer_wrote(name: str, chunk: int) -> None:
    form = bench_text.FORMATS[name]
    for arguments in (TRICKY, bench_text.arguments(300)):
        chunks = bench_text.split(form.write(TOOL, arguments), chunk)
        assert "".join(chunks) == form.write(TOOL, arguments)
        assert bench_text.floor(form, chunks) == [(TOOL, arguments)]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@needs_peer
@pytest.mark.parametrize("chunk", [1, 4])
def test_the_peers_method_gives_every_call_and_skips_the_text(chunk: int) -> None:
    arguments = bench_text.arguments(1_000)
    call = bench_text.FORMATS["hermes"].write(TOOL, arguments)
    other = bench_text.FORMATS["hermes"].write("read_file", TRICKY)
    chunks = bench_text.split(f"Writing it.\n{call}\nthen {other}", chunk)
    assert bench_text.peer_hermes(chunks) == [(TOOL, arguments), ("read_file", TRICKY)]


@needs_engine
@pytest.mark.parametrize(
    "name", [name for name in bench_text.registered() if name in bench_text.FORMATS]
)
@pytest.mark.parametrize("chunk", [1, 4])
def test_toolstitch_reads_the_call_of_every_generated_format(name: str, chunk: int) -> None:
    arguments = bench_text.arguments(1_000)
    chunks = bench_text.split(bench_text.FORMATS[name].write(TOOL, arguments), chunk)
    assert bench_text.toolstitch_calls(name, chunks) == ([(TOOL, arguments)], "")
    assert bench_text.toolstitch_events(name, chunks) == 1  # the timed path reads it too


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_sizes_read_with_their_units() -> None:
    assert bench_text._sizes("1k,64KB,4m,1500") == (1_000, 64_000, 4_000_000, 1_500)
    assert bench_text._size(4_000_000) == "4 MB"
    assert bench_text._size(40_000) == "40 KB"


def test_a_run_prints_its_tables_and_writes_its_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "text.json"
    argv = ["--formats", "hermes", "--sizes", "1k,64k", "--chunk", "4", "--repeat", "1"]
    assert bench_text.main([*argv, "--json", str(out)]) == 0
    small, large = json.loads(out.read_text(encoding="utf-8"))["cells"]
    assert (small["format"], small["chunk"], small["size"], large["size"]) == (
        "hermes",
        4,
        1_000,
        64_000,
    )
    assert small["samples"]["floor"] == 1
    measured_or_said = {*small["seconds"], *small["status"]}
    assert measured_or_said == {"floor", "toolstitch", "peer"}
    assert "wrong" not in " ".join(small["status"].values())
    assert large["status"]["peer"].startswith("skipped: quadratic")
    printed = capsys.readouterr().out
    assert "### hermes, 4 char(s) per chunk" in printed
    assert "### Targets" in printed
