"""Tests of the C backend's wrapper (pybpe.core.native.core) itself.

What tests/test_backends.py (one suite, both backends) does not cover: the
wrapper's argument validation (a bad ID is a TypeError/ValueError, never a
crash or a silent wrap-around), its single status -> exception map, object
lifetimes, and C against a naive oracle written here -- the chapter's
Counter loop for the Trainer, the rank-order sweep for the Merger -- on
random tie-heavy inputs with the awkward symbols (the empty string,
NO_SYMBOL, base tokens that merges re-create).
"""
import gc
import random

import pytest

ccore = pytest.importorskip("pybpe.core.native.core")
from pybpe._bpe_c import lib  # noqa: E402

NO = ccore.NO_SYMBOL


# -- the status map -----------------------------------------------------------

@pytest.mark.parametrize("status, exc", [
    (lib.BPE_ENOMEM, MemoryError),
    (lib.BPE_EINVAL, ValueError),
    (lib.BPE_ETOOBIG, OverflowError),
    (-99, RuntimeError),
])
def test_status_codes_map_to_exceptions(status, exc):
    with pytest.raises(exc, match="where"):
        ccore._check(status, "where")
    assert ccore._check(lib.BPE_OK, "where") == 0
    assert ccore._check(1, "where") == 1  # find_best_pair's "found"


# -- argument validation ------------------------------------------------------------

@pytest.mark.parametrize("bad, exc", [
    (-1, ValueError), (NO + 1, ValueError), (2**70, ValueError),
    (1.0, TypeError), ("a", TypeError), (None, TypeError), (b"a", TypeError),
])
def test_bad_symbol_ids_are_rejected(bad, exc):
    w = ccore.WordTable()
    with pytest.raises(exc):
        w.add([0, bad], 1)
    with pytest.raises(exc):
        w.add_many([[0], [1, bad]], [1, 1])
    with pytest.raises(exc):
        ccore.Merger([(0, 1, 2), (0, bad, 3)])
    with pytest.raises(exc):
        ccore.Merger([(0, 1, 2)]).apply_merges([0, bad])
    with pytest.raises(exc):
        ccore.Merger([(0, 1, 2)]).encode_words([[0, 1], [bad]])
    with pytest.raises(exc):
        ccore.merge_pair(w, 0, bad, 1)
    assert len(w) == 0  # nothing half-added


def test_error_messages_name_the_item():
    with pytest.raises(ValueError, match="item 1"):
        ccore.WordTable().add([0, -5], 1)
    with pytest.raises(TypeError, match="float"):
        ccore.Merger([(0, 1, 2)]).apply_merges([0, 1.5])


@pytest.mark.parametrize("freq, exc", [(-1, ValueError), (2**64, ValueError), (1.5, TypeError), ("1", TypeError)])
def test_bad_frequencies_are_rejected(freq, exc):
    w = ccore.WordTable()
    with pytest.raises(exc):
        w.add([0], freq)
    with pytest.raises(exc):
        w.add_many([[0], [1]], [1, freq])
    assert len(w) == 0
    w.add([0], 2**64 - 1)  # the largest uint64 is fine
    assert w.frequency(0) == 2**64 - 1


def test_word_table_conversions():
    w = ccore.WordTable([((0, 1), 2), (iter([3]), 1)])
    w.add(range(3), True)  # any iterable; bool is an int
    w.add_many([b"ab", []], [4, 5])  # bytes are a sequence of ints
    assert [w.symbols(i) for i in range(len(w))] == [[0, 1], [3], [0, 1, 2], [97, 98], []]
    assert w.frequency(2) == 1
    with pytest.raises(ValueError):
        w.add_many([[0]], [1, 2])
    with pytest.raises(IndexError):
        w.symbols(5)
    with pytest.raises(IndexError):
        w.frequency(-1)
    with pytest.raises(TypeError):
        w.symbols("0")
    with pytest.raises(TypeError):
        ccore.WordTable([(0, 1, 2)])


def test_symbol_table_validation():
    t = ccore.SymbolTable([b"a", b"", b"a\x00b"])
    assert t.tokens() == [b"a", b"", b"a\x00b"] and t.lookup(b"a\x00b") == 2
    for bad in ("a", 1, None, bytearray(b"a")):
        with pytest.raises(TypeError):
            t.intern(bad)
        with pytest.raises(TypeError):
            t.lookup(bad)
    for bad in (-1, 3, 2**40):
        with pytest.raises(IndexError):
            t.token(bad)
    with pytest.raises(TypeError):
        t.token(1.0)


