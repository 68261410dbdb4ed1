/*
 * merger.c -- ranked application of a merge list: apply_merges (listing 065).
 *
 * Encodes a word exactly as applying merge 0 to the whole word, then merge
 * 1, and so on (each left to right, skip-two) would -- for ANY merge list,
 * including ones where a pair appears twice or two pairs build the same
 * symbol -- without replaying every merge.  It does not know strings: the
 * caller maps text to initial symbol IDs and IDs back to text.
 *
 * HOW.  Every symbol instance carries its creation rank: the rank of the
 * merge that made it, or -1 for an initial symbol.  For adjacent instances
 * x, y the APPLICABLE merge is the smallest rank r of pair (sym x, sym y)
 * with r > max(rank x, rank y).  We repeatedly merge the adjacent pair with
 * the smallest (applicable rank, position); the new instance gets rank r and
 * keeps the left position.  The merging is merge.h's engine, shared with
 * the tiktoken side (ranks.c); this file gives it the rule `applicable`.
 *
 * WHY THIS EQUALS THE SWEEP.  Induction on r: when the sweep runs merge r,
 * every instance present was created by a merge < r (or is initial), so
 * merge r can fire on x, y exactly when r is a rank of their pair above both
 * creation ranks -- which is what "applicable" tests, and no smaller rank
 * of that pair is still pending (it would have fired, or was blocked by an
 * overlap that consumed x or y).  A symbol created by merge r takes part
 * only in merges > r, so it never joins the rank-r round; hence the rank-r
 * candidates are fixed when the round starts, and taking them in position
 * order, each merge consuming its right neighbour, is the sweep's
 * left-to-right skip-two scan.  Instances (hence positions) never reorder.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "merge.h"

/* Creation rank + 1 of an instance ("born" in merge.h): 0 = initial
 * symbol, r + 1 = made by merge r (unsigned, so -1 needs no sign). */

struct bpe_merger {
    size_t n;
    uint32_t *result;
    uint32_t *next_same;   /* next higher rank with the same pair, or NONE */
    bpe__pairmap lowest;   /* (left, right) -> its lowest rank */
};

/* Per-call working memory for the merge engine (merge.h), sized for the
 * longest word of the call: born, prio and res for both paths, and the
 * linked list and heap for words that reach the heap threshold. */
typedef struct {
    uint32_t *born, *prio, *res, *prev, *next;
    bpe__heap_entry *heap;
    size_t cap;
} scratch;

bpe_merger *bpe_merger_new(const uint32_t *lefts, const uint32_t *rights,
                           const uint32_t *results, size_t n, int *status)
{
    bpe_merger *m = NULL;
    size_t r;
    int st = BPE_EINVAL;

    if (n != 0 && (lefts == NULL || rights == NULL || results == NULL))
        goto cleanup;
    st = BPE_ETOOBIG;
    if (n >= (size_t)BPE__NONE - 1)  /* ranks + 1 must stay below BPE__NONE */
        goto cleanup;
    st = BPE_ENOMEM;
    if ((m = calloc(1, sizeof *m)) == NULL)
        goto cleanup;
    m->n = n;
    m->result = malloc((n + 1) * sizeof *m->result);
    m->next_same = malloc((n + 1) * sizeof *m->next_same);
    if (m->result == NULL || m->next_same == NULL)
        goto cleanup;
    if ((st = bpe__pairmap_init(&m->lowest, n)) != BPE_OK)
        goto cleanup;
    if (n != 0)
        memcpy(m->result, results, n * sizeof *results);
    /* From the highest rank down, so each pair's chain ends up ascending
     * and the map holds its lowest rank. */
    for (r = n; r-- > 0;) {
        uint32_t *head;
        m->next_same[r] = BPE__NONE;
        if (lefts[r] == BPE_NO_SYMBOL || rights[r] == BPE_NO_SYMBOL)
            continue;  /* "unknown" never merges */
        head = bpe__pairmap_find(&m->lowest, lefts[r], rights[r]);
        if (head != NULL) {
            m->next_same[r] = *head;
            *head = (uint32_t)r;
        } else if ((st = bpe__pairmap_put(&m->lowest, lefts[r], rights[r],
                                          (uint32_t)r)) != BPE_OK) {
            goto cleanup;
        }
    }
    st = BPE_OK;
cleanup:
    if (st != BPE_OK) {
        bpe_merger_free(m);
        m = NULL;
    }
    if (status != NULL)
        *status = st;
    return m;
}

void bpe_merger_free(bpe_merger *merger)
{
    if (merger == NULL)
        return;
    free(merger->result);
    free(merger->next_same);
    bpe__pairmap_free(&merger->lowest);
    free(merger);
}

/* The applicable rank of instances (x, created cx) and (y, created cy), or
 * BPE__NONE: the first rank of the pair r with r + 1 > max(cx, cy).  This
 * is the merge-list rule given to the merge engine: the rank is the
 * priority, its merge's symbol the result. */
static uint32_t applicable(const void *table, uint32_t x, uint32_t y,
                           uint32_t cx, uint32_t cy, uint32_t *result)
{
    const bpe_merger *m = (const bpe_merger *)table;
    uint32_t floor = cx > cy ? cx : cy;
    uint32_t r = bpe__pairmap_get(&m->lowest, x, y);

    while (r != BPE__NONE && r < floor)
        r = m->next_same[r];
    if (r != BPE__NONE)
        *result = m->result[r];
    return r;
}

/* ---- entry points -------------------------------------------------------- */

static void scratch_free(scratch *s)
{
    free(s->born);
    free(s->prio);
    free(s->res);
    free(s->prev);
    free(s->next);
    free(s->heap);
}

