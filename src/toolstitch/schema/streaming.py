"""A tool's JSON Schema, checked on the tokenizer's events as the arguments stream.

Theory of operation
-------------------
``ToolSchema`` compiles a tool's schema once: the draft (``jsonschema.validators.
validator_for``), a validator for the final check, and, lazily, one ``_Node`` per schema
object reached, holding the keywords of the streamed subset in ready-to-use form. The
conjunction of schemas that applies to one value (``allOf`` members and local ``$ref``
targets flattened in) is a tuple of nodes, cached per schema object.

``StreamingSchemaCheck`` is fed one call's event batches (``json.tokenizer.JSONEventBatch``) and
keeps a stack of frames, one per open object or array that some schema constrains; a
container no schema constrains is skipped with a depth counter and costs one comparison per
event. Each keyword of the subset is checked at the earliest event that makes its violation
certain (assuming the text goes on to be valid JSON, which the tokenizer enforces):

* as a value starts (``start_map``, ``start_array``, ``string_start`` value, ``scalar_start``,
  or a scalar
  event): ``type``, the false schema, ``enum`` / ``const`` when no allowed value is of that
  kind, ``items: false`` / ``additionalItems: false`` for an element past the allowed ones,
  ``maxItems`` for the element that passes it;
* as a string arrives: ``maxLength`` (decoded characters so far, an unfinished escape counting
  as one) and ``enum`` / ``const`` (the text so far is no allowed string's beginning);
* as a key arrives: ``additionalProperties: false`` without ``patternProperties`` (the name
  so far is no declared property's beginning), then at the complete key
  (``additionalProperties: false`` with ``patternProperties``, ``maxProperties``);
* as a scalar completes: ``enum``, ``const``, ``minLength``, ``maxLength``, ``minimum``,
  ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``;
* as a container closes: ``required``, ``minProperties``, ``minItems``.

Numbers are compared as ``json.loads`` gives them (``int``, or ``float`` for the rest), and
types are decided by the draft's own ``TYPE_CHECKER``, so that the streaming check agrees
with the final one (``1.0`` is an integer from draft 6 on). Everything else (``anyOf``,
``oneOf``, ``not``, ``if``, ``pattern``, ``format``, ``multipleOf``, ``uniqueItems``,
``contains``, ``dependent*``, ``unevaluated*``, ``propertyNames``, remote or anchor
``$ref``...) is left to the final check, which runs ``jsonschema`` on the complete value.
Draft 3 schemas get the final check only.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Final
from urllib.parse import unquote

from toolstitch.json.lexicon import StringDecoder
from toolstitch.json.pointer import pointer_escape, pointer_segments

__all__ = [
    "StreamingSchemaCheck",
    "ToolSchema",
    "Violation",
    "final_check",
]


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken schema keyword.

    ``path`` is a JSON Pointer (RFC 6901) to the offending value, or, with ``at_key``, to the
    offending key (``additionalProperties``): for a key refused while still arriving, the
    pointer ends with the name so far. For ``required``, ``minProperties`` / ``maxProperties``
    and ``minItems`` / ``maxItems`` it is the object's or array's own pointer.

    ``occurrences`` (a streamed violation's) says, per segment of ``path``, which of the
    equal keys of its object the path goes through (0: the first; 0 for an index): with
    duplicate keys, the one whose value (or the key itself) violates, not the last one in the
    text (``json.pointer.locate_pointer``). Empty for the final check's, which checks the
    parsed value, where the last duplicate wins. Where it is, not what: not compared.
    """

    path: str
    keyword: str
    message: str
    at_key: bool = False
    occurrences: tuple[int, ...] = field(default=(), compare=False)


_STREAMED: Final = frozenset(
    {
        "type",
        "enum",
        "const",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "properties",
        "patternProperties",
        "additionalProperties",
        "required",
        "minProperties",
        "maxProperties",
        "items",
        "prefixItems",
        "additionalItems",
        "minItems",
        "maxItems",
    }
)
_KIND_SAMPLE: Final[dict[str, object]] = {
    "object": {},
    "array": [],
    "string": "",
    # A number still arriving may yet be an integer or not: 0 passes both types.
    "number": 0,
    "boolean": True,
    "null": None,
}
_LEGACY_REF: Final = frozenset({"draft3", "draft4", "draft6", "draft7"})
_TUPLE_ITEMS: Final = _LEGACY_REF | {"draft2019-09"}


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unbool(value: object) -> object:
    # jsonschema's equality: True and 1 differ, 1 and 1.0 do not.
    if value is True:
        return ("bool", True)
    if value is False:
        return ("bool", False)
    return value


