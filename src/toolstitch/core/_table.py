"""The per-call move table, derived from grammars/call-machine.json by transitions.

GENERATED: do not edit. Regenerate with ``python -m toolstitch.core.machine``;
tests/test_machine.py fails when this file is stale.
"""

from __future__ import annotations

from collections.abc import Mapping

from toolstitch.vocab.call_events import CallState

_S = CallState

TABLE: Mapping[tuple[CallState, str], CallState] = {
    (_S.AWAITING_ID, "receive_id"): _S.ACCUMULATING_NAME,
    (_S.ACCUMULATING_NAME, "receive_arguments"): _S.ACCUMULATING_ARGS,
    (_S.AWAITING_ID, "complete"): _S.COMPLETE,
    (_S.ACCUMULATING_NAME, "complete"): _S.COMPLETE,
    (_S.ACCUMULATING_ARGS, "complete"): _S.COMPLETE,
    (_S.AWAITING_ID, "discard"): _S.DISCARDED,
    (_S.ACCUMULATING_NAME, "discard"): _S.DISCARDED,
    (_S.ACCUMULATING_ARGS, "discard"): _S.DISCARDED,
}
