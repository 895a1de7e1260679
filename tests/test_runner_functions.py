"""``Tool.from_function`` and ``@tool``: schemas from signatures, docstrings, validation."""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import enum
import functools
import inspect
import json
from typing import TYPE_CHECKING, Any, Literal

import jsonschema
import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typing_extensions import TypedDict

from strategies import PROPERTY_SETTINGS, per_pass
from toolstitch.runner import OpenAIChatModel, Tool, ToolResultReady, ToolRunner, tool
from toolstitch.runner._docstring import parse_docstring
from toolstitch.runner._plain_signature import PlainSignature
from toolstitch.testing import OpenAIChatScript, ScriptedServer

if TYPE_CHECKING:
    import openai
else:  # imported by the first test that uses them (tests/sdks.py)
    from sdks import openai


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


@dataclasses.dataclass
class Place:
    city: str
    country: str = "FR"


class Options(TypedDict):
    verbose: bool


class Hotel(pydantic.BaseModel):
    name: str
    stars: int


class Opaque:
    """A class pydantic knows nothing about."""


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- schemas -------------------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_simple_types_required_and_defaults() -> None:
    def search(
        query: str,
        limit: int = 10,
        ratio: float = 0.5,
        exact: bool = False,
        tags: tuple[str, ...] = (),
    ) -> str:
        return query

    made = Tool.from_function(search)
    schema = made.parameters
    props = schema["properties"]
    assert made.name == "search"
    assert schema["required"] == ["query"]
    assert {k: v["type"] for k, v in props.items()} == {
        "query": "string",
        "limit": "integer",
        "ratio": "number",
        "exact": "boolean",
        "tags": "array",
    }
    assert props["tags"]["items"] == {"type": "string"}
    assert props["limit"]["default"] == 10
    assert schema["additionalProperties"] is False
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_optional_literal_enum_typeddict_dataclass_and_model() -> None:
    def book(
        place: Place,
        hotel: Hotel,
        unit: Unit = Unit.C,
        nights: int | None = None,
        mode: Literal["fast", "cheap"] = "fast",
        options: Options | None = None,
        extra: dict[str, int] | None = None,
    ) -> str:
        return ""

    schema = Tool.from_function(book).parameters
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good = {
        "place": {"city": "Paris"},
        "hotel": {"name": "Ritz", "stars": 5},
        "unit": "fahrenheit",
        "nights": None,
        "mode": "cheap",
        "options": {"verbose": True},
        "extra": {"a": 1},
    }
    assert list(validator.iter_errors(good)) == []
    assert not validator.is_valid({**good, "mode": "slow"})
    assert not validator.is_valid({**good, "unit": "kelvin"})
    assert not validator.is_valid({**good, "options": {}})
    assert schema["required"] == ["place", "hotel"]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_arguments_are_converted_to_the_annotated_types() -> None:
    seen: dict[str, Any] = {}

    def book(place: Place, hotel: Hotel, unit: Unit = Unit.C, nights: int = 1) -> str:
        seen.update(place=place, hotel=hotel, unit=unit, nights=nights)
        return "ok"

    made = Tool.from_function(book)
    arguments = {
        "place": {"city": "Oslo"},
        "hotel": {"name": "X", "stars": "4"},
        "unit": "fahrenheit",
    }
    assert made.check(arguments) is None
    assert run(made.invoke(arguments)) == "ok"
    assert seen == {
        "place": Place("Oslo"),
        "hotel": Hotel(name="X", stars=4),
        "unit": Unit.F,
        "nights": 1,
    }


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_validation_failure_names_the_parameter() -> None:
    def f(count: int, unit: Unit) -> None: ...

    made = Tool.from_function(f)
    problem = made.check({"count": "many", "unit": "kelvin", "other": 1})
    assert problem is not None
    assert "count" in problem
    assert "unit" in problem
    assert "other" in problem  # unknown arguments are refused (additionalProperties false)
    assert made.check({"unit": "celsius"}) == "count: Field required"


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_parameter_names_that_shadow_basemodel_attributes() -> None:
    def query(schema: str, json: int = 0, _private: bool = False) -> tuple[str, int, bool]:
        return schema, json, _private

    made = Tool.from_function(query)
    assert set(made.parameters["properties"]) == {"schema", "json", "_private"}
    assert run(made.invoke({"schema": "s", "json": 2, "_private": True})) == ("s", 2, True)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_only_the_sent_arguments_are_passed_so_sentinel_defaults_work() -> None:
    missing = object()

    def f(a: int, b: Any = missing) -> bool:
        return b is missing

    made = Tool.from_function(f)
    assert "default" not in made.parameters["properties"]["b"]
    assert run(made.invoke({"a": 1})) is True
    assert run(made.invoke({"a": 1, "b": 2})) is False


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_no_annotation_is_any() -> None:
    def f(a, b=1):  # type: ignore[no-untyped-def]
        return [a, b]

    made = Tool.from_function(f)
    assert made.parameters["required"] == ["a"]
    assert run(made.invoke({"a": {"x": [1]}})) == [{"x": [1]}, 1]


