"""Exact answers at the edges: 64-bit counts and the caches (issue 11, "Wrong answers").

Counts are uint64 in C.  A count that would pass 2**64 - 1 -- a word count,
a pair count in count_pairs, a pair count in the trainer at the start or
after any merge -- is an OverflowError with the same message on both
backends, never a wrap-around that quietly changes which pair wins.  The
caches (the tokenizer's word cache, the Python backend's piece and word
caches) must never lose an entry the current call still needs.
"""
import pytest

import pybpe
from pybpe import core as backends, reference
from pybpe.errors import COUNT_OVERFLOW

BACKENDS = backends.available()
MAX = 2**64 - 1


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def core(backend):
    return backends.get(backend)


def overflow(what):
    """pytest.raises for the shared overflow error of `what`."""
    return pytest.raises(OverflowError, match="^%s: %s$" % (what, _escaped(COUNT_OVERFLOW)))


def _escaped(text):
    import re

    return re.escape(text)


# -- the issue's reproducer ------------------------------------------------------------

def test_issue_reproducer_is_an_error_not_a_wrong_answer(backend):
    tok = pybpe.BPETokenizer(vocab_size=20, backend=backend)
    with overflow("Trainer"):  # (a, b ) counts 2**63 + 2**63 = 2**64
        tok.train_from_counts({"ab": 2**63, "xab": 2**63})
    assert not tok.is_trained  # nothing half-installed


def test_largest_count_that_fits_trains_like_the_reference(backend):
    counts = {"ab": 2**63, "xab": 2**63 - 1}  # (a, b ) counts exactly 2**64 - 1
    tok = pybpe.BPETokenizer(vocab_size=20, backend=backend)
    tok.train_from_counts(counts)
    words = [(tuple(w[:-1]) + (w[-1] + " ",), f) for w, f in counts.items()]
    vocab, merges = reference.learn(words, tok.flavour.base_vocab(set("abx")), 20)
    assert tok.merges == merges == [("a", "b "), ("x", "ab ")]
    assert tok.merge_counts == [MAX, 2**63 - 1]


def test_frequency_past_64_bits_names_the_word(backend):
    tok = pybpe.BPETokenizer(backend=backend)
    with pytest.raises(ValueError, match="'big'"):
        tok.train_from_counts({"ok": 1, "big": 2**64})


# -- word counting ---------------------------------------------------------------------

def test_word_counts_never_wrap(core):
    counter = core.WordCounter()
    counter.add_words(["w", "v"], [MAX, 1])
    with overflow("WordCounter.add_text"):
        counter.add_text("v w v")
    assert dict(counter.items())["v"] == 2  # counted up to the failure, as documented
    with overflow("WordCounter.add_words"):
        counter.add_words(["w"], [1])
    counter.add_words(["w"], [0])
    assert dict(counter.items())["w"] == MAX
    fresh = core.WordCounter()
    with overflow("WordCounter.add_words"):
        fresh.add_words(["x", "x"], [2**63, 2**63])


# -- the chapter's helpers -------------------------------------------------------------

def test_count_pairs_never_wraps(core):
    words = core.WordTable([([0, 1], 2**63), ([2, 0, 1], 2**63)])
    with overflow("count_pairs"):
        core.count_pairs(words)
    with overflow("find_best_pair"):
        core.find_best_pair(words)
    fits = core.WordTable([([0, 1], 2**63), ([2, 0, 1], 2**63 - 1)])
    assert core.count_pairs(fits) == {(0, 1): MAX, (2, 0): 2**63 - 1}
    assert core.find_best_pair(fits) == ((0, 1), MAX)


# -- the trainer -----------------------------------------------------------------------

def test_trainer_initial_counts_never_wrap(core):
    symtab = core.SymbolTable([b"a", b"b", b"x"])
    with overflow("Trainer"):
        core.Trainer(symtab, core.WordTable([([0, 1], 2**63), ([2, 0, 1], 2**63)]))


