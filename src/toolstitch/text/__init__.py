"""Tool calls written into a model's text: the text-format layer (beside the adapters: it turns
generated text into the same items an adapter gives).

So far the mechanism every format reader stands on: ``markers``, literal markers found in text
fed piece by piece, linearly, holding back only what may still become a marker.

Internal: not part of the public API yet.
"""

from __future__ import annotations
