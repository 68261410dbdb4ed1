/*
 * merge.h -- the one merge engine of the C core, shared by both rules.
 *
 * Both pillars encode a word (or a piece) the same way: repeatedly merge the
 * adjacent pair with the lowest priority, leftmost on ties, until no pair
 * has a priority.  Only the priority differs:
 *   - the chapter's merge list (merger.c, listing 065): the applicable
 *     creation rank -- the first rank of the pair above the ranks of the
 *     merges that made both parts (merger.c proves this equals the sweep);
 *   - tiktoken's rank table (ranks.c): the rank of the merged token, looked
 *     up in the pair table.
 * So the engine takes the priority as a *rule*, a function of the two parts
 * and of their creation ranks, and has two paths:
 *   bpe__merge_short  rescans every adjacent pair after each merge: O(n^2),
 *                     tiny constants, for words shorter than the threshold;
 *   bpe__merge_heap   keeps candidates in a 4-ary heap of 8-byte entries over
 *                     a linked list: O(n log n), for the rest;
 *   bpe__merge_runs   the heap's merges on a run-length state, a run of k
 *                     equal parts merging pairwise in one step when that is
 *                     provably what the heap would do next: for long pieces
 *                     of few runs ("a" * 1,000,000), rules without creation
 *                     ranks.
 *
 * Why the loops live here as static inline functions and not in merge.c:
 * the rule is called two to three times per merge, and a call through a
 * pointer (or into another file) would sit in the hottest loop of both
 * pillars.  Each rule's file calls these with its own static rule, the
 * compiler inlines the loop there and, the pointer being a constant, the
 * rule too: no indirect call is left (checked with objdump on the
 * extension: `call *` appears in neither merge loop).  merge.c holds what
 * needs no rule: the heap primitives and the notes on how they were chosen.
 *
 * Creation ranks ("born"): 0 for a part present from the start, p + 1 for a
 * part made by a merge of priority p.  A rule that ignores them (tiktoken's)
 * passes born == NULL and the loops keep none; the test is on a constant,
 * so it costs nothing once inlined.
 */
#ifndef PYBPE_MERGE_H
#define PYBPE_MERGE_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* Words (pieces) of at least this many parts are merged with the heap;
 * shorter ones with the rescanning loop.  One value for both rules, chosen
 * by the measurement in merge.c (the loop wins on prose well past it, the
 * heap on repetitive input from ~80 parts).  ranks.h's public BPE_RANKS_HEAP_THRESHOLD
 * (merge.c checks at compile time that it is this number) and the Python
 * twin's HEAP_THRESHOLD (pybpe/core/spec/merge.py; tests check it against
 * the C value) are the same number. */
#define BPE__MERGE_HEAP_THRESHOLD 100

/* The priority of merging parts x then y (creation ranks bx, by; both 0 when
 * the rule keeps none), or BPE__NONE when they do not merge; when they do,
 * *result gets the merged part.  Must be a function of its arguments only,
 * which is what lets the heap re-derive an entry's validity (below). */
typedef uint32_t (*bpe__merge_rule)(const void *table, uint32_t x, uint32_t y,
                                    uint32_t bx, uint32_t by, uint32_t *result);

/* A heap entry: priority << 32 | position of the pair's left part, so the
 * smallest entry is the lowest priority, leftmost on ties.  (merge.c) */
typedef uint64_t bpe__heap_entry;

/* The min-heap primitives, 4 children per node (merge.c). */
void bpe__heap_sift_down(bpe__heap_entry *heap, size_t size, size_t i);
void bpe__heap_push(bpe__heap_entry *heap, size_t *size, bpe__heap_entry e);
void bpe__heap_pop(bpe__heap_entry *heap, size_t *size);
/* Orders heap[0..size) into a heap in O(size) (Floyd). */
void bpe__heapify(bpe__heap_entry *heap, size_t size);
/* Sorts heap[0..size) ascending (a sorted array is a heap too). */
void bpe__heap_sort(bpe__heap_entry *heap, size_t size);

/* The rescanning loop on parts sym[0..n).  prio[i] / res[i] hold the
 * priority and result of pair (i, i + 1) for i < n - 1, filled in by the
 * caller for the starting parts (ranks.c reads them from its byte-pair
 * array, merger.c asks the rule); born[0..n) is all 0, or born is NULL.
 * Each round: find the lowest priority (strict <, so the leftmost wins
 * ties), merge it, drop the right part, ask the rule again for the two pairs
 * that touch the new part.  Returns the new number of parts.
 * Example (pairs "a"+"a" -> "aa" priority 0, "aa"+"b" priority 1):
 * a a b -> aa b -> aab. */
