"""Build pybpe: the cffi extension when a C compiler works, pure Python otherwise.

The C core is an optional speed-up (the MarkupSafe / simplejson pattern): if
compiling fails, or PYBPE_NO_EXTENSION=1 is set, the package still installs
and runs on its pure-Python backend, which gives identical results.
"""
import os
import shutil
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:  # setuptools >= 59 re-exports distutils' errors here
    from setuptools.errors import CCompilerError, ExecError, PlatformError
    _BUILD_ERRORS = (CCompilerError, ExecError, PlatformError, OSError, ValueError)
except ImportError:  # pragma: no cover - old setuptools
    _BUILD_ERRORS = (Exception,)


# Optimisation flags added to pybpe/_build.py's portable "-std=c99 -O2" on a
# unix-like compiler, each (compile flags, link flags) pair only when a probe
# compiles and links with it (so any C99 compiler still builds pybpe, just
# without the pair it refuses).  Nothing tied to the building machine's CPU
# (-march=native): wheels and sdists must run on any machine of the
# architecture.  What was measured, and the flags that did not help, are in
# _build.py's notes.
_TUNING = [
    (["-O3"], []),
]


class optional_build_ext(build_ext):
    """build_ext that warns instead of failing: pybpe works without C."""

    def run(self):
        try:
            super().run()
        except _BUILD_ERRORS as exc:
            self._warn(exc)

    def build_extension(self, ext):
        try:
            if self.compiler.compiler_type == "unix":
                for cflags, ldflags in _TUNING:
                    if self._accepts(cflags, ldflags):
                        ext.extra_compile_args = list(ext.extra_compile_args or []) + cflags
                        ext.extra_link_args = list(ext.extra_link_args or []) + ldflags
            super().build_extension(ext)
        except _BUILD_ERRORS as exc:
            self._warn(exc)

    def _accepts(self, cflags, ldflags):
        """Whether this compiler and linker take `cflags` / `ldflags`: a
        one-function shared object must compile (warnings as errors, so a flag
        the compiler only warns about is not used) and link with them."""
        tmp = tempfile.mkdtemp(prefix="pybpe-flags-")
        try:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w") as f:
                f.write("int pybpe_probe(int x) { return x + 1; }\n")
            objs = self.compiler.compile([src], output_dir=tmp, extra_postargs=["-Werror"] + cflags)
            self.compiler.link_shared_object(objs, os.path.join(tmp, "probe.so"), extra_postargs=ldflags)
            return True
        except _BUILD_ERRORS:
            return False
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @staticmethod
    def _warn(exc):
        sys.stderr.write(
            "\nWARNING: pybpe's C extension could not be compiled (%s).\n"
            "pybpe will run on its pure-Python backend: same results, slower.\n\n" % exc
        )


if os.environ.get("PYBPE_NO_EXTENSION", "") not in ("", "0"):
    setup()
else:
    # pybpe._pylists (csrc/pyext/pylists.c): encoder output as Python lists,
    # a plain CPython extension (a cffi function cannot return a Python
    # object) on the limited API; optional like the cffi module, and the
    # lists are built through marshal without it.
    _PYLISTS = Extension("pybpe._pylists", ["csrc/pyext/pylists.c"], py_limited_api=True)
    # pybpe._utf8 (csrc/pyext/utf8.c): a str as UTF-8, faster than str.encode
    # on long text that is mostly but not all ASCII; optional too (str.encode
    # without it).
    _UTF8 = Extension("pybpe._utf8", ["csrc/pyext/utf8.c"], py_limited_api=True)
    # pybpe._ranks_file (csrc/pyext/ranks_file.c): a .tiktoken file's bytes
    # to {token: rank} in C; optional too (the Python loop without it).
    _RANKS_FILE = Extension("pybpe._ranks_file", ["csrc/pyext/ranks_file.c"], py_limited_api=True)
    setup(cffi_modules=["pybpe/_build.py:ffibuilder"], ext_modules=[_PYLISTS, _UTF8, _RANKS_FILE],
          cmdclass={"build_ext": optional_build_ext})
