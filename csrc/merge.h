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
 *                     a linked list: O(n log n), for the rest.
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
         * Plain loops: a few elements each time, where three calls of
         * memmove were 4% of o200k's profile on prose. */
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

#endif /* PYBPE_MERGE_H */
