"""The provider SDKs, imported by the first test that uses one, not when a module is collected.

Every pytest-xdist worker imports every test module while it collects, and ``anthropic`` alone
takes about 2.4 s of CPU to import (``openai`` about 0.9 s, ``google-genai`` about 1.1 s): paid
at the top of a module, a worker pays them even when none of its tests talks to an SDK. A test
module writes::

    if TYPE_CHECKING:
        import openai
    else:
        from sdks import openai

and uses ``openai.AsyncOpenAI`` as before: mypy sees the real module, and at run time the
module is imported the first time one of its public attributes is read (then Python's own
``sys.modules`` cache answers).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["anthropic", "genai", "genai_types", "openai", "openai_chat_types"]


class _OnFirstUse:
    """Stands for the module ``name``: reading an attribute imports it (once) and reads it."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            # What collection asks of every module global (pytest's fixture marker, mock's
            # and inspect's probes) must not import the SDK; the tests read public names only.
            raise AttributeError(attribute)
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


anthropic = _OnFirstUse("anthropic")
openai = _OnFirstUse("openai")
openai_chat_types = _OnFirstUse("openai.types.chat")
genai = _OnFirstUse("google.genai")
genai_types = _OnFirstUse("google.genai.types")
