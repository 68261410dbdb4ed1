"""tools/bench_encode_table.py times every encoder on a str of its own.

CPython keeps a str's UTF-8 inside the str once PyUnicode_AsUTF8AndSize is
called on it, as the PyO3-built peers (tiktoken, gigatoken, fastokens) do.
When the table handed every encoder the same str, the first of them paid for
the UTF-8 of a slice with any character beyond ASCII and the later ones read
it free.  These tests check what the table relies on: each copy is a new
str, equal to the slice, holding no UTF-8 of its own yet (its size is then
exactly what its kind says: pybpe._utf8.kind reads it).  Skipped where tools/
is not beside the tests (CI's copy of them) or pybpe._utf8 is not built.
"""
import ctypes
import importlib.util
import os
import sys

import pytest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "bench_encode_table.py")


@pytest.fixture(scope="module")
def table():
    if not os.path.exists(TOOL):
        pytest.skip("tools/bench_encode_table.py is not beside these tests")
    # The tool sets a few environment variables and sys.path for its own run.
    saved_env, saved_path = dict(os.environ), list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location("bench_encode_table", TOOL)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path
    return module


def _cache_utf8(text):
    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    as_utf8.restype, as_utf8.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_void_p]
    as_utf8(text, None)


@pytest.mark.parametrize("odd, kind", [("\u00e6", 1), ("\u2014", 2), ("\U0001f600", 4)])
def test_each_encoder_gets_a_str_without_anothers_utf8(table, odd, kind):
    utf8 = pytest.importorskip("pybpe._utf8", reason="pybpe._utf8 is not built")
    text = "The quick brown fox jumps over the lazy dog. " * 2000 + odd
    _cache_utf8(text)  # as a peer's call would
    assert utf8.kind(text) == 0  # larger than its kind says: it holds its UTF-8
    labels = ["pybpe C", "tiktoken", "gigatoken, list", "gigatoken, NumPy array"]
    copies = table.own_copies(text, labels)
    assert list(copies) == labels
    assert len({id(copy) for copy in copies.values()} | {id(text)}) == len(labels) + 1
    for copy in copies.values():
        assert copy == text
        assert utf8.kind(copy) == kind  # no UTF-8 inside it yet


def test_short_texts_are_passed_as_they_are(table):
    assert table.own_copies("", ["a"]) == {"a": ""}
    assert table.own_copies("x", ["a", "b"]) == {"a": "x", "b": "x"}
