"""The one merge engine, in pure Python: the specification of csrc/merge.h
and csrc/merge.c, shared by both rules.

Repeatedly join the adjacent pair with the lowest priority, leftmost on ties,
until no pair has one; a rescan for short sequences, a heap over a linked
list for long ones, one threshold between them.  The rule that gives a pair
its priority is an argument:

  - tiktoken's rank rule (RankTable, the completions of
    Encoding.encode_with_unstable, formats.merges_from_ranks): `rule(a, b)`;
  - the chapter's merge list (Merger, listing 065), whose priority is the
    rank *applicable* to two symbol instances, so it depends on the merges
    that made them: with `born=True` the engine keeps each part's creation
    rank (0 for a starting part, p + 1 for one made by a merge of priority
    p, as in C) and asks `rule(a, b, born_a, born_b)`.

A rule returns `(priority, merged)` or None.
"""
import heapq

__all__ = ["HEAP_THRESHOLD", "RUNS_SHARE", "byte_pair_merge", "merge_linear", "merge_by_rank", "merge_heap",
           "few_runs", "merge_runs", "WINDOW", "merge_windows"]

# Sequences of at least this many parts are merged with the heap; shorter
# ones with the rescan.  The C engine's BPE__MERGE_HEAP_THRESHOLD (merge.h,
# with its measurement; tests/test_encoding.py checks the two agree), so both
# backends take the same path on the same input.
HEAP_THRESHOLD = 100

# A long sequence of at most len / RUNS_SHARE runs of one repeated part is
# merged by merge_runs (csrc/ranks_merge.c: RK_RUNS_SHARE, the same test).
RUNS_SHARE = 4

# Above every merge priority (priorities are ints).
_NO_PRIORITY = float("inf")


def byte_pair_merge(parts, rule, born=False, start=None):
    """Merge `parts`: repeatedly join the adjacent pair with the lowest
    priority, leftmost on ties, until no pair has one.  Returns the new list
    of parts.  With tiktoken's rule the parts are bytes and the priority is
    the rank of `a + b`:

        >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"aab": 3}
        >>> def rule(a, b):
        ...     r = ranks.get(a + b)
        ...     return None if r is None else (r, a + b)
        >>> byte_pair_merge([b"a", b"a", b"b"], rule)
        [b'aab']

    With `born=True` the rule also gets the creation ranks of both parts
    (see the module's docstring; Merger's rule uses them).  `start(parts)`,
    when given, returns what the rule says of every adjacent pair of the
    starting parts, in one call (Merger answers them from a dict in one
    list comprehension instead of a rule call per pair).
    """
    if len(parts) >= HEAP_THRESHOLD:
        return merge_heap(parts, rule, born)
    if born:  # (straight there: a call less per word for the merge list)
        return _merge_linear_born(list(parts), rule, start)
    return merge_linear(parts, rule, born, start)


def merge_linear(parts, rule, born=False, start=None):
    # The textbook loop -- find the best adjacent pair, merge it, repeat --
    # but each pair's (priority, merged) is kept between rounds: a merge
    # changes only the two pairs beside it, so a round is one min() and one
    # index() over a list (both in C) plus two rule calls, instead of a rule
    # call for every pair.  index() finds the leftmost of equal priorities,
    # so ties go left.  (csrc/merge.h: bpe__merge_short.)  Two copies of the
    # loop, one per calling convention (_merge_linear_born keeps creation
    # ranks), as C's inlining makes two; each is the other line for line.
    parts = list(parts)
    if born:
        return _merge_linear_born(parts, rule, start)
    found = start(parts) if start else [rule(parts[i], parts[i + 1]) for i in range(len(parts) - 1)]
    priority = [_NO_PRIORITY if f is None else f[0] for f in found]
    while priority:
        best = min(priority)
        if best == _NO_PRIORITY:
            break
        i = priority.index(best)
        parts[i : i + 2] = [found[i][1]]
        del found[i], priority[i]
        if i:  # the pair (left neighbour, new part)
            f = found[i - 1] = rule(parts[i - 1], parts[i])
            priority[i - 1] = _NO_PRIORITY if f is None else f[0]
        if i < len(priority):  # the pair (new part, right neighbour)
            f = found[i] = rule(parts[i], parts[i + 1])
            priority[i] = _NO_PRIORITY if f is None else f[0]
    return parts


