"""What the assembler knows about the declared tools, applied to each call as it streams.

Theory of operation
-------------------
Without ``tools`` (and without a partial view or watched strings) none of this exists and
the assembler pays nothing. With them, ``ToolChecks`` holds the declared names and each
tool's compiled schema, shared by every call. When a call's first arguments fragment
arrives — its name is complete by then — the assembler asks ``start`` for the call's own
``CallChecks``: a listener on the call's tokenizer that feeds the tool's streaming schema
check and the partial view, and collects what they find. After each fragment the assembler
looks at what was collected (``pending``) and turns it into events: ``ArgumentsValue``
updates, and ``SchemaViolation`` as a discard or a warning by policy. At the close, the
whole value goes through ``jsonschema`` (``final``). A call whose name is unknown never
gets this far: ``name_error`` refuses it at the delta where its name stops matching.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from toolstitch.json.tokenizer import JSONEventBatch
from toolstitch.vocab.errors import UnknownTool

if TYPE_CHECKING:
    from toolstitch.json.partial import PartialArguments, ValueUpdate
    from toolstitch.schema.streaming import StreamingSchemaCheck, ToolSchema, Violation

__all__ = ["POLICIES", "CallChecks", "ToolChecks"]

POLICIES: Final = ("discard", "warn")
Policy = Literal["discard", "warn"]

#: Schema warnings reported per call under ``"warn"``; the rest are counted in one last one.
MAX_WARNINGS: Final = 100


class CallChecks:
    """One call's streaming schema check and partial view, fed by its tokenizer."""

    __slots__ = (
        "forward",
        "index",
        "partial",
        "reported",
        "schema",
        "stream",
        "updates",
        "violations",
    )

    def __init__(
        self,
        index: int,
        schema: ToolSchema | None,
        partial: PartialArguments | None,
        forward: Callable[[int, JSONEventBatch], None] | None,
    ) -> None:
        self.index = index
        self.schema = schema
        self.stream: StreamingSchemaCheck | None = (
            schema.stream() if schema is not None and schema.streamed else None
        )
        self.partial = partial
        self.forward = forward
        self.violations: list[Violation] = []
        self.updates: list[ValueUpdate] = []
        #: Violations already turned into events (the final check skips them).
        self.reported: list[Violation] = []

    def listen(self, batch: JSONEventBatch) -> None:
        if self.stream is not None:
            found = self.stream.feed(batch)
            if found:
                self.violations.extend(found)
        if self.partial is not None:
            updates = self.partial.feed(batch)
            if updates:
                self.updates.extend(updates)
        if self.forward is not None:
            self.forward(self.index, batch)

    @property
    def pending(self) -> bool:
        return bool(self.violations or self.updates)

    def take(self) -> tuple[list[Violation], list[ValueUpdate]]:
        violations, updates = self.violations, self.updates
        self.violations, self.updates = [], []
        return violations, updates


class ToolChecks:
    """The declared tools and the options that use them, shared by every call."""

    __slots__ = ("_compiled", "_schemas", "names", "partial", "policy", "watch")

    def __init__(
        self,
        tools: object,
        *,
        on_schema_violation: str,
        watch_strings: Mapping[str, Iterable[str]] | None,
        partial_arguments: bool,
    ) -> None:
        if on_schema_violation not in POLICIES:
            raise ValueError(
                f"on_schema_violation must be one of {POLICIES}, got {on_schema_violation!r}"
            )
        try:
            import jsonschema  # noqa: F401  (needed by the tool checks; an optional extra)
        except ImportError:
            if tools is not None:
                raise ImportError(
                    "Assembler(tools=...) checks arguments with the jsonschema package: "
                    "pip install 'toolstitch[schema]'"
                ) from None
        from toolstitch.schema.declarations import ToolNames, normalize_tools

        self._schemas: dict[str, dict[str, Any]] | None = (
            None if tools is None else normalize_tools(tools)
        )
        self.names = None if self._schemas is None else ToolNames(self._schemas)
        self._compiled: dict[str, ToolSchema] = {}
        self.policy: Policy = "warn" if on_schema_violation == "warn" else "discard"
        self.watch: dict[str, tuple[str, ...]] = {}
        if watch_strings is not None:
            if not isinstance(watch_strings, Mapping):
                raise TypeError("watch_strings must map tool names to JSON Pointers")
            for name, pointers in watch_strings.items():
                if isinstance(pointers, str):
                    raise TypeError(f"watch_strings[{name!r}] must be a list of JSON Pointers")
                self.watch[name] = tuple(pointers)
        self.partial = partial_arguments

    def name_error(self, name: str, *, complete: bool) -> UnknownTool | None:
        """``UnknownTool`` once ``name`` can no longer become a declared name."""
        if self.names is None:
            return None
        return self.names.check(name, complete=complete)

    def schema(self, name: str) -> ToolSchema | None:
        """The compiled schema of a declared tool (compiled at its first call)."""
        if self._schemas is None or name not in self._schemas:
            return None
        compiled = self._compiled.get(name)
        if compiled is None:
            from toolstitch.schema.streaming import ToolSchema

            compiled = self._compiled[name] = ToolSchema(self._schemas[name])
        return compiled

    def start(
        self, index: int, name: str, forward: Callable[[int, JSONEventBatch], None] | None
    ) -> CallChecks | None:
        """The checks of a call whose arguments start now, or None if it needs none."""
        schema = self.schema(name)
        watched = self.watch.get(name, ())
        partial: PartialArguments | None = None
        if self.partial or watched:
            from toolstitch.json.partial import PartialArguments

            partial = PartialArguments(report_values=bool(watched), watch_strings=watched)
        if schema is None and partial is None:
            return None
        return CallChecks(index, schema, partial, forward)

    def final(self, name: str, value: object) -> list[Violation]:
        """The complete value checked against the whole schema with ``jsonschema``."""
        schema = self.schema(name)
        return [] if schema is None else schema.final_check(value)
