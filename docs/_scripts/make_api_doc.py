"""Regenerate docs/api.md from the public names' signatures and docstrings.

    python docs/_scripts/make_api_doc.py

tests/test_docs.py fails when the committed page differs from what this writes.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import toolstitch
from toolstitch.vocab import errors

PAGE = Path(__file__).resolve().parents[1] / "api.md"

HEADER = """# API reference

Everything below is imported from `toolstitch`. This page is generated from the code's own
signatures and docstrings by `python docs/_scripts/make_api_doc.py`; see
[concepts.md](concepts.md) for how the pieces fit together.
"""


ERRORS = """## The exception tree

Every exception toolstitch exports, as drawn in `toolstitch/vocab/errors.py` (tests/test_docs.py
checks the drawing against the classes themselves):

```
{tree}
```
"""


def error_tree() -> str:
    """The exception tree drawn in the docstring of ``toolstitch.vocab.errors``."""
    doc = _doc(errors)
    return textwrap.dedent(doc.split("The tree::", 1)[1].split("\n\n", 2)[1])


def _doc(obj: object) -> str:
    return inspect.cleandoc(inspect.getdoc(obj) or "")


def _signature(obj: object) -> str:
    try:
        return str(inspect.signature(obj))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""


def _members(cls: type) -> dict[str, object]:
    """A class's own members, and those of the private body it shares with a twin class
    (``_AssemblerBody``: the pure-Python and the native ``Assembler`` have the same methods,
    whichever path is active), so the page does not depend on the path."""
    members: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        if base is cls or base.__name__.endswith("Body"):
            members.update(vars(base))
    return members


def _section(name: str, obj: object) -> list[str]:
    out: list[str] = []
    if isinstance(obj, type) and issubclass(obj, enum.Enum):
        out.append(f"## `{name}`\n")
        out.append(_doc(obj) + "\n")
        out.extend(f"- `{name}.{member.name}` = `{member.value!r}`" for member in obj)
        out.append("")
        return out
    if isinstance(obj, type):
        kind = "exception" if issubclass(obj, BaseException) else "class"
        out.append(f"## {kind} `{name}{_signature(obj)}`\n")
        out.append(_doc(obj) + "\n")
        code = getattr(obj, "code", None)
        if isinstance(code, str):
            out.append(f"`code = {code!r}`\n")
        if dataclasses.is_dataclass(obj):
            fields = ", ".join(f"`{f.name}`" for f in dataclasses.fields(obj))
            if fields:
                out.append(f"Fields: {fields}.\n")
        for attr, member in sorted(_members(obj).items()):
            if attr.startswith("_"):
                continue
            if isinstance(member, property):
                out.append(
                    f"- property `{attr}`: {_doc(member).splitlines()[0] if _doc(member) else ''}"
                )
            elif inspect.isfunction(member):
                first = _doc(member).split("\n\n")[0].replace("\n", " ")
                out.append(f"- `{attr}{_signature(member)}`: {first}")
        out.append("")
        return out
    if inspect.isfunction(obj):
        out.append(f"## function `{name}{_signature(obj)}`\n")
        out.append(_doc(obj) + "\n")
        return out
    out.append(f"## `{name}`\n")
    if isinstance(obj, Mapping):
        out.append(f"A mapping with {len(obj)} entries:\n")
        out.extend(f"- `{key!r}`: {_describe(value)}" for key, value in obj.items())
        out.append("")
    else:
        out.append(f"`{obj!r}`\n")
    return out


def _describe(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, type) or inspect.isfunction(value):
        return f"`{value.__module__}.{value.__qualname__}`"
    return f"`{value!r}`"


def render() -> str:
    lines = [HEADER, ERRORS.format(tree=error_tree())]
    for name in sorted(toolstitch.__all__, key=str.lower):
        if name == "__version__":
            continue
        lines.extend(_section(name, getattr(toolstitch, name)))
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
