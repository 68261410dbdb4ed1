"""The piece cache that lives across calls (csrc/piece_cache.h, Encoding.piece_cache).

On the C backend with a C scanner, an Encoding keeps what it learns about
pieces (bytes -> IDs) from one call to the next, one cache per thread.  It
must never change an ID: cached, uncached and tiny (constantly evicting)
caches give the same IDs as tiktoken on every shipped encoding, on real and
hypothesis text, on pieces a badly keyed cache would confuse, and on
several threads at once.  Its memory stays within the size asked for.
"""
import pickle
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pybpe import core as backends
from pybpe.encoding import Encoding
from pybpe.registry import get_encoding
from conftest import offline_tiktoken, run_at_once, shakespeare
from test_tiktoken_surface import corpus

SHIPPED = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
needs_c = pytest.mark.skipif("c" not in backends.available(), reason="the C backend is not built")
native = backends.get("c") if "c" in backends.available() else None
SMALLEST = backends.get("python").PIECE_CACHE_MIN_BYTES

_FRESH = {}


def fresh(name, piece_cache, backend="c"):
    """A new Encoding of a shipped encoding (not the registry's shared one),
    with its own caches, built once per (name, size, backend)."""
    key = (name, piece_cache, backend)
    if key not in _FRESH:
        enc = get_encoding(name, backend=backend)
        _FRESH[key] = Encoding(name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks,
                               special_tokens=enc.special_tokens, backend=backend, piece_cache=piece_cache)
    return _FRESH[key]


def chunks(text, size, seed=0):
    """`text` cut into pieces of about `size` characters, at random places."""
    rng = random.Random(seed)
    out, pos = [], 0
    while pos < len(text):
        step = rng.randint(1, 2 * size)
        out.append(text[pos:pos + step])
        pos += step
    return out


def cache_of(enc):
    """The one idle cache of `enc` (after single-threaded calls)."""
    assert len(enc._caches) == 1
    return enc._caches[0]


# -- the cache lives across calls -------------------------------------------------------

@needs_c
def test_a_second_call_finds_the_pieces_of_the_first():
    enc = fresh("o200k_base", None)
    text = "Encoding remembers unusualish wordings across calls: zorblax quuxified. "
    first = enc.encode_ordinary(text)
    info = enc._table.cache_info(cache_of(enc))
    assert info["merges"] > 0
    for _ in range(3):
        assert enc.encode_ordinary(text) == first
    again = enc._table.cache_info(cache_of(enc))
    assert (again["merges"], again["token_lookups"]) == (info["merges"], info["token_lookups"])


@needs_c
def test_piece_cache_is_an_attribute_with_a_default_and_an_off_switch():
    enc = fresh("gpt2", None)
    assert enc.piece_cache == native.PIECE_CACHE_DEFAULT_BYTES == 1 << 20
    off = fresh("gpt2", 0)
    assert off.piece_cache == 0
    assert off.encode_ordinary("hello world") == [31373, 995]
    assert off._caches == []  # nothing taken, nothing kept
    assert native.PIECE_CACHE_MIN_BYTES == SMALLEST  # both backends check sizes alike


def test_piece_cache_sizes_are_checked():
    enc = fresh("gpt2", None, backend="python")
    with pytest.raises(TypeError, match="piece_cache must be an int"):
        enc.piece_cache = 1.5
    with pytest.raises(TypeError, match="piece_cache must be an int"):
        enc.piece_cache = True
    with pytest.raises(ValueError, match="at least %d bytes" % SMALLEST):
        enc.piece_cache = SMALLEST - 1
    with pytest.raises(ValueError, match="piece_cache=-1"):
        enc.piece_cache = -1
    assert enc.piece_cache == 1 << 20  # unchanged by the refused values


@needs_c
def test_setting_the_size_drops_the_caches_and_survives_pickling():
    enc = Encoding("toy", pat_str=get_encoding("gpt2").pat_str,
                   mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={}, backend="c")
    enc.encode_ordinary("some text")
    assert len(enc._caches) == 1
    enc.piece_cache = 2 * SMALLEST
    assert enc._caches == []
    enc.encode_ordinary("some text")
    assert enc._table.cache_info(cache_of(enc))["bytes"] <= 2 * SMALLEST
    copy = pickle.loads(pickle.dumps(enc))
    assert copy.piece_cache == 2 * SMALLEST and copy.encode_ordinary("some text") == enc.encode_ordinary("some text")


