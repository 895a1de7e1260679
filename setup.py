"""Build of the optional C extension ``toolstitch._native`` (everything else is in pyproject.toml).

The extension is the hot path of the assembler (docs/native.md); pure Python is the
reference and the fallback. It is built against CPython's stable ABI (``abi3``, Python 3.10
and later: one wheel per platform). Where it cannot be built - no C compiler, no Python
headers, an interpreter without the stable ABI (PyPy) - the install still succeeds, prints
why, and toolstitch runs on pure Python (``toolstitch --version`` says which path is active).

``TOOLSTITCH_BUILD_NATIVE=0`` skips the extension; ``=1`` makes a failed build an error (the
wheel builds of the release set it). ``CFLAGS`` is honoured as usual, e.g. for the sanitizer
build of docs/native.md.
"""

from __future__ import annotations

import os
import platform
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

_MODE = os.environ.get("TOOLSTITCH_BUILD_NATIVE", "auto")
_ABI3 = platform.python_implementation() == "CPython" and not hasattr(sys, "gettotalrefcount")


class OptionalBuildExt(build_ext):
    """``build_ext`` that warns instead of failing, unless the build is required."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # any failure means: fall back to pure Python
            self._fallback(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._fallback(exc)

    def _fallback(self, exc: Exception) -> None:
        if _MODE == "1":
            raise exc
        sys.stderr.write(
            "toolstitch: the C extension was not built "
            f"({type(exc).__name__}: {exc}); toolstitch will run on pure Python.\n"
        )


def _extensions() -> list[Extension]:
    if _MODE == "0" or not _ABI3:
        return []
    sources = sorted(
        os.path.join("src", "toolstitch", "_c", name)
        for name in os.listdir(os.path.join("src", "toolstitch", "_c"))
        if name.endswith(".c")
    )
    return [
        Extension(
            "toolstitch._native",
            sources=sources,
            depends=sorted(
                os.path.join("src", "toolstitch", "_c", name)
                for name in os.listdir(os.path.join("src", "toolstitch", "_c"))
                if name.endswith(".h")
            ),
            define_macros=[("Py_LIMITED_API", "0x030A0000")],
            py_limited_api=True,
            extra_compile_args=[] if os.name == "nt" else ["-std=c99", "-O2"],
        )
    ]


_EXTENSIONS = _extensions()
setup(
    # find_packages cannot see toolstitch.grammars: pyproject maps it to grammars/.
    packages=[*find_packages("src", include=["toolstitch*"]), "toolstitch.grammars"],
    ext_modules=_EXTENSIONS,
    cmdclass={"build_ext": OptionalBuildExt},
    options={"bdist_wheel": {"py_limited_api": "cp310"}} if _EXTENSIONS else {},
)