def _merge_linear_born(parts, rule, start):
    # merge_linear keeping creation ranks: ages[k] is 0 for a starting part,
    # priority + 1 for a merged one, and the rule is asked about them.
    ages = [0] * len(parts)
    found = start(parts) if start else [rule(a, b, 0, 0) for a, b in zip(parts, parts[1:])]
    priority = [_NO_PRIORITY if f is None else f[0] for f in found]
    while priority:
        best = min(priority)
        if best == _NO_PRIORITY:
            break
        i = priority.index(best)
        parts[i : i + 2] = [found[i][1]]
        ages[i : i + 2] = [best + 1]
        del found[i], priority[i]
        if i:
            f = found[i - 1] = rule(parts[i - 1], parts[i], ages[i - 1], best + 1)
            priority[i - 1] = _NO_PRIORITY if f is None else f[0]
        if i < len(priority):
            f = found[i] = rule(parts[i], parts[i + 1], best + 1, ages[i + 1])
            priority[i] = _NO_PRIORITY if f is None else f[0]
    return parts


def merge_by_rank(parts, rank_of):
    # merge_linear for tiktoken's rule, where a pair's priority is the rank
    # of the joined bytes and the merged part is the joined bytes: with no
    # (priority, merged) tuples and no rule function to call, short pieces
    # (most of them) merge about a third faster.  rank_of is the bytes ->
    # rank dict's get.  Same steps as merge_linear, so the same result.
    ranks = [rank_of(a + b, _NO_PRIORITY) for a, b in zip(parts, parts[1:])]
    while ranks:
        best = min(ranks)
        if best == _NO_PRIORITY:
            break
        i = ranks.index(best)
        parts[i] += parts.pop(i + 1)
        del ranks[i]
        if i:
            ranks[i - 1] = rank_of(parts[i - 1] + parts[i], _NO_PRIORITY)
        if i < len(ranks):
            ranks[i] = rank_of(parts[i] + parts[i + 1], _NO_PRIORITY)
    return parts


def merge_heap(parts, rule, born=False):
    # Same result as merge_linear in O(n log n) (csrc/merge.h:
    # bpe__merge_heap).  Parts form a linked list indexed by their starting
    # position, so "leftmost" is the smaller index.  The heap holds
    # (priority, index); an entry is live when its part is alive and the
    # rule, asked again about it and its current right neighbour, still
    # gives that priority -- exact for any rule that is a function of its
    # arguments (the proof is in merge.h).  Stale entries are skipped when
    # popped (lazy deletion).
    n = len(parts)
    value = list(parts)
    ages = [0] * n if born else None
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    alive = [True] * n

    def ask(i):  # (priority, merged) of the pair (i, nxt[i]), or None
        j = nxt[i]
        if j >= n:
            return None
        if born:
            return rule(value[i], value[j], ages[i], ages[j])
        return rule(value[i], value[j])

    heap = []
    for i in range(n - 1):
        found = ask(i)
        if found is not None:
            heap.append((found[0], i))
    heapq.heapify(heap)
    while heap:
        prio, i = heapq.heappop(heap)
        found = ask(i) if alive[i] else None
        if found is None or found[0] != prio:
            continue  # stale: a neighbour merged since this entry was pushed
        j = nxt[i]
        value[i] = found[1]
        if born:
            ages[i] = prio + 1
        alive[j] = False
        nxt[i] = nxt[j]
        if nxt[j] < n:
            prv[nxt[j]] = i
        for k in (prv[i], i):
            if k >= 0:
                found = ask(k)
                if found is not None:
                    heapq.heappush(heap, (found[0], k))
    out = []
    i = 0
    while i < n:
        out.append(value[i])
        i = nxt[i]
    return out


