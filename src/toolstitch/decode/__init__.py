"""Bytes to provider events: the SSE decoder and the JSON-array body decoder.

Internal: import the public names from ``toolstitch``.
"""

from __future__ import annotations