def json_equal(one: object, two: object) -> bool:
    """Equality as JSON Schema means it for ``enum`` and ``const`` (as jsonschema does)."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(json_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(json_equal(one[k], two[k]) for k in one)
    return _unbool(one) == _unbool(two)


def _kind_of(value: object) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float, Decimal)):
        return "number"
    return "scalar"


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number_or_none(value: object) -> int | float | None:
    return value if _is_number(value) else None  # type: ignore[return-value]


def _count_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _draft_name(cls: Any) -> str:
    meta = getattr(cls, "META_SCHEMA", {}).get("$schema", "")
    for name in ("draft-03", "draft-04", "draft-06", "draft-07"):
        if name in meta:
            return "draft" + name[-1]
    if "2019-09" in meta:
        return "draft2019-09"
    return "draft2020-12"


class _Node:
    """The streamed keywords of one schema object, ready to use."""

    __slots__ = (
        "additional",
        "consts",
        "enum",
        "enum_strings",
        "excl_max",
        "excl_min",
        "false",
        "items_keyword",
        "key_names",
        "max_items",
        "max_length",
        "max_props",
        "maximum",
        "min_items",
        "min_length",
        "min_props",
        "minimum",
        "pattern",
        "patterns",
        "prefix",
        "properties",
        "required",
        "rest",
        "types",
        "value_prefixes",
    )

    def __init__(self, schema: Mapping[str, Any] | None, draft: str) -> None:
        self.false = schema is None
        s: Mapping[str, Any] = schema or {}
        self._init_values(s)
        self._init_numbers(s, draft)
        self._init_objects(s, draft)
        self._init_arrays(s, draft)

    def _init_values(self, s: Mapping[str, Any]) -> None:
        """``type``, ``enum``, ``const``, ``minLength`` and ``maxLength``."""
        types = s.get("type")
        if isinstance(types, str):
            types = [types]
        self.types: tuple[str, ...] | None = None
        if isinstance(types, list) and all(isinstance(t, str) for t in types):
            self.types = tuple(types)
        enum = s.get("enum")
        self.enum: tuple[object, ...] | None = tuple(enum) if isinstance(enum, list) else None
        self.consts: tuple[object, ...] | None = (s["const"],) if "const" in s else None
        strings = [m for m in (self.enum or ()) if isinstance(m, str)]
        self.enum_strings = tuple(sorted(strings))
        # What a string value must be a beginning of, while it arrives: (keyword, sorted).
        prefixes: list[tuple[str, tuple[str, ...]]] = []
        if strings:
            prefixes.append(("enum", self.enum_strings))
        if self.consts is not None and isinstance(self.consts[0], str):
            prefixes.append(("const", (self.consts[0],)))
        self.value_prefixes = tuple(prefixes)
        self.min_length = _count_or_none(s.get("minLength"))
        self.max_length = _count_or_none(s.get("maxLength"))

    def _init_numbers(self, s: Mapping[str, Any], draft: str) -> None:
        """``minimum``, ``maximum``, ``exclusiveMinimum`` and ``exclusiveMaximum``."""
        self.minimum = _number_or_none(s.get("minimum"))
        self.maximum = _number_or_none(s.get("maximum"))
        self.excl_min = _number_or_none(s.get("exclusiveMinimum"))
        self.excl_max = _number_or_none(s.get("exclusiveMaximum"))
        if draft == "draft4":
            # Draft 4: a boolean modifying minimum / maximum.
            self.excl_min = self.minimum if s.get("exclusiveMinimum") is True else None
            self.excl_max = self.maximum if s.get("exclusiveMaximum") is True else None
            if self.excl_min is not None:
                self.minimum = None
            if self.excl_max is not None:
                self.maximum = None

    def _init_objects(self, s: Mapping[str, Any], draft: str) -> None:
        """``properties``, ``patternProperties``, ``additionalProperties``, ``required``,
        ``minProperties`` and ``maxProperties``."""
        properties = s.get("properties")
        self.properties: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        patterns = s.get("patternProperties")
        self.pattern: re.Pattern[str] | None = None
        self.patterns: tuple[tuple[re.Pattern[str], object], ...] = ()
        has_patterns = isinstance(patterns, Mapping) and bool(patterns)
        unknown_patterns = False
        if has_patterns:
            assert isinstance(patterns, Mapping)
            try:
                # jsonschema decides "additional" with re.search on the joined patterns, and
                # applies each pattern's schema with re.search on that pattern.
                self.pattern = re.compile("|".join(patterns))
                self.patterns = tuple((re.compile(p), v) for p, v in patterns.items())
            except re.error:
                unknown_patterns = True
                self.pattern = None
                self.patterns = ()
        additional = s.get("additionalProperties")
        self.additional: object = additional if isinstance(additional, (Mapping, bool)) else None
        if unknown_patterns and self.additional is not None:
            self.additional = None  # cannot tell which keys are additional: leave it to the end
        self.key_names: tuple[str, ...] | None = None
        if self.additional is False and not has_patterns:
            self.key_names = tuple(sorted(self.properties))
        required = s.get("required")
        self.required: tuple[str, ...] = ()
        if draft != "draft3" and isinstance(required, list):
            self.required = tuple(r for r in required if isinstance(r, str))
        self.min_props = _count_or_none(s.get("minProperties"))
        self.max_props = _count_or_none(s.get("maxProperties"))

    def _init_arrays(self, s: Mapping[str, Any], draft: str) -> None:
        """``items``, ``prefixItems``, ``additionalItems``, ``minItems`` and ``maxItems``."""
        self.min_items = _count_or_none(s.get("minItems"))
        self.max_items = _count_or_none(s.get("maxItems"))
        items = s.get("items")
        self.prefix: tuple[object, ...] = ()
        self.rest: object = None
        # The keyword reported (once, at the first extra element) when ``rest`` is false;
        # None when a false ``rest`` is an ordinary false schema for every element.
        self.items_keyword: str | None = "items"
        if draft in _TUPLE_ITEMS:
            additional_items = s.get("additionalItems")
            if isinstance(items, (Mapping, bool)):
                self.rest = items
                self.items_keyword = None
            else:
                if isinstance(items, list):
                    self.prefix = tuple(items)
                if isinstance(additional_items, (Mapping, bool)):
                    self.rest = additional_items
                self.items_keyword = "additionalItems"
        else:
            prefix = s.get("prefixItems")
            if isinstance(prefix, list):
                self.prefix = tuple(prefix)
            if isinstance(items, (Mapping, bool)):
                self.rest = items

    def key_schemas(self, key: str) -> tuple[list[object], bool]:
        """The schemas the value of ``key`` must match, and whether the key is additional."""
        found: list[object] = []
        known = False
        if key in self.properties:
            found.append(self.properties[key])
            known = True
        if self.pattern is not None and self.pattern.search(key):
            known = True
            found.extend(schema for pattern, schema in self.patterns if pattern.search(key))
        return found, not known


class ToolSchema:
    """One tool's JSON Schema, compiled once and shared by every call of the tool."""

    __slots__ = (
        "_draft",
        "_expanded",
        "_legacy_ref",
        "_nodes",
        "_refs_ok",
        "_type_checker",
        "_validator",
        "schema",
    )

    def __init__(self, schema: Mapping[str, Any] | bool) -> None:
        from jsonschema.validators import validator_for

        if schema is True:
            schema = {}
        elif schema is False:
            schema = {"not": {}}
        self.schema: Mapping[str, Any] = schema
        cls = validator_for(schema)
        self._validator: Any = cls(schema)
        self._type_checker = cls.TYPE_CHECKER
        self._draft = _draft_name(cls)
        self._legacy_ref = self._draft in _LEGACY_REF
        # An embedded resource ($id below the root) changes what "#/..." means there; rather
        # than resolve it wrongly, local references are then left to the final check.
        self._refs_ok = not _has_nested_id(schema, root=True)
        self._nodes: dict[int, _Node] = {}
        self._expanded: dict[int, tuple[_Node, ...]] = {}

    @property
    def draft(self) -> str:
        """``"draft4"`` … ``"draft2020-12"``, as ``jsonschema`` chose it from ``$schema``."""
        return self._draft

    @property
    def streamed(self) -> bool:
        """Whether the streaming check applies (every draft but draft 3)."""
        return self._draft != "draft3"

    def has_type(self, value: object, types: tuple[str, ...]) -> bool:
        """Whether ``value`` is of one of ``types`` (True when a type name is unknown)."""
        from jsonschema.exceptions import UndefinedTypeCheck

        checker = self._type_checker
        try:
            return any(checker.is_type(value, name) for name in types)
        except UndefinedTypeCheck:
            return True

    # -- expansion ----------------------------------------------------------------------------

    def nodes(self, schemas: Iterable[object]) -> tuple[_Node, ...]:
        """The conjunction of nodes that applies to a value matching all of ``schemas``."""
        out: list[_Node] = []
        for schema in schemas:
            if schema is True or schema is None:
                continue
            key = id(schema)
            cached = self._expanded.get(key)
            if cached is None:
                found: list[_Node] = []
                self._expand(schema, found, set())
                cached = tuple(dict.fromkeys(found))
                self._expanded[key] = cached
            out.extend(cached)
        if len(out) > 1:
            return tuple(dict.fromkeys(out))
        return tuple(out)

    def _node(self, schema: Mapping[str, Any] | None) -> _Node:
        key = id(schema)
        node = self._nodes.get(key)
        if node is None:
            node = self._nodes[key] = _Node(schema, self._draft)
        return node

    def _expand(self, schema: object, out: list[_Node], seen: set[int]) -> None:
        if schema is False:
            out.append(self._node(None))
            return
        if not isinstance(schema, Mapping) or id(schema) in seen:
            return
        seen.add(id(schema))
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = self._resolve(ref)
            if target is not None:
                self._expand(target, out, seen)
            if self._legacy_ref:
                return  # draft 7 and earlier: $ref's siblings are ignored
        if not _STREAMED.isdisjoint(schema):
            out.append(self._node(schema))
        all_of = schema.get("allOf")
        if isinstance(all_of, list):
            for member in all_of:
                self._expand(member, out, seen)

    def _resolve(self, ref: str) -> object:
        if not self._refs_ok or not ref.startswith("#"):
            return None
        fragment = unquote(ref[1:])
        if fragment and not fragment.startswith("/"):
            return None  # an anchor: left to the final check
        target: object = self.schema
        for token in pointer_segments(fragment):
            if isinstance(target, Mapping) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                return None
        return target

    def final_check(self, value: object) -> list[Violation]:
        """Validate the complete value (as ``json.loads`` gives it) with ``jsonschema``."""
        out: list[Violation] = []
        for error in self._validator.iter_errors(value):
            out.extend(_from_error(error))
        return out

    def stream(self) -> StreamingSchemaCheck:
        return StreamingSchemaCheck(self)


