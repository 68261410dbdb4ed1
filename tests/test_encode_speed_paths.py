"""The fast paths of issue 5 against their references: the o200k C scanner
against the regex module, the batch entry point against one text at a time,
the per-call piece cache (repeated pieces), and Encoding.encode_file against
encoding whole documents (dtype choice, numpy.fromfile round trip, atomic
write)."""
import os
import random

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pybpe import core as backends, _unicode, patterns
from pybpe.encoding import Encoding
from pybpe.registry import get_encoding
from conftest import run_at_once, shakespeare

BACKENDS = backends.available()
NAMES = ["gpt2", "cl100k_base"]


def _cranks():
    if "c" not in BACKENDS:
        pytest.skip("the C backend is not built")
    from pybpe.core.native import ranks  # late: needs the C extension
    return ranks



# -- o200k: the C scanner cuts where the regex module does ---------------------------

# Cases the letter rules, the contractions and the whitespace rules turn on:
# case changes (Lu, Lt, Ll, Lm, Lo), combining marks (M is in both letter
# sets but is not \p{L}), apostrophes in every case, "/" after punctuation,
# CRLF runs at the end of the text.
_O200K_TRICKY = [
    "HelloWorld", "helloWorld", "HELLOworld", "HTTPServer", "ABC", "abc", "aBC", "ǅungla", "ǅ", "ᾈᾈa",
    "ʰʰ", "ʰA", "Aʰ", "aʰA", "漢字Ab", "e\u0301", "E\u0301E", "\u0301a", "\u0301A", "\u0301", " \u0301",
    "!\u0301", "x\u0301\u0301y", "don't", "DON'T", "I'm", "we'LL", "they'Re", "she's", "ſ'ſ", "it'ſ", "'s",
    "A's", "AB'd", "Ab'Ve", "'", "''", "!!\n\n/", "a/b", "://", " !/\n/\r", "\r\n", "\r\n\r\n", "  \n ",
    " \n", "\n ", "  ", "\t\t", "12345", "١٢٣٤", "x1", " 1", "$1,000.50", "\u00a0A", "\u3000a", "\x85",
    "\U0001d400\U0001d41a", "ﬁ", "ǈǈ", "Ωmega", "ßig", "İstanbul", "\ufeff", "🙂a", " a", "\ta", "\na",
]
def _assert_o200k_split_matches_regex(text):
    cr = _cranks()
    assert cr.split(text, cr.PRESET_O200K) == _unicode.split(regex.compile(patterns.O200K), text)


_chars = st.characters(exclude_categories=("Cs",))
_o200k_text = st.lists(st.one_of(st.text(_chars, max_size=6), st.sampled_from(_O200K_TRICKY),
                                 st.sampled_from(list(" \t\n\r/'sStTmMdDlLvVeErRſ0!.-aAǅʰ\u0301\u3000"))),
                       max_size=16).map("".join)


@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_o200k_text)
def test_o200k_scanner_matches_regex(text):
    _assert_o200k_split_matches_regex(text)


# The ASCII fast path of the o200k scanner (digits, punctuation, spaces and
# newlines without pt_at) must hand over to the general scanner wherever a
# non-ASCII character could change the cut: every ASCII character, with
# ASCII and non-ASCII neighbours of each class (letter, mark, number,
# punctuation, space).
_ASCII = [chr(c) for c in range(128)]
_NEIGHBOURS = ["a", "Z", "5", ".", " ", "\n", "\r", "\t", "/", "'", "é", "É", "\u0301", "٣", "½", "—",
               "\u00a0", "\u3000", "\x85", "漢"]
_ascii_text = st.lists(st.one_of(st.sampled_from(_ASCII), st.sampled_from(_NEIGHBOURS)),
                       max_size=12).map("".join)


@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_ascii_text)
def test_o200k_scanner_ascii_paths_match_regex(text):
    _assert_o200k_split_matches_regex(text)


def test_o200k_scanner_every_ascii_pair():
    cr = _cranks()
    pattern = regex.compile(patterns.O200K)
    for a in _ASCII:
        for b in _ASCII + _NEIGHBOURS:
            for text in (a + b, a + b + a, " " + a + b, a + b + "  x"):
                assert cr.split(text, cr.PRESET_O200K) == _unicode.split(pattern, text), repr(text)


@pytest.mark.parametrize("text", _O200K_TRICKY + ["".join(_O200K_TRICKY)])
def test_o200k_scanner_tricky(text):
    cr = _cranks()
    assert cr.split(text, cr.PRESET_O200K) == _unicode.split(regex.compile(patterns.O200K), text)
    for name, preset in (("GPT2", cr.PRESET_GPT2), ("CL100K", cr.PRESET_CL100K)):
        assert cr.split(text, preset) == _unicode.split(regex.compile(getattr(patterns, name)), text)


def test_o200k_scanner_examples():
    cr = _cranks()
    assert cr.split("HTTPServer isn't OK'd\r\n\r\n", cr.PRESET_O200K) == \
        ["HTTPServer", " isn't", " OK'd", "\r\n\r\n"]
    assert cr.split("helloWorld ABCdef", cr.PRESET_O200K) == ["hello", "World", " ABCdef"]


