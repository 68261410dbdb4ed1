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

__all__ = ["HEAP_THRESHOLD", "byte_pair_merge", "merge_linear", "merge_by_rank", "merge_heap"]

# Sequences of at least this many parts are merged with the heap; shorter
# ones with the rescan.  The C engine's BPE__MERGE_HEAP_THRESHOLD (merge.h,
# with its measurement; tests/test_encoding.py checks the two agree), so both
# backends take the same path on the same input.
HEAP_THRESHOLD = 100

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
