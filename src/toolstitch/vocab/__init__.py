"""The words every layer speaks: call events, stream events, errors, limits. Imports nothing else
of toolstitch.

Internal: import the public names from ``toolstitch``.
"""

from __future__ import annotations