def test_o200k_scanner_every_code_point():
    # Each code point alone and between letters of both cases: the scanner
    # against the regex module with tiktoken's classes (pybpe._unicode.split),
    # for every code point.
    cr = _cranks()
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    for k in range(0, len(chars), 4096):
        block = chars[k:k + 4096]
        text = "".join(c + "aB " + c for c in block)
        for pat, preset in ((patterns.O200K, cr.PRESET_O200K), (patterns.CL100K, cr.PRESET_CL100K),
                            (patterns.GPT2, cr.PRESET_GPT2)):
            assert cr.split(text, preset) == _unicode.split(regex.compile(pat), text), hex(ord(block[0]))


def test_o200kshakespeare():
    cr = _cranks()
    text = shakespeare()[:2_000_000]
    assert cr.split(text, cr.PRESET_O200K) == _unicode.split(regex.compile(patterns.O200K), text)


@pytest.mark.parametrize("backend", BACKENDS)
def test_o200k_encoding_uses_scanner_and_agrees(backend):
    # No o200k rank file ships; cl100k's ranks with o200k's pattern exercise
    # the same path, compared with the regex path (a pattern spelled so that
    # the scanner does not recognise it).
    base = get_encoding("cl100k_base", backend=backend)
    fast = Encoding("o", pat_str=patterns.O200K, mergeable_ranks=base.mergeable_ranks, special_tokens={},
                    backend=backend)
    slow = Encoding("o", pat_str=patterns.O200K + "|(?!)", mergeable_ranks=base.mergeable_ranks,
                    special_tokens={}, backend=backend)
    assert fast._preset is not None and slow._preset is None
    text = "".join(_O200K_TRICKY) * 3 + "HTTPServer don't"
    assert fast.encode(text) == slow.encode(text)
    tiktoken = pytest.importorskip("tiktoken")
    tk = tiktoken.Encoding("o", pat_str=patterns.O200K, mergeable_ranks=base.mergeable_ranks, special_tokens={})
    assert fast.encode(text) == tk.encode(text)


# -- batches and the piece cache ------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_equals_one_by_one(name, backend):
    enc = get_encoding(name, backend=backend)
    texts = ["", "hello world", " ", "  \n", "x", "a" * 500, "\ud800 lone", "😀" * 30, "don't stop  "] * 7
    expected = [enc.encode_ordinary(t) for t in texts]
    for threads in (1, 2, 5):
        assert enc.encode_ordinary_batch(texts, num_threads=threads) == expected
        assert enc.encode_batch(texts, num_threads=threads) == expected
    assert enc.encode_ordinary_batch([]) == []
    with pytest.raises(TypeError, match=r"text\[1\]"):
        enc.encode_ordinary_batch(["ok", b"bytes"])
    with pytest.raises(ValueError, match="disallowed special"):
        enc.encode_batch(["ok", "<|endoftext|>"])


@pytest.mark.parametrize("name", NAMES)
def test_batch_of_shakespeare_documents(name):
    text = shakespeare()[:1_000_000]
    docs = [text[i:i + 1000] for i in range(0, len(text), 1000)]
    enc = get_encoding(name, backend=BACKENDS[0])
    assert enc.encode_ordinary_batch(docs, num_threads=2) == [enc.encode_ordinary(d) for d in docs]


@pytest.mark.parametrize("backend", BACKENDS)
def test_piece_cache_with_repeated_multi_token_pieces(backend):
    # Pieces that are not one token come back many times: the cache must
    # give what merging gives, also when two different pieces share a slot.
    enc = get_encoding("gpt2", backend=backend)
    words = [" zxqv%d" % i for i in range(3000)] + [" qqqqqqq", " Antidisestablishmentarianism"]
    text = "".join(words * 3)
    expected = [i for w in words * 3 for i in enc.encode_ordinary(w)]
    assert enc.encode_ordinary(text) == expected


def test_c_batch_entry_point_validates():
    cr = _cranks()
    from pybpe._bpe_c import ffi, lib
    enc = get_encoding("gpt2", backend="c")
    out = ffi.new("uint32_t[]", 10)
    out_ends = ffi.new("size_t[]", 2)
    call = lambda ends: lib.bpe_ranks_encode_batch(enc._table._table, cr.PRESET_GPT2, b"helloworld", 10,
                                                   ffi.new("size_t[]", ends), 2, out, out_ends)
    assert call([5, 10]) == 0 and list(out_ends) == [1, 2] and list(out)[:2] == [31373, 6894]
    assert call([6, 5]) != 0   # decreasing
    assert call([5, 9]) != 0   # does not cover the text
    assert call([5, 11]) != 0  # past the end


# -- the C output as Python lists (csrc/idlists.c + marshal) ------------------------

def _lists_through(cr, lists, min_ids):
    from pybpe._bpe_c import ffi
    flat = [i for ids in lists for i in ids]
    ends, total = [], 0
    for ids in lists:
        total += len(ids)
        ends.append(total)
    old = cr._MARSHAL_MIN_IDS
    cr._MARSHAL_MIN_IDS = min_ids
    try:
        return cr._id_lists(ffi.new("uint32_t[]", flat or [0]), ffi.new("size_t[]", ends or [0]), len(lists))
    finally:
        cr._MARSHAL_MIN_IDS = old


