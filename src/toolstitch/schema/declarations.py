"""Declared tools: their names and JSON Schemas, from any provider's tool list.

``normalize_tools`` reads the ``tools`` the caller gives the provider (OpenAI Chat or
Responses, Anthropic, Gemini) or a plain mapping name → schema, and returns one mapping name
→ JSON Schema. ``ToolNames`` answers, for a name still arriving, whether it can still become a
declared name, so that an unknown or misspelled tool is refused at the delta that makes it
impossible.
"""

from __future__ import annotations

import bisect
import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from toolstitch.vocab.errors import UnknownTool

__all__ = ["ToolNames", "normalize_tools"]

_GEMINI_WRAPPERS: Final = ("functionDeclarations", "function_declarations")
# Gemini's ``parameters`` is an OpenAPI 3.0 Schema subset: upper-case type names, ``nullable``,
# 64-bit integers written as strings, snake_case keys in the SDK's dumps.
_GEMINI_KEYS: Final = {
    "any_of": "anyOf",
    "max_items": "maxItems",
    "min_items": "minItems",
    "max_length": "maxLength",
    "min_length": "minLength",
    "max_properties": "maxProperties",
    "min_properties": "minProperties",
}
_GEMINI_INTEGERS: Final = frozenset(
    {"maxItems", "minItems", "maxLength", "minLength", "maxProperties", "minProperties"}
)
_GEMINI_DROPPED: Final = frozenset({"propertyOrdering", "property_ordering", "example", "nullable"})
# Keys of a function declaration: an item without any of them and without a type is a
# Gemini built-in tool (``googleSearch``, ``codeExecution``, ``urlContext``...).
_FUNCTION_KEYS: Final = frozenset(
    {"name", "description", "parameters", "parametersJsonSchema", "input_schema", "function"}
)
_SHOWN_NAMES: Final = 20  # declared names listed in an UnknownTool message


def _plain(value: Any) -> Any:
    """A deep copy with mappings as ``dict`` and sequences as ``list`` (strings kept)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        return [_plain(v) for v in value]
    return value


def _as_mapping(item: Any, what: str) -> Mapping[str, Any]:
    if isinstance(item, Mapping):
        return item
    dump = getattr(item, "model_dump", None)  # SDK (pydantic) objects
    if callable(dump):
        dumped = dump(exclude_none=True)
        if isinstance(dumped, Mapping):
            return dumped
    raise TypeError(f"{what} must be a mapping, got {type(item).__name__}")


def _gemini_schema(schema: Any) -> Any:
    """An OpenAPI-subset schema of a Gemini function declaration as JSON Schema."""
    if isinstance(schema, list):
        return [_gemini_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        key = _GEMINI_KEYS.get(key, key)
        if key in _GEMINI_DROPPED:
            continue
        if key == "type" and isinstance(value, str):
            if value.upper() == "TYPE_UNSPECIFIED":
                continue
            value = value.lower()
        elif key in _GEMINI_INTEGERS and isinstance(value, str) and value.isdigit():
            value = int(value)
        elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            value = {k: _gemini_schema(v) for k, v in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "not"):
            value = _gemini_schema(value)
        out[key] = value
    if schema.get("nullable") is True:
        _allow_null(out)
    return out


def _allow_null(out: dict[str, Any]) -> None:
    """OpenAPI's ``nullable: true`` as JSON Schema: null joins the type and the enum."""
    if isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]


def _schema(value: Any, name: str) -> dict[str, Any]:
    if value is None:
        return {}  # a function without parameters: nothing to check
    if value is True:
        return {}
    if value is False:
        return {"not": {}}
    if not isinstance(value, Mapping):
        raise TypeError(
            f"the schema of tool {name!r} must be a JSON Schema object, got {type(value).__name__}"
        )
    schema: dict[str, Any] = _plain(value)
    return schema


#: The schemas that passed ``check_schema`` lately, as canonical JSON text: a ``Stitcher`` and
#: its ``Assembler`` declare the same tools, and a ``ToolRunner`` declares them again every round,
#: while checking a schema against its metaschema costs far more than writing it out. Bounded:
#: emptied when it holds ``_CHECKED_MAX`` texts. Only valid schemas are kept, so an invalid one is
#: refused every time.
_CHECKED_MAX: Final = 256
_checked: dict[str, None] = {}


