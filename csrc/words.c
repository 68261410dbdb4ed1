/*
 * words.c -- the word table and the chapter's literal helpers.
 *
 * Mirrors listings 063 (count_pairs, find_best_pair) and 064 (merge_pair):
 * every call rescans the whole table, exactly as the chapter does, so these
 * are the reference the incremental trainer (trainer.c) is tested against.
 * They are O(table size) per call on purpose; training at scale is
 * trainer.c's job.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

bpe_words *bpe_words_new(void)
{
    return calloc(1, sizeof(bpe_words));
}

void bpe_words_free(bpe_words *words)
{
    if (words == NULL)
        return;
    free(words->syms);
    free(words->start);
    free(words->len);
    free(words->freq);
    free(words);
}

/* Room for `more_words` words holding `more_syms` symbols; the table is
 * unchanged (apart from spare capacity) on failure.  (internal.h: counter.c
 * writes a corpus's words straight into the room.) */
int bpe__words_reserve(bpe_words *w, size_t more_words, size_t more_syms)
{
    size_t cap_start = w->cap, cap_len = w->cap, cap_freq = w->cap;
    int status;

    if (more_words > SIZE_MAX - w->n || more_syms > SIZE_MAX - w->nsyms)
        return BPE_ETOOBIG;
    if ((status = bpe__reserve((void **)&w->syms, &w->syms_cap,
                               w->nsyms + more_syms, sizeof *w->syms)) ||
        (status = bpe__reserve((void **)&w->start, &cap_start,
                               w->n + more_words, sizeof *w->start)) ||
        (status = bpe__reserve((void **)&w->len, &cap_len,
                               w->n + more_words, sizeof *w->len)) ||
        (status = bpe__reserve((void **)&w->freq, &cap_freq,
                               w->n + more_words, sizeof *w->freq)))
        return status;
    w->cap = cap_start;  /* all three grew to the same capacity */
    return BPE_OK;
}

/* Appends one word whose room is already reserved. */
static void push_word(bpe_words *w, const uint32_t *symbols, size_t n,
                      uint64_t frequency)
{
    if (n != 0)
        memcpy(w->syms + w->nsyms, symbols, n * sizeof *symbols);
    w->start[w->n] = w->nsyms;
    w->len[w->n] = n;
    w->freq[w->n] = frequency;
    w->nsyms += n;
    w->n++;
}

int bpe_words_add(bpe_words *words, const uint32_t *symbols, size_t n,
                  uint64_t frequency)
{
    int status;

    if (words == NULL || (symbols == NULL && n != 0))
        return BPE_EINVAL;
    if ((status = bpe__words_reserve(words, 1, n)) != BPE_OK)
        return status;
    push_word(words, symbols, n, frequency);
    return BPE_OK;
}

int bpe_words_add_many(bpe_words *words, const uint32_t *symbols,
                       const size_t *offsets, const uint64_t *frequencies,
                       size_t n_words)
{
    size_t i;
    int status;

    if (words == NULL || offsets == NULL ||
        (frequencies == NULL && n_words != 0))
        return BPE_EINVAL;
    for (i = 0; i < n_words; i++)  /* validate before touching the table */
        if (offsets[i + 1] < offsets[i])
            return BPE_EINVAL;
    if (symbols == NULL && offsets[n_words] != offsets[0])
        return BPE_EINVAL;
    if ((status = bpe__words_reserve(words, n_words, offsets[n_words] - offsets[0])))
        return status;
    for (i = 0; i < n_words; i++)
        push_word(words, symbols + offsets[i], offsets[i + 1] - offsets[i],
                  frequencies[i]);
    return BPE_OK;
}

size_t bpe_words_count(const bpe_words *words)
{
    return words == NULL ? 0 : words->n;
}

const uint32_t *bpe_words_symbols(const bpe_words *words, size_t i,
                                  size_t *n_out)
{
    static const uint32_t empty[1] = {0};

    if (words == NULL || i >= words->n)
        return NULL;
    if (n_out != NULL)
        *n_out = words->len[i];
    /* A table of empty words may have no symbol array at all. */
    return words->syms != NULL ? words->syms + words->start[i] : empty;
}

uint64_t bpe_words_frequency(const bpe_words *words, size_t i)
{
    return words == NULL || i >= words->n ? 0 : words->freq[i];
}

