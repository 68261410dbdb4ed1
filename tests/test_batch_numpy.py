"""Encoding.encode_batch_to_numpy: a batch's IDs as one uint32 array and
n + 1 int64 offsets (pybpe/encoding.py), made on the C backend by the
threads of encode_ordinary_batch writing into one C array that
bpe_batch_compact (csrc/ranks.c) closes up -- no list, no Python int per
ID.  Checked against encode_batch, the lists it must equal, on both
backends: every kind of text a batch meets, random batches (hypothesis) on
one to four threads, special tokens allowed and disallowed, the errors, a
cache switched off, and the C function's own argument checks."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pybpe import _workers, core
from pybpe.registry import get_encoding

from test_shared_batch import documents, fresh

numpy = pytest.importorskip("numpy")

BACKENDS = core.available()
needs_c = pytest.mark.skipif("c" not in BACKENDS, reason="the C backend is not built")
NAMES = ["gpt2", "cl100k_base", "o200k_base"]


def rows_of(ids, offsets):
    """The arrays back as encode_batch's lists."""
    return [ids[a:b].tolist() for a, b in zip(offsets.tolist(), offsets[1:].tolist())]


def check_arrays(ids, offsets, expected):
    assert isinstance(ids, numpy.ndarray) and ids.dtype == numpy.uint32 and ids.ndim == 1
    assert isinstance(offsets, numpy.ndarray) and offsets.dtype == numpy.int64 and offsets.ndim == 1
    assert len(offsets) == len(expected) + 1 and offsets[0] == 0 and offsets[-1] == len(ids)
    assert ids.flags.owndata and ids.flags.writeable  # its own memory, not a view of C's
    assert rows_of(ids, offsets) == expected


@pytest.fixture
def four_cpus(monkeypatch):
    # The threaded path on any machine, one CPU included.
    monkeypatch.setattr(_workers, "cpus", lambda: 4)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_arrays_equal_encode_batch(backend, name, threads, four_cpus):
    enc = fresh(name) if backend == "c" else get_encoding(name, backend=backend)
    docs = documents(1) if backend == "c" else documents(1)[:12]
    expected = enc.encode_batch(docs, num_threads=threads, disallowed_special=())
    check_arrays(*enc.encode_batch_to_numpy(docs, num_threads=threads, disallowed_special=()), expected)
    # the default (every special token disallowed) on text that holds none
    plain = [d.replace("<|", "< |") for d in docs]
    check_arrays(*enc.encode_batch_to_numpy(plain, num_threads=threads), enc.encode_batch(plain))


@pytest.mark.parametrize("backend", BACKENDS)
def test_special_tokens_as_encode_batch_has_them(backend):
    enc = get_encoding("o200k_base", backend=backend)
    texts = ["hello <|endoftext|> world<|endofprompt|>", "", "no special here"]
    for kwargs in [{"allowed_special": "all"}, {"disallowed_special": ()},
                   {"allowed_special": {"<|endofprompt|>"}, "disallowed_special": ()},
                   {"allowed_special": {"<|not a token|>"}, "disallowed_special": ()}]:
        check_arrays(*enc.encode_batch_to_numpy(texts, **kwargs), enc.encode_batch(texts, **kwargs))
    with pytest.raises(ValueError, match="disallowed special token '<\\|endoftext\\|>'"):
        enc.encode_batch_to_numpy(texts)
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_batch_to_numpy(["fine", "<|endofprompt|>"], allowed_special={"<|endoftext|>"})


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors_and_empty_batches(backend):
    enc = get_encoding("gpt2", backend=backend)
    ids, offsets = enc.encode_batch_to_numpy([])
    assert ids.dtype == numpy.uint32 and ids.tolist() == [] and offsets.tolist() == [0]
    check_arrays(*enc.encode_batch_to_numpy(["", ""]), [[], []])
    with pytest.raises(TypeError, match=r"text\[1\] must be a str, not int"):
        enc.encode_batch_to_numpy(["a", 3])
    with pytest.raises(TypeError, match="not a single str"):
        enc.encode_batch_to_numpy("abc")
    with pytest.raises(ValueError):
        enc.encode_batch_to_numpy(["a"], num_threads=0)
    # a generator is a batch too, as for encode_batch
    check_arrays(*enc.encode_batch_to_numpy(t for t in ["hello world", "hi"]), [[31373, 995], [5303]])


@needs_c
def test_without_a_piece_cache_the_lists_are_made_first(four_cpus):
    enc = fresh("cl100k_base", piece_cache=0)
    docs = documents(2)
    check_arrays(*enc.encode_batch_to_numpy(docs, num_threads=2, disallowed_special=()),
                 fresh("cl100k_base").encode_batch(docs, disallowed_special=()))


@needs_c
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(max_size=300) | st.sampled_from(["", " ", "aaaa" * 50, "日本語", "\ud800x"]),
                      max_size=40),
       threads=st.integers(1, 4), name=st.sampled_from(NAMES))
def test_random_batches(texts, threads, name, four_cpus):
    enc = fresh(name)
    expected = enc.encode_batch(texts, num_threads=1, disallowed_special=())
    check_arrays(*enc.encode_batch_to_numpy(texts, num_threads=threads, disallowed_special=()), expected)


@needs_c
def test_compact_closes_up_and_checks_its_arguments():
    from pybpe._bpe_c import ffi, lib
    # three texts starting at 0, 4 and 9 of an output of 12, with 2, 0 and 3 IDs
    out = ffi.new("uint32_t[]", [10, 11, 99, 99, 99, 99, 99, 99, 99, 20, 21, 22])
    starts, ends = ffi.new("size_t[]", [0, 4, 9]), ffi.new("size_t[]", [2, 4, 12])
    offsets = ffi.new("int64_t[]", 4)
    assert lib.bpe_batch_compact(out, starts, ends, 3, offsets) == lib.BPE_OK
    assert list(offsets) == [0, 2, 2, 5] and list(out)[:5] == [10, 11, 20, 21, 22]
    bad = ffi.new("uint32_t[]", [1, 2, 3, 4])
    before = list(bad)
    for text_starts, out_ends in [([0, 2], [1, 1]),   # an end before its start
                                  ([0, 2], [3, 4])]:  # an end past the next text's start
        assert lib.bpe_batch_compact(bad, ffi.new("size_t[]", text_starts), ffi.new("size_t[]", out_ends), 2,
                                     ffi.new("int64_t[]", 3)) == lib.BPE_EINVAL
        assert list(bad) == before
    assert lib.bpe_batch_compact(ffi.NULL, starts, ends, 3, offsets) == lib.BPE_EINVAL
    assert lib.bpe_batch_compact(out, starts, ends, 3, ffi.NULL) == lib.BPE_EINVAL
    empty = ffi.new("int64_t[]", 1)
    assert lib.bpe_batch_compact(ffi.NULL, ffi.NULL, ffi.NULL, 0, empty) == lib.BPE_OK and empty[0] == 0
