"""The word table and the chapter's literal helpers in pure Python: the
specification of csrc/words.c (Chapter 11, listings 063-064 as printed:
count_pairs and find_best_pair rescan every word, merge_pair rewrites them).
"""

from operator import itemgetter

from ...errors import COUNT_OVERFLOW
from .common import MAX_COUNT, NO_SYMBOL, check_count, check_ids

__all__ = ["WordTable", "count_pairs", "find_best_pair", "merge_pair"]


class WordTable:
    """The distinct words of a corpus, in order of first appearance.

    Each word is a list of symbol IDs (its current segmentation) with a
    frequency.  The literal helpers below rescan it; the Trainer copies it.

    >>> w = WordTable([([0, 1, 2], 5), ([2], 1)])
    >>> len(w), w.symbols(0), w.frequency(0)
    (2, [0, 1, 2], 5)
    """

    def __init__(self, words=()):
        self._words = []  # list of lists of symbol IDs
        self._freqs = []  # parallel list of frequencies
        for symbols, frequency in words:
            self.add(symbols, frequency)

    def add(self, symbols, frequency):
        """Append one word (the symbols are copied); it may be empty."""
        where = "word %d" % len(self._words)
        ids = check_ids(symbols, where)
        self._freqs.append(check_count(frequency, where + " frequency", 0))
        self._words.append(ids)

    def add_many(self, words, frequencies):
        """Append words[i] with frequencies[i] for every i."""
        words, frequencies = list(words), list(frequencies)
        if len(words) != len(frequencies):
            raise ValueError("add_many: %d words but %d frequencies" % (len(words), len(frequencies)))
        base = len(self._words)
        checked = [(check_ids(w, "word %d" % (base + k)),
                    check_count(f, "word %d frequency" % (base + k), 0))
                   for k, (w, f) in enumerate(zip(words, frequencies))]
        for ids, f in checked:  # all or nothing: validated before any append
            self._words.append(ids)
            self._freqs.append(f)

    def __len__(self):
        return len(self._words)

    def _index(self, i):
        if not isinstance(i, int):
            raise TypeError("word index must be an int, not %s" % type(i).__name__)
        if not 0 <= i < len(self._words):
            raise IndexError("word index %d out of range (table has %d)" % (i, len(self._words)))
        return i

    def symbols(self, i):
        """The current segmentation of word i (a copy)."""
        return list(self._words[self._index(i)])

    def frequency(self, i):
        return self._freqs[self._index(i)]


# ---------------------------------------------------------------------------
# The chapter's literal helpers: rescan every word at every step.
# ---------------------------------------------------------------------------

def count_pairs(words):
    """Every adjacent pair with its frequency-weighted count (listing 063).

    Dict order is first-encountered order: words in table order, each left
    to right -- the order of a Counter built by the same scan.  Pairs that
    involve NO_SYMBOL are not counted.

    >>> count_pairs(WordTable([([1, 2, 3, 1, 2], 1)]))
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    >>> count_pairs(WordTable([([1, 2], 5), ([2, 1, 2], 1)]))
    {(1, 2): 6, (2, 1): 1}
    """
    return _count_pairs(words, "count_pairs")


def _count_pairs(words, what):
    if not isinstance(words, WordTable):
        raise TypeError("%s needs a spec.WordTable, not %s" % (what, type(words).__name__))
    counts = {}
    get = counts.get
    for symbols, freq in zip(words._words, words._freqs):
        for pair in zip(symbols, symbols[1:]):
            if NO_SYMBOL not in pair:
                counts[pair] = get(pair, 0) + freq
    if counts and max(counts.values()) > MAX_COUNT:
        raise OverflowError("%s: %s" % (what, COUNT_OVERFLOW))
    return counts


def find_best_pair(words):
    """((left, right), count) of the most frequent pair, or None (listing 063).

    Ties go to the pair encountered first, as with Counter.most_common(1):
    max() returns the first maximal item of an insertion-ordered dict.

    >>> find_best_pair(WordTable([([1, 2], 1), ([3, 4], 2), ([1, 2], 1)]))
    ((1, 2), 2)
    >>> find_best_pair(WordTable([([7], 3)])) is None
    True
    """
    counts = _count_pairs(words, "find_best_pair")
    if not counts:
        return None
    return max(counts.items(), key=itemgetter(1))


def merge_pair(words, left, right, merged):
    """Rewrite every word, replacing (left, right) by `merged` (listing 064).

    Left to right; after a match both positions are skipped, so "a a a"
    with (a, a) becomes "aa a".  Returns how many words changed.

    >>> w = WordTable([([0, 0, 0], 1), ([1, 0], 1)])
    >>> merge_pair(w, 0, 0, 9), w.symbols(0), w.symbols(1)
    (1, [9, 0], [1, 0])
    """
    if not isinstance(words, WordTable):
        raise TypeError("merge_pair needs a spec.WordTable, not %s" % type(words).__name__)
    left, right, merged = check_ids((left, right, merged), "merge_pair")
    if NO_SYMBOL in (left, right):
        return 0  # NO_SYMBOL never merges
    changed = 0
    table = words._words
    for k, symbols in enumerate(table):
        if left not in symbols:
            continue  # fast path: most words do not contain the pair at all
        out = []
        i, n = 0, len(symbols)
        while i < n:
            if i + 1 < n and symbols[i] == left and symbols[i + 1] == right:
                out.append(merged)
                i += 2  # skip-two: the right symbol is consumed
            else:
                out.append(symbols[i])
                i += 1
        if len(out) != n:
            table[k] = out
            changed += 1
    return changed
