"""pybpe's core, in two interchangeable implementations, and the one switch
between them: the C core when it was compiled, pure Python otherwise.

    pybpe.core.spec     pure Python, the specification: one module per C file
                        (symtab, words, trainer, merger, counter, encode_text,
                        ranks; merge is the ranks side's loop)
    pybpe.core.native   the C core (csrc/) through cffi: core.py wraps the
                        chapter's files, ranks.py the tiktoken side's

Both implement docs/backends.md, name for name (tests/test_twins.py), with
identical results; `get` returns either, and callers never ask which they
hold -- COMPILED says only whether calls run without the GIL.  The choice
is made per tokenizer (`backend="auto" | "c" | "python"`), defaulting to the
environment variable PYBPE_BACKEND, then to "auto".  When "auto" finds no
compiled extension it says so once (a RuntimeWarning), unless the user asked
for the pure-Python path explicitly (PYBPE_BACKEND=python or
PYBPE_NO_EXTENSION=1).
"""
import importlib
import os
import sys
import warnings

NAMES = ("auto", "c", "python")
_warned = False


def c_available():
    """True when the compiled extension `pybpe._bpe_c` can be imported."""
    try:
        importlib.import_module("pybpe._bpe_c")
    except ImportError:
        return False
    return True


def available():
    """The concrete backends usable here, fastest first."""
    return (["c"] if c_available() else []) + ["python"]


def resolve(name=None):
    """Turn "auto"/"c"/"python"/None into "c" or "python", or raise."""
    if name is None:
        name = os.environ.get("PYBPE_BACKEND", "auto") or "auto"
    if name not in NAMES:
        raise ValueError("backend must be one of %s, not %r" % (", ".join(map(repr, NAMES)), name))
    if name == "python":
        return "python"
    if c_available():
        return "c"
    if name == "c":
        raise ImportError(
            "pybpe's C extension (pybpe._bpe_c) is not built here; reinstall with a C "
            "compiler available, or use backend='python'"
        )
    _warn_once()
    return "python"


def get(name=None):
    """The backend for `name` (see resolve): pybpe.core.native or
    pybpe.core.spec, each holding the whole interface (symbol table to rank
    table).  Imported here, on demand: the C extension is optional."""
    resolved = resolve(name)
    return importlib.import_module("pybpe.core.native" if resolved == "c" else "pybpe.core.spec")


def _warn_once():
    global _warned
    if _warned or os.environ.get("PYBPE_NO_EXTENSION", "") not in ("", "0"):
        return
    _warned = True
    warnings.warn(
        "pybpe's C extension is not available; using the pure-Python backend "
        "(identical results, slower)",
        RuntimeWarning,
        stacklevel=_caller_level(),
    )


def _caller_level():
    # The stacklevel of the first frame outside the pybpe package, counted
    # from _warn_once's caller's warn call: the warning names the user's line
    # (BPETokenizer(), get_encoding(...)), not pybpe's.
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(2), 2  # the frame of _warn_once is level 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level
