"""The ranked merger in pure Python: the specification of csrc/merger.c
(Chapter 11, listing 065: apply a merge list by rank; here by applicable rank
and position, which gives the same words for any merge list -- the proof is
below).
"""

import heapq
from bisect import bisect_right

from .common import NO_SYMBOL, check_ids
from .encode_text import encode_text
from .symtab import SymbolTable  # (for the doctests)

__all__ = ["Merger"]


# ---------------------------------------------------------------------------
# Ranked application of a merge list.
# ---------------------------------------------------------------------------
#
# Why merging by (applicable rank, position) equals the rank-order sweep.
# Every symbol instance carries the rank of the merge that created it
# (initial symbols: -1); merge r may join adjacent instances x, y only when
# both are older than r, and the rank applicable to them is the smallest r
# of pair (x, y) with r > max(rank x, rank y).  Suppose the word is in the
# state the sweep reaches after merges 0..r-1 (true for r = 0).  (1) No
# adjacent pair then has an applicable rank below r: instances stay adjacent
# until one of them is consumed, so two instances older than r' < r that
# match merge r' were adjacent during sweep r', which would have merged them
# unless one was consumed -- and then it no longer exists.  (2) The rank-r
# candidates are exactly the adjacent pairs matching merge r (all instances
# are older than r), and a merge at rank r creates an instance of rank r,
# whose new neighbours can only get ranks > r.  (3) Taking them leftmost
# first, dropping any that lost a symbol, is precisely the left-to-right
# skip-two walk.  So after the rank-r candidates are done the word is in the
# state after sweep r, and by induction the final words agree.

# Words up to _SHORT_WORD symbols use a plain loop over a list of candidate
# ranks (min() and index() run in C; only the two pairs beside a merge are
# recomputed): it is the algorithm stated directly.  Longer words use a heap
# over a linked list, so a 1,000,000-symbol word costs O(n log n), not
# O(n^2).  Measured on 60,000 Shakespeare words (8,000 merges), both paths
# cost about the same (1.3-1.6 s each, within noise on a shared machine);
# per symbol the plain loop doubles its cost by 64 symbols (4.8 vs 2.9
# us/symbol) and keeps growing, hence the threshold.
_SHORT_WORD = 16
_NONE = 1 << 62  # "no applicable merge" rank, above every real rank
_DEAD = 1 << 62  # creation rank of a consumed node: never matches a pushed rank
_CACHE_LIMIT = 1 << 16  # encode_words cache entries before it is cleared