def _check_schema(name: str, schema: dict[str, Any]) -> None:
    try:
        key: str | None = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not plain JSON data: checked every time
        key = None
    if key is not None and key in _checked:
        return
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as error:
        raise ValueError(f"the schema of tool {name!r} is invalid: {error.message}") from None
    if key is not None:
        if len(_checked) >= _CHECKED_MAX:
            _checked.clear()
        _checked[key] = None


def _entries(tools: Any) -> Iterable[tuple[str, Any]]:
    """``(name, raw schema)`` for each declared function, whatever the input's shape."""
    if isinstance(tools, Mapping):
        for wrapper in _GEMINI_WRAPPERS:
            if isinstance(tools.get(wrapper), Sequence) and not isinstance(tools[wrapper], str):
                yield from _entries(tools[wrapper])
                return
        if tools.get("type") == "function" or (
            "name" in tools and isinstance(tools.get("name"), str)
        ):
            raise TypeError(
                "tools looks like a single tool declaration; pass a list of tools "
                "(or a mapping of tool name to JSON Schema)"
            )
        for name, schema in tools.items():
            if not isinstance(name, str):
                raise TypeError(f"tool names must be strings, got {type(name).__name__}")
            if schema is not None and not isinstance(schema, (Mapping, bool)):
                raise TypeError(
                    f"the schema of tool {name!r} must be a JSON Schema object, "
                    f"got {type(schema).__name__}"
                )
            yield name, schema
        return
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
        raise TypeError(
            "tools must be a list of tool declarations (OpenAI, Anthropic or Gemini) "
            f"or a mapping of tool name to JSON Schema, got {type(tools).__name__}"
        )
    for position, raw in enumerate(tools):
        item = _as_mapping(raw, f"tools[{position}]")
        yield from _item(item, position)


def _item(item: Mapping[str, Any], position: int) -> Iterable[tuple[str, Any]]:
    where = f"tools[{position}]"
    for wrapper in _GEMINI_WRAPPERS:
        if wrapper in item:  # a Gemini Tool holding function declarations
            declarations = item[wrapper]
            if isinstance(declarations, str) or not isinstance(declarations, Iterable):
                raise TypeError(f"{where}.{wrapper} must be a list of function declarations")
            for k, raw in enumerate(declarations):
                declaration = _as_mapping(raw, f"{where}.{wrapper}[{k}]")
                yield _gemini(declaration, f"{where}.{wrapper}[{k}]")
            return
    kind = item.get("type")
    function = item.get("function")
    if kind == "function" and function is not None:  # OpenAI Chat Completions
        function = _as_mapping(function, f"{where}.function")
        yield _named(function, f"{where}.function"), function.get("parameters")
        return
    if "input_schema" in item:  # Anthropic
        yield _named(item, where), item["input_schema"]
        return
    if "toolSpec" in item:  # Bedrock Converse (toolConfig["tools"])
        spec = _as_mapping(item["toolSpec"], f"{where}.toolSpec")
        schema = _as_mapping(spec.get("inputSchema") or {}, f"{where}.toolSpec.inputSchema")
        yield _named(spec, f"{where}.toolSpec"), schema.get("json")
        return
    if kind == "function":  # OpenAI Responses (flat)
        yield _named(item, where), item.get("parameters")
        return
    if kind is None and "name" in item:  # Gemini function declaration
        yield _gemini(item, where)
        return
    if isinstance(kind, str) and isinstance(item.get("name"), str):
        # A provider's built-in tool that the model calls by name (Anthropic ``bash``,
        # ``text_editor``...): its input schema is the provider's, so only the name is known.
        yield _named(item, where), None
        return
    if isinstance(kind, str) or (kind is None and item and _FUNCTION_KEYS.isdisjoint(item)):
        # A built-in tool without a name (OpenAI ``web_search``, Gemini ``googleSearch``...):
        # it never streams a function call, so there is nothing to declare.
        return
    raise ValueError(
        f"{where} is not a tool declaration: expected OpenAI "
        '({"type": "function", "function": {"name", "parameters"}}), Anthropic '
        '({"name", "input_schema"}) or Gemini ({"name", "parameters"})'
    )


def _named(item: Mapping[str, Any], where: str) -> str:
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} has no name (a non-empty string)")
    return name


def _gemini(item: Mapping[str, Any], where: str) -> tuple[str, Any]:
    name = _named(item, where)
    for key in ("parametersJsonSchema", "parameters_json_schema"):
        if item.get(key) is not None:
            return name, item[key]
    parameters = item.get("parameters")
    if isinstance(parameters, Mapping):
        return name, _gemini_schema(_plain(parameters))
    return name, parameters


