"""Build pybpe: the cffi extension when a C compiler works, pure Python otherwise.

The C core is an optional speed-up (the MarkupSafe / simplejson pattern): if
compiling fails, or PYBPE_NO_EXTENSION=1 is set, the package still installs
and runs on its pure-Python backend, which gives identical results.
"""
import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

try:  # setuptools >= 59 re-exports distutils' errors here
    from setuptools.errors import CCompilerError, ExecError, PlatformError
    _BUILD_ERRORS = (CCompilerError, ExecError, PlatformError, OSError, ValueError)
except ImportError:  # pragma: no cover - old setuptools
    _BUILD_ERRORS = (Exception,)


class optional_build_ext(build_ext):
    """build_ext that warns instead of failing: pybpe works without C."""

    def run(self):
        try:
            super().run()
        except _BUILD_ERRORS as exc:
            self._warn(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except _BUILD_ERRORS as exc:
            self._warn(exc)

    @staticmethod
    def _warn(exc):
        sys.stderr.write(
            "\nWARNING: pybpe's C extension could not be compiled (%s).\n"
            "pybpe will run on its pure-Python backend: same results, slower.\n\n" % exc
        )


if os.environ.get("PYBPE_NO_EXTENSION", "") not in ("", "0"):
    setup()
else:
    setup(cffi_modules=["pybpe/_build.py:ffibuilder"], cmdclass={"build_ext": optional_build_ext})
