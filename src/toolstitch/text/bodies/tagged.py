"""The ``tagged`` body grammar: calls written as XML-ish tags with raw, unescaped values.

One grammar reads every format of this shape (research §1.2), its markers given as data (the
format's ``"options"``):

* Qwen3-Coder: ``<tool_call>`` ``<function=NAME>`` ``<parameter=KEY>`` VALUE ``</parameter>`` …
  ``</function>`` ``</tool_call>``; one leading and one trailing newline of a value are the
  template's markup and are dropped (``"trim_newlines"``); a bare ``<function=…>`` is one call
  (no ``"close"``: the body ends with its call);
* Seed-OSS: the same inside ``<seed:tool_call>``, values inline, nothing dropped;
* GLM-4.5 / 4.7: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>``:
  no call opener (the body is one call), the name is the text before the first newline,
  ``<arg_key>`` or the close; a value has its own opener (``"value"``);
* MiniMax M2: ``<invoke name="N">`` … ``<parameter name="K">V</parameter>`` … ``</invoke>``,
  several invokes per section; headers are attributes (``"attributes"``), the name quoted,
  single-quoted (variant ``single-quotes``) or bare (``no-quotes``);
* DeepSeek V3.2 / V4 DSML: the same with ``<｜DSML｜invoke name=`` and
  ``<｜DSML｜parameter name="k" string="true|false">`` (``"type_attribute": "string"``:
  ``"true"`` is raw text, ``"false"`` JSON; without it the tool's schema decides).

Options (markers are literal strings): ``close`` the body's closing marker (absent: the body
is one call and ends with it); ``call`` the opener of each call (absent: the body is one call
whose name starts at once, and which the reader started at the marker that opened the body:
the format's move there says ``"call": "start"``); ``name_end`` the end of the name header
(absent: the name ends at a newline, the first parameter or the call's close); ``call_close``
(absent: the body's close ends the call); ``param``, ``key_end``, ``value`` (optional),
``value_close``; ``attributes``, ``type_attribute``, ``trim_newlines``; ``name_newline``
(whether the template writes a newline after a line-ended name: the other way is variant
``no-newline-after-name`` or ``newline-after-name``).

Theory of operation
-------------------
A body is a small state machine over the text fed to it, each state reading with the
``MarkerScanner`` of its own marker set, so each character is looked at once and only what may
still become one of the state's markers is held back:

* the *structure* (between calls, between parameters, skipping after a fault) reads with the
  set of the call opener, the call's close, the body's close, the parameter opener and the
  value opener; only whitespace may stand between them;
* a *header* (a name, a parameter's key) reads up to its end marker, on its line: a newline,
  or a ``<`` (a ``>``-ended header) or a structure marker (a longer one) first, is a fault;
  a header is parsed once, whole, when it ends;
* a *value* reads with the one marker that closes it. **A value ends at the first close tag**:
  the formats do not escape, and text alone cannot tell a literal ``</parameter>`` written in
  a value from the real one (a server that sees token ids can; a client cannot), so a value
  may hold any other marker (``</function>``, ``</tool_call>``) but never its own close tag.

The arguments stream as JSON text as they are read: ``{`` at the first parameter (``{}`` for
none), ``"key":``, a string value's ``"``, each piece JSON-escaped as it comes, its closing
``"``, ``,`` between parameters, ``}`` at the call's close. A value the tool's schema types as
other than a string (``CallSink.typed``), or DSML's ``string="false"``, is buffered (at most
``CallSink.limit`` characters) and written whole at its close by ``typed_value``. Nothing
written is ever taken back: besides what the scanners hold, the only text held is the last
newline of a Qwen3-Coder value, which is markup if the close tag follows it.

Malformed markup (a header that does not end on its line, text between parameters that is not
whitespace, a missing or impossible name or key, a parameter outside a call) fails the call
(``CallSink.fail`` with ``markup=True`` at the fault's position) and the body skips to the
call's close, the next call's opener or the body's close: the other calls stand. A missing
``</function>`` (``</invoke>``) before the body's close or the next call is tolerated (variant
``missing-call-close``). A failed call gets no ``end()``. When the text ends inside a call
the body reports nothing more: the reader discards the call as cut.

Positions are kept as offsets from the body's first character and reported relative to the
piece being fed (negative: into text held from earlier pieces).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final

from toolstitch.text.bodies import (
    BODIES,
    BODY_VARIANTS,
    VARIANTS_OF,
    CallSink,
    Quiet,
    Steady,
    quiet_of,
)
from toolstitch.text.literals import json_string, typed_value
from toolstitch.text.markers import MarkerScanner, MarkerSet

__all__ = ["VARIANTS", "TaggedBody", "TaggedOptions"]

# Body states.
_BETWEEN, _NAME, _ARGS, _KEY, _VALUE_OPEN, _VALUE, _SKIP, _DONE = range(8)

_NONSPACE: Final = re.compile(r"\S")
#: A tool name: no whitespace and none of the characters of markup or of JSON structure.
_TOOL_NAME: Final = re.compile(r"[^\s<>\"'{}\[\]=]+")
_VALUE_PATTERN: Final = r"(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|(?P<bare>[^\s\"'<>=/]+))"
_FIRST: Final = re.compile(r"\s*" + _VALUE_PATTERN)
_ATTRIBUTE: Final = re.compile(r"\s+(?P<key>[\w:.-]+)\s*=\s*" + _VALUE_PATTERN)

_KEYS: Final = frozenset(
    {
        "close",
        "call",
        "name_end",
        "call_close",
        "param",
        "key_end",
        "value",
        "value_close",
        "attributes",
        "type_attribute",
        "trim_newlines",
        "name_newline",
    }
)

#: The variants a body reports (``CallSink.warn``), with what they mean.
VARIANTS: Final[dict[str, str]] = {
    "missing-call-close": "a call's close tag was missing: the call ended at the body's close "
    "or at the next call's opener",
    "single-quotes": "a name attribute was single-quoted",
    "no-quotes": "a name attribute was not quoted",
    "inline-value": "a value was written without the template's wrapping newlines",
    "no-newline-after-name": "the name was not followed by the template's newline",
    "newline-after-name": "the name was followed by a newline the template does not write",
}


def _marker(options: Mapping[str, Any], key: str, required: bool = False) -> str | None:
    value = options.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"tagged body: option {key!r} is a non-empty marker, got {value!r}")
    return value


class TaggedOptions:
    """A ``tagged`` body's options, checked and compiled into marker sets (see the module
    docstring for each option)."""

    __slots__ = (
        "attributes",
        "call_close",
        "call_open",
        "close",
        "key_end",
        "key_header",
        "lane",
        "name_end",
        "name_header",
        "name_newline",
        "param_open",
        "steady",
        "structure",
        "trim",
        "type_attribute",
        "value",
        "value_close",
        "value_open",
    )

    def __init__(self, options: Mapping[str, Any]) -> None:
        unknown = set(options) - _KEYS
        if unknown:
            raise ValueError(f"tagged body: unknown options {sorted(unknown)}")
        self.close = _marker(options, "close")
        self.call_open = _marker(options, "call")
        self.name_end = _marker(options, "name_end")
        self.call_close = _marker(options, "call_close")
        self.param_open: str = _marker(options, "param", True) or ""
        self.key_end: str = _marker(options, "key_end", True) or ""
        self.value_open = _marker(options, "value")
        self.value_close: str = _marker(options, "value_close", True) or ""
        if self.close is None and self.call_close is None:
            raise ValueError("tagged body: a body ends: give 'close' or 'call_close'")
        self.attributes = bool(options.get("attributes", False))
        self.type_attribute = options.get("type_attribute")
        if self.type_attribute is not None and not isinstance(self.type_attribute, str):
            raise ValueError("tagged body: option 'type_attribute' is an attribute's name")
        self.trim = bool(options.get("trim_newlines", False))
        newline = options.get("name_newline")
        self.name_newline: bool | None = None if newline is None else bool(newline)
        structure = (self.call_open, self.call_close, self.close, self.param_open)
        self.structure = MarkerSet(m for m in (*structure, self.value_open) if m)
        self.value = MarkerSet((self.value_close,))
        # The lane of a raw string value (``TaggedBody.lane``): characters that JSON-escape
        # to themselves and cannot begin the value's close tag.
        first = self.value_close[:1]
        self.lane = re.compile('[^"\\\\\x00-\x1f' + re.escape(first) + "]+")
        self.steady = (
            Steady(first, escapes=False, raw=True, newlines=True, trim=self.trim)
            if first.isascii()
            else None
        )
        ender = self.call_close or self.close or ""
        self.name_header = (
            self._header(self.name_end)
            if self.name_end is not None
            else MarkerSet(("\n", self.param_open, ender))
        )
        self.key_header = self._header(self.key_end)

    def variants(self) -> frozenset[str]:
        """The variants (``VARIANTS``) a body read with these options may report: a format
        whose calls it reads declares them (checked by the tests)."""
        found = set()
        if self.name_newline is not None:
            found.add("no-newline-after-name" if self.name_newline else "newline-after-name")
        if self.attributes:
            found.update(("single-quotes", "no-quotes"))
        if self.call_close is not None or self.call_open is not None:
            found.add("missing-call-close")
        if self.trim:
            found.add("inline-value")
        return frozenset(found)

    def _header(self, end: str) -> MarkerSet:
        """A header's markers: its end, a newline, and what may not stand in it: ``<`` for a
        header that ends at ``>``, else the structure's markers."""
        stops = ("<",) if "<" not in end else self.structure.markers
        return MarkerSet((end, "\n", *stops))


