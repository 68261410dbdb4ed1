"""The incremental trainer in pure Python: the specification of csrc/trainer.c
(Chapter 11, listing 064 without the rescans: the same merges, IDs and counts
as repeating find_best_pair + merge_pair, in O(changes) per merge).
"""

import heapq

from ...errors import COUNT_OVERFLOW
from .common import MAX_COUNT, NO_SYMBOL, check_count
from .symtab import SymbolTable
from .words import WordTable

__all__ = ["Trainer"]


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
# rebuilt from scratch, so ordering by (-count, key) is the first-encountered tie-break (README, "Flavours").
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
            raise TypeError("Trainer needs a spec.SymbolTable, not %s" % type(symtab).__name__)
        if not isinstance(words, WordTable):
            raise TypeError("Trainer needs a spec.WordTable, not %s" % type(words).__name__)
        self._min_frequency = check_count(min_frequency, "min_frequency", 1)
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
        # (through WordTable's public methods: the table is another module's)
        for k in range(len(words)):
            symbols, f = words.symbols(k), words.frequency(k)
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
        if recs and max(rec[0] for rec in recs.values()) > MAX_COUNT:
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
        target_size = check_count(target_size, "target_size", 0)
        max_steps = check_count(max_steps, "max_steps", 0)
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
                if rec[0] > MAX_COUNT:
                    fits = False
            elif rec[4] == 0:
                del recs[key]  # no valid occurrence left
        return fits
