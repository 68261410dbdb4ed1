"""encode_ordinary throughput: pybpe C, pybpe Python and tiktoken, same corpus;
encode_ordinary_batch on 1 and 2 threads (tools/bench_encode_table.py adds
peers and corpora).

Each benchmark first checks its IDs equal the reference's (pybpe's own C or
Python backend, and tiktoken when installed -- built offline from pybpe's
shipped rank files), then times one single-threaded encode_ordinary of the
corpus and reports bytes/second in extra_info.  The corpus is
shared/data/shakespeare.txt (PYBPE_SHAKESPEARE overrides; skipped when
absent).  Run: pytest benchmarks/bench_encoding.py --benchmark-only
"""
import os

import pytest

from pybpe import core as backends
from pybpe.registry import get_encoding

SHAKESPEARE = os.environ.get("PYBPE_SHAKESPEARE",
                             os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "shakespeare.txt"))
NAMES = ["gpt2", "cl100k_base", "o200k_base"]
_REFERENCE = {}


@pytest.fixture(scope="module")
def corpus():
    if not os.path.exists(SHAKESPEARE):
        pytest.skip("shakespeare.txt not found (set PYBPE_SHAKESPEARE)")
    with open(SHAKESPEARE, encoding="utf-8") as f:
        return f.read()


def _reference(name, text):
    # One correct answer per encoding, computed once: pybpe's fastest backend.
    if name not in _REFERENCE:
        _REFERENCE[name] = get_encoding(name, backend=backends.available()[0]).encode_ordinary(text)
    return _REFERENCE[name]


def _tiktoken(name):
    tiktoken = pytest.importorskip("tiktoken")
    from pybpe.formats import load_tiktoken_bpe

    enc = get_encoding(name)
    path = os.path.join(os.path.dirname(__file__), "..", "pybpe", "data", name + ".tiktoken")
    return tiktoken.Encoding(name, pat_str=enc.pat_str, mergeable_ranks=load_tiktoken_bpe(path),
                             special_tokens=enc.special_tokens)


def _run(benchmark, encode, name, text, label):
    assert encode(text) == _reference(name, text), "%s gives different IDs" % label
    benchmark.group = "encode_ordinary " + name
    benchmark.extra_info["implementation"] = label
    benchmark.extra_info["bytes"] = len(text.encode("utf-8"))
    benchmark.pedantic(encode, args=(text,), rounds=1, iterations=1, warmup_rounds=0)
    seconds = benchmark.stats.stats.min
    benchmark.extra_info["bytes_per_second"] = benchmark.extra_info["bytes"] / seconds
    benchmark.extra_info["MB_per_second"] = round(benchmark.extra_info["bytes"] / seconds / 1e6, 2)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("backend", backends.available())
def test_pybpe(benchmark, corpus, name, backend):
    enc = get_encoding(name, backend=backend)
    _run(benchmark, enc.encode_ordinary, name, corpus, "pybpe-" + backend)


@pytest.mark.parametrize("name", NAMES)
def test_tiktoken(benchmark, corpus, name):
    enc = _tiktoken(name)
    _run(benchmark, enc.encode_ordinary, name, corpus, "tiktoken")


def _documents(text, n=1000):
    step = max(1, len(text) // n)
    return [text[i:i + step] for i in range(0, len(text), step)]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_pybpe_c_batch(benchmark, corpus, name, threads):
    """encode_ordinary_batch of Shakespeare cut into ~1,000 documents: the
    2-thread figure over the 1-thread one is the scaling issue 5 asks for."""
    if "c" not in backends.available():
        pytest.skip("the C backend is not built")
    enc = get_encoding(name, backend="c")
    docs = _documents(corpus)
    assert enc.encode_ordinary_batch(docs, num_threads=threads) == [enc.encode_ordinary(d) for d in docs]
    benchmark.group = "encode_ordinary_batch " + name
    benchmark.extra_info["implementation"] = "pybpe-c %d threads" % threads
    nbytes = len(corpus.encode("utf-8"))
    benchmark.pedantic(enc.encode_ordinary_batch, args=(docs,), kwargs={"num_threads": threads},
                       rounds=5, iterations=1, warmup_rounds=0)
    benchmark.extra_info["MB_per_second"] = round(nbytes / benchmark.stats.stats.median / 1e6, 2)