# -- same IDs, cached or not ------------------------------------------------------------------

@needs_c
@pytest.mark.parametrize("kind", ["prose", "python", "multilingual"])
@pytest.mark.parametrize("name", SHIPPED)
def test_cached_uncached_and_tiny_caches_agree_with_tiktoken(name, kind):
    text = corpus(kind)[:200_000]
    tk = offline_tiktoken(name)
    pieces = chunks(text, 300)
    expected = [tk.encode_ordinary(t) for t in pieces]
    for size in (None, SMALLEST, 3 * SMALLEST, 0):
        enc = fresh(name, size)
        for _ in range(2):  # the second pass finds the first's pieces
            assert [enc.encode_ordinary(t) for t in pieces] == expected, size
    # One long call, then the chunks again through the warm cache.
    enc = fresh(name, SMALLEST)
    assert enc.encode_ordinary(text) == tk.encode_ordinary(text)


@needs_c
@pytest.mark.parametrize("name", SHIPPED)
def test_every_output_path_goes_through_the_cache_unchanged(name, tmp_path):
    pytest.importorskip("numpy")
    text = corpus("prose")[:20_000] + corpus("multilingual")[:5_000]
    docs = chunks(text, 200, seed=1)
    enc, ref = fresh(name, SMALLEST), fresh(name, 0)
    want = [ref.encode_ordinary(d) for d in docs]
    assert [enc.encode_to_numpy(d).tolist() for d in docs] == want
    assert enc.encode_ordinary_batch(docs, num_threads=1) == want
    assert enc.encode_batch(docs, num_threads=3) == want
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    n = enc.encode_file(str(src), str(tmp_path / "a.bin"), append_eot=False, dtype="uint32")
    assert n == ref.encode_file(str(src), str(tmp_path / "b.bin"), append_eot=False, dtype="uint32")
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
    assert len(enc._caches) <= 8


@needs_c
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_special_tokens_are_not_pieces(name):
    enc, ref = fresh(name, SMALLEST), fresh(name, 0)
    text = "before<|endoftext|>after<|endoftext|><|endoftext|> and <|endoftext|>"
    for _ in range(2):
        assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
        assert enc.encode(text, allowed_special="all").count(enc.eot_token) == 4
        assert enc.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
        assert enc.eot_token not in enc.encode(text, disallowed_special=())
        with pytest.raises(ValueError, match="disallowed special token"):
            enc.encode(text)
        assert enc.encode_with_unstable("hello <|endoftext|> wor", allowed_special="all") == \
            ref.encode_with_unstable("hello <|endoftext|> wor", allowed_special="all")


# Pieces a cache keyed by less than all of a piece's bytes would confuse: the
# same first 8 bytes and different lengths (zero padding: "!!" and "!!\x00"),
# the same first 8 bytes and length with a different tail (9-16 bytes, " present"
# + letters), the
# same first and last 8 bytes and length with a different middle (17-64
# bytes), pieces at the very end of the buffer (their head is read
# differently there), and the 8/9, 16/17 and 64/65-byte edges of the cache's
# tables.  Each family has far more members than the smallest cache has sets,
# so members share sets and only the full key tells them apart.
_EDGES = [" abcdefgh", " abcdefghi", " abcdefghijklmnop", " abcdefghijklmnopq", "?" * 8, "?" * 9,
          "?" * 16, "?" * 17, " " + "q" * 63, " " + "q" * 64, " " + "q" * 65, " Иванович", " 東京都庁舎"]


def lookalikes(rng):
    letters = "abcdefghijklmnopqrstuvwxyz"
    word = lambda n: "".join(rng.choice(letters) for _ in range(n))
    same_head = [p + "\x00" * k for p in "!#$%&*+,-./:;<=>?@^_`|~" for k in range(8)]
    same_head_len = [" present" + word(rng.randint(1, 4)) for _ in range(120)]  # mostly 2-3 IDs
    same_ends = [" aaaaaaa" + word(rng.choice([2, 10, 40])) + "cccccccc" for _ in range(60)]
    return same_head + same_head_len + same_ends + _EDGES


