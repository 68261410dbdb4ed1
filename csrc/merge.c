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
 * The threshold (BPE__MERGE_HEAP_THRESHOLD in merge.h).  CPU ns per part,
 * each path forced, best of 5, on ~1 MB cut into runs of n parts: gpt2's
 * rank table on Shakespeare's letters (spaces removed, so runs are long
 * words) and on "aaa...", and Shakespeare's 7,847 chapter merges (vocab
 * 8,000) on its letters' symbols:
 *
 *       n    ranks, prose     ranks, "aaa..."    merge list, prose
 *            loop    heap     loop    heap       loop    heap
 *      16    41.7    64.0     17.2    26.5       55.3    71.6
 *      64    64.1    83.9     31.1    34.2       75.9    84.7
 *      80    65.8    85.3     35.7    34.9       79.7    88.1
 *     100    69.5    91.1     40.1    35.6       84.5    90.9
 *     128    79.5    94.0     45.7    36.8       90.4    92.6
 *     200    95.5   101.8     57.6    38.5      101.6    97.1
 *
 * On prose the loop wins up to ~150-250 parts; on repetitive input the
 * heap wins from ~80, and past that the loop's cost grows with n while the
 * heap's barely moves.  100 (tiktoken's value too) keeps the loop for
 * every word of prose and caps the loop's loss on "aaa..." at ~13%.  The
 * merge-list rule alone once chose 64 (merger.c, with a 20-byte binary
 * heap: 128 vs 132 ns at 64); with this heap the crossover moved up.
 */
#include <stdlib.h>

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

static int bpe__heap_entry_cmp(const void *a, const void *b)
{
    bpe__heap_entry x = *(const bpe__heap_entry *)a, y = *(const bpe__heap_entry *)b;
    return x < y ? -1 : x > y;
}

void bpe__heap_sort(bpe__heap_entry *heap, size_t size)
{
    qsort(heap, size, sizeof *heap, bpe__heap_entry_cmp);
}
