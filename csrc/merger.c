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
 * keeps the left position.
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

/* Words shorter than this use the plain loop (rescan every adjacent pair
 * each step, O(n^2)); longer ones the heap (O(n log n)).  Measured with
 * Shakespeare's 8,000-symbol chapter merges on runs of its words, CPU time
 * per symbol, short loop vs heap: 63 vs 98 ns at 4 symbols, 96 vs 123 at
 * 16, 109 vs 125 at 32, 128 vs 132 at 64 -- the loop wins up to about 64,
 * and past that its quadratic worst case is not worth the few percent. */
#define SHORT_WORD 64

/* Creation rank + 1 of an instance: 0 = initial symbol, r + 1 = made by
 * merge r (unsigned, so -1 needs no sign).  DEAD marks a merged-away node. */
#define DEAD UINT32_MAX

struct bpe_merger {
    size_t n;
    uint32_t *result;
    uint32_t *next_same;   /* next higher rank with the same pair, or NONE */
    bpe__pairmap lowest;   /* (left, right) -> its lowest rank */
};

/* A candidate merge in the heap path: merge `rank` at node `pos`, valid
 * while pos and `right` are still adjacent with the recorded creation
 * ranks. */
typedef struct {
    uint32_t rank, pos, right, cr_left, cr_right;
} cand;