@needs_c
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_lookalike_pieces_keep_their_own_ids(name):
    tk = offline_tiktoken(name)
    rng = random.Random(3)
    family = lookalikes(rng)
    for size in (SMALLEST, 2 * SMALLEST, None):
        enc = fresh(name, size)
        for _ in range(3):
            rng.shuffle(family)
            # each alone (so it ends the buffer), then several in one text
            assert [enc.encode_ordinary(t) for t in family] == [tk.encode_ordinary(t) for t in family]
            many = ["".join(rng.sample(family, rng.randint(2, 6))) for _ in range(100)]
            assert [enc.encode_ordinary(t) for t in many] == [tk.encode_ordinary(t) for t in many]


@needs_c
def test_whole_tokens_that_differ_only_by_trailing_nul_bytes():
    # The cache holds a short token's bytes zero-padded: only its length
    # tells "!!" from "!!\x00".  A toy vocabulary where all of them are tokens.
    ranks = {bytes([b]): b for b in range(256)}
    tokens = [p + b"\x00" * k for p in (b"!!", b"#", b"%%%", b"&") for k in range(8) if 2 <= len(p) + k <= 8]
    for t in tokens:
        ranks[t] = len(ranks)
    enc = Encoding("nul", pat_str=get_encoding("gpt2").pat_str, mergeable_ranks=ranks, special_tokens={},
                   backend="c", piece_cache=SMALLEST)
    rng = random.Random(5)
    for _ in range(20):
        rng.shuffle(tokens)
        assert [enc.encode_ordinary(t.decode()) for t in tokens] == [[ranks[t]] for t in tokens]


_chars = st.characters(exclude_categories=("Cs",))
_words = st.lists(st.sampled_from(lookalikes(random.Random(4))) | st.text(_chars, max_size=12)
                  | st.text("abcdefghij ", min_size=1, max_size=30), max_size=10).map("".join)


@needs_c
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(texts=st.lists(_words, min_size=1, max_size=6))
def test_hypothesis_text_through_tiny_and_default_caches(texts):
    # The same Encodings across examples: their caches carry everything
    # earlier examples put there.
    for name in ("gpt2", "o200k_base"):
        tk = offline_tiktoken(name)
        for size in (SMALLEST, None):
            enc = fresh(name, size)
            assert [enc.encode_ordinary(t) for t in texts] == [tk.encode_ordinary(t) for t in texts]
            assert enc.encode_ordinary_batch(texts, num_threads=1) == [tk.encode_ordinary(t) for t in texts]


# -- threads -------------------------------------------------------------------------------------

@needs_c
def test_threads_encoding_through_one_encoding_equal_serial():
    text = shakespeare()[:300_000] + corpus("python")[:100_000] + corpus("multilingual")[:50_000]
    enc, ref = fresh("o200k_base", 2 * SMALLEST), fresh("o200k_base", 0)
    jobs = [chunks(text[i::5], 250, seed=i) for i in range(5)]  # different texts per thread
    want = [[ref.encode_ordinary(t) for t in job] for job in jobs]
    got = run_at_once(lambda i: [enc.encode_ordinary(t) for t in jobs[i]], len(jobs))
    assert got == want
    assert 1 <= len(enc._caches) <= len(jobs)
    # each cache that was made went back once: none is listed twice
    assert len({id(c) for c in enc._caches}) == len(enc._caches)


# -- memory --------------------------------------------------------------------------------------

@needs_c
@pytest.mark.parametrize("size", [SMALLEST, SMALLEST + 63, 100_000, 1 << 20, 5_000_000])
def test_memory_stays_within_the_bound(size):
    table = get_encoding("gpt2", backend="c")._table
    cache = table.new_cache(size)
    held = table.cache_info(cache)["bytes"]
    assert size - 64 * 16 - 200 <= held <= size  # within one step of units (and the header) below
    data = shakespeare()[:500_000].encode()
    table.encode_utf8(data, native.PRESET_GPT2, cache)
    assert table.cache_info(cache)["bytes"] == held  # fixed at creation


