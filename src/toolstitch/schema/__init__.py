"""Declared tools: reading every provider's tool declarations, the streaming schema check, and the
per-call checks the core runs.

Internal: import the public names from ``toolstitch``.
"""

from __future__ import annotations
