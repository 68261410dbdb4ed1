"""C versus pure-Python backends: training and encoding, chapter flavour.

Both run in the same session on the same 1 MB slice of Shakespeare, so their
ratio is meaningful even on a noisy machine.  Before timing, each benchmark
asserts that the two backends produce identical merges / IDs.
Run with `make bench`; the MB/s figures are in each row's extra_info.
"""
import pytest

import pybpe
from pybpe import core as backends

BACKENDS = backends.available()
SLICE = 1_000_000       # characters of Shakespeare used for both benchmarks
TRAIN_VOCAB = 2000


@pytest.fixture(scope="module")
def corpus(shakespeare_text):
    return shakespeare_text[:SLICE].splitlines()


@pytest.fixture(scope="module")
def trained(corpus):
    toks = {}
    for name in BACKENDS:
        tok = pybpe.BPETokenizer(vocab_size=TRAIN_VOCAB, backend=name)
        tok.train(corpus)
        toks[name] = tok
    first = toks[BACKENDS[0]]
    for tok in toks.values():
        assert tok.merges == first.merges, "backends disagree: no point timing them"
    return toks


@pytest.mark.parametrize("backend", BACKENDS)
def test_train(benchmark, backend, corpus, trained):
    benchmark.group = "train %d-entry vocab, 1 MB Shakespeare" % TRAIN_VOCAB
    tok = pybpe.BPETokenizer(vocab_size=TRAIN_VOCAB, backend=backend)
    benchmark.pedantic(tok.train, args=(corpus,), rounds=3 if backend == "python" else 5)
    assert tok.merges == trained[backend].merges
    benchmark.extra_info["MB/s"] = round(sum(map(len, corpus)) / 1e6 / benchmark.stats["median"], 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_encode(benchmark, backend, corpus, trained):
    benchmark.group = "encode 1 MB Shakespeare, cold word cache"
    tok = trained[backend]
    text = "\n".join(corpus)
    expected = trained[BACKENDS[0]].encode(text)

    def cold_encode():
        tok._state.word_cache.clear()  # time the merging, not dictionary hits
        return tok.encode(text)

    ids = benchmark.pedantic(cold_encode, rounds=5)
    assert ids == expected
    benchmark.extra_info["MB/s"] = round(len(text.encode()) / 1e6 / benchmark.stats["median"], 2)