def test_marshal_stream_is_used_on_this_interpreter():
    # The import-time check passed, so the fast path (not only the
    # fallback) is what the other tests exercise.
    assert _cranks()._USE_MARSHAL


_id = st.one_of(st.integers(0, 300), st.integers(0, 2 ** 32 - 1), st.sampled_from([0, 4194303, 4194304, 2 ** 31]))


@settings(max_examples=400, deadline=None)
@given(lists=st.lists(st.lists(_id, max_size=40), max_size=12))
def test_id_lists_equal_the_plain_unpacking(lists):
    cr = _cranks()
    for min_ids in (0, 1, 10 ** 9):  # always the stream, ... never
        got = _lists_through(cr, lists, min_ids)
        assert got == lists
        assert all(type(ids) is list for ids in got)
        assert len({id(ids) for ids in got}) == len(got)  # distinct, separately mutable lists


def test_long_text_through_the_stream():
    # Long output: one encode_text call goes through the stream.
    cr = _cranks()
    text = shakespeare()[:200_000]
    enc = get_encoding("gpt2", backend="c")
    ids = enc.encode_ordinary(text)
    assert len(ids) > cr._MARSHAL_MIN_IDS
    py = get_encoding("gpt2", backend="python") if "python" in BACKENDS else None
    if py is not None:
        assert ids == py.encode_ordinary(text)
    ids[0] = -1  # the result is an ordinary mutable list
    assert enc.encode_ordinary(text)[0] != -1


@settings(max_examples=300, deadline=None)
@given(runs=st.lists(st.tuples(st.integers(0, 300), st.integers(1, 700)), max_size=12))
def test_run_lists_equal_the_ids(runs):
    # A long list that is mostly runs of one ID is built by repetition
    # (_run_list); it must spell the IDs exactly, whichever run is longest,
    # and decline (None) when the runs are too many to pay.
    cr = _cranks()  # skips first when the C extension is not built
    from pybpe._bpe_c import ffi
    ids = [i for i, n in runs for _ in range(n)]
    n_runs = sum(1 for k, i in enumerate(ids) if k == 0 or ids[k - 1] != i)
    got = cr._run_list(ffi.new("uint32_t[]", ids or [0]), len(ids))
    if n_runs > len(ids) // cr._RUN_LENGTH:
        assert got is None
    else:
        assert got == ids and type(got) is list


def test_long_runs_become_lists_by_repetition(monkeypatch):
    # Whole texts whose IDs are runs: the list equals the array output
    # (which builds no list) and is an ordinary list of its own.
    cr = _cranks()
    enc = get_encoding("gpt2", backend="c")
    built = []
    real = cr._run_list
    monkeypatch.setattr(cr, "_run_list", lambda out, n: built.append(n) or real(out, n))
    texts = [" " * 1_000_000, "a" * 1_000_000,
             " " * 30_000 + "hello" + " " * 90_000 + "a" * 40_000 + "\n" * 20_000]
    for text in texts:
        ids = enc.encode_ordinary(text)
        assert ids == enc.encode_to_numpy(text).tolist()
        ids[0] = -1
        assert enc.encode_ordinary(text)[0] != -1
    assert enc.encode_ordinary(texts[0]) == [220] * 1_000_000
    assert len(built) >= len(texts)
    # Prose has no runs: declined after a short scan, built by the stream.
    text = shakespeare()[:200_000]
    assert enc.encode_ordinary(text) == enc.encode_to_numpy(text).tolist()


# -- the C output as Python lists through an int table (csrc/pyext/pylists.c) ------------

def _pylists():
    cr = _cranks()
    if cr._pylists is None:
        pytest.skip("pybpe._pylists is not built")
    return cr


def _flat(lists):
    flat = [i for ids in lists for i in ids]
    ends, total = [], 0
    for ids in lists:
        total += len(ids)
        ends.append(total)
    return flat, ends


@settings(max_examples=400, deadline=None)
@given(lists=st.lists(st.lists(st.one_of(st.integers(0, 300), st.integers(0, 999)), max_size=60), max_size=12),
       size=st.sampled_from([1000, 1001, 5000]))
def test_table_lists_equal_the_plain_unpacking(lists, size):
    # Every list, empty ones too, spelled exactly, as separate mutable lists;
    # IDs 0 and size - 1 are the table's edges, and a table is reused.
    cr = _pylists()
    from pybpe._bpe_c import ffi
    lists = lists + [[0, size - 1, 0]]
    flat, ends = _flat(lists)
    table = cr._pylists.new_table(size)
    for _ in range(2):  # the second time every int comes from the table
        got = cr._table_lists(table, ffi.new("uint32_t[]", flat), ffi.new("size_t[]", ends), len(lists))
        assert got == lists
        assert all(type(ids) is list for ids in got) and len({id(ids) for ids in got}) == len(got)
        assert all(type(i) is int for ids in got for i in ids)
    assert cr._table_lists(table, ffi.new("uint32_t[]", 1), ffi.new("size_t[]", 1), 0) == []


