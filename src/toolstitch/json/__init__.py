"""The one place that knows JSON: its lexicon, the incremental tokenizer, error diagnosis, JSON
Pointer location and the partial-value builder. Knows nothing of calls.

Internal: import the public names from ``toolstitch``.
"""

from __future__ import annotations
