"""Batches shared by threads through one cursor (csrc/ranks.c,
bpe_ranks_encode_shared; pybpe/core/native/ranks.py, SharedBatch; what
Encoding.encode_ordinary_batch runs on 2+ threads): every text's IDs equal
encode_ordinary's, whatever share of the runs each worker takes, with the
cursor and with the fixed shares the C falls back to without atomics; the
lists of the texts done so far can be built while other workers go on.
The C self-test (csrc/tests/test_ranks.c, test_shared_batch) runs the same
on a toy table, also as built without atomics."""
import random
import threading

import pytest

from pybpe import _workers, core
from pybpe import encoding as encoding_module
from pybpe.encoding import Encoding
from pybpe.registry import get_encoding

from conftest import run_at_once, shakespeare

needs_c = pytest.mark.skipif("c" not in core.available(), reason="the C backend is not built")
NAMES = ["gpt2", "cl100k_base", "o200k_base"]
_FRESH = {}


def fresh(name, piece_cache=None):
    """A new C Encoding of a shipped encoding, with caches of its own."""
    key = (name, piece_cache)
    if key not in _FRESH:
        enc = get_encoding(name, backend="c")
        kwargs = {} if piece_cache is None else {"piece_cache": piece_cache}
        _FRESH[key] = Encoding(name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks,
                               special_tokens=enc.special_tokens, backend="c", **kwargs)
    return _FRESH[key]


def documents(seed):
    """Texts of every kind a batch meets: prose of random lengths, empty
    texts, non-ASCII, lone and paired surrogates, repeats and runs (ties in
    merging), and two texts longer than a run (BPE_BATCH_RUN_BYTES)."""
    rng = random.Random(seed)
    text = shakespeare()[seed * 50_000:(seed + 1) * 50_000 + 40_000]
    docs, pos = [], 0
    while pos < 50_000:
        step = rng.choice([0, 1, 7, 300, 2_000, 9_000])
        docs.append(text[pos:pos + step])
        pos += step
    docs[3:3] = [text[:40_000], "", "日本語のテキスト、한국어 텍스트 " * 40, "a\ud800b \udc00 \ud83d\ude00 é",
                 " " * 3_000, "aaaa" * 500, "!!!!....", text[:25_000]]
    rng.shuffle(docs)
    return docs


@pytest.fixture
def four_cpus(monkeypatch):
    # The threaded path on any machine, one CPU included.
    monkeypatch.setattr(_workers, "cpus", lambda: 4)


@needs_c
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("static", [False, True])
def test_shared_batch_equals_encode_ordinary(name, static, four_cpus):
    enc, ref = fresh(name), fresh(name, 0)
    for seed in range(2):
        docs = documents(seed)
        want = [ref.encode_ordinary(d) for d in docs]
        for threads in (2, 3, 4):
            assert enc._encode_shared(docs, threads, static) == want
        for batch in (docs[:1], docs[7:9], []):  # a batch of one, of two, none
            assert enc._encode_shared(batch, 2, static) == [want[docs.index(d)] for d in batch]
    assert enc.encode_ordinary_batch(docs, num_threads=2) == want
    # without a piece cache the batch keeps the slices of one call each
    assert ref.encode_ordinary_batch(docs, num_threads=2) == want


@needs_c
@pytest.mark.parametrize("static", [False, True])
def test_lists_built_between_runs_equal_encode_ordinary(static, four_cpus, monkeypatch):
    # Worker 0 back from C after every ~10 bytes (a budget per run), so it
    # builds the lists a few at a time while the other workers go on.
    monkeypatch.setattr(encoding_module, "_LEAD_SHARES", 10 ** 6)
    enc, ref = fresh("cl100k_base"), fresh("cl100k_base", 0)
    docs = documents(3)
    want = [ref.encode_ordinary(d) for d in docs]
    for threads in (2, 3):
        assert enc._encode_shared(docs, threads, static) == want


def _batch(enc, docs, workers, static):
    from pybpe import _unicode
    return enc._table._shared_batch([_unicode.utf8(d) for d in docs], enc._preset, workers, static)


def _cache(enc):
    return enc._table.new_cache(1 << 20)


@needs_c
@pytest.mark.parametrize("static", [False, True])
def test_workers_taking_turns_see_the_texts_done(static):
    # One thread plays every worker, one small budget at a time: the texts
    # `ready` reports are done, their lists equal encode_ordinary's, and
    # the ready prefix only grows, to every text once all workers are back.
    enc, ref = fresh("o200k_base"), fresh("o200k_base", 0)
    docs = documents(4)
    want = [ref.encode_ordinary(d) for d in docs]
    batch = _batch(enc, docs, 3, static)
    caches, more, got = [_cache(enc) for _ in range(3)], [True] * 3, []
    assert batch.ready(0) == 0
    while any(more):
        for w in (2, 0, 1):
            if more[w]:
                more[w] = batch.work(w, caches[w], 5_000)
            ready = batch.ready(len(got))
            assert ready >= len(got)
            got += batch.lists(len(got), ready)
    assert batch.ready(0) == len(docs) and got == want


