"""The twin promise, checked on the source: every cffi wrapper module has a
pure-Python twin with the same public names, and each class the same public
methods and properties with the same parameters (names, order, defaults).
Read from the files' syntax trees, so this runs without the C extension too.
Then the ranks twins' whole interface, called on both backends, gives the
same results (the core twins' results are compared in test_backends.py).
"""
import ast
import importlib
import os
from array import array

import pytest
import regex

import pybpe
from pybpe import _backend, _unicode, patterns

BACKENDS = _backend.available()
PACKAGE = os.path.dirname(pybpe.__file__)

# (C wrapper, its Python twin), as paths inside the package.
TWINS = [("_ccore.py", "_pycore.py"), ("_cranks.py", "_pyranks.py")]
# Names only the Python side has on purpose: the merge reference that the
# file formats and Encoding's completions use (the C side has no caller for it).
SPEC_ONLY = {"byte_pair_merge"}


def _signature(fn):
    args = fn.args
    names = [a.arg for a in args.posonlyargs + args.args]
    defaults = [ast.unparse(d) for d in args.defaults]
    kwonly = [(a.arg, None if d is None else ast.unparse(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    kind = "property" if any(ast.unparse(d) == "property" for d in fn.decorator_list) else "method"
    return kind, names, defaults, kwonly, args.vararg is not None, args.kwarg is not None


def public_api(path):
    """{name: description} of a module's public names: functions and classes
    with their signatures (a class: {method: signature}), constants as
    'constant'."""
    tree = ast.parse(open(os.path.join(PACKAGE, path), encoding="utf-8").read())
    api = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            api[node.name] = _signature(node)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            api[node.name] = {m.name: _signature(m) for m in node.body
                              if isinstance(m, ast.FunctionDef) and (m.name == "__init__" or not m.name.startswith("_"))}
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and not target.id.startswith("_"):
                    api[target.id] = "constant"
    return api


@pytest.mark.parametrize("native, spec", TWINS, ids=[n for n, _ in TWINS])
def test_twins_have_the_same_public_names_and_signatures(native, spec):
    c_api, py_api = public_api(native), public_api(spec)
    assert set(c_api) == set(py_api) - SPEC_ONLY, (native, spec)
    for name, c_desc in c_api.items():
        assert py_api[name] == c_desc, (name, native, spec)


def test_public_api_reads_classes_methods_and_constants():
    # The comparison above is only as good as this reader.
    api = public_api("_pyranks.py")
    assert api["PRESET_GPT2"] == "constant"
    assert api["split"] == ("method", ["text", "preset"], [], [], False, False)
    assert api["RankTable"]["__init__"][1] == ["self", "tokens", "ids", "merges", "whole_piece"]
    assert api["RankTable"]["pair_count"][0] == "property"
    assert "_ids_of_bytes" not in api["RankTable"]


# -- the ranks interface on both backends -----------------------------------


@pytest.fixture(params=BACKENDS)
def ranks(request):
    return importlib.import_module("pybpe._cranks" if request.param == "c" else "pybpe._pyranks")


TEXTS = ["", "Hello world's  2024!!\n\n x", "naïve café — 東京 🙂 a\u00a0b", "a" * 300 + " end"]


@pytest.mark.parametrize("preset_name, pattern", [("PRESET_GPT2", patterns.GPT2), ("PRESET_CL100K", patterns.CL100K),
                                                  ("PRESET_O200K", patterns.O200K)])
def test_split_is_the_pattern(ranks, preset_name, pattern):
    preset = getattr(ranks, preset_name)
    for text in TEXTS:
        assert ranks.split(text, preset) == _unicode.split(regex.compile(pattern), text)


def test_encode_paths_agree_on_both_backends(ranks):
    enc = pybpe.get_encoding("gpt2", backend="python")
    tokens = list(enc.mergeable_ranks)
    table = ranks.RankTable(tokens, [enc.mergeable_ranks[t] for t in tokens])
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


def naive_pair_count(tokens):
    """Splits of a token into two parts, a part being a token or one byte."""
    def part(x):
        return len(x) == 1 or x in tokens
    return sum(1 for t in tokens for s in range(1, len(t)) if part(t[:s]) and part(t[s:]))


def test_pair_count_is_the_same_table_on_both_backends(ranks):
    tokens = [b"a", b"b", b"c", b"ab", b"abc", b"bc", b"\xff\xfe", b"ca"]
    assert ranks.RankTable(tokens, range(len(tokens))).pair_count == naive_pair_count(tokens)
    merges = [(0, 1, 3), (3, 2, 4), (0, 1, 3), (1, 2, 5)]
    table = ranks.RankTable(tokens, range(len(tokens)), merges=merges, whole_piece=False)
    assert table.pair_count == 3  # a pair listed twice is one entry


def test_compiled_says_which_side_runs_without_the_gil(ranks):
    assert ranks.COMPILED is (ranks.__name__ != "pybpe._pyranks")
