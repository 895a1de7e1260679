"""Tests for the streamed JSON array decoder (Gemini ``streamGenerateContent`` without SSE)."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunks import byte_by_byte, split
from strategies import per_pass
from toolstitch.decode.jsonarray import MAX_DIGITS, JSONArrayDecoder
from toolstitch.vocab.errors import StreamDecodeError

KB = 1024
MB = 1024 * 1024
CORPUS_FILE = (
    Path(__file__).resolve().parents[2] / "shared" / "corpus" / "gemini-json-array-nested-args.sse"
)


def decode(chunks: Iterable[bytes], decoder: JSONArrayDecoder | None = None) -> list[object]:
    decoder = decoder or JSONArrayDecoder()
    out: list[object] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    out += decoder.close()
    return out


def same(a: object, b: object) -> bool:
    """Equal with the same types throughout (1 vs 1.0 vs True differ; -0.0 vs 0.0 differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def has_lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_lone_surrogate(v) for v in value)
    return False


def element_ends(body: bytes) -> list[int]:
    """Byte offset just past each top-level element, found with json's own decoder."""
    text = body.decode()
    decoder = json.JSONDecoder()
    ends: list[int] = []
    index = text.index("[") + 1
    while True:
        while text[index] in " \t\r\n,":
            index += 1
        if text[index] == "]":
            return ends
        _, index = decoder.raw_decode(text, index)
        ends.append(len(text[:index].encode()))


# -- generation ---------------------------------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[list[object], bytes]:
    elements: list[object] = draw(
        st.lists(_values | st.dictionaries(st.text(max_size=5), _values), max_size=5)
    )
    indent = draw(st.sampled_from([None, 0, 2]))
    ensure_ascii = draw(st.booleans())
    separator = draw(st.sampled_from([",", "\n,\r\n", " , ", ",\n"]))
    texts = [json.dumps(e, indent=indent, ensure_ascii=ensure_ascii) for e in elements]
    lead, trail = draw(st.sampled_from(["", " ", "\r\n"])), draw(st.sampled_from(["", "\n"]))
    return elements, f"{lead}[{separator.join(texts)}{trail}]{trail}".encode()


# -- properties ---------------------------------------------------------------------------


@per_pass(100)
@given(bodies(), st.data())
def test_any_chunking_gives_json_loads(
    case: tuple[list[object], bytes], data: st.DataObject
) -> None:
    _, body = case
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=10))
    assert same(decode(split(body, cuts)), json.loads(body))


@given(bodies())
@per_pass(25)
def test_byte_by_byte_and_every_two_chunk_split(case: tuple[list[object], bytes]) -> None:
    _, body = case
    expected = json.loads(body)
    assert same(decode(byte_by_byte(body)), expected)
    # Every split point of small bodies (inside each escape, each UTF-8 sequence, each
    # number); an even spread of 500 on larger ones, to keep the test fast.
    for i in range(0, len(body) + 1, max(1, len(body) // 500)):
        assert same(decode([body[:i], body[i:]]), expected), i


@per_pass(100)
@given(bodies(), st.data())
def test_each_element_comes_out_of_the_feed_that_completes_it(
    case: tuple[list[object], bytes], data: st.DataObject
) -> None:
    _, body = case
    expected = json.loads(body)
    ends = element_ends(body)
    chunks = split(body, data.draw(st.lists(st.integers(0, len(body)), max_size=10)))
    # The index of the chunk that holds each byte.
    chunk_of = [k for k, chunk in enumerate(chunks) for _ in chunk]
    decoder = JSONArrayDecoder()
    returned_by: list[int] = []
    for k, chunk in enumerate(chunks):
        returned_by += [k] * len(decoder.feed(chunk))
    assert decoder.close() == []
    wanted = [
        # A bare number ends only at the byte after it; anything else at its last byte.
        chunk_of[end] if type(value) in (int, float) else chunk_of[end - 1]
        for value, end in zip(expected, ends, strict=True)
    ]
    assert returned_by == wanted


_INSERTS = st.sampled_from([b"@", b"}", b"]", b"{", b"[", b",", b":", b'"', b"\\", b"x", b"0"])


@per_pass(100)
@given(bodies(), st.data())
def test_corrupted_bodies_raise_exactly_when_json_loads_fails(
    case: tuple[list[object], bytes], data: st.DataObject
) -> None:
    _, body = case
    position = data.draw(st.integers(0, len(body)))
    if data.draw(st.booleans()):
        body = body[:position] + data.draw(_INSERTS) + body[position:]
    else:
        body = body[:position] + body[position + 1 :]
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=5))
    try:
        expected = json.loads(body)
    except ValueError:
        with pytest.raises(StreamDecodeError) as info:
            decode(split(body, cuts))
        assert info.value.offset is None or 0 <= info.value.offset <= len(body)
        return
    if has_lone_surrogate(expected):  # e.g. a deleted backslash left "\ud800udc00"
        with pytest.raises(StreamDecodeError, match="surrogate"):
            decode(split(body, cuts))
        return
    if isinstance(expected, list):
        assert same(decode(split(body, cuts)), expected)
    else:
        with pytest.raises(StreamDecodeError, match="not a JSON array"):
            decode(split(body, cuts))


