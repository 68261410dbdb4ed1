"""Whole-job training on Shakespeare at 8,000 entries: pybpe C / Python vs the peers.

"Whole job" is text to trained tokenizer: word counting included.  Before
anything is timed, pybpe's C and Python backends must learn the same merges.
Peers (HF tokenizers with WhitespaceSplit, sentencepiece BPE, YouTokenToMe)
run when installed, single-threaded, on the same file; they are an optional
extra, never a dependency.  A second group is the byte-level job (UTF-8
bytes, the GPT-2 pattern): pybpe's C backend against gigatoken.train_bpe and
rustbpe (the `bench` extra; skipped when absent; both use rayon, so run with
RAYON_NUM_THREADS=1 for one thread -- `make bench` does not set it).  For wall time and peak RSS with each trainer in
its own process, and the 30,000 size, see tools/bench_train_table.py.
"""
import os
import tempfile

import pytest

import pybpe
from pybpe import core as backends

from conftest import shared_path

VOCAB = 8000
BACKENDS = backends.available()
GROUP = "train Shakespeare to %d entries, whole job, single thread" % VOCAB


@pytest.fixture(scope="module")
def path(shakespeare_text):
    return shared_path("shakespeare.txt")


def train_pybpe(path, backend):
    tok = pybpe.BPETokenizer(vocab_size=VOCAB, backend=backend)
    with open(path, encoding="utf-8") as f:
        tok.train(f)
    return tok


@pytest.fixture(scope="module")
def agreed(path):
    merges = {b: train_pybpe(path, b).merges for b in BACKENDS}
    assert all(m == merges[BACKENDS[0]] for m in merges.values()), "backends disagree"
    return merges


@pytest.mark.parametrize("backend", BACKENDS)
def test_pybpe(benchmark, backend, path, agreed):
    benchmark.group = GROUP
    benchmark.extra_info["MB/s"] = None
    tok = benchmark.pedantic(train_pybpe, args=(path, backend), rounds=1 if backend == "python" else 3)
    assert tok.merges == agreed[backend]
    benchmark.extra_info["MB/s"] = os.path.getsize(path) / 1e6 / benchmark.stats.stats.median


def test_hf_whitespace_split(benchmark, path):
    tokenizers = pytest.importorskip("tokenizers")
    os.environ.setdefault("RAYON_NUM_THREADS", "1")  # effective only before the pool starts
    benchmark.group = GROUP

    def run():
        tok = tokenizers.Tokenizer(tokenizers.models.BPE())
        tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
        tok.train([path], tokenizers.trainers.BpeTrainer(vocab_size=VOCAB, show_progress=False))
        return tok

    assert benchmark.pedantic(run, rounds=3).get_vocab_size() == VOCAB


def test_sentencepiece_bpe(benchmark, path):
    spm = pytest.importorskip("sentencepiece")
    benchmark.group = GROUP
    with tempfile.TemporaryDirectory() as tmp:
        def run():
            spm.SentencePieceTrainer.train(
                input=path, model_prefix=os.path.join(tmp, "m"), vocab_size=VOCAB, model_type="bpe",
                character_coverage=1.0, hard_vocab_limit=False, input_sentence_size=0,
                num_threads=1, minloglevel=2)
        benchmark.pedantic(run, rounds=3)
        assert spm.SentencePieceProcessor(model_file=os.path.join(tmp, "m.model")).get_piece_size() == VOCAB


def test_youtokentome(benchmark, path):
    yttm = pytest.importorskip("youtokentome")
    benchmark.group = GROUP
    with tempfile.TemporaryDirectory() as tmp:
        bpe = benchmark.pedantic(yttm.BPE.train, kwargs=dict(
            data=path, model=os.path.join(tmp, "m.yttm"), vocab_size=VOCAB, n_threads=1), rounds=3)
        assert bpe.vocab_size() == VOCAB


BYTE_GROUP = "train Shakespeare to %d byte-level entries (gpt2 pattern), whole job" % VOCAB


def test_pybpe_byte_level(benchmark, path):
    if "c" not in BACKENDS:
        pytest.skip("the C backend is not built")
    benchmark.group = BYTE_GROUP

    def run():
        tok = pybpe.BPETokenizer(vocab_size=VOCAB, byte_level=True, pretokenizer="gpt2", backend="c")
        with open(path, encoding="utf-8") as f:
            tok.train(f)
        return tok

    assert benchmark.pedantic(run, rounds=3).vocab_size == VOCAB


def test_gigatoken_byte_level(benchmark, path):
    gigatoken = pytest.importorskip("gigatoken")
    benchmark.group = BYTE_GROUP
    ranks, _ = benchmark.pedantic(gigatoken.train_bpe, args=(path, VOCAB, []), rounds=3)
    assert len(ranks) == VOCAB


def test_rustbpe_byte_level(benchmark, path):
    rustbpe = pytest.importorskip("rustbpe")
    from pybpe.patterns import PRESETS

    benchmark.group = BYTE_GROUP

    def run():
        tok = rustbpe.Tokenizer()
        with open(path, encoding="utf-8") as f:
            tok.train_from_iterator(f, VOCAB, pattern=PRESETS["gpt2"])
        return tok

    assert benchmark.pedantic(run, rounds=3).vocab_size == VOCAB