/* Counter semantics: the first time a pair is met it is appended to *out,
 * later meetings add to its count; pairs with BPE_NO_SYMBOL are skipped.  Example: the words "a b a b" x1 and
 * "b a" x2 give [(a,b):2, (b,a):3]. */
int bpe_count_pairs(const bpe_words *words, bpe_pair_count **pairs_out,
                    size_t *n_out)
{
    bpe__pairmap map = {0};
    bpe_pair_count *out = NULL;
    size_t n = 0, cap = 0, w, k;
    int status;

    if (words == NULL || pairs_out == NULL || n_out == NULL)
        return BPE_EINVAL;
    if ((status = bpe__pairmap_init(&map, 64)) != BPE_OK)
        goto cleanup;
    for (w = 0; w < words->n; w++) {
        const uint32_t *s;
        if (words->len[w] < 2)
            continue;  /* (and syms may be NULL when every word is empty) */
        s = words->syms + words->start[w];
        for (k = 0; k + 1 < words->len[w]; k++) {
            uint32_t at;
            if (s[k] == BPE_NO_SYMBOL || s[k + 1] == BPE_NO_SYMBOL)
                continue;  /* "unknown" takes part in no pair */
            at = bpe__pairmap_get(&map, s[k], s[k + 1]);
            if (at == BPE__NONE) {
                if (n >= BPE__NONE) {
                    status = BPE_ETOOBIG;
                    goto cleanup;
                }
                if ((status = bpe__reserve((void **)&out, &cap, n + 1,
                                           sizeof *out)) != BPE_OK ||
                    (status = bpe__pairmap_put(&map, s[k], s[k + 1],
                                               (uint32_t)n)) != BPE_OK)
                    goto cleanup;
                out[n].left = s[k];
                out[n].right = s[k + 1];
                out[n].count = 0;
                at = (uint32_t)n++;
            }
            if (out[at].count > UINT64_MAX - words->freq[w]) {
                status = BPE_EOVERFLOW;  /* counts never wrap around */
                goto cleanup;
            }
            out[at].count += words->freq[w];
        }
    }
    status = BPE_OK;
cleanup:
    bpe__pairmap_free(&map);
    if (status != BPE_OK || n == 0) {
        free(out);
        out = NULL;
        n = 0;
    }
    *pairs_out = out;
    *n_out = n;
    return status;
}

/* most_common(1): the highest count, the first encountered on a tie --
 * hence the strict ">" scanning the pairs in first-encountered order. */
int bpe_find_best_pair(const bpe_words *words, bpe_pair_count *best)
{
    bpe_pair_count *pairs;
    size_t n, i, at = 0;
    int status;

    if (best == NULL)
        return BPE_EINVAL;
    if ((status = bpe_count_pairs(words, &pairs, &n)) != BPE_OK)
        return status;
    if (n == 0)
        return 0;
    for (i = 1; i < n; i++)
        if (pairs[i].count > pairs[at].count)
            at = i;
    *best = pairs[at];
    free(pairs);
    return 1;
}

/* Example: "a a a b" with (a, a) -> x becomes "x a b": the match at 0
 * consumes positions 0 and 1, so the scan resumes at 2. */
int bpe_merge_pair(bpe_words *words, uint32_t left, uint32_t right,
                   uint32_t merged, size_t *words_changed_out)
{
    size_t w, changed = 0;

    if (words == NULL)
        return BPE_EINVAL;
    if (left == BPE_NO_SYMBOL || right == BPE_NO_SYMBOL)
        w = words->n;  /* "unknown" never merges: change nothing */
    else
        w = 0;
    for (; w < words->n; w++) {
        uint32_t *s;
        size_t n = words->len[w], r = 0, out = 0;
        if (n < 2)
            continue;
        s = words->syms + words->start[w];
        while (r < n) {
            if (r + 1 < n && s[r] == left && s[r + 1] == right) {
                s[out++] = merged;
                r += 2;  /* skip both positions */
            } else {
                s[out++] = s[r++];
            }
        }
        if (out != n) {
            words->len[w] = out;
            changed++;
        }
    }
    if (words_changed_out != NULL)
        *words_changed_out = changed;
    return BPE_OK;
}
