"""The C's layers and its Python declarations, checked from the sources.

csrc/bpe.h names three layers: the book-level core (knows no text, Unicode
or Python), the text level (reads UTF-8 text), and the Python level
(csrc/py/, the only C that knows a CPython format).  Here each file of csrc/
is placed in one layer and may include only its own layer's headers and
those below it.  pybpe/_build.py generates the cffi declarations from the
public headers' cffi-begin / cffi-end regions; here every public bpe_*
function the C defines must be declared there, and what is declared must be
in the built library.  Needs the source tree (skips without it).
"""
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"

# Every file of the C library, by layer (csrc/tests and csrc/examples are not
# part of it).  A new file must be placed here.
LAYERS = {
    "core": {"bpe.h", "internal.h", "symtab.c", "words.c", "trainer.c", "merge.h", "merge.c", "merger.c",
             "pairmap.c", "util.c", "arena.c", "wordpiece.c", "train_core.h"},
    "text": {"text.h", "text_internal.h", "counter.c", "encode_text.c", "pretok.c", "unicode_tables.inc",
             "ranks.c", "ranks_internal.h", "ranks_build.c", "ranks_merge.c", "piece_cache.h", "piece_cache.c"},
    "py": {"py/idlists.h", "py/idlists.c"},
    # Not the library: pybpe._pylists, pybpe._utf8 and pybpe._ranks_file, CPython extensions of
    # their own (a cffi function cannot return a Python object, nor read a
    # str); they include only <Python.h> (pylists.c calls the encoder
    # through an address, by a copy of its type: see
    # test_pylists_calls_the_encoder_by_its_own_type).
    "pyext": {"pyext/pylists.c", "pyext/utf8.c", "pyext/ranks_file.c"},
}
# What each layer's files may #include (besides the standard headers).
MAY_INCLUDE = {
    "core": {"bpe.h", "internal.h", "merge.h", "train_core.h"},
    # (counter.c lays a counter's words out as the trainer's nodes: train_core.h, a core header)
    "text": LAYERS["text"] | {"bpe.h", "internal.h", "merge.h", "train_core.h"},
    "py": {"bpe.h", "idlists.h"},
    "pyext": set(),
}
# The files that must say in their opening comment that they are text level.
SAYS_TEXT_LEVEL = {"text.h", "text_internal.h", "counter.c", "encode_text.c", "pretok.c", "ranks.c",
                   "ranks_internal.h", "ranks_build.c", "ranks_merge.c",
                   "piece_cache.h", "piece_cache.c"}

pytestmark = pytest.mark.skipif(not (CSRC / "bpe.h").is_file(),
                                reason="csrc/ is not here (the tests run outside the source tree)")


def library_files():
    return sorted(p.relative_to(CSRC).as_posix() for p in CSRC.rglob("*")
                  if p.suffix in (".c", ".h", ".inc") and p.parts[len(CSRC.parts)] not in ("tests", "examples"))


def layer_of(name):
    return next(layer for layer, names in LAYERS.items() if name in names)