def _has_nested_id(schema: object, *, root: bool) -> bool:
    stack: list[tuple[object, bool]] = [(schema, root)]
    while stack:
        item, is_root = stack.pop()
        if isinstance(item, Mapping):
            if not is_root and isinstance(item.get("$id", item.get("id")), str):
                return True
            stack.extend((v, False) for k, v in item.items() if k not in ("enum", "const"))
        elif isinstance(item, list):
            stack.extend((v, False) for v in item)
    return False


def _pointer(segments: Iterable[object]) -> str:
    return "".join("/" + pointer_escape(str(s)) for s in segments)


# -- messages (shared by the streaming and the final check) -------------------------------------


def _type_message(kind_or_value: object, types: tuple[str, ...], *, started: bool) -> str:
    expected = " or ".join(repr(t) for t in types)
    if started:
        return f"{kind_or_value} is not of type {expected}"
    return f"{_short(kind_or_value)} is not of type {expected}"


def _enum_message(members: tuple[object, ...], what: str, keyword: str) -> str:
    if keyword == "const":
        return f"{what} is not {_short(members[0])}"
    listed = ", ".join(_short(m, 30) for m in members[:10])
    if len(members) > 10:
        listed += f" … and {len(members) - 10} more"
    return f"{what} is not one of {listed}"


