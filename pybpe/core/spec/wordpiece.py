"""The incremental WordPiece trainer in pure Python: the specification of
csrc/wordpiece.c (the C book's section 11.8).

It learns exactly what pybpe.reference.learn_wordpiece learns -- each step
the pair with the highest likelihood score count(ab) / (count(a) * count(b)),
ties to the pair encountered first (the BPE rule) -- on the
same word table and node list as trainer.py, but after a merge it touches
only what the merge changed.  It leaves out what the initial symbols are
(pybpe/wordpiece.py decides: a word's first character as itself, the others
with the continuation prefix) and encoding (greedy longest match needs no
merge list).
"""

import heapq

from ...errors import COUNT_OVERFLOW
from .common import MAX_COUNT, NO_SYMBOL, check_count
from .symtab import SymbolTable
from .words import WordTable

__all__ = ["WordPieceTrainer"]


# ---------------------------------------------------------------------------
# What differs from the BPE trainer (trainer.py), and why.
# ---------------------------------------------------------------------------
#
# Node list, pair records, keys: as in trainer.py.  Nodes are laid out word
# after word in first-appearance order, so the smallest valid left-node index
# of a pair -- its key -- is where a Counter rebuilt from scratch would first
# meet it.  recs[pair] = [count, occ, key_lb, exact]; occ is a lazy min-heap
# of node indices.  Words of frequency 0 keep their nodes (they still decide
# where a pair is first met) but their pairs count 0 and are never chosen.
#
# Symbol counts.  symcount[s] = the weighted number of occurrences of s in the
# current segmentation (one-symbol words included).  A merge of (a, b) into m
# moves f from a and from b to m at each occurrence it rewrites.
#
# The score moves without the pair.  A BPE count changes only where a merge
# touches the pair; a WordPiece score also changes when count(a) or count(b)
# does -- for every pair that has a or b on either side.  So each symbol keeps
# the list of pairs it is part of (`users`, pairs with count > 0; pairs whose
# count fell to 0 are dropped lazily, and a pair whose count rises from 0 is
# listed again), and after a merge of (a, b) into m every pair of a, b and m
# gets a fresh heap entry.
#
# Main heap.  Entries (-score, exact score, key, pair, count, count(left),
# count(right)); an entry is current iff its three counts and its key equal
# the record's and the symbols' now.  The score is compared exactly: the
# float `count / (count(left) * count(right))` is Python's correctly rounded
# division, so when two floats differ the true scores differ the same way
# (rounding never reverses an order), and only equal floats fall back to
# _Exact, which cross-multiplies ints.  Selection as in trainer.py: the top
# current entry wins once its key is exact.
#
# Counts never pass 2**64 - 1 here, unlike BPE: every count (pair or symbol)
# is a sum over distinct nodes, so none exceeds the total weight of all
# nodes, which is checked once when the trainer is built.

class _Exact:
    """A score count / den, ordered high first (`<` means a higher score)."""

    __slots__ = ("count", "den")

    def __init__(self, count, den):
        self.count, self.den = count, den

    def __lt__(self, other):
        return self.count * other.den > other.count * self.den

    def __eq__(self, other):
        return self.count * other.den == other.count * self.den