class Merger:
    """Ranked application of any merge list (listing 065).

    >>> m = Merger([(0, 0, 5), (5, 0, 6)])   # rank 0: a a -> A; rank 1: A a -> B
    >>> m.apply_merges([0, 0, 0, 0, 0])      # sweep 0: A A a; sweep 1: A B
    [5, 6]
    """

    def __init__(self, merges):
        table = {}  # pair key -> ([ranks, ascending], [results])
        for r, item in enumerate(merges):
            try:
                left, right, result = item
            except (TypeError, ValueError):
                raise TypeError("merge %d must be a (left, right, result) triple" % r) from None
            left, right, result = check_ids((left, right, result), "merge %d" % r)
            if left == NO_SYMBOL or right == NO_SYMBOL:
                continue  # NO_SYMBOL never merges
            ranks, results = table.setdefault(left << 32 | right, ([], []))
            ranks.append(r)
            results.append(result)
        self._table = table
        self._cache = {}

    def _applicable(self, x, rx, y, ry):
        """(rank, result) of the first merge of (x, y) newer than both, or (_NONE, None).

        Almost every pair appears once in a merge list and its rank is newer
        than both instances, so that case is tested before any bisect.
        """
        entry = self._table.get(x << 32 | y)
        if entry is None:
            return _NONE, None
        ranks = entry[0]
        newest = rx if rx > ry else ry
        if ranks[0] > newest:
            return ranks[0], entry[1][0]
        k = bisect_right(ranks, newest)
        if k == len(ranks):
            return _NONE, None
        return ranks[k], entry[1][k]

    def apply_merges(self, symbols):
        """The word after applying merge 0, then 1, ... each skip-two."""
        syms = check_ids(symbols, "apply_merges")
        if len(syms) < 2 or not self._table:
            return syms
        if len(syms) <= _SHORT_WORD:
            return self._apply_short(syms)
        return self._apply_long(syms)

    def _apply_short(self, syms):
        # cand[i] / res[i]: applicable rank and result of the pair (i, i+1).
        # Initial symbols have rank -1, so the pair's first rank applies.
        get, applicable = self._table.get, self._applicable
        cand, res = [], []
        for i in range(len(syms) - 1):
            entry = get(syms[i] << 32 | syms[i + 1])
            if entry is None:
                cand.append(_NONE)
                res.append(None)
            else:
                cand.append(entry[0][0])
                res.append(entry[1][0])
        rank = [-1] * len(syms)
        while cand:
            r = min(cand)
            if r == _NONE:
                break
            at = cand.index(r)  # the leftmost of the lowest rank
            syms[at:at + 2] = [res[at]]
            rank[at:at + 2] = [r]
            del cand[at], res[at]
            if at < len(cand):  # the pair (new, right neighbour) now sits at `at`
                cand[at], res[at] = applicable(syms[at], r, syms[at + 1], rank[at + 1])
            if at > 0:
                cand[at - 1], res[at - 1] = applicable(syms[at - 1], rank[at - 1], syms[at], r)
        return syms

    def _apply_long(self, syms):
        # A heap of candidates (rank, i, rank_i, j, rank_j, result) over a
        # linked list.  A candidate is valid iff j still follows i and neither
        # node changed since the push: a changed node has a strictly larger
        # creation rank (or _DEAD), so comparing ranks detects every change.
        n = len(syms)
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        rank = [-1] * n
        get, applicable = self._table.get, self._applicable
        heap = []
        for i in range(n - 1):
            entry = get(syms[i] << 32 | syms[i + 1])
            if entry is not None:
                heap.append((entry[0][0], i, -1, i + 1, -1, entry[1][0]))
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            r, i, ri, j, rj, result = pop(heap)
            if nxt[i] != j or rank[i] != ri or rank[j] != rj:
                continue
            syms[i], rank[i] = result, r
            rank[j] = _DEAD
            k = nxt[j]
            nxt[i] = k
            if k != -1:
                prv[k] = i
                r2, res2 = applicable(result, r, syms[k], rank[k])
                if res2 is not None:
                    push(heap, (r2, i, r, k, rank[k], res2))
            p = prv[i]
            if p != -1:
                r2, res2 = applicable(syms[p], rank[p], result, r)
                if res2 is not None:
                    push(heap, (r2, p, rank[p], i, r, res2))
        out = []
        i = 0
        while i != -1:
            out.append(syms[i])
            i = nxt[i]
        return out

    def encode_text(self, symtab, units, marker, unk, text, *, split=True):
        """Text -> IDs in one call: pybpe.core.spec.encode_text.encode_text
        with this merger (csrc/encode_text.c's bpe_encode_text).

        >>> t = SymbolTable([b"<UNK>", b"l", b"o", b"w "]); m = Merger([(1, 2, t.intern(b"lo"))])
        >>> m.encode_text(t, "suffix", " ", 0, "low  lox")
        [4, 3, 4, 0]
        """
        return encode_text(self, symtab, units, marker, unk, text, split=split)

    def encode_words(self, words):
        """apply_merges on each word; repeated words come from a cache."""
        cache = self._cache
        out = []
        for word in words:
            key = tuple(word)
            got = cache.get(key)
            if got is None:
                got = self.apply_merges(key)
                if len(key) <= _SHORT_WORD:  # long words rarely repeat; keep memory flat
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[key] = got
            out.append(list(got))
        return out