def _from_error(error: Any) -> list[Violation]:
    path = _pointer(error.absolute_path)
    keyword = error.validator if isinstance(error.validator, str) else "false"
    instance = error.instance
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    false_value = error.validator_value is False
    if keyword == "additionalProperties" and false_value and isinstance(instance, dict):
        # One violation per unexpected key, at the key, as the streaming check reports them.
        properties = schema.get("properties", {})
        patterns = "|".join(schema.get("patternProperties", {}))
        return [
            Violation(
                path + "/" + pointer_escape(key),
                keyword,
                f"property {key!r} is not allowed",
                at_key=True,
            )
            for key in instance
            if key not in properties and not (patterns and re.search(patterns, key))
        ]
    if keyword in ("items", "additionalItems") and false_value and isinstance(instance, list):
        # At the first element past the allowed ones.
        if keyword == "items":
            prefix = len(schema.get("prefixItems", []))
        else:
            items = schema.get("items", [])
            prefix = len(items) if isinstance(items, list) else 0
        return [Violation(f"{path}/{prefix}", keyword, _extra_item_message(prefix))]
    message = error.message
    if len(message) > 300:
        message = message[:299] + "…"
    return [Violation(path, keyword, message)]


def _extra_item_message(allowed: int) -> str:
    return f"no item is allowed past the first {allowed}"