def test_trainer_validation():
    t = ccore.SymbolTable([b"a", b"b"])
    w = ccore.WordTable([([0, 1], 1)])
    with pytest.raises(TypeError):
        ccore.Trainer(t, [([0, 1], 1)])
    with pytest.raises(TypeError):
        ccore.Trainer([b"a"], w)
    for kwargs, exc in [({"min_frequency": 0}, ValueError), ({"min_frequency": 1.0}, TypeError),
                        ({"max_token_units": -1}, ValueError), ({"max_token_units": 2**32}, ValueError)]:
        with pytest.raises(exc):
            ccore.Trainer(t, w, **kwargs)
    with pytest.raises(ValueError, match="not in the symbol table"):
        ccore.Trainer(t, ccore.WordTable([([0, 7], 1)]))
    tr = ccore.Trainer(t, w)
    for args, exc in [((-1, 1), ValueError), ((10, -1), ValueError), ((10, "1"), TypeError)]:
        with pytest.raises(exc):
            tr.run(*args)
    assert tr.run(2**64 - 1, 0) == []
    assert tr.run(2**64 - 1, 2**64 - 1) == [(0, 1, 2, 1)]


def test_pure_python_objects_are_rejected():
    from pybpe.core import spec as _pycore
    pw = _pycore.WordTable([([0, 1], 1)])
    for f in (ccore.count_pairs, ccore.find_best_pair):
        with pytest.raises(TypeError):
            f(pw)
    with pytest.raises(TypeError):
        ccore.Trainer(_pycore.SymbolTable([b"a", b"b"]), ccore.WordTable())


def test_merger_validation():
    for bad in ([(0, 1)], [(0, 1, 2, 3)], [5], [None]):
        with pytest.raises(TypeError):
            ccore.Merger(bad)
    m = ccore.Merger([])
    assert m.apply_merges([]) == [] and m.apply_merges([3, 4]) == [3, 4]
    assert m.encode_words([]) == [] and m.encode_words([[], [1]]) == [[], [1]]


# -- lifetimes ----------------------------------------------------------------------

def test_trainer_keeps_its_symbol_table_alive():
    t = ccore.SymbolTable([b"a", b"b"])
    tr = ccore.Trainer(t, ccore.WordTable([([0, 1, 0, 1], 3)]))
    del t
    gc.collect()
    assert tr.run(100, 10) == [(0, 1, 2, 6), (2, 2, 3, 3)]
    assert tr._symtab.tokens() == [b"a", b"b", b"ab", b"abab"]


def test_trainer_copies_the_word_table():
    t = ccore.SymbolTable([b"a", b"b"])
    w = ccore.WordTable([([0, 1], 1)])
    tr = ccore.Trainer(t, w)
    w.add([1, 0], 5)  # after the copy: not seen
    del w
    gc.collect()
    assert tr.run(100, 10) == [(0, 1, 2, 1)]


# -- C against naive oracles on random inputs ----------------------------------------

def sweep_merge(seg, a, b, m):
    out, i = [], 0
    while i < len(seg):
        if i + 1 < len(seg) and seg[i] == a and seg[i + 1] == b:
            out.append(m)
            i += 2
        else:
            out.append(seg[i])
            i += 1
    return out


def naive_train(words, base, target, min_frequency, max_units):
    """The chapter's loop: a fresh Counter-style dict every step."""
    vocab = list(base)
    ids = {t: i for i, t in enumerate(vocab)}
    units = [1] * len(vocab)
    segs = [list(s) for s, _ in words]
    merges = []
    while len(vocab) < target:
        counts = {}
        for seg, (_, f) in zip(segs, words):
            for p in zip(seg, seg[1:]):
                if NO not in p:
                    counts[p] = counts.get(p, 0) + f
        allowed = [(p, c) for p, c in counts.items()
                   if not max_units or units[p[0]] + units[p[1]] <= max_units]
        if not allowed:
            break
        (a, b), c = max(allowed, key=lambda pc: pc[1])  # first maximal: first encountered
        if c < min_frequency:
            break
        s = vocab[a] + vocab[b]
        m = ids.get(s)
        if m is None:
            m = ids[s] = len(vocab)
            vocab.append(s)
            units.append(units[a] + units[b])
        segs = [sweep_merge(seg, a, b, m) for seg in segs]
        merges.append((a, b, m, c))
    return vocab, merges, segs


ALPHABETS = [[b"a", b"b"], [b"a", b"b", b"c"], [b"a", b"b", b"ab", b"ba"],
             [b"a", b"", b"b"], [b"x", b"y", b"xy", b"xyx", b"z"]]