@needs_c
def test_a_cache_too_small_or_for_another_table_is_refused():
    a = get_encoding("gpt2", backend="c")._table
    b = get_encoding("cl100k_base", backend="c")._table
    with pytest.raises(ValueError, match="piece cache of 100 bytes"):
        a.new_cache(100)
    cache = a.new_cache(SMALLEST)
    assert a.encode_utf8(b"hello", native.PRESET_GPT2, cache) == [31373]
    with pytest.raises(ValueError, match="invalid input"):
        b.encode_utf8(b"hello", native.PRESET_CL100K, cache)


# -- pieces with more IDs than an entry holds ---------------------------------------------
# CJK pieces run 20-99 bytes, and cl100k or gpt2 give many of 17-64 bytes more
# IDs than the cache's longest entry holds (14).  Such pieces, and pieces of
# 65-256 bytes, go to a spill cache of the call (csrc/ranks.c): merged once
# per call, not at every occurrence.

def _cjk_piece(rng, chars):
    # rare-ish CJK ideographs: several IDs per character on every encoding
    return " " + "".join(chr(rng.randrange(0x5000, 0x9000)) for _ in range(chars))


@needs_c
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_pieces_with_many_ids_are_merged_once_per_call(name):
    tk = offline_tiktoken(name)
    rng = random.Random(5)
    # An Encoding of its own, its cache empty: fresh()'s is shared with the
    # tests before, whose (hypothesis) pieces may fill a set with entries the
    # admission rule keeps, so a piece was refused once and merged twice in
    # about one run of two (main at 683d3a2, the file alone).
    shared = get_encoding(name, backend="c")
    enc = Encoding(name, pat_str=shared.pat_str, mergeable_ranks=shared.mergeable_ranks,
                   special_tokens=shared.special_tokens, backend="c")
    distinct = [_cjk_piece(rng, n) for n in (6, 10, 15, 20, 40, 80)]  # 19 .. 241 bytes
    assert max(len(tk.encode_ordinary(p)) for p in distinct if len(p.encode()) <= 64) > 14
    text = "。".join(rng.choice(distinct) for _ in range(300))
    before = enc._table.cache_info(cache_of(enc))["merges"] if enc._caches else 0
    assert enc.encode_ordinary(text) == tk.encode_ordinary(text)
    merged = enc._table.cache_info(cache_of(enc))["merges"] - before
    assert merged <= len(distinct)  # 300 occurrences, 6 distinct pieces


@needs_c
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@pytest.mark.parametrize("size", [SMALLEST, None])
def test_spilled_lookalikes_keep_their_own_ids(name, size):
    # same first and last 8 bytes and length, a different middle, far more
    # of them than a small call's spill cache has slots, in one call and alone
    tk = offline_tiktoken(name)
    rng = random.Random(6)
    enc = fresh(name, size)
    for chars in (8, 20, 60):
        family = [" 東京都" + _cjk_piece(rng, chars)[1:] + "庁舎だ" for _ in range(150)]
        text = "。".join(rng.choice(family) for _ in range(600))
        assert enc.encode_ordinary(text) == tk.encode_ordinary(text)
        assert [enc.encode_ordinary(t) for t in family[:20]] == [tk.encode_ordinary(t) for t in family[:20]]
        assert enc.encode_batch(family[:50]) == tk.encode_batch(family[:50])


# -- long pieces cut into units ------------------------------------------------------------
# The C cuts a piece the caches do not know (17-4,096 bytes) between two bytes
# no token holds side by side, where no merge can cross, and asks the piece
# cache about each unit (csrc/ranks_merge.c, bpe__ranks_merge_cut): a new CJK sentence made
# of known words merges nothing.  A unit takes merging's answer, never the
# whole-piece rule's.

def _cuts(ranks):
    """The byte pairs a piece may be cut between: held by no token."""
    held = {t[i:i + 2] for t in ranks for i in range(len(t) - 1)}
    return lambda a, b: bytes([a, b]) not in held


