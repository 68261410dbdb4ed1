"""The ranked merger in pure Python: the specification of csrc/merger.c
(Chapter 11, listing 065: apply a merge list by rank; here by applicable rank
and position, which gives the same words for any merge list -- the proof is
below).
"""

from bisect import bisect_left

from .common import NO_SYMBOL, check_ids
from .encode_text import encode_text
from .merge import byte_pair_merge
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

# The merging itself is the engine of merge.py (csrc/merge.h), shared with
# the rank tables: this module gives it the merge-list rule, _rule below.
# Words of up to _CACHE_WORD symbols are remembered by encode_words (long
# words rarely repeat; keep memory flat).
_CACHE_WORD = 16
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
        # pair key -> (its first rank, that merge's symbol): what the rule
        # returns for almost every pair, built once instead of per call
        self._first = {key: (ranks[0], results[0]) for key, (ranks, results) in table.items()}
        self._cache = {}

    def _rule(self, x, y, bx, by):
        """(rank, result) of the first merge of (x, y) newer than both
        instances, or None: the merge-list rule of the merge engine.

        bx, by are creation ranks as merge.py keeps them (0 for a starting
        symbol, r + 1 for one made by merge r), so the applicable rank is the
        first rank r of the pair with r >= max(bx, by).  Almost every pair
        appears once in a merge list and its rank is newer than both
        instances, so that case is answered from _first before any bisect.
        """
        key = x << 32 | y
        first = self._first.get(key)
        if first is None:
            return None
        floor = bx if bx > by else by
        if first[0] >= floor:
            return first
        ranks, results = self._table[key]
        k = bisect_left(ranks, floor)
        if k == len(ranks):
            return None
        return ranks[k], results[k]

    def _start(self, syms):
        """_rule of every adjacent pair of starting symbols (creation ranks
        0, so each pair's first rank applies)."""
        get = self._first.get
        return [get(x << 32 | y) for x, y in zip(syms, syms[1:])]

    def apply_merges(self, symbols):
        """The word after applying merge 0, then 1, ... each skip-two."""
        syms = check_ids(symbols, "apply_merges")
        if len(syms) < 2 or not self._table:
            return syms
        return byte_pair_merge(syms, self._rule, born=True, start=self._start)

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
                if len(key) <= _CACHE_WORD:
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[key] = got
            out.append(list(got))
        return out