class WordPieceTrainer:
    """Learns the merges pybpe.reference.learn_wordpiece would, incrementally.

    The token a merge of (a, b) makes is a + b with b's leading `prefix`
    removed (b"##": b"l" + b"##o" -> b"lo", b"##o" + b"##w" -> b"##ow").
    run() gives (left, right, merged, count, count(left), count(right)) per
    merge: the score it won with is count / (count(left) * count(right)).

    >>> st = SymbolTable([b"a", b"d", b"##b", b"##c"])
    >>> words = WordTable([([0, 2], 3), ([0, 3], 1), ([1, 2], 1)])
    >>> WordPieceTrainer(st, words).run(100, 10)   # 1/4 beats 3/16; then 3/12 ties 1/4
    [(0, 3, 4, 1, 4, 1), (0, 2, 5, 3, 3, 4), (1, 2, 6, 1, 1, 1)]
    >>> st.tokens()[4:]
    [b'ac', b'ab', b'db']
    """

    def __init__(self, symtab, words, *, min_frequency=1, prefix=b"##"):
        if not isinstance(symtab, SymbolTable):
            raise TypeError("WordPieceTrainer needs a spec.SymbolTable, not %s" % type(symtab).__name__)
        if not isinstance(words, WordTable):
            raise TypeError("WordPieceTrainer needs a spec.WordTable, not %s" % type(words).__name__)
        if not isinstance(prefix, bytes):
            raise TypeError("prefix must be bytes, not %s" % type(prefix).__name__)
        self._min_frequency = check_count(min_frequency, "min_frequency", 1)
        self._prefix = prefix
        self._symtab = symtab
        n_symbols = len(symtab)
        symcount = [0] * n_symbols
        sym, prv, nxt, frq = [], [], [], []
        for k in range(len(words)):
            symbols, f = words.symbols(k), words.frequency(k)
            if any(s >= n_symbols and s != NO_SYMBOL for s in symbols):
                raise ValueError("word %d holds a symbol ID that is not in the symbol table" % k)
            linked = False  # is the node before this one its left neighbour?
            for s in symbols:
                if s == NO_SYMBOL:
                    linked = False  # cut the word here: unknown never pairs
                    continue
                i = len(sym)
                sym.append(s)
                prv.append(i - 1 if linked else -1)
                nxt.append(-1)
                if linked:
                    nxt[i - 1] = i
                frq.append(f)
                symcount[s] += f
                linked = True
        if sum(frq) > MAX_COUNT:
            raise OverflowError("WordPieceTrainer: %s" % COUNT_OVERFLOW)
        sym.append(-1)  # a sentinel, as in trainer.py: sym[-1] is never a symbol
        self._sym, self._prv, self._nxt, self._frq = sym, prv, nxt, frq
        self._symcount = symcount
        self._users = [[] for _ in range(n_symbols)]  # symbol -> pairs it is in
        self._recs = recs = {}
        self._listed = set()  # pairs in their symbols' user lists
        for i in range(len(sym) - 1):  # ascending: each occ list is a heap
            j = nxt[i]
            if j == -1:
                continue
            pair = sym[i] << 32 | sym[j]
            rec = recs.get(pair)
            if rec is None:
                recs[pair] = [frq[i], [i], i, True]
            else:
                rec[0] += frq[i]
                rec[1].append(i)
        for pair, rec in recs.items():
            if rec[0] > 0:
                self._list(pair)
        self._failed = None
        self._heap = [self._entry(pair) for pair, rec in recs.items() if rec[0] >= self._min_frequency]
        heapq.heapify(self._heap)

    def _list(self, pair):
        """Put pair in the user lists of both its symbols."""
        a, b = pair >> 32, pair & 0xFFFFFFFF
        self._listed.add(pair)
        self._users[a].append(pair)
        if b != a:
            self._users[b].append(pair)

    def _entry(self, pair):
        """A current heap entry for pair (see the essay above)."""
        rec = self._recs[pair]
        ca, cb = self._symcount[pair >> 32], self._symcount[pair & 0xFFFFFFFF]
        count, den = rec[0], ca * cb
        return (-(count / den), _Exact(count, den), rec[2], pair, count, ca, cb)

    def run(self, target_size, max_steps):
        """Up to max_steps merges as (left, right, merged, count, count(left),
        count(right)) tuples.  Stops early when the symbol table has
        target_size entries or when no pair with count >= min_frequency is
        left; fewer than max_steps results means training is finished."""
        target_size = check_count(target_size, "target_size", 0)
        max_steps = check_count(max_steps, "max_steps", 0)
        if self._failed is not None:
            raise self._failed
        symtab, symcount, prefix = self._symtab, self._symcount, self._prefix
        done = []
        while len(done) < max_steps and len(symtab) < target_size:
            pair = self._select()
            if pair is None:
                break
            a, b = pair >> 32, pair & 0xFFFFFFFF
            right = symtab.token(b)
            if right.startswith(prefix):
                right = right[len(prefix):]
            m = symtab.intern(symtab.token(a) + right)
            if m >= len(symcount):  # a new string (or one added to the table meanwhile)
                symcount.extend([0] * (m + 1 - len(symcount)))
                self._users.extend([] for _ in range(m + 1 - len(self._users)))
            done.append((a, b, m, self._recs[pair][0], symcount[a], symcount[b]))
            self._merge(pair, a, b, m)
        return done

    def _select(self):
        """Pop the winning pair, or None when training is over."""
        heap, recs, sym, nxt, symcount = self._heap, self._recs, self._sym, self._nxt, self._symcount
        pop = heapq.heappop
        while heap:
            entry = heap[0]
            pair, key = entry[3], entry[2]
            a, b = pair >> 32, pair & 0xFFFFFFFF
            rec = recs[pair]
            if (rec[0] != entry[4] or rec[2] != key or symcount[a] != entry[5]
                    or symcount[b] != entry[6]):
                pop(heap)  # stale: the pair or one of its symbols changed
                continue
            if not rec[3]:
                occ = rec[1]
                while not (sym[occ[0]] == a and sym[nxt[occ[0]]] == b):
                    pop(occ)  # count > 0, so a valid occurrence exists
                rec[2], rec[3] = occ[0], True
                if occ[0] != key:
                    heapq.heapreplace(heap, self._entry(pair))
                    continue
            pop(heap)
            return pair
        return None

    def _occ_remove(self, key, at, f, changed):
        rec = self._recs[key]
        rec[0] -= f
        if rec[2] == at:
            rec[3] = False  # the bound may now be below every valid key
        changed.add(key)

    def _occ_add(self, key, at, f, changed):
        rec = self._recs.get(key)
        if rec is None:
            self._recs[key] = [f, [at], at, True]
        else:
            rec[0] += f
            heapq.heappush(rec[1], at)
            if at < rec[2]:
                rec[2] = at  # a valid key below every other: the exact key
        if f > 0 and key not in self._listed:
            self._list(key)
        changed.add(key)

    def _merge(self, pair, a, b, m):
        """Rewrite every valid occurrence of (a, b) as m, left to right."""
        sym, prv, nxt, frq, recs, symcount = (self._sym, self._prv, self._nxt, self._frq,
                                              self._recs, self._symcount)
        changed = {pair}
        rec_ab = recs[pair]
        occs = sorted(rec_ab[1])
        rec_ab[1] = []  # occurrences made during this merge go to a fresh heap
        last = -1
        for i in occs:
            if i == last:
                continue  # a duplicate push (only when a merge remakes its left symbol)
            last = i
            j = nxt[i]
            if sym[i] != a or sym[j] != b:
                continue  # stale, or used up by the skip-two rule
            f = frq[i]
            p, n = prv[i], nxt[j]
            if p != -1:
                self._occ_remove(sym[p] << 32 | a, p, f, changed)
            self._occ_remove(pair, i, f, changed)
            if n != -1:
                self._occ_remove(b << 32 | sym[n], j, f, changed)
            sym[i], sym[j], nxt[i] = m, -1, n
            if n != -1:
                prv[n] = i
            symcount[a] -= f
            symcount[b] -= f
            symcount[m] += f
            if p != -1:
                self._occ_add(sym[p] << 32 | m, p, f, changed)
            if n != -1:
                self._occ_add(m << 32 | sym[n], i, f, changed)
        occ = rec_ab[1]  # what is left of (a, b): find its first key again
        while occ and not (sym[occ[0]] == a and sym[nxt[occ[0]]] == b):
            heapq.heappop(occ)
        rec_ab[2], rec_ab[3] = (occ[0] if occ else len(sym)), True
        # Every pair of a, b or m has a new score: refresh them, and drop
        # pairs whose count fell to 0 from the user lists.
        for s in {a, b, m}:
            kept = []
            for key in self._users[s]:
                if recs[key][0] > 0:
                    kept.append(key)
                    changed.add(key)
                elif key in self._listed:
                    self._listed.discard(key)  # (leaves the other symbol's list lazily)
            self._users[s] = list(dict.fromkeys(kept))  # (a pair listed again appears twice)
        heap, low = self._heap, self._min_frequency
        for key in changed:
            if recs[key][0] >= low:
                heapq.heappush(heap, self._entry(key))
        if len(heap) > 2 * len(self._listed) + _HEAP_FLOOR:
            self._heap = [self._entry(key) for key in self._listed if recs[key][0] >= low]
            heapq.heapify(self._heap)


# A heap holding more than twice the listed pairs plus this many entries is
# rebuilt from the records (stale entries would otherwise pile up: every
# merge re-pushes every pair of three symbols).
_HEAP_FLOOR = 4096