@needs_c
def test_a_late_worker_finds_nothing_left_on_the_cursor():
    # With the cursor a worker that comes after the others are done takes
    # no run (its cache merges nothing); with the fixed shares it does its
    # own share, which nobody else would.
    enc = fresh("gpt2")
    docs = documents(5)
    want = [fresh("gpt2", 0).encode_ordinary(d) for d in docs]
    batch = _batch(enc, docs, 2, False)
    if not batch.dynamic:
        pytest.skip("this build of the C has no atomics (the fixed shares only)")
    assert batch.work(0, _cache(enc)) is False
    assert batch.lists(0, batch.ready(0)) == want
    late = _cache(enc)
    assert batch.work(1, late) is False
    assert enc._table.cache_info(late)["merges"] == 0
    batch = _batch(enc, docs, 2, True)
    assert batch.work(0, _cache(enc)) is False
    assert batch.ready(0) < len(docs)  # the first run is worker 0's, the second worker 1's
    assert batch.work(1, late) is False and enc._table.cache_info(late)["merges"] > 0
    assert batch.lists(0, batch.ready(0)) == want


@needs_c
def test_real_threads_on_one_cursor():
    # Two threads in C at once on one batch (the GIL is released): the
    # same IDs as one by one, whichever thread takes which run.
    enc = fresh("cl100k_base")
    docs = documents(6) * 3
    want = [fresh("cl100k_base", 0).encode_ordinary(d) for d in docs]
    for _ in range(3):
        batch = _batch(enc, docs, 2, False)
        caches, start, errors = [_cache(enc), _cache(enc)], threading.Barrier(2), []

        def run(w):
            try:
                start.wait()
                batch.work(w, caches[w])
            except Exception as exc:  # reported below
                errors.append(exc)
        threads = [threading.Thread(target=run, args=(w,)) for w in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [] and batch.lists(0, batch.ready(0)) == want


@needs_c
def test_several_callers_batching_through_one_encoding(four_cpus):
    # Python threads calling encode_ordinary_batch at once, each on 2
    # threads: the helpers are shared, the caches are not.
    enc, ref = fresh("o200k_base"), fresh("o200k_base", 0)
    jobs = [documents(seed) for seed in range(7, 11)]
    want = [[ref.encode_ordinary(d) for d in docs] for docs in jobs]
    got = run_at_once(lambda i: [enc.encode_ordinary_batch(jobs[i], num_threads=2) for _ in range(3)],
                      len(jobs))
    for i in range(len(jobs)):
        assert got[i] == [want[i]] * 3


@needs_c
def test_shared_batch_checks_its_arguments():
    from pybpe._bpe_c import ffi, lib
    enc = fresh("gpt2")
    share, ends = ffi.new("bpe_batch_share *"), ffi.new("size_t[]", 2)
    assert lib.bpe_batch_share_init(share, 10, 2, 0, 0, ends) == lib.BPE_EINVAL  # no worker
    assert lib.bpe_batch_share_init(share, 10, 2, 2, 2, ends) == lib.BPE_EINVAL  # unknown flag
    assert lib.bpe_batch_share_init(share, 10, 2, 2, 0, ends) == lib.BPE_OK
    position = ffi.new("size_t *")
    out = ffi.new("uint32_t[]", 10)
    call = lambda text_ends, worker=0: lib.bpe_ranks_encode_shared(  # noqa: E731
        enc._table._table, _cache(enc).ptr, enc._preset, b"helloworld", 10, ffi.new("size_t[]", text_ends), 2,
        share, worker, position, 0, out, ends)
    assert call([6, 5]) == lib.BPE_EINVAL   # decreasing
    assert call([5, 9]) == lib.BPE_EINVAL   # does not cover the text
    assert call([5, 10], worker=2) == lib.BPE_EINVAL
    assert lib.bpe_batch_ready(share, ends, 0) == 0  # nothing written by the refused calls
    assert call([5, 10]) == lib.BPE_OK
    assert lib.bpe_batch_ready(share, ends, 0) == 2 and list(ends) == [1, 6]
    assert [out[0], out[5]] == [31373, 6894]


@needs_c
@pytest.mark.parametrize("size", [0, 1 << 16])
def test_the_piece_cache_changed_during_a_batch_does_not_break_it(four_cpus, monkeypatch, size):
    # The shared path is taken when the call starts with a piece cache; a
    # worker then took its cache by the setting of the moment, and another
    # thread's enc.piece_cache = 0 in between handed C a None (TypeError, 4
    # batches in 30; found by a fuzzing helper).  The batch keeps the
    # setting it started with; here the change lands between the two.
    enc, ref = fresh("cl100k_base"), fresh("cl100k_base", 0)
    docs = documents(3)
    want = [ref.encode_ordinary(d) for d in docs]
    take = enc._take_cache

    def changed_first(*args):
        enc.piece_cache = size
        return take(*args)
    monkeypatch.setattr(enc, "_take_cache", changed_first)
    assert enc.encode_ordinary_batch(docs, num_threads=2) == want
    assert enc.piece_cache == size