@lru_cache(maxsize=64)
def _compiled(items: tuple[tuple[str, Any], ...]) -> TaggedOptions:
    return TaggedOptions(dict(items))


def _attributes(header: str) -> tuple[str, str, dict[str, str]] | None:
    """A header written as attributes, ``"name" key="value" …`` (the first value is the
    name or key): ``(value, quoting, other attributes)``, quoting ``dq``, ``sq`` or ``bare``;
    ``None`` if the header is not that."""
    first = _FIRST.match(header)
    if first is None:
        return None
    quoting = str(first.lastgroup)
    value = first.group(quoting)
    found: dict[str, str] = {}
    at = first.end()
    while (attribute := _ATTRIBUTE.match(header, at)) is not None:
        kind = str(attribute.lastgroup)
        found[attribute.group("key")] = attribute.group(kind)
        at = attribute.end()
    if header[at:].strip():
        return None
    return value, quoting, found


class TaggedBody:
    """Grammar ``tagged``: one body of an XML-ish format (see the module docstring)."""

    __slots__ = (
        "_attrs",
        "_base",
        "_buffer",
        "_buffered",
        "_failed",
        "_fed",
        "_header_at",
        "_hk",
        "_hn",
        "_lead",
        "_newline",
        "_o",
        "_opened",
        "_params",
        "_pos",
        "_s",
        "_sink",
        "_state",
        "_steps",
        "_typed",
        "_v",
        "_value_at",
        "_warned",
    )

    def __init__(self, sink: CallSink, options: Mapping[str, Any]) -> None:
        self._sink = sink
        o = self._o = _compiled(tuple(sorted(options.items())))
        self._s = MarkerScanner(o.structure)
        self._v = MarkerScanner(o.value)
        self._hn = MarkerScanner(o.name_header)
        self._hk = MarkerScanner(o.key_header)
        self._state = _BETWEEN
        self._opened = o.call_open is not None  # else the body is a call, its name read first
        self._base = self._fed = self._pos = 0
        self._buffer: list[str] = []
        self._buffered = 0
        self._header_at = self._value_at = self._params = 0
        self._attrs: dict[str, str] = {}
        self._failed = self._typed = self._lead = self._newline = False
        self._warned: set[str] = set()
        self._steps: dict[int, Callable[[str], str]] = {
            _BETWEEN: self._between,
            _NAME: self._name,
            _ARGS: self._args,
            _KEY: self._key,
            _VALUE_OPEN: self._value_open,
            _VALUE: self._value,
            _SKIP: self._skip,
        }

    # -- the Body protocol ---------------------------------------------------------------

    def feed(self, text: str) -> int:
        """Read the next piece: -1, or the index just past the body's close."""
        self._base = self._fed
        self._fed += len(text)
        if not self._opened:  # a body that is one call: the reader started it
            self._opened = True
            self._enter(_NAME)
        rest = text
        while rest and self._state != _DONE:
            rest = self._steps[self._state](rest)
        return len(text) - len(rest) if self._state == _DONE else -1

    def close(self) -> None:
        """The text ended inside the body: nothing more to report (the reader discards the
        open call as cut)."""
        self._state = _DONE

    @property
    def lane(self) -> re.Pattern[str] | None:
        """Inside a raw string value, with nothing held (no possible close tag, no last
        newline, the value's first text read): a piece of characters that JSON-escape to
        themselves and cannot begin the close tag is all arguments (``bodies``, the lane)."""
        if (
            self._state != _VALUE
            or self._typed
            or self._failed
            or self._lead
            or self._newline
            or self._v.held
        ):
            return None
        return self._o.lane

    @property
    def steady(self) -> Steady | None:
        return None if self.lane is None else self._o.steady

    @property
    def quiet(self) -> Quiet | None:
        """Between a call's tags (whitespace dropped) and in a name or key (gathered, up to
        the limit): pieces that give nothing (``bodies.Quiet``)."""
        state = self._state
        if not self._opened:  # its first piece enters the name
            return None
        if state in (_BETWEEN, _ARGS, _VALUE_OPEN):
            return quiet_of(self._s, "whitespace", self._sink.limit)
        if state in (_NAME, _KEY):
            scanner = self._hn if state == _NAME else self._hk
            room = self._sink.limit if self._failed else self._sink.limit - self._buffered
            return quiet_of(scanner, "any", max(room, 0))
        if state == _VALUE and self._v.held:  # inside what may be the close tag
            return quiet_of(self._v, "none", 0)
        return None

    def laned(self, piece: str) -> None:
        """A piece went by the lane: it was read."""
        self.skipped(len(piece), False)

    def skipped(self, chars: int, escape: bool, newline: bool = False) -> None:
        """``chars`` characters went by the lane: they were read, a last line break held
        back if ``newline`` (markup if the close tag follows: ``_value_text``)."""
        self._pos += chars
        self._fed += chars
        self._newline = newline

    # -- helpers -------------------------------------------------------------------------

    def _scan(self, scanner: MarkerScanner, rest: str) -> tuple[str, str | None, str]:
        """``scanner.scan(rest)``, ``self._pos`` moved past what it read (a marker found
        starts at ``self._pos - len(marker)``)."""
        certain, marker, after = scanner.scan(rest)
        self._pos += len(rest) - len(after)
        return certain, marker, after

    def _junk(self, certain: str, marker: str | None) -> int | None:
        """Where the first character of ``certain`` (structure text just scanned) that is
        not whitespace stands, if any."""
        junk = _NONSPACE.search(certain)
        if junk is None:
            return None
        end = self._pos - (len(marker) if marker is not None else len(self._s.held))
        return end - len(certain) + junk.start()

    def _warn(self, variant: str) -> None:
        if variant not in self._warned:
            self._warned.add(variant)
            self._sink.warn(variant, VARIANTS[variant])

    def _fail(self, message: str, at: int, expected: str) -> None:
        """The call's markup is not the format's: fail it (once) and skip to its end."""
        if not self._failed:
            self._failed = True
            self._sink.fail(message, at=at - self._base, expected=expected, markup=True)
        self._state = _SKIP

    def _begin(self, at: int) -> None:
        self._sink.start(at - self._base)
        self._params = 0
        self._failed = False

    def _enter(self, state: int) -> None:
        """Enter a header (name or key): its text starts here."""
        self._state = state
        self._header_at = self._pos
        self._buffer = []
        self._buffered = 0

    def _gather(self, text: str, start: int, expected: str) -> None:
        """Buffer header or typed-value text (``start``: where the header or value
        began); past the limit, the call fails there and the rest is read and dropped."""
        if self._failed or not text:
            return
        self._buffered += len(text)
        limit = self._sink.limit
        if self._buffered > limit:
            self._failed = True
            message = f"more than {limit} characters to hold"
            markup = self._state != _VALUE
            self._sink.fail(
                message, at=start + limit - self._base, expected=expected, markup=markup
            )
            return
        self._buffer.append(text)

    def _finish(self) -> None:
        """The call's markup closed it."""
        self._sink.arguments("}" if self._params else "{}")
        self._sink.end()

    def _ended_call(self) -> None:
        """After a call's close: the next call, or the body's end (a body of one call)."""
        self._state = _BETWEEN if self._o.close is not None else _DONE

    def _skip_marker(self, marker: str | None) -> None:
        """A marker read while skipping a failed call: its close, the body's close or the
        next call end the skip."""
        o = self._o
        if marker is None:
            return
        if marker == o.call_close:
            self._ended_call()
        elif marker == o.close:
            self._state = _DONE
        elif marker == o.call_open:
            self._begin(self._pos - len(marker))
            self._enter(_NAME)

    # -- the states ----------------------------------------------------------------------

    def _between(self, rest: str) -> str:
        o = self._o
        certain, marker, rest = self._scan(self._s, rest)
        junk = self._junk(certain, marker)
        if junk is None:
            if marker is None:
                return rest
            if marker == o.call_open:
                self._begin(self._pos - len(marker))
                self._enter(_NAME)
                return rest
            if marker == o.close:
                self._state = _DONE
                return rest
        where = junk if junk is not None else self._pos - len(str(marker))
        self._begin(where)
        self._fail("not a call where a call should be", where, o.call_open or "a call")
        self._skip_marker(marker)
        return rest

    def _name(self, rest: str) -> str:
        o = self._o
        certain, marker, rest = self._scan(self._hn, rest)
        self._gather(certain, self._header_at, o.name_end or "a newline")
        if marker is None:
            return rest
        marker_at = self._pos - len(marker)
        if o.name_end is None:
            self._line_name(marker)
        elif marker == o.name_end:
            self._header_done(_NAME)
        else:
            self._header_fault(marker, marker_at, o.name_end)
        return rest

    def _line_name(self, marker: str) -> None:
        """A name ended by a newline, the first parameter or the call's close (GLM)."""
        o = self._o
        if marker == "\n" and not self._failed and not "".join(self._buffer).strip():
            self._enter(_NAME)  # a newline before the name
            return
        if not self._header_done(_NAME):
            self._skip_marker(marker)
            return
        if o.name_newline is not None and marker in ("\n", o.param_open):
            if o.name_newline and marker != "\n":
                self._warn("no-newline-after-name")
            elif not o.name_newline and marker == "\n":
                self._warn("newline-after-name")
        if marker == o.param_open:
            self._enter(_KEY)
        elif marker == o.close:
            self._finish()
            self._state = _DONE
        elif marker == o.call_close:
            self._finish()
            self._ended_call()

    def _header_fault(self, marker: str, marker_at: int, end: str) -> None:
        """A header hit a newline or a marker before its end."""
        self._fail("a tag that does not close on its line", marker_at, end)
        if marker == "<":
            self._s.scan("<")  # the '<' may open the marker the skip looks for
        elif marker != "\n":
            self._skip_marker(marker)

    def _header_done(self, state: int) -> bool:
        """A name or key header ended: report it (``False``: the call failed)."""
        if self._failed:
            self._state = _SKIP
            return False
        o = self._o
        header = "".join(self._buffer)
        attrs: dict[str, str] = {}
        if o.attributes:
            parsed = _attributes(header)
            if parsed is None:
                self._fail('a tag whose attributes are not name="…"', self._header_at, '"')
                return False
            header, quoting, attrs = parsed
            if state == _NAME and quoting != "dq":
                self._warn("single-quotes" if quoting == "sq" else "no-quotes")
        header = header.strip()
        if state == _NAME:
            if _TOOL_NAME.fullmatch(header) is None:
                self._fail("a call without a tool name", self._header_at, "a tool name")
                return False
            self._sink.name(header)
            self._state = _ARGS
            return True
        if not header:
            self._fail("a parameter without a name", self._header_at, "a parameter name")
            return False
        self._key_done(header, attrs)
        return True

    def _key_done(self, key: str, attrs: dict[str, str]) -> None:
        """A parameter's key: write it, and decide how its value is read."""
        o = self._o
        self._sink.arguments(("," if self._params else "{") + '"' + json_string(key) + '":')
        declared = attrs.get(o.type_attribute) if o.type_attribute else None
        if declared in ("true", "false"):
            self._typed = declared == "false"
        else:
            self._typed = self._sink.typed(key)
        self._params += 1
        if o.value_open is not None:
            self._state = _VALUE_OPEN
        else:
            self._open_value()

    def _open_value(self) -> None:
        self._state = _VALUE
        self._value_at = self._pos
        self._buffer = []
        self._buffered = 0
        self._lead = True
        self._newline = False
        if not self._typed:
            self._sink.arguments('"')

    def _args(self, rest: str) -> str:
        o = self._o
        certain, marker, rest = self._scan(self._s, rest)
        junk = self._junk(certain, marker)
        if junk is not None:
            self._fail("text between parameters", junk, o.param_open)
            self._skip_marker(marker)
        elif marker is None:
            pass
        elif marker == o.param_open:
            self._enter(_KEY)
        elif marker == o.call_close:
            self._finish()
            self._ended_call()
        elif marker == o.close:
            if o.call_close is not None:
                self._warn("missing-call-close")
            self._finish()
            self._state = _DONE
        elif marker == o.call_open:
            self._warn("missing-call-close")
            self._finish()
            self._begin(self._pos - len(marker))
            self._enter(_NAME)
        else:  # a value's opener without its key
            self._fail("a value without its key", self._pos - len(marker), o.param_open)
        return rest

    def _key(self, rest: str) -> str:
        o = self._o
        certain, marker, rest = self._scan(self._hk, rest)
        self._gather(certain, self._header_at, o.key_end)
        if marker is None:
            return rest
        marker_at = self._pos - len(marker)
        if marker == o.key_end:
            self._header_done(_KEY)
        else:
            self._header_fault(marker, marker_at, o.key_end)
        return rest

    def _value_open(self, rest: str) -> str:
        o = self._o
        certain, marker, rest = self._scan(self._s, rest)
        junk = self._junk(certain, marker)
        if junk is None and marker == o.value_open:
            self._open_value()
        elif junk is not None or marker is not None:
            where = junk if junk is not None else self._pos - len(str(marker))
            self._fail("a key without its value", where, str(o.value_open))
            self._skip_marker(marker)
        return rest

    def _value(self, rest: str) -> str:
        certain, marker, rest = self._scan(self._v, rest)
        if certain:
            self._value_text(certain)
        if marker is not None:
            self._value_done()
        return rest

    def _value_text(self, text: str) -> None:
        if self._lead:  # the value's first text: it starts at self._value_at
            self._lead = False
            if self._o.trim:
                if text[0] == "\n":
                    text = text[1:]
                    self._value_at += 1
                else:
                    self._warn("inline-value")
        if not text:
            return
        if self._typed:
            self._gather(text, self._value_at, self._o.value_close)
            return
        if self._o.trim:  # hold a last newline: it is markup if the close tag follows
            if self._newline:
                text = "\n" + text
            self._newline = text[-1] == "\n"
            if self._newline:
                text = text[:-1]
        if text:
            self._sink.arguments(json_string(text))

    def _value_done(self) -> None:
        """The value's close tag: write its end (the template's last newline dropped)."""
        if self._failed:
            self._state = _SKIP
            return
        if self._lead and self._o.trim:
            self._warn("inline-value")  # an empty value, no newlines either
        if self._typed:
            raw = "".join(self._buffer)
            if self._o.trim and raw.endswith("\n"):
                raw = raw[:-1]
            self._sink.arguments(typed_value(raw))
        else:
            self._sink.arguments('"')
        self._state = _ARGS

    def _skip(self, rest: str) -> str:
        _, marker, rest = self._scan(self._s, rest)
        self._skip_marker(marker)
        return rest


BODIES["tagged"] = TaggedBody
BODY_VARIANTS["tagged"] = VARIANTS


def _tagged_variants(options: Mapping[str, Any]) -> frozenset[str]:
    return TaggedOptions(options).variants()


VARIANTS_OF["tagged"] = _tagged_variants