def test_trainer_count_passing_64_bits_after_a_merge(core):
    # "abc" is built twice, from a+bc and from ab+c: the second merge joins two
    # (abc, d) counts of 2**63 each.
    base = [b"a", b"bc", b"ab", b"c", b"d"]
    a, bc, ab, c, d = range(5)
    words = [([a, bc, d], 2**63), ([ab, c, d], 2**63), ([a, bc], 1), ([ab, c], 1)]
    symtab = core.SymbolTable(base)
    trainer = core.Trainer(symtab, core.WordTable(words))
    assert trainer.run(100, 1) == [(a, bc, 5, 2**63 + 1)]
    with overflow("Trainer.run"):
        trainer.run(100, 10)
    with overflow("Trainer.run"):  # a failed trainer keeps failing, on both backends
        trainer.run(100, 10)
    # The reference learns a third merge with a count of 2**64, which no
    # uint64 can hold: that is the step both backends refuse.
    vocab, merges = reference.learn([(tuple(base[s] for s in w), f) for w, f in words], base, 9)
    assert merges[:3] == [(b"a", b"bc"), (b"ab", b"c"), (b"abc", b"d")]


def test_trainer_sum_passing_64_bits_inside_a_step_is_not_an_overflow(core):
    # Merging (a, b) first adds an occurrence of (b, ab) in "b a b" (the count
    # reaches 2**64 for a moment) and then removes one in "a b ab": the count
    # after the step fits, so this is no overflow, and training equals the
    # reference's.
    base = [b"a", b"b", b"ab"]
    a, b, ab = range(3)
    words = [([b, a, b], 2**62), ([a, b, ab], 2**62), ([b, ab], 2**63), ([a, b], 2**63 - 2**62 + 1)]
    symtab = core.SymbolTable(base)
    got = core.Trainer(symtab, core.WordTable(words)).run(100, 100)
    vocab, merges = reference.learn([(tuple(base[s] for s in w), f) for w, f in words], base, 100)
    assert [(symtab.token(x), symtab.token(y)) for x, y, _, _ in got] == merges
    assert got[0][:2] == (a, b) and max(m[3] for m in got) <= MAX


# -- the caches never lose a hit ---------------------------------------------------------

def _trained(backend, **options):
    tok = pybpe.BPETokenizer(vocab_size=60, backend=backend, **options)
    tok.train(["w0 w1 w2 fresh words to learn from, w10 w11 w12"] * 3)
    return tok


def test_word_cache_full_keeps_this_calls_words(backend):
    # The issue's reproducer at the real limit: 200,000 distinct words in
    # short calls (short texts take the cached per-word path on C as well),
    # then a call with one cached word and one new one.
    from pybpe.tokenizer import WORD_CACHE_LIMIT

    tok = _trained(backend)
    step = 40
    for start in range(0, WORD_CACHE_LIMIT, step):
        tok.encode(" ".join("w%d" % i for i in range(start, start + step)))
    assert len(tok._state.word_cache) == WORD_CACHE_LIMIT
    fresh = pybpe.BPETokenizer(vocab_size=60, backend=backend)
    fresh.train(["w0 w1 w2 fresh words to learn from, w10 w11 w12"] * 3)
    assert tok.encode("w0 fresh") == fresh.encode("w0 fresh")


@pytest.mark.parametrize("limit", [1, 2, 3, 7])
@pytest.mark.parametrize("options", [{}, {"pretokenizer": r"\w+|\W"}, {"byte_level": True}])
def test_word_cache_at_every_fill_level(backend, monkeypatch, limit, options):
    # With a tiny limit every call crosses it somewhere; each result must equal
    # an uncached tokenizer's (a fresh one per text).
    monkeypatch.setattr(pybpe.tokenizer, "WORD_CACHE_LIMIT", limit)
    tok = _trained(backend, **options)
    texts = ["w0 w1", "w1 w2 w3", "w0 w0 w9 w1", "fresh w0", "w12 w11 w10 w2 w1 w0", "w5", "w0 w5 w6"]
    expected = []
    for text in texts:
        monkeypatch.setattr(pybpe.tokenizer, "WORD_CACHE_LIMIT", 10**9)
        expected.append(_trained(backend, **options).encode(text))
        monkeypatch.setattr(pybpe.tokenizer, "WORD_CACHE_LIMIT", limit)
    for _ in range(2):
        assert [tok.encode(t) for t in texts] == expected
        assert len(tok._state.word_cache) <= limit