/* Working memory for words of up to `longest` symbols. */
static int scratch_init(scratch *s, size_t longest)
{
    size_t cap = longest + 1;

    memset(s, 0, sizeof *s);
    if (longest >= BPE__NONE / 3)
        return BPE_ETOOBIG;  /* node indices and 2n heap entries */
    s->cap = cap;
    s->born = malloc(cap * sizeof *s->born);
    s->prio = malloc(cap * sizeof *s->prio);
    s->res = malloc(cap * sizeof *s->res);
    if (longest >= BPE__MERGE_HEAP_THRESHOLD) {
        s->prev = malloc(cap * sizeof *s->prev);
        s->next = malloc(cap * sizeof *s->next);
        s->heap = malloc(2 * cap * sizeof *s->heap);
    }
    if (s->born == NULL || s->prio == NULL || s->res == NULL ||
        (longest >= BPE__MERGE_HEAP_THRESHOLD &&
         (s->prev == NULL || s->next == NULL || s->heap == NULL))) {
        scratch_free(s);
        return BPE_ENOMEM;
    }
    return BPE_OK;
}

/* path: 0 short loop, 1 heap, -1 by length.  The scratch must fit n. */
static size_t apply_one(const bpe_merger *m, uint32_t *sym, size_t n,
                        scratch *s, int path)
{
    size_t i;

    if (path < 0)
        path = n >= BPE__MERGE_HEAP_THRESHOLD;
    for (i = 0; i < n; i++)
        s->born[i] = 0;
    if (path)
        return bpe__merge_heap(applicable, m, sym, s->born, s->next, s->prev,
                               s->heap, n);
    for (i = 0; i + 1 < n; i++)
        s->prio[i] = applicable(m, sym[i], sym[i + 1], 0, 0, &s->res[i]);
    return bpe__merge_short(applicable, m, sym, s->born, s->prio, s->res, n);
}

int bpe__apply_merges_path(const bpe_merger *merger, uint32_t *symbols,
                           size_t *n, int path)
{
    scratch s;
    int status;

    if (merger == NULL || n == NULL || (symbols == NULL && *n != 0))
        return BPE_EINVAL;
    if (*n < 2)
        return BPE_OK;
    /* a forced heap path on a short word needs the long scratch too */
    if ((status = scratch_init(&s, path == 1 && *n < BPE__MERGE_HEAP_THRESHOLD
                                       ? BPE__MERGE_HEAP_THRESHOLD : *n)) != BPE_OK)
        return status;
    *n = apply_one(merger, symbols, *n, &s, path);
    scratch_free(&s);
    return BPE_OK;
}

int bpe_apply_merges(const bpe_merger *merger, uint32_t *symbols, size_t *n)
{
    return bpe__apply_merges_path(merger, symbols, n, -1);
}

struct bpe__applier {
    scratch s;
    size_t longest;  /* the scratch fits words of up to this many symbols */
};

bpe__applier *bpe__applier_new(void)
{
    return calloc(1, sizeof(bpe__applier));
}

void bpe__applier_free(bpe__applier *applier)
{
    if (applier == NULL)
        return;
    scratch_free(&applier->s);
    free(applier);
}

int bpe__applier_run(bpe__applier *applier, const bpe_merger *merger,
                     uint32_t *symbols, size_t *n)
{
    if (applier == NULL || merger == NULL || n == NULL ||
        (symbols == NULL && *n != 0))
        return BPE_EINVAL;
    if (*n < 2)
        return BPE_OK;
    if (*n > applier->longest) {
        /* at least double (and at least the heap threshold), unless too big */
        size_t want = applier->longest * 2 > *n ? applier->longest * 2 : *n;
        scratch fresh;
        int status;
        if (want < BPE__MERGE_HEAP_THRESHOLD)
            want = BPE__MERGE_HEAP_THRESHOLD;
        if (want >= BPE__NONE / 3)
            want = *n;
        if ((status = scratch_init(&fresh, want)) != BPE_OK)
            return status;
        scratch_free(&applier->s);
        applier->s = fresh;
        applier->longest = want;
    }
    *n = apply_one(merger, symbols, *n, &applier->s, -1);
    return BPE_OK;
}

int bpe_encode_words(const bpe_merger *merger, const uint32_t *symbols,
                     const size_t *offsets, size_t n_words,
                     uint32_t *out_symbols, size_t *out_offsets)
{
    size_t w, longest = 0, pos = 0;
    scratch s;
    int status;

    if (merger == NULL || offsets == NULL || out_offsets == NULL)
        return BPE_EINVAL;
    for (w = 0; w < n_words; w++) {  /* validate, and size the scratch */
        if (offsets[w + 1] < offsets[w])
            return BPE_EINVAL;
        if (offsets[w + 1] - offsets[w] > longest)
            longest = offsets[w + 1] - offsets[w];
    }
    if (longest != 0 && (symbols == NULL || out_symbols == NULL))
        return BPE_EINVAL;
    if ((status = scratch_init(&s, longest)) != BPE_OK)
        return status;
    out_offsets[0] = 0;
    for (w = 0; w < n_words; w++) {
        size_t n = offsets[w + 1] - offsets[w];
        if (n != 0) {
            memmove(out_symbols + pos, symbols + offsets[w], n * sizeof *symbols);
            if (n > 1)
                n = apply_one(merger, out_symbols + pos, n, &s, -1);
        }
        pos += n;
        out_offsets[w + 1] = pos;
    }
    scratch_free(&s);
    return BPE_OK;
}