def _units(piece, cut_ok):
    out, start = [], 0
    for k in range(1, len(piece)):
        if cut_ok(piece[k - 1], piece[k]):
            out.append(piece[start:k])
            start = k
    return out + [piece[start:]]


@needs_c
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])  # o200k: too few cuts for the splicing
def test_new_sentences_of_known_units_merge_nothing_new(name):
    tk = offline_tiktoken(name)
    enc = fresh(name, 16 << 20)  # large: units in full sets are not stored (second sight)
    cut_ok = _cuts(enc.mergeable_ranks)
    rng = random.Random(7)
    common = "的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自之年过发后作里"
    first = ["".join(rng.choice(common) for _ in range(rng.randint(8, 40))) for _ in range(200)]
    # New sentences: the head of one joined to the tail of another where both
    # joins are cuts, so every unit of the new ones is a unit of the old.
    new = []
    while len(new) < 200:
        a, b = (s.encode() for s in rng.sample(first, 2))
        ka = [k for k in range(1, len(a)) if cut_ok(a[k - 1], a[k]) and a[k] & 0xC0 != 0x80]
        kb = [k for k in range(1, len(b)) if cut_ok(b[k - 1], b[k]) and b[k] & 0xC0 != 0x80]
        if not ka or not kb:
            continue
        k1, k2 = rng.choice(ka), rng.choice(kb)
        if cut_ok(a[k1 - 1], b[k2]) and len(a[:k1] + b[k2:]) >= 17:
            new.append((a[:k1] + b[k2:]).decode())
    assert sum(len(_units(s.encode(), cut_ok)) > 1 for s in new) > 100  # cuts happen
    text_a, text_b = "。".join(first), "。".join(new)
    assert enc.encode_ordinary(text_a) == tk.encode_ordinary(text_a)
    before = enc._table.cache_info(cache_of(enc))
    assert enc.encode_ordinary(text_b) == tk.encode_ordinary(text_b)
    after = enc._table.cache_info(cache_of(enc))
    assert after["merges"] > before["merges"]  # the sentences are new
    # their units are not (a few may have found their cache sets full)
    assert after["unit_merges"] - before["unit_merges"] <= before["unit_merges"] // 20
    assert before["unit_merges"] > 50


def _unreachable_toy(backend):
    # "abcd" is a token, but merging its bytes stops at a, bc, d: no pair of
    # those makes a token.  So the piece "abcd" is [abcd] (the whole-piece
    # rule), while inside a longer piece cut at "x" it is [a, bc, d].
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"bc"], ranks[b"abcd"] = 256, 257
    return Encoding("cut-toy", pat_str=get_encoding("gpt2").pat_str, mergeable_ranks=ranks,
                    special_tokens={}, backend=backend)


@needs_c
@pytest.mark.parametrize("order", ["token first", "long piece first"])
def test_a_unit_that_is_a_token_merging_does_not_reach(order):
    ref, enc = _unreachable_toy("python"), _unreachable_toy("c")
    assert ref.encode_ordinary("abcd") == [257]
    long_piece = "abcdxabcdxabcdxabcd"  # one piece of 19 bytes, cut at each x
    assert ref.encode_ordinary(long_piece) == [97, 256, 100, 120] * 3 + [97, 256, 100]
    texts = ["abcd", long_piece, "efgh abcd"] if order == "token first" else [long_piece, "abcd", "efgh abcd"]
    for _ in range(2):
        for text in texts:
            assert enc.encode_ordinary(text) == ref.encode_ordinary(text), text


@needs_c
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@pytest.mark.parametrize("size", [SMALLEST, None])
def test_random_cjk_sentences_agree_with_tiktoken(name, size):
    tk = offline_tiktoken(name)
    rng = random.Random(8)
    enc = fresh(name, size)
    for span in ((0x4E00, 0x4F00), (0x4E00, 0x9FFF), (0x3040, 0x30FF)):
        text = "、".join("".join(chr(rng.randrange(*span)) for _ in range(rng.randint(3, 120)))
                        for _ in range(300))
        for _ in range(2):
            assert enc.encode_ordinary(text) == tk.encode_ordinary(text), span