def normalize_tools(tools: Any) -> dict[str, dict[str, Any]]:
    """Declared tools as one ``dict`` of name → JSON Schema (a deep copy, plain dicts).

    Accepted: an OpenAI Chat Completions ``tools`` list (``{"type": "function", "function":
    {"name", "parameters"}}``), the OpenAI Responses flat form (``{"type": "function",
    "name", "parameters"}``), Anthropic tools (``{"name", "input_schema"}``), Gemini function
    declarations (``{"name", "parameters"}`` with the OpenAPI-style schema converted, or
    ``parametersJsonSchema`` as it is), also wrapped in a Gemini ``Tool``
    (``{"functionDeclarations": [...]}``), Bedrock Converse tools (``toolConfig["tools"]``:
    ``{"toolSpec": {"name", "inputSchema": {"json"}}}``), SDK objects with ``model_dump``, or a
    mapping of name → JSON Schema. A function without parameters gets the empty schema; provider
    built-in tools without a name are skipped; an Anthropic built-in tool with a name but no
    schema is declared by name only. Raises ``TypeError`` for a wrong shape and
    ``ValueError`` for a missing or duplicate name or an invalid schema.
    """
    out: dict[str, dict[str, Any]] = {}
    for name, raw in _entries(tools):
        if not name:
            raise ValueError("a tool name must be a non-empty string")
        if name in out:
            raise ValueError(f"tool {name!r} is declared twice")
        schema = _schema(raw, name)
        _check_schema(name, schema)
        out[name] = schema
    return out


def _list_names(names: Sequence[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:_SHOWN_NAMES])
    if len(names) > _SHOWN_NAMES:
        shown += f" … and {len(names) - _SHOWN_NAMES} more"
    return shown or "none"


class ToolNames:
    """The declared tool names, answering "can this name still become a declared one?".

    ``check`` is O(len(name) · log(number of names)): a bisection in the sorted names (a name
    so far is a prefix of a declared name iff the first declared name not below it starts
    with it), with memory linear in the names, unlike a prefix set or a trie.
    """

    __slots__ = ("_names", "_set", "declared")

    def __init__(self, names: Iterable[str]) -> None:
        #: The declared names, in declaration order.
        self.declared: tuple[str, ...] = tuple(dict.fromkeys(names))
        self._set = frozenset(self.declared)
        self._names = sorted(self._set)

    def __contains__(self, name: object) -> bool:
        return name in self._set

    def __len__(self) -> int:
        return len(self.declared)

    def is_prefix(self, name_so_far: str) -> bool:
        """Whether some declared name starts with ``name_so_far``."""
        names = self._names
        at = bisect.bisect_left(names, name_so_far)
        return at < len(names) and names[at].startswith(name_so_far)

    def closest(self, name: str, *, complete: bool = True) -> str | None:
        """The most similar declared name (``difflib`` ratio ≥ 0.6), if any.

        For a name still arriving, each declared name is also compared by its beginning of
        the same length, so ``get_wx`` is close to ``get_weather``.
        """
        best: str | None = None
        best_score = 0.6
        matcher = difflib.SequenceMatcher(autojunk=False)
        matcher.set_seq2(name)
        for candidate in self.declared:
            matcher.set_seq1(candidate)
            score = matcher.ratio()
            if not complete and len(candidate) > len(name):
                matcher.set_seq1(candidate[: len(name)])
                score = max(score, matcher.ratio())
            if score > best_score or (best is None and score == best_score):
                best, best_score = candidate, score
        return best

    def check(
        self,
        name_so_far: str,
        *,
        complete: bool,
        index: int | None = None,
        call_id: str | None = None,
    ) -> UnknownTool | None:
        """``UnknownTool`` if ``name_so_far`` can no longer become a declared name, else None.

        Not complete: refused once it is no declared name's prefix (the empty name never
        is). Complete: refused unless declared.
        """
        if complete:
            if name_so_far in self._set:
                return None
        elif not name_so_far or self.is_prefix(name_so_far):
            return None
        closest = self.closest(name_so_far, complete=complete)
        if complete:
            message = f"unknown tool {name_so_far!r}"
        else:
            message = f"the tool name {name_so_far!r} (so far) matches no declared tool"
        if closest is not None:
            message += f"; did you mean {closest!r}?"
        message += f" Declared tools: {_list_names(self.declared)}."
        return UnknownTool(
            message,
            declared=self.declared,
            closest=closest,
            index=index,
            call_id=call_id,
            name=name_so_far,
        )