def text(name):
    return (CSRC / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def build():
    pytest.importorskip("cffi")
    spec = importlib.util.spec_from_file_location("pybpe_build_for_tests", ROOT / "pybpe" / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_file_has_one_layer():
    placed = [name for names in LAYERS.values() for name in names]
    assert len(placed) == len(set(placed))
    assert set(library_files()) == set(placed), "place every csrc file in LAYERS (and only those)"


@pytest.mark.parametrize("name", library_files())
def test_includes_stay_in_the_layer_or_below(name):
    quoted = re.findall(r'^\s*#\s*include\s+"([^"]+)"', text(name), re.M)
    allowed = MAY_INCLUDE[layer_of(name)]
    assert [q for q in quoted if Path(q).name not in allowed and q not in allowed] == []


def test_only_the_python_level_knows_marshal():
    # (bpe.h's description of the layers may name it; no code outside py/ and
    # pyext/, the Python level and the list-building extension, does.)
    assert [n for n in library_files() if n.endswith(".c") and layer_of(n) not in ("py", "pyext") and "marshal" in text(n).lower()] == []


@pytest.mark.parametrize("name", sorted(SAYS_TEXT_LEVEL))
def test_text_level_files_say_so(name):
    opening = text(name).split("*/", 1)[0]
    assert re.search(r"text[ -]level", opening, re.I), "%s: say 'text level' in the opening comment" % name


def _parameter_types(declaration):
    # The parameter types of a C declaration "... (params);", names dropped:
    # ["const bpe_ranks *", "int", ...].
    types = []
    for param in re.search(r"\(([^()]*)\)\s*;", declaration).group(1).split(","):
        tokens = re.findall(r"\w+|\*", param)
        if len(tokens) > 1 and tokens[-1] != "*" and tokens[-2] not in ("const", "unsigned", "signed"):
            tokens = tokens[:-1]  # the parameter's name
        types.append(" ".join(tokens))
    return types


def test_pylists_calls_the_encoder_by_its_own_type():
    # pylists.c calls bpe_ranks_encode_cached through the address cffi hands
    # it, by a function type it declares itself (it may not include
    # text.h); the two must stay the same type.
    header = re.search(r"int bpe_ranks_encode_cached\([^;]*;", text("text.h")).group(0)
    copy = re.search(r"typedef int \(\*pl_encode_cached\)\([^;]*;", text("pyext/pylists.c")).group(0)
    assert _parameter_types(header)[:3] == ["const bpe_ranks *", "bpe_piece_cache *", "int"]
    assert len(_parameter_types(header)) == 9
    assert _parameter_types(copy) == _parameter_types(header)
    for struct in ("bpe_ranks", "bpe_piece_cache"):
        assert "typedef struct %s %s;" % (struct, struct) in text("text.h")
        assert "typedef struct %s %s;" % (struct, struct) in text("pyext/pylists.c")
    # and bpe_ranks_encode, for encode_piece_ids
    header = re.search(r"int bpe_ranks_encode\([^;]*;", text("text.h")).group(0)
    copy = re.search(r"typedef int \(\*pl_encode_pieces\)\([^;]*;", text("pyext/pylists.c")).group(0)
    assert _parameter_types(header)[:2] == ["const bpe_ranks *", "const unsigned char *"]
    assert len(_parameter_types(header)) == 8
    assert _parameter_types(copy) == _parameter_types(header)


def defined_public_functions():
    """name -> file for every non-static bpe_* function defined in the C."""
    found = {}
    for name in library_files():
        if name.endswith(".c"):
            for m in re.finditer(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b(bpe_[a-z0-9]\w*)\s*\([^;{]*\)\s*\{",
                                 text(name), re.M):
                found[m.group(1)] = name
    return found


def declared_functions(build):
    return {m.group(1) for _, cdef in build.cdefs() for m in re.finditer(r"\b(bpe_\w+)\s*\(", cdef)}


def test_public_functions_are_declared_for_python(build):
    defined = defined_public_functions()
    assert len(defined) > 40  # the scan found the C's functions at all
    assert sorted(set(defined) - declared_functions(build)) == []
    assert sorted(declared_functions(build) - set(defined)) == []


def test_marked_regions_hold_only_what_cffi_reads(build):
    headers = build.public_headers()
    # one public header per layer
    assert sorted(Path(h).relative_to(CSRC).as_posix() for h in headers) == ["bpe.h", "py/idlists.h", "text.h"]
    for header in headers:
        for region in build.marked_regions(header):
            cdef = build.cdef_of(region)
            assert not re.search(r"\bstatic\b|\bbpe__\w+", cdef), header
            assert not re.search(r"#\s*define\s+\w+\s+(?!\.\.\.)\S", cdef), header


def test_cdef_of_leaves_values_to_the_compiler(build):
    assert build.cdef_of("#define BPE_X 3  /* three,\n   really */\nint bpe_f(void);") == \
        "#define BPE_X ...\n\nint bpe_f(void);"


def test_unclosed_region_names_the_file_and_line(build, tmp_path):
    header = tmp_path / "broken.h"
    header.write_text("/* cffi-begin: x */\nint bpe_f(void);\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.h:1: cffi-begin without a cffi-end"):
        build.marked_regions(str(header))
    header.write_text("int bpe_f(void);\n/* cffi-end */\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.h:2: cffi-end without a cffi-begin"):
        build.marked_regions(str(header))


def test_the_built_library_has_every_declaration(build):
    compiled = pytest.importorskip("pybpe._bpe_c", reason="the C extension is not built")
    assert sorted(f for f in declared_functions(build) if not hasattr(compiled.lib, f)) == []
