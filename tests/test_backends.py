"""The core interface (docs/backends.md) on every backend built here.

One suite, run once per backend (`c` and `python`, or `python` alone), in
CPython's heapq-test style: hand-checkable answers first (count_pairs order,
ties, skip-two, minbpe's "aaabdaaabac", the SPEC chapter trace), then
hypothesis parity -- Trainer == pybpe.reference.learn == repeated
find_best_pair + merge_pair, Merger == the rank-order sweep for any merge
list -- then degenerate and long inputs that would expose quadratic time.
"""
import time
from unittest import mock
from operator import itemgetter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pybpe import core as backends
from pybpe import reference
from pybpe.core.spec import merge as spec_merge
from pybpe.core.spec import merger as spec_merger

BACKENDS = backends.available()
HYPOTHESIS = dict(deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module", params=BACKENDS)
def core(request):
    return backends.get(request.param)


# -- helpers ---------------------------------------------------------------------------

def table(core, words, base):
    """(SymbolTable over base, WordTable of words given as byte-string tuples)."""
    symtab = core.SymbolTable(base)
    wt = core.WordTable()
    for symbols, freq in words:
        wt.add([symtab.lookup(s) for s in symbols], freq)
    return symtab, wt


def train(core, words, base, target, min_frequency=1, max_units=0, steps=10**9):
    """Run the Trainer (in chunks of `steps`); merges as (left, right, merged, count)."""
    symtab, wt = table(core, words, base)
    trainer = core.Trainer(symtab, wt, min_frequency=min_frequency, max_token_units=max_units)
    out = []
    while True:
        got = trainer.run(target, steps)
        out += got
        if len(got) < steps:
            return symtab, wt, out


def literal_train(core, words, base, target, min_frequency=1, max_units=0):
    """The chapter's loop on the core's helpers, for words of byte strings."""
    symtab = core.SymbolTable(base)
    ids = [([symtab.lookup(s) for s in symbols], freq) for symbols, freq in words]
    return literal_train_ids(core, ids, base, target, min_frequency, max_units)


def literal_train_ids(core, words, base, target, min_frequency=1, max_units=0):
    """The chapter's loop on the core's helpers: count, pick, merge, repeat."""
    symtab = core.SymbolTable(base)
    wt = core.WordTable(words)
    units = [1] * len(symtab)
    out = []
    while len(symtab) < target:
        counts = {p: c for p, c in core.count_pairs(wt).items()
                  if not max_units or units[p[0]] + units[p[1]] <= max_units}
        best = max(counts.items(), key=itemgetter(1)) if counts else None
        if best is None or best[1] < min_frequency:
            break
        (a, b), count = best
        merged = symtab.intern(symtab.token(a) + symtab.token(b))
        if merged == len(units):
            units.append(units[a] + units[b])
        core.merge_pair(wt, a, b, merged)
        out.append((a, b, merged, count))
    return symtab, wt, out


def chapter_symbols(word):
    """Chapter flavour: one symbol per character, the last one glued to " "."""
    chars = [c.encode() for c in word[:-1]]
    return tuple(chars + [(word[-1] + " ").encode()])


def word_counts(corpus, symbols=chapter_symbols):
    counts = {}
    for w in corpus:  # dicts keep first-appearance order
        counts[w] = counts.get(w, 0) + 1
    return [(symbols(w), f) for w, f in counts.items()]


def chapter_base(corpus):
    chars = {c for w in corpus for c in w}
    return [b"<UNK>"] + [t.encode() for t in sorted(chars | {c + " " for c in chars})]


def sweep(symbols, merges):
    """The rank-order sweep over IDs for an arbitrary (left, right, result) list."""
    symbols = list(symbols)
    for left, right, result in merges:
        symbols = reference.merge_word(symbols, (left, right), result)
    return symbols


# -- symbol table and word table --------------------------------------------------------

def test_symbol_table(core):
    t = core.SymbolTable([b"a", b"b", b"a"])
    assert len(t) == 2 and t.tokens() == [b"a", b"b"]
    assert t.intern(b"ab") == 2 and t.intern(b"a") == 0 and t.intern(b"") == 3
    assert t.lookup(b"b") == 1 and t.lookup(b"zz") == -1 and t.lookup(b"") == 3
    assert t.token(2) == b"ab" and t.token(3) == b""
    assert t.tokens() == [b"a", b"b", b"ab", b""]
    with pytest.raises(IndexError):
        t.token(4)
    with pytest.raises(TypeError):
        t.intern("a")


def test_word_table(core):
    w = core.WordTable([([0, 1, 2], 5), ([], 1)])
    w.add([2, 2], 3)
    w.add_many([[1], [0, core.NO_SYMBOL]], [7, 1])
    assert len(w) == 5
    assert [w.symbols(i) for i in range(5)] == [[0, 1, 2], [], [2, 2], [1], [0, core.NO_SYMBOL]]
    assert [w.frequency(i) for i in range(5)] == [5, 1, 3, 7, 1]
    with pytest.raises(ValueError):
        w.add([-1], 1)
    with pytest.raises((TypeError, ValueError)):
        w.add([0], -1)
    with pytest.raises(TypeError):
        w.add(["a"], 1)
    assert len(w) == 5  # a rejected word is not half-added


# -- the literal helpers: count_pairs, find_best_pair, merge_pair -----------------------

def test_count_pairs_first_encountered_order(core):
    w = core.WordTable([([1, 2, 3, 1, 2], 1)])
    counts = core.count_pairs(w)
    assert counts == {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    assert list(counts) == [(1, 2), (2, 3), (3, 1)]
    w = core.WordTable([([5, 6], 2), ([7, 5, 6], 3), ([], 9), ([4], 9)])
    assert list(core.count_pairs(w).items()) == [((5, 6), 5), ((7, 5), 3)]
    assert core.count_pairs(core.WordTable()) == {}


def test_find_best_pair_ties_go_to_first_encountered(core):
    # (3, 4) and (1, 2) both count 2; (3, 4) occurs first.
    w = core.WordTable([([3, 4], 1), ([1, 2], 2), ([3, 4], 1)])
    assert core.find_best_pair(w) == ((3, 4), 2)
    # Inside one word, left to right: (2, 1) precedes (1, 2)'s second hit.
    w = core.WordTable([([2, 1, 2, 1], 1)])
    assert core.find_best_pair(w) == ((2, 1), 2)
    assert core.find_best_pair(core.WordTable([([7], 3)])) is None


def test_merge_pair_skip_two(core):
    a, aa = 0, 1
    w = core.WordTable([([a, a, a], 1), ([a, a, a, a], 1), ([2, a], 1), ([a], 1)])
    assert core.merge_pair(w, a, a, aa) == 2
    assert [w.symbols(i) for i in range(4)] == [[aa, a], [aa, aa], [2, a], [a]]


def test_no_symbol_never_pairs(core):
    x = core.NO_SYMBOL
    w = core.WordTable([([0, x, 0, x, x], 4), ([0, 0], 1)])
    assert core.count_pairs(w) == {(0, 0): 1}
    assert core.Merger([(0, 0, 5)]).apply_merges([0, x, 0, 0]) == [0, x, 5]


# -- known answers: minbpe's example and the SPEC chapter trace -------------------------

def test_minbpe_aaabdaaabac(core):
    symtab = core.SymbolTable(bytes([i]) for i in range(256))
    wt = core.WordTable([(list(b"aaabdaaabac"), 1)])
    trainer = core.Trainer(symtab, wt)
    merges = trainer.run(259, 100)
    assert merges == [(97, 97, 256, 4), (256, 97, 257, 2), (257, 98, 258, 2)]
    assert symtab.tokens()[256:] == [b"aa", b"aaa", b"aaab"]
    merger = core.Merger([m[:3] for m in merges])
    assert merger.apply_merges(list(b"aaabdaaabac")) == [258, 100, 258, 97, 99]
    assert trainer.run(259, 100) == []  # already at the target


CHAPTER = ["low", "low", "lower", "newest", "widest"]


def test_chapter_trace(core):
    base = chapter_base(CHAPTER)
    assert len(base) == 21 and base[:5] == [b"<UNK>", b"d", b"d ", b"e", b"e "]
    assert base[19:] == [b"w", b"w "]
    symtab, _, merges = train(core, word_counts(CHAPTER), base, 25)
    named = [(symtab.token(a), symtab.token(b), m) for a, b, m, _ in merges]
    assert named == [(b"l", b"o", 21), (b"lo", b"w ", 22), (b"w", b"e", 23), (b"s", b"t ", 24)]
    assert [c for *_, c in merges] == [3, 2, 2, 2]
    merger = core.Merger([m[:3] for m in merges])
    lowest = [symtab.lookup(s) for s in chapter_symbols("lowest")]
    assert merger.apply_merges(lowest) == [21, 23, 24]


def test_reference_chapter_trace_on_str():
    # The oracle itself, on str tokens exactly as the chapter writes them.
    words = [((*w[:-1], w[-1] + " "), f) for w, f in [("low", 2), ("lower", 1), ("newest", 1), ("widest", 1)]]
    base = ["<UNK>"] + [t.decode() for t in chapter_base(CHAPTER)[1:]]
    vocab, merges = reference.learn(words, base, 25)
    assert merges == [("l", "o"), ("lo", "w "), ("w", "e"), ("s", "t ")]
    assert vocab[21:] == ["lo", "low ", "we", "st "]
    assert reference.apply_merges(("l", "o", "w", "e", "s", "t "), merges) == ["lo", "we", "st "]
    vocab, merges = reference.learn(words, base, 100)
    assert (len(vocab), len(merges)) == (34, 13)


def test_chapter_trace_runs_out_of_pairs(core):
    base = chapter_base(CHAPTER)
    symtab, wt, merges = train(core, word_counts(CHAPTER), base, 100)
    assert (len(symtab), len(merges)) == (34, 13)
    assert literal_train(core, word_counts(CHAPTER), base, 100)[2] == merges


def test_trainer_stops_below_min_frequency(core):
    words = [((b"a", b"b"), 3), ((b"c", b"d"), 1)]
    symtab, _, merges = train(core, words, [b"a", b"b", b"c", b"d"], 100, min_frequency=2)
    assert merges == [(0, 1, 4, 3)] and len(symtab) == 5


@pytest.mark.parametrize("min_frequency", [1, 2, 3, 40, 1000, 2**20, 2**20 + 1, 2**40])
@pytest.mark.parametrize("chunk", [1, 10**9])
def test_trainer_meets_counts_of_every_scale(core, min_frequency, chunk):
    # Counts from 1 to 2^21, with ties at every scale (the same frequency on
    # several words, pairs shared between words): the C trainer keeps only
    # pairs above a floor in its heap and halves the floor when the heap runs
    # dry (trainer.c, THE FLOOR), so every merge, each tie-break and the stop
    # at min_frequency must still be the chapter's loop's.
    alphabet = [bytes([c]) for c in b"abcdefg"]
    words = []
    for k in range(22):
        for j in range(3):
            word = tuple(alphabet[(k * 3 + j * 5 + i * i) % 7] for i in range(3 + (k + j) % 4))
            words.append((word, 2**k if j < 2 else 2**k + k))
    base = list(alphabet)
    symtab, _, merges = train(core, words, base, len(base) + 60, min_frequency, steps=chunk)
    assert merges == literal_train(core, words, base, len(base) + 60, min_frequency)[2]
    assert all(m[3] >= min_frequency for m in merges)
    assert (len(merges) > 5) if min_frequency <= 2**21 else merges == []


def test_existing_string_keeps_its_id(core):
    # "ab" is in the base vocabulary, so merging (a, b) records ID 2, adds nothing.
    words = [((b"a", b"b", b"a", b"b"), 1)]
    symtab, _, merges = train(core, words, [b"a", b"b", b"ab"], 5)
    assert merges == [(0, 1, 2, 2), (2, 2, 3, 1)] and symtab.tokens()[3:] == [b"abab"]


def test_max_token_units(core):
    words = [((b"a",) * 8, 1)]
    symtab, _, merges = train(core, words, [b"a"], 100, max_units=2)
    assert [symtab.token(m) for _, _, m, _ in merges] == [b"aa"]
    symtab, _, merges = train(core, words, [b"a"], 100, max_units=4)
    assert [symtab.token(m) for _, _, m, _ in merges] == [b"aa", b"aaaa"]


def test_trainer_degenerate_inputs(core):
    assert train(core, [], [b"a"], 100)[2] == []
    assert train(core, [((b"a",), 5), ((), 2)], [b"a"], 100)[2] == []
    symtab = core.SymbolTable([b"a"])
    with pytest.raises(ValueError):
        core.Trainer(symtab, core.WordTable(), min_frequency=0)


def test_merger_duplicate_pair_and_duplicate_result(core):
    a, b, c, ab, bc, abc = range(6)
    # Two routes to "abc": (ab, c) at rank 1 and (a, bc) at rank 2.
    merges = [(a, b, ab), (ab, c, abc), (b, c, bc), (a, bc, abc)]
    merger = core.Merger(merges)
    for word in ([a, b, c], [b, c, a, b, c], [a, a, b, c, b, c]):
        assert merger.apply_merges(word) == sweep(word, merges)
    # (a, a) twice: rank 0 makes "aa a", rank 2 joins the leftover a's again.
    aa, aaa = 6, 7
    merges = [(a, a, aa), (aa, a, aaa), (a, a, aa)]
    for n in range(1, 9):
        assert core.Merger(merges).apply_merges([a] * n) == sweep([a] * n, merges)
    assert core.Merger([]).apply_merges([a, b]) == [a, b]


def test_encode_words(core):
    merger = core.Merger([(0, 1, 2)])
    words = [[0, 1, 0, 1], [1, 0], [], [0, 1, 0, 1]]
    assert merger.encode_words(words) == [[2, 2], [1, 0], [], [2, 2]]


# -- hypothesis: Trainer == reference == literal loop; Merger == sweep -----------------

ALPHABETS = ["a", "ab", "abc", "abcd", "aé", "日本語", "a b", "\U0001F600x"]
FLAVOURS = {
    "chapter": chapter_symbols,
    "chars": lambda w: tuple(c.encode() for c in w),
    "bytes": lambda w: tuple(bytes([x]) for x in w.encode()),
    # The empty string is a legal symbol: merging (x, "") re-creates x.
    "empty": lambda w: tuple(b"" if c == "a" else c.encode() for c in w),
}


def words_strategy(alphabet):
    return st.text(alphabet=alphabet, min_size=1, max_size=9)


@st.composite
def corpora(draw):
    alphabet = draw(st.sampled_from(ALPHABETS))
    corpus = draw(st.lists(words_strategy(alphabet), max_size=14))
    corpus += corpus[:draw(st.integers(0, len(corpus)))]  # repeated words
    symbols = FLAVOURS[draw(st.sampled_from(sorted(FLAVOURS)))]
    words = word_counts(corpus, symbols)
    # Words of frequency 0 count nothing but still order the Counter.
    for w in draw(st.lists(words_strategy(alphabet), max_size=2)):
        words.insert(draw(st.integers(0, len(words))), (symbols(w), 0))
    base = sorted({s for w, _ in words for s in w})
    # Extra base tokens a merge may re-create: the merge must reuse their IDs.
    extra = draw(st.lists(st.text(alphabet=alphabet, min_size=2, max_size=3), max_size=3))
    base += [t.encode() for t in extra if t.encode() not in base]
    base = list(dict.fromkeys(base))
    target = len(base) + draw(st.integers(0, 24))
    return words, base, target, draw(st.sampled_from([1, 1, 1, 2, 3])), draw(st.sampled_from([0, 0, 2, 3, 5]))


@settings(max_examples=1200, **HYPOTHESIS)
@given(case=corpora(), chunk=st.sampled_from([1, 3, 10**9]))
def test_trainer_equals_reference_and_literal_loop(core, case, chunk):
    words, base, target, min_frequency, max_units = case
    symtab, wt, merges = train(core, words, base, target, min_frequency, max_units, steps=chunk)
    vocab, ref_merges = reference.learn(words, base, target, min_frequency, max_units)
    assert [(symtab.token(a), symtab.token(b)) for a, b, _, _ in merges] == ref_merges
    assert symtab.tokens() == vocab
    lit_symtab, lit_wt, lit_merges = literal_train(core, words, base, target, min_frequency, max_units)
    assert merges == lit_merges  # same IDs, same counts
    # Encoding each training word with the merges gives its trained segmentation.
    merger = core.Merger([m[:3] for m in merges])
    initial = [[symtab.lookup(s) for s in w] for w, _ in words]
    encoded = merger.encode_words(initial)
    assert encoded == [lit_wt.symbols(i) for i in range(len(words))]
    assert encoded == [[symtab.lookup(s) for s in reference.apply_merges(w, ref_merges)] for w, _ in words]


@st.composite
def id_tables(draw):
    """Word tables over raw IDs with NO_SYMBOL, frequency 0 and huge frequencies."""
    n_base = draw(st.integers(1, 4))
    ids = st.sampled_from(list(range(n_base)) + [0xFFFFFFFF])
    freqs = st.sampled_from([0, 1, 1, 2, 5, 2**40])
    words = draw(st.lists(st.tuples(st.lists(ids, max_size=12), freqs), max_size=10))
    base = [bytes([97 + k]) for k in range(n_base)] + draw(st.sampled_from([[], [b""], [b"ab"]]))
    return words, base, len(base) + draw(st.integers(0, 20))


@settings(max_examples=300, **HYPOTHESIS)
@given(case=id_tables(), min_frequency=st.sampled_from([1, 2]), max_units=st.sampled_from([0, 3]))
def test_trainer_equals_literal_loop_on_raw_ids(core, case, min_frequency, max_units):
    words, base, target = case
    symtab = core.SymbolTable(base)
    trainer = core.Trainer(symtab, core.WordTable(words), min_frequency=min_frequency,
                           max_token_units=max_units)
    merges = trainer.run(target, 10**9)
    symtab2, wt, lit = literal_train_ids(core, words, base, target, min_frequency, max_units)
    assert merges == lit and symtab.tokens() == symtab2.tokens()
    merger = core.Merger([m[:3] for m in merges])
    assert merger.encode_words([w for w, _ in words]) == [wt.symbols(i) for i in range(len(wt))]



@st.composite
def merge_lists(draw):
    """Random merge lists over a small alphabet: repeated pairs and results are common."""
    n_base = draw(st.integers(1, 3))
    ids = list(range(n_base))
    merges = []
    for _ in range(draw(st.integers(0, 12))):
        left, right = draw(st.sampled_from(ids)), draw(st.sampled_from(ids))
        result = draw(st.one_of(st.just(len(ids)), st.sampled_from(ids)))
        if result == len(ids):
            ids.append(result)
        merges.append((left, right, result))
    word = draw(st.lists(st.sampled_from(ids), max_size=60))
    return merges, word


@settings(max_examples=600, **HYPOTHESIS)
@given(case=merge_lists())
def test_merger_equals_sweep_for_any_merge_list(core, case):
    merges, word = case
    merger = core.Merger(merges)
    assert merger.apply_merges(word) == sweep(word, merges)
    assert merger.encode_words([word, word[:5]]) == [sweep(word, merges), sweep(word[:5], merges)]


@settings(max_examples=300, **HYPOTHESIS)
@given(case=merge_lists())
def test_pycore_both_merge_paths_equal_sweep(case):
    # The python Merger merges with the shared engine (spec/merge.py), which
    # switches from a rescanning loop to a heap at HEAP_THRESHOLD symbols;
    # force each path on every word (the heap's validity test re-derives the
    # creation-rank rule, the loop keeps it per pair).
    merges, word = case
    for threshold in (1, 1 << 30):  # every word on the heap, then on the loop
        with mock.patch.object(spec_merge, "HEAP_THRESHOLD", threshold):
            assert spec_merger.Merger(merges).apply_merges(word) == sweep(word, merges)


# -- long and degenerate inputs: no quadratic time --------------------------------------

def _timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def test_merger_long_word_is_not_quadratic(core):
    # a^n with doubling merges: a -> aa -> aaaa ... (IDs 0..5)
    merges = [(k, k, k + 1) for k in range(5)]
    merger = core.Merger(merges)
    small, t_small = _timed(merger.apply_merges, [0] * 20_000)
    big, t_big = _timed(merger.apply_merges, [0] * 200_000)
    assert small == [5] * 625 and big == [5] * 6250
    assert t_big < 30 * t_small + 0.5, (t_small, t_big)  # linear-ish is ~10x; quadratic ~100x


def test_trainer_long_word_is_not_quadratic(core):
    # One word of n a's: the Counter counts overlapping pairs, n-1, then
    # merging halves the word: counts n-1, n/2-1, n/4-1, ...
    def run(n):
        symtab = core.SymbolTable([b"a"])
        return core.Trainer(symtab, core.WordTable([([0] * n, 1)])).run(100, 6)
    small, t_small = _timed(run, 20_000)
    big, t_big = _timed(run, 200_000)
    assert [c for *_, c in big] == [199_999, 99_999, 49_999, 24_999, 12_499, 6_249]
    assert [c for *_, c in small] == [19_999, 9_999, 4_999, 2_499, 1_249, 624]
    assert t_big < 30 * t_small + 0.5, (t_small, t_big)


def test_trainer_long_mixed_word_matches_literal_loop(core):
    import random
    rnd = random.Random(7)
    word = tuple(rnd.choice([b"a", b"b", b"c"]) for _ in range(20_000))
    words = [(word, 2), (word[:50], 1)]
    base = [b"a", b"b", b"c"]
    assert train(core, words, base, 40)[2] == literal_train(core, words, base, 40)[2]