# -- docstrings ----------------------------------------------------------------------------


GOOGLE = """Look up the weather.

    Uses the national service.

    Args:
        city (str): The city, with its
            country.
        days: How many days.

    Returns:
        The forecast.
    """

NUMPY = """Look up the weather.

    Uses the national service.

    Parameters
    ----------
    city : str
        The city, with its
        country.
    days : int, optional
        How many days.

    Returns
    -------
    str
        The forecast.
    """

REST = """Look up the weather.

    Uses the national service.

    :param str city: The city, with its
        country.
    :param days: How many days.
    :returns: The forecast.
    """


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, REST], ids=["google", "numpy", "rest"])
def test_docstring_styles(doc: str) -> None:
    def weather(city: str, days: int = 1) -> str:
        return city

    weather.__doc__ = doc
    made = Tool.from_function(weather)
    assert made.description == "Look up the weather.\n\nUses the national service."
    props = made.parameters["properties"]
    assert props["city"]["description"] == "The city, with its country."
    assert props["days"]["description"] == "How many days."


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_docstring_without_sections_and_none() -> None:
    assert parse_docstring("Just text.\n\n  More.").description == "Just text.\n\nMore."
    assert parse_docstring("Just text.").params == {}
    empty = parse_docstring(None)
    assert (empty.description, empty.params) == ("", {})


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_name_and_description_override() -> None:
    def f(x: int) -> int:
        """Doc."""
        return x

    made = Tool.from_function(f, name="double-it", description="Twice x.", early=True)
    assert (made.name, made.description, made.early) == ("double-it", "Twice x.", True)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_names_providers_refuse_are_refused() -> None:
    with pytest.raises(ValueError, match="pass name="):
        Tool.from_function(lambda x: x)
    with pytest.raises(ValueError, match="pass name="):
        Tool.from_function(len, name="functions.len")


# -- kinds of callables --------------------------------------------------------------------


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_decorator_both_forms_and_still_callable() -> None:
    @tool
    def plain(x: int) -> int:
        """Plain."""
        return x + 1

    @tool(early=True, name="fancy")
    async def fancy(x: int) -> int:
        return x * 2

    assert isinstance(plain, Tool)
    assert (plain.name, plain.early, plain.description) == ("plain", False, "Plain.")
    assert (fancy.name, fancy.early) == ("fancy", True)
    assert plain(1) == 2  # the function itself
    assert run(fancy(3)) == 6
    assert run(plain.invoke({"x": "4"})) == 5
    assert run(fancy.invoke({"x": 4})) == 8


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_methods_partials_and_callable_objects() -> None:
    class Shop:
        def __init__(self) -> None:
            self.sold: list[str] = []

        def sell(self, item: str, count: int = 1) -> str:
            """Sell an item.

            Args:
                item: What to sell.
            """
            self.sold.append(f"{count} {item}")
            return "sold"

        async def price(self, item: str) -> int:
            return len(item)

    class Counter:
        def __call__(self, word: str) -> int:
            """Count letters."""
            return len(word)

    shop = Shop()
    sell = Tool.from_function(shop.sell)
    assert "self" not in sell.parameters["properties"]
    assert sell.parameters["properties"]["item"]["description"] == "What to sell."
    assert run(sell.invoke({"item": "pen", "count": 2})) == "sold"
    assert shop.sold == ["2 pen"]
    assert run(Tool.from_function(shop.price).invoke({"item": "abc"})) == 3

    def scale(factor: int, value: float) -> float:
        """Scale a value."""
        return factor * value

    triple = Tool.from_function(functools.partial(scale, 3), name="triple")
    assert list(triple.parameters["properties"]) == ["value"]
    assert triple.description == "Scale a value."
    assert run(triple.invoke({"value": 2})) == 6.0

    counter = Tool.from_function(Counter())
    assert (counter.name, counter.description) == ("Counter", "Count letters.")
    assert run(counter.invoke({"word": "four"})) == 4


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_positional_only_and_var_keyword() -> None:
    def f(a: int, b: int = 2, /, *, c: int = 3, **rest: Any) -> tuple[Any, ...]:
        return a, b, c, rest

    made = Tool.from_function(f)
    assert made.parameters["additionalProperties"] is True
    assert run(made.invoke({"a": 1, "c": 4, "z": "x"})) == (1, 2, 4, {"z": "x"})


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_signatures_that_cannot_be_tools() -> None:
    def star(*items: int) -> None: ...

    def weird(x: Opaque) -> None: ...

    with pytest.raises(TypeError, match=r"\*items"):
        Tool.from_function(star)
    with pytest.raises(TypeError, match="cannot be a JSON Schema"):
        Tool.from_function(weird)
    with pytest.raises(TypeError, match="needs a callable"):
        Tool.from_function(3)  # type: ignore[arg-type]


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_unresolvable_annotation_is_a_clear_error() -> None:
    def f(x: NotDefinedAnywhere) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(TypeError, match="does not resolve"):
        Tool.from_function(f)


