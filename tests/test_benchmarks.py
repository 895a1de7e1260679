"""The benchmark's workloads are deterministic, and every competitor computes the right thing.

Nothing here is timed: the benchmark is ``python benchmarks/bench_compare.py`` (see
docs/performance.md). The competitor checks need the ``bench`` dependency group and are skipped,
with the reason shown, when a package of it is missing.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_compare
import competitors
import workloads

# name, calls, deltas, argument chars, fingerprint: as documented in docs/performance.md
STANDARD = [
    ("small", 1, 22, 125, "f57e2a21d26b5cc0"),
    ("medium", 1, 1_406, 9_312, "15981a08dc01bf46"),
    ("large", 1, 163_176, 1_059_970, "1394f58b88af0648"),
    ("parallel8", 8, 2_485, 16_168, "3f9b9bb3e9de3536"),
    ("one_char_100k", 1, 106_074, 106_073, "b5784ff205ee6389"),
]
SWEEP = [
    (1_000, "write_file_1k", 186, 1_138, "d77120847ceb3395"),
    (4_000, "write_file_4k", 679, 4_327, "a5cb737190fcd32d"),
    (16_000, "write_file_16k", 2_669, 17_060, "79598f9492fa30f6"),
    (64_000, "write_file_64k", 10_387, 67_848, "6aa802dbb6da24d7"),
]
SHAPED = {  # name: (anthropic events fingerprint, SSE body fingerprint)
    "small": ("dde83519a3e099a0", "88b3be65bd9cd7c9"),
    "medium": ("fccd85e96d3e8309", "d182d2aead217ed6"),
    "parallel8": ("82ede8517ba4181a", "ff09e79f8e3aa17f"),
}


@pytest.fixture(scope="module")
def built() -> dict[str, workloads.Workload]:
    return {workload.name: workload for workload in workloads.standard()}


@pytest.mark.once  # benchmarks/workloads.py (no toolstitch) against docs/performance.md
@pytest.mark.parametrize(("name", "calls", "deltas", "chars", "digest"), STANDARD)
def test_standard_workloads_are_as_documented(
    built: dict[str, workloads.Workload],
    name: str,
    calls: int,
    deltas: int,
    chars: int,
    digest: str,
) -> None:
    workload = built[name]
    assert (workload.calls, len(workload.deltas), workload.argument_chars) == (
        calls,
        deltas,
        chars,
    )
    assert workload.fingerprint() == digest
    assert workloads.expected(workload).keys() == set(range(calls))


@pytest.mark.once  # benchmarks/workloads.py (no toolstitch) against docs/performance.md
@pytest.mark.parametrize(("size", "name", "deltas", "chars", "digest"), SWEEP)
def test_size_sweep_is_as_documented(
    size: int, name: str, deltas: int, chars: int, digest: str
) -> None:
    (workload,) = workloads.size_sweep((size,))
    assert (workload.name, len(workload.deltas), workload.argument_chars) == (name, deltas, chars)
    assert workload.fingerprint() == digest
    assert workloads.sweep((size,))[0].deltas == workload.deltas  # the old sweep, renamed


def test_sweep_covers_1kb_to_16mb() -> None:
    assert workloads.SWEEP_SIZES[0] == 1_000
    assert workloads.SWEEP_SIZES[-1] == 16_000_000
    assert workloads.size_name(16_000_000) == "write_file_16m"


@pytest.mark.once  # benchmarks/workloads.py (no toolstitch) against docs/performance.md
@pytest.mark.parametrize("name", sorted(SHAPED))
def test_other_shapes_are_deterministic_and_carry_the_same_calls(
    built: dict[str, workloads.Workload], name: str
) -> None:
    workload = built[name]
    events = workloads.anthropic_events(workload)
    body = workloads.sse_body(workload)
    assert (workloads.fingerprint(events), workloads.fingerprint(body)) == SHAPED[name]
    texts = workloads.arguments_by_index(workload)
    from_events: dict[int, str] = {}
    for event in events:
        if event["type"] == "content_block_delta":
            index = event["index"]
            from_events[index] = from_events.get(index, "") + event["delta"]["partial_json"]
    assert from_events == texts
    assert body[-1] == b"data: [DONE]\n\n"
    assert len(body) == len(workload.deltas) + 2  # one chunk per delta, finish, [DONE]
    last = json.loads(body[-2].removeprefix(b"data: "))
    assert last["choices"][0]["finish_reason"] == "tool_calls"


def test_extrapolation_fit_recovers_a_quadratic() -> None:
    xs = [1_000.0, 2_000.0, 4_000.0, 8_000.0]
    a, b = bench_compare.fit_linear_quadratic(xs, [3e-6 * x + 2e-9 * x * x for x in xs])
    assert a == pytest.approx(3e-6, rel=1e-6)
    assert b == pytest.approx(2e-9, rel=1e-6)
    assert bench_compare.slope([(1.0, 1.0), (10.0, 100.0)]) == pytest.approx(2.0)


def test_a_clocked_run_past_its_budget_stops() -> None:
    workload = workloads.size_sweep((4_000,))[0]
    with pytest.raises(competitors.DidNotFinish) as stop:
        competitors.ijson_naive(workload.deltas, competitors.Clock(budget=-1.0))
    assert stop.value.done == 0


def _missing(approach: competitors.Approach) -> list[str]:
    return [name for name in approach.requires if importlib.util.find_spec(name) is None]


TINY = [
    workloads.single("small", "get_weather", workloads.small_arguments(), 1),
    workloads.parallel("parallel2", 2, 4),
]


@pytest.mark.parametrize("workload", TINY, ids=lambda w: w.name)
@pytest.mark.parametrize("approach", competitors.APPROACHES, ids=lambda a: a.name)
def test_every_approach_gives_the_expected_result(
    approach: competitors.Approach, workload: workloads.Workload
) -> None:
    missing = _missing(approach)
    if missing:
        pytest.skip(f"the bench dependency group is not installed: {', '.join(missing)} missing")
    if approach.prepare is None:
        data = competitors.shape_input(workload, approach.shape)
    else:
        data = approach.prepare(workload, None)
    got = approach.run(data, competitors.Clock())
    assert competitors.check(approach, got, workloads.expected(workload))


@pytest.mark.parametrize("shape", competitors.SHAPES)
def test_toolstitch_is_ready_on_the_closing_fragment(shape: str) -> None:
    workload = workloads.parallel("parallel2", 2, 4)
    items = competitors.shape_input(workload, shape)
    assert bench_compare.ready_at_close(workload, shape, items)


def test_stage_prefixes_build_the_documented_workloads_and_run() -> None:
    """``bench_stages`` builds small, medium and parallel8 itself (not through ``standard``):
    the same deltas; each of its prefixes runs, and the last one ends every call."""
    import bench_stages

    for name, _, _, _, fingerprint in STANDARD:
        if name in ("small", "medium", "parallel8"):
            assert bench_stages.workload_named(name).fingerprint() == fingerprint
    for _, prefixes, floor in bench_stages.groups("small"):
        for _, prefix in prefixes:
            prefix()
        closed = prefixes[-1][1]()
        assert isinstance(closed, list)
        assert floor()


def test_bench_native_reports_the_median_ratio_of_its_processes_and_their_range() -> None:
    """``bench_native.py --processes K``: each ratio is the median of the K processes' ratios
    (not the ratio of medians), followed by the lowest and the highest."""
    import bench_native

    runs = [
        {"floor": 1e-6, "native": 2e-6, "pure": 10e-6},
        {"floor": 2e-6, "native": 7e-6, "pure": 20e-6},
        {"floor": 4e-6, "native": 10e-6, "pure": 60e-6},
    ]
    cells = bench_native.row("anthropic", "small", runs).strip("| ").split(" | ")
    assert cells == [
        "anthropic",
        "small",
        "2.0",
        "7.0",
        "20.0",
        "2.50x (2.00–3.50)",
        "10.00x (10.00–15.00)",
    ]
    one = bench_native.row("openai", "small", runs[:1]).strip("| ").split(" | ")
    assert one[-2:] == ["2.00x", "10.00x"]


def test_bench_stages_reads_every_event_of_a_dump_and_renders_stage_differences(
    tmp_path: Path,
) -> None:
    """``--cache-sim``: a dump's totals by the names of its ``events:`` line; each stage row
    is its prefix minus the one before, the last row the whole run, × the floor's."""
    import bench_stages

    dump = tmp_path / "cg.out.2"
    dump.write_text("events: Ir I1mr D1mr D1mw Bcm Bim\nfn=x\nsummary: 900 7 5 2 4 1\n")
    assert bench_stages._totals(dump) == {
        "Ir": 900,
        "I1mr": 7,
        "D1mr": 5,
        "D1mw": 2,
        "Bcm": 4,
        "Bim": 1,
    }
    assert bench_stages._sum(bench_stages._totals(dump), ("D1mr", "D1mw")) == 7
    title, prefixes, _ = bench_stages.groups("small")[1]
    count = len(prefixes)
    columns = {
        c: [10.0, *(float(2 * (i + 1)) for i in range(count))] for c, _ in bench_stages.SIMULATED
    }
    rows = bench_stages.render_simulated({title: columns}, "small").splitlines()
    stage_rows = [r for r in rows if r.startswith("| ") and not r.startswith("| stage")]
    assert len(stage_rows) == count + 1
    assert stage_rows[1].endswith("| 2 (0.20) | 2 (0.20) | 2 (0.20) | 2 (0.20) |")
    whole = f"{2 * count:,} ({2 * count / 10:.2f})"
    assert stage_rows[-1] == f"| **whole run** | {whole} | {whole} | {whole} | {whole} |"