@pytest.mark.parametrize("length", [127, 128, 129, 1000, 5000])
def test_long_table_lists_read_ahead_only_inside_the_table(length):
    # pl_list starts loading the table slots and ints of IDs 64 and 128
    # places on (csrc/pyext/pylists.c, PL_AHEAD): lists longer than that, IDs
    # not yet in the table, the table's last ID, and an ID outside it far
    # enough on that the read-ahead meets it first (the sanitizer build
    # checks that the table is never read outside).
    cr = _pylists()
    from pybpe._bpe_c import ffi
    import random
    rng = random.Random(length)
    size = 3000
    ids = [rng.randrange(size) for _ in range(length)]
    ids[-1] = size - 1
    table = cr._pylists.new_table(size)
    for _ in range(2):  # ints made on the way, then all from the table
        got = cr._table_lists(table, ffi.new("uint32_t[]", ids), ffi.new("size_t[]", [length]), 1)
        assert got == [ids]
    bad = list(ids)
    bad[length - 1] = size  # outside: the read-ahead sees it 64 and 128 places early
    with pytest.raises(ValueError, match="ID %d is outside the table" % size):
        cr._table_lists(table, ffi.new("uint32_t[]", bad), ffi.new("size_t[]", [length]), 1)
    bad[length // 2] = 2 ** 32 - 1
    with pytest.raises(ValueError, match="ID %d is outside the table" % (2 ** 32 - 1)):
        cr._table_lists(table, ffi.new("uint32_t[]", bad), ffi.new("size_t[]", [length]), 1)


def test_table_lists_refuse_ids_outside_the_table_and_decreasing_ends():
    cr = _pylists()
    from pybpe._bpe_c import ffi
    table = cr._pylists.new_table(10)
    with pytest.raises(ValueError, match="outside the table"):
        cr._table_lists(table, ffi.new("uint32_t[]", [3, 10]), ffi.new("size_t[]", [1, 2]), 2)
    with pytest.raises(ValueError, match="must not decrease"):
        cr._table_lists(table, ffi.new("uint32_t[]", [3, 4]), ffi.new("size_t[]", [2, 1]), 2)
    with pytest.raises(ValueError):
        cr._pylists.new_table(-1)
    with pytest.raises(ValueError):
        cr._pylists.id_lists(object(), 0, 0, 0)  # not a table (PyCapsule_GetPointer's error)


def test_rank_tables_keep_an_int_table_only_for_dense_ids():
    cr = _pylists()
    assert cr.RankTable([b"a", b"b"], [0, 1])._ints is not None
    sparse = cr.RankTable([b"a", b"b", b"ab"], [0, 1, 2 ** 31])  # a table of 2^31 pointers: no
    assert sparse._ints is None
    assert sparse.encode_texts_split([b"ab" * 40, b"ba" * 30], cr.PRESET_GPT2) == [[2 ** 31] * 40, [1] + [2 ** 31] * 29 + [0]]


def test_encode_paths_equal_with_and_without_the_int_table():
    # The same encoder with its int table and without (marshal stream or
    # unpacking), on every path that makes lists: one text, long and short,
    # and batches on one and two threads.
    _pylists()
    text = shakespeare()[:300_000]
    docs = [text[i:i + 3_000] for i in range(0, len(text), 3_000)] + ["", "a", "   \n", "日本語のテキスト" * 50]
    for name in ("gpt2", "o200k_base"):
        base = get_encoding(name, backend="c")
        with_table, plain = (Encoding(base.name, pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks,
                                      special_tokens=base.special_tokens, backend="c") for _ in range(2))
        assert with_table._table._ints is not None
        plain._table._ints = None
        assert with_table.encode_ordinary(text) == plain.encode_ordinary(text)
        for doc in docs[:5] + docs[-4:]:
            assert with_table.encode_ordinary(doc) == plain.encode_ordinary(doc)
        for threads in (1, 2):
            assert with_table.encode_ordinary_batch(docs, num_threads=threads) == plain.encode_ordinary_batch(docs, num_threads=1)



# -- short texts in one call (pylists.encode_ids) -----------------------------------

def _one_call():
    cr = _pylists()
    if cr._encode_ids is None:
        pytest.skip("this pybpe._pylists has no encode_ids")
    return cr


def _twins(name):
    # Two Encodings of `name` on the C backend, each with caches of its own.
    base = get_encoding(name, backend="c")
    return [Encoding(base.name, pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks,
                     special_tokens=base.special_tokens, backend="c") for _ in range(2)]


def _short_texts():
    text = shakespeare()
    rng = __import__("random").Random(13)
    cases = ["", "a", " ", "\n\n", "hello world", "日本語のテキスト", "naïve café 🙂 x", "   \t  a",
             "don't STOP", "x" * 5000, " " * 3000, "a\ud83d\ude00b\udc00"]
    cases += [text[s:s + rng.randrange(1, 400)] for s in (rng.randrange(len(text) - 400) for _ in range(300))]
    mixed = "".join(rng.choice(["the ", "Ωmega ", "漢字", "🙂", "  ", "\n", "it's ", "1234 "]) for _ in range(4000))
    cases += [mixed[:n] for n in (1, 17, 255, 1024, 1025, 4096)]
    return cases


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_short_texts_take_one_call_and_give_the_long_paths_ids(name, monkeypatch):
    # Each text through encode_ids, against a twin whose calls take the
    # cffi steps (encode_ids switched off), and a few against the Python
    # backend; and encode_ids is used for every text up to the limit (and
    # for none past it).
    cr = _one_call()
    fast, slow = _twins(name)
    calls = []
    real = cr._encode_ids

    def counted(*args):
        calls.append(len(args[-1]))
        return real(*args)

    texts = _short_texts()
    limit = cr._ONE_CALL_MAX_BYTES
    monkeypatch.setattr(cr, "_encode_ids", counted)
    got = [fast.encode_ordinary(t) for t in texts]
    edge = shakespeare()[:limit + 1]
    got_edge = [fast.encode_ordinary(edge[:limit]), fast.encode_ordinary(edge)]
    assert calls and max(calls) == limit
    assert len(calls) == sum(1 for t in texts if t) + 1  # every text but "", the one at the limit
    monkeypatch.setattr(cr, "_encode_ids", None)
    assert got == [slow.encode_ordinary(t) for t in texts]
    assert got_edge == [slow.encode_ordinary(edge[:limit]), slow.encode_ordinary(edge)]
    python = get_encoding(name, backend="python")
    for t in texts[::25]:
        assert fast.encode_ordinary(t) == python.encode_ordinary(t), t[:40]


@pytest.mark.parametrize("name", ["gpt2", "o200k_base"])
def test_short_texts_to_numpy_take_one_call_and_give_the_long_paths_arrays(name, monkeypatch):
    # encode_to_numpy through encode_ids' bytes: the same IDs as the array
    # the C writes into (encode_ids off), an array of its own memory,
    # writable, uint32, like the long path's.
    numpy = pytest.importorskip("numpy")
    cr = _one_call()
    fast, slow = _twins(name)
    calls = []
    real = cr._encode_ids

    def counted(*args):
        calls.append(args[4] is None)
        return real(*args)

    texts = _short_texts()
    monkeypatch.setattr(cr, "_encode_ids", counted)
    got = [fast.encode_to_numpy(t) for t in texts]
    assert len(calls) == len(texts) and all(calls)  # ("" too: an empty array)
    monkeypatch.setattr(cr, "_encode_ids", None)
    for array, t in zip(got, texts):
        want = slow.encode_to_numpy(t)
        assert array.dtype == numpy.uint32 and array.flags.owndata and array.flags.writeable
        assert array.tolist() == want.tolist() == slow.encode(t, disallowed_special=()), t[:40]


def test_one_call_reports_the_encoders_error_as_the_long_path_does():
    cr = _one_call()
    gpt2 = get_encoding("gpt2", backend="c")
    ranks = {bytes([b]): b for b in range(256) if b != ord("z")}  # no token for "z"
    enc = Encoding("no-z", pat_str=gpt2.pat_str, mergeable_ranks=ranks, special_tokens={}, backend="c")
    assert enc._preset is not None and enc._table._ints is not None
    assert enc.encode_ordinary("hello") == list(b"hello")
    with pytest.raises(ValueError) as one_call:
        enc.encode_ordinary("a zoo")
    cr_list, cr._encode_ids = cr._encode_ids, None
    try:
        with pytest.raises(ValueError) as long_path:
            enc.encode_ordinary("a zoo")
    finally:
        cr._encode_ids = cr_list
    assert str(one_call.value) == str(long_path.value)
    assert "has no token" in str(one_call.value)


def test_one_call_arguments_are_checked():
    cr = _one_call()
    enc = get_encoding("gpt2", backend="c")
    table, cache = enc._table, enc._table.new_cache(cr.PIECE_CACHE_MIN_BYTES)
    address = cache.address
    assert address == int(cr.ffi.cast("uintptr_t", cache.ptr))  # the handle's int is the C pointer
    args = [cr._ENCODE_CACHED, table._address, address, cr.PRESET_GPT2, table._ints]
    assert cr._encode_ids(*args, b"hello world") == [31373, 995]
    assert cr._encode_ids(*args, b"") == []
    as_bytes = cr._encode_ids(*args[:4], None, b"hello world")
    assert as_bytes == cr.ffi.buffer(cr.ffi.new("uint32_t[]", [31373, 995]))[:]
    assert cr._encode_ids(*args[:4], None, b"") == b""
    with pytest.raises(TypeError):
        cr._encode_ids(*args, "a str")  # UTF-8 bytes only
    with pytest.raises(ValueError):
        cr._encode_ids(cr._ENCODE_CACHED, 0, address, cr.PRESET_GPT2, table._ints, b"x")
    with pytest.raises(ValueError):
        cr._encode_ids(*args[:4], object(), b"x")  # not an int table
    status = cr._encode_ids(cr._ENCODE_CACHED, table._address, address, 99, table._ints, b"x")
    assert isinstance(status, int) and status != 0  # an unknown scanner: the encoder's status, not a list


def test_short_path_follows_the_piece_cache_and_agrees_at_its_edge():
    # Encoding._encode_ordinary takes texts of up to _short_chars characters
    # straight to the table's one call: on while a piece cache is on, off
    # (0) with piece_cache=0, on again after; the texts on either side of the
    # edge, with lone surrogates and 4-byte characters among them, get the
    # IDs of the Python backend either way, through encode and
    # encode_ordinary alike.
    _one_call()
    enc, = _twins("cl100k_base")[:1]
    python = get_encoding("cl100k_base", backend="python")
    edge = enc._short_chars
    assert edge > 0 and 4 * edge <= enc._table.ONE_CALL_MAX_BYTES  # 4 bytes a character at most
    text = shakespeare()
    cases = [text[:edge], text[:edge + 1], "🙂" * edge, "🙂" * (edge + 1), "a\udc00b" * 3,
             "\ud83d" + text[:edge - 1], "", "x"]
    want = [python.encode_ordinary(t) for t in cases]
    for size in (None, 0, 1 << 16):
        enc.piece_cache = size
        assert (enc._short_chars > 0) == (size != 0)
        assert [enc.encode_ordinary(t) for t in cases] == want, size
        assert [enc.encode(t) for t in cases] == want, size
        assert [enc.encode(t, disallowed_special=()) for t in cases] == want, size
    assert len(enc._caches) == 1  # one thread: one cache taken and given back
    # where the path is off for good (a pattern of one's own: no C scanner,
    # no cache), the empty text and a short one take the general path
    for backend in BACKENDS:
        own = Encoding("own", pat_str=r"\w+|\W", mergeable_ranks=enc.mergeable_ranks, special_tokens={},
                       backend=backend)
        assert own._short_chars == 0
        assert own.encode("") == own.encode_ordinary("") == [] and own.encode("ab") == python.encode("ab")


def test_one_call_on_threads_gives_each_thread_its_ids():
    _one_call()
    enc, reference = _twins("cl100k_base")
    texts = _short_texts()
    want = [reference.encode_ordinary(t) for t in texts]
    results = run_at_once(lambda i: [enc.encode_ordinary(t) for t in texts], 4)
    assert results == [want] * 4


# -- encode_file ----------------------------------------------------------------------

def _expected(enc, text, sep, eot=True):
    docs = [text] if sep is None else text.split(sep)
    if sep is not None and docs and docs[-1] == "":
        docs.pop()
    out = []
    for d in docs:
        out += enc.encode_ordinary(d)
        if eot:
            out.append(enc.eot_token)
    return out


def _read(path, dtype):
    from array import array
    a = array({"uint16": "H", "uint32": "I"}[dtype])
    with open(path, "rb") as f:
        a.frombytes(f.read())
    return a.tolist()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("sep", [None, "<|endoftext|>", "\n\n\n"])
def test_encode_file_equals_whole_documents(tmp_path, backend, sep):
    enc = get_encoding("gpt2", backend=backend)
    docs = ["Hello world, it's me.\nSecond line  \n\nThird paragraph with  spaces and\r\nCRLF lines\r\n",
            "", "ünïcödé  text\n" * 50, "words " * 400 + "\n", "HTTPServer x\n" * 300 + "end"]
    text = (sep or "").join(docs)
    src = tmp_path / "in.txt"
    src.write_bytes(text.encode("utf-8"))
    out = tmp_path / "out.bin"
    # tiny chunks: many cuts, separators split across reads
    for chunk in (7, 64, 1000, 1 << 20):
        n = enc.encode_file(src, out, document_separator=sep, chunk_size=chunk)
        expected = _expected(enc, text, sep)
        assert n == len(expected)
        assert _read(out, "uint16") == expected, chunk


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
@pytest.mark.parametrize("append_eot", [True, False])
def test_encode_file_many_short_documents(tmp_path, backend, name, append_eot):
    # Thousands of documents, many of them per C call (write_ids' groups,
    # _write_group): the IDs and the eots between them as one document at a
    # time gives them, for group sizes from a few documents to all of them.
    rng = random.Random(7)
    words = ["the", " cat", "ünï", "日本", "  ", "\n", "HTTP", "12345", "'s", "!!", "\U0001f99c", ""]
    docs = ["".join(rng.choice(words) for _ in range(rng.randrange(0, 12))) for _ in range(3000)]
    enc = get_encoding(name, backend=backend)
    dtype = "uint16" if name == "gpt2" else "uint32"
    sep = "\n@@\n"
    text = sep.join(docs)
    src = tmp_path / "in.txt"
    src.write_bytes(text.encode("utf-8"))
    out = tmp_path / "out.bin"
    expected = _expected(enc, text, sep, eot=append_eot)
    for chunk in (64, 5_000, 1 << 22):
        n = enc.encode_file(src, out, document_separator=sep, chunk_size=chunk, dtype=dtype,
                            append_eot=append_eot)
        assert n == len(expected)
        assert _read(out, dtype) == expected, chunk


def test_encode_file_shakespeare_cl100k_uint32_numpy(tmp_path):
    np = pytest.importorskip("numpy")
    enc = get_encoding("cl100k_base", backend=BACKENDS[0])
    text = shakespeare()[:1_500_000]
    src = tmp_path / "s.txt"
    src.write_text(text, encoding="utf-8", newline="")
    out = tmp_path / "s.bin"
    n = enc.encode_file(src, out, chunk_size=100_000)
    ids = np.fromfile(out, dtype=np.uint32)
    assert n == len(ids)
    assert ids.tolist() == enc.encode_ordinary(text) + [enc.eot_token]


def test_encode_file_dtype(tmp_path):
    np = pytest.importorskip("numpy")
    src = tmp_path / "a.txt"
    src.write_text("hello world", encoding="utf-8")
    gpt2 = get_encoding("gpt2")
    cl = get_encoding("cl100k_base")
    for enc, dtype, expected in ((gpt2, None, np.uint16), (gpt2, "uint32", np.uint32),
                                 (gpt2, np.uint32, np.uint32), (cl, None, np.uint32)):
        out = tmp_path / "a.bin"
        enc.encode_file(src, out, dtype=dtype)
        assert os.path.getsize(out) == 3 * np.dtype(expected).itemsize
        assert np.fromfile(out, dtype=expected).tolist() == enc.encode("hello world") + [enc.eot_token]
    with pytest.raises(ValueError, match="uint32"):
        cl.encode_file(src, tmp_path / "x.bin", dtype="uint16")
    with pytest.raises(ValueError, match="dtype"):
        gpt2.encode_file(src, tmp_path / "x.bin", dtype="float32")
    gpt2.encode_file(src, tmp_path / "y.bin", append_eot=False)
    assert np.fromfile(tmp_path / "y.bin", dtype=np.uint16).tolist() == [31373, 995]


def test_encode_file_atomic_and_progress(tmp_path, capsys):
    src = tmp_path / "a.txt"
    src.write_bytes(b"fine text\n\xff\xfe not UTF-8")
    out = tmp_path / "a.bin"
    out.write_bytes(b"old")
    with pytest.raises(UnicodeDecodeError):
        get_encoding("gpt2").encode_file(src, out)
    assert out.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["a.bin", "a.txt"]  # no temporary left
    src.write_text("some text " * 1000, encoding="utf-8")
    get_encoding("gpt2").encode_file(src, out, progress=True, chunk_size=100)
    err = capsys.readouterr().err
    assert "100.0%" in err and err.endswith("\n")
    # stderr is no terminal here: plain lines, no "\r" in a log (found by a fuzzing helper)
    assert "\r" not in err and "\x1b" not in err


# -- large vocabularies: the filters in front of the token and pair tables -----------

def _filtered_vocabulary():
    # More than 4,096 tokens, so the C table builds its token and pair
    # filters (and byte-pair array); letters a..p make every one- to
    # three-letter string a token (ranks shuffled), q..z make pieces whose
    # pairs mostly do not exist -- the answers the filters give without a probe.
    import itertools
    import random
    letters = "abcdefghijklmnop"
    multi = ["".join(t).encode() for n in (2, 3) for t in itertools.product(letters, repeat=n)]
    multi += [b"qr", b"qrs", b"zz", b"zzz", b"azq"]
    random.Random(10).shuffle(multi)
    return [bytes([b]) for b in range(256)] + multi


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text("abcdefghijklmnopqrsz", min_size=1, max_size=24), min_size=1, max_size=20))
def test_large_vocabulary_filters_keep_results(pieces):
    c_table = _cranks().RankTable(_LARGE_TOKENS, range(len(_LARGE_TOKENS)))
    py_table = backends.get("python").RankTable(_LARGE_TOKENS, range(len(_LARGE_TOKENS)))
    assert c_table.encode_pieces(pieces) == py_table.encode_pieces(pieces)