# -- streaming --------------------------------------------------------------------------------


class _Frame:
    __slots__ = ("child", "count", "is_object", "key", "keys", "nodes", "occurrence", "segment")

    def __init__(
        self, nodes: tuple[_Node, ...], is_object: bool, segment: object, occurrence: int
    ) -> None:
        self.nodes = nodes
        self.is_object = is_object
        self.segment = segment  # this container's key or index in its parent (None: root)
        self.occurrence = occurrence  # which of the parent's keys equal to ``segment`` (0: first)
        self.count = 0  # elements started (arrays)
        self.keys: dict[str, int] = {}  # distinct keys, with how often each came (objects)
        self.key: str = ""  # the latest key (objects)
        self.child: tuple[_Node, ...] = ()  # nodes for the latest key's value


class _OpenString:
    """A string value or key still arriving, with what its checks need."""

    __slots__ = ("cap", "chars", "decode", "decoder", "done", "nodes", "path", "prefixes", "so_far")

    def __init__(
        self,
        nodes: tuple[_Node, ...],
        path: str,
        prefixes: list[tuple[_Node, str, tuple[str, ...]]],
    ) -> None:
        self.nodes = nodes
        self.path = path
        # (node, keyword, sorted allowed texts): the text must stay a beginning of one.
        self.prefixes = prefixes
        self.cap = max((len(a) for _, _, allowed in prefixes for a in allowed), default=0)
        self.decode = bool(prefixes) or any(n.max_length is not None for n in nodes)
        self.decoder = StringDecoder()
        self.chars = 0  # decoded characters so far
        self.so_far = ""  # decoded text so far, kept while a prefix check may need it
        self.done: set[tuple[int, str]] = set()  # (node id, keyword) already reported


def _what(kind: str) -> str:
    return {
        "object": "an object",
        "array": "an array",
        "string": "a string",
        "number": "a number",
        "boolean": "a boolean",
        "null": "null",
    }[kind]


# Inside a container no schema constrains: how each event changes the depth.
_SKIP_STEP: Final = {"start_map": 1, "start_array": 1, "end_map": -1, "end_array": -1}


