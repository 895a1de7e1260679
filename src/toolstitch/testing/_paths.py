"""The pure-Python path's classes, in any process.

With the C extension built, ``toolstitch.Assembler`` and ``toolstitch.Stitcher`` are the native
classes (``toolstitch.NATIVE``); these two are the pure-Python ones beside them, the reference
the native path is tested against. ``PythonStitcher`` makes ``PythonAssembler``s (its calls',
its server calls' and its parallel wrappers' assemblers), so a stitcher made from it runs no C
of toolstitch's own. Without the extension, they are ``Assembler`` and ``Stitcher``
themselves. ``TOOLSTITCH_PURE_PYTHON=1`` makes the whole process pure Python instead.
"""

from __future__ import annotations

from toolstitch.core.assembler import _PythonAssembler as PythonAssembler
from toolstitch.stitch.stitcher import _PythonStitcher as PythonStitcher

__all__ = ["PythonAssembler", "PythonStitcher"]
