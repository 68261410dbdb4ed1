"""Pure-Python backend: the readable specification of pybpe's core.

Same names, arguments and results as the C core (csrc/bpe.h via _ccore), so
one test suite runs on both (docs/backends.md).  It holds the chapter's
literal helpers (count_pairs / find_best_pair: listing 063; merge_pair and
training: listing 064; apply_merges: listing 065), the incremental Trainer
and the ranked Merger.  It leaves out everything that is not symbol IDs:
text, Unicode, pre-tokenizers and file formats live in the tokenizer.
"""
import heapq
from bisect import bisect_right
from operator import itemgetter

from .errors import COUNT_OVERFLOW

__all__ = [
    "NO_SYMBOL", "SymbolTable", "WordTable", "count_pairs", "find_best_pair",
    "merge_pair", "Trainer", "Merger", "WordCounter", "UNITS", "COMPILED",
]

# False: this core holds the GIL throughout, so callers gain nothing from
# one big call or from threads (pybpe._ccore: True).  For speed choices only;
# both cores give the same results.
COMPILED = False
# The "unknown" symbol (BPE_NO_SYMBOL): it takes part in no pair, so it is
# never counted, never merged, and never created by the trainer.
NO_SYMBOL = 0xFFFFFFFF
# Frequencies and counts are uint64_t in C, where a count that would pass
# this is an error (BPE_EOVERFLOW), never a wrap-around; the checks below
# raise the same OverflowError(COUNT_OVERFLOW) at the same points.
_MAX_FREQUENCY = 2**64 - 1


def _check_ids(symbols, what):
    """`symbols` as a fresh list of ints in 0..NO_SYMBOL, or TypeError/ValueError."""
    ids = list(symbols)
    if not ids:
        return ids
    if set(map(type, ids)) != _JUST_INT:  # one C-level pass in the usual case
        for s in ids:
            if not isinstance(s, int):
                raise TypeError("%s must hold int symbol IDs, not %s" % (what, type(s).__name__))
        ids = [int(s) for s in ids]  # bool / IntEnum -> plain int
    if min(ids) < 0 or max(ids) > NO_SYMBOL:
        raise ValueError("%s holds a symbol ID outside 0..0xFFFFFFFF" % what)
    return ids


_JUST_INT = {int}


def _check_count(value, name, low):
    if not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__))
    if value < low or value > _MAX_FREQUENCY:
        raise ValueError("%s must be in %d..2**64-1, got %d" % (name, low, value))
    return int(value)


# ---------------------------------------------------------------------------
# Symbol table and word table: the chapter's data structures.
# ---------------------------------------------------------------------------