static inline size_t bpe__merge_short(bpe__merge_rule rule, const void *table,
                                      uint32_t *sym, uint32_t *born,
                                      uint32_t *prio, uint32_t *res, size_t n)
{
    size_t i;

    while (n > 1) {
        uint32_t best_prio = BPE__NONE;
        size_t best = 0;
        for (i = 0; i + 1 < n; i++)
            if (prio[i] < best_prio) {
                best_prio = prio[i];
                best = i;
            }
        if (best_prio == BPE__NONE)
            break;
        sym[best] = res[best];
        /* Drop part best + 1 and pair entry best + 1 (there are n - 1).
         * Plain loops, written to spare three calls of memmove for a few
         * elements each -- but GCC's loop distribution (-O2 and up) turns
         * them back into those calls.  ranks_merge.c's rk_merge_small,
         * where encoding merges, moves nothing. */
        for (i = best + 1; i + 1 < n; i++)
            sym[i] = sym[i + 1];
        if (born != NULL) {
            born[best] = best_prio + 1;
            for (i = best + 1; i + 1 < n; i++)
                born[i] = born[i + 1];
        }
        for (i = best + 1; i + 2 < n; i++) {
            prio[i] = prio[i + 1];
            res[i] = res[i + 1];
        }
        n--;
        if (best + 1 < n)
            prio[best] = rule(table, sym[best], sym[best + 1],
                              born != NULL ? born[best] : 0,
                              born != NULL ? born[best + 1] : 0, &res[best]);
        if (best > 0)
            prio[best - 1] = rule(table, sym[best - 1], sym[best],
                                  born != NULL ? born[best - 1] : 0,
                                  born != NULL ? born[best] : 0,
                                  &res[best - 1]);
    }
    return n;
}

/* The priority of the pair (i, next[i]), or BPE__NONE (also when i is the
 * last part, next[i] == n). */
static inline uint32_t bpe__merge_node_prio(bpe__merge_rule rule,
                                            const void *table,
                                            const uint32_t *sym,
                                            const uint32_t *born,
                                            const uint32_t *next, size_t i,
                                            size_t n, uint32_t *merged)
{
    uint32_t j = next[i];

    if (j >= n)
        return BPE__NONE;
    return rule(table, sym[i], sym[j], born != NULL ? born[i] : 0,
                born != NULL ? born[j] : 0, merged);
}

/* Same result as bpe__merge_short in O(n log n).  Parts are a linked list
 * indexed by their starting position (so "leftmost" is the smaller index);
 * candidate pairs sit in the heap and are checked when they reach the top
 * (lazy deletion).  An entry (p, i) is live when part i is alive and the
 * rule, asked again about i and its current right neighbour, still says p.
 * That test is exact for any rule that is a function of its arguments:
 * every change to the pair at i pushes an entry for the pair it becomes, so
 * an entry that passes the test has the same key as that live one, and
 * merging for either is the same step (the other then fails the test: the
 * new part's pairs have other priorities, or, under the merge-list rule, a
 * creation rank above p).  The heap needs room for 2n entries (n - 1 at the
 * start, at most one more per merge); next, prev and born (or NULL) n each;
 * born all 0.  Dead parts get sym = BPE__NONE, which no rule merges.
 * Returns the number of parts, compacted into sym. */
static inline size_t bpe__merge_heap(bpe__merge_rule rule, const void *table,
                                     uint32_t *sym, uint32_t *born,
                                     uint32_t *next, uint32_t *prev,
                                     bpe__heap_entry *heap, size_t n)
{
    size_t i, hn = 0, out = 0;
    uint32_t merged = 0, p;

    for (i = 0; i < n; i++) {
        next[i] = (uint32_t)(i + 1);
        prev[i] = i == 0 ? BPE__NONE : (uint32_t)(i - 1);
    }
    for (i = 0; i + 1 < n; i++) {
        p = bpe__merge_node_prio(rule, table, sym, born, next, i, n, &merged);
        if (p != BPE__NONE)
            heap[hn++] = (bpe__heap_entry)p << 32 | (bpe__heap_entry)i;
    }
    bpe__heapify(heap, hn);
    while (hn > 0) {
        bpe__heap_entry e = heap[0]; /* popped below, or replaced in place */
        uint32_t a = (uint32_t)(e & 0xffffffffu), b;
        uint32_t prio = (uint32_t)(e >> 32);
        if (sym[a] == BPE__NONE ||
            bpe__merge_node_prio(rule, table, sym, born, next, a, n,
                                 &merged) != prio) {
            bpe__heap_pop(heap, &hn);
            continue; /* stale: a neighbour merged after this was pushed */
        }
        b = next[a];
        sym[a] = merged;
        if (born != NULL)
            born[a] = prio + 1;
        sym[b] = BPE__NONE;
        next[a] = next[b];
        if (next[b] < n)
            prev[next[b]] = a;
        /* The new pair at a usually exists: let it take the top's place
         * (one sift instead of a pop and a push). */
        p = bpe__merge_node_prio(rule, table, sym, born, next, a, n, &merged);
        if (p != BPE__NONE) {
            heap[0] = (bpe__heap_entry)p << 32 | a;
            bpe__heap_sift_down(heap, hn, 0);
        } else {
            bpe__heap_pop(heap, &hn);
        }
        if (prev[a] != BPE__NONE) {
            p = bpe__merge_node_prio(rule, table, sym, born, next, prev[a], n,
                                     &merged);
            if (p != BPE__NONE)
                bpe__heap_push(heap, &hn, (bpe__heap_entry)p << 32 | prev[a]);
        }
    }
    for (i = 0; i < n; i = next[i]) /* part 0 is never merged away */
        sym[out++] = sym[i];
    return out;
}