def block_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_pydantic(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pydantic" or name.startswith("pydantic."):
            raise ImportError("No module named 'pydantic'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pydantic)


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_without_pydantic_simple_types_work(monkeypatch: pytest.MonkeyPatch) -> None:
    block_pydantic(monkeypatch)

    def f(
        count: int, unit: Unit = Unit.C, ratio: float = 1.0, tags: list[str] | None = None
    ) -> Any:
        """Count things.

        Args:
            count: How many.
        """
        return count, unit, ratio, tags

    made = Tool.from_function(f)
    assert made.model is None  # a JSON Schema tool: the core checks it as it streams
    assert made.description == "Count things."
    assert made.parameters == {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "description": "How many."},
            "unit": {"enum": ["celsius", "fahrenheit"], "default": "celsius"},
            "ratio": {"type": "number", "default": 1.0},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
        },
        "additionalProperties": False,
        "required": ["count"],
    }
    assert made.check({"count": "3"}) is not None  # exact: no lax conversion
    assert made.check({"count": 3, "zz": 1}) is not None
    got = run(made.invoke({"count": 3, "unit": "fahrenheit", "ratio": 2, "tags": ["a"]}))
    assert got == (3, Unit.F, 2.0, ["a"])
    assert type(got[2]) is float


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
def test_without_pydantic_other_types_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    block_pydantic(monkeypatch)

    def f(place: Place) -> None: ...

    with pytest.raises(ImportError, match=r"'place'.*pip install 'toolstitch\[pydantic\]'"):
        Tool.from_function(f)


# -- properties ----------------------------------------------------------------------------

# Simple annotations, each with a strategy for values of that type (as JSON would carry them).
SIMPLE: list[tuple[Any, st.SearchStrategy[Any]]] = [
    (str, st.text(max_size=8)),
    (int, st.integers(-(10**12), 10**12)),
    (float, st.floats(allow_nan=False, allow_infinity=False)),
    (bool, st.booleans()),
    (list[int], st.lists(st.integers(-100, 100), max_size=3)),
    (dict[str, str], st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=3)),
    (int | None, st.none() | st.integers(-100, 100)),
    (Literal["a", "b"], st.sampled_from(["a", "b"])),
    (Unit, st.sampled_from(["celsius", "fahrenheit"])),
]

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: n not in {"self", "cls", "async", "await", "if", "in", "is", "or", "as"}
)


@st.composite
def signatures(draw: st.DrawFn) -> tuple[inspect.Signature, dict[str, Any]]:
    """A signature of simple keyword parameters (some with defaults), and arguments for it
    (every required one, some optional ones)."""
    names = draw(st.lists(NAMES, min_size=0, max_size=5, unique=True))
    params: list[inspect.Parameter] = []
    arguments: dict[str, Any] = {}
    for name in names:
        annotation, values = draw(st.sampled_from(SIMPLE))
        optional = draw(st.booleans())
        default = draw(values) if optional else inspect.Parameter.empty
        params.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )
        if not optional or draw(st.booleans()):
            arguments[name] = draw(values)
    return inspect.Signature(params), arguments


def _convert(annotation: Any, value: Any) -> Any:
    """What the function should receive for the JSON ``value`` (the reference conversion)."""
    if annotation is float:
        return float(value)
    if annotation is Unit:
        return Unit(value)
    return value