/* Per-call working memory, sized for the longest word of the call. */
typedef struct {
    uint32_t *cr, *ranks, *prev, *next;
    cand *heap;
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
    if (n >= (size_t)BPE__NONE - 1)  /* ranks + 1 must stay below DEAD */
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
 * BPE__NONE: the first rank of the pair r with r + 1 > max(cx, cy). */
static uint32_t applicable(const bpe_merger *m, uint32_t x, uint32_t y,
                           uint32_t cx, uint32_t cy)
{
    uint32_t floor = cx > cy ? cx : cy;
    uint32_t r = bpe__pairmap_get(&m->lowest, x, y);

    while (r != BPE__NONE && r < floor)
        r = m->next_same[r];
    return r;
}

/* ---- short words: rescan every adjacent pair ---------------------------- */

/* ranks[i] caches the applicable rank of (i, i + 1); after a merge at `at`
 * only the entries at at - 1 and at change. */
static size_t apply_short(const bpe_merger *m, uint32_t *sym, size_t n,
                          scratch *s)
{
    uint32_t *cr = s->cr, *ranks = s->ranks;
    size_t i;

    for (i = 0; i < n; i++)
        cr[i] = 0;
    for (i = 0; i + 1 < n; i++)
        ranks[i] = applicable(m, sym[i], sym[i + 1], 0, 0);
    while (n > 1) {
        uint32_t best = BPE__NONE;
        size_t at = 0;
        for (i = 0; i + 1 < n; i++)
            if (ranks[i] < best) {  /* strict: leftmost on a tie */
                best = ranks[i];
                at = i;
            }
        if (best == BPE__NONE)
            break;
        sym[at] = m->result[best];
        cr[at] = best + 1;
        n--;  /* drop instance at + 1 and the pair starting there */
        memmove(sym + at + 1, sym + at + 2, (n - at - 1) * sizeof *sym);
        memmove(cr + at + 1, cr + at + 2, (n - at - 1) * sizeof *cr);
        if (at + 1 < n)
            memmove(ranks + at + 1, ranks + at + 2,
                    (n - at - 2) * sizeof *ranks);
        if (at > 0)
            ranks[at - 1] = applicable(m, sym[at - 1], sym[at], cr[at - 1],
                                       cr[at]);
        if (at + 1 < n)
            ranks[at] = applicable(m, sym[at], sym[at + 1], cr[at],
                                   cr[at + 1]);
    }
    return n;
}

/* ---- long words: a heap of candidates over a linked list ---------------- */

static int cand_before(const cand *x, const cand *y)
{
    return x->rank != y->rank ? x->rank < y->rank : x->pos < y->pos;
}

static void cand_push(cand *h, size_t *n, cand c)
{
    size_t i;

    for (i = (*n)++; i > 0 && cand_before(&c, &h[(i - 1) / 2]);
         i = (i - 1) / 2)
        h[i] = h[(i - 1) / 2];
    h[i] = c;
}

static cand cand_pop(cand *h, size_t *n)
{
    cand top = h[0], last = h[--*n];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && cand_before(&h[c + 1], &h[c]))
            c++;
        if (!cand_before(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

/* Pushes the candidate for nodes (i, j) if some merge applies to them. */
static void push_pair(const bpe_merger *m, const uint32_t *sym, scratch *s,
                      size_t *len, uint32_t i, uint32_t j)
{
    cand c;

    c.rank = applicable(m, sym[i], sym[j], s->cr[i], s->cr[j]);
    if (c.rank == BPE__NONE)
        return;
    c.pos = i;
    c.right = j;
    c.cr_left = s->cr[i];
    c.cr_right = s->cr[j];
    cand_push(s->heap, len, c);
}

/* The heap holds at most n - 1 initial candidates plus 2 per merge (at
 * most n - 1 merges): 3n entries. */
static size_t apply_long(const bpe_merger *m, uint32_t *sym, size_t n,
                         scratch *s)
{
    uint32_t *cr = s->cr, *prev = s->prev, *next = s->next, i, out;
    size_t len = 0;

    for (i = 0; i < n; i++) {
        cr[i] = 0;
        prev[i] = i == 0 ? BPE__NONE : i - 1;
        next[i] = i + 1 == n ? BPE__NONE : i + 1;
    }
    for (i = 0; i + 1 < n; i++)
        push_pair(m, sym, s, &len, i, i + 1);
    while (len > 0) {
        cand c = cand_pop(s->heap, &len);
        uint32_t j = c.right;
        if (cr[c.pos] != c.cr_left || next[c.pos] != j || cr[j] != c.cr_right)
            continue;  /* stale: a neighbour merged since it was pushed */
        sym[c.pos] = m->result[c.rank];
        cr[c.pos] = c.rank + 1;
        next[c.pos] = next[j];
        if (next[j] != BPE__NONE)
            prev[next[j]] = c.pos;
        cr[j] = DEAD;
        if (prev[c.pos] != BPE__NONE)
            push_pair(m, sym, s, &len, prev[c.pos], c.pos);
        if (next[c.pos] != BPE__NONE)
            push_pair(m, sym, s, &len, c.pos, next[c.pos]);
    }
    for (i = 0, out = 0; i != BPE__NONE; i = next[i])  /* node 0 survives */
        sym[out++] = sym[i];
    return out;
}

/* ---- entry points -------------------------------------------------------- */

static void scratch_free(scratch *s)
{
    free(s->cr);
    free(s->ranks);
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
        return BPE_ETOOBIG;  /* node indices and 3n heap entries */
    s->cap = cap;
    s->cr = malloc(cap * sizeof *s->cr);
    s->ranks = malloc(cap * sizeof *s->ranks);
    if (longest >= SHORT_WORD) {
        s->prev = malloc(cap * sizeof *s->prev);
        s->next = malloc(cap * sizeof *s->next);
        s->heap = malloc(3 * cap * sizeof *s->heap);
    }
    if (s->cr == NULL || s->ranks == NULL ||
        (longest >= SHORT_WORD &&
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
    if (path < 0)
        path = n >= SHORT_WORD;
    return path ? apply_long(m, sym, n, s) : apply_short(m, sym, n, s);
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
    if ((status = scratch_init(&s, path == 1 && *n < SHORT_WORD
                                       ? SHORT_WORD : *n)) != BPE_OK)
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
        /* at least double (and at least SHORT_WORD), unless that is too big */
        size_t want = applier->longest * 2 > *n ? applier->longest * 2 : *n;
        scratch fresh;
        int status;
        if (want < SHORT_WORD)
            want = SHORT_WORD;
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
