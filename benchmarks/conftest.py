"""Benchmark fixtures: the shared corpus (skipping cleanly without it), and
the peers built offline from pybpe's shipped rank files (each skipping the
benchmark when its package is absent).

Benchmarks live apart from tests/ so `make test` stays quick; `make bench`
runs them.  Each benchmark checks that the backends it compares give the same
output before it times anything.
"""
import os

import pytest

SHARED_DATA = os.environ.get("PYBPE_SHARED_DATA") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")


def shared_path(name):
    return os.path.join(SHARED_DATA, name)


@pytest.fixture(scope="session")
def shakespeare_text():
    path = shared_path("shakespeare.txt")
    if not os.path.exists(path):
        pytest.skip("shared corpus %s is absent" % path)
    with open(path, encoding="utf-8") as f:
        return f.read()


def rank_file(name):
    """The path of pybpe's shipped rank file of encoding `name`."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pybpe", "data", name + ".tiktoken")


def tiktoken_encoding(name):
    """tiktoken's Encoding of `name`, from pybpe's rank file, pattern and
    special tokens."""
    tiktoken = pytest.importorskip("tiktoken")
    from pybpe.formats import load_tiktoken_bpe
    from pybpe.registry import get_encoding

    enc = get_encoding(name)
    return tiktoken.Encoding(name, pat_str=enc.pat_str, mergeable_ranks=load_tiktoken_bpe(rank_file(name)),
                             special_tokens=enc.special_tokens)


def gigatoken_tokenizer(name):
    """gigatoken's Tokenizer of `name` (its from_tiktoken, with its own
    pre-tokenizer of that name)."""
    gigatoken = pytest.importorskip("gigatoken")
    from pybpe.registry import get_encoding

    scheme = {"gpt2": "gpt2", "cl100k_base": "gpt4", "o200k_base": "o200k"}[name]
    return gigatoken.Tokenizer.from_tiktoken(rank_file(name), pretokenizer=scheme,
                                             special_tokens=get_encoding(name).special_tokens)


def fastokens_tokenizer(name):
    """fastokens' Tokenizer of `name` (its from_tiktoken, with pybpe's
    pattern)."""
    fastokens = pytest.importorskip("fastokens")
    from pybpe.registry import get_encoding

    enc = get_encoding(name)
    return fastokens.Tokenizer.from_tiktoken(rank_file(name), pattern=enc.pat_str, special_tokens=enc.special_tokens)