class StreamingSchemaCheck:
    """Checks one call's arguments against its tool's schema as the events arrive.

    ``feed(batch)`` returns the violations that the batch made certain (empty if none); each
    is reported once. ``violations`` collects them all.
    """

    __slots__ = (
        "_frames",
        "_in_string",
        "_key",
        "_on",
        "_scalar",
        "_skip",
        "_string",
        "_tool",
        "violations",
    )

    def __init__(self, schema: ToolSchema | Mapping[str, Any] | bool) -> None:
        self._tool = schema if isinstance(schema, ToolSchema) else ToolSchema(schema)
        self._on = self._tool.streamed
        self._frames: list[_Frame] = []
        self._skip = 0  # depth inside a container no schema constrains
        self._in_string = False  # a string value is open
        self._string: _OpenString | None = None  # the open string value, if checked
        self._key: _OpenString | None = None  # the open key, if checked
        # A number or literal that started in an earlier fragment: its nodes, pointer, kind.
        self._scalar: tuple[tuple[_Node, ...], str, str] | None = None
        #: Every violation reported so far.
        self.violations: list[Violation] = []

    def feed(self, batch: Iterable[tuple[str, Any]]) -> list[Violation]:
        if not self._on:
            return []
        out: list[Violation] = []
        for event, data in batch:
            mark = len(out)
            if self._skip:
                self._skip += _SKIP_STEP.get(event, 0)
            elif event == "string_part":
                state = self._string if self._in_string else self._key
                if state is not None and state.decode:
                    self._string_part(state, data, out)
            elif event == "map_key":
                self._map_key(self._frames[-1], data, out)
                self._key = None
            elif event == "string":
                self._string_done(data, out)
            elif event == "string_start":
                self._string_start(data, out)
            elif event == "start_map" or event == "start_array":
                self._container_start(event == "start_map", out)
            elif event == "end_map" or event == "end_array":
                self._close(self._frames.pop(), out)
            elif event == "scalar_start":
                # A number or literal that will complete in a later fragment: its kind is
                # certain now, its value later.
                self._scalar = (*self._value_start(data, None, out), data)
            else:
                self._scalar_done(float(data) if type(data) is Decimal else data, out)
            if len(out) > mark:
                self._number(out, mark, event == "string_part" and not self._in_string)
        if out:
            out = list(dict.fromkeys(out))
            self.violations.extend(out)
        return out

    def _string_done(self, value: str, out: list[Violation]) -> None:
        """A string value completed (it was open, or it arrived whole)."""
        if self._in_string:
            self._in_string = False
            if self._string is not None:
                self._string_end(self._string, value, out)
                self._string = None
            return
        nodes, path = self._value_start("string", value, out)
        if nodes:
            self._string_end(_OpenString(nodes, path, []), value, out)

    def _string_start(self, kind: str, out: list[Violation]) -> None:
        """A key or a string value opened and stays open past its fragment."""
        if kind == "key":
            top = self._frames[-1]
            prefixes = [
                (n, "additionalProperties", n.key_names)
                for n in top.nodes
                if n.key_names is not None
            ]
            self._key = _OpenString((), self._path(), prefixes)
            return
        self._in_string = True
        nodes, path = self._value_start("string", "", out)
        if nodes:
            prefixes = [(n, k, a) for n in nodes for k, a in n.value_prefixes]
            self._string = _OpenString(nodes, path, prefixes)

    def _container_start(self, is_object: bool, out: list[Violation]) -> None:
        segment = self._segment()
        occurrence = self._occurrence()
        nodes, _ = self._value_start("object" if is_object else "array", None, out)
        if nodes or not self._frames:
            self._frames.append(_Frame(nodes, is_object, segment, occurrence))
        else:
            self._skip = 1

    def _scalar_done(self, value: object, out: list[Violation]) -> None:
        """A number or literal completed."""
        started = self._scalar
        if started is None:
            self._value_start("scalar", value, out)
        else:
            self._scalar = None
            self._scalar_end(started, value, out)

    # -- paths ---------------------------------------------------------------------------------

    def _path(self) -> str:
        """The pointer of the innermost open container."""
        return "".join(
            "/" + pointer_escape(str(f.segment)) for f in self._frames if f.segment is not None
        )

    def _segment(self) -> object:
        """The key or index of the value starting now in the innermost container."""
        if not self._frames:
            return None
        top = self._frames[-1]
        return top.key if top.is_object else top.count

    def _occurrence(self) -> int:
        """Which of its object's equal keys the value starting (or just ended) is under."""
        if not self._frames:
            return 0
        top = self._frames[-1]
        return top.keys.get(top.key, 1) - 1 if top.is_object else 0

    def _number(self, out: list[Violation], mark: int, open_key: bool) -> None:
        """Give the violations ``out[mark:]``, just found, the occurrences of their path (see
        ``Violation``): the open containers', then the current value's (or, for a key still
        arriving, how many equal keys came before it)."""
        occurrences = [f.occurrence for f in self._frames if f.segment is not None]
        depth = len(occurrences)
        for k in range(mark, len(out)):
            violation = out[k]
            segments = violation.path.count("/")
            if segments > depth:
                last = self._occurrence()
                if open_key and violation.at_key:
                    last = self._frames[-1].keys.get(pointer_segments(violation.path)[-1], 0)
                numbered = (*occurrences, last)
            else:
                numbered = tuple(occurrences[:segments])
            out[k] = replace(violation, occurrences=numbered)

    # -- values --------------------------------------------------------------------------------

    def _value_start(
        self, kind: str, value: object, out: list[Violation]
    ) -> tuple[tuple[_Node, ...], str]:
        """Check a value as it starts; return its nodes and its pointer."""
        tool = self._tool
        frames = self._frames
        if not frames:
            nodes = tool.nodes((tool.schema,))
            path = ""
        else:
            top = frames[-1]
            if top.is_object:
                nodes = top.child
                if not nodes:
                    return (), ""
                path = self._path() + "/" + pointer_escape(top.key)
            else:
                index = top.count
                top.count = index + 1
                if not top.nodes:
                    return (), ""
                base = self._path()
                path = base + "/" + str(index)
                nodes = self._item_nodes(top, index, base, path, out)
                if not nodes:
                    return (), ""
        for node in nodes:
            if node.false:
                out.append(Violation(path, "false", "no value is allowed here (false schema)"))
                continue
            self._check_kind(node, kind, value, path, out)
            if kind == "scalar":
                self._check_scalar(node, value, path, out)
        return nodes, path

    def _item_nodes(
        self, frame: _Frame, index: int, base: str, path: str, out: list[Violation]
    ) -> tuple[_Node, ...]:
        schemas: list[object] = []
        for node in frame.nodes:
            if node.max_items is not None and index == node.max_items:
                out.append(
                    Violation(base, "maxItems", f"the array has more than {node.max_items} items")
                )
            if index < len(node.prefix):
                schemas.append(node.prefix[index])
            elif node.rest is False and node.items_keyword is not None:
                if index == len(node.prefix):
                    message = _extra_item_message(len(node.prefix))
                    out.append(Violation(path, node.items_keyword, message))
            elif node.rest is not None:
                schemas.append(node.rest)
        return self._tool.nodes(schemas) if schemas else ()

    def _scalar_end(
        self,
        started: tuple[tuple[_Node, ...], str, str],
        value: object,
        out: list[Violation],
    ) -> None:
        """The value of a scalar whose kind was checked when it started."""
        nodes, path, kind = started
        for node in nodes:
            if node.false:
                continue
            types = node.types
            if (
                types is not None
                and self._tool.has_type(_KIND_SAMPLE[kind], types)
                and not self._tool.has_type(value, types)
            ):
                # Passed at the start (a number), fails now (not an integer).
                out.append(Violation(path, "type", _type_message(value, types, started=False)))
            self._check_scalar(node, value, path, out)

    def _check_kind(
        self, node: _Node, kind: str, value: object, path: str, out: list[Violation]
    ) -> None:
        types = node.types
        if types is not None:
            sample = value if kind == "scalar" else _KIND_SAMPLE[kind]
            if not self._tool.has_type(sample, types):
                if kind == "scalar":
                    message = _type_message(value, types, started=False)
                else:
                    message = _type_message(_what(kind), types, started=True)
                out.append(Violation(path, "type", message))
        if kind == "scalar":
            return
        for keyword, members in (("enum", node.enum), ("const", node.consts)):
            if members is not None and not any(_kind_of(m) == kind for m in members):
                out.append(Violation(path, keyword, _enum_message(members, _what(kind), keyword)))

    def _check_scalar(self, node: _Node, value: object, path: str, out: list[Violation]) -> None:
        for keyword, members in (("enum", node.enum), ("const", node.consts)):
            if members is not None and not any(json_equal(value, m) for m in members):
                out.append(Violation(path, keyword, _enum_message(members, _short(value), keyword)))
        if not _is_number(value):
            return
        number: Any = value
        shown = _short(value)
        if node.minimum is not None and number < node.minimum:
            out.append(Violation(path, "minimum", f"{shown} is less than {node.minimum!r}"))
        if node.maximum is not None and number > node.maximum:
            out.append(Violation(path, "maximum", f"{shown} is more than {node.maximum!r}"))
        draft4 = self._tool.draft == "draft4"
        if node.excl_min is not None and number <= node.excl_min:
            keyword = "minimum" if draft4 else "exclusiveMinimum"
            out.append(Violation(path, keyword, f"{shown} is not more than {node.excl_min!r}"))
        if node.excl_max is not None and number >= node.excl_max:
            keyword = "maximum" if draft4 else "exclusiveMaximum"
            out.append(Violation(path, keyword, f"{shown} is not less than {node.excl_max!r}"))

    # -- strings and keys ------------------------------------------------------------------------

    def _string_part(self, state: _OpenString, raw: str, out: list[Violation]) -> None:
        piece = state.decoder.push(raw)
        state.chars += len(piece)
        done = state.done
        if state.nodes:
            # An unfinished escape at the end will make at least one more character.
            length = state.chars + (1 if state.decoder.holding else 0)
            for node in state.nodes:
                limit = node.max_length
                if limit is not None and length > limit and (id(node), "maxLength") not in done:
                    done.add((id(node), "maxLength"))
                    message = f"the string is longer than {limit} characters"
                    out.append(Violation(state.path, "maxLength", message))
        if not state.prefixes:
            return
        if len(state.so_far) <= state.cap:
            state.so_far += piece
        so_far = state.so_far
        for node, keyword, allowed in state.prefixes:
            if (id(node), keyword) in done:
                continue
            at = bisect.bisect_left(allowed, so_far)
            if at < len(allowed) and allowed[at].startswith(so_far):
                continue
            done.add((id(node), keyword))
            if keyword == "additionalProperties":
                names = ", ".join(repr(a) for a in allowed[:20])
                message = f"no allowed property name starts with {_short(so_far)}" + (
                    f" (allowed: {names})" if names else " (no property is allowed)"
                )
                out.append(
                    Violation(state.path + "/" + pointer_escape(so_far), keyword, message, True)
                )
            else:
                members = node.enum if keyword == "enum" else node.consts
                assert members is not None
                what = f"a string starting {_short(so_far)}"
                out.append(Violation(state.path, keyword, _enum_message(members, what, keyword)))

    def _string_end(self, state: _OpenString, value: str, out: list[Violation]) -> None:
        length = len(value)
        done = state.done
        for node in state.nodes:
            if node.false:
                continue
            limit = node.max_length
            if limit is not None and length > limit and (id(node), "maxLength") not in done:
                message = f"the string is longer than {limit} characters"
                out.append(Violation(state.path, "maxLength", message))
            if node.min_length is not None and length < node.min_length:
                message = f"the string is shorter than {node.min_length} characters"
                out.append(Violation(state.path, "minLength", message))
            for keyword, members in (("enum", node.enum), ("const", node.consts)):
                if members is None or (id(node), keyword) in done:
                    continue
                if not any(_kind_of(m) == "string" for m in members):
                    continue  # reported as the string started
                if not any(json_equal(value, m) for m in members):
                    message = _enum_message(members, _short(value), keyword)
                    out.append(Violation(state.path, keyword, message))

    # -- objects and arrays ----------------------------------------------------------------------

    def _map_key(self, frame: _Frame, key: str, out: list[Violation]) -> None:
        frame.key = key
        if not frame.nodes:
            frame.child = ()
            return
        refused = self._key.done if self._key is not None else set()
        schemas: list[object] = []
        seen = frame.keys.get(key, 0)
        frame.keys[key] = seen + 1
        new = not seen
        path: str | None = None
        for node in frame.nodes:
            found, additional = node.key_schemas(key)
            schemas.extend(found)
            if additional:
                if node.additional is False:
                    if (id(node), "additionalProperties") not in refused:
                        path = self._path() if path is None else path
                        message = f"property {key!r} is not allowed"
                        pointer = path + "/" + pointer_escape(key)
                        out.append(Violation(pointer, "additionalProperties", message, True))
                elif node.additional is not None and node.additional is not True:
                    schemas.append(node.additional)
            if new and node.max_props is not None and len(frame.keys) == node.max_props + 1:
                path = self._path() if path is None else path
                message = f"the object has more than {node.max_props} properties"
                out.append(Violation(path, "maxProperties", message))
        frame.child = self._tool.nodes(schemas) if schemas else ()

    def _close(self, frame: _Frame, out: list[Violation]) -> None:
        if not frame.nodes:
            return
        # The frame was just popped: its pointer is the remaining frames' plus its segment.
        path = self._path()
        if frame.segment is not None:
            path += "/" + pointer_escape(str(frame.segment))
        for node in frame.nodes:
            if frame.is_object:
                for name in node.required:
                    if name not in frame.keys:
                        out.append(Violation(path, "required", f"{name!r} is a required property"))
                if node.min_props is not None and len(frame.keys) < node.min_props:
                    message = f"the object has fewer than {node.min_props} properties"
                    out.append(Violation(path, "minProperties", message))
            elif node.min_items is not None and frame.count < node.min_items:
                message = f"the array has fewer than {node.min_items} items"
                out.append(Violation(path, "minItems", message))


def final_check(schema: ToolSchema | Mapping[str, Any] | bool, value: object) -> list[Violation]:
    """Validate a complete value with ``jsonschema`` (the schema's draft, default 2020-12)."""
    tool = schema if isinstance(schema, ToolSchema) else ToolSchema(schema)
    return tool.final_check(value)