def few_runs(parts):
    """Whether `parts` is long and made of few runs of one repeated part,
    the pieces merge_runs is for (csrc/ranks_merge.c: rk_merge_piece's test)."""
    n = len(parts)
    if n < HEAP_THRESHOLD:
        return False
    runs = 1 + sum(1 for a, b in zip(parts, parts[1:]) if a != b)
    return runs * RUNS_SHARE <= n


def merge_runs(parts, rule):
    # Same result as merge_heap, on a run-length state (csrc/merge.h:
    # bpe__merge_runs, where the proof is): a run is k equal parts of the
    # same width, indexed by its first part's position.  The heap holds each
    # run's inner pair (its first two parts, kind 0) and edge pair (its last
    # part and the next run's first, kind 1) as (priority, 2 * position +
    # kind), so ties go left.  An inner pair (T, T) -> U of priority p merges
    # floor(k / 2) pairs at once when k >= 4 and the pairs that batch makes
    # to the left of the run's next (T, T) -- (U, T), (X, U) with the
    # previous run's part X, and (U, U) when k >= 6 -- all rank above p;
    # otherwise one pair, like every edge pair.  For rules without creation
    # ranks (tiktoken's, and the merge list's pair table).
    n = len(parts)
    sym = [None] * n
    cnt = [0] * n
    wid = [0] * n
    nxt = [n] * n
    prv = [-1] * n
    last, i = -1, 0
    while i < n:  # the maximal runs of the starting parts
        j = i + 1
        while j < n and parts[j] == parts[i]:
            j += 1
        sym[i], cnt[i], wid[i], prv[i], nxt[i] = parts[i], j - i, 1, last, j
        last, i = i, j

    def pair(i, kind):  # (priority, merged) of run i's pair of that kind, or None
        if kind == 0:
            return rule(sym[i], sym[i]) if cnt[i] >= 2 else None
        return rule(sym[i], sym[nxt[i]]) if nxt[i] < n else None

    def link(a, b):
        if a >= 0:
            nxt[a] = b
        if b < n:
            prv[b] = a

    def join(i):  # joins run i with equal neighbours; returns its position
        a = prv[i]
        if a >= 0 and sym[a] == sym[i] and wid[a] == wid[i]:
            cnt[a] += cnt[i]
            link(a, nxt[i])
            sym[i] = None
            i = a
        b = nxt[i]
        if b < n and sym[b] == sym[i] and wid[b] == wid[i]:
            cnt[i] += cnt[b]
            link(i, nxt[b])
            sym[b] = None
        return i

    heap = []

    def push(i, kind):
        if i >= 0 and sym[i] is not None:
            found = pair(i, kind)
            if found is not None:
                heapq.heappush(heap, (found[0], 2 * i + kind))

    i = 0
    while i < n:
        for kind in (0, 1):
            found = pair(i, kind)
            if found is not None:
                heap.append((found[0], 2 * i + kind))
        i = nxt[i]
    heapq.heapify(heap)
    while heap:
        prio, key = heapq.heappop(heap)
        i, kind = key >> 1, key & 1
        found = pair(i, kind) if sym[i] is not None else None
        if found is None or found[0] != prio:
            continue  # stale
        merged, w, k, after = found[1], wid[i], cnt[i], nxt[i]
        j = -1
        if kind == 0:  # inner pair (T, T) -> U
            t, m, x = sym[i], 1, prv[i]

            def above(a, b):
                f = rule(a, b)
                return f is None or f[0] > prio
            if k >= 4 and above(merged, t) and (x < 0 or above(sym[x], merged)) \
                    and (k < 6 or above(merged, merged)):
                m = k // 2
            sym[i], cnt[i], wid[i] = merged, m, 2 * w
            if k > 2 * m:
                j = i + 2 * m * w
                sym[j], cnt[j], wid[j] = t, k - 2 * m, w
                link(i, j)
                link(j, after)
                j = join(j)
            i = join(i)
        else:  # edge pair (last part of run i, first part of run `after`) -> Z
            q, v, rest = i + (k - 1) * w, wid[after], cnt[after] - 1
            beyond, v_part = nxt[after], sym[after]
            sym[after] = None
            left = prv[i]
            if k > 1:
                cnt[i] = k - 1
                left = i
            sym[q], cnt[q], wid[q] = merged, 1, w + v
            link(left, q)
            if rest > 0:
                j = after + v
                sym[j], cnt[j], wid[j] = v_part, rest, v
                link(q, j)
                link(j, beyond)
                j = join(j)
            else:
                link(q, beyond)
            i = join(q)
        push(prv[i], 1)
        push(i, 0)
        push(i, 1)
        if j >= 0 and sym[j] is not None:
            push(j, 0)
            push(j, 1)
    out = []
    i = 0
    while i < n:
        out.extend([sym[i]] * cnt[i])
        i = nxt[i]
    return out


