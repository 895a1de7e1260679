"""Bytes to provider events: the SSE decoder, the JSON-array body decoder and the NDJSON decoder.

Internal: import the public names from ``toolstitch``.
"""

from __future__ import annotations
