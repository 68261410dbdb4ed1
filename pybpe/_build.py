"""cffi build script for pybpe's C core (API mode).

`setup.py` names `ffibuilder` in `cffi_modules`; running this file directly
builds the extension in place through setup.py (handy while editing csrc/),
and `python pybpe/_build.py --cdef` prints the declarations cffi is given.
Every C file in csrc/ and csrc/py/ (not the tests or examples) is compiled
into one module, `pybpe._bpe_c`.

The declarations Python may call are generated from the public headers, one
per layer of the C (csrc/bpe.h says which): each marks the part cffi reads
between a line `/* cffi-begin ... */` and a line `/* cffi-end */`.  From
those regions the comments are dropped and every `#define NAME value`
becomes `#define NAME ...`, so cffi takes the value from the compiled header
(API mode).  The module's C source #includes exactly those headers.

Why generate rather than keep .cdef files and test them against the headers:
with a second copy, every change to a signature is made twice, and a test
that compares the copies needs a C declaration parser that treats
formatting, comments and macro values the way the compiler does -- it can
only ever be as good as that parser.  Generated, there is one copy: the
header the C files are compiled against.  cffi parses the generated text
with its own parser when the extension is built, so anything it cannot read
fails the build, and the compiler checks the declarations against the
definitions.  What a marked region must not hold is C that cffi cannot
declare (static inline functions, function-like macros): such helpers stay
outside the markers.  tests/test_cdef.py checks that every public bpe_*
function the C defines is declared in a marked region.
"""
import glob
import os
import re

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join(os.path.dirname(HERE), "csrc")

_BEGIN = re.compile(r"^/\* cffi-begin\b.*\*/\s*$")
_END = re.compile(r"^/\* cffi-end\b.*\*/\s*$")
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+\S.*$", re.M)


def _relative(path):
    # setuptools wants source paths relative to the project root.
    return os.path.relpath(path, os.path.dirname(HERE))


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _files(pattern):
    # csrc/ itself, then csrc/py/ (the only C that knows CPython).
    return sorted(glob.glob(os.path.join(CSRC, pattern))) + sorted(glob.glob(os.path.join(CSRC, "py", pattern)))


def marked_regions(path):
    """The text of every cffi-begin / cffi-end region of the header at `path`
    (a list, empty for a header without one).  ValueError, naming the file and
    line, for a region that does not close or an end without a begin."""
    regions, current, start = [], None, 0
    for number, line in enumerate(_read(path).splitlines(), 1):
        if _BEGIN.match(line):
            if current is not None:
                raise ValueError("%s:%d: cffi-begin inside the region opened at line %d" % (path, number, start))
            current, start = [], number
        elif _END.match(line):
            if current is None:
                raise ValueError("%s:%d: cffi-end without a cffi-begin" % (path, number))
            regions.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    if current is not None:
        raise ValueError("%s:%d: cffi-begin without a cffi-end" % (path, start))
    return regions


def cdef_of(text):
    """A marked region as cffi declarations: no comments (each keeps its line
    breaks, so cffi's error lines still count), and every macro's value left
    to the compiler.  Example: '#define BPE_X 3  /* three */' -> '#define BPE_X ...'."""
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return _DEFINE.sub(r"#define \1 ...", text)


def public_headers():
    """The headers Python calls into, in build order: the public header of
    each layer (those with a marked region)."""
    return [h for h in _files("*.h") if marked_regions(h)]


def cdefs():
    """(header name relative to csrc/, its declarations) for every public
    header."""
    return [(os.path.relpath(h, CSRC).replace(os.sep, "/"),
             "\n".join(cdef_of(r) for r in marked_regions(h)))
            for h in public_headers()]


ffibuilder = FFI()
for _name, _text in cdefs():
    try:  # one call per header, so a parse error can name it
        ffibuilder.cdef(_text)
    except Exception as exc:
        raise type(exc)("csrc/%s, in its cffi-begin/cffi-end region: %s" % (_name, exc)) from exc
ffibuilder.set_source(
    "pybpe._bpe_c",
    "".join('#include "%s"\n' % os.path.relpath(h, CSRC).replace(os.sep, "/") for h in public_headers()),
    sources=[_relative(p) for p in _files("*.c")],
    include_dirs=[_relative(CSRC)],
    # The portable floor; setup.py's build_ext raises it to -O3 where the
    # compiler takes it (see the notes below).
    extra_compile_args=["-std=c99", "-O2"] if os.name != "nt" else [],
)

# Compiler flags, measured for issue #13 (gcc 12, x86-64, a loaded 2-core
# machine).  Ir: callgrind instruction counts of the encode calls (a fresh
# Encoding warmed on 100 KB, then encode_to_numpy of one unseen 0.5 MB slice
# each of prose, Python and CJK); CPU: the sum over gpt2/cl100k/o200k x
# prose/python/cjk of per-call CPU-time medians, 7 alternating processes
# each; train: Ir of byte-level training, 1 MB of Shakespeare to 3,000.
#   on top of -O2          gpt2 Ir    o200k Ir   CPU ms   train Ir
#   (nothing)              139.28 M   151.92 M   57.4     143.65 M
#   -O3 (kept: setup.py)   -2.9 %     -2.1 %     -0.8 %   -0.4 %
#   -fvisibility=hidden    -0.0 %     -0.0 %              -0.3 %
#   -flto                  -0.5 %     -0.0 %     +1.0 %   -0.1 %
#   -fvisibility=hidden -flto    +0.2 %  +0.7 %
#   -O3 -fvisibility=hidden -flto  -2.3 %        +1.1 %
#   unity build of the encode path  +0.8 %
# Hidden visibility removes the PLT jump of the few calls between files (one
# per piece at most: nothing to see); LTO inlines little that the files do
# not already inline through their headers.  The unity build (encode_text,
# pretok, ranks, piece_cache and util as one unit) is no faster, and the
# whole of csrc/ does not fit one unit without renames (symtab.c and
# wordpiece.c reuse trainer.c's static names).  CPU differences below ~2 %
# are within this machine's noise; -O3 is kept for its steady instruction
# saving on every encoding.

if __name__ == "__main__":
    import subprocess
    import sys

    if sys.argv[1:] == ["--cdef"]:
        for name, text in cdefs():
            print("/* from csrc/%s */\n%s" % (name, re.sub(r"\n\s*\n+", "\n", text).strip()))
        sys.exit(0)
    # Build in place through setup.py, so a direct run and `pip install`
    # compile the same sources with the same flags.
    sys.exit(subprocess.call([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                             cwd=os.path.dirname(HERE)))