def test_python_piece_caches_at_every_fill_level(monkeypatch):
    # The Python backend's Encoding piece cache and Merger word cache clear
    # when full; a clear in the middle of a call must not change its result.
    from pybpe.core.spec import merger as spec_merger, ranks as spec_ranks

    enc = pybpe.get_encoding("gpt2", backend="python")
    text = "hello hello world, the world says hello to the wide world of words " * 3
    want = enc.encode(text)
    monkeypatch.setattr(spec_ranks, "_CACHE_SIZE", 2)
    table = spec_ranks.RankTable(list(enc._mergeable_ranks), list(enc._mergeable_ranks.values()))
    assert table.encode_pieces(enc._pat.findall(text)) == want
    monkeypatch.setattr(spec_merger, "_CACHE_LIMIT", 2)
    merger = spec_merger.Merger([(0, 1, 3), (3, 2, 4)])
    words = [[0, 1], [0, 1, 2], [2, 2], [0, 1], [1, 0], [0, 1, 2]]
    assert merger.encode_words(words) == [merger.apply_merges(w) for w in words]


def _outcome(core, base, words, target):
    """(merges as byte pairs, error message or None) of training one merge at a time."""
    symtab = core.SymbolTable(base)
    try:
        trainer = core.Trainer(symtab, core.WordTable(words))
    except OverflowError as exc:
        return [], str(exc)
    merges = []
    while True:
        try:
            step = trainer.run(target, 1)
        except OverflowError as exc:
            return merges, str(exc)
        if not step:
            return merges, None
        merges.append((symtab.token(step[0][0]), symtab.token(step[0][1]), step[0][3]))


def _naive_max_counts(base, words, merges):
    """The largest pair count before training and after each merge, recounted
    from scratch with Python ints (the chapter's loop)."""
    from collections import Counter

    segs = [([base[s] for s in w], f) for w, f in words]
    out = []
    for k in range(len(merges) + 1):
        stats = Counter()
        for symbols, f in segs:
            for pair in zip(symbols, symbols[1:]):
                stats[pair] += f
        out.append(max(stats.values(), default=0))
        if k < len(merges):
            a, b = merges[k][:2]
            segs = [(reference.merge_word(symbols, (a, b), a + b), f) for symbols, f in segs]
    return out


@pytest.mark.parametrize("seed", range(300))
def test_overflow_exactly_when_a_true_count_passes_64_bits(seed):
    # Random tables of huge frequencies over symbols that can build the same
    # string two ways: both backends stop at the same step with the same
    # message, and that is exactly the first state (start, or after a merge)
    # whose largest true pair count, recounted with Python ints, passes
    # 2**64 - 1; before it, the merges are the reference's.
    import random

    rng = random.Random(seed)
    base = [b"a", b"b", b"c", b"ab", b"bc", b"d"]
    sizes = [1, 2, 3, 2**61, 2**62, 2**62 + 1, 2**63 - 1, 2**63, MAX]
    words = [([rng.randrange(len(base)) for _ in range(rng.randrange(1, 5))], rng.choice(sizes))
             for _ in range(rng.randrange(1, 6))]
    if seed % 2:  # "abcd" two ways, with a + bc and ab + c boosted to merge first
        a, b, c, ab, bc, d = range(6)
        words += [([a, bc, d], rng.choice(sizes[3:8])), ([ab, c, d], rng.choice(sizes[3:8])),
                  ([a, bc], rng.choice([1, 2, 2**61])), ([ab, c], rng.choice([1, 2, 2**61]))]
        rng.shuffle(words)
    target = len(base) + 6
    outcomes = {b: _outcome(backends.get(b), base, words, target) for b in BACKENDS}
    merges, error = outcomes[BACKENDS[0]]
    assert all(o == (merges, error) for o in outcomes.values())
    _, expected = reference.learn([(tuple(base[s] for s in w), f) for w, f in words], base, target)
    assert [m[:2] for m in merges] == expected[:len(merges)]
    if error is None:
        assert [m[:2] for m in merges] == expected
        assert all(m <= MAX for m in _naive_max_counts(base, words, merges))
        return
    assert error.endswith(COUNT_OVERFLOW)
    if error.startswith("Trainer: "):  # the counts before any merge
        assert merges == [] and _naive_max_counts(base, words, [])[0] > MAX
    else:  # the merge after the last one returned made some count pass 2**64 - 1
        assert error.startswith("Trainer.run: ")
        maxima = _naive_max_counts(base, words, [m[:2] for m in merges] + [expected[len(merges)]])
        assert all(m <= MAX for m in maxima[:-1]) and maxima[-1] > MAX