def random_case(rng):
    base = rng.choice(ALPHABETS)
    words = []
    for _ in range(rng.randint(0, 12)):
        if words and rng.random() < 0.25:
            words.append(rng.choice(words))  # a repeated word
            continue
        n = rng.choice([0, 1, rng.randint(2, 10)])
        syms = [NO if rng.random() < 0.03 else rng.randrange(len(base)) for _ in range(n)]
        words.append((syms, rng.choice([0, 1, 1, 2, 3, 7])))
    return (words, base, len(base) + rng.randint(0, 30),
            rng.choice([1, 1, 2, 3]), rng.choice([0, 0, 2, 3, 5]))


def test_trainer_equals_naive_loop_on_random_tables():
    rng = random.Random(20240611)
    for _ in range(1500):
        words, base, target, minf, max_units = random_case(rng)
        symtab = ccore.SymbolTable(base)
        trainer = ccore.Trainer(symtab, ccore.WordTable(words),
                                min_frequency=minf, max_token_units=max_units)
        step = rng.choice([1, 2, 10**9])
        got = []
        while True:
            chunk = trainer.run(target, step)
            got += chunk
            if len(chunk) < step:
                break
        vocab, want, segs = naive_train(words, base, target, minf, max_units)
        assert got == want, (words, base, target, minf, max_units)
        assert symtab.tokens() == vocab
        # The learned merges, applied by the Merger, give the trained words.
        merger = ccore.Merger([m[:3] for m in got])
        assert merger.encode_words([s for s, _ in words]) == segs


def test_trainer_merges_unsorted_occurrence_lists_in_any_order():
    # A pair's occurrence list is sorted before merging only when order can
    # matter: (a, a), whose occurrences overlap ("a a a": the skip-two rule),
    # or an empty symbol (a node met twice).  Other pairs never overlap, so
    # trainer.c merges their lists in heap order.  Long words over alphabets
    # where one string has several spellings ("ab" + "a" and "a" + "ba"; the
    # empty string) fill lists from many steps, out of key order: every kind
    # of pair must still give the naive loop's merges.
    rng = random.Random(7)
    for base in ([b"a", b"b"], [b"a", b"b", b"ab", b"ba"], [b"a", b"", b"b"],
                 [b"x", b"y", b"xy", b"yx", b"xyx"]):
        for _ in range(60):
            words = [([rng.randrange(len(base)) for _ in range(rng.randint(2, 40))],
                      rng.choice([1, 2, 3, 5])) for _ in range(rng.randint(1, 8))]
            symtab = ccore.SymbolTable(base)
            trainer = ccore.Trainer(symtab, ccore.WordTable(words), min_frequency=1, max_token_units=0)
            target = len(base) + 40
            assert trainer.run(target, 10**9) == naive_train(words, base, target, 1, 0)[1], (base, words)


def sweep(symbols, merges):
    for left, right, result in merges:
        if NO not in (left, right):
            symbols = sweep_merge(symbols, left, right, result)
    return symbols


def random_merges(rng):
    n_sym = rng.randint(2, 4)
    merges = []
    for r in range(rng.randint(0, 40)):
        if merges and rng.random() < 0.2:
            left, right, _ = rng.choice(merges)  # the same pair again
        else:
            left, right = rng.randrange(n_sym), rng.randrange(n_sym)
        if rng.random() < 0.3:
            result = rng.randrange(n_sym)  # an existing symbol: two pairs, one result
        else:
            result, n_sym = n_sym, n_sym + 1
        if rng.random() < 0.02:
            left = NO
        merges.append((left, right, result))
    return merges, n_sym


def test_merger_equals_sweep_on_random_merge_lists():
    rng = random.Random(7)
    for _ in range(3000):
        merges, n_sym = random_merges(rng)
        merger = ccore.Merger(merges)
        words = []
        for _ in range(rng.randint(1, 4)):
            n = rng.choice([0, 1, rng.randint(2, 20), rng.randint(20, 120)])  # both C paths
            words.append([rng.randrange(n_sym) if rng.random() < 0.2 else rng.randrange(2)
                          for _ in range(n)])
        if rng.random() < 0.1 and words[0]:
            words[0][rng.randrange(len(words[0]))] = NO
        want = [sweep(w, merges) for w in words]
        assert [merger.apply_merges(w) for w in words] == want, merges
        assert merger.encode_words(words) == want
        assert merger.encode_words(tuple(tuple(w) for w in words)) == want


def test_merger_long_word_is_linearithmic():
    # "a" * 2**20 with a doubling merge list collapses to one symbol.
    merges = [(i, i, i + 1) for i in range(20)]
    assert ccore.Merger(merges).apply_merges([0] * 2**20) == [20]
