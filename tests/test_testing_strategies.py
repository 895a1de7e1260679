"""toolstitch.testing.strategies: every generated stream's claimed outcome is what stitch reports.

For each provider, over any calls, chunkings, interleavings, quirks and faults, the outcome
the generator states (from what it wrote) equals ``Outcome.of`` the ``StitchResult`` of the
bytes (named provider and detected), and of the provider events as dicts (Bedrock: boto3's).
The quirks and faults each provider offers all appear when asked for; the streams play
through ``ScriptedServer`` to the real openai and anthropic SDK clients; without hypothesis
``toolstitch.testing`` still imports and the strategies module names the extra.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolstitch import QUIRK_CODES, stitch
from toolstitch.testing import ScriptedServer
from toolstitch.testing.strategies import (
    FAULTS,
    PROVIDERS,
    QUIRKS,
    Call,
    GeneratedStream,
    Outcome,
    chunkings,
    cut_bytes,
    streams,
)

if TYPE_CHECKING:
    import anthropic
    import openai
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import anthropic, openai

FAST = settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEW = settings(FAST, max_examples=5)


def outcome(stream: GeneratedStream, source: object, provider: str = "auto") -> Outcome:
    return Outcome.of(stitch(source, provider, tools=stream.tools).result)


@pytest.mark.parametrize("provider", PROVIDERS)
@FAST
@given(data=st.data())
def test_the_claimed_outcome_is_what_stitch_reports(provider: str, data: st.DataObject) -> None:
    stream = data.draw(streams(provider, quirks=True, faults=True))
    assert stream.provider == provider
    assert b"".join(stream.chunks) == b"".join(stream.frames) == stream.body
    assert outcome(stream, list(stream.chunks), provider) == stream.expected
    assert outcome(stream, list(stream.events), provider) == stream.expected


@pytest.mark.parametrize("provider", PROVIDERS)
@FEW
@given(data=st.data())
def test_detection_reads_every_generated_stream(provider: str, data: st.DataObject) -> None:
    stream = data.draw(streams(provider, quirks=True, faults=True))
    assert outcome(stream, list(stream.chunks)) == stream.expected


@FEW
@given(data=st.data())
def test_any_rechunking_of_the_frames_keeps_the_outcome(data: st.DataObject) -> None:
    stream = data.draw(streams(faults=True, quirks=True))
    chunks = data.draw(chunkings(stream.frames))
    assert outcome(stream, chunks, stream.provider) == stream.expected


@pytest.mark.parametrize("provider", PROVIDERS)
@FEW
@given(data=st.data())
def test_the_calls_a_test_asks_for_become_ready_as_asked(
    provider: str, data: st.DataObject
) -> None:
    wanted: list[Call | tuple[str, dict[str, Any]]] = [
        Call("lookup", {"q": "Zürich", "n": [1, 2.5]}),
        ("book", {"hotel": {"stars": 4}}),
    ]
    stream = data.draw(streams(provider, wanted))
    ready = stream.expected.ready
    assert [(c.name, json.loads(c.arguments)) for c in ready] == [
        ("lookup", {"q": "Zürich", "n": [1, 2.5]}),
        ("book", {"hotel": {"stars": 4}}),
    ]
    assert len({c.id for c in ready}) == 2
    assert outcome(stream, list(stream.chunks), provider) == stream.expected


QUIRK_CASES = [(p, q) for p in PROVIDERS for q in QUIRKS[p]]


@pytest.mark.parametrize(("provider", "quirk"), QUIRK_CASES)
@settings(FEW, max_examples=3)
@given(data=st.data())
def test_every_offered_quirk_is_written_and_reported(
    provider: str, quirk: str, data: st.DataObject
) -> None:
    calls = [Call("a", {"x": 1}), Call("b", {"y": "two"})]
    stream = data.draw(streams(provider, calls, quirks=[quirk]))
    assert quirk in QUIRK_CODES
    assert stream.quirks == {quirk}
    assert stream.expected.quirks == {quirk}
    assert outcome(stream, list(stream.chunks), provider) == stream.expected


FAULT_CASES = [(p, f) for p in PROVIDERS for f in FAULTS[p]]
CODES = {"malformed": "malformed-arguments", "truncated": "truncated-arguments"}


@pytest.mark.parametrize(("provider", "fault"), FAULT_CASES)
@settings(FEW, max_examples=4)
@given(data=st.data())
def test_every_offered_fault_discards_its_call_with_its_code(
    provider: str, fault: str, data: st.DataObject
) -> None:
    calls = [Call("a", {"x": [1, 2]}), Call("b", {"y": "two"}, fault=fault)]
    stream = data.draw(streams(provider, calls))
    (discard,) = stream.expected.discarded
    assert discard.code == CODES.get(fault, fault)
    assert [c.name for c in stream.expected.ready] == ["a"]
    assert (stream.tools is not None) == (fault == "unknown-tool")
    assert outcome(stream, list(stream.chunks), provider) == stream.expected


@settings(FEW, max_examples=1)
@given(data=st.data())
def test_wrong_requests_are_refused(data: st.DataObject) -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        data.draw(streams("openai-completions"))
    with pytest.raises(ValueError, match="cannot have a 'malformed' call"):
        data.draw(streams("gemini", [Call("a", fault="malformed")]))
    with pytest.raises(ValueError, match="only the last call"):
        data.draw(streams("anthropic", [Call("a", fault="truncated"), Call("b")]))
    with pytest.raises(ValueError, match="not quirk codes"):
        data.draw(streams("anthropic", quirks=["quirk-made-up"]))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_cut_bytes_ignores_points_outside_the_body() -> None:
    assert cut_bytes(b"abcdef", [0, 2, 2, 9, 4]) == [b"ab", b"cd", b"ef"]
    assert cut_bytes(b"", [1]) == [b""]


# -- played to the real SDKs -----------------------------------------------------------------


@settings(FEW, max_examples=4)
@given(streams("openai-chat", quirks=True, faults=True))
def test_played_to_the_openai_sdk(stream: GeneratedStream) -> None:
    server = ScriptedServer([stream.reply()])
    with (
        server,
        openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0) as client,
    ):
        chunks = client.chat.completions.create(model="m", messages=[], stream=True)
        with chunks:
            assert outcome(stream, chunks, "openai-chat") == stream.expected


@settings(FEW, max_examples=4)
@given(streams("openai-responses", faults=True))
def test_played_to_the_openai_sdk_responses(stream: GeneratedStream) -> None:
    server = ScriptedServer([stream.reply()])
    with (
        server,
        openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0) as client,
    ):
        events = client.responses.create(model="m", input="hi", stream=True)
        with events:
            assert outcome(stream, events, "openai-responses") == stream.expected


@settings(FEW, max_examples=4)
@given(streams("anthropic", quirks=True, faults=True))
def test_played_to_the_anthropic_sdk(stream: GeneratedStream) -> None:
    server = ScriptedServer([stream.reply()])
    with (
        server,
        anthropic.Anthropic(
            base_url=server.anthropic_base_url, api_key="k", max_retries=0
        ) as client,
    ):
        events = client.messages.create(model="m", max_tokens=10, messages=[], stream=True)
        with events:
            assert outcome(stream, events, "anthropic") == stream.expected


# -- without hypothesis ------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_without_hypothesis_the_package_imports_and_the_strategies_name_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['hypothesis'] = None\n"
        "import toolstitch.testing\n"
        "try:\n"
        "    import toolstitch.testing.strategies\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert "toolstitch[testing]" in done.stdout


# -- docs/testing.md -----------------------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[1] / "docs" / "testing.md"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_docs_table_lists_every_quirk_and_fault_offered() -> None:
    text = DOCS.read_text(encoding="utf-8")
    table = text.split("<!-- strategies-table:start -->")[1].split("<!-- strategies-table:end -->")[
        0
    ]
    rows = {}
    for line in table.strip().splitlines()[2:]:
        provider, quirks, faults = (cell.strip() for cell in line.strip("|").split("|"))
        rows[provider.strip("`")] = (
            tuple(q.strip(" `") for q in quirks.split(",")),
            tuple(f.strip(" `") for f in faults.split(",")),
        )
    assert rows == {p: (QUIRKS[p], FAULTS[p]) for p in PROVIDERS}


def docs_blocks() -> list[str]:
    lines = DOCS.read_text(encoding="utf-8").split("\n")
    out: list[str] = []
    body: list[str] = []
    inside = False
    for line in lines:
        if line.strip() == "```python":
            inside, body = True, []
        elif inside and line.strip() == "```":
            inside = False
            out.append("\n".join(body) + "\n")
        elif inside:
            body.append(line)
    return out


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_docs_property_finds_the_planted_bug_and_passes_the_fix() -> None:
    agents = [b for b in docs_blocks() if "def collect_calls" in b]
    (prop,) = [b for b in docs_blocks() if "def test_collect_calls" in b]
    buggy, fixed = agents
    assert "the planted bug" in buggy
    # The page's own settings, derandomized: the same examples on every run of the suite.
    prop = prop.replace("phases=[Phase.generate])", "phases=[Phase.generate], derandomize=True)")
    assert "derandomize=True" in prop
    namespace: dict[str, object] = {}
    exec(compile(buggy + prop, str(DOCS), "exec"), namespace)
    test = namespace["test_collect_calls"]
    assert callable(test)
    with pytest.raises(Exception) as found:  # noqa: PT011 - any failure is the finding
        test()
    assert not isinstance(found.value, ImportError)
    exec(compile(fixed.replace("\ntest_collect_calls()\n", "\n"), str(DOCS), "exec"), namespace)
    test()  # the fixed agent passes the same property
