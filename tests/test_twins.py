"""The twin promise, checked on the source: the C backend (pybpe/core/native/)
and the pure-Python one (pybpe/core/spec/) export the same names, and each
the same signature -- functions' parameters (names, order, defaults), each
class's public methods and properties.  Read from the files' syntax trees,
so this runs without the C extension too.
Then the ranks twins' whole interface, called on both backends, gives the
same results (the core twins' results are compared in test_backends.py).
"""
import ast
import os
from array import array

import pytest
import regex

import pybpe
from pybpe import _unicode, patterns
from pybpe import core as backends
from conftest import naive_merge, naive_pair_count

BACKENDS = backends.available()
CORE = os.path.join(os.path.dirname(pybpe.__file__), "core")


def _files(side):
    folder = os.path.join(CORE, side)
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".py"))


def _signature(fn):
    args = fn.args
    names = [a.arg for a in args.posonlyargs + args.args]
    defaults = [ast.unparse(d) for d in args.defaults]
    kwonly = [(a.arg, None if d is None else ast.unparse(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    kind = "property" if any(ast.unparse(d) == "property" for d in fn.decorator_list) else "method"
    return kind, names, defaults, kwonly, args.vararg is not None, args.kwarg is not None


def _exported(side):
    """The names pybpe.core.<side>/__init__.py lists in __all__."""
    tree = ast.parse(open(os.path.join(CORE, side, "__init__.py"), encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__all__"]:
            return sorted(ast.literal_eval(node.value))
    raise AssertionError("no __all__ in pybpe/core/%s/__init__.py" % side)


def definitions(paths):
    """{name: description} of the public names the files define: functions
    with their signatures, classes as {method: signature} (public methods
    and properties, and __init__), constants as 'constant'."""
    api = {}
    for path in paths:
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                api[node.name] = _signature(node)
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                api[node.name] = {m.name: _signature(m) for m in node.body if isinstance(m, ast.FunctionDef)
                                  and (m.name == "__init__" or not m.name.startswith("_"))}
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and not target.id.startswith("_"):
                        api[target.id] = "constant"
    return api


def test_both_backends_export_the_same_names():
    assert _exported("native") == _exported("spec")
    assert "RankTable" in _exported("spec") and "Trainer" in _exported("spec")


@pytest.mark.parametrize("name", _exported("spec"))
def test_each_name_has_the_same_signature_in_both(name):
    native, spec = definitions(_files("native")), definitions(_files("spec"))
    assert name in native and name in spec, name
    assert native[name] == spec[name], name


def test_definitions_reads_classes_methods_and_constants():
    # The comparison above is only as good as this reader.
    api = definitions([os.path.join(CORE, "spec", "ranks.py")])
    assert api["PRESET_GPT2"] == "constant"
    assert api["split"] == ("method", ["text", "preset"], [], [], False, False)
    assert api["RankTable"]["__init__"][1] == ["self", "tokens", "ids", "merges", "whole_piece"]
    assert api["RankTable"]["pair_count"][0] == "property"
    assert "_ids_of_bytes" not in api["RankTable"]


def test_the_exports_are_the_modules_names():
    # __all__ is what the switch hands out; check it against the modules.
    for side in BACKENDS:
        module = backends.get(side)
        assert sorted(module.__all__) == _exported("native" if side == "c" else "spec")
        assert all(hasattr(module, name) for name in module.__all__)


# -- the ranks interface on both backends -----------------------------------


@pytest.fixture(params=BACKENDS)
def ranks(request):
    return backends.get(request.param)


TEXTS = ["", "Hello world's  2024!!\n\n x", "naïve café — 東京 🙂 a\u00a0b", "a" * 300 + " end"]


@pytest.mark.parametrize("preset_name, pattern", [("PRESET_GPT2", patterns.GPT2), ("PRESET_CL100K", patterns.CL100K),
                                                  ("PRESET_O200K", patterns.O200K)])
def test_split_is_the_pattern(ranks, preset_name, pattern):
    preset = getattr(ranks, preset_name)
    for text in TEXTS:
        assert ranks.split(text, preset) == _unicode.split(regex.compile(pattern), text)


def test_encode_paths_agree_on_both_backends(ranks):
    enc = pybpe.get_encoding("gpt2", backend="python")
    mergeable = enc.mergeable_ranks  # (a copy per read)
    table = ranks.RankTable(list(mergeable), list(mergeable.values()))
    preset = ranks.PRESET_GPT2
    want = [enc.encode_ordinary(t) for t in TEXTS]
    assert [table.encode_text(t, preset) for t in TEXTS] == want
    assert table.encode_texts(TEXTS, preset) == want
    assert table.encode_texts_split([t.encode() for t in TEXTS], preset) == want
    assert [table.split_text(t, preset) for t in TEXTS] == [ranks.split(t, preset) for t in TEXTS]
    for text, ids in zip(TEXTS, want):
        data = text.encode()
        assert table.encode_to_buffer(data, preset).tolist() == ids
        assert table.encode_to_buffer(data, preset, 2).tolist() == ids
        assert table.encode_to_buffer(data, preset, 2).itemsize == 2
        out = array("I" if array("I").itemsize == 4 else "L", [7]) * (len(data) + 3)
        n = table.encode_text_into(data, preset, out)
        assert (n, out[:n].tolist()) == (len(ids), ids)
        assert out[n:].tolist() == [7] * (len(data) + 3 - n) if data else True
    with pytest.raises(ValueError, match="holds 1 IDs"):
        table.encode_text_into(b"hello", preset, array("I" if array("I").itemsize == 4 else "L", [0]))
    with pytest.raises(OverflowError, match="16 bits"):
        ranks.RankTable([b"a", b"b"], [0, 70000]).encode_to_buffer(b"ab", preset, 2)


def test_pair_count_is_the_same_table_on_both_backends(ranks):
    # One pair per token merging makes: "abc" is made by (ab, c), as a b c
    # merges (a, b) first (rank 3 < 5), so its split (a, bc) is left out.
    tokens = [b"a", b"b", b"c", b"ab", b"abc", b"bc", b"\xff\xfe", b"ca"]
    assert ranks.RankTable(tokens, range(len(tokens))).pair_count == 5
    assert naive_pair_count(dict(zip(tokens, range(len(tokens))))) == 5
    # "abcd" is never made: b c merges first and a bc d is stuck, so its one
    # split (ab, cd) is left out too.
    tokens = [b"a", b"b", b"c", b"d", b"bc", b"ab", b"cd", b"abcd"]
    assert ranks.RankTable(tokens, range(len(tokens))).pair_count == 3
    assert naive_pair_count(dict(zip(tokens, range(len(tokens))))) == 3
    merges = [(0, 1, 3), (3, 2, 4), (0, 1, 3), (1, 2, 5)]
    table = ranks.RankTable(tokens, range(len(tokens)), merges=merges, whole_piece=False)
    assert table.pair_count == 3  # a pair listed twice is one entry


def test_compiled_says_which_side_runs_without_the_gil(ranks):
    assert ranks.COMPILED is (ranks.__name__ == "pybpe.core.native")


def _gpt2_table(ranks):
    """A RankTable of gpt2 on `ranks`' backend, and the IDs of TEXTS."""
    enc = pybpe.get_encoding("gpt2", backend="python")
    mergeable = enc.mergeable_ranks
    table = ranks.RankTable(list(mergeable), list(mergeable.values()))
    return table, [enc.encode_ordinary(t) for t in TEXTS]


def test_encode_joined_is_encode_texts_split_on_both_backends(ranks):
    # the batch entry point that takes its texts joined (pybpe._unicode.joined,
    # what encode_ordinary_batch passes)
    table, want = _gpt2_table(ranks)
    data, starts = _unicode.joined(TEXTS)
    assert table.encode_joined(data, starts, len(TEXTS), ranks.PRESET_GPT2) == want
    two = _unicode.joined(TEXTS[:2])
    assert table.encode_joined(two[0], two[1], 2, ranks.PRESET_GPT2) == want[:2]
    with pytest.raises(ValueError):  # the texts must be all of data
        table.encode_joined(data, starts, 2, ranks.PRESET_GPT2)
    assert table.encode_joined(b"", _unicode.joined([])[1], 0, ranks.PRESET_GPT2) == []


def test_encode_joined_to_buffer_is_encode_joined_end_to_end_on_both_backends(ranks):
    # encode_file's path for many documents per call: the same IDs as
    # encode_joined, end to end in an array of the file's width, and where
    # each text's end; 2-byte IDs refuse what does not fit.
    table, want = _gpt2_table(ranks)
    data, starts = _unicode.joined(TEXTS)
    ends = [sum(len(w) for w in want[:i + 1]) for i in range(len(want))]
    for itemsize in (2, 4):
        ids, got_ends = table.encode_joined_to_buffer(data, starts, len(TEXTS), ranks.PRESET_GPT2, itemsize)
        assert ids.itemsize == itemsize and ids.tolist() == [i for w in want for i in w] and got_ends == ends
    ids, got_ends = table.encode_joined_to_buffer(b"", _unicode.joined([])[1], 0, ranks.PRESET_GPT2, 2)
    assert ids.tolist() == [] and got_ends == []
    big = ranks.RankTable([bytes([b]) for b in range(256)] + [b"ab"], list(range(256)) + [70_000])
    data, starts = _unicode.joined(["ab", "a"])
    assert big.encode_joined_to_buffer(data, starts, 2, ranks.PRESET_GPT2, 4)[0].tolist() == [70_000, 97]
    with pytest.raises(OverflowError):
        big.encode_joined_to_buffer(data, starts, 2, ranks.PRESET_GPT2, 2)