@per_pass(100)
@given(bodies(), st.data())
def test_every_truncation_raises(case: tuple[list[object], bytes], data: st.DataObject) -> None:
    _, body = case
    end = body.rindex(b"]")
    cut = data.draw(st.integers(0, end))
    with pytest.raises(StreamDecodeError, match=r"truncated|not a JSON array"):
        decode(split(body[:cut], data.draw(st.lists(st.integers(0, cut), max_size=4))))


# -- examples -----------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_gemini_style_body() -> None:
    body = b'[{\n  "candidates": [{"a": 1}]\n}\n,\r\n{\n  "usage": {"n": 2.5}\n}\n]'
    first_end = body.index(b"}\n,") + 1
    second_end = body.rindex(b"}") + 1
    decoder = JSONArrayDecoder()
    assert decoder.feed(body[: first_end - 1]) == []
    assert decoder.feed(body[first_end - 1 : first_end]) == [{"candidates": [{"a": 1}]}]
    assert decoder.feed(body[first_end : second_end - 1]) == []
    assert decoder.feed(body[second_end - 1 :]) == [{"usage": {"n": 2.5}}]
    assert decoder.close() == []


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_numbers_are_int_and_float_never_decimal() -> None:
    body = b"[1, -0, 1.5, 1e2, -0.0, 18446744073709551616, 1e400, 0.1, true, null]"
    out = decode([body])
    assert same(out, json.loads(body))
    assert [type(v).__name__ for v in out[:4]] == ["int", "int", "float", "float"]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_empty_array_and_whitespace() -> None:
    assert decode([b" \r\n[ \n ] \n"]) == []
    assert decode(byte_by_byte(b"[]")) == []


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("body", "offset"),
    [
        (b"[1,,2]", 4),  # yajl stops just after the second comma
        (b'[{"a" 1}]', 7),
        (b"  [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, @ 18]", 55),
        (b"[NaN]", 2),
        (b'["\xff"]', 3),
    ],
)
def test_malformed(body: bytes, offset: int | None) -> None:
    with pytest.raises(StreamDecodeError, match="invalid JSON array") as info:
        decode([body])
    if offset is not None:
        assert info.value.offset == offset
    # Byte by byte every error is still reported, its offset inside the stream.
    with pytest.raises(StreamDecodeError) as info:
        decode(byte_by_byte(body))
    assert info.value.offset is None or 0 <= info.value.offset <= len(body)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("body", "expected_offset"),
    [(b"[1] x", 4), (b'[1]"', 3), (b'[1]\n  "abc', 6), (b"[1] [", 4), (b"[[]]]", 4)],
)
def test_data_after_the_array(body: bytes, expected_offset: int) -> None:
    # yajl itself lets an unterminated string after the array pass: the decoder does not.
    for chunks in ([body], byte_by_byte(body)):
        with pytest.raises(StreamDecodeError, match="after the end of the JSON array") as info:
            decode(chunks)
        assert info.value.offset == expected_offset


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("body", [b'{"a": [1]}', b"  1", b'"x"', b"\n\n  null"])
def test_a_top_level_value_that_is_not_an_array(body: bytes) -> None:
    expected_offset = len(body) - len(body.lstrip())
    with pytest.raises(StreamDecodeError, match="not a JSON array") as info:
        decode(byte_by_byte(body))
    assert info.value.offset == expected_offset


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("body", [b"", b"  \n", b"[", b'[{"a": 1}', b'[{"a": 1},', b'["abc'])
def test_truncated(body: bytes) -> None:
    decoder = JSONArrayDecoder()
    decoder.feed(body)
    with pytest.raises(StreamDecodeError, match="truncated") as info:
        decoder.close()
    assert info.value.offset == len(body)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_the_element_before_a_truncation_is_still_returned() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.feed(b'[{"a": 1},\n{"b"') == [{"a": 1}]
    with pytest.raises(StreamDecodeError, match="truncated"):
        decoder.close()


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_dead_after_an_error_and_lifecycle() -> None:
    decoder = JSONArrayDecoder()
    with pytest.raises(StreamDecodeError):
        decoder.feed(b"[1,,")
    with pytest.raises(StreamDecodeError, match="invalid JSON array"):
        decoder.feed(b"2]")
    with pytest.raises(StreamDecodeError, match="invalid JSON array"):
        decoder.close()
    decoder = JSONArrayDecoder()
    assert decoder.feed(b"") == []  # an empty chunk is not the end of input
    assert decoder.feed(b"[1]") == [1]
    assert decoder.close() == []
    assert decoder.close() == []
    with pytest.raises(RuntimeError):
        decoder.feed(b" ")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("body", "offset"),
    [
        (b'["\\ud800"]', 2),
        (b'["\\ud800\\ud800"]', 2),  # ijson would make this U+10000
        (b'["\\ud800udc00"]', 2),
        (b'["\\ud800\\n"]', 2),
        (b'["a\\udc00b"]', 3),
        (b'[{"\\udBff": 1}]', 3),
    ],
)
def test_unpaired_surrogate_escapes_are_refused(body: bytes, offset: int) -> None:
    assert has_lone_surrogate(json.loads(body))
    for chunks in ([body], byte_by_byte(body)):
        with pytest.raises(StreamDecodeError, match="unpaired UTF-16 surrogate") as info:
            decode(chunks)
        assert info.value.offset == offset


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_surrogate_pairs_and_escaped_backslashes_are_fine() -> None:
    body = b'["\\ud83d\\ude00", "\\\\ud800", "\\u00e9\\"\\\\", "\\uDBFF\\uDFFF"]'
    assert json.loads(body) == ["😀", "\\ud800", 'é"\\', "\U0010ffff"]
    assert decode(byte_by_byte(body)) == json.loads(body)