/*
 * The run engine: the same merges as bpe__merge_heap (so the same result),
 * computed on a run-length state, for pieces made of long runs of one
 * repeated part ("a" * 1,000,000, a million spaces).  Rules without
 * creation ranks only (born is NULL: tiktoken's rule, ranks.c).
 *
 * State.  A *run* is k >= 1 equal adjacent parts T (same part, same width:
 * the number of starting parts each covers).  Runs are a linked list
 * indexed by the position of their first part, so positions still order
 * them left to right.  A run has at most two pairs: its *inner* pair (its
 * first two parts, when k >= 2) and its *edge* pair (its last part and the
 * next run's first).  Every adjacent pair of the parts is one of these or
 * an inner pair further into a run, (T, T) again, with the same priority
 * and to the right of the run's first one.  So the lowest priority, leftmost
 * among equals, is always an inner or edge pair of some run, and the heap
 * holds only those: key priority << 32 | (2 * position + kind), kind 0
 * inner, 1 edge.  Within a run the inner pair is left of the edge pair, and
 * both are left of the next run's pairs, so the key orders ties leftmost
 * first.  Lazy deletion as in bpe__merge_heap: an entry is live when its run
 * starts at that position and the rule, asked again, gives that priority;
 * every change pushes the pairs it touches, so a live entry is always a real
 * pair with that key, and acting on it is the same step.
 *
 * Steps.  Popping an edge pair (T, V) -> Z merges one pair, exactly as
 * bpe__merge_heap would: the left run loses its last part, the right run
 * its first (it now starts one part later), Z becomes a run of one between
 * them.  Popping an inner pair (T, T) -> U of priority p at run X? T^k
 * (X the previous run's last part, if any) may merge m = floor(k / 2) pairs
 * at once, leaving U^m then T^(k - 2m).  Claim: when k >= 4 and
 *     rule(U, T) > p,  rule(X, U) > p,  and (when k >= 6) rule(U, U) > p,
 * the one-pair-at-a-time engine makes exactly these m merges next, in this
 * order.  Proof: the popped pair is the lowest priority, leftmost among
 * equals, so every pair left of the run has priority > p and every pair to
 * its right >= p.  After j < m merges the parts are X U^j T^(k-2j) ... with
 * k - 2j >= 2.  The pairs left of the first (T, T) are then the untouched
 * ones (> p), (X, U) (> p, second condition), (U, U)
 * when j >= 2 (> p: m >= 3 means k >= 6) and (U, T) (> p); the pairs right
 * of it are untouched (>= p) or further (T, T) pairs (= p, to its right).
 * So the lowest priority is p and its leftmost pair is that (T, T): merge
 * j + 1 is the next one in the run.  After merge m the run is used up, and
 * the engine simply goes on from the state the one-pair engine would be in.
 * When a condition fails (rank files are free to rank "aaa" before "aa") the
 * step merges one pair, which is always exact.  Each step is thus one step,
 * or a proven sequence of steps, of bpe__merge_heap's algorithm: same merges,
 * same order, same result.  Adjacent runs of the same part and width are
 * joined after every step, so a run of n parts takes O(log n) batched steps
 * while the rank file keeps the conditions true (trained files do: a token's
 * merges are ranked after its halves).
 *
 * Memory: sym (the n starting parts in, the result out, as in
 * bpe__merge_heap), cnt, wid, next and prev of n entries each, and a heap of
 * heap_cap entries, at least twice the most runs alive at once plus
 * BPE__RUN_PUSHES (2n + BPE__RUN_PUSHES always is).  A step pushes at most
 * BPE__RUN_PUSHES entries; when the heap is full its stale and duplicate
 * entries are dropped (bpe__runs_compact), which leaves at most two per run.
 * Positions must fit 31 bits (n < 2^31).  Returns the number of parts.
 */