_LARGE_TOKENS = _filtered_vocabulary()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text("abcdefghijklmnopqrsz", min_size=1, max_size=24), min_size=1, max_size=20))
def test_pair_table_layouts_agree(pieces):
    # IDs equal to the token indices give the C table its compact 8-byte pair
    # slots (a pair's priority is its result); IDs shifted by 7 keep the same
    # order of priorities but need the 16-byte slots.  Same merges, so the
    # IDs differ by exactly 7, and each equals the Python twin's.
    n = len(_LARGE_TOKENS)
    shifted = [k + 7 for k in range(n)]
    compact = _cranks().RankTable(_LARGE_TOKENS, range(n)).encode_pieces(pieces)
    wide = _cranks().RankTable(_LARGE_TOKENS, shifted).encode_pieces(pieces)
    assert wide == [i + 7 for i in compact]
    assert wide == backends.get("python").RankTable(_LARGE_TOKENS, shifted).encode_pieces(pieces)


@pytest.mark.parametrize("sep", [None, "<|endoftext|>"])
@pytest.mark.parametrize("body", ['{"key":123,"val":"abc"},', "a-b-c-d-", "本日は晴天なり。", "to be or not "])
def test_encode_file_reads_each_character_a_bounded_number_of_times(tmp_path, monkeypatch, sep, body):
    # A long document with no safe cut (minified JSON, CJK) was searched
    # whole again after every read, and copied whole again on every append:
    # 32 MB of JSON took 8.8 s where encoding it at once took 0.13 s (found
    # by a fuzzing helper).  Counted, not timed: the characters the cut and
    # separator searches look at stay within a few times the file's.
    from pybpe import _encode_file

    scanned = []

    class Counting:
        def __init__(self, pattern):
            self.pattern = pattern

        def search(self, string, pos=0, endpos=None):
            scanned.append((len(string) if endpos is None else endpos) - pos)
            return self.pattern.search(string, pos, len(string) if endpos is None else endpos)
    monkeypatch.setattr(_encode_file, "SAFE_CUT", Counting(_encode_file.SAFE_CUT))
    enc = get_encoding("cl100k_base")
    text = (sep or "").join(body * (200_000 // len(body)) for _ in range(3))
    src, out = tmp_path / "in.txt", tmp_path / "out.bin"
    src.write_text(text, encoding="utf-8")
    n = enc.encode_file(src, out, document_separator=sep, chunk_size=4096, dtype="uint32")
    assert _read(out, "uint32") == _expected(enc, text, sep) and n == len(_expected(enc, text, sep))
    assert sum(scanned) <= 2 * len(text), (sum(scanned), len(text))


# -- encode_file's safe cuts (pybpe/_encode_file.py, SAFE_CUT) -------------------------------
# Text of every script, not only ASCII Latin: a fuzzing helper found that a
# CJK or Cyrillic file (newlines, no ASCII letters) had no safe cut, so
# encode_file and `pybpe count` held it whole (a 512 MB CJK file: 3.5 GB).
_CUT_ALPHABET = st.sampled_from(list("ab Z9\n\n\r/.,'-_ \t") + ["本", "日", "é", "Ж", "ж", "\u0301", "١",
                                                                     "²", "😀", "\u00a0", "\u2028", "ǅ"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_CUT_ALPHABET, max_size=60).map("".join))
def test_safe_cuts_split_every_preset_as_the_whole_text_splits(text):
    # At each safe cut k, the pieces of text[:k] then those of text[k:] are
    # the pieces of the whole text: so are their IDs.
    import regex
    from pybpe import _encode_file, patterns
    cuts = sorted({m.start() for m in _encode_file.SAFE_CUT.finditer(text)})
    for pat in (patterns.GPT2, patterns.CL100K, patterns.O200K):
        pieces = regex.compile(pat).findall
        for k in cuts:
            assert pieces(text[:k]) + pieces(text[k:]) == pieces(text), (pat[:20], text, k)


@pytest.mark.parametrize("line", ["本日は晴天なり。今日も良い天気です。", "Съешь же ещё этих мягких булок, да выпей чаю.",
                                  "Λορεμ ιπσυμ δολορ σιτ αμετ", "שלום עולם, מה שלומך"])
def test_encode_file_cuts_text_of_every_script(tmp_path, monkeypatch, line):
    from pybpe import _encode_file
    longest = []
    real = _encode_file._parts

    def parts(*args, **kwargs):
        for text, ends in real(*args, **kwargs):
            longest.append(len(text))
            yield text, ends
    monkeypatch.setattr(_encode_file, "_parts", parts)
    enc = get_encoding("o200k_base")
    text = "".join(line + "\n" for _ in range(3000))
    src, out = tmp_path / "in.txt", tmp_path / "out.bin"
    src.write_text(text, encoding="utf-8")
    n = enc.encode_file(src, out, chunk_size=4096, dtype="uint32")
    assert _read(out, "uint32") == enc.encode_ordinary(text) + [enc.eot_token] and n == len(_read(out, "uint32"))
    assert max(longest) <= 4 * 4096, max(longest)  # in pieces of about a read, not whole


@pytest.mark.parametrize("data, at", [(b"abc " * 5000 + b"\xff rest", 20000), (b"ok\n" * 3000 + b"\xe3\x81", 9000),
                                      (b"\xc3\xa9" * 4000 + b"\xc3(", 8000)])
def test_encode_file_says_where_in_the_file_the_bad_byte_is(tmp_path, data, at):
    # The offset was the one inside the read (a bad byte at 129,089,659
    # was reported at 3,260,539; a file ending mid-character at 0).
    src, out = tmp_path / "in.txt", tmp_path / "out.bin"
    src.write_bytes(data)
    with pytest.raises(UnicodeDecodeError) as info:
        get_encoding("gpt2").encode_file(src, out, chunk_size=4096)
    assert "at byte %d of the file" % at in str(info.value), str(info.value)
    assert not out.exists()


# -- one piece merged whole in one call (RankTable.encode_piece) ------------------------

@settings(max_examples=150, deadline=None)
@given(piece=st.one_of(st.binary(max_size=64), st.text(max_size=40).map(lambda t: t.encode("utf-8", "replace"))))
def test_encode_piece_in_one_call_equals_the_cffi_steps(piece):
    # pybpe._pylists.encode_piece_ids against the cffi path it replaced
    # (_encode), and both against the Python backend's table.
    ranks = _cranks()
    for name in NAMES + ["o200k_base"]:
        table = get_encoding(name, backend="c")._table
        expected = table._encode(piece, ranks._u32([len(piece)]), False)
        assert table.encode_piece(piece) == expected
        if "python" in BACKENDS:
            assert get_encoding(name, backend="python")._table.encode_piece(piece) == expected


def test_encode_piece_in_one_call_raises_as_the_cffi_steps_do():
    ranks = _cranks()
    table = ranks.RankTable([b"a", b"b", b"ab"], [0, 1, 2])
    assert table._ints is not None and table.encode_piece(b"abab") == [2, 2] and table.encode_piece(b"") == []
    with pytest.raises(Exception) as one_call:
        table.encode_piece(b"abc")  # "c" has no token
    with pytest.raises(Exception) as steps:
        table._encode(b"abc", ranks._u32([3]), False)
    assert type(one_call.value) is type(steps.value) and str(one_call.value) == str(steps.value)
    sparse = ranks.RankTable([b"a", b"b", b"ab"], [0, 1, 2**31])  # IDs too far apart for an int table
    assert sparse._ints is None and sparse.encode_piece(b"abab") == [2**31, 2**31]