# Long pieces of many runs are merged in windows of up to WINDOW bytes, each
# on the short loop (csrc/ranks_merge.c: RK_WINDOW, RK_CUT_SPAN, RK_WINDOW_MAX,
# rk_window_end, rk_merge_windows).
WINDOW = 24
_CUT_SPAN = 8
_WINDOW_MAX = HEAP_THRESHOLD - 1


def _window_end(piece, parts, rule, pos):
    # Where the window from `pos` ends: among the last _CUT_SPAN + 1 places
    # up to pos + WINDOW that start a character, the one whose two bytes
    # have the highest priority as a pair (no pair: highest of all), the
    # last of equals -- a part is least likely to straddle it, so the test
    # at the cut fails least often.
    n, stop = len(piece), pos + WINDOW
    if stop >= n:
        return n
    best, highest = None, None
    for q in range(stop - _CUT_SPAN, stop + 1):
        if piece[q] & 0xC0 == 0x80:
            continue  # inside a character
        found = rule(parts[q - 1], parts[q])
        priority = _NO_PRIORITY if found is None else found[0]
        if best is None or priority >= highest:
            best, highest = q, priority
    if best is not None:
        return best
    while stop > pos + 1 and piece[stop] & 0xC0 == 0x80:
        stop -= 1  # no character starts there: end before one further back
    return stop


def merge_windows(piece, parts, rule, merge, width):
    # The parts of `piece` (bytes; parts[i] is the starting part of byte i)
    # merged window by window, or None when a window outgrew the short loop
    # (the caller then takes merge_heap).  Same steps as csrc/ranks_merge.c's
    # rk_merge_windows, where the proof is: windows of up to WINDOW bytes
    # (ending where _window_end says), each merged alone by `merge` (the
    # short loop); where two windows meet, the last committed part and the
    # window's first must merge, alone, to themselves -- else the last
    # committed part goes back into the window.  `width(part)` is the number
    # of bytes a part covers.
    out, ends = [], []
    n, pos = len(piece), 0

    def neighbours_pass(a, c, x, y):
        if c - a > _WINDOW_MAX:
            return None
        if rule(x, y) is not None:
            return False  # they would merge
        return merge(parts[a:c]) == [x, y]

    while pos < n:
        stop, start = _window_end(piece, parts, rule, pos), pos
        while True:
            if stop - start > _WINDOW_MAX:
                return None
            window = merge(parts[start:stop])
            if not out:
                break
            ok = neighbours_pass(ends[-2] if len(ends) >= 2 else 0, start + width(window[0]), out[-1], window[0])
            if ok is None:
                return None
            if ok:
                break
            out.pop()  # take the last committed part back into the window
            ends.pop()
            start = ends[-1] if ends else 0
        for part in window:
            start += width(part)
            out.append(part)
            ends.append(start)
        pos = stop
    return out