# -- the digit guard ----------------------------------------------------------------------


def _digits(count: int) -> bytes:
    return b"9" * count


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("chunker", [lambda b: [b], byte_by_byte, lambda b: split(b, [2000, 4002])])
@pytest.mark.parametrize("prefix", [b"[", b'[{"a": -', b"[1.", b"[1e", b'["x", [0, '])
def test_numbers_of_more_than_4000_digits_are_refused(
    chunker: Callable[[bytes], list[bytes]], prefix: bytes
) -> None:
    body = prefix + _digits(MAX_DIGITS + 1) + b"]" * 3
    with pytest.raises(StreamDecodeError, match="more than 4000 digits") as info:
        decode(chunker(body))
    assert info.value.offset == len(prefix) + MAX_DIGITS


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_4000_digits_and_long_digit_strings_are_fine() -> None:
    body = b"[" + _digits(MAX_DIGITS) + b', "' + _digits(10_000) + b'"]'
    expected = json.loads(body)
    assert same(decode([body]), expected)
    assert same(decode(split(body, range(0, len(body), 999))), expected)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_digit_runs_that_only_look_long_across_chunks() -> None:
    # Two short numbers, a chunk boundary between them: not one long run.
    body = b"[" + _digits(3000) + b"," + _digits(3000) + b"]"
    assert decode(split(body, [3001, 3002])) == json.loads(body)


# -- the element size limit ---------------------------------------------------------------


def _fresh_chunks(size: int, count: int) -> Iterator[bytes]:
    for _ in range(count):
        yield b"x" * size


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_huge_element_raises_after_about_the_limit_with_bounded_memory() -> None:
    decoder = JSONArrayDecoder(max_element_bytes=1 * MB)
    assert decoder.feed(b'[{"a": 1},\n {"s": "') == [{"a": 1}]  # the element starts at 10
    fed = 0
    error: StreamDecodeError | None = None
    tracemalloc.start()
    try:
        for chunk in _fresh_chunks(64 * KB, 32 * KB):  # 2 GB if all read
            fed += len(chunk)
            try:
                decoder.feed(chunk)
            except StreamDecodeError as exc:
                error = exc
                break
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert error is not None
    assert "max_element_bytes=1048576" in str(error)
    assert error.offset == 10 + 1 * MB
    assert fed <= 1 * MB + 64 * KB
    assert peak < 3 * MB


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_element_limit_counts_from_the_previous_separator() -> None:
    body = b'[{"a": "xxxx"}, {"b": "yyyyyy"}]'  # elements of 13 and 16 bytes (+1 space)
    assert decode(byte_by_byte(body), JSONArrayDecoder(max_element_bytes=16)) == json.loads(body)
    with pytest.raises(StreamDecodeError, match="max_element_bytes=15") as info:
        decode(byte_by_byte(body), JSONArrayDecoder(max_element_bytes=15))
    assert info.value.offset == 15 + 15
    with pytest.raises(StreamDecodeError, match="max_element_bytes=15"):
        decode([body], JSONArrayDecoder(max_element_bytes=15))


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_syntax_error_before_the_limit_is_reported_first() -> None:
    with pytest.raises(StreamDecodeError, match="invalid JSON array"):
        decode([b"[1,,2, " + b"3" * 100 + b"]"], JSONArrayDecoder(max_element_bytes=10))


# -- the recorded corpus ------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.skipif(not CORPUS_FILE.exists(), reason=f"corpus file {CORPUS_FILE} is absent")
def test_recorded_gemini_json_array_body() -> None:
    body = CORPUS_FILE.read_bytes()
    expected = json.loads(body)
    assert len(expected) >= 1
    assert same(decode([body]), expected)
    assert same(decode(byte_by_byte(body)), expected)
    assert same(decode(split(body, range(0, len(body), 64))), expected)
