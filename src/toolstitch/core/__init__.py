"""Calls: deltas in, one state machine and one record per call, events out. Sans-I/O.

Internal: import the public names from ``toolstitch``.
"""

from __future__ import annotations