# -- pieces of two IDs (piece_cache.h's two table) -----------------------------------------------

def _two_id_toy(backend, piece_cache=None):
    """A toy vocabulary over letters and over punctuation with NUL bytes,
    where pieces of 2-8 bytes often merge to two IDs, many of them around
    2^24: the two table packs the second ID into 24 bits, and a larger one
    must go to the short table.  Pieces differing only by trailing NULs
    (same zero-padded head) must keep their own IDs."""
    rng = random.Random(11)
    ranks = {bytes([b]): b for b in range(256)}
    toks = set()
    for alphabet in (b"abcde", b"!#\x00"):
        while len(toks) < (60 if alphabet == b"abcde" else 100):
            toks.add(bytes(rng.choice(alphabet) for _ in range(rng.randint(2, 5))))
    toks = sorted(toks, key=lambda t: (len(t), t))
    rng.shuffle(toks)
    for i, t in enumerate(toks):  # half small IDs, half from 2^24 - 40 up
        ranks[t] = 256 + i if i % 2 else (1 << 24) - 40 + i
    return Encoding("two", pat_str=get_encoding("gpt2").pat_str, mergeable_ranks=ranks,
                    special_tokens={}, backend=backend, piece_cache=piece_cache)


@needs_c
@pytest.mark.parametrize("size", [SMALLEST, None])
def test_two_id_pieces_keep_their_ids_around_2_to_the_24(size):
    ref, enc = _two_id_toy("python"), _two_id_toy("c", size)
    rng = random.Random(12)
    words = []
    for _ in range(3000):
        alphabet = "abcde" if rng.random() < 0.5 else "!#\x00"
        words.append(" " * rng.randint(0, 1) + "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 8))))
    seen = {"small": 0, "large": 0}
    for rnd in range(3):  # again and again: the second time from the cache
        rng.shuffle(words)
        for k in range(0, len(words), 20):
            text = " ".join(words[k:k + 20])
            want = ref.encode_ordinary(text)
            assert enc.encode_ordinary(text) == want, text
    for w in words:
        ids = ref.encode_ordinary(w)
        if len(ids) == 2 and 2 <= len(w.encode()) <= 8:
            seen["small" if ids[1] <= 0xFFFFFF else "large"] += 1
    # both kinds of second ID were there to be cached
    assert seen["small"] > 200 and seen["large"] > 50, seen


@needs_c
@pytest.mark.parametrize("size", [SMALLEST, None])
def test_one_byte_pieces_come_back_from_the_cache_and_a_byte_without_a_token_never_does(size):
    # One-byte pieces take the cache's token entries like short whole tokens
    # (ranks.c, rk_encode_piece): a byte's ID is put there the first time.
    # A byte with no token of its own is the call's error, every time, in a
    # short text (one call) and a long one, and is never put there.  IDs
    # that are not the bytes' values, so a byte's ID must come from the
    # vocabulary, not the byte.
    ranks = {bytes([b]): 255 - b for b in range(256) if b != ord(",")}
    ranks[b"ab"] = 256
    pattern = get_encoding("gpt2").pat_str
    enc = Encoding("no-comma", pat_str=pattern, mergeable_ranks=ranks, special_tokens={}, backend="c",
                   piece_cache=size)
    ref = Encoding("no-comma", pat_str=pattern, mergeable_ranks=ranks, special_tokens={}, backend="python")
    rng = random.Random(3)
    short = ["".join(rng.choice("ab.;!? \n") for _ in range(rng.randint(1, 40))) for _ in range(300)]
    for rnd in range(3):  # the later rounds from the cache
        for text in short + ["ab. " * 6000]:
            assert enc.encode_ordinary(text) == ref.encode_ordinary(text), text[:40]
        for text in ["a, b", ",", "x" * 20000 + ", y", "ab." * 9000 + ","]:
            with pytest.raises(ValueError, match="has no token"):
                enc.encode_ordinary(text)
    assert enc.encode_ordinary(". ;") == [255 - ord("."), 255 - ord(" "), 255 - ord(";")]
