"""``python -m toolstitch``: the same as the ``toolstitch`` command."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
