/*
 * merge.c -- the merge engine's heap, and how the engine was chosen.
 *
 * The engine (merge.h) merges the adjacent pair of lowest priority, leftmost
 * on ties, for both pillars: merger.c gives it the chapter's merge list
 * (priority = applicable creation rank), ranks.c tiktoken's rank table
 * (priority = rank of the merged token).  Its two loops are static inline
 * in merge.h so that each rule's lookup is inlined into them; this file
 * holds the part that needs no rule, the min-heap of the long path, and the
 * measurements behind the engine's choices.
 *
 * The heap.  A binary heap of 16-byte entries (priority + both parts)
 * spent 56% of "a" * 1,000,000 in sift-down.  Eight-byte entries (the
 * priority and the left position in one uint64; validity re-derived from
 * the rule instead of stored), four children per node, and replacing the
 * top in place instead of pop-then-push: 0.53 -> ~0.25 s with gpt2's ranks
 * (tiktoken: ~0.45 s on the same input here).  The merge-list rule used to
 * have its own binary heap of 20-byte candidates (rank, both nodes, both
 * creation ranks); it now uses this one.
 *
 * The threshold (BPE__MERGE_HEAP_THRESHOLD in merge.h).  See the comment
 * there for the figures.
 */
#include "merge.h"

#define ARITY 4

void bpe__heap_sift_down(bpe__heap_entry *heap, size_t size, size_t i)
{
    bpe__heap_entry moving = heap[i];

    for (;;) {
        size_t first = ARITY * i + 1, c, best;
        if (first >= size)
            break;
        best = first;
        for (c = first + 1; c < first + ARITY && c < size; c++)
            if (heap[c] < heap[best])
                best = c;
        if (heap[best] >= moving)
            break;
        heap[i] = heap[best];
        i = best;
    }
    heap[i] = moving;
}

void bpe__heap_push(bpe__heap_entry *heap, size_t *size, bpe__heap_entry e)
{
    size_t i = (*size)++;

    while (i > 0 && heap[(i - 1) / ARITY] > e) {
        heap[i] = heap[(i - 1) / ARITY];
        i = (i - 1) / ARITY;
    }
    heap[i] = e;
}

void bpe__heap_pop(bpe__heap_entry *heap, size_t *size)
{
    heap[0] = heap[--*size];
    if (*size > 1)
        bpe__heap_sift_down(heap, *size, 0);
}

void bpe__heapify(bpe__heap_entry *heap, size_t size)
{
    size_t i;

    for (i = size / ARITY + 1; i-- > 0;)
        if (i < size)
            bpe__heap_sift_down(heap, size, i);
}
