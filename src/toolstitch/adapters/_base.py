"""What every provider adapter shares: the adapter protocol and small helpers.

An adapter turns one provider's stream events (dicts, as decoded from the wire, or the
official SDK's objects, converted with ``as_mapping``) into core events - by feeding deltas
to an ``Assembler``, directly or through the quirk layer - and stream-level events. Like
every stage of toolstitch it is sans-I/O: ``feed(payload) -> list[Event]`` and
``close() -> list[Event]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolstitch.core.assembler import Assembler
from toolstitch.vocab.call_events import CallWarning, Event
from toolstitch.vocab.errors import ProviderError, ProviderQuirk
from toolstitch.vocab.stream_events import StreamFailed

__all__ = ["Adapter", "as_mapping", "provider_error", "quirk_warning"]


def as_mapping(obj: object) -> Mapping[str, Any] | None:
    """``obj`` as a mapping: a Mapping as it is; an SDK object through its own dump.

    pydantic models (``openai``, ``anthropic``, ``google-genai``) are dumped in JSON mode
    (enums become their values) with ``exclude_unset=True``, so that a field the provider
    did not send is absent rather than ``None`` (the quirk layer tells an explicit ``null``
    from an absent key), and ``by_alias=True``, so that google-genai objects use the wire's
    camelCase names. Objects
    with ``to_dict()`` are asked for that. ``None`` for anything else.
    """
    if type(obj) is dict or isinstance(obj, Mapping):  # a plain dict skips the ABC check
        return obj
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        try:
            data = dump(mode="json", exclude_unset=True, by_alias=True)
        except TypeError:  # a model_dump without those keywords
            data = dump()
        if isinstance(data, Mapping):
            return data
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        data = to_dict()
        if isinstance(data, Mapping):
            return data
    return None


def get(data: Mapping[str, Any], *keys: str) -> Any:
    """The value of the first of ``keys`` present in ``data`` (camelCase / snake_case)."""
    for key in keys:
        if key in data:
            return data[key]
    return None


def mapping(value: object) -> Mapping[str, Any]:
    """``value`` if it is a Mapping (or convertible), else an empty one."""
    if type(value) is dict or isinstance(value, Mapping):
        return value
    if value is None:
        return {}
    return as_mapping(value) or {}


def quirk_warning(
    code: str,
    message: str,
    *,
    index: int,
    call_id: str | None = None,
    name: str | None = None,
) -> CallWarning:
    """A ``CallWarning`` carrying a ``ProviderQuirk`` with a stable ``quirk-…`` code."""
    return CallWarning(
        index=index,
        error=ProviderQuirk(code, message, index=index, call_id=call_id, name=name),
    )


def provider_error(error: object, *, http_event: str | None = None) -> StreamFailed:
    """A ``StreamFailed`` for an error object sent inside the stream.

    ``error`` is the provider's error object (``{"type", "message"}`` for Anthropic,
    ``{"message", "type", "code", ...}`` for OpenAI-compatible servers, ``{"code",
    "message", "status"}`` for Gemini). ``kind`` becomes its most specific code.
    """
    data = mapping(error)
    message = data.get("message")
    if not isinstance(message, str) or not message:
        message = "the provider reported an error"
    kind: str | None = None
    for key in ("code", "status", "type"):
        value = data.get(key)
        if isinstance(value, str) and value:
            kind = value
            break
    else:
        value = data.get("code")
        if isinstance(value, int) and not isinstance(value, bool):
            kind = str(value)
    details = [kind] if kind else []
    status = data.get("status_code")
    if isinstance(status, int) and not isinstance(status, bool):
        details.append(f"status {status}")
    where = f" ({', '.join(details)})" if details else ""
    text = f"the provider sent an error in the stream{where}: {message}"
    payload = dict(data) if data else error
    return StreamFailed(error=ProviderError(text, kind=kind, payload=payload))


class Adapter:
    """Base class of the provider adapters.

    ``name`` is the provider id (``"openai-chat"``, ``"openai-responses"``, ``"anthropic"``,
    ``"gemini"``). ``feed`` takes one decoded stream event; ``event`` is the SSE event name
    when there was one. ``close`` ends the stream: every call still open is resolved.
    """

    name: str = ""

    def __init__(self, assembler: Assembler, *, choice: int = 0) -> None:
        self.assembler = assembler
        self.choice = choice

    def feed(self, payload: object, *, event: str | None = None) -> list[Event]:
        """One stream event (a mapping, or an SDK object); the events it caused."""
        data = as_mapping(payload)
        if data is None:
            raise TypeError(f"cannot read a {type(payload).__name__} as a {self.name} event")
        return self._feed(data, event)

    def _feed(self, payload: Mapping[str, Any], event: str | None) -> list[Event]:
        raise NotImplementedError

    def close(self) -> list[Event]:
        raise NotImplementedError