@per_pass(150, PROPERTY_SETTINGS)
@given(signatures())
def test_generated_signatures_give_valid_schemas_that_round_trip(
    case: tuple[inspect.Signature, dict[str, Any]],
) -> None:
    signature, arguments = case
    received: list[dict[str, Any]] = []

    def fn(**kwargs: Any) -> str:
        received.append(kwargs)
        return "ok"

    fn.__signature__ = signature  # type: ignore[attr-defined]
    made = Tool.from_function(fn)
    schema = made.parameters
    jsonschema.Draft202012Validator.check_schema(schema)
    # What the model would send: the arguments as JSON.
    sent = json.loads(json.dumps(arguments))
    assert jsonschema.Draft202012Validator(schema).is_valid(sent)
    assert made.check(sent) is None
    assert set(schema.get("required", ())) == {
        p.name for p in signature.parameters.values() if p.default is inspect.Parameter.empty
    }
    run(made.invoke(sent))
    annotations = {p.name: p.annotation for p in signature.parameters.values()}
    assert received == [{k: _convert(annotations[k], v) for k, v in sent.items()}]
    # An argument no parameter takes is refused by both the schema and the validator.
    extra = {**sent, "zz_not_a_parameter": 1}
    assert not jsonschema.Draft202012Validator(schema).is_valid(extra)
    assert made.check(extra) is not None
    # Without pydantic: a schema that accepts and refuses the same, and the same call.
    plain = PlainSignature(fn, "fn", {})
    jsonschema.Draft202012Validator.check_schema(plain.schema)
    assert jsonschema.Draft202012Validator(plain.schema).is_valid(sent)
    assert not jsonschema.Draft202012Validator(plain.schema).is_valid(extra)
    assert plain.schema.get("required", []) == schema.get("required", [])
    assert plain.call_arguments(sent) == ((), received[0])


# -- in a run ------------------------------------------------------------------------------


def test_function_tool_in_a_run_converted_and_refused_when_invalid() -> None:
    seen: list[tuple[int, Unit]] = []

    @tool
    def convert(amount: int, unit: Unit = Unit.C) -> str:
        """Convert a temperature."""
        seen.append((amount, unit))
        return f"{amount} {unit.value}"

    first = (
        OpenAIChatScript()
        .call("c1", "convert", '{"amount": "20", "unit": "fahrenheit"}')
        .call("c2", "convert", '{"amount": "lots"}')
        .finish("tool_calls")
        .reply()
    )
    second = OpenAIChatScript().text("Done.").finish().reply()

    async def main() -> list[ToolResultReady]:
        async with (
            ScriptedServer([first, second]) as server,
            openai.AsyncOpenAI(
                base_url=server.openai_base_url, api_key="test", max_retries=0
            ) as client,
        ):
            runner = ToolRunner(OpenAIChatModel(client, "m"), [convert])
            result = await runner.run(["Convert"])
            events = [e async for e in result.stream if isinstance(e, ToolResultReady)]
            declared = server.requests[0].json["tools"][0]["function"]
            assert declared["description"] == "Convert a temperature."
            assert declared["parameters"]["required"] == ["amount"]
            return events

    events = asyncio.run(asyncio.wait_for(main(), 30))
    assert seen == [(20, Unit.F)]
    by_id = {e.result.call_id: e for e in events}
    assert by_id["c1"].result.content == "20 fahrenheit"
    assert by_id["c2"].code == "invalid-arguments"
    assert by_id["c2"].executed is False
    assert "amount" in by_id["c2"].result.content


class Mixed(enum.Enum):
    A = 1.5


@pytest.mark.once  # runs no code with a native twin (tests/conftest.py)
@pytest.mark.parametrize(
    "annotation", [Place, Options, Hotel, dict[int, str], tuple[int, str], Literal[1.5], Mixed]
)
def test_plain_schema_leaves_the_rest_to_pydantic(annotation: Any) -> None:
    def f(x: Any) -> None: ...

    f.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("x", inspect.Parameter.KEYWORD_ONLY, annotation=annotation)]
    )
    with pytest.raises(ImportError, match="needs pydantic"):
        PlainSignature(f, "f", {})


WORDS = st.text(alphabet="abcdefghij ,.()'", min_size=1, max_size=30).map(str.strip).filter(bool)


def _styles(summary: str, params: dict[str, str]) -> list[str]:
    google = "\n".join(f"    {name}: {text}" for name, text in params.items())
    numpy = "\n".join(f"{name} : int\n    {text}" for name, text in params.items())
    rest = "\n".join(f":param {name}: {text}" for name, text in params.items())
    return [
        f"{summary}\n\nArgs:\n{google}\n\nReturns:\n    Something.",
        f"{summary}\n\nParameters\n----------\n{numpy}\n\nReturns\n-------\nint",
        f"{summary}\n\n{rest}\n:returns: Something.",
    ]


@per_pass(150, PROPERTY_SETTINGS)
@given(WORDS, st.dictionaries(NAMES, WORDS, max_size=4))
def test_generated_docstrings_of_each_style_read_back(summary: str, params: dict[str, str]) -> None:
    for doc in _styles(summary, params):
        parsed = parse_docstring(doc)
        assert parsed.description == summary
        assert parsed.params == params


@per_pass(150, PROPERTY_SETTINGS)
@given(st.text(max_size=200))
def test_any_docstring_is_read_without_error(doc: str) -> None:
    parsed = parse_docstring(doc)
    assert isinstance(parsed.description, str)
