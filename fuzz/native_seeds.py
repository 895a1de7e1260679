"""Seeds for fuzz_native.py: JSON object texts (valid and not) with three header bytes.

Writes ``fuzz/corpus-seeds/native/``. Each text gets several headers: byte 0 the depth limit,
byte 1 the digit cap, byte 2 the split (see fuzz_native.py).
"""

from __future__ import annotations

from pathlib import Path

DOCS = [
    "{}",
    '{"a":1}',
    ' {"a" : [ ] } ',
    '{"a":[1,2,[3,{}]],"b":{"c":null}}',
    '{"s":"plain \\" \\\\ \\/ \\b \\f \\n \\r \\t"}',
    '{"u":"\\u0041\\u00e9\\u20ac\\uffff\\u0000"}',
    '{"p":"\\ud83d\\ude00 \\uD800\\uDC00 \\udbff\\udfff"}',
    '{"lone":"\\ud800"}',
    '{"low":"\\udc00"}',
    '{"raw":"\ud83d\ude00"}',
    '{"rawlone":"\ud800x"}',
    '{"rawlow":"\udc00"}',
    '{"emoji":"\U0001f600\u00e9\u4e2d\u007f"}',
    '{"n":[0,-0,1,-1,10,1.5,-0.25,1e5,1E+5,1e-5,2.5E10,0.0,123456789]}',
    '{"bad":[01,1.,.5,-,1e,+1]}',
    '{"lit":[true,false,null]}',
    '{"badlit":[tru,nul,fals,truex]}',
    '{"ctl":"a\x01b"}',
    '{"vt":1,\x0b"b":2}',
    '{"ff":\x0c1}',
    '{"a":1}  ',
    '{"a":1} x',
    '{"a":1}{}',
    "[1,2]",
    '"x"',
    '{"a":1,}',
    "{,}",
    '{"a" "b"}',
    '{"a":1 2}',
    '{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{}}}}}}}}}',
    '{"d":[[[[[[[[[[]]]]]]]]]]}',
    '{"e":1e999999999999999999}',
    '{"e":1e99999999999999}',
    '{"big":123456789012345678901234567890}',
    '{"k\\u0022":"v"}',
    '{"a":"\\x"}',
    '{"a":"\\u12g4"}',
    '{"a":"\\ud83d\\u0041"}',
    '{"a":"\\ud83d\\"}',
    '\t\r\n {"ws":\t1\r\n}',
    '{"a":[{"b":"]}"},"}{"]}',
    '{"a":"[[[[[[[["}',
    '{"key":"va\\\\"}',
]
HEADERS = (b"\x80\x80\x00", b"\x80\x80\x11", b"\x03\x06\x05", b"\x07\x02\x01")


def main() -> None:
    folder = Path(__file__).resolve().parent / "corpus-seeds" / "native"
    folder.mkdir(parents=True, exist_ok=True)
    for number, doc in enumerate(DOCS):
        for header in HEADERS:
            data = header + doc.encode("utf-8", "surrogatepass")
            (folder / f"d{number:02d}-{header.hex()}").write_bytes(data)


if __name__ == "__main__":
    main()
