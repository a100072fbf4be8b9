"""The optional compiled core of the rules (engine/_core.pyx), built with Cython.

Everything else is declared in pyproject.toml. Without a C compiler the build goes on without
the core and says so: engine/core.py then plays through the pure-Python reference engine.
"""

from __future__ import annotations

import sys

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """Build the core where a compiler works; otherwise warn and install without it."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler at all: setuptools raises several kinds
            self._skipped(error)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:
            self._skipped(error)

    def _skipped(self, error: Exception) -> None:
        print(
            f"engine: the compiled core was not built ({error}); the pure-Python engine "
            "plays instead",
            file=sys.stderr,
        )


setup(
    ext_modules=cythonize(
        [Extension("engine._core", ["engine/_core.pyx"], extra_compile_args=["-O2"])],
        compiler_directives={"language_level": "3"},
        quiet=True,
    ),
    cmdclass={"build_ext": OptionalBuildExt},
)
