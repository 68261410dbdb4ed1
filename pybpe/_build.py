"""cffi build script for pybpe's C core (API mode).

`setup.py` names `ffibuilder` in `cffi_modules`; running this file directly
builds the extension in place through setup.py (handy while editing csrc/).  Every C file in
csrc/ (not csrc/examples/) is compiled into one module, `pybpe._bpe_c`, and
the declarations Python may call are read from the csrc/*.cdef files -- one
per C file that Python uses, kept beside it so a change to a signature is made
in one folder.
"""
import glob
import os

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join(os.path.dirname(HERE), "csrc")


def _relative(path):
    # setuptools wants source paths relative to the project root.
    return os.path.relpath(path, os.path.dirname(HERE))


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _files(pattern):
    # csrc/ itself, then csrc/py/ (the only C that knows CPython).
    return sorted(glob.glob(os.path.join(CSRC, pattern))) + sorted(glob.glob(os.path.join(CSRC, "py", pattern)))


ffibuilder = FFI()
ffibuilder.cdef("\n".join(_read(p) for p in _files("*.cdef")))
ffibuilder.set_source(
    "pybpe._bpe_c",
    "".join('#include "%s"\n' % os.path.relpath(h, CSRC).replace(os.sep, "/") for h in _files("*.h")),
    sources=[_relative(p) for p in _files("*.c")],
    include_dirs=[_relative(CSRC)],
    extra_compile_args=["-std=c99", "-O2"] if os.name != "nt" else [],
)

if __name__ == "__main__":
    # Build in place through setup.py, so a direct run and `pip install`
    # compile the same sources with the same flags.
    import subprocess
    import sys

    sys.exit(subprocess.call([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                             cwd=os.path.dirname(HERE)))