#define BPE__RUN_PUSHES 8

typedef struct {
    uint32_t *sym, *cnt, *wid, *next, *prev;
    bpe__heap_entry *heap;
    size_t hn, cap;
    uint32_t n;
} bpe__runs;

/* The priority of run i's pair of kind t (0 inner, 1 edge), or BPE__NONE. */
static inline uint32_t bpe__runs_pair(bpe__merge_rule rule, const void *table,
                                      const bpe__runs *s, uint32_t i,
                                      unsigned t, uint32_t *merged)
{
    if (t == 0)
        return s->cnt[i] >= 2
                   ? rule(table, s->sym[i], s->sym[i], 0, 0, merged)
                   : BPE__NONE;
    return s->next[i] < s->n
               ? rule(table, s->sym[i], s->sym[s->next[i]], 0, 0, merged)
               : BPE__NONE;
}

/* Whether heap entry e is a real pair of the current state. */
static inline int bpe__runs_live(bpe__merge_rule rule, const void *table,
                                 const bpe__runs *s, bpe__heap_entry e,
                                 uint32_t *merged)
{
    uint32_t key = (uint32_t)(e & 0xffffffffu), i = key >> 1;
    return s->sym[i] != BPE__NONE &&
           bpe__runs_pair(rule, table, s, i, key & 1, merged) ==
               (uint32_t)(e >> 32);
}

/* Drops the heap's stale entries and repeated ones: at most two per run
 * remain.  Sorted, the array is a heap again. */
static inline void bpe__runs_compact(bpe__merge_rule rule, const void *table,
                                     bpe__runs *s)
{
    size_t i, kept = 0;
    uint32_t merged;

    bpe__heap_sort(s->heap, s->hn);
    for (i = 0; i < s->hn; i++)
        if ((kept == 0 || s->heap[kept - 1] != s->heap[i]) &&
            bpe__runs_live(rule, table, s, s->heap[i], &merged))
            s->heap[kept++] = s->heap[i];
    s->hn = kept;
    assert(s->hn + BPE__RUN_PUSHES <= s->cap); /* heap_cap's bound (above) */
}

/* Pushes run i's pair of kind t, if it has one (i may be BPE__NONE). */
static inline void bpe__runs_push(bpe__merge_rule rule, const void *table,
                                  bpe__runs *s, uint32_t i, unsigned t)
{
    uint32_t merged, p;

    if (i == BPE__NONE || s->sym[i] == BPE__NONE)
        return;
    p = bpe__runs_pair(rule, table, s, i, t, &merged);
    if (p == BPE__NONE)
        return;
    if (s->hn == s->cap)
        bpe__runs_compact(rule, table, s);
    bpe__heap_push(s->heap, &s->hn,
                   (bpe__heap_entry)p << 32 | (bpe__heap_entry)(2 * i + t));
}

/* next[a] = b and prev[b] = a; a may be BPE__NONE (b is first), b may be n
 * (a is last). */
static inline void bpe__runs_link(bpe__runs *s, uint32_t a, uint32_t b)
{
    if (a != BPE__NONE)
        s->next[a] = b;
    if (b < s->n)
        s->prev[b] = a;
}

/* A run of c parts `part` of width w starting at position i. */
static inline void bpe__runs_set(bpe__runs *s, uint32_t i, uint32_t part,
                                 uint32_t c, uint32_t w)
{
    s->sym[i] = part;
    s->cnt[i] = c;
    s->wid[i] = w;
}

/* Joins run i with its neighbours when they hold the same part of the same
 * width; returns the position of the joined run. */
static inline uint32_t bpe__runs_join(bpe__runs *s, uint32_t i)
{
    uint32_t a = s->prev[i], b;

    if (a != BPE__NONE && s->sym[a] == s->sym[i] && s->wid[a] == s->wid[i]) {
        s->cnt[a] += s->cnt[i];
        bpe__runs_link(s, a, s->next[i]);
        s->sym[i] = BPE__NONE;
        i = a;
    }
    b = s->next[i];
    if (b < s->n && s->sym[b] == s->sym[i] && s->wid[b] == s->wid[i]) {
        s->cnt[i] += s->cnt[b];
        bpe__runs_link(s, i, s->next[b]);
        s->sym[b] = BPE__NONE;
    }
    return i;
}