class SymbolTable:
    """Byte strings <-> dense int IDs, in first-interned order.

    >>> t = SymbolTable([b"a", b"b"])
    >>> t.intern(b"ab"), t.intern(b"a"), t.lookup(b"zz"), len(t)
    (2, 0, -1, 3)
    """

    def __init__(self, tokens=()):
        self._tokens = []
        self._ids = {}
        for token in tokens:
            self.intern(token)

    def intern(self, token):
        """The ID of `token`, adding it with the next free ID when absent."""
        if type(token) is not bytes:
            raise TypeError("symbols are bytes, not %s" % type(token).__name__)
        found = self._ids.get(token)
        if found is not None:
            return found
        new = len(self._tokens)
        if new >= NO_SYMBOL:  # IDs are uint32_t and NO_SYMBOL is reserved
            raise OverflowError("symbol table is full (2**32 - 1 entries)")
        self._tokens.append(token)
        self._ids[token] = new
        return new

    def lookup(self, token):
        """The ID of `token`, or -1 when it was never interned."""
        if type(token) is not bytes:
            raise TypeError("symbols are bytes, not %s" % type(token).__name__)
        return self._ids.get(token, -1)

    def __len__(self):
        return len(self._tokens)

    def token(self, id):
        """The bytes of symbol `id`; IndexError when out of range."""
        if not isinstance(id, int):
            raise TypeError("symbol ID must be an int, not %s" % type(id).__name__)
        if not 0 <= id < len(self._tokens):
            raise IndexError("symbol ID %d out of range (table has %d)" % (id, len(self._tokens)))
        return self._tokens[id]

    def tokens(self):
        """Every symbol's bytes, in ID order."""
        return list(self._tokens)


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
        ids = _check_ids(symbols, where)
        self._freqs.append(_check_count(frequency, where + " frequency", 0))
        self._words.append(ids)

    def add_many(self, words, frequencies):
        """Append words[i] with frequencies[i] for every i."""
        words, frequencies = list(words), list(frequencies)
        if len(words) != len(frequencies):
            raise ValueError("add_many: %d words but %d frequencies" % (len(words), len(frequencies)))
        base = len(self._words)
        checked = [(_check_ids(w, "word %d" % (base + k)),
                    _check_count(f, "word %d frequency" % (base + k), 0))
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
        raise TypeError("%s needs a _pycore.WordTable, not %s" % (what, type(words).__name__))
    counts = {}
    get = counts.get
    for symbols, freq in zip(words._words, words._freqs):
        for pair in zip(symbols, symbols[1:]):
            if NO_SYMBOL not in pair:
                counts[pair] = get(pair, 0) + freq
    if counts and max(counts.values()) > _MAX_FREQUENCY:
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
        raise TypeError("merge_pair needs a _pycore.WordTable, not %s" % type(words).__name__)
    left, right, merged = _check_ids((left, right, merged), "merge_pair")
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


# ---------------------------------------------------------------------------
# The incremental trainer.
# ---------------------------------------------------------------------------
#
# Node list.  All distinct words are laid out one after another in one flat
# list of nodes, in first-appearance order, so a node's global index orders
# occurrences exactly by (word index, position).  Per node: sym, prv, nxt
# (global indices, -1 at word ends) and the word's frequency.  A merge keeps
# the left node and kills the right one (sym = -1).  One sentinel node with
# sym = -1 sits at the end: sym[-1] is then -1, so `sym[nxt[i]] == b` is
# false at a word end without a separate test.
#
# Pair records.  pair key = left << 32 | right (ints hash and compare faster
# than tuples).  recs[pair] = [count, occ, key_lb, exact, n]:
#   count   the pair's weighted count, maintained by difference;
#   occ     a min-heap of node indices where the pair occurred (lazy: node i
#           is a valid occurrence iff sym[i] == left and
#           sym[nxt[i]] == right; stale entries are dropped when seen);
#   key_lb  a lower bound of the pair's key -- the smallest valid occurrence
#           -- and exact says whether the bound is the key itself;
#   n       how many valid occurrences it has (unweighted).
# The smallest valid occurrence is exactly the pair's position in a Counter
# rebuilt from scratch, so ordering by (-count, key) is the SPEC tie-break.
# A (pair, node) is pushed at most once, because each change at a node makes
# the symbol there strictly longer (the empty symbol can break this; see the
# duplicate check in _merge).  A record is deleted when n reaches 0.  Words
# of frequency 0 stay in the node list: their pairs count 0, but they are
# still the first occurrence of a pair in the Counter's order.
#
# Main heap.  Entries (-count, key, pair), pushed for each pair whose count
# or key_lb changed, once per step.  An entry is current iff its count and
# key equal the record's count and key_lb; invariant: every pair with a
# positive count has a current entry.  Selection pops the smallest current entry; if its key is
# only a bound, the exact key is found by peeking the pair's occ heap and,
# when it differs, the entry goes back with the exact key.  An entry whose
# key is exact and current is the winner: every other pair of equal count
# has a current entry with key_lb >= its key, and keys (left node indices)
# are distinct.
#
# Performance notes.  Shakespeare (118,180 distinct words, 927,894 initial
# symbols, chapter flavour) to 8,000 symbols = 7,825 merges: building the
# node list and pair records takes ~1.0 s and the merges ~3.5-4.5 s
# (CPython 3.11, one core of a busy 2-core machine; ~10 s in all when the
# machine was fully loaded).  The first 150 merges were checked against
# find_best_pair + merge_pair, and all 7,825 (IDs and counts) against the C
# trainer.  Nodes are parallel
# lists of ints, not objects; pair keys are ints, not tuples; the insertion
# of the two new pairs is written inline in _merge (it ran 876k times as a
# method).  Rebuilding the Counter every step, as reference.learn does,
# would rescan the ~1M symbols 7,825 times.

class Trainer:
    """Learns the merges find_best_pair + merge_pair would, incrementally.

    >>> st = SymbolTable([b"a", b"b"])
    >>> tr = Trainer(st, WordTable([([0, 1, 0, 1], 1), ([1, 0], 1)]))
    >>> tr.run(100, 10)   # (left, right, merged, count); (a,b) and (b,a) tie at 2
    [(0, 1, 2, 2), (2, 2, 3, 1), (1, 0, 4, 1)]
    >>> st.tokens()[2:]
    [b'ab', b'abab', b'ba']
    """

    def __init__(self, symtab, words, *, min_frequency=1, max_token_units=0):
        if not isinstance(symtab, SymbolTable):
            raise TypeError("Trainer needs a _pycore.SymbolTable, not %s" % type(symtab).__name__)
        if not isinstance(words, WordTable):
            raise TypeError("Trainer needs a _pycore.WordTable, not %s" % type(words).__name__)
        self._min_frequency = _check_count(min_frequency, "min_frequency", 1)
        if not isinstance(max_token_units, int):
            raise TypeError("max_token_units must be an int, not %s" % type(max_token_units).__name__)
        if not 0 <= max_token_units <= NO_SYMBOL:
            raise ValueError("max_token_units must be in 0..2**32-1, got %d" % max_token_units)
        self._max_units = int(max_token_units)
        self._symtab = symtab
        n_symbols = len(symtab)
        # Units (initial symbols) per ID: everything in the table now counts 1.
        self._units = [1] * n_symbols
        sym, prv, nxt, frq = [], [], [], []
        for k, (symbols, f) in enumerate(zip(words._words, words._freqs)):
            if symbols and max(symbols) >= n_symbols \
                    and any(s >= n_symbols and s != NO_SYMBOL for s in symbols):
                raise ValueError("word %d holds a symbol ID that is not in the symbol table" % k)
            if len(symbols) < 2:
                continue  # no pair: leaving it out keeps every other key in order
            start, n = len(sym), len(symbols)
            sym.extend(symbols)
            prv.extend(range(start - 1, start + n - 1))
            nxt.extend(range(start + 1, start + n + 1))
            prv[start] = -1
            nxt[-1] = -1
            frq.extend([f] * n)
        sym.append(-1)  # the sentinel node (see the essay above)
        self._sym, self._prv, self._nxt, self._frq = sym, prv, nxt, frq
        self._recs = recs = {}
        # Occurrences are appended in ascending node order, so each occ list
        # is already a valid heap, and the first one is the exact key.
        for i in range(len(sym) - 2):
            j = i + 1
            if nxt[i] != j:
                continue
            a, b = sym[i], sym[j]
            if a == NO_SYMBOL or b == NO_SYMBOL:
                continue
            pair = a << 32 | b
            rec = recs.get(pair)
            if rec is None:
                recs[pair] = [frq[i], [i], i, True, 1]
            else:
                rec[0] += frq[i]
                rec[1].append(i)
                rec[4] += 1
        if recs and max(rec[0] for rec in recs.values()) > _MAX_FREQUENCY:
            raise OverflowError("Trainer: %s" % COUNT_OVERFLOW)
        self._failed = None  # the error every later run repeats (as C's trainer does)
        self._heap = [(-rec[0], rec[2], pair) for pair, rec in recs.items() if rec[0]]
        heapq.heapify(self._heap)

    def run(self, target_size, max_steps):
        """Up to max_steps merges as (left, right, merged, count) tuples.

        Stops early when the symbol table has target_size entries, when no
        pair is left, or when the best count is below min_frequency; fewer
        than max_steps results means training is finished.
        """
        target_size = _check_count(target_size, "target_size", 0)
        max_steps = _check_count(max_steps, "max_steps", 0)
        if self._failed is not None:
            raise self._failed
        symtab, units = self._symtab, self._units
        done = []
        while len(done) < max_steps and len(symtab) < target_size:
            best = self._select()
            if best is None:
                break
            count, pair = best
            a, b = pair >> 32, pair & 0xFFFFFFFF
            m = symtab.intern(symtab.token(a) + symtab.token(b))
            if m >= len(units):  # a new string (or one added to the table meanwhile)
                units.extend([1] * (m + 1 - len(units)))
                units[m] = units[a] + units[b]
            if not self._merge(pair, a, b, m):
                # A count passed 2**64 - 1; the C trainer stops at the same
                # step, marked failed.
                self._failed = OverflowError("Trainer.run: %s" % COUNT_OVERFLOW)
                raise self._failed
            done.append((a, b, m, count))
        return done

    def _select(self):
        """Pop the winning pair: (count, pair), or None when training is over."""
        heap, recs, sym, nxt = self._heap, self._recs, self._sym, self._nxt
        units, max_units = self._units, self._max_units
        pop = heapq.heappop
        while heap:
            entry = pop(heap)
            negcount, key, pair = entry
            rec = recs.get(pair)
            if rec is None or rec[0] != -negcount or rec[2] != key:
                continue  # stale: the pair changed after this was pushed
            a, b = pair >> 32, pair & 0xFFFFFFFF
            if max_units and units[a] + units[b] > max_units:
                continue  # never chosen; dropped until its count changes
            if not rec[3]:
                occ = rec[1]
                while not (sym[occ[0]] == a and sym[nxt[occ[0]]] == b):
                    pop(occ)  # count > 0, so a valid occurrence exists
                rec[2], rec[3] = occ[0], True
                if occ[0] != key:
                    heapq.heappush(heap, (negcount, occ[0], pair))
                    continue
            if -negcount < self._min_frequency:
                heapq.heappush(heap, entry)  # keep it: later runs stop here too
                return None
            return -negcount, pair
        return None

    def _merge(self, pair, a, b, m):
        """Rewrite every valid occurrence of (a, b) as m, updating pair records.

        False when some count passed 2**64 - 1 (the step is then not undone)."""
        sym, prv, nxt, frq, recs = self._sym, self._prv, self._nxt, self._frq, self._recs
        push, get = heapq.heappush, recs.get
        changed = {pair}
        rec_ab = recs[pair]
        occs = sorted(rec_ab[1])
        rec_ab[1] = []  # occurrences created during this merge go to a fresh heap
        last = -1
        for i in occs:
            # Ascending order and the validity test together give skip-two:
            # after merging at node i of "a a a", node i+1 is dead.
            if i == last:
                continue  # a duplicate push (only possible with empty symbols)
            last = i
            j = nxt[i]
            if sym[i] != a or sym[j] != b:
                continue
            f = frq[i]
            p, n = prv[i], nxt[j]
            # Remove the three pairs the merge destroys: (x,a)@p, (a,b)@i, (b,y)@j.
            if p != -1:
                x = sym[p]
                if x != NO_SYMBOL:
                    key = x << 32 | a
                    rec = recs[key]
                    rec[0] -= f
                    rec[4] -= 1
                    if rec[2] == p:
                        rec[3] = False
                    changed.add(key)
            rec_ab[0] -= f
            rec_ab[4] -= 1
            if rec_ab[2] == i:
                rec_ab[3] = False
            if n != -1:
                y = sym[n]
                if y != NO_SYMBOL:
                    key = b << 32 | y
                    rec = recs[key]
                    rec[0] -= f
                    rec[4] -= 1
                    if rec[2] == j:
                        rec[3] = False
                    changed.add(key)
            # Splice: node i becomes m, node j dies.
            sym[i] = m
            sym[j] = -1
            nxt[i] = n
            if n != -1:
                prv[n] = i
            # Add the two pairs the merge creates: (x,m)@p and (m,y)@i.  Both
            # are new occurrences, so they are pushed; a key below key_lb is
            # the exact key (every valid key is >= key_lb).  Written out
            # twice rather than as a method: it runs ~900k times on Shakespeare.
            if p != -1 and x != NO_SYMBOL:
                key = x << 32 | m
                rec = get(key)
                if rec is None:
                    recs[key] = [f, [p], p, True, 1]
                else:
                    rec[0] += f
                    rec[4] += 1
                    push(rec[1], p)
                    if p < rec[2]:
                        rec[2], rec[3] = p, True
                changed.add(key)
            if n != -1 and y != NO_SYMBOL:
                key = m << 32 | y
                rec = get(key)
                if rec is None:
                    recs[key] = [f, [i], i, True, 1]
                else:
                    rec[0] += f
                    rec[4] += 1
                    push(rec[1], i)
                    if i < rec[2]:
                        rec[2], rec[3] = i, True
                changed.add(key)
        heap = self._heap
        fits = True
        for key in changed:
            rec = recs[key]
            if rec[0] > 0:
                push(heap, (-rec[0], rec[2], key))
                if rec[0] > _MAX_FREQUENCY:
                    fits = False
            elif rec[4] == 0:
                del recs[key]  # no valid occurrence left
        return fits


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
            left, right, result = _check_ids((left, right, result), "merge %d" % r)
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
        syms = _check_ids(symbols, "apply_merges")
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
        """Text -> IDs: words as text.split() cuts them (split=False: the
        whole text is one word, none when empty), each turned into its initial
        symbols in `symtab` as WordCounter.word_table does (NO_SYMBOL when
        absent), merged (encode_words), with NO_SYMBOL replaced by `unk`; all
        words' IDs concatenated.  Repeated words are encoded once.

        >>> t = SymbolTable([b"<UNK>", b"l", b"o", b"w "]); m = Merger([(1, 2, t.intern(b"lo"))])
        >>> m.encode_text(t, "suffix", " ", 0, "low  lox")
        [4, 3, 4, 0]
        """
        if not isinstance(symtab, SymbolTable):
            raise TypeError("encode_text needs a _pycore.SymbolTable, not %s" % type(symtab).__name__)
        mark = _marker_bytes(units, marker)
        unk = _check_ids((unk,), "unk")[0]
        if not isinstance(text, str):
            raise TypeError("text must be str, not %s" % type(text).__name__)
        words = text.split() if split else ([text] if text else [])
        lookup, ids = symtab.lookup, {}

        def symbol(unit):  # bytes -> ID, NO_SYMBOL when absent; cached per unit
            found = ids.get(unit)
            if found is None:
                found = ids[unit] = lookup(unit)
                if found < 0:
                    found = ids[unit] = NO_SYMBOL
            return found

        distinct = list(dict.fromkeys(words))
        rows = []
        for word in distinct:
            if units == "bytes":
                data = word.encode("utf-8", "surrogatepass")
                rows.append([symbol(data[i:i + 1]) for i in range(len(data))])
                continue
            row = [symbol(c.encode("utf-8", "surrogatepass")) for c in word]
            if units == "suffix":
                row[-1] = symbol(word[-1].encode("utf-8", "surrogatepass") + mark)
            elif units == "symbol":
                row.append(symbol(mark))
            rows.append(row)
        encoded = {word: [unk if s == NO_SYMBOL else s for s in row]
                   for word, row in zip(distinct, self.encode_words(rows))}
        out = []
        for word in words:
            out += encoded[word]
        return out

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


# ---------------------------------------------------------------------------
# Word counting and the initial word table: the step before training.
# ---------------------------------------------------------------------------

UNITS = ("bytes", "chars", "suffix", "symbol")


def _marker_bytes(units, marker):
    """The marker's UTF-8 for a units name (b"" unless "suffix" / "symbol"), checked."""
    if units not in UNITS:
        raise ValueError("units must be one of %s, not %r" % (", ".join(map(repr, UNITS)), units))
    if units not in ("suffix", "symbol"):
        return b""
    mark = _utf8(marker, "marker")
    if not mark:
        raise ValueError("units %r needs a non-empty marker" % units)
    return mark


def _utf8(text, what):
    if not isinstance(text, str):
        raise TypeError("%s must be str, not %s" % (what, type(text).__name__))
    return text.encode("utf-8", "surrogatepass")


# add_text adds at most one per word, so no count can pass 2**64 - 1 in it
# unless some count is already this big (only add_words can get it there):
# below it, add_text skips the per-word check.
_BIG_COUNT = 2**63


class WordCounter:
    """Distinct words with counts, in first-appearance order.

    >>> c = WordCounter(); c.add_text("to be or\u3000not to"); c.add_words(["be", ""], [2, 0])
    >>> c.items(), c.characters()
    ([('to', 2), ('be', 3), ('or', 1), ('not', 1), ('', 0)], ['b', 'e', 'n', 'o', 'r', 't'])
    """

    def __init__(self):
        self._counts = {}
        self._big = False  # has any count reached _BIG_COUNT (see add_text)?

    def add_text(self, text):
        """Count the words of text.split()."""
        if not isinstance(text, str):
            raise TypeError("text must be str, not %s" % type(text).__name__)
        counts = self._counts
        get = counts.get
        if self._big:  # some count is near 2**64: check each addition, as C does
            for word in text.split():
                total = get(word, 0) + 1
                if total > _MAX_FREQUENCY:
                    raise OverflowError("WordCounter.add_text: %s" % COUNT_OVERFLOW)
                counts[word] = total
            return
        for word in text.split():
            counts[word] = get(word, 0) + 1

    def add_words(self, words, frequencies=None):
        """Count each of `words` (a list of str) once, or frequencies[i] times."""
        words = words if isinstance(words, list) else list(words)
        for k, w in enumerate(words):
            if not isinstance(w, str):
                raise TypeError("words[%d] must be str, not %s" % (k, type(w).__name__))
        if frequencies is None:
            frequencies = [1] * len(words)
        else:
            frequencies = list(frequencies)
            if len(frequencies) != len(words):
                raise ValueError("add_words: %d words but %d frequencies" % (len(words), len(frequencies)))
            for k, f in enumerate(frequencies):
                _check_count(f, "word %d frequency" % k, 0)
        counts = self._counts
        get = counts.get
        for word, f in zip(words, frequencies):
            total = get(word, 0) + f
            if total > _MAX_FREQUENCY:
                raise OverflowError("WordCounter.add_words: %s" % COUNT_OVERFLOW)
            counts[word] = total
            if total >= _BIG_COUNT:
                self._big = True

    def __len__(self):
        return len(self._counts)

    def items(self):
        """[(word, count)] in first-appearance order."""
        return list(self._counts.items())

    def characters(self):
        """The distinct characters of all words, sorted (str of length 1)."""
        return sorted(set("".join(self._counts)))

    def word_table(self, symtab, units, marker=None):
        """A WordTable of every word's initial symbols (IDs in symtab, NO_SYMBOL
        when absent) with its count; units is "bytes", "chars", "suffix" or "symbol".

        >>> t = SymbolTable([b"l", b"o", b"w "]); c = WordCounter(); c.add_text("low")
        >>> c.word_table(t, "suffix", " ").symbols(0)
        [0, 1, 2]
        """
        if not isinstance(symtab, SymbolTable):
            raise TypeError("word_table needs a _pycore.SymbolTable, not %s" % type(symtab).__name__)
        mark = _marker_bytes(units, marker)
        lookup, ids = symtab.lookup, {}

        def symbol(unit):  # bytes -> ID, NO_SYMBOL when absent; cached per unit
            found = ids.get(unit)
            if found is None:
                found = ids[unit] = lookup(unit)
                if found < 0:
                    found = ids[unit] = NO_SYMBOL
            return found

        rows = []
        for word in self._counts:
            data = word.encode("utf-8", "surrogatepass")
            if units == "bytes":
                rows.append([symbol(data[i:i + 1]) for i in range(len(data))])
                continue
            row = [symbol(c.encode("utf-8", "surrogatepass")) for c in word]
            if units == "suffix" and word:
                row[-1] = symbol(word[-1].encode("utf-8", "surrogatepass") + mark)
            elif units == "symbol":
                row.append(symbol(mark))
            rows.append(row)
        table = WordTable()
        table.add_many(rows, list(self._counts.values()))
        return table
