"""``toolstitch.schema.declarations``: declared tools from every provider's shape; names."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import PROPERTY_SETTINGS, per_pass
from toolstitch.schema.declarations import ToolNames, normalize_tools
from toolstitch.vocab.errors import UnknownTool

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    "tools",
    [
        [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}],
        [{"type": "function", "name": "get_weather", "parameters": WEATHER}],  # Responses
        [{"name": "get_weather", "description": "d", "input_schema": WEATHER}],  # Anthropic
        [{"name": "get_weather", "parameters": WEATHER}],  # Gemini
        [{"name": "get_weather", "parametersJsonSchema": WEATHER}],
        [{"functionDeclarations": [{"name": "get_weather", "parameters": WEATHER}]}],
        {"function_declarations": [{"name": "get_weather", "parameters": WEATHER}]},
        {"get_weather": WEATHER},
    ],
)
def test_every_shape(tools: Any) -> None:
    assert normalize_tools(tools) == {"get_weather": WEATHER}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_result_is_a_copy_in_plain_dicts() -> None:
    schema = {"type": "object", "properties": {"a": {"enum": ("x", "y")}}}
    out = normalize_tools({"t": schema})
    assert out["t"]["properties"]["a"]["enum"] == ["x", "y"]
    out["t"]["type"] = "changed"
    assert schema["type"] == "object"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_gemini_openapi_schema_becomes_json_schema() -> None:
    declaration = {
        "name": "f",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "n": {"type": "INTEGER", "nullable": True},
                "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "maxItems": "3"},
            },
            "required": ["n"],
            "propertyOrdering": ["n", "tags"],
        },
    }
    assert normalize_tools([declaration]) == {
        "f": {
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            },
            "required": ["n"],
        }
    }


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_functions_without_parameters_and_builtin_tools() -> None:
    tools = [
        {"type": "function", "function": {"name": "now"}},
        {"type": "web_search_preview"},  # OpenAI built-in: never a function call
        {"googleSearch": {}},  # Gemini built-in
        {"type": "bash_20250124", "name": "bash"},  # Anthropic built-in, called by name
    ]
    assert normalize_tools(tools) == {"now": {}, "bash": {}}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_sdk_objects_with_model_dump() -> None:
    class Declaration:
        def model_dump(self, *, exclude_none: bool) -> dict[str, Any]:
            assert exclude_none
            return {"name": "f", "parameters_json_schema": WEATHER}

    assert normalize_tools([Declaration()]) == {"f": WEATHER}


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    ("tools", "error", "match"),
    [
        ("get_weather", TypeError, "list of tool declarations"),
        (None, TypeError, "list of tool declarations"),
        ([42], TypeError, r"tools\[0\] must be a mapping"),
        ({"type": "function", "function": {"name": "f"}}, TypeError, "single tool"),
        ({"f": [1]}, TypeError, "JSON Schema object"),
        ([{"description": "no name"}], ValueError, "not a tool declaration"),
        ([{"type": "function", "function": {"parameters": {}}}], ValueError, "no name"),
        (
            [{"name": "f", "input_schema": {}}, {"name": "f", "input_schema": {}}],
            ValueError,
            "twice",
        ),
        ({"f": {"type": "no-such-type"}}, ValueError, "invalid"),
        ({"f": {"minLength": -1}}, ValueError, "invalid"),
    ],
)
def test_errors(tools: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        normalize_tools(tools)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_a_valid_schema_is_checked_once_and_an_invalid_one_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from jsonschema import Draft202012Validator

    from toolstitch.schema import declarations

    checked: list[Any] = []
    real = Draft202012Validator.check_schema

    def counting(cls: Any, schema: Any, *args: Any, **kwargs: Any) -> None:
        checked.append(schema)
        real(schema, *args, **kwargs)

    monkeypatch.setattr(Draft202012Validator, "check_schema", classmethod(counting))
    monkeypatch.setattr(declarations, "_checked", {})
    valid = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}
    assert normalize_tools({"f": valid}) == normalize_tools([{"name": "f", "input_schema": valid}])
    assert len(checked) == 1  # the same schema, declared again under another form: not rechecked
    for _ in range(2):
        with pytest.raises(ValueError, match="invalid"):
            normalize_tools({"f": {"minLength": -1}})
    assert len(checked) == 3  # an invalid schema is never remembered
    for k in range(declarations._CHECKED_MAX + 1):
        normalize_tools({"f": {"maxLength": k}})
    assert 0 < len(declarations._checked) <= declarations._CHECKED_MAX  # bounded


# -- names --------------------------------------------------------------------------------------

NAMES = ToolNames(["get_weather", "get_time", "search", "search_web"])


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_prefix_refusal_at_the_exact_character() -> None:
    name = "get_wether"
    results = [NAMES.check(name[: k + 1], complete=False) for k in range(len(name))]
    first = next(k for k, r in enumerate(results) if r is not None)
    assert name[: first + 1] == "get_wet"
    error = results[first]
    assert isinstance(error, UnknownTool)
    assert error.code == "unknown-tool"
    assert error.closest == "get_weather"
    assert error.declared == ("get_weather", "get_time", "search", "search_web")
    assert "did you mean 'get_weather'" in error.message
    assert "Declared tools" in error.message
    assert error.name == "get_wet"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_complete_names() -> None:
    assert NAMES.check("search", complete=True) is None
    assert NAMES.check("search_web", complete=True) is None
    error = NAMES.check("get_", complete=True)  # a prefix, but not a name
    assert error is not None
    assert NAMES.check("get_", complete=False) is None
    assert NAMES.check("", complete=False) is None


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_context_is_passed_on() -> None:
    error = NAMES.check("x", complete=False, index=3, call_id="call_1")
    assert error is not None
    assert (error.index, error.call_id, error.name) == (3, "call_1", "x")


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_no_closest_when_nothing_is_similar() -> None:
    error = NAMES.check("zzzzzz", complete=True)
    assert error is not None
    assert error.closest is None


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_long_lists_are_truncated_in_the_message() -> None:
    names = ToolNames(f"tool_{i}" for i in range(100))
    error = names.check("x", complete=False)
    assert error is not None
    assert "… and 80 more" in error.message
    assert len(error.declared) == 100


# Same code on either path (no assembler, no C): half the examples on each pass.
@per_pass(150, PROPERTY_SETTINGS)
@given(
    st.lists(st.text("abc_", min_size=1, max_size=6), min_size=1, max_size=8),
    st.text("abc_", max_size=8),
)
def test_check_equals_a_scan_of_all_names(declared: list[str], name: str) -> None:
    names = ToolNames(declared)
    for k in range(len(name) + 1):
        so_far = name[:k]
        viable = so_far == "" or any(d.startswith(so_far) for d in declared)
        assert (names.check(so_far, complete=False) is None) == viable
        assert (names.check(so_far, complete=True) is None) == (so_far in declared)