static inline size_t bpe__merge_runs(bpe__merge_rule rule, const void *table,
                                     uint32_t *sym, uint32_t *cnt,
                                     uint32_t *wid, uint32_t *next,
                                     uint32_t *prev, bpe__heap_entry *heap,
                                     size_t heap_cap, size_t n)
{
    bpe__runs s;
    uint32_t i, j, last = BPE__NONE, merged = 0;
    size_t out = 0;

    s.sym = sym;
    s.cnt = cnt;
    s.wid = wid;
    s.next = next;
    s.prev = prev;
    s.heap = heap;
    s.hn = 0;
    s.cap = heap_cap;
    s.n = (uint32_t)n;
    for (i = 0; i < s.n; i = j) { /* the maximal runs of the starting parts */
        for (j = i + 1; j < s.n && sym[j] == sym[i]; j++)
            sym[j] = BPE__NONE;
        bpe__runs_set(&s, i, sym[i], j - i, 1);
        s.prev[i] = last;
        s.next[i] = j;
        last = i;
    }
    for (i = 0; i < s.n; i = next[i]) {
        uint32_t p;
        unsigned t;
        for (t = 0; t < 2; t++)
            if ((p = bpe__runs_pair(rule, table, &s, i, t, &merged)) != BPE__NONE)
                heap[s.hn++] = (bpe__heap_entry)p << 32 | (bpe__heap_entry)(2 * i + t);
    }
    bpe__heapify(heap, s.hn);
    while (s.hn > 0) {
        bpe__heap_entry e = heap[0];
        uint32_t key = (uint32_t)(e & 0xffffffffu), p = (uint32_t)(e >> 32);
        uint32_t w, k, left, after;

        i = key >> 1;
        if (!bpe__runs_live(rule, table, &s, e, &merged)) {
            bpe__heap_pop(heap, &s.hn);
            continue; /* stale */
        }
        bpe__heap_pop(heap, &s.hn);
        w = wid[i];
        k = cnt[i];
        after = next[i];
        if ((key & 1) == 0) {
            /* inner pair (T, T) -> U: m pairs at once when the claim's
             * conditions hold (see above), else one */
            uint32_t t_part = sym[i], u = merged, m = 1, x = prev[i], scratch;
            if (k >= 4 &&
                rule(table, u, t_part, 0, 0, &scratch) > p &&
                (x == BPE__NONE || rule(table, sym[x], u, 0, 0, &scratch) > p) &&
                (k < 6 || rule(table, u, u, 0, 0, &scratch) > p))
                m = k / 2;
            bpe__runs_set(&s, i, u, m, 2 * w);
            if (k > 2 * m) {
                j = i + 2 * m * w;
                bpe__runs_set(&s, j, t_part, k - 2 * m, w);
                bpe__runs_link(&s, i, j);
                bpe__runs_link(&s, j, after);
                j = bpe__runs_join(&s, j);
            } else {
                j = BPE__NONE;
            }
            i = bpe__runs_join(&s, i);
        } else {
            /* edge pair (last T of run i, first V of run `after`) -> Z */
            uint32_t q = i + (k - 1) * w, v = wid[after], rest = cnt[after] - 1;
            uint32_t beyond = next[after], v_part = sym[after];
            sym[after] = BPE__NONE;
            left = prev[i];
            if (k > 1) {
                cnt[i] = k - 1;
                left = i;
            }
            bpe__runs_set(&s, q, merged, 1, w + v);
            bpe__runs_link(&s, left, q);
            if (rest > 0) {
                j = after + v;
                bpe__runs_set(&s, j, v_part, rest, v);
                bpe__runs_link(&s, q, j);
                bpe__runs_link(&s, j, beyond);
                j = bpe__runs_join(&s, j);
            } else {
                j = BPE__NONE;
                bpe__runs_link(&s, q, beyond);
            }
            i = bpe__runs_join(&s, q);
        }
        /* the pairs this step may have changed */
        bpe__runs_push(rule, table, &s, prev[i], 1);
        bpe__runs_push(rule, table, &s, i, 0);
        bpe__runs_push(rule, table, &s, i, 1);
        if (j != BPE__NONE && sym[j] != BPE__NONE) {
            bpe__runs_push(rule, table, &s, j, 0);
            bpe__runs_push(rule, table, &s, j, 1);
        }
    }
    for (i = 0; i < s.n;) { /* position 0 always starts a run */
        uint32_t part = sym[i], c = cnt[i], nx = next[i];
        while (c-- > 0)
            sym[out++] = part;
        i = nx;
    }
    return out;
}

#endif /* PYBPE_MERGE_H */
