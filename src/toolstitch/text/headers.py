"""Header rules: what the text of a header state says about the call (or message) it opens.

A header is short text between two markers that names a call, as Kimi K2's
``functions.get_weather:0`` between ``<|tool_call_begin|>`` and
``<|tool_call_argument_begin|>``, or routes a message, as a Harmony header
``<|channel|>commentary to=functions.get_weather <|constrain|>json`` before ``<|message|>``.
The reader gathers the header's text (at most ``MAX_HEADER_CHARS``) and, at the marker that
ends it, asks the state's rule for a ``Header``: the call's name and id, the state to go to
instead of the move's, a tolerated variant to report, or an error (the call is discarded as
``malformed-call`` at the header's position; a routing header that fails leaves its message
as text).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, NamedTuple

__all__ = ["HEADERS", "MAX_HEADER_CHARS", "Header"]

#: The most characters a header may hold; past it, the header is an error.
MAX_HEADER_CHARS: Final = 4096


class Header(NamedTuple):
    """What a header says (see the module docstring)."""

    name: str | None = None
    call_id: str | None = None
    to: str | None = None
    variant: str | None = None
    error: str | None = None


def name_header(text: str) -> Header:
    """The header is the call's name, surrounding whitespace aside."""
    name = text.strip()
    if not name:
        return Header(error="the call has no name")
    if any(c.isspace() for c in name):
        return Header(error=f"the call's name {name!r} holds whitespace")
    return Header(name=name)


# functions.NAME:IDX, the documented form; NAME may hold dots, dashes, anything but ':'.
_KIMI: Final = re.compile(r"functions\.(?P<name>[^:\s]+):(?P<idx>\d+)")
# Seen in the wild (research §1.1): "functions_get_weather_1", "functionsexec5".
_KIMI_UNDERSCORE: Final = re.compile(r"functions_(?P<name>\S+?)_(?P<idx>\d+)")
_KIMI_GLUED: Final = re.compile(r"functions(?P<name>[A-Za-z_][\w.-]*?)(?P<idx>\d+)")
_KIMI_NAMED: Final = re.compile(r"(?P<name>[A-Za-z_][\w.-]*):(?P<idx>\d+)")


def kimi_header(text: str) -> Header:
    """Kimi K2: ``functions.NAME:IDX`` is the call's id, and names it; the odd forms models
    write are named variants: ``functions_NAME_IDX`` (``kimi-underscore-id``),
    ``functionsNAMEIDX`` (``kimi-glued-id``), ``NAME:IDX`` (``kimi-bare-name``). A bare number
    names no tool: the call is discarded (``malformed-call``), never guessed."""
    header = text.strip()
    # Each pattern is matched whole against a header of at most MAX_HEADER_CHARS: no
    # backtracking over the model's text beyond it.
    forms = (
        (_KIMI, None),
        (_KIMI_UNDERSCORE, "kimi-underscore-id"),
        (_KIMI_GLUED, "kimi-glued-id"),
        (_KIMI_NAMED, "kimi-bare-name"),
    )
    for pattern, variant in forms:
        found = pattern.fullmatch(header)
        if found is not None:
            return Header(name=found["name"], call_id=header, variant=variant)
    return Header(error=f"the call header {header!r} is not functions.NAME:INDEX")


# A Harmony header: the role part and channel, a recipient, a content type.
_RECIPIENT: Final = re.compile(r"to=(?P<to>[^\s<]+)")
_CHANNEL: Final = re.compile(r"<\|channel\|>\s*(?P<channel>[A-Za-z_]+)")


def harmony_header(text: str) -> Header:
    """gpt-oss Harmony: ``[<|start|>]ROLE[ to=R]<|channel|>CHANNEL[ to=R][ <|constrain|>TYPE]``.

    A recipient ``functions.NAME`` makes the message a call to NAME, whichever channel it is
    on (``harmony-recipient-in-role`` when it stands in the role part,
    ``harmony-analysis-call`` on the analysis channel); otherwise the ``analysis`` channel is
    reasoning and every other channel is text (a ``commentary`` preamble, the ``final``
    answer). A recipient that is not a function (a built-in tool such as ``browser.search``)
    is text, with its header."""
    channel_found = _CHANNEL.search(text)
    channel = channel_found["channel"] if channel_found else ""
    recipient = _RECIPIENT.search(text)
    if recipient is not None:
        to = recipient["to"]
        if to.startswith("functions."):
            name = to[len("functions.") :]
            if not name:
                return Header(error="the recipient 'functions.' names no function")
            variant = None
            if channel_found is not None and recipient.start() < channel_found.start():
                variant = "harmony-recipient-in-role"
            elif channel == "analysis":
                variant = "harmony-analysis-call"
            return Header(name=name, to="call", variant=variant)
    if channel == "analysis":
        return Header(to="analysis")
    return Header(to="final")


def ident_header(text: str) -> Header:
    """The header is the call's id (Mistral's ``[CALL_ID]…``), surrounding whitespace aside."""
    call_id = text.strip()
    return Header(call_id=call_id) if call_id else Header(error="the call id is empty")


def ignored_header(text: str) -> Header:
    """Markup the format writes and nothing reads (DeepSeek V3's ``function`` type word)."""
    return Header()


#: Every header rule by the name a format declaration uses.
HEADERS: Final[dict[str, Callable[[str], Header]]] = {
    "ident": ident_header,
    "ignored": ignored_header,
    "name": name_header,
    "kimi": kimi_header,
    "harmony": harmony_header,
}
