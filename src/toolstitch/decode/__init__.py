"""Bytes to provider events: the SSE decoder, the JSON-array body decoder, the NDJSON decoder
and the AWS event-stream frame decoder.

Internal: import the public names from ``toolstitch``.
"""

from __future__ import annotations
