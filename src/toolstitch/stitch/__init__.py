"""The front door: a provider stream in, events and a result out (``Stitcher``, ``stitch``,
``astitch``), and error replies for discarded calls.

Internal: import the public names from ``toolstitch``.
"""

from __future__ import annotations
