"""Merging a sequence of parts by priority, in pure Python: the one loop of
the ranks side -- repeatedly join the adjacent pair with the lowest priority,
leftmost on ties; a rescan for short sequences, a heap over a linked list
for long ones (csrc/ranks.c's merge loops).  The rule that gives a pair its
priority is an argument, so the same loop serves tiktoken's rank rule
(RankTable), a merge list (RankTable with merges), the completions of
Encoding.encode_with_unstable and the file formats (merges_from_ranks
derives GPT-2 merges from ranks with it).
"""
import heapq

__all__ = ["HEAP_THRESHOLD", "byte_pair_merge", "merge_linear", "merge_by_rank", "merge_heap"]

# Pieces with at least this many bytes are merged with a heap over a linked
# list (O(n log n)); shorter ones with a plain rescan of the parts (O(n^2) but
# tiny constants).  tiktoken switches at 100 bytes for the same reason; the
# crossover measured here on "a" * n and random letters is between 60 and 200,
# so the exact value hardly matters.  tests/test_encoding.py runs pieces on both
# sides of it.
HEAP_THRESHOLD = 100

# Above every merge priority (priorities are ints).
_NO_PRIORITY = float("inf")


def byte_pair_merge(parts, pair_rank):
    """Merge `parts` in place-order: repeatedly join the adjacent pair with the
    lowest priority, leftmost on ties, until no pair has one.

    `pair_rank(a, b)` returns `(priority, merged)` or None.  Returns the new
    list of parts.  With tiktoken's rule the parts are bytes and the priority
    is the rank of `a + b`:

        >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"aab": 3}
        >>> def rule(a, b):
        ...     r = ranks.get(a + b)
        ...     return None if r is None else (r, a + b)
        >>> byte_pair_merge([b"a", b"a", b"b"], rule)
        [b'aab']
    """
    if len(parts) < HEAP_THRESHOLD:
        return merge_linear(parts, pair_rank)
    return merge_heap(parts, pair_rank)


def merge_linear(parts, pair_rank):
    # The textbook loop -- find the best adjacent pair, merge it, repeat --
    # but each pair's (priority, merged) is kept between rounds: a merge
    # changes only the two pairs beside it, so a round is one min() and one
    # index() over a list (both in C) plus two pair_rank calls, instead of a
    # pair_rank call for every pair.  index() finds the leftmost of equal
    # priorities, so ties go left as before.
    parts = list(parts)
    found = [pair_rank(parts[i], parts[i + 1]) for i in range(len(parts) - 1)]
    priority = [_NO_PRIORITY if f is None else f[0] for f in found]
    while priority:
        best = min(priority)
        if best == _NO_PRIORITY:
            break
        i = priority.index(best)
        parts[i : i + 2] = [found[i][1]]
        del found[i], priority[i]
        for k in (i - 1, i):  # the pairs (left neighbour, new part), (new part, right neighbour)
            if 0 <= k < len(priority):
                f = pair_rank(parts[k], parts[k + 1])
                found[k] = f
                priority[k] = _NO_PRIORITY if f is None else f[0]
    return parts


def merge_by_rank(parts, rank_of):
    # merge_linear for tiktoken's rule, where a pair's priority is the rank
    # of the joined bytes and the merged part is the joined bytes: with no
    # (priority, merged) tuples and no rule function to call, short pieces
    # (most of them) merge about a third faster.  rank_of is the bytes ->
    # rank dict's get.
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


def merge_heap(parts, pair_rank):
    # Parts form a doubly linked list indexed by their original position, so
    # "leftmost" is simply the smaller index.  The heap holds (priority,
    # index, left part, right part); an entry is stale when either node died or
    # changed since it was pushed, which is checked on pop (lazy deletion).
    n = len(parts)
    value = list(parts)
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap = []

    def push(i):
        j = nxt[i]
        if j < n:
            found = pair_rank(value[i], value[j])
            if found is not None:
                heap.append((found[0], i, value[i], value[j], found[1]))

    for i in range(n - 1):
        push(i)
    heapq.heapify(heap)
    while heap:
        _, i, left, right, merged = heapq.heappop(heap)
        j = nxt[i] if alive[i] else n
        if j >= n or value[i] is not left or value[j] is not right:
            continue  # stale: a neighbour merged since this entry was pushed
        value[i] = merged
        alive[j] = False
        nxt[i] = nxt[j]
        if nxt[j] < n:
            prv[nxt[j]] = i
        for k in (prv[i], i):
            if k >= 0:
                m = nxt[k]
                if m < n:
                    found = pair_rank(value[k], value[m])
                    if found is not None:
                        heapq.heappush(heap, (found[0], k, value[k], value[m], found[1]))
    out = []
    i = 0
    while i < n:
        out.append(value[i])
        i = nxt[i]
    return out
